use sweep::{Cursor, ShardPlan, Sweep};

use super::*;
use crate::ids::{ShardId, SweepKey, WorkerId};

const SPEC: &str = r#"
    name = "store"
    seed = 3
    starts = 3
    methods = ["w", "aw"]
    [[grid]]
    rule = [2, 1]
    dims = [2]
    n = [5, 6]
    [[grid]]
    rule = [3, 1]
    dims = [2]
    n = [4]
"#;

/// A result whose start cell is its start index (one attempt, 25 cells
/// visited, worker 1); the state tests build theirs from it too.
pub(crate) fn result(
    sweep: SweepKey,
    config: u32,
    start_index: u64,
    method: u32,
    success: bool,
    micros: u64,
) -> ResultRecord {
    ResultRecord {
        sweep,
        config,
        start_index,
        method,
        start_cell: start_index,
        success,
        attempts: 1,
        visited: 25,
        micros,
        worker: WorkerId(1),
        outcome: if success { tour::Outcome::Tour } else { tour::Outcome::GaveUp },
        computed_by: sweep,
    }
}

#[test]
fn the_same_sweep_is_stored_once() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(SPEC).unwrap();
    let (a, created) = store.insert_sweep(&sweep).unwrap();
    assert!(created);
    assert_eq!(a.tasks_total, sweep.total_tasks());
    assert_eq!((a.configurations, a.impossible), (3, 1));
    let (b, created) = store.insert_sweep(&sweep).unwrap();
    assert!(!created);
    assert_eq!(a.key, b.key);
    assert_eq!(store.sweeps().unwrap().len(), 1);
    assert_eq!(store.resolve(None).unwrap().id, sweep.id());
    assert!(matches!(store.resolve(Some("nope")), Err(Error::SweepNotFound(_))));
}

#[test]
fn a_sweep_is_named_by_its_id_a_unique_prefix_or_its_name() {
    let mut store = Store::in_memory().unwrap();
    let first = Sweep::parse(SPEC).unwrap();
    let other = Sweep::parse(&SPEC.replacen("seed = ", "seed = 1", 1)).unwrap();
    store.insert_sweep(&first).unwrap();
    store.insert_sweep(&other).unwrap();
    let (a, b) = (first.id(), other.id());
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    assert_eq!(store.resolve(Some(&a)).unwrap().id, a);
    assert_eq!(store.resolve(Some(&a[..common + 1])).unwrap().id, a, "a unique prefix");
    assert_eq!(store.resolve(Some(&b[..common + 1])).unwrap().id, b);
    // Both sweeps share the spec's name: by name, or by a common prefix, it is ambiguous.
    let err = store.resolve(Some(first.name())).unwrap_err();
    assert!(matches!(err, Error::AmbiguousId(..)), "{err}");
    // Listed to choose from: each by a short id that tells it apart, its state and tasks.
    let Error::AmbiguousId(_, listing) = &err else { unreachable!() };
    assert_eq!(listing.len(), 2);
    let text = err.to_string();
    for short in listing.short_ids() {
        assert!(short.len() >= 8 && text.contains(&format!("\n  {short}  ")), "{text}");
    }
    assert!(text.contains("running") && text.contains(&format!("0/{}", first.total_tasks())), "{text}");
    match store.resolve(None) {
        Err(Error::AmbiguousSweep(all)) => assert_eq!(all.len(), 2),
        other => panic!("no id, two sweeps: {other:?}"),
    }
    if common > 0 {
        assert!(matches!(store.resolve(Some(&a[..common])), Err(Error::AmbiguousId(..))));
    }
    let renamed = Sweep::parse(&SPEC.replacen("name = ", "name = \"solo\"\n# ", 1)).unwrap();
    store.insert_sweep(&renamed).unwrap();
    assert_eq!(store.resolve(Some("solo")).unwrap().id, renamed.id(), "a unique name");
}

