//! A cluster directory: how the jobs of a batch system (Slurm) that share
//! a file system find their coordinator without anyone copying an address.
//!
//! The coordinator's job may land on any node, on a port picked free, and
//! move when its job is requeued; so it *announces* itself here and workers
//! and clients *locate* it here, every time they (re)connect. The directory
//! also holds the database and the token, so everything a sweep needs is in
//! one place a user can name (`--dir`).
//!
//! | file | written by | holds |
//! |---|---|---|
//! | `token` | `ksweep slurm` (mode 0600) | the shared secret |
//! | `sweeps.db` | the coordinator | every result |
//! | `coordinator.url` | the coordinator, once listening (0600) | `http://host:port` |
//! | `finished` | the coordinator, when its sweeps ended | the final state |

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Where a cluster directory says its coordinator is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// Serving at this URL (as last announced: it may be gone since).
    At(String),
    /// No coordinator has announced itself yet (its job may be pending).
    NotYet,
    /// The coordinator ended with its sweeps; the text says how they ended.
    Finished(String),
}

/// A directory shared by a sweep's coordinator, workers and clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterDir {
    path: PathBuf,
}

impl ClusterDir {
    pub fn new(path: impl Into<PathBuf>) -> ClusterDir {
        ClusterDir { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The coordinator's SQLite database.
    pub fn database(&self) -> PathBuf {
        self.path.join("sweeps.db")
    }

    /// The shared secret, one line.
    pub fn token_file(&self) -> PathBuf {
        self.path.join("token")
    }

    fn url_file(&self) -> PathBuf {
        self.path.join("coordinator.url")
    }

    fn finished_file(&self) -> PathBuf {
        self.path.join("finished")
    }

    /// Where the coordinator is, as the files say now.
    pub fn locate(&self) -> Located {
        if let Ok(text) = std::fs::read_to_string(self.finished_file()) {
            return Located::Finished(text.trim().to_string());
        }
        match std::fs::read_to_string(self.url_file()) {
            Ok(text) if !text.trim().is_empty() => Located::At(text.trim().to_string()),
            _ => Located::NotYet,
        }
    }

    /// Says the coordinator serves at `url` (replacing an earlier
    /// announcement and a `finished` one: a sweep resumed serves again).
    /// Written whole under another name and renamed, so a reader never
    /// sees half a URL.
    pub fn announce(&self, url: &str) -> io::Result<()> {
        write_file(&self.url_file(), &format!("{url}\n"), 0o600)?;
        match std::fs::remove_file(self.finished_file()) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Says the coordinator has ended with its sweeps, in `state` words:
    /// workers that find this leave instead of waiting for it.
    pub fn finish(&self, state: &str) -> io::Result<()> {
        write_file(&self.finished_file(), &format!("{state}\n"), 0o600)?;
        match std::fs::remove_file(self.url_file()) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// Writes `text` to `path` with exactly the permissions `mode` (on Unix),
/// through a temporary file in the same directory renamed over it, so a
/// reader never sees half a file. The directory's own files are its
/// owner's alone (0600: the URL says where a token is accepted).
pub fn write_file(path: &Path, text: &str, mode: u32) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
        let file = options.open(&tmp)?;
        // Whatever the umask took away, and whatever mode a leftover had.
        #[cfg(unix)]
        file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))?;
        #[cfg(not(unix))]
        let _ = mode;
        (&file).write_all(text.as_bytes())?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::{ClusterDir, Located};

    #[test]
    fn a_coordinator_announces_moves_and_finishes() {
        let tmp = std::env::temp_dir().join(format!("ksweep-cluster-dir-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let dir = ClusterDir::new(&tmp);
        assert_eq!(dir.locate(), Located::NotYet);
        dir.announce("http://node1:40001").unwrap();
        assert_eq!(dir.locate(), Located::At("http://node1:40001".into()));
        dir.announce("http://node7:40002").unwrap();
        assert_eq!(dir.locate(), Located::At("http://node7:40002".into()), "a requeued coordinator moves");
        dir.finish("done").unwrap();
        assert_eq!(dir.locate(), Located::Finished("done".into()));
        dir.announce("http://node2:1").unwrap();
        assert_eq!(dir.locate(), Located::At("http://node2:1".into()), "a resumed sweep serves again");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(tmp.join("coordinator.url")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
