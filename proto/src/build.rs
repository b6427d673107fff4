//! Which build of knight-sweep is running: recorded with every result
//! (through the worker's registration) and in the database it writes, so a
//! table can say what produced it.

use std::fmt;

/// A build: its release version and the git commit it was made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Build {
    pub version: &'static str,
    /// Short commit hash; empty where the build had no git (see build.rs).
    pub commit: &'static str,
    /// Tracked files differed from `commit` when this crate was built.
    pub dirty: bool,
}

impl Build {
    /// This program's build.
    pub fn current() -> Build {
        Build {
            version: env!("CARGO_PKG_VERSION"),
            commit: env!("KSWEEP_COMMIT"),
            dirty: !env!("KSWEEP_DIRTY").is_empty(),
        }
    }

    /// The commit part alone: `abc123def456`, `abc123def456-dirty` or
    /// `unknown`.
    pub fn commit_text(&self) -> String {
        match (self.commit, self.dirty) {
            ("", _) => "unknown".to_string(),
            (c, true) => format!("{c}-dirty"),
            (c, false) => c.to_string(),
        }
    }
}

/// `0.1.0 (abc123def456)`, `0.1.0 (abc123def456-dirty)` or
/// `0.1.0 (commit unknown)`.
impl fmt::Display for Build {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.commit {
            "" => write!(f, "{} (commit unknown)", self.version),
            _ => write!(f, "{} ({})", self.version, self.commit_text()),
        }
    }
}

/// What made a worker's results: its build and its machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    pub version: String,
    /// [`Build::commit_text`].
    pub build: String,
    pub host: String,
    /// The CPU model.
    pub cpu: String,
    /// The CPU features the engine's kernels use ([`tour::kernel_features`]).
    pub features: Vec<String>,
}

/// Longest text of a [`Provenance`] a coordinator accepts.
pub const MAX_PROVENANCE_CHARS: usize = 200;
/// Most features a [`Provenance`] may list.
pub const MAX_FEATURES: usize = 32;

impl Provenance {
    /// This process on this machine.
    pub fn here() -> Provenance {
        let build = Build::current();
        Provenance {
            version: build.version.to_string(),
            build: build.commit_text(),
            host: host_name(),
            cpu: cpu_model(),
            features: tour::kernel_features().into_iter().map(str::to_string).collect(),
        }
    }

    /// Its release and commit as [`Build`] writes them,
    /// `0.1.0 (abc123def456)`; empty where not recorded.
    pub fn version_text(&self) -> String {
        sweep::build_label(&self.version, &self.build)
    }

    /// Checks the limits a coordinator holds a peer to, naming the field.
    pub fn check(&self) -> Result<(), String> {
        let texts = [("version", &self.version), ("build", &self.build), ("host", &self.host), ("cpu", &self.cpu)];
        let features = self.features.iter().map(|f| ("features", f));
        for (field, text) in texts.into_iter().chain(features) {
            if text.chars().count() > MAX_PROVENANCE_CHARS || text.chars().any(char::is_control) {
                return Err(format!(
                    "provenance.{field}: at most {MAX_PROVENANCE_CHARS} characters, none of them control characters"
                ));
            }
        }
        if self.features.len() > MAX_FEATURES {
            return Err(format!("provenance.features: at most {MAX_FEATURES}, got {}", self.features.len()));
        }
        Ok(())
    }
}

/// The host's name (Linux's, else `$HOSTNAME`), cut to the limit.
fn host_name() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    printable(name.trim())
}

/// The CPU model the operating system reports (Linux's `/proc/cpuinfo`).
fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once(':')?;
            matches!(key.trim(), "model name" | "Model" | "cpu model").then(|| value.trim().to_string())
        })
        .unwrap_or_default();
    printable(&model)
}

/// `text` without control characters and within the length limit.
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(MAX_PROVENANCE_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_says_its_version_and_commit() {
        let b = Build { version: "1.2.3", commit: "abc", dirty: true };
        assert_eq!(b.to_string(), "1.2.3 (abc-dirty)");
        assert_eq!(Build { commit: "", ..b }.to_string(), "1.2.3 (commit unknown)");
        assert_eq!(Build::current().version, env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn this_machine_passes_the_limits_and_others_are_refused_by_field() {
        let here = Provenance::here();
        assert_eq!(here.check(), Ok(()));
        assert_eq!(here.version, env!("CARGO_PKG_VERSION"));
        let long = Provenance { host: "h".repeat(MAX_PROVENANCE_CHARS + 1), ..here.clone() };
        assert!(long.check().unwrap_err().contains("provenance.host"));
        let control = Provenance { cpu: "a\nb".into(), ..here.clone() };
        assert!(control.check().unwrap_err().contains("provenance.cpu"));
        let many = Provenance { features: vec!["x".into(); MAX_FEATURES + 1], ..here };
        assert!(many.check().unwrap_err().contains("provenance.features"));
    }
}
