//! Reading a file the user named (a spec and its `starts_file`s, a token,
//! a certificate, a replay file): every read stops one byte past the
//! file's limit, so `/dev/zero` or a 10 GB sparse file costs the limit, not
//! the machine's memory, and the error names the limit.
//!
//! Pipes and `/dev/stdin` are read like files (`--token-file <(pass show
//! ksweep)`, a generated spec): the limit bounds them too. Commands read
//! their files before they install signal handlers (crate::shutdown), so a
//! read that waits on a pipe still ends on SIGTERM.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes a file may hold, and what the limit is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub bytes: u64,
    /// What the error says the limit is of: "a spec".
    pub of: &'static str,
}

/// A spec: the coordinator's own limit (`sweep::MAX_SPEC_BYTES`).
pub const SPEC: Limit = Limit { bytes: sweep::MAX_SPEC_BYTES as u64, of: "a spec" };

/// A spec's `starts_file`s together: their starts go into the spec, which
/// must then still fit [`SPEC`].
pub const STARTS_FILES: Limit =
    Limit { bytes: sweep::MAX_SPEC_BYTES as u64, of: "the starts_files of a spec, together" };

/// A token file: one line (a token travels in every call's header).
pub const TOKEN_FILE: Limit = Limit { bytes: 4 << 10, of: "a token file" };

/// A PEM certificate, chain, CA bundle or key.
pub const PEM: Limit = Limit { bytes: 1 << 20, of: "a PEM file" };

/// A replay file, unpacked: the largest published one is 1.4 MB.
pub const REPLAY: Limit = Limit { bytes: 64 << 20, of: "a replay file (unpacked)" };

/// Why a file could not be read.
#[derive(Debug)]
pub enum InputError {
    /// Opening or reading failed.
    Io { path: PathBuf, error: std::io::Error },
    /// The file holds more than its limit.
    TooLarge { path: PathBuf, limit: Limit },
    /// The file is not UTF-8 text (a spec, a token).
    NotText { path: PathBuf },
}

impl InputError {
    /// What is wrong, without the file's name (for callers that name it).
    pub fn reason(&self) -> String {
        match self {
            InputError::Io { error, .. } => error.to_string(),
            InputError::TooLarge { limit, .. } => {
                format!("larger than {} bytes (the limit of {})", limit.bytes, limit.of)
            }
            InputError::NotText { .. } => "not UTF-8 text".into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Io { path, .. } => write!(f, "cannot read {}: {}", path.display(), self.reason()),
            InputError::TooLarge { path, .. } | InputError::NotText { path } => {
                write!(f, "{}: {}", path.display(), self.reason())
            }
        }
    }
}

impl std::error::Error for InputError {}

/// The bytes of the file at `path`, at most `limit`.
pub fn read(path: &Path, limit: Limit) -> Result<Vec<u8>, InputError> {
    read_within(path, limit, limit.bytes)
}

/// The text of the file at `path`, at most `limit`.
pub fn read_text(path: &Path, limit: Limit) -> Result<String, InputError> {
    text(path, read(path, limit)?)
}

/// The text of the file at `path` when files share `limit` and `room`
/// bytes of it are left; the error names the whole limit.
pub fn read_text_within(path: &Path, limit: Limit, room: u64) -> Result<String, InputError> {
    text(path, read_within(path, limit, room)?)
}

/// What `reader` (the file at `path`, or its unpacked stream) holds, at
/// most `limit`.
pub fn read_text_from(reader: impl Read, path: &Path, limit: Limit) -> Result<String, InputError> {
    text(path, take(reader, path, limit, limit.bytes)?)
}

fn read_within(path: &Path, limit: Limit, room: u64) -> Result<Vec<u8>, InputError> {
    let file = std::fs::File::open(path).map_err(|error| InputError::Io { path: path.into(), error })?;
    take(file, path, limit, room)
}

/// Reads at most `room + 1` bytes: one past the room tells a file that
/// fits exactly from one that does not.
fn take(reader: impl Read, path: &Path, limit: Limit, room: u64) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    reader
        .take(room.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|error| InputError::Io { path: path.into(), error })?;
    if bytes.len() as u64 > room {
        return Err(InputError::TooLarge { path: path.into(), limit });
    }
    Ok(bytes)
}

fn text(path: &Path, bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|_| InputError::NotText { path: path.into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: Limit = Limit { bytes: 4, of: "a test file" };

    #[test]
    fn a_file_may_fill_its_limit_but_not_pass_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "abcd").unwrap();
        assert_eq!(read_text(&path, TINY).unwrap(), "abcd");
        std::fs::write(&path, "abcde").unwrap();
        let e = read_text(&path, TINY).unwrap_err();
        assert_eq!(e.to_string(), format!("{}: larger than 4 bytes (the limit of a test file)", path.display()));
        assert_eq!(
            read_text_within(&path, TINY, 2).unwrap_err().reason(),
            "larger than 4 bytes (the limit of a test file)"
        );
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert_eq!(read_text(&path, TINY).unwrap_err().reason(), "not UTF-8 text");
        let missing = dir.path().join("missing");
        assert!(read(&missing, TINY)
            .unwrap_err()
            .to_string()
            .starts_with(&format!("cannot read {}: ", missing.display())));
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_device_stops_at_the_limit() {
        let e = read(Path::new("/dev/zero"), PEM).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { limit: PEM, .. }), "{e}");
    }
}