#[test]
fn results_are_idempotent_and_counters_follow() {
    let mut store = Store::in_memory().unwrap();
    let (rec, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    let k = rec.key;
    let batch = vec![result(k, 0, 0, 0, true, 10), result(k, 0, 0, 1, false, 20), result(k, 0, 1, 0, true, 30)];
    assert_eq!(store.record(&batch).unwrap(), 3);
    assert_eq!(store.record(&batch).unwrap(), 0, "a duplicate batch adds nothing");
    let mut overlapping = batch.clone();
    overlapping.push(result(k, 1, 0, 0, true, 40));
    assert_eq!(store.record(&overlapping).unwrap(), 1);
    let rec = store.resolve(None).unwrap();
    assert_eq!((rec.tasks_done, rec.successes), (4, 3));
}

/// Batches as large as the coordinator's (a sweep's references go in 64
/// to a statement): duplicates inside a batch and across batches count
/// once, successes by the stored result, and two sweeps' runs in one batch
/// each get their own.
#[test]
fn large_batches_count_each_new_result_once() {
    let mut store = Store::in_memory().unwrap();
    let spec = |name: &str| {
        format!("name = \"{name}\"\nseed = 1\nstarts = 400\nmethods = [\"w\", \"aw\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [30]")
    };
    let (a, _) = store.insert_sweep(&Sweep::parse(&spec("a")).unwrap()).unwrap();
    let (b, _) = store.insert_sweep(&Sweep::parse(&spec("b")).unwrap()).unwrap();
    // Starts by both methods, a success where the start is a multiple of 3.
    let of = |k: SweepKey, starts: std::ops::Range<u64>| -> Vec<ResultRecord> {
        starts.flat_map(|s| (0..2).map(move |m| result(k, 0, s, m, s % 3 == 0, 5))).collect()
    };
    // A rerun disagreeing with the stored result: a conflict, the stored one kept.
    let disagree = |mut r: ResultRecord| {
        r.success = !r.success;
        r
    };
    let mut first = of(a.key, 0..150);
    first.extend(of(a.key, 140..145)); // 10 repeated inside the batch, in one statement with the first
    first[300] = disagree(first[300]);
    assert_eq!(store.record(&first).unwrap(), 300);
    // A's 100..250 (100 new), B's 0..70 (its own list; the stored tasks), A's 250..260.
    let mut second = of(a.key, 100..250);
    second.extend(of(b.key, 0..70));
    second.extend(of(a.key, 250..260));
    second[41] = disagree(second[41]);
    assert_eq!(store.record(&second).unwrap(), 200 + 140 + 20);
    let conflicts: Vec<(i64, i64, bool)> = store
        .conn
        .prepare("SELECT start_index, method, success FROM conflicts ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(conflicts, [(140, 0, true), (120, 1, false)]);
    let successes = |starts: u64| 2 * starts.div_ceil(3);
    let (a, b) = (store.record_of(a.key).unwrap(), store.record_of(b.key).unwrap());
    assert_eq!((a.tasks_done, a.successes), (520, successes(260)));
    assert_eq!((b.tasks_done, b.successes), (140, successes(70)));
    let listed = store.results_page(a.key, None, 1000).unwrap();
    assert_eq!(listed.len(), 520, "every reference listed once");
    assert!(listed.iter().all(|r| r.success == (r.start_index % 3 == 0)));
}

#[test]
fn results_of_a_sweep_no_longer_running_are_not_stored() {
    let mut store = Store::in_memory().unwrap();
    let (rec, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    let k = rec.key;
    assert_eq!(store.record(&[result(k, 0, 0, 0, true, 10)]).unwrap(), 1);
    store.set_state(k, SweepState::Cancelled, None).unwrap();
    assert_eq!(store.record(&[result(k, 0, 1, 0, true, 10), result(k, 0, 2, 0, true, 10)]).unwrap(), 0);
    let rec = store.resolve(None).unwrap();
    assert_eq!((rec.tasks_done, rec.successes), (1, 1), "counters follow the rows");
    let rows: i64 = store.conn.query_row("SELECT COUNT(*) FROM results", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 1);
}

#[test]
fn aggregates_have_medians_and_mark_impossible_configurations() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(SPEC).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let k = rec.key;
    store
        .record(&[
            result(k, 0, 0, 0, true, 10),
            result(k, 0, 1, 0, false, 40),
            result(k, 0, 2, 0, true, 20),
            result(k, 1, 0, 1, true, 5),
            result(k, 1, 1, 1, true, 7),
        ])
        .unwrap();
    let rows = store.aggregates(&rec, &sweep).unwrap();
    assert_eq!(rows.len(), 3 * 2);
    let w5 = &rows[0];
    assert_eq!((w5.config, w5.method.as_str(), w5.tasks, w5.successes), (0, "w", 3, 2));
    assert_eq!(w5.median_micros, 20.0);
    assert!((w5.mean_micros - 70.0 / 3.0).abs() < 1e-9);
    let aw6 = &rows[3];
    assert_eq!((aw6.config, aw6.method.as_str(), aw6.tasks), (1, "aw", 2));
    assert_eq!(aw6.median_micros, 6.0, "even count: mean of the middle two");
    assert!(rows[4].impossible && rows[5].impossible);
    assert_eq!(rows[4].tasks, 0);
}

#[test]
fn pages_come_in_task_order() {
    let mut store = Store::in_memory().unwrap();
    let (rec, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    let k = rec.key;
    let mut all = Vec::new();
    for c in (0..2).rev() {
        for s in (0..3).rev() {
            for m in 0..2 {
                all.push(result(k, c, s, m, true, 1));
            }
        }
    }
    store.record(&all).unwrap();
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = store.results_page(k, after, 5).unwrap();
        let Some(last) = page.last() else { break };
        after = Some((last.config, last.start_index, last.method));
        seen.extend(page.iter().map(|r| (r.config, r.start_index, r.method)));
    }
    let mut want: Vec<_> = all.iter().map(|r| (r.config, r.start_index, r.method)).collect();
    want.sort();
    assert_eq!(seen, want);
}

#[test]
fn a_reopened_file_keeps_shards_cursor_and_results() {
    let dir = std::env::temp_dir().join(format!("ksweep-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.db");
    let _ = std::fs::remove_file(&path);
    let sweep = Sweep::parse(SPEC).unwrap();
    {
        let mut store = Store::open(&path).unwrap();
        let (rec, _) = store.insert_sweep(&sweep).unwrap();
        let plans = [
            (ShardId(1), ShardPlan { config: 0, start_lo: 0, start_hi: 2 }),
            (ShardId(2), ShardPlan { config: 0, start_lo: 2, start_hi: 3 }),
        ];
        let cursor = Cursor { config: 1, start: 0 };
        store.cut_shards(&[NewShards { sweep: rec.key, shards: plans.to_vec(), cursor }]).unwrap();
        store.record(&[result(rec.key, 0, 2, 0, true, 1), result(rec.key, 0, 2, 1, true, 1)]).unwrap();
        store.finish_shards(&[ShardId(2)], &[]).unwrap();
    }
    let store = Store::open(&path).unwrap();
    let rec = store.resolve(None).unwrap();
    assert_eq!(rec.cursor, Cursor { config: 1, start: 0 });
    assert_eq!(rec.tasks_done, 2);
    let open = store.open_shards(rec.key).unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].id, ShardId(1));
    assert_eq!(store.max_shard_id().unwrap(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn an_unknown_stored_state_is_an_error_not_a_default() {
    let mut store = Store::in_memory().unwrap();
    let (rec, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    store.conn.execute("UPDATE sweeps SET state = 9 WHERE key = ?1", [rec.key.0]).unwrap();
    let e = store.resolve(None).unwrap_err();
    assert!(e.to_string().contains("unknown sweep state code 9"), "{e}");
    store.conn.execute("UPDATE sweeps SET state = 1 WHERE key = ?1", [rec.key.0]).unwrap();
    store.record(&[result(rec.key, 0, 0, 0, true, 1)]).unwrap();
    store.conn.execute("UPDATE tasks SET outcome = 7", []).unwrap();
    let e = store.results_page(rec.key, None, 10).unwrap_err();
    assert!(e.to_string().contains("unknown outcome code 7"), "{e}");
    let shards = vec![(ShardId(1), ShardPlan { config: 0, start_lo: 0, start_hi: 1 })];
    store.cut_shards(&[NewShards { sweep: rec.key, shards, cursor: Cursor::default() }]).unwrap();
    store.conn.execute("UPDATE shards SET state = 5", []).unwrap();
    let e = store.open_shards(rec.key).unwrap_err();
    assert!(e.to_string().contains("unknown shard state code 5"), "{e}");
}

#[test]
fn a_result_outside_the_grid_is_an_error_not_a_panic() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(SPEC).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let e = store.record(&[result(rec.key, 17, 0, 0, true, 1)]).unwrap_err();
    assert!(e.to_string().contains("no configuration 17"), "{e}");
    // One in the file all the same (damaged, or written by hand).
    store.record(&[result(rec.key, 0, 0, 0, true, 1)]).unwrap();
    store.conn.execute("UPDATE sweep_tasks SET config = 17", []).unwrap();
    assert!(matches!(store.aggregates(&rec, &sweep), Err(Error::Corrupt(_))));
}

#[test]
fn foreign_files_are_refused_clearly_and_left_alone() {
    let dir = temp();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a database at all, just some text that is long enough to have a header").unwrap();
    let before = std::fs::read(&text).unwrap();
    for e in [Store::open_read_only(&text).err().unwrap(), Store::open(&text).err().unwrap()] {
        assert!(matches!(e, Error::NotADatabase(_)), "{e}");
    }
    assert_eq!(std::fs::read(&text).unwrap(), before, "untouched");
    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x INTEGER);").unwrap();
    for e in [Store::open_read_only(&other).err().unwrap(), Store::open(&other).err().unwrap()] {
        assert!(matches!(e, Error::NotADatabase(_)), "{e}");
    }
    let tables: i64 = rusqlite::Connection::open(&other)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(tables, 1, "no tables added to a foreign database");
}

#[test]
fn a_newer_database_is_refused_naming_both_versions_and_its_writer() {
    let dir = temp();
    let path = dir.path().join("s.db");
    {
        let mut store = Store::open(&path).unwrap();
        store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
        store.conn.execute_batch("PRAGMA user_version = 99; UPDATE meta SET value = 99 WHERE key = 'schema';").unwrap();
    }
    for e in [Store::open_read_only(&path).err().unwrap(), Store::open(&path).err().unwrap()] {
        match &e {
            Error::SchemaNewer { found: 99, supported, writer: Some(w) } => {
                assert_eq!(*supported, schema::SCHEMA_VERSION);
                assert!(w.starts_with(env!("CARGO_PKG_VERSION")), "{w}");
            }
            other => panic!("{other:?}"),
        }
        let text = e.to_string();
        for part in ["version 99", &format!("version {}", schema::SCHEMA_VERSION), "use ksweep"] {
            assert!(text.contains(part), "{text}");
        }
    }
}

/// A database as a release of schema `version` wrote it, holding the store
/// test's sweep with one success and one failure.
fn released_database(path: &std::path::Path, released: i64) -> Sweep {
    let sweep = Sweep::parse(SPEC).unwrap();
    let mut conn = rusqlite::Connection::open(path).unwrap();
    // From version 4 on, `results` is a view: made as version 3, then upgraded.
    let version = released.min(3);
    schema::create_as_released(&mut conn, version);
    conn.execute(
        "INSERT INTO sweeps (id, name, spec, state, tasks_total, configurations, impossible, created_ms)
         VALUES (?1, 'store', ?2, 1, ?3, 3, 1, 1000)",
        rusqlite::params![sweep.id(), sweep.canonical_toml(), sweep.total_tasks() as i64],
    )
    .unwrap();
    conn.execute("INSERT INTO workers (name, threads, registered_ms) VALUES ('w', 2, 1000)", []).unwrap();
    let outcome = if version >= 2 { ", outcome" } else { "" };
    for (start, success, code) in [(0, 1, 1), (1, 0, 2)] {
        let values = if version >= 2 { format!(", {code}") } else { String::new() };
        conn.execute_batch(&format!(
            "INSERT INTO results (sweep, config, start_index, method, start_cell, success, attempts, visited, micros,
             worker{outcome}) VALUES (1, 0, {start}, 0, {start}, {success}, 1, 25, 10, 1{values});
             UPDATE sweeps SET tasks_done = tasks_done + 1, successes = successes + {success};"
        ))
        .unwrap();
    }
    if released > version {
        schema::upgrade_as_released(&mut conn, released);
    }
    sweep
}

fn columns(conn: &rusqlite::Connection, table: &str) -> Vec<String> {
    let mut stmt = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')")).unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
}

#[test]
fn an_older_database_is_upgraded_in_place_after_a_backup() {
    for version in 1..schema::SCHEMA_VERSION {
        let dir = temp();
        let path = dir.path().join("s.db");
        let sweep = released_database(&path, version);
        let store = Store::open(&path).unwrap();
        let record = store.resolve(None).unwrap();
        assert_eq!((record.id.as_str(), record.tasks_done, record.successes), (sweep.id().as_str(), 2, 1));
        assert_eq!((record.first_result_ms, record.finished_ms), (None, None), "unknown before version 3");
        let outcomes: Vec<tour::Outcome> =
            store.results_page(record.key, None, 10).unwrap().iter().map(|r| r.outcome).collect();
        // Version 1 knew no proofs: its failure was giving up.
        let failed = if version == 1 { tour::Outcome::GaveUp } else { tour::Outcome::NoTour };
        assert_eq!(outcomes, [tour::Outcome::Tour, failed], "version {version}");
        drop(store);
        let backup = dir.path().join(format!("s.db.schema-v{version}.bak"));
        let old = rusqlite::Connection::open(&backup).unwrap();
        let meta: i64 = old.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).unwrap();
        let rows: i64 = old.query_row("SELECT COUNT(*) FROM results", [], |r| r.get(0)).unwrap();
        assert_eq!((meta, rows), (version, 2), "the backup is the file as it was");
        assert_eq!(columns(&old, "sweeps").contains(&"finished_ms".to_string()), version >= 3);
        // Opened again: already current, no second backup.
        drop(Store::open(&path).unwrap());
        assert!(!dir.path().join(format!("s.db.schema-v{version}.bak.1")).exists());
    }
}

/// `open_unchanged` reads an older file through a copy upgraded in
/// memory: the file keeps its bytes, and no backup is written.
#[test]
fn an_unchanged_open_upgrades_in_memory_only() {
    let dir = temp();
    let path = dir.path().join("s.db");
    released_database(&path, 2);
    let before = std::fs::read(&path).unwrap();
    let store = Store::open_unchanged(&path).unwrap();
    assert_eq!(store.resolve(None).unwrap().tasks_done, 2);
    drop(store);
    assert!(std::fs::read(&path).unwrap() == before, "the file is as it was");
    assert!(!dir.path().join("s.db.schema-v2.bak").exists(), "no backup");
}

/// A copy a killed upgrade left under its temporary name is never taken
/// for a backup (removed, and the backup written whole beside it), and a
/// backup already there is never replaced.
#[test]
fn a_partial_copy_is_never_a_backup_and_no_backup_is_replaced() {
    let dir = temp();
    let path = dir.path().join("s.db");
    released_database(&path, 2);
    let (earlier, partial) = (dir.path().join("s.db.schema-v2.bak"), dir.path().join("s.db.schema-v2.bak.partial"));
    std::fs::write(&earlier, b"an earlier backup, kept as it is").unwrap();
    std::fs::write(&partial, vec![0u8; 4096]).unwrap();
    let store = Store::open(&path).unwrap();
    let backup = store.upgraded().expect("upgraded").backup.clone();
    assert_eq!(backup, dir.path().join("s.db.schema-v2.bak.1"));
    drop(store);
    assert_eq!(std::fs::read(&earlier).unwrap(), b"an earlier backup, kept as it is");
    assert!(!partial.exists(), "the killed upgrade's copy is gone");
    let old = rusqlite::Connection::open(&backup).unwrap();
    let meta: i64 = old.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).unwrap();
    let rows: i64 = old.query_row("SELECT COUNT(*) FROM results", [], |r| r.get(0)).unwrap();
    assert_eq!((meta, rows), (2, 2), "the backup is the file as it was, whole");
}

