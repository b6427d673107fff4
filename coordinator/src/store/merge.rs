//! Joining databases computed apart (`ksweep merge`): a laptop's run and a
//! cluster's, or two halves of one sweep. Identities are matched by their
//! text (docs/identity.md), never by key; a task both hold is checked to
//! agree, and where it does not, the result already here stays and the
//! disagreement is listed in `conflicts`: nothing is overwritten.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::{params, OptionalExtension};

use super::{now_ms, Store};
use crate::codes::SweepState;
use crate::error::Result;

/// Conflicts described in an [`Imported`], at most.
const SAMPLES: usize = 5;

/// What importing one database did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    /// Sweeps this database did not have.
    pub sweeps_new: u64,
    /// Sweeps it had (the same spec): their task lists were joined.
    pub sweeps_joined: u64,
    /// Results of identities it lacked.
    pub tasks_new: u64,
    /// Results it held already, with the same flags.
    pub tasks_agreeing: u64,
    /// Results it held with other flags: its own stayed.
    pub tasks_conflicting: u64,
    /// The first few conflicts, for people.
    pub conflicts: Vec<String>,
    /// Workers added (every registration is kept, with a new id).
    pub workers: u64,
}

/// A consistent copy of a database, taken with `VACUUM INTO` (so a
/// coordinator may go on writing the original), removed when dropped.
struct Snapshot(PathBuf);

impl Drop for Snapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn snapshot(from: &Path) -> Result<Snapshot> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "ksweep-merge-{}-{}.db",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_file(&path);
    let snap = Snapshot(path);
    // An older file is brought up to date as every read does.
    let source = Store::open_read_only(from)?;
    source.conn.execute("VACUUM INTO ?1", [snap.0.to_string_lossy()])?;
    Ok(snap)
}

impl Store {
    /// Imports every worker, sweep and result of the database `from`, in
    /// one transaction: all of it or nothing.
    pub fn import(&mut self, from: &Path) -> Result<Imported> {
        let snap = snapshot(from)?;
        self.conn.execute("ATTACH DATABASE ?1 AS src", [snap.0.to_string_lossy()])?;
        let imported = self.import_attached();
        let detached = self.conn.execute("DETACH DATABASE src", []);
        let imported = imported?;
        detached?;
        Ok(imported)
    }

    fn import_attached(&mut self) -> Result<Imported> {
        let mut out = Imported::default();
        let tx = self.conn.transaction()?;
        let max = |sql: &str| -> rusqlite::Result<i64> { tx.query_row(sql, [], |r| r.get(0)) };
        let worker_offset = max("SELECT COALESCE(MAX(id), 0) FROM main.workers")?;
        let shard_offset = max("SELECT COALESCE(MAX(id), 0) FROM main.shards")?;
        out.workers = tx.execute(
            "INSERT INTO main.workers (id, name, threads, registered_ms, version, build, host, cpu, features)
             SELECT id + ?1, name, threads, registered_ms, version, build, host, cpu, features FROM src.workers",
            [worker_offset],
        )? as u64;
        tx.execute_batch(
            "INSERT OR IGNORE INTO main.configs (identity, cells, moves) SELECT identity, cells, moves FROM src.configs;
             INSERT OR IGNORE INTO main.methods (identity, name) SELECT identity, name FROM src.methods;
             CREATE TEMP TABLE config_map AS
                 SELECT s.key AS old, m.key AS new FROM src.configs s JOIN main.configs m ON m.identity = s.identity;
             CREATE TEMP TABLE method_map AS
                 SELECT s.key AS old, m.key AS new FROM src.methods s JOIN main.methods m ON m.identity = s.identity;
             CREATE TEMP TABLE sweep_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL, joined INTEGER NOT NULL);",
        )?;

