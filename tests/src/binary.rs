//! The binary under test, found and checked fresh, and the commands that
//! run it with a scrubbed environment.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::LazyLock;

/// The binary under test: `KSWEEP_BIN`, or the `ksweep` beside this test's
/// own executable (`target/<profile>/`), which `cargo test --workspace`
/// builds with it. Refused when missing or older than a source file of the
/// workspace (`cargo test -p ksweep-e2e` alone does not build it), so a
/// stale binary is never what passes.
pub static KSWEEP: LazyLock<PathBuf> = LazyLock::new(|| {
    if let Some(bin) = std::env::var_os("KSWEEP_BIN") {
        return PathBuf::from(bin);
    }
    let exe = std::env::current_exe().expect("the test's own path");
    // target/<profile>/deps/<test>-<hash>
    let bin = exe.parent().and_then(Path::parent).expect("target/<profile>").join("ksweep");
    let built = std::fs::metadata(&bin).and_then(|m| m.modified()).unwrap_or_else(|e| {
        panic!("{}: {e}; build it (cargo test --workspace, or cargo build -p ksweep) or set KSWEEP_BIN", bin.display())
    });
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root");
    if let Some(newer) = newest_source(workspace).filter(|(at, _)| *at > built) {
        panic!(
            "{} is older than {}: build it again (cargo test --workspace, or cargo build -p ksweep)",
            bin.display(),
            newer.1.display()
        );
    }
    bin
});

/// The most recently changed `.rs` file under the workspace's crates.
fn newest_source(workspace: &Path) -> Option<(std::time::SystemTime, PathBuf)> {
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    let mut dirs: Vec<PathBuf> = ["tour", "sweep", "figures", "proto", "coordinator", "worker", "standalone", "cli"]
        .iter()
        .map(|c| workspace.join(c).join("src"))
        .collect();
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let at = entry.metadata().and_then(|m| m.modified()).ok();
                if let Some(at) = at.filter(|at| newest.as_ref().is_none_or(|(n, _)| at > n)) {
                    newest = Some((at, path));
                }
            }
        }
    }
    newest
}

/// Variables the binary reads that must not leak in from the caller's shell.
const SCRUB: &[&str] =
    &["KSWEEP_TOKEN", "KSWEEP_COORDINATOR", "KSWEEP_TLS_CA", "KSWEEP_TLS_CERT", "KSWEEP_TLS_KEY", "RUST_LOG"];

pub(crate) fn ksweep_command(args: &[String]) -> Command {
    let mut c = Command::new(&*KSWEEP);
    c.args(args);
    scrubbed(c)
}

/// `c` with no stdin and none of the [`SCRUB`] variables.
pub(crate) fn scrubbed(mut c: Command) -> Command {
    c.stdin(Stdio::null());
    for v in SCRUB {
        c.env_remove(v);
    }
    c
}
