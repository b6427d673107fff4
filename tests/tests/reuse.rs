//! Results that last (docs/identity.md), through the real binary: a sweep
//! widened after specs/quick.toml ran takes what the database holds and
//! runs only the new tasks, ends equal to a fresh run, and `--no-reuse`
//! reruns everything without a conflict.

use std::path::Path;
use std::time::Duration;

use ksweep_e2e::*;

const LIMIT: Duration = Duration::from_secs(240);

fn quick() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/quick.toml")).expect("quick.toml")
}

/// quick.toml with N up to 24 and one more method, under its own name.
fn widened(name: &str) -> String {
    let spec = quick()
        .replace("name = \"quick\"", &format!("name = \"{name}\""))
        .replace("to = 16", "to = 24")
        .replace("\"aw+\"]", "\"aw+\", \"mw\"]");
    assert!(spec.contains("to = 24") && spec.contains("\"mw\"]"), "quick.toml changed: {spec}");
    spec
}

/// Tasks the workers were handed for sweep `name`: each stored shard's
/// starts times the methods its configuration did not take.
fn tasks_handed_out(db: &Path, name: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    let methods: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sweep_methods m JOIN sweeps s ON s.key = m.sweep WHERE s.name = ?1",
            [name],
            |r| r.get(0),
        )
        .unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT sh.start_hi - sh.start_lo, c.taken FROM shards sh
             JOIN sweeps s ON s.key = sh.sweep
             JOIN sweep_configs c ON c.sweep = sh.sweep AND c.config = sh.config
             WHERE s.name = ?1",
        )
        .unwrap();
    let rows = stmt.query_map([name], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))).unwrap();
    rows.map(|r| r.unwrap()).map(|(starts, taken)| starts * (methods - i64::from(taken.count_ones() as u8))).sum()
}

/// The id of the sweep named `name` in a.db.
fn sweep_id(dir: &Path, name: &str) -> String {
    let status = run(dir, &["status", "--db", "a.db", name]).stdout;
    let first = status.lines().next().unwrap_or_default();
    first.split_whitespace().nth(1).unwrap_or_else(|| panic!("no id in {status}")).to_string()
}

fn run(dir: &Path, args: &[&str]) -> Output {
    run_ksweep_in(dir, args, LIMIT).ok()
}

#[test]
fn a_widened_sweep_runs_only_its_new_tasks_and_equals_a_fresh_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("quick.toml"), quick()).unwrap();
    std::fs::write(d.join("wide.toml"), widened("quick-wide")).unwrap();
    let checked = run(d, &["check", "wide.toml", "--db", "a.db"]);
    assert!(checked.stdout.contains("nothing: there is no database"), "{}", checked.stdout);

    run(d, &["run", "quick.toml", "--db", "a.db"]);
    // 24 boards x 20 starts x 4 methods (minus the boards with fewer
    // starts) known; new: mw on those, and all 5 methods on N = 17..24.
    let known = "1892 of 3965 tasks already known, 2073 to run";
    let checked = run(d, &["check", "wide.toml", "--db", "a.db"]);
    assert!(checked.stdout.contains(known), "{}", checked.stdout);
    assert!(checked.stdout.contains("computed by quick "), "{}", checked.stdout);
    let wide = run(d, &["run", "wide.toml", "--db", "a.db"]);
    assert!(wide.stderr.contains(known), "{}", wide.stderr);
    assert_eq!(tasks_handed_out(&d.join("a.db"), "quick-wide"), 2073, "exactly the new tasks ran");
    let status = run(d, &["status", "--db", "a.db", "quick-wide"]).stdout;
    assert!(status.contains("1892 of 3965 tasks taken from stored results"), "{status}");
    let table = run(d, &["table", "quick-wide", "--db", "a.db"]).stdout;
    assert!(table.contains("taken from stored results; results computed by quick "), "the table says: {table}");

    // The same spec in a new database: the same table and tasks.
    run(d, &["run", "wide.toml", "--db", "fresh.db"]);
    assert_eq!(tasks_handed_out(&d.join("fresh.db"), "quick-wide"), 3965);
    let table = |db: &str| strip_timing(&run(d, &["table", "quick-wide", "--db", db, "--format", "json"]).stdout);
    assert_tables_equal(&table("a.db"), &table("fresh.db"), "widened vs fresh");
    let export = |db: &str| Export::parse(&run(d, &["export", "quick-wide", "--db", db, "--format", "csv"]).stdout);
    let (reused, fresh) = (export("a.db"), export("fresh.db"));
    reused.assert_complete(3965);
    assert_lines_equal(&reused.without_micros(), &fresh.without_micros(), "widened vs fresh export");
    let by = reused.column("computed_by");
    let computed_by = |name: &str| {
        let id = sweep_id(d, name);
        reused.rows.iter().filter(|r| r[by] == id).count()
    };
    assert_eq!((computed_by("quick"), computed_by("quick-wide")), (1892, 2073), "each row names its sweep");

    // Everything again with --no-reuse: every task handed out, no conflict.
    std::fs::write(d.join("again.toml"), widened("quick-again")).unwrap();
    let again = run(d, &["run", "again.toml", "--db", "a.db", "--no-reuse"]);
    assert!(again.stderr.contains("0 of 3965 tasks already known, 3965 to run"), "{}", again.stderr);
    assert_eq!(tasks_handed_out(&d.join("a.db"), "quick-again"), 3965);
    let status = run(d, &["status", "--db", "a.db", "quick-again"]).stdout;
    assert!(status.contains("every task run again (--no-reuse)"), "{status}");
    assert!(!status.contains("DISAGREED"), "{status}");
    let conn = rusqlite::Connection::open(d.join("a.db")).unwrap();
    let conflicts: i64 = conn.query_row("SELECT COUNT(*) FROM conflicts", [], |r| r.get(0)).unwrap();
    assert_eq!(conflicts, 0, "the reruns agree with the stored results");
}