#[test]
fn a_failing_step_leaves_the_database_as_it_was() {
    let dir = temp();
    let path = dir.path().join("s.db");
    released_database(&path, 2);
    // Version 3 creates this table: its step fails half-way through.
    rusqlite::Connection::open(&path).unwrap().execute_batch("CREATE TABLE about (x);").unwrap();
    let e = Store::open(&path).err().unwrap();
    assert!(matches!(e, Error::Migration(_)), "{e:?}");
    assert!(e.to_string().contains("nothing was changed"), "{e}");
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert!(!columns(&conn, "sweeps").contains(&"first_result_ms".to_string()), "step 3 rolled back");
    assert!(!columns(&conn, "workers").contains(&"host".to_string()), "step 3 rolled back");
    let meta: i64 = conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).unwrap();
    let rows: i64 = conn.query_row("SELECT COUNT(*) FROM results", [], |r| r.get(0)).unwrap();
    assert_eq!((meta, rows), (2, 2));
}

#[test]
fn version_4_stores_each_task_once_and_keeps_disagreements() {
    let dir = temp();
    let path = dir.path().join("s.db");
    let sweep = released_database(&path, 3);
    // A second sweep of the same tasks (another name): one result agrees,
    // the other says the opposite.
    let twin = Sweep::parse(&SPEC.replacen("name = \"store\"", "name = \"twin\"", 1)).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "INSERT INTO sweeps (id, name, spec, state, tasks_total, configurations, impossible, created_ms)
         VALUES ('{}', 'twin', '{}', 2, {}, 3, 1, 2000);
         INSERT INTO results (sweep, config, start_index, method, start_cell, success, attempts, visited, micros,
             worker, outcome) VALUES (2, 0, 0, 0, 0, 1, 1, 25, 10, 1, 1), (2, 0, 1, 0, 1, 1, 1, 25, 10, 1, 1);
         UPDATE sweeps SET tasks_done = 2, successes = 2 WHERE key = 2;",
        twin.id(),
        twin.canonical_toml().replace('\'', "''"),
        twin.total_tasks()
    ))
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    let count = |sql: &str| -> i64 { store.conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT COUNT(*) FROM tasks"), 2, "two identities, stored once");
    assert_eq!(count("SELECT COUNT(*) FROM conflicts"), 1, "the twin's second result disagreed");
    let (first, second) = (store.resolve(Some(&sweep.id())).unwrap(), store.resolve(Some(&twin.id())).unwrap());
    let flags = |key| store.results_page(key, None, 10).unwrap().iter().map(|r| r.success).collect::<Vec<_>>();
    assert_eq!(flags(first.key), [true, false]);
    assert_eq!(flags(second.key), [true, false], "the earlier sweep's result is the one kept");
    assert_eq!((second.tasks_done, second.successes), (2, 1), "counters follow the kept results");
    assert_eq!(store.known(&twin).unwrap().tasks, 0, "2 of 3 starts of 5x5: nothing to take whole");
}

