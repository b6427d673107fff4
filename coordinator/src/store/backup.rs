//! The copy of an older database written beside it before it is upgraded
//! (docs/database.md): `<db>.schema-v<N>.bak`, whole or absent. It is
//! written under a temporary name, synced, and only then given its own, so
//! a process killed or a disk filled while copying leaves no file that
//! looks like a backup and is not one; an existing backup is never
//! replaced.

use std::fs::File;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use crate::error::{Error, Result};

/// Copies the database open on `conn` (the file `db`, of schema `version`)
/// to its backup, returning where. The caller holds the writer lock, so no
/// other process writes the temporary file.
pub(super) fn write(conn: &Connection, db: &Path, version: i64) -> Result<PathBuf> {
    let partial = partial_path(db, version);
    let failed = |why: String| Error::Backup { path: backup_path(db, version).display().to_string(), why };
    // A leftover of a process killed while copying: never a backup.
    match std::fs::remove_file(&partial) {
        Ok(()) => tracing::warn!(partial = %partial.display(), "removed an incomplete backup a killed upgrade left"),
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(failed(format!("cannot remove the incomplete copy {}: {e}", partial.display()))),
    }
    let written = conn
        .execute("VACUUM INTO ?1", [partial.to_string_lossy()])
        .map_err(|e| e.to_string())
        .and_then(|_| File::open(&partial).and_then(|f| f.sync_all()).map_err(|e| e.to_string()))
        .and_then(|()| place(&partial, db, version).map_err(|e| e.to_string()));
    written.map_err(|why| match std::fs::remove_file(&partial) {
        Ok(()) => failed(why),
        Err(e) if e.kind() == ErrorKind::NotFound => failed(why),
        Err(e) => failed(format!("{why}; the incomplete copy {} could not be removed: {e}", partial.display())),
    })
}

/// Gives the synced copy `partial` the first backup name not taken, never
/// replacing one that appeared meanwhile; then syncs the directory so the
/// name lasts (where the file system allows).
fn place(partial: &Path, db: &Path, version: i64) -> std::io::Result<PathBuf> {
    let mut n = 0;
    loop {
        let target = numbered(db, version, n);
        match place_new(partial, &target) {
            Ok(()) => {
                let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
                // Some file systems refuse to sync a directory: the file
                // itself is synced already.
                let _ = File::open(dir).and_then(|d| d.sync_all());
                return Ok(target);
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Moves `partial` to `target`, failing with [`ErrorKind::AlreadyExists`]
/// where `target` exists instead of replacing it: a hard link fails where
/// a file exists (a file system without hard links gets a rename, after a
/// look). Used for database backups and `ksweep merge`'s output.
pub fn place_new(partial: &Path, target: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(partial, target) {
        Ok(()) => std::fs::remove_file(partial),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(e),
        Err(_) if target.symlink_metadata().is_ok() => Err(ErrorKind::AlreadyExists.into()),
        Err(_) => std::fs::rename(partial, target),
    }
}

/// Where an older database file is copied before it is upgraded:
/// `<db>.schema-v<version>.bak`, numbered on (`.bak.1`) if that exists.
fn backup_path(db: &Path, version: i64) -> PathBuf {
    (0..)
        .map(|n| numbered(db, version, n))
        .find(|p| p.symlink_metadata().is_err())
        .unwrap_or_else(|| numbered(db, version, 0))
}

/// `<db>.schema-v<version>.bak`, then `.bak.1`, `.bak.2`, ...
fn numbered(db: &Path, version: i64, n: u32) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(format!(".schema-v{version}.bak"));
    if n > 0 {
        name.push(format!(".{n}"));
    }
    PathBuf::from(name)
}

/// The copy's name while it is written: no backup name ends so.
fn partial_path(db: &Path, version: i64) -> PathBuf {
    let mut name = numbered(db, version, 0).into_os_string();
    name.push(".partial");
    PathBuf::from(name)
}
