//! Reading a sweep spec from a file: the one place the CLI turns a path into
//! the TOML it validates or sends, so `check`, `run` and `submit` agree.

use std::path::Path;

use anyhow::{Context, Result};
use sweep::SweepSpec;

use crate::input_file::{self, STARTS_FILES};

/// The spec at `path` as TOML ready to validate or submit. Any grid's
/// `starts_file` is read (relative to the spec's folder) into its `starts`,
/// so the coordinator receives the starts themselves; a spec without start
/// files is returned as written. The spec and its start files are read
/// within their limits (crate::input_file).
pub fn load(path: &Path) -> Result<String> {
    let text = input_file::read_text(path, input_file::SPEC).context("spec")?;
    if !text.contains("starts_file") {
        return Ok(text);
    }
    let mut spec = SweepSpec::from_toml(&text)?;
    if spec.grids.iter().all(|g| g.starts_file.is_none()) {
        return Ok(text);
    }
    let folder = path.parent().unwrap_or(Path::new("."));
    let mut room = STARTS_FILES.bytes;
    spec.read_start_files(|name| {
        let text = input_file::read_text_within(&folder.join(name), STARTS_FILES, room).map_err(|e| e.reason())?;
        room -= text.len() as u64;
        Ok(text)
    })?;
    Ok(spec.to_canonical_toml())
}