#[test]
fn a_failing_version_4_leaves_a_version_3_database_as_it_was() {
    let dir = temp();
    let path = dir.path().join("s.db");
    released_database(&path, 3);
    rusqlite::Connection::open(&path).unwrap().execute_batch("CREATE TABLE sweep_tasks (x);").unwrap();
    let e = Store::open(&path).err().unwrap();
    assert!(matches!(e, Error::Migration(_)), "{e:?}");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let kind: String =
        conn.query_row("SELECT type FROM sqlite_master WHERE name = 'results'", [], |r| r.get(0)).unwrap();
    let rows: i64 = conn.query_row("SELECT COUNT(*) FROM results", [], |r| r.get(0)).unwrap();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!((kind.as_str(), rows, version), ("table", 2, 3), "step 4 rolled back whole");
}

#[test]
fn a_new_database_and_an_upgraded_one_have_the_same_tables() {
    let dir = temp();
    let (new, old) = (dir.path().join("new.db"), dir.path().join("old.db"));
    Store::open(&new).unwrap().keep();
    released_database(&old, 1);
    drop(Store::open(&old).unwrap());
    let schema = |path: &std::path::Path| -> Vec<(String, Vec<String>)> {
        let conn = rusqlite::Connection::open(path).unwrap();
        let mut stmt =
            conn.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name").unwrap();
        let tables: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap();
        tables.into_iter().map(|t| (t.clone(), columns(&conn, &t))).collect()
    };
    assert_eq!(schema(&new), schema(&old));
}