        // Sweeps: the same id is the same spec, joined; others are added
        // with their identities and shards (so an unfinished one resumes).
        let sweeps: Vec<(i64, String)> = tx
            .prepare("SELECT key, id FROM src.sweeps ORDER BY key")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        const COLUMNS: &str = "id, name, spec, state, tasks_total, tasks_done, successes, configurations, impossible, \
            cursor_config, cursor_start, shards_failed, error, created_ms, first_result_ms, finished_ms, reuse, tasks_reused";
        for (old, id) in sweeps {
            let here: Option<i64> =
                tx.query_row("SELECT key FROM main.sweeps WHERE id = ?1", [&id], |r| r.get(0)).optional()?;
            let (new, joined) = match here {
                Some(key) => {
                    out.sweeps_joined += 1;
                    (key, true)
                }
                None => {
                    tx.execute(
                        &format!("INSERT INTO main.sweeps ({COLUMNS}) SELECT {COLUMNS} FROM src.sweeps WHERE key = ?1"),
                        [old],
                    )?;
                    let new = tx.last_insert_rowid();
                    tx.execute(
                        "INSERT INTO main.sweep_configs (sweep, config, config_key, taken)
                         SELECT ?2, c.config, m.new, c.taken FROM src.sweep_configs c
                         JOIN temp.config_map m ON m.old = c.config_key WHERE c.sweep = ?1",
                        [old, new],
                    )?;
                    tx.execute(
                        "INSERT INTO main.sweep_methods (sweep, method, method_key)
                         SELECT ?2, s.method, m.new FROM src.sweep_methods s
                         JOIN temp.method_map m ON m.old = s.method_key WHERE s.sweep = ?1",
                        [old, new],
                    )?;
                    tx.execute(
                        "INSERT INTO main.shards (id, sweep, config, start_lo, start_hi, state, failures, error)
                         SELECT id + ?3, ?2, config, start_lo, start_hi, state, failures, error
                         FROM src.shards WHERE sweep = ?1",
                        [old, new, shard_offset],
                    )?;
                    out.sweeps_new += 1;
                    (new, false)
                }
            };
            tx.execute("INSERT INTO temp.sweep_map (old, new, joined) VALUES (?1, ?2, ?3)", params![old, new, joined])?;
        }

