//! Joining databases computed apart (`ksweep merge`): a laptop's run and a
//! cluster's, or two halves of one sweep. Every result of a database is
//! checked before any of it is imported, as a worker's are ([`check`]).
//! Identities are matched by their text (docs/identity.md), never by key;
//! a task both hold is checked to agree, and where it does not, the result
//! already here stays and the disagreement is listed in `conflicts`:
//! nothing is overwritten.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::{params, OptionalExtension};

use super::{now_ms, Store};
use crate::codes::{StoredOutcome, StoredShardState, SweepState};
use crate::error::{Error, Result};

mod check;

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

impl Imported {
    /// Sweeps the imported database held.
    pub fn sweeps(&self) -> u64 {
        self.sweeps_new + self.sweeps_joined
    }

    /// Results the imported database held (each identity once).
    pub fn tasks(&self) -> u64 {
        self.tasks_new + self.tasks_agreeing + self.tasks_conflicting
    }

    /// Adds another import's counts and samples (up to the limit): the
    /// total of several inputs.
    pub fn add(&mut self, other: &Imported) {
        self.sweeps_new += other.sweeps_new;
        self.sweeps_joined += other.sweeps_joined;
        self.tasks_new += other.tasks_new;
        self.tasks_agreeing += other.tasks_agreeing;
        self.tasks_conflicting += other.tasks_conflicting;
        self.workers += other.workers;
        let room = SAMPLES.saturating_sub(self.conflicts.len());
        self.conflicts.extend(other.conflicts.iter().take(room).cloned());
    }
}

/// A consistent copy of a database, taken with `VACUUM INTO` (so a
/// coordinator may go on writing the original), removed when dropped.
struct Snapshot(PathBuf);

impl Drop for Snapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Copies `from` (brought up to date as every read does, in place or in
/// memory) to a new file in the temporary directory.
fn snapshot(from: &Path) -> Result<Snapshot> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "ksweep-merge-{}-{}.db",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    // A leftover of a killed merge whose pid this process now has.
    let _ = std::fs::remove_file(&path);
    let snap = Snapshot(path);
    let source = Store::open_read_only(from)?;
    source.conn.execute("VACUUM INTO ?1", [snap.0.to_string_lossy()])?;
    Ok(snap)
}

/// A stored result's flags: what two results of one identity must share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Flags {
    success: bool,
    attempts: i64,
    visited: i64,
    outcome: StoredOutcome,
}

impl Flags {
    fn at(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Flags> {
        Ok(Flags {
            success: r.get(first)?,
            attempts: r.get(first + 1)?,
            visited: r.get(first + 2)?,
            outcome: r.get(first + 3)?,
        })
    }

    fn describe(self) -> String {
        format!("{}, attempts {}, visited {}", self.outcome.0.name(), self.attempts, self.visited)
    }
}

/// `identity`'s board and moves as given (`6x6 rule 2,1`), without the
/// move list that follows.
fn board_of(identity: &str) -> &str {
    identity.split_once(':').map_or(identity, |(board, _)| board)
}

impl Store {
    /// Imports every worker, sweep and result of the database `from`, in
    /// one transaction: all of it or nothing. A result a worker could not
    /// have reported for its sweep's task, or one no sweep refers to,
    /// refuses the whole file ([`Error::Refused`], naming the row). `from`
    /// is read from a copy (`snapshot`) and never changed, unless it is
    /// older and this read upgrades it as every read does.
    pub fn import(&mut self, from: &Path) -> Result<Imported> {
        let snap = snapshot(from)?;
        self.conn.execute("ATTACH DATABASE ?1 AS src", [snap.0.to_string_lossy()])?;
        let imported = self.import_attached();
        // Results merged in are not in the bounds of refuted starts.
        self.refutations = Default::default();
        let detached = self.conn.execute("DETACH DATABASE src", []);
        let imported = imported?;
        detached?;
        Ok(imported)
    }