#[test]
fn one_writer_per_file_and_the_error_names_it() {
    let dir = temp();
    let path = dir.path().join("s.db");
    let mut first = Store::open(&path).unwrap();
    first.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    let e = Store::open(&path).err().unwrap();
    let pid = format!("pid {}", std::process::id());
    assert!(matches!(&e, Error::Locked { holder, .. } if holder.contains(&pid)), "{e}");
    // Readers are welcome while it runs.
    assert_eq!(Store::open_read_only(&path).unwrap().sweeps().unwrap().len(), 1);
    drop(first);
    assert!(!lock::lock_path(&path).exists(), "the lock file goes with its holder");
    Store::open(&path).unwrap();
}

#[test]
fn a_new_file_left_empty_is_removed_and_a_used_one_kept() {
    let dir = temp();
    let path = dir.path().join("new.db");
    drop(Store::open(&path).unwrap());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "nothing left behind: {left:?}");
    let mut store = Store::open(&path).unwrap();
    store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    drop(store);
    assert!(path.exists());
    // An existing file is never removed, even empty of sweeps.
    let other = dir.path().join("existing.db");
    drop(Store::open(&other).unwrap());
    std::fs::write(&other, b"").unwrap();
    drop(Store::open(&other).unwrap());
    assert!(other.exists());
}

/// `--db` on a database in a directory this user cannot write: SQLite
/// cannot make its WAL index there (SQLITE_READONLY_DIRECTORY), so the read
/// path opens it immutable.
#[test]
fn a_database_in_a_read_only_directory_is_readable() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = temp();
    let path = dir.path().join("s.db");
    {
        let mut store = Store::open(&path).unwrap();
        store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    }
    assert!(!dir.path().join("s.db-wal").exists(), "closed cleanly: no WAL beside it");
    released_database(&dir.path().join("old.db"), 2);
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    if root {
        // Root writes anywhere: read as an unprivileged user instead.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(dir.path().join("old.db"), std::fs::Permissions::from_mode(0o644)).unwrap();
        let status = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "store::tests::read_only_directory_reader", "--ignored", "--quiet"])
            .env("KSWEEP_READ_ONLY_DB", &path)
            .status()
            .expect("setpriv runs the reader as nobody");
        assert!(status.success(), "the unprivileged reader failed");
    } else {
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
        let read = Store::open_read_only(&path).and_then(|s| s.sweeps());
        let old = Store::open_read_only(&dir.path().join("old.db")).and_then(|s| s.resolve(None));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(read.unwrap().len(), 1);
        assert_eq!(old.unwrap().tasks_done, 2, "an older database is read through an upgraded copy");
    }
}

/// The reader half of the test above, run as another user.
#[test]
#[ignore = "run by a_database_in_a_read_only_directory_is_readable"]
fn read_only_directory_reader() {
    let path = std::env::var_os("KSWEEP_READ_ONLY_DB").expect("set by the parent test");
    let path = std::path::Path::new(&path);
    assert!(std::fs::write(path.with_extension("probe"), b"").is_err(), "the directory must be read-only here");
    let store = Store::open_read_only(path).unwrap();
    assert_eq!(store.sweeps().unwrap().len(), 1);
    // An older database here is read through an upgraded copy in memory.
    let old = path.with_file_name("old.db");
    let store = Store::open_read_only(&old).unwrap();
    assert_eq!(store.resolve(None).unwrap().tasks_done, 2);
    let version: i64 = rusqlite::Connection::open_with_flags(&old, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap()
        .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 2, "the file itself is left as it was");
}

#[test]
fn a_stored_id_answers_only_the_same_spec() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(SPEC).unwrap();
    let (rec, created) = store.insert_sweep(&sweep).unwrap();
    assert!(created);
    assert_eq!(store.insert_sweep(&sweep).unwrap(), (rec.clone(), false), "the same spec finds its sweep");
    // A forged row: another spec under this id (a truncated hash collides).
    store.conn.execute("UPDATE sweeps SET spec = 'name = \"forged\"' WHERE key = ?1", [rec.key.0]).unwrap();
    let e = store.insert_sweep(&sweep).unwrap_err();
    assert!(matches!(e, Error::IdCollision(ref id) if *id == rec.id), "{e}");
}

