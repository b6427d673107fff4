//! Reading a sweep spec from a file: the one place the CLI turns a path into
//! the TOML it validates or sends, so `check`, `run` and `submit` agree.

use std::path::Path;

use anyhow::{Context, Result};
use sweep::SweepSpec;

/// The spec at `path` as TOML ready to validate or submit. Any grid's
/// `starts_file` is read (relative to the spec's folder) into its `starts`,
/// so the coordinator receives the starts themselves; a spec without start
/// files is returned as written.
pub fn load(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).with_context(|| format!("spec: cannot read {}", path.display()))?;
    if !text.contains("starts_file") {
        return Ok(text);
    }
    let mut spec = SweepSpec::from_toml(&text)?;
    if spec.grids.iter().all(|g| g.starts_file.is_none()) {
        return Ok(text);
    }
    let folder = path.parent().unwrap_or(Path::new("."));
    spec.read_start_files(|name| std::fs::read_to_string(folder.join(name)).map_err(|e| e.to_string()))?;
    Ok(spec.to_canonical_toml())
}