    fn import_attached(&mut self) -> Result<Imported> {
        let mut out = Imported::default();
        let tx = self.conn.transaction()?;
        check::check_source(&tx)?;
        let max = |sql: &str| -> rusqlite::Result<i64> { tx.query_row(sql, [], |r| r.get(0)) };
        // New ids above every id here, so none is ever reused.
        let worker_offset = max("SELECT COALESCE(MAX(id), 0) FROM main.workers")?;
        let shard_offset = max("SELECT COALESCE(MAX(id), 0) FROM main.shards")?;
        out.workers = tx.execute(
            "INSERT INTO main.workers (id, name, threads, registered_ms, version, build, host, cpu, features)
             SELECT id + ?1, name, threads, registered_ms, version, build, host, cpu, features FROM src.workers",
            [worker_offset],
        )? as u64;
        // The maps are keyed: unkeyed, SQLite looked `main.tasks` up by
        // configuration alone and scanned its tasks once per task.
        tx.execute_batch(
            "INSERT OR IGNORE INTO main.configs (identity, cells, moves) SELECT identity, cells, moves FROM src.configs
                 WHERE key IN (SELECT config_key FROM src.sweep_configs WHERE sweep IN (SELECT key FROM src.sweeps));
             INSERT OR IGNORE INTO main.methods (identity, name) SELECT identity, name FROM src.methods
                 WHERE key IN (SELECT method_key FROM src.sweep_methods WHERE sweep IN (SELECT key FROM src.sweeps));
             CREATE TEMP TABLE config_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
             INSERT INTO temp.config_map (old, new)
                 SELECT s.key, m.key FROM src.configs s JOIN main.configs m ON m.identity = s.identity;
             CREATE TEMP TABLE method_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
             INSERT INTO temp.method_map (old, new)
                 SELECT s.key, m.key FROM src.methods s JOIN main.methods m ON m.identity = s.identity;
             CREATE TEMP TABLE sweep_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL, joined INTEGER NOT NULL);",
        )?;