#[test]
fn a_damaged_database_is_refused_at_start() {
    let dir = temp();
    let path = dir.path().join("d.db");
    {
        let mut store = Store::open(&path).unwrap();
        let (rec, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
        let rows: Vec<ResultRecord> = (0..2000).map(|i| result(rec.key, 0, i, 0, true, 1)).collect();
        store.record(&rows).unwrap();
        store.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    }
    // Scribble over the last pages: results, not the schema's pages.
    let mut bytes = std::fs::read(&path).unwrap();
    let page = 4096;
    assert!(bytes.len() > 8 * page, "{} bytes", bytes.len());
    let end = bytes.len() - page;
    bytes[end - 2 * page..end].fill(0x5a);
    std::fs::write(&path, bytes).unwrap();
    let e = Store::open(&path).map(drop).unwrap_err();
    assert!(matches!(e, Error::Corrupt(_)), "{e}");
    assert!(e.to_string().contains("d.db: ") && e.to_string().contains("it is neither served nor read"), "{e}");
    // Offline queries (`--db`) check as the coordinator does: no counters
    // from a file whose results are damaged.
    let e = Store::open_read_only(&path).map(drop).unwrap_err();
    assert!(matches!(e, Error::Corrupt(_)), "{e}");
}

/// A directory or a device named as the database says what it is; a
/// missing file is "no such database file" for reading only.
#[test]
fn a_path_that_is_no_database_file_says_what_it_is() {
    let dir = temp();
    for open in [Store::open_read_only, Store::open] {
        let e = open(dir.path()).map(drop).unwrap_err().to_string();
        assert!(e.contains("is a directory, not a database file") && e.contains("ksweep.db"), "{e}");
        let e = open(Path::new("/dev/null")).map(drop).unwrap_err().to_string();
        assert_eq!(e, "/dev/null: is a device, not a database file");
    }
    let missing = dir.path().join("missing.db");
    let e = Store::open_read_only(&missing).map(drop).unwrap_err().to_string();
    assert!(e.ends_with("missing.db: no such database file"), "{e}");
    assert!(!missing.exists(), "reading creates nothing");
}

#[cfg(unix)]
#[test]
fn an_unwritable_shared_memory_file_is_refused_at_start() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp();
    let path = dir.path().join("s.db");
    drop(Store::open(&path).unwrap());
    let shm = dir.path().join("s.db-shm");
    std::fs::write(&shm, [0u8; 32768]).unwrap();
    std::fs::set_permissions(&shm, std::fs::Permissions::from_mode(0o444)).unwrap();
    if std::fs::OpenOptions::new().write(true).open(&shm).is_ok() {
        return; // root ignores file modes: nothing to test here
    }
    let e = Store::open(&path).map(drop).unwrap_err();
    assert!(e.to_string().contains("s.db-shm") && e.to_string().contains("not writable"), "{e}");
}

