//! One writer per database file: a lock file beside it, held while a
//! coordinator has the database open for writing, naming its holder so a
//! second `ksweep run` or coordinator on the same file says who is in the way.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The held lock; released (and its file removed) when dropped.
#[derive(Debug)]
pub(super) struct WriterLock {
    path: PathBuf,
    file: File,
}

/// The lock file of a database file: `<db>.lock`.
pub(super) fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl WriterLock {
    /// Takes the lock of `db`, or says who holds it.
    pub fn acquire(db: &Path) -> Result<WriterLock> {
        let path = lock_path(db);
        let io = |source| Error::Io { path: path.display().to_string(), source };
        loop {
            let mut file =
                OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    let _ = file.read_to_string(&mut holder);
                    let holder = holder.trim();
                    return Err(Error::Locked {
                        db: db.display().to_string(),
                        holder: if holder.is_empty() { "another process".to_string() } else { holder.to_string() },
                    });
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
            // The previous holder removes the file as it lets go: if it did
            // so between our open and our lock, ours is a stale inode.
            let same = std::fs::metadata(&path).ok().zip(file.metadata().ok()).is_some_and(|(a, b)| a.ino() == b.ino());
            if !same {
                continue;
            }
            file.set_len(0).map_err(io)?;
            write!(file, "pid {} on {}", std::process::id(), host_name()).map_err(io)?;
            file.flush().map_err(io)?;
            return Ok(WriterLock { path, file });
        }
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // Removed while still held, so the next writer never locks a file
        // that is about to vanish (see the inode check in `acquire`).
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// True while a process holds `db`'s writer lock (a coordinator or `ksweep
/// run` serves it), or may: a lock file naming another host, whose locks
/// this one cannot see on a shared file system, counts as held. Looks
/// with a shared lock held for an instant, never creating the file.
pub(super) fn writer_present(db: &Path) -> bool {
    let Ok(mut file) = File::open(lock_path(db)) else { return false };
    let mut holder = String::new();
    let _ = file.read_to_string(&mut holder);
    if holder.split_once(" on ").is_some_and(|(_, host)| host.trim() != host_name()) {
        return true;
    }
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(_) => true,
    }
}

/// This machine's name, for the lock's holder line.
fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()))
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "this host".to_string())
}