        // Sweeps: the same id is the same spec, joined; others are added
        // with their identities and shards (so an unfinished one resumes).
        let sweeps: Vec<(i64, String, String)> = tx
            .prepare("SELECT key, id, spec FROM src.sweeps ORDER BY key")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        const COLUMNS: &str = "id, name, spec, state, tasks_total, tasks_done, successes, configurations, impossible, \
            cursor_config, cursor_start, shards_failed, error, created_ms, first_result_ms, finished_ms, reuse, tasks_reused";
        for (old, id, spec) in sweeps {
            let here: Option<(i64, String)> = tx
                .query_row("SELECT key, spec FROM main.sweeps WHERE id = ?1", [&id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            let (new, joined) = match here {
                // Ids are truncated hashes: joined only if the specs agree too.
                Some((_, here)) if here != spec => return Err(Error::IdCollision(id)),
                Some((key, _)) => {
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

        // Tasks whose identity is here already: agreeing, or a conflict,
        // recorded against the place the computing sweep has it.
        let mut stored = tx.prepare(
            "SELECT t.id, m.id, t.start_cell, t.worker, t.sweep, me.identity, c.identity,
                    t.success, t.attempts, t.visited, t.outcome, m.success, m.attempts, m.visited, m.outcome
             FROM src.tasks t
             JOIN temp.config_map cm ON cm.old = t.config_key
             JOIN temp.method_map mm ON mm.old = t.method_key
             JOIN main.tasks m ON m.config_key = cm.new AND m.method_key = mm.new AND m.start_cell = t.start_cell
             JOIN main.configs c ON c.key = cm.new JOIN main.methods me ON me.key = mm.new",
        )?;
        let mut record = tx.prepare(
            "INSERT INTO main.conflicts
                 (sweep, config, start_index, method, task, success, attempts, visited, outcome, worker, at_ms)
             SELECT sm.new, st.config, st.start_index, st.method, ?2, ?3, ?4, ?5, ?6, ?7, ?8
             FROM src.sweep_tasks st JOIN temp.sweep_map sm ON sm.old = st.sweep WHERE st.task = ?1
             ORDER BY st.sweep = ?9 DESC LIMIT 1",
        )?;
        let now = now_ms() as i64;
        let mut rows = stored.query([])?;
        while let Some(r) = rows.next()? {
            let (theirs, ours) = (Flags::at(r, 7)?, Flags::at(r, 11)?);
            if theirs == ours {
                out.tasks_agreeing += 1;
                continue;
            }
            out.tasks_conflicting += 1;
            let (old, here, cell, worker, computed_by): (i64, i64, i64, i64, i64) =
                (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
            if out.conflicts.len() < SAMPLES {
                let (method, config): (String, String) = (r.get(5)?, r.get(6)?);
                out.conflicts.push(format!(
                    "{method} on {} from cell {cell}: kept {} (an earlier database's); this one has {}",
                    board_of(&config),
                    ours.describe(),
                    theirs.describe()
                ));
            }
            record.execute(params![
                old,
                here,
                theirs.success,
                theirs.attempts,
                theirs.visited,
                theirs.outcome,
                worker + worker_offset,
                now,
                computed_by
            ])?;
        }
        drop(rows);
        drop(stored);
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

        // Counters as the task lists now count them. A joined sweep's first
        // result is the earlier input's; one the inputs complete together
        // is done, finished when the later input finished it (unknown where
        // neither did), its shards settled. Any other keeps the state it
        // had here (or in the input, for a new one), so it can resume.
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
                                    WHERE sm.new = sweeps.key)
             WHERE key IN (SELECT new FROM temp.sweep_map WHERE joined);",
        )?;
        tx.execute(
            "CREATE TEMP TABLE completed AS SELECT key FROM main.sweeps
             WHERE key IN (SELECT new FROM temp.sweep_map) AND tasks_done >= tasks_total AND state != ?1",
            [SweepState::Done],
        )?;
        tx.execute(
            "UPDATE main.sweeps SET state = ?1, error = NULL, shards_failed = 0,
                 finished_ms = (SELECT NULLIF(MAX(COALESCE(sweeps.finished_ms, 0), COALESCE(s.finished_ms, 0)), 0)
                                FROM temp.sweep_map sm JOIN src.sweeps s ON s.key = sm.old WHERE sm.new = sweeps.key)
             WHERE key IN (SELECT key FROM temp.completed)",
            [SweepState::Done],
        )?;
        tx.execute(
            "UPDATE main.shards SET state = ?1 WHERE sweep IN (SELECT key FROM temp.completed) AND state != ?1",
            [StoredShardState::Done],
        )?;
        tx.execute_batch(
            "DROP TABLE temp.config_map; DROP TABLE temp.method_map; DROP TABLE temp.sweep_map;
             DROP TABLE temp.task_map; DROP TABLE temp.completed;",
        )?;
        // Results merged in may prove what this file's did not.
        super::facts::derive_all(&tx)?;
        tx.commit()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use sweep::{Planner, Sweep};
    use tour::Outcome;

    use super::*;
    use crate::ids::{SweepKey, WorkerId};
    use crate::model::ResultRecord;
    use crate::store::{Fact, Facts};

    /// A sweep of boards `n`, methods W and AW, four starts per board.
    fn spec(name: &str, n: &str) -> Sweep {
        spec_of(name, n, "[\"w\", \"aw\"]")
    }

    /// A sweep of boards `n`, `methods`, four starts per board.
    fn spec_of(name: &str, n: &str, methods: &str) -> Sweep {
        Sweep::parse(&format!(
            "name = \"{name}\"\nseed = 5\nstarts = 4\nmethods = {methods}\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = {n}"
        ))
        .unwrap()
    }

    /// Both halves' sweep, 16 tasks; `u` shares its n = 6 boards.
    fn s() -> Sweep {
        spec("s", "[5, 6]")
    }

    fn u() -> Sweep {
        spec("u", "[6, 7]")
    }

    /// A task's result as this test's engine gives it: the flags depend on
    /// the cell alone, so every database agrees unless `outcome` says not.
    /// A failed Warnsdorff method made all its walks, as the engine's do.
    fn result(
        key: SweepKey,
        sweep: &Sweep,
        config: u32,
        index: usize,
        cell: u64,
        method: u32,
        outcome: Outcome,
    ) -> ResultRecord {
        let success = outcome == Outcome::Tour;
        let (entry, m) = (&sweep.configurations()[config as usize], sweep.methods()[method as usize]);
        let walks = m.max_attempts(entry.move_count() as usize) as u32;
        ResultRecord {
            sweep: key,
            config,
            start_index: index as u64,
            method,
            start_cell: cell,
            success,
            attempts: if m.is_warnsdorff() && !success { walks } else { 1 },
            visited: if success { sweep.configurations()[config as usize].cells() } else { 2 + cell % 3 },
            micros: 9,
            worker: WorkerId(1),
            outcome,
            computed_by: key,
        }
    }

    fn agreed(cell: u64) -> Outcome {
        if cell.is_multiple_of(2) {
            Outcome::Tour
        } else {
            Outcome::GaveUp
        }
    }

    /// Stores `sweep` (taking what the store holds of it) and the results
    /// of its configurations `configs`, with outcomes from `outcome`.
    fn run(store: &mut Store, sweep: &Sweep, configs: &[u32], outcome: impl Fn(u64) -> Outcome) -> SweepKey {
        let (record, _) = store.insert_sweep(sweep).unwrap();
        let planner = Planner::new(sweep);
        let mut rows = Vec::new();
        for &config in configs {
            for (i, &cell) in planner.starts(config).iter().enumerate() {
                rows.extend((0..2).map(|m| result(record.key, sweep, config, i, cell, m, outcome(cell))));
            }
        }
        store.record(&rows).unwrap();
        record.key
    }

    /// A database file with one worker; `fill` runs sweeps in it.
    fn file(dir: &Path, name: &str, fill: impl FnOnce(&mut Store)) -> PathBuf {
        let path = dir.join(name);
        let mut store = Store::open(&path).unwrap();
        store.register_worker(name, 1, &Default::default()).unwrap();
        fill(&mut store);
        path
    }

    fn count(store: &Store, sql: &str) -> i64 {
        store.conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn halves_computed_apart_join_into_what_one_place_computes() {
        let dir = tempfile::tempdir().unwrap();
        // The laptop ran half of s (a shard of it left open) and all of u;
        // the cluster the other half of s (u's n = 6 tasks, so agreeing)
        // and began w, a sweep only it has, cutting one shard before it
        // stopped.
        let laptop = file(dir.path(), "laptop.db", |store| {
            run(store, &s(), &[0], agreed);
            run(store, &u(), &[0, 1], agreed);
            store
                .conn
                .execute(
                    "INSERT INTO shards (id, sweep, config, start_lo, start_hi, state) VALUES (1, 1, 0, 0, 4, 0)",
                    [],
                )
                .unwrap();
        });
        let w = spec("w", "[8]");
        let (mut cluster_first, mut cluster_finished) = (0, 0);
        let cluster = file(dir.path(), "cluster.db", |store| {
            let key = run(store, &s(), &[1], agreed);
            store.set_state(key, SweepState::Cancelled, None).unwrap();
            let record = store.record_of(key).unwrap();
            (cluster_first, cluster_finished) = (record.first_result_ms.unwrap(), record.finished_ms.unwrap());
            let key = run(store, &w, &[], agreed);
            store
                .conn
                .execute(
                    "INSERT INTO shards (id, sweep, config, start_lo, start_hi, state) VALUES (1, ?1, 0, 0, 2, 0)",
                    [key.0],
                )
                .unwrap();
        });
        let whole = file(dir.path(), "whole.db", |store| {
            run(store, &s(), &[0, 1], agreed);
            run(store, &u(), &[1], agreed);
        });

        let mut merged = Store::open(&dir.path().join("merged.db")).unwrap();
        let a = merged.import(&laptop).unwrap();
        assert_eq!((a.sweeps_new, a.sweeps_joined, a.tasks_new, a.tasks_agreeing, a.workers), (2, 0, 24, 0, 1));
        let laptop_first = merged.resolve(Some("s")).unwrap().first_result_ms.unwrap();
        let b = merged.import(&cluster).unwrap();
        assert_eq!((b.sweeps_new, b.sweeps_joined, b.workers), (1, 1, 1), "{b:?}");
        assert_eq!((b.tasks_new, b.tasks_agreeing, b.tasks_conflicting), (0, 8, 0), "u had s's other half: {b:?}");
        assert!(b.conflicts.is_empty());
        assert_eq!(count(&merged, "SELECT COUNT(*) FROM tasks"), 24, "each task stored once");
        assert_eq!(count(&merged, "SELECT COUNT(*) FROM workers"), 2);

        let joined = merged.resolve(Some("s")).unwrap();
        assert_eq!((joined.tasks_done, joined.tasks_total, joined.state), (16, 16, SweepState::Done));
        assert_eq!(joined.finished_ms, Some(cluster_finished), "finished when the later input finished it");
        assert_eq!(joined.first_result_ms, Some(laptop_first.min(cluster_first)));
        let started = merged.resolve(Some("w")).unwrap();
        assert_eq!((started.state, started.tasks_done), (SweepState::Running, 0), "an unfinished sweep resumes");
        let shards: Vec<(i64, i64, i64)> = merged
            .conn
            .prepare("SELECT id, sweep, state FROM shards ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(shards, vec![(1, joined.key.0, 1), (2, started.key.0, 0)], "shard ids stay unique");

        let reference = Store::open_read_only(&whole).unwrap();
        for sweep in [s(), u()] {
            let rows = |store: &Store| store.aggregates(&store.resolve(Some(sweep.name())).unwrap(), &sweep).unwrap();
            assert_eq!(rows(&merged), rows(&reference), "{}: the same tables as one place computes", sweep.name());
        }
        let u_record = merged.resolve(Some("u")).unwrap();
        assert_eq!((u_record.tasks_done, u_record.successes), (16, reference.resolve(Some("u")).unwrap().successes));

        let again = merged.import(&cluster).unwrap();
        assert_eq!(
            (again.sweeps_joined, again.tasks_new, again.tasks_agreeing),
            (2, 0, 8),
            "importing twice adds nothing"
        );
        assert_eq!(count(&merged, "SELECT COUNT(*) FROM sweep_tasks"), 16 + 16);
    }

    /// Refutations computed apart prove together what neither input does:
    /// the merged file derives the fact from its whole set of results.
    #[test]
    fn refutations_from_two_inputs_prove_what_neither_proves_alone() {
        let dir = tempfile::tempdir().unwrap();
        let sweep = Sweep::parse(
            "name = \"f\"\nseed = 5\nstarts = 100\nmethods = [\"solve\"]\n[[grid]]\nrule = [3, 2]\ndims = [2]\nn = [10]",
        )
        .unwrap();
        let c = sweep.configurations()[0].configuration();
        let key = sweep::board_moves(c.board().sides(), c.moves());
        let starts = Planner::new(&sweep).starts(0).to_vec();
        assert_eq!(starts.len(), 100, "every cell a start");
        // Each input refutes half of the starts with `solve`.
        let half = |lo: usize| {
            let (sweep, starts) = (&sweep, &starts);
            move |store: &mut Store| {
                let (record, _) = store.insert_sweep(sweep).unwrap();
                let rows: Vec<_> =
                    (lo..lo + 50).map(|i| result(record.key, sweep, 0, i, starts[i], 0, Outcome::NoTour)).collect();
                store.record(&rows).unwrap();
            }
        };
        let first = file(dir.path(), "first.db", half(0));
        let second = file(dir.path(), "second.db", half(50));
        for input in [&first, &second] {
            assert_eq!(
                Store::open_read_only(input).unwrap().facts(&key).unwrap(),
                Facts::default(),
                "half proves nothing"
            );
        }
        let mut merged = Store::open(&dir.path().join("merged.db")).unwrap();
        merged.import(&first).unwrap();
        assert_eq!(merged.facts(&key).unwrap(), Facts::default());
        merged.import(&second).unwrap();
        let facts = merged.facts(&key).unwrap();
        match &facts.open {
            Some(Fact::Impossible(why)) => assert!(why.contains("from all 100 starts"), "{why}"),
            other => panic!("no open tour is proven by the two halves together: {other:?}"),
        }
        assert!(matches!(facts.closed, Some(Fact::Impossible(_))), "no open tour, so no closed one: {facts:?}");
    }

    #[test]
    fn a_disagreement_is_listed_and_the_earlier_result_kept() {
        let dir = tempfile::tempdir().unwrap();
        // Methods that may prove there is no tour (a heuristic's no-tour
        // would be refused: `forged_rows_are_refused_naming_them`).
        let s = spec_of("s", "[5, 6]", "[\"solve\", \"bt\"]");
        let mine = file(dir.path(), "mine.db", |store| {
            run(store, &s, &[0], |_| Outcome::GaveUp);
        });
        // Theirs proves there is no tour where mine gave up: the flags
        // agree but for the outcome, which is a conflict all the same.
        let theirs = file(dir.path(), "theirs.db", |store| {
            run(store, &s, &[0], |cell| if cell.is_multiple_of(3) { Outcome::NoTour } else { Outcome::GaveUp });
        });
        let mut merged = Store::open(&dir.path().join("merged.db")).unwrap();
        merged.import(&mine).unwrap();
        let b = merged.import(&theirs).unwrap();
        assert!(b.tasks_conflicting > 0, "{b:?}");
        assert_eq!(b.tasks_conflicting + b.tasks_agreeing, 8);
        assert!(
            b.conflicts[0].contains("kept gave-up") && b.conflicts[0].contains("this one has no-tour"),
            "{:?}",
            b.conflicts
        );
        assert!(b.conflicts[0].contains("on 5x5 rule"), "{:?}", b.conflicts);
        let listed = count(&merged, "SELECT COUNT(*) FROM conflicts WHERE outcome = 2 AND worker = 2");
        assert_eq!(listed as u64, b.tasks_conflicting, "each listed with their flags and their worker");
        assert_eq!(
            count(&merged, "SELECT COUNT(*) FROM tasks WHERE outcome != 3"),
            0,
            "the first database's results stay"
        );
    }

    #[test]
    fn an_id_taken_by_another_spec_imports_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mine = file(dir.path(), "mine.db", |store| {
            run(store, &s(), &[0], agreed);
        });
        let other = file(dir.path(), "other.db", |store| {
            run(store, &s(), &[1], agreed);
            run(store, &u(), &[0], agreed);
            store.conn.execute("UPDATE sweeps SET spec = spec || '# another' WHERE name = 's'", []).unwrap();
        });
        let mut merged = Store::open(&dir.path().join("merged.db")).unwrap();
        merged.import(&mine).unwrap();
        let err = merged.import(&other).unwrap_err();
        assert!(matches!(err, Error::IdCollision(_)), "{err}");
        assert_eq!(count(&merged, "SELECT COUNT(*) FROM sweeps"), 1, "all or nothing");
        assert_eq!(count(&merged, "SELECT COUNT(*) FROM tasks"), 8);
        assert_eq!(count(&merged, "SELECT COUNT(*) FROM workers"), 1);
        assert_eq!(count(&merged, "SELECT COUNT(*) FROM sweep_tasks"), 8);
    }
    /// What a merged database holds, table by table.
    fn contents(store: &Store) -> Vec<i64> {
        ["sweeps", "shards", "workers", "configs", "methods", "tasks", "sweep_tasks", "conflicts", "facts"]
            .iter()
            .map(|table| count(store, &format!("SELECT COUNT(*) FROM {table}")))
            .collect()
    }

    /// A database edited to claim what no worker could have reported is
    /// refused whole, naming the row (sweep, identities, start cell) and
    /// why: the checks a coordinator applies to a worker's results. What
    /// was merged before it stays exactly as it was.
    #[test]
    fn forged_rows_are_refused_naming_them() {
        let dir = tempfile::tempdir().unwrap();
        let clean = file(dir.path(), "clean.db", |store| {
            run(store, &u(), &[0, 1], agreed);
        });
        let sweep = s();
        let starts = Planner::new(&sweep).starts(1);
        let (first, stray) = (starts[0], (0..36).find(|c| !starts.contains(c)).unwrap());
        // W's result of 6x6 (a board with tours) from its first start.
        let task = "(SELECT task FROM sweep_tasks WHERE config = 1 AND start_index = 0 AND method = 0)";
        let cases: [(&str, String, Vec<String>); 5] = [
            (
                "a heuristic's no-tour",
                format!("UPDATE tasks SET success = 0, outcome = 2, visited = 3 WHERE id = {task}"),
                vec![format!("start cell {first}"), "no-tour from w".into(), "is not a proof".into()],
            ),
            (
                "attempts past u32",
                format!("UPDATE tasks SET attempts = 4000000000 WHERE id = {task}"),
                vec![format!("start cell {first}"), "attempts 4000000000".into()],
            ),
            (
                "negative micros",
                format!("UPDATE tasks SET micros = -5 WHERE id = {task}"),
                vec![format!("start cell {first}"), "micros -5".into()],
            ),
            (
                "a start the spec does not draw",
                format!("UPDATE tasks SET start_cell = {stray} WHERE id = {task}"),
                vec![format!("start cell {stray}"), format!("the spec's start 0 is cell {first}")],
            ),
            (
                "a result no sweep refers to",
                format!(
                    "INSERT INTO tasks (config_key, method_key, start_cell, success, attempts, visited, micros, worker,
                         outcome, sweep)
                     SELECT config_key, method_key, {stray}, 1, 1, 36, 9, worker, 1, sweep FROM tasks WHERE id = {task}"
                ),
                vec![format!("start cell {stray}"), "no sweep of the file refers to it".into()],
            ),
        ];
        for (i, (what, sql, parts)) in cases.into_iter().enumerate() {
            let forged = file(dir.path(), &format!("forged-{i}.db"), |store| {
                run(store, &sweep, &[0, 1], agreed);
                store.conn.execute_batch(&sql).unwrap();
            });
            let mut merged = Store::open(&dir.path().join(format!("merged-{i}.db"))).unwrap();
            merged.import(&clean).unwrap();
            let before = contents(&merged);
            let e = merged.import(&forged).map(drop).unwrap_err();
            assert!(matches!(e, Error::Refused(_)), "{what}: {e}");
            let text = e.to_string();
            let named = ["6x6 rule 2,1", "`w v1`"].into_iter().map(String::from);
            let sweep_named = (i < 4).then(|| format!("sweep {} (s)", sweep.id()));
            for part in parts.into_iter().chain(named).chain(sweep_named) {
                assert!(text.contains(&part), "{what}: {part:?} is not in {text}");
            }
            assert_eq!(contents(&merged), before, "{what}: nothing of it imported");
        }
    }
}
