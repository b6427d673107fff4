//! What a researcher meets in the first hour (issue 39), through the real
//! binary: each check is one thing a new user tripped over.

use std::time::Duration;

use ksweep_e2e::*;

const LIMIT: Duration = Duration::from_secs(120);

/// `--rule` with a value the sweep lacks printed an empty table and
/// exited 0; it is an error naming the rules the sweep has.
#[test]
fn an_unknown_rule_is_an_error_that_lists_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, db) = (dir.path().join("tiny.toml"), dir.path().join("t.db"));
    std::fs::write(&spec, SPEC_TINY).unwrap();
    let (spec, db) = (spec.to_str().unwrap(), db.to_str().unwrap());
    run_ksweep(dir.path(), &["run", spec, "--db", db], LIMIT).ok();
    let table = run_ksweep(dir.path(), &["table", "--db", db, "--rule", "2,1"], LIMIT).ok();
    assert!(table.stdout.contains("100.0") || table.stdout.contains("0.0"), "{}", table.stdout);
    run_ksweep(dir.path(), &["table", "--db", db, "--rule", "3,2"], LIMIT).fails_with(&[
        "--rule 3,2",
        "no such moves",
        "it has 2,1",
    ]);
}
