//! The end-to-end tests live outside the `ksweep` package (at the
//! repository root), so cargo does not discover them: each `tests/*.rs`
//! runs only if cli/Cargo.toml names it in a `[[test]]` table. This test
//! fails on any file that is not named there, so a new test cannot be
//! silently skipped.

use std::collections::BTreeSet;
use std::path::Path;

/// The `path` of every `[[test]]` table of a Cargo.toml.
fn registered_paths(manifest: &str) -> BTreeSet<String> {
    let mut paths = BTreeSet::new();
    let mut in_test = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_test = line == "[[test]]";
        } else if let Some(value) = line.strip_prefix("path").map(str::trim_start) {
            if in_test {
                if let Some(value) = value.strip_prefix('=') {
                    paths.insert(value.trim().trim_matches('"').to_string());
                }
            }
        }
    }
    paths
}

#[test]
fn every_test_file_is_registered() {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest_path = cli.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).expect("read cli/Cargo.toml");
    let registered = registered_paths(&manifest);
    let tests_dir = cli.join("../tests");
    let mut files = BTreeSet::new();
    for entry in std::fs::read_dir(&tests_dir).expect("read tests/") {
        let path = entry.expect("a directory entry").path();
        if path.is_file() && path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_name().expect("a file name").to_string_lossy().into_owned();
            files.insert(format!("../tests/{name}"));
        }
    }
    assert!(files.contains("../tests/e2e.rs"), "found {files:?} in {}", tests_dir.display());
    let missing: Vec<&String> = files.difference(&registered).collect();
    assert!(
        missing.is_empty(),
        "{missing:?} never run: add a [[test]] table with its path to {}",
        manifest_path.display()
    );
}

#[test]
fn reads_the_paths_of_test_tables_only() {
    let manifest = r#"
        [[bin]]
        name = "ksweep"
        path = "src/main.rs"

        [[test]]
        name = "e2e"
        path = "../tests/e2e.rs"

        [[test]]
        path="../tests/other.rs"
        name = "other"

        [dev-dependencies]
        path = "not a test"
    "#;
    let want: BTreeSet<String> = ["../tests/e2e.rs", "../tests/other.rs"].map(String::from).into();
    assert_eq!(registered_paths(manifest), want);
}
