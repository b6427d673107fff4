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
//!
//! The directory may be shared with other users (a group's scratch space,
//! even a world-writable one), so a file in it is believed only when the
//! user running the command owns it and nobody else may write it
//! ([`DirError::Untrusted`]): a `coordinator.url` planted by someone else
//! would otherwise receive the token, and a planted `token` would be used
//! as the secret. The token must also be readable by its owner alone.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

/// The most bytes a file of the directory may hold (a URL, a token, a
/// state word): more is not one of ours.
const MAX_FILE_BYTES: u64 = 4 << 10;

/// Why a file of a cluster directory cannot be used.
#[derive(Debug, Error)]
pub enum DirError {
    #[error("cannot read {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// Someone else could have written it; `why` says how, `fix` what to do.
    #[error("{}: not trusted: {why}; {fix}", path.display())]
    Untrusted { path: PathBuf, why: String, fix: String },
}

impl DirError {
    fn io(path: &Path, source: io::Error) -> DirError {
        DirError::Io { path: path.to_path_buf(), source }
    }
}

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

    /// Where the coordinator is, as the files say now; an error when one
    /// of them is not to be trusted (see the module's doc).
    pub fn locate(&self) -> Result<Located, DirError> {
        if let Some(text) = read_trusted(&self.finished_file(), Access::OthersMayRead)? {
            return Ok(Located::Finished(text.trim().to_string()));
        }
        Ok(match read_trusted(&self.url_file(), Access::OthersMayRead)? {
            Some(text) if !text.trim().is_empty() => Located::At(text.trim().to_string()),
            _ => Located::NotYet,
        })
    }

    /// The shared secret: `None` when there is no token file yet, an error
    /// when it is empty, not ours, or readable by others.
    pub fn token(&self) -> Result<Option<String>, DirError> {
        let path = self.token_file();
        let Some(text) = read_trusted(&path, Access::OwnerOnly)? else { return Ok(None) };
        let token = text.trim();
        if let Err(e) = crate::check_token(token) {
            return Err(DirError::Untrusted {
                path,
                why: format!("its token is {e}"),
                fix: "remove it (`ksweep slurm` writes a new one) or write a token into it".into(),
            });
        }
        Ok(Some(token.to_string()))
    }

    /// Checks that the database, and SQLite's files beside it, are ours
    /// alone to write where they exist: a database someone else planted
    /// would serve forged results, and a planted `-wal` file would be
    /// replayed into ours.
    pub fn check_database(&self) -> Result<(), DirError> {
        let db = self.database();
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            let path = PathBuf::from(name);
            match std::fs::symlink_metadata(&path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(DirError::io(&path, e)),
                Ok(meta) => trust(&path, &meta, Access::OthersMayRead)?,
            }
        }
        Ok(())
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

/// Who may read a file of the directory, besides its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Anyone may read it (an address, a state); only its owner may write.
    OthersMayRead,
    /// Its owner alone may read or write it (the token).
    OwnerOnly,
}

/// The text of `path` if it is there and trusted ([`trust`]); `None` when
/// there is no such file. Opened without following a symbolic link and
/// judged by the open file's own metadata, so the file read is the file
/// judged.
fn read_trusted(path: &Path, access: Access) -> Result<Option<String>, DirError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        // O_NOFOLLOW on a symbolic link.
        Err(e) if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) => {
            return Err(DirError::Untrusted {
                path: path.to_path_buf(),
                why: format!("it is a symbolic link ({e})"),
                fix: "remove it; the directory's own files are never links".into(),
            })
        }
        Err(e) => return Err(DirError::io(path, e)),
    };
    let meta = file.metadata().map_err(|e| DirError::io(path, e))?;
    trust(path, &meta, access)?;
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1).read_to_string(&mut text).map_err(|e| DirError::io(path, e))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(DirError::Untrusted {
            path: path.to_path_buf(),
            why: format!("it holds more than {MAX_FILE_BYTES} bytes, more than any file of ours"),
            fix: "remove it".into(),
        });
    }
    Ok(Some(text))
}

/// Believes a file only when it is a regular file the user running this
/// owns, that no one else may write (and, for `OwnerOnly`, read).
#[cfg(unix)]
fn trust(path: &Path, meta: &std::fs::Metadata, access: Access) -> Result<(), DirError> {
    use std::os::unix::fs::MetadataExt;
    let untrusted = |why: String, fix: String| Err(DirError::Untrusted { path: path.to_path_buf(), why, fix });
    if !meta.file_type().is_file() {
        return untrusted("it is not a regular file".into(), "remove it".into());
    }
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return untrusted(
            format!(
                "it belongs to user id {}, not to you (user id {me}): someone else may have put it there",
                meta.uid()
            ),
            "remove it (or ask its owner to), and keep the sweep in a directory only you can write to".into(),
        );
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o022 != 0 {
        return untrusted(format!("others may write it (mode {mode:04o})"), format!("chmod go-w {}", path.display()));
    }
    if access == Access::OwnerOnly && mode & 0o077 != 0 {
        return untrusted(
            format!("others may read it (mode {mode:04o}), so the secret is not one"),
            format!("chmod 600 {} if no one else has read it, else remove it for a new one", path.display()),
        );
    }
    Ok(())
}

