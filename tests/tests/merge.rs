//! `ksweep merge` through the real binary: a laptop's run and a cluster's
//! joined into a new file whose tables equal what each input showed, an
//! overlap checked to agree, a forged input and an existing output refused.

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
    // Each file with its WAL (`run` may leave its results there).
    let files =
        || ["laptop.db", "laptop.db-wal", "cluster.db", "cluster.db-wal"].map(|f| std::fs::read(d.join(f)).ok());
    let before = files();
    let merged = ksweep(d, &["merge", "laptop.db", "cluster.db", "-o", "all.db"]).ok();
    assert!(merged.stdout.contains("1892 already there, 0 conflicting"), "{}", merged.stdout);
    assert!(merged.stdout.contains("laptop.db: 1 sweep (1 new, 0 joined)"), "{}", merged.stdout);
    assert!(merged.stdout.contains("total: 2 sweeps"), "{}", merged.stdout);
    assert!(before == files(), "the inputs are left as they were");
    let table =
        |db: &str, id: &str| strip_timing(&ksweep(d, &["table", id, "--db", db, "--format", "json"]).ok().stdout);
    assert_tables_equal(&table("all.db", "quick"), &table("laptop.db", "quick"), "quick");
    assert_tables_equal(&table("all.db", "wide"), &table("cluster.db", "wide"), "wide");
    let export = |db: &str, id: &str| {
        Export::parse(&ksweep(d, &["export", id, "--db", db, "--format", "csv"]).ok().stdout).without_micros()
    };
    assert_lines_equal(&export("all.db", "quick"), &export("laptop.db", "quick"), "quick's export");
    assert_lines_equal(&export("all.db", "wide"), &export("cluster.db", "wide"), "wide's export");
    let conn = rusqlite::Connection::open(d.join("all.db")).unwrap();
    let tasks: i64 = conn.query_row("SELECT COUNT(*) FROM tasks", [], |r| r.get(0)).unwrap();
    let wide_tasks: i64 =
        conn.query_row("SELECT tasks_total FROM sweeps WHERE name = 'wide'", [], |r| r.get(0)).unwrap();
    assert_eq!(tasks, wide_tasks, "quick's tasks are wide's: stored once");
    ksweep(d, &["merge", "laptop.db", "cluster.db", "-o", "all.db"]).fails_with(&["-o", "the file exists"]);
    assert!(std::fs::read_dir(d).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains("merging")));

    // A cluster file edited to claim what no engine gives (a walk of n = 5
    // visiting more than its 25 cells) is refused whole, naming the row,
    // with nothing written.
    let cluster = rusqlite::Connection::open(d.join("cluster.db")).unwrap();
    for copy in ["forged.db", "odd.db"] {
        cluster.execute("VACUUM INTO ?1", [d.join(copy).to_str().unwrap()]).unwrap();
    }
    drop(cluster);
    let first_start = "SELECT st.task FROM sweep_tasks st JOIN sweeps s ON s.key = st.sweep
                       WHERE s.name = 'wide' AND st.config = 0 AND st.start_index = 0";
    let forged = rusqlite::Connection::open(d.join("forged.db")).unwrap();
    forged.execute(&format!("UPDATE tasks SET visited = visited + 1 WHERE id IN ({first_start})"), []).unwrap();
    drop(forged);
    ksweep(d, &["merge", "laptop.db", "forged.db", "-o", "forged-all.db"]).fails_with(&[
        "forged.db: refused: sweep",
        "(wide), `5x5 rule 2,1:",
        "start cell",
        "more than the board's 25 cells",
    ]);
    assert!(!d.join("forged-all.db").exists());

    // A cluster whose engine answered otherwise, as an engine could, for a
    // few of quick's tasks (n = 5, the first start, where AW and AW+ found
    // tours: one rotation later): the file is still written, whole, with
    // the laptop's results, and the command fails naming them.
    let odd = rusqlite::Connection::open(d.join("odd.db")).unwrap();
    let changed = odd
        .execute(
            &format!(
                "UPDATE tasks SET attempts = attempts + 1 WHERE id IN ({first_start}) AND success = 1
                 AND attempts < 8 AND method_key IN (SELECT key FROM methods WHERE name IN ('aw', 'aw+'))"
            ),
            [],
        )
        .unwrap();
    drop(odd);
    assert!(changed > 0);
    let failed = ksweep(d, &["merge", "laptop.db", "odd.db", "-o", "odd-all.db"]).fails_with(&[
        &format!("{changed} tasks disagreed"),
        "earlier database's results were kept",
        "`conflicts`",
        "CONFLICT in ",
    ]);
    assert!(failed.stdout.contains(&format!("{changed} conflicting")), "{}", failed.stdout);
    let conn = rusqlite::Connection::open(d.join("odd-all.db")).unwrap();
    let listed: i64 = conn.query_row("SELECT COUNT(*) FROM conflicts", [], |r| r.get(0)).unwrap();
    assert_eq!(listed as usize, changed, "each listed in conflicts");
    assert_tables_equal(&table("odd-all.db", "quick"), &table("laptop.db", "quick"), "the laptop's results kept");
    assert!(std::fs::read_dir(d).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains("merging")));
}