/// Results stored per second into a file database, in batches of 2,000 as a
/// busy coordinator writes them. A figure for notes, not a pass/fail
/// threshold: `cargo test --release -p ksweep-coordinator --lib --
/// --ignored --nocapture record_throughput`.
#[test]
#[ignore = "a measurement; run by hand"]
fn record_throughput() {
    let dir = temp();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let spec = "name = \"t\"\nseed = 1\nstarts = 100000\nmethods = [\"w\", \"aw\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [600]";
    let sweep = Sweep::parse(spec).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let batches = 100u64;
    let started = std::time::Instant::now();
    for b in 0..batches {
        let rows: Vec<ResultRecord> = (0..1000u64)
            .flat_map(|i| {
                let start = b * 1000 + i;
                [0, 1].map(|m| ResultRecord { start_cell: start, ..result(rec.key, 0, start, m, start % 3 == 0, 5) })
            })
            .collect();
        store.record(&rows).unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let n = batches * 2000;
    println!("record_throughput: {n} results in {secs:.2} s = {:.0} results/s", n as f64 / secs);
    assert_eq!(store.record_of(rec.key).unwrap().tasks_done, n);
}

/// Results stored per second as issue 40's load writes them: W give-ups on
/// 100 boards of 1,000,000 cells and more, 100,000 distinct random start
/// cells each, all boards in flight at once (as 1,000 workers hold shards
/// of all of them): each transaction holds 72 shards of 280 starts, each of
/// another board, the file growing to 4,000,000 results. Prints the rate of
/// each million, so a cost that grows with the file shows. `cargo test
/// --release -p ksweep-coordinator --lib -- --ignored --nocapture
/// record_throughput_at_scale`.
#[test]
#[ignore = "a measurement; run by hand"]
fn record_throughput_at_scale() {
    let dir = temp();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let boards = 100u32;
    let spec = format!(
        "name = \"t\"\nseed = 1\nstarts = 100000\nmethods = [\"w\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\n\
         n_range = {{ from = 1000, to = {} }}",
        1000 + boards
    );
    let sweep = Sweep::parse(&spec).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    // Distinct pseudo-random cells of a board: a multiplier prime to 1,000,000.
    let cell = |config: u32, start: u64| (start * 999_983 + u64::from(config) * 7_919) % 1_000_000;
    let (shard, per_round) = (280u64, 72u32);
    let mut next_start = vec![0u64; boards as usize];
    let mut board = 0u32;
    let mut total = 0u64;
    for million in 0..4 {
        let started = std::time::Instant::now();
        let mut stored = 0u64;
        while stored < 1_000_000 {
            let mut rows = Vec::with_capacity((shard * u64::from(per_round)) as usize);
            for _ in 0..per_round {
                let from = next_start[board as usize];
                next_start[board as usize] += shard;
                rows.extend((from..from + shard).map(|start| ResultRecord {
                    start_cell: cell(board, start),
                    ..result(rec.key, board, start, 0, false, 4000)
                }));
                board = (board + 1) % boards;
            }
            stored += rows.len() as u64;
            store.record(&rows).unwrap();
        }
        let secs = started.elapsed().as_secs_f64();
        println!(
            "record_throughput_at_scale: million {} in {secs:.2} s = {:.0} results/s, {:.2} us a result",
            million + 1,
            stored as f64 / secs,
            secs * 1e6 / stored as f64
        );
        total += stored;
    }
    assert_eq!(store.record_of(rec.key).unwrap().tasks_done, total, "every result is new and counted");
}

/// Refutations cost a count of the board's refuted starts per batch:
/// 200,000 `no-tour` results of `solve` on a board no theorem settles,
/// never all of its starts.
#[test]
#[ignore = "a measurement; run by hand"]
fn record_throughput_of_refutations() {
    let dir = temp();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let spec = "name = \"t\"\nseed = 1\nstarts = 200000\nmethods = [\"solve\"]\n[[grid]]\nrule = [3, 2]\ndims = [2]\nn = [600]";
    let sweep = Sweep::parse(spec).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let started = std::time::Instant::now();
    for b in 0..100u64 {
        let rows: Vec<ResultRecord> = (0..2000u64)
            .map(|i| ResultRecord {
                start_cell: b * 2000 + i,
                ..proof(rec.key, b * 2000 + i, 0, tour::Outcome::NoTour)
            })
            .collect();
        store.record(&rows).unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    println!("record_throughput_of_refutations: 200000 results in {secs:.2} s = {:.0} results/s", 200000.0 / secs);
    assert_eq!(store.facts(&board_key(&sweep)).unwrap(), Facts::default());
}

/// `ksweep rm`: a sweep's own results go with it; results another sweep
/// refers to stay (computed, from then on, by a sweep no longer there),
/// and the other sweep's counters and rows are as before.
#[test]
fn removing_a_sweep_keeps_the_results_other_sweeps_share() {
    let mut store = Store::in_memory().unwrap();
    let (a, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    // The same 5x5 (2,1) board and methods under another name: the same task identities.
    let other = SPEC.replacen("name = \"store\"", "name = \"other\"", 1).replacen("n = [5, 6]", "n = [5]", 1);
    let (b, _) = store.insert_sweep(&Sweep::parse(&other).unwrap()).unwrap();
    let plan = ShardPlan { config: 0, start_lo: 0, start_hi: 3 };
    let cursor = Cursor { config: 1, start: 0 };
    store.cut_shards(&[NewShards { sweep: a.key, shards: vec![(ShardId(1), plan)], cursor }]).unwrap();
    // A: 5x5 starts 0..2 by both methods, and one task of 6x6: 5 results.
    let mut of_a: Vec<_> =
        (0..2).flat_map(|s| [result(a.key, 0, s, 0, true, 1), result(a.key, 0, s, 1, false, 1)]).collect();
    of_a.push(result(a.key, 1, 0, 0, true, 1));
    assert_eq!(store.record(&of_a).unwrap(), 5);
    // B: two of A's tasks (stored once, computed by A) and one of its own.
    let of_b = [result(b.key, 0, 0, 0, true, 1), result(b.key, 0, 1, 0, true, 1), result(b.key, 0, 2, 0, false, 1)];
    assert_eq!(store.record(&of_b).unwrap(), 3);
    let count = |store: &Store, sql: &str| -> i64 { store.conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count(&store, "SELECT COUNT(*) FROM tasks"), 6);
    let b_before = store.record_of(b.key).unwrap();
    let b_rows = store.results_page(b.key, None, 10).unwrap();

    let removal = store.remove_sweep(a.key).unwrap();
    assert_eq!((removal.sweep_id.as_str(), removal.name.as_str()), (a.id.as_str(), "store"));
    assert_eq!((removal.tasks_deleted, removal.tasks_kept), (3, 2));
    assert_eq!(count(&store, "SELECT COUNT(*) FROM tasks"), 3, "B's 3 tasks: 2 shared, 1 its own");
    assert!(matches!(store.resolve(Some(&a.id)), Err(Error::SweepNotFound(_))));
    for table in ["shards", "sweep_configs", "sweep_methods", "sweep_tasks", "conflicts"] {
        let sql = format!("SELECT COUNT(*) FROM {table} WHERE sweep = {}", a.key.0);
        assert_eq!(count(&store, &sql), 0, "{table} keeps nothing of the removed sweep");
    }
    assert_eq!(count(&store, &format!("SELECT COUNT(*) FROM tasks WHERE sweep = {}", a.key.0)), 0);
    assert_eq!(store.record_of(b.key).unwrap(), b_before, "B's counters are untouched");
    let after = store.results_page(b.key, None, 10).unwrap();
    let flags = |rows: &[ResultRecord]| rows.iter().map(|r| (r.start_index, r.success)).collect::<Vec<_>>();
    assert_eq!(flags(&after), flags(&b_rows), "B reads the same results");
    let computed: Vec<i64> = after.iter().map(|r| r.computed_by.0).collect();
    assert_eq!(computed, [0, 0, b.key.0], "the shared ones are computed by a sweep no longer here");

    // The last sweep leaves no task behind.
    assert_eq!(store.remove_sweep(b.key).unwrap().tasks_deleted, 3);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM tasks") + count(&store, "SELECT COUNT(*) FROM sweeps"), 0);
}

/// `ksweep rename`: the name changes, checked as a spec's; the id stays,
/// and the same spec submitted again is still the sweep.
#[test]
fn a_renamed_sweep_keeps_its_id_and_its_spec() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(SPEC).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let renamed = store.rename_sweep(rec.key, "wide grid").unwrap();
    assert_eq!((renamed.id.as_str(), renamed.name.as_str()), (rec.id.as_str(), "wide grid"));
    assert_eq!(store.resolve(Some("wide grid")).unwrap().key, rec.key);
    let (again, created) = store.insert_sweep(&sweep).unwrap();
    assert!(!created && again.key == rec.key && again.name == "wide grid", "resubmitted: {again:?}");
    // Another sweep's full id, or any name shaped like an id, would let
    // this sweep pass for another in listings.
    let (other, _) = store.insert_sweep(&Sweep::parse(&SPEC.replace("seed = ", "seed = 1")).unwrap()).unwrap();
    for bad in ["", "  ", "a\nb", &"x".repeat(201), &other.id, "0123456789ABCDEF"] {
        let e = store.rename_sweep(rec.key, bad).unwrap_err();
        assert!(matches!(e, Error::Spec(_)) && e.to_string().starts_with("name: "), "{bad:?}: {e}");
    }
    assert_eq!(store.record_of(rec.key).unwrap().name, "wide grid");
    assert_eq!(store.resolve(Some(&other.id)).unwrap().key, other.key);
}

/// (3,2) on 10x10: no theorem or move-graph proof settles it either way.
const FACTS_SPEC: &str = r#"
    name = "facts"
    seed = 5
    starts = 100
    methods = ["w", "solve"]
    [[grid]]
    rule = [3, 2]
    dims = [2]
    n = [10]
"#;

fn proof(sweep: SweepKey, start: u64, method: u32, outcome: tour::Outcome) -> ResultRecord {
    ResultRecord { outcome, success: outcome == tour::Outcome::Tour, ..result(sweep, 0, start, method, false, 10) }
}

fn board_key(sweep: &Sweep) -> String {
    let c = sweep.configurations()[0].configuration();
    sweep::board_moves(c.board().sides(), c.moves())
}

#[test]
fn a_tour_found_is_a_stored_fact_with_its_evidence() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(FACTS_SPEC).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    store.record(&[proof(rec.key, 11, 0, tour::Outcome::GaveUp)]).unwrap();
    assert_eq!(store.facts(&board_key(&sweep)).unwrap(), Facts::default(), "a heuristic's failure proves nothing");
    store.record(&[proof(rec.key, 12, 0, tour::Outcome::Tour), proof(rec.key, 13, 0, tour::Outcome::Tour)]).unwrap();
    let facts = store.facts(&board_key(&sweep)).unwrap();
    let want = format!("a tour from (1,2) found by `w v1` in sweep {}", sweep.id());
    assert_eq!(facts.open, Some(Fact::Exists(want)), "the first tour of the batch");
    assert_eq!(facts.closed, None, "an open-tour method's tour says nothing of closed ones");
    let rows = store.aggregates(&rec, &sweep).unwrap();
    assert!(rows.iter().all(|r| r.open_tour == "exists" && r.closed_tour == "unknown"), "{rows:?}");
}

#[test]
fn every_start_refuted_makes_a_board_impossible_and_survives_reopening() {
    let dir = temp();
    let path = dir.path().join("s.db");
    let sweep = Sweep::parse(FACTS_SPEC).unwrap();
    let key = board_key(&sweep);
    {
        let mut store = Store::open(&path).unwrap();
        store.keep();
        let (rec, _) = store.insert_sweep(&sweep).unwrap();
        let refuted: Vec<ResultRecord> = (0..99).map(|s| proof(rec.key, s, 1, tour::Outcome::NoTour)).collect();
        store.record(&refuted).unwrap();
        assert_eq!(store.facts(&key).unwrap(), Facts::default(), "99 of 100 starts prove nothing");
        assert_eq!(store.impossible_by_facts(rec.key.0, &sweep).unwrap(), 0);
        store.record(&[proof(rec.key, 99, 1, tour::Outcome::NoTour)]).unwrap();
    }
    let store = Store::open_read_only(&path).unwrap();
    let facts = store.facts(&key).unwrap();
    let want =
        format!("no open tour from all 100 starts, proven by `solve v1 budget 100000000 open` in sweep {}", sweep.id());
    assert_eq!(facts.open, Some(Fact::Impossible(want)));
    assert!(matches!(facts.closed, Some(Fact::Impossible(_))), "{facts:?}");
    let rec = store.resolve(None).unwrap();
    let rows = store.aggregates(&rec, &sweep).unwrap();
    assert!(rows.iter().all(|r| r.no_open_tour() && r.closed_tour == "impossible"), "{rows:?}");
    assert_eq!(store.impossible_by_facts(rec.key.0, &sweep).unwrap(), 1);
    // Another order of the same moves is the same board and move set.
    let c = sweep.configurations()[0].configuration();
    let mut list: Vec<Vec<i64>> = c.moves().iter().map(|m| m.iter().map(|&x| i64::from(x)).collect()).collect();
    list.reverse();
    let reordered = sweep::board_moves(&[10, 10], &tour::Moves::explicit(&list, 2).unwrap());
    assert_eq!(store.facts(&reordered).unwrap(), facts);
}

#[test]
fn a_closed_tour_refuted_from_one_start_is_no_closed_tour() {
    let mut store = Store::in_memory().unwrap();
    let spec = FACTS_SPEC.replace("methods = [\"w\", \"solve\"]", "methods = [\"solve\"]\n    closed = true");
    let sweep = Sweep::parse(&spec).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    store.record(&[proof(rec.key, 4, 0, tour::Outcome::NoTour)]).unwrap();
    let facts = store.facts(&board_key(&sweep)).unwrap();
    assert_eq!(facts.open, None, "no closed tour through a cell says nothing of open ones");
    match facts.closed {
        Some(Fact::Impossible(why)) => assert!(why.contains("no closed tour passes through (0,4)"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_upgrade_to_version_5_derives_facts_from_stored_results() {
    let dir = temp();
    let path = dir.path().join("s.db");
    let sweep = released_database(&path, 4);
    let store = Store::open(&path).unwrap();
    let c = sweep.configurations()[0].configuration();
    let facts = store.facts(&sweep::board_moves(c.board().sides(), c.moves())).unwrap();
    let want = format!("a tour from (0,0) found by `w v1` in sweep {}", sweep.id());
    assert_eq!(facts.open, Some(Fact::Exists(want)));
    let keyed: i64 =
        store.conn.query_row("SELECT COUNT(*) FROM configs WHERE board_moves <> ''", [], |r| r.get(0)).unwrap();
    assert_eq!(keyed, 3, "every configuration keyed");
}

/// The SQLite this workspace builds is the one `.cargo/config.toml` asks
/// for: no process-wide page cache behind one mutex, no allocation
/// statistics (docs/performance/coordinator.md, "The writer's SQLite build"). A build
/// that lost the setting still works, only slower, so nothing else would
/// notice.
#[test]
fn sqlite_is_built_without_the_shared_page_cache_and_memory_statistics() {
    let store = Store::in_memory().unwrap();
    let options: Vec<String> = store
        .conn
        .prepare("PRAGMA compile_options")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(
        !options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"),
        "SQLite built with ENABLE_MEMORY_MANAGEMENT (was LIBSQLITE3_FLAGS set otherwise?): {options:?}"
    );
    assert!(
        options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
        "SQLite built with memory statistics on (was LIBSQLITE3_FLAGS set otherwise?): {options:?}"
    );
}