#[cfg(not(unix))]
fn trust(_: &Path, _: &std::fs::Metadata, _: Access) -> Result<(), DirError> {
    Ok(())
}

/// Writes `text` to `path` with exactly the permissions `mode` (on Unix),
/// through a temporary file in the same directory renamed over it, so a
/// reader never sees half a file. The directory's own files are its
/// owner's alone (0600: the URL says where a token is accepted). The
/// temporary file is created anew, never followed through a link someone
/// planted under its name.
pub fn write_file(path: &Path, text: &str, mode: u32) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
        let file = match options.open(&tmp) {
            // A leftover of a killed writer with this pid, or a planted link:
            // removed (a link itself, not what it points to), then created anew.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                std::fs::remove_file(&tmp)?;
                options.open(&tmp)?
            }
            opened => opened?,
        };
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
    use std::path::{Path, PathBuf};

    use super::{ClusterDir, DirError, Located};

    /// A fresh directory of this test's own.
    fn fresh(name: &str) -> PathBuf {
        let tmp = std::env::temp_dir().join(format!("ksweep-cluster-dir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        tmp
    }

    fn located(dir: &ClusterDir) -> Located {
        dir.locate().unwrap()
    }

    #[test]
    fn a_coordinator_announces_moves_and_finishes() {
        let tmp = fresh("moves");
        let dir = ClusterDir::new(&tmp);
        assert_eq!(located(&dir), Located::NotYet);
        dir.announce("http://node1:40001").unwrap();
        assert_eq!(located(&dir), Located::At("http://node1:40001".into()));
        dir.announce("http://node7:40002").unwrap();
        assert_eq!(located(&dir), Located::At("http://node7:40002".into()), "a requeued coordinator moves");
        dir.finish("done").unwrap();
        assert_eq!(located(&dir), Located::Finished("done".into()));
        dir.announce("http://node2:1").unwrap();
        assert_eq!(located(&dir), Located::At("http://node2:1".into()), "a resumed sweep serves again");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(tmp.join("coordinator.url")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    /// The error's text, which must name the file and say what to do.
    fn untrusted(result: Result<impl std::fmt::Debug, DirError>, file: &Path, fix: &str) {
        match result {
            Err(e @ DirError::Untrusted { .. }) => {
                let text = e.to_string();
                assert!(text.contains(&file.display().to_string()) && text.contains(fix), "{text}");
            }
            other => panic!("{} was trusted: {other:?}", file.display()),
        }
    }

    #[cfg(unix)]
    fn chmod(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Files others could have written are not believed: a world-writable
    /// address, a readable token, a link, and (where this test may give a
    /// file away, as root) one another user owns.
    #[cfg(unix)]
    #[test]
    fn files_others_could_have_written_are_refused_naming_the_fix() {
        let tmp = fresh("trust");
        let dir = ClusterDir::new(&tmp);
        let url = tmp.join("coordinator.url");
        std::fs::write(&url, "http://evil:1\n").unwrap();
        chmod(&url, 0o666);
        untrusted(dir.locate(), &url, "chmod go-w");
        chmod(&url, 0o644);
        assert_eq!(located(&dir), Located::At("http://evil:1".into()), "readable by others is fine for an address");

        let token = dir.token_file();
        assert!(dir.token().unwrap().is_none(), "no token yet");
        std::fs::write(&token, "s3cret\n").unwrap();
        chmod(&token, 0o644);
        untrusted(dir.token(), &token, "chmod 600");
        chmod(&token, 0o600);
        assert_eq!(dir.token().unwrap().as_deref(), Some("s3cret"));
        std::fs::write(&token, " \n").unwrap();
        untrusted(dir.token(), &token, "remove it");

        std::fs::remove_file(&url).unwrap();
        let elsewhere = tmp.join("elsewhere");
        std::fs::write(&elsewhere, "http://evil:2\n").unwrap();
        chmod(&elsewhere, 0o600);
        std::os::unix::fs::symlink(&elsewhere, &url).unwrap();
        untrusted(dir.locate(), &url, "never links");

        std::fs::remove_file(&url).unwrap();
        std::fs::write(&url, "http://evil:3\n").unwrap();
        chmod(&url, 0o644);
        if std::os::unix::fs::chown(&url, Some(65534), Some(65534)).is_ok() {
            untrusted(dir.locate(), &url, "someone else may have put it there");
            std::fs::write(dir.database(), b"planted").unwrap();
            std::os::unix::fs::chown(dir.database(), Some(65534), None).unwrap();
            untrusted(dir.check_database(), &dir.database(), "remove it");
        } else {
            eprintln!("skipped the other user's file: this test cannot give a file away (not root)");
        }
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    /// A link planted under the temporary name a write uses is replaced,
    /// never written through.
    #[cfg(unix)]
    #[test]
    fn a_write_never_follows_a_planted_link() {
        let tmp = fresh("write");
        let victim = tmp.join("victim");
        std::fs::write(&victim, "mine").unwrap();
        let url = tmp.join("coordinator.url");
        let planted = PathBuf::from(format!("{}.{}.tmp", url.display(), std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        ClusterDir::new(&tmp).announce("http://node1:1").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
        assert!(!std::fs::symlink_metadata(&url).unwrap().file_type().is_symlink());
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
