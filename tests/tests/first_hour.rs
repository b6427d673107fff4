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
    let run = run_ksweep(dir.path(), &["run", spec, "--db", db], LIMIT).ok();
    // No cryptic `· -` where no rate was measured.
    assert!(run.stderr.contains("(100.0 %), done\n") && !run.stderr.contains("· -"), "{}", run.stderr);
    let table = run_ksweep(dir.path(), &["table", "--db", db, "--rule", "2,1"], LIMIT).ok();
    assert!(table.stdout.contains("100.0") || table.stdout.contains("0.0"), "{}", table.stdout);
    run_ksweep(dir.path(), &["table", "--db", db, "--rule", "3,2"], LIMIT).fails_with(&[
        "--rule 3,2",
        "no such moves",
        "it has 2,1",
    ]);
}

/// `health` said nothing when the coordinator served; `status` with no
/// sweeps printed "no sweeps" and then an empty table's header.
#[test]
fn health_says_serving_and_an_empty_coordinator_has_no_table_header() {
    let c = Cluster::start(&[]);
    assert_eq!(c.client(&["health"]).ok().stdout, "coordinator serving\n");
    assert_eq!(c.client(&["status"]).ok().stdout, "no sweeps\n");
}

/// `watch` against an address no coordinator ever answered retried for
/// ever (as it rightly does for one that went away): it gives up soon.
#[test]
fn watch_gives_up_on_a_coordinator_it_never_reached() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    run_ksweep(dir.path(), &["watch", "x", "--coordinator", "http://127.0.0.1:1"], Duration::from_secs(60))
        .fails_with(&["cannot reach the coordinator at http://127.0.0.1:1"]);
    assert!(started.elapsed() < Duration::from_secs(40), "{:?}", started.elapsed());
}

/// Connection mistakes say what to do: an address without a scheme, an
/// https:// URL for a plain coordinator, a wrong token.
#[test]
fn connection_mistakes_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    run_ksweep(dir.path(), &["status", "--coordinator", "localhost:50051"], LIMIT)
        .fails_with(&["has no scheme: did you mean http://localhost:50051"]);
    let c = Cluster::start_with_token(&[], Some("the-token"));
    let https = c.url().replacen("http://", "https://", 1);
    c.ksweep(&["status", "--coordinator", &https, "--token", "the-token"])
        .fails_with(&["the coordinator does not speak TLS; use http://"]);
    c.ksweep(&["status", "--coordinator", &c.url(), "--token", "wrong"]).fails_with(&[
        "missing or wrong token",
        "--token-file",
        "KSWEEP_TOKEN",
    ]);
}

/// Every command that names a sweep says, in its help, how to name one.
#[test]
fn every_sweep_argument_is_described_in_help() {
    let dir = tempfile::tempdir().unwrap();
    for command in ["status", "watch", "table", "export", "plot", "report"] {
        let help = run_ksweep(dir.path(), &[command, "--help"], LIMIT).ok().stdout;
        // `[ID]  text`, or `[ID]` with the text on the next line (long help).
        let mut lines = help.lines().skip_while(|l| !l.trim_start().starts_with("[ID]"));
        let first = lines.next().unwrap_or_else(|| panic!("{command} --help has no [ID]:\n{help}"));
        let same_line = first.trim_start().trim_start_matches("[ID]").trim();
        let description = if same_line.is_empty() { lines.next().unwrap_or_default() } else { same_line };
        assert!(description.contains("The sweep"), "{command} --help leaves [ID] undescribed:\n{help}");
    }
}

/// After `ksweep run` the database file holds the results itself: copying
/// it alone (without `-wal`) copied an empty database.
#[test]
fn a_finished_run_leaves_its_results_in_the_database_file() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, db) = (dir.path().join("tiny.toml"), dir.path().join("t.db"));
    std::fs::write(&spec, SPEC_TINY).unwrap();
    run_ksweep(dir.path(), &["run", spec.to_str().unwrap(), "--db", db.to_str().unwrap()], LIMIT).ok();
    let copy = dir.path().join("copy.db");
    std::fs::copy(&db, &copy).unwrap();
    let table = run_ksweep(dir.path(), &["table", "--db", copy.to_str().unwrap(), "--format", "json"], LIMIT).ok();
    assert!(table.stdout.contains("\"tasks\": 6"), "the copy holds the results: {}", table.stdout);
}
