//! The checks opening a database file makes: that the path is a file,
//! that SQLite can write its shared memory, what a damaged file's error
//! says, and when a read-only file must be opened immutable.

use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

use crate::error::{Error, Result};

/// Whether `path` holds a database file (true) or nothing yet (false,
/// refused when it must `exist`); anything else there (a directory, a
/// device such as /dev/null, a pipe) is refused, saying what it is.
pub(super) fn database_file(path: &Path, exist: bool) -> Result<bool> {
    let refuse = |kind: std::io::ErrorKind, what: &str| Error::Io {
        path: path.display().to_string(),
        source: std::io::Error::new(kind, what.to_string()),
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !exist => return Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(refuse(e.kind(), "no such database file"));
        }
        Err(e) => return Err(Error::Io { path: path.display().to_string(), source: e }),
    };
    let file_type = meta.file_type();
    if file_type.is_file() {
        return Ok(true);
    }
    use std::os::unix::fs::FileTypeExt;
    let what = if file_type.is_dir() {
        let inside = path.join("ksweep.db");
        return Err(refuse(
            std::io::ErrorKind::InvalidInput,
            &format!("is a directory, not a database file (name a file in it, e.g. {})", inside.display()),
        ));
    } else if file_type.is_char_device() || file_type.is_block_device() {
        "a device"
    } else if file_type.is_fifo() {
        "a pipe"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(refuse(std::io::ErrorKind::InvalidInput, &format!("is {what}, not a database file")))
}

/// A damaged file's error, naming the file and what to do.
pub(super) fn damaged(path: &Path, e: Error) -> Error {
    let why = match e {
        Error::Corrupt(why) => why,
        Error::Database(rusqlite::Error::SqliteFailure(f, msg)) if f.code == ErrorCode::DatabaseCorrupt => {
            msg.unwrap_or_else(|| "database disk image is malformed".into())
        }
        other => return other,
    };
    Error::Corrupt(format!(
        "{}: {why}; it is neither served nor read. Restore a backup, or salvage what is readable with \
         sqlite3's .recover",
        path.display()
    ))
}

/// SQLite maps the `-shm` file into memory: one it cannot write kills the
/// process with SIGBUS at the first write, with nothing logged. Refuse it
/// at start instead, naming the file.
pub(super) fn check_shm_writable(path: &Path) -> Result<()> {
    let mut shm = path.as_os_str().to_owned();
    shm.push("-shm");
    let shm = PathBuf::from(shm);
    match std::fs::OpenOptions::new().read(true).write(true).open(&shm) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::Io {
            path: shm.display().to_string(),
            source: std::io::Error::new(e.kind(), format!("the database's shared-memory file is not writable: {e}")),
        }),
    }
}

/// SQLite could not set up a read-only WAL database: the directory is not
/// writable (SQLITE_READONLY_DIRECTORY) or the WAL index cannot be made.
pub(super) fn needs_immutable(e: &rusqlite::Error) -> bool {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => {
            const SQLITE_READONLY_DIRECTORY: i32 = 8 | (6 << 8);
            f.extended_code == SQLITE_READONLY_DIRECTORY
                || matches!(f.code, ErrorCode::CannotOpen | ErrorCode::ReadOnly)
        }
        _ => false,
    }
}

/// `file:` URI of a path, opened immutable (no locks, no WAL index).
pub(super) fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'%' | b'?' | b'#' | 0x80.. => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(*b as char),
        }
    }
    uri.push_str("?immutable=1");
    uri
}
