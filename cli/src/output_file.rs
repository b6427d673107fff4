//! Files a command writes with `-o`: whole or not at all. The bytes go to a
//! temporary file beside the destination, renamed over it only once
//! complete, so an interrupted or failed command leaves the old file (or
//! none), never half a new one.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A file being written; dropped without [`Partial::commit`], it is removed.
pub struct Partial {
    file: File,
    temp: PathBuf,
    path: PathBuf,
    committed: bool,
}

impl Partial {
    /// Starts writing `path` (`-o`).
    pub fn create(path: &Path) -> Result<Partial> {
        let name = path.file_name().with_context(|| format!("-o: {} is not a file name", path.display()))?;
        // Hidden, and ending in the destination's own name (and extension,
        // which some writers read the format from).
        let temp = path.with_file_name(format!(".partial-{}-{}", std::process::id(), name.to_string_lossy()));
        let file = File::create(&temp).with_context(|| format!("-o: cannot write {}", temp.display()))?;
        Ok(Partial { file, temp, path: path.to_path_buf(), committed: false })
    }

    /// The open temporary file.
    pub fn file(&self) -> Result<File> {
        Ok(self.file.try_clone()?)
    }

    /// Where the bytes go until the commit, for writers that open by path.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// Makes the file the destination.
    pub fn commit(mut self) -> Result<()> {
        File::open(&self.temp).and_then(|f| f.sync_all()).with_context(|| format!("-o: {}", self.temp.display()))?;
        std::fs::rename(&self.temp, &self.path).with_context(|| format!("-o: cannot write {}", self.path.display()))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Writes `bytes` to `path`, whole or not at all.
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    let partial = Partial::create(path)?;
    std::io::Write::write_all(&mut partial.file()?, bytes).with_context(|| format!("-o: {}", path.display()))?;
    partial.commit()
}
