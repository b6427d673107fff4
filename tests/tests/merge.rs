//! `ksweep merge` through the real binary: a laptop's run and a cluster's
//! joined into a new file whose tables equal what each input showed, an
//! overlap checked to agree, and an existing output refused.

use std::path::Path;
use std::time::Duration;

use ksweep_e2e::*;

const LIMIT: Duration = Duration::from_secs(240);

fn ksweep(dir: &Path, args: &[&str]) -> Output {
    run_ksweep_in(dir, args, LIMIT)
}

#[test]
fn two_databases_merge_into_one_that_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let quick = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/quick.toml")).unwrap();
    let wide = quick.replace("name = \"quick\"", "name = \"wide\"").replace("to = 16", "to = 20");
    std::fs::write(d.join("quick.toml"), &quick).unwrap();
    std::fs::write(d.join("wide.toml"), &wide).unwrap();
    // The laptop ran quick; the cluster ran the wider sweep, whose smaller
    // boards overlap quick's tasks.
    ksweep(d, &["run", "quick.toml", "--db", "laptop.db"]).ok();
    ksweep(d, &["run", "wide.toml", "--db", "cluster.db"]).ok();
    let merged = ksweep(d, &["merge", "laptop.db", "cluster.db", "-o", "all.db"]).ok();
    assert!(merged.stdout.contains("1892 already there, 0 conflicting"), "{}", merged.stdout);
    let table =
        |db: &str, id: &str| strip_timing(&ksweep(d, &["table", id, "--db", db, "--format", "json"]).ok().stdout);
    assert_tables_equal(&table("all.db", "quick"), &table("laptop.db", "quick"), "quick");
    assert_tables_equal(&table("all.db", "wide"), &table("cluster.db", "wide"), "wide");
    let export = |db: &str, id: &str| {
        Export::parse(&ksweep(d, &["export", id, "--db", db, "--format", "csv"]).ok().stdout).without_micros()
    };
    assert_lines_equal(&export("all.db", "wide"), &export("cluster.db", "wide"), "wide's export");
    let conn = rusqlite::Connection::open(d.join("all.db")).unwrap();
    let tasks: i64 = conn.query_row("SELECT COUNT(*) FROM tasks", [], |r| r.get(0)).unwrap();
    let wide_tasks: i64 =
        conn.query_row("SELECT tasks_total FROM sweeps WHERE name = 'wide'", [], |r| r.get(0)).unwrap();
    assert_eq!(tasks, wide_tasks, "quick's tasks are wide's: stored once");
    ksweep(d, &["merge", "laptop.db", "cluster.db", "-o", "all.db"]).fails_with(&["-o", "the file exists"]);
    assert!(std::fs::read_dir(d).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains("merging")));
}
