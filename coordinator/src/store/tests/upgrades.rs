//! Upgrades: newer files refused, older ones upgraded after a backup,
//! each step all or nothing, and the tables they end with.

use super::*;

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

/// Version 6 sums a sweep's runs: an ended sweep of version 5 keeps its
/// span from first result to finish as its one run, a running one has a
/// run going on from its first result.
#[test]
fn version_6_gives_older_sweeps_their_span_as_one_run() {
    let dir = temp();
    let path = dir.path().join("s.db");
    let sweep = Sweep::parse(SPEC).unwrap();
    {
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        schema::create_as_released(&mut conn, 5);
        for (id, state, first, finished) in [("ended", 2, 1_000, Some(61_000)), ("going", 1, 5_000, None)] {
            conn.execute(
                "INSERT INTO sweeps (id, name, spec, state, tasks_total, configurations, impossible, created_ms,
                 first_result_ms, finished_ms) VALUES (?1, 'store', ?2, ?3, ?4, 3, 1, 500, ?5, ?6)",
                rusqlite::params![id, sweep.canonical_toml(), state, sweep.total_tasks() as i64, first, finished],
            )
            .unwrap();
        }
    }
    let store = Store::open(&path).unwrap();
    let ended = store.sweep_by_id("ended").unwrap().unwrap();
    assert_eq!((ended.ran_ms, ended.run_from_ms), (60_000, None));
    let going = store.sweep_by_id("going").unwrap().unwrap();
    assert_eq!((going.ran_ms, going.run_from_ms), (0, Some(5_000)));
}

/// A cancelled sweep resumed counts its runs, not the time between; a run
/// its process left open ends at its last result when a coordinator takes
/// the sweep in.
#[test]
fn a_sweeps_wall_time_is_its_runs() {
    let dir = temp();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let (record, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    let key = record.key;
    let set = |store: &Store, sql: &str| store.conn.execute(sql, [key.0]).unwrap();
    // A run from 1,000 to 61,000 ms ended by a cancel.
    set(&store, "UPDATE sweeps SET run_from_ms = 1000 WHERE key = ?1");
    store.set_state(key, crate::codes::SweepState::Cancelled, None).unwrap();
    let cancelled = store.record_of(key).unwrap();
    assert!(cancelled.ran_ms > 60_000 && cancelled.run_from_ms.is_none(), "{cancelled:?}");
    // Resumed: its finish is cleared, its ended runs kept.
    store.set_state(key, crate::codes::SweepState::Running, None).unwrap();
    set(&store, "UPDATE sweeps SET ran_ms = 60000, run_from_ms = 100000, last_result_ms = 130000 WHERE key = ?1");
    // Its process stopped; the next coordinator closes the run at its last result.
    store.close_stopped_run(key).unwrap();
    let closed = store.record_of(key).unwrap();
    assert_eq!((closed.ran_ms, closed.run_from_ms, closed.finished_ms), (90_000, None, None));
    store.close_stopped_run(key).unwrap();
    assert_eq!(store.record_of(key).unwrap().ran_ms, 90_000, "closed once");
}