        // Tasks whose identity is here already: agreeing, or a conflict.
        let mut conflicts = tx.prepare(
            "SELECT t.id, m.id, t.start_cell, t.success, t.attempts, t.visited, t.outcome, m.success, m.attempts,
                    m.visited, m.outcome, c.identity, me.identity, t.worker
             FROM src.tasks t
             JOIN temp.config_map cm ON cm.old = t.config_key
             JOIN temp.method_map mm ON mm.old = t.method_key
             JOIN main.tasks m ON m.config_key = cm.new AND m.method_key = mm.new AND m.start_cell = t.start_cell
             JOIN main.configs c ON c.key = cm.new JOIN main.methods me ON me.key = mm.new",
        )?;
        let mut rows = conflicts.query([])?;
        let mut record = tx.prepare(
            "INSERT INTO main.conflicts
                 (sweep, config, start_index, method, task, success, attempts, visited, outcome, worker, at_ms)
             SELECT sm.new, st.config, st.start_index, st.method, ?2, ?3, ?4, ?5, ?6, ?7, ?8
             FROM src.sweep_tasks st JOIN temp.sweep_map sm ON sm.old = st.sweep WHERE st.task = ?1 LIMIT 1",
        )?;
        while let Some(r) = rows.next()? {
            let theirs: (bool, i64, i64, i64) = (r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?);
            let ours: (bool, i64, i64, i64) = (r.get(7)?, r.get(8)?, r.get(9)?, r.get(10)?);
            if theirs == ours {
                out.tasks_agreeing += 1;
                continue;
            }
            out.tasks_conflicting += 1;
            let (old, here, cell): (i64, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
            if out.conflicts.len() < SAMPLES {
                let (config, method): (String, String) = (r.get(11)?, r.get(12)?);
                let flags = |(s, a, v, _): (bool, i64, i64, i64)| format!("success {s}, attempts {a}, visited {v}");
                out.conflicts.push(format!(
                    "{method} on {config} from cell {cell}: kept {}, theirs {}",
                    flags(ours),
                    flags(theirs)
                ));
            }
            let worker: i64 = r.get(13)?;
            record.execute(params![
                old,
                here,
                theirs.0,
                theirs.1,
                theirs.2,
                theirs.3,
                worker + worker_offset,
                now_ms() as i64
            ])?;
        }
        drop(rows);
        drop(conflicts);
        drop(record);

        // New identities; then every reference, to the row now here.
        out.tasks_new = tx.execute(
            "INSERT INTO main.tasks
                 (config_key, method_key, start_cell, success, attempts, visited, micros, worker, outcome, sweep)
             SELECT cm.new, mm.new, t.start_cell, t.success, t.attempts, t.visited, t.micros, t.worker + ?1,
                    t.outcome, COALESCE(sm.new, 0)
             FROM src.tasks t
             JOIN temp.config_map cm ON cm.old = t.config_key
             JOIN temp.method_map mm ON mm.old = t.method_key
             LEFT JOIN temp.sweep_map sm ON sm.old = t.sweep
             WHERE true
             ON CONFLICT (config_key, method_key, start_cell) DO NOTHING",
            [worker_offset],
        )? as u64;
        tx.execute_batch(
            "CREATE TEMP TABLE task_map AS
                 SELECT t.id AS old, m.id AS new FROM src.tasks t
                 JOIN temp.config_map cm ON cm.old = t.config_key
                 JOIN temp.method_map mm ON mm.old = t.method_key
                 JOIN main.tasks m ON m.config_key = cm.new AND m.method_key = mm.new AND m.start_cell = t.start_cell;
             CREATE UNIQUE INDEX temp.task_map_old ON task_map (old);
             INSERT OR IGNORE INTO main.sweep_tasks (sweep, config, start_index, method, task)
                 SELECT sm.new, st.config, st.start_index, st.method, tm.new FROM src.sweep_tasks st
                 JOIN temp.sweep_map sm ON sm.old = st.sweep JOIN temp.task_map tm ON tm.old = st.task;",
        )?;
        tx.execute(
            "INSERT INTO main.conflicts
                 (sweep, config, start_index, method, task, success, attempts, visited, outcome, worker, at_ms)
             SELECT sm.new, c.config, c.start_index, c.method, tm.new, c.success, c.attempts, c.visited, c.outcome,
                    c.worker + ?1, c.at_ms
             FROM src.conflicts c JOIN temp.sweep_map sm ON sm.old = c.sweep JOIN temp.task_map tm ON tm.old = c.task",
            [worker_offset],
        )?;

        // Counters as the task lists now count them; a joined sweep whose
        // halves complete it is done, its times the widest of the two.
        tx.execute_batch(
            "UPDATE main.sweeps SET
                 tasks_done = (SELECT COUNT(*) FROM main.sweep_tasks st WHERE st.sweep = sweeps.key),
                 successes = (SELECT COALESCE(SUM(t.success), 0) FROM main.sweep_tasks st
                              JOIN main.tasks t ON t.id = st.task WHERE st.sweep = sweeps.key)
             WHERE key IN (SELECT new FROM temp.sweep_map);
             UPDATE main.sweeps SET
                 first_result_ms = (SELECT MIN(COALESCE(sweeps.first_result_ms, s.first_result_ms),
                                               COALESCE(s.first_result_ms, sweeps.first_result_ms))
                                    FROM temp.sweep_map sm JOIN src.sweeps s ON s.key = sm.old
                                    WHERE sm.new = sweeps.key),
                 finished_ms = (SELECT MAX(COALESCE(sweeps.finished_ms, 0), COALESCE(s.finished_ms, 0))
                                FROM temp.sweep_map sm JOIN src.sweeps s ON s.key = sm.old WHERE sm.new = sweeps.key)
             WHERE key IN (SELECT new FROM temp.sweep_map WHERE joined);
             UPDATE main.sweeps SET finished_ms = NULL WHERE finished_ms = 0;",
        )?;
        tx.execute(
            "UPDATE main.sweeps SET state = ?1, error = NULL, finished_ms = COALESCE(finished_ms, ?2)
             WHERE key IN (SELECT new FROM temp.sweep_map WHERE joined) AND tasks_done >= tasks_total AND state != ?1",
            params![SweepState::Done, now_ms() as i64],
        )?;
        tx.execute_batch(
            "DROP TABLE temp.config_map; DROP TABLE temp.method_map; DROP TABLE temp.sweep_map;
             DROP TABLE temp.task_map;",
        )?;
        tx.commit()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use sweep::{Planner, Sweep};

    use super::*;
    use crate::ids::{SweepKey, WorkerId};
    use crate::model::ResultRecord;

    const SPEC: &str = "name = \"m\"\nseed = 5\nstarts = 4\nmethods = [\"w\", \"aw\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [5, 6]";

    /// Results for configuration `config` of `sweep` (every start, both
    /// methods), with flags from `flag`.
    fn results(store: &mut Store, key: SweepKey, sweep: &Sweep, config: u32, flag: impl Fn(u64) -> bool) {
        let worker = store.register_worker("w", 1, &Default::default()).unwrap();
        let cells = sweep.configurations()[config as usize].cells();
        let rows: Vec<ResultRecord> = Planner::new(sweep)
            .starts(config)
            .iter()
            .enumerate()
            .flat_map(|(i, &cell)| {
                let ok = flag(cell);
                (0..2u32).map(move |method| ResultRecord {
                    sweep: key,
                    config,
                    start_index: i as u64,
                    method,
                    start_cell: cell,
                    success: ok,
                    attempts: 1,
                    visited: if ok { cells } else { 2 },
                    micros: 9,
                    worker: WorkerId(worker.0),
                    outcome: if ok { tour::Outcome::Tour } else { tour::Outcome::GaveUp },
                    computed_by: key,
                })
            })
            .collect();
        store.record(&rows).unwrap();
    }

    fn file_with(dir: &Path, name: &str, configs: &[u32], flag: impl Fn(u64) -> bool + Copy) -> PathBuf {
        let path = dir.join(name);
        let mut store = Store::open(&path).unwrap();
        let sweep = Sweep::parse(SPEC).unwrap();
        let (record, _) = store.insert_sweep(&sweep).unwrap();
        for &c in configs {
            results(&mut store, record.key, &sweep, c, flag);
        }
        store.keep();
        path
    }

    #[test]
    fn two_halves_of_a_sweep_join_into_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let laptop = file_with(dir.path(), "laptop.db", &[0], |c| c % 2 == 0);
        let cluster = file_with(dir.path(), "cluster.db", &[1], |c| c % 2 == 0);
        let whole = file_with(dir.path(), "whole.db", &[0, 1], |c| c % 2 == 0);
        let mut merged = Store::open(&dir.path().join("merged.db")).unwrap();
        let a = merged.import(&laptop).unwrap();
        assert_eq!((a.sweeps_new, a.tasks_new, a.workers), (1, 8, 1));
        let b = merged.import(&cluster).unwrap();
        assert_eq!((b.sweeps_new, b.sweeps_joined, b.tasks_new, b.tasks_conflicting), (0, 1, 8, 0));
        let again = merged.import(&cluster).unwrap();
        assert_eq!((again.tasks_new, again.tasks_agreeing), (0, 8), "importing twice adds nothing");
        let record = merged.resolve(None).unwrap();
        assert_eq!((record.tasks_done, record.tasks_total, record.state), (16, 16, SweepState::Done));
        let reference = Store::open_read_only(&whole).unwrap();
        let sweep = Sweep::parse(SPEC).unwrap();
        let rows = |s: &Store| s.aggregates(&s.resolve(None).unwrap(), &sweep).unwrap();
        assert_eq!(rows(&merged), rows(&reference), "the same tables as one run of it all");
        let tasks: i64 = merged.conn.query_row("SELECT COUNT(*) FROM tasks", [], |r| r.get(0)).unwrap();
        assert_eq!(tasks, 16, "each task stored once");
    }

    #[test]
    fn a_disagreement_is_kept_out_and_listed() {
        let dir = tempfile::tempdir().unwrap();
        let mine = file_with(dir.path(), "mine.db", &[0], |_| true);
        let theirs = file_with(dir.path(), "theirs.db", &[0], |c| c != 0 && c % 3 != 0);
        let mut merged = Store::open(&dir.path().join("merged.db")).unwrap();
        merged.import(&mine).unwrap();
        let b = merged.import(&theirs).unwrap();
        assert!(b.tasks_conflicting > 0, "{b:?}");
        assert_eq!(b.tasks_conflicting + b.tasks_agreeing, 8);
        assert!(b.conflicts[0].contains("kept success true"), "{:?}", b.conflicts);
        let listed: i64 = merged.conn.query_row("SELECT COUNT(*) FROM conflicts", [], |r| r.get(0)).unwrap();
        assert_eq!(listed as u64, b.tasks_conflicting);
        let record = merged.resolve(None).unwrap();
        assert_eq!(record.successes, 8, "the first database's results stay");
    }
}
