//! SQLite persistence: sweeps, shards, workers and every task result.
//! Synchronous (rusqlite); the services call it from blocking tasks.
//! Every write is one transaction, so a coordinator killed at any point
//! restarts on a consistent database: results are committed or absent, and a
//! shard is marked done only after its results are.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use sweep::{AggregateRow, Cursor, ShardPlan, Sweep};

use crate::error::{Error, Result};
use crate::ids::{ShardId, SweepKey, WorkerId};

const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sweeps (
    key INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    spec TEXT NOT NULL,
    state INTEGER NOT NULL,
    tasks_total INTEGER NOT NULL,
    tasks_done INTEGER NOT NULL DEFAULT 0,
    successes INTEGER NOT NULL DEFAULT 0,
    configurations INTEGER NOT NULL,
    impossible INTEGER NOT NULL,
    cursor_config INTEGER NOT NULL DEFAULT 0,
    cursor_start INTEGER NOT NULL DEFAULT 0,
    shards_failed INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS shards (
    id INTEGER PRIMARY KEY,
    sweep INTEGER NOT NULL REFERENCES sweeps(key),
    config INTEGER NOT NULL,
    start_lo INTEGER NOT NULL,
    start_hi INTEGER NOT NULL,
    state INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    error TEXT
);
CREATE INDEX IF NOT EXISTS shards_by_state ON shards (sweep, state);
CREATE TABLE IF NOT EXISTS workers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    threads INTEGER NOT NULL,
    registered_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    sweep INTEGER NOT NULL,
    config INTEGER NOT NULL,
    start_index INTEGER NOT NULL,
    method INTEGER NOT NULL,
    start_cell INTEGER NOT NULL,
    success INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    visited INTEGER NOT NULL,
    micros INTEGER NOT NULL,
    worker INTEGER NOT NULL,
    outcome INTEGER NOT NULL,
    PRIMARY KEY (sweep, config, start_index, method)
) WITHOUT ROWID;
";

/// Lifecycle of a sweep, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepState {
    Running = 1,
    Done = 2,
    Cancelled = 3,
    /// Finished with shards that failed on every retry.
    Failed = 4,
}

impl SweepState {
    fn from_i64(v: i64) -> SweepState {
        match v {
            2 => SweepState::Done,
            3 => SweepState::Cancelled,
            4 => SweepState::Failed,
            _ => SweepState::Running,
        }
    }

    /// True once nothing more will run.
    pub fn is_terminal(self) -> bool {
        self != SweepState::Running
    }
}

/// A sweep's row.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRecord {
    pub key: SweepKey,
    pub id: String,
    pub name: String,
    pub spec: String,
    pub state: SweepState,
    pub tasks_total: u64,
    pub tasks_done: u64,
    pub successes: u64,
    pub configurations: u64,
    pub impossible: u64,
    pub cursor: Cursor,
    pub shards_failed: u64,
    pub error: Option<String>,
    pub created_ms: u64,
}

/// One task's result, keyed by (sweep, config, start index, method index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultRecord {
    pub sweep: SweepKey,
    pub config: u32,
    pub start_index: u64,
    pub method: u32,
    pub start_cell: u64,
    pub success: bool,
    pub attempts: u32,
    pub visited: u64,
    pub micros: u64,
    pub worker: WorkerId,
    pub outcome: tour::Outcome,
}

/// How an outcome is stored.
fn outcome_code(o: tour::Outcome) -> i64 {
    match o {
        tour::Outcome::Tour => 1,
        tour::Outcome::NoTour => 2,
        tour::Outcome::GaveUp => 3,
    }
}

fn outcome_of(code: i64) -> tour::Outcome {
    match code {
        1 => tour::Outcome::Tour,
        2 => tour::Outcome::NoTour,
        _ => tour::Outcome::GaveUp,
    }
}

/// A shard not yet done or failed, for resuming after a restart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenShard {
    pub id: ShardId,
    pub plan: ShardPlan,
    pub failures: u32,
}

/// The database.
pub struct Store {
    conn: Connection,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl Store {
    /// Opens (creating if needed) a database file in WAL mode.
    pub fn open(path: &Path) -> Result<Store> {
        Store::init(Connection::open(path)?)
    }

    /// Opens an existing database read-only (offline queries).
    pub fn open_read_only(path: &Path) -> Result<Store> {
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        Ok(Store { conn })
    }

    /// A private in-memory database (tests).
    pub fn in_memory() -> Result<Store> {
        Store::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> Result<Store> {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // WAL + NORMAL: a commit survives a killed process (not a power cut).
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(SCHEMA)?;
        let version: Option<i64> =
            conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).optional()?;
        match version {
            None => {
                conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?1)", [SCHEMA_VERSION])?;
            }
            Some(v) if v != SCHEMA_VERSION => {
                return Err(Error::Internal(format!(
                    "database schema version {v}, this build reads version {SCHEMA_VERSION}"
                )));
            }
            Some(_) => {}
        }
        Ok(Store { conn })
    }

    /// Stores a new sweep, or finds the one with the same id. Returns the
    /// record and whether it was created.
    pub fn insert_sweep(&mut self, sweep: &Sweep) -> Result<(SweepRecord, bool)> {
        let id = sweep.id();
        if let Some(existing) = self.sweep_by_id(&id)? {
            return Ok((existing, false));
        }
        let impossible =
            sweep.configurations().iter().filter(|c| c.eligibility() == tour::Eligibility::Impossible).count();
        self.conn.execute(
            "INSERT INTO sweeps (id, name, spec, state, tasks_total, configurations, impossible, created_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                id,
                sweep.name(),
                sweep.canonical_toml(),
                SweepState::Running as i64,
                sweep.total_tasks() as i64,
                sweep.configurations().len() as i64,
                impossible as i64,
                now_ms() as i64
            ],
        )?;
        let record = self.sweep_by_id(&id)?.ok_or_else(|| Error::Internal("sweep vanished".into()))?;
        Ok((record, true))
    }

    fn sweep_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SweepRecord> {
        Ok(SweepRecord {
            key: SweepKey(r.get(0)?),
            id: r.get(1)?,
            name: r.get(2)?,
            spec: r.get(3)?,
            state: SweepState::from_i64(r.get(4)?),
            tasks_total: r.get::<_, i64>(5)? as u64,
            tasks_done: r.get::<_, i64>(6)? as u64,
            successes: r.get::<_, i64>(7)? as u64,
            configurations: r.get::<_, i64>(8)? as u64,
            impossible: r.get::<_, i64>(9)? as u64,
            cursor: Cursor { config: r.get::<_, i64>(10)? as u32, start: r.get::<_, i64>(11)? as u64 },
            shards_failed: r.get::<_, i64>(12)? as u64,
            error: r.get(13)?,
            created_ms: r.get::<_, i64>(14)? as u64,
        })
    }

    const SWEEP_COLUMNS: &'static str = "key, id, name, spec, state, tasks_total, tasks_done, successes, \
         configurations, impossible, cursor_config, cursor_start, shards_failed, error, created_ms";

    /// The sweep with this public id.
    pub fn sweep_by_id(&self, id: &str) -> Result<Option<SweepRecord>> {
        let sql = format!("SELECT {} FROM sweeps WHERE id = ?1", Self::SWEEP_COLUMNS);
        Ok(self.conn.query_row(&sql, [id], Self::sweep_from_row).optional()?)
    }

    /// Resolves an id, or the only sweep when `id` is None.
    pub fn resolve(&self, id: Option<&str>) -> Result<SweepRecord> {
        match id {
            Some(id) => self.sweep_by_id(id)?.ok_or_else(|| Error::SweepNotFound(id.to_string())),
            None => {
                let all = self.sweeps()?;
                match all.len() {
                    1 => Ok(all.into_iter().next().expect("one sweep")),
                    0 => Err(Error::SweepNotFound("(none in the database)".into())),
                    n => Err(Error::AmbiguousSweep(n)),
                }
            }
        }
    }

    /// Every sweep, oldest first.
    pub fn sweeps(&self) -> Result<Vec<SweepRecord>> {
        let sql = format!("SELECT {} FROM sweeps ORDER BY key", Self::SWEEP_COLUMNS);
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map([], Self::sweep_from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Records newly cut shards (ids chosen by the scheduler) and the
    /// advanced cursor of their sweep, in one transaction.
    pub fn cut_shards(&mut self, sweep: SweepKey, shards: &[(ShardId, ShardPlan)], cursor: Cursor) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO shards (id, sweep, config, start_lo, start_hi) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for (id, p) in shards {
                insert.execute(params![id.0 as i64, sweep.0, p.config, p.start_lo as i64, p.start_hi as i64])?;
            }
            tx.execute(
                "UPDATE sweeps SET cursor_config = ?2, cursor_start = ?3 WHERE key = ?1",
                params![sweep.0, cursor.config, cursor.start as i64],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The largest shard id ever stored, so new ids never collide after a restart.
    pub fn max_shard_id(&self) -> Result<u64> {
        let max: Option<i64> = self.conn.query_row("SELECT MAX(id) FROM shards", [], |r| r.get(0))?;
        Ok(max.unwrap_or(0) as u64)
    }

    /// Inserts results, ignoring any already stored (same task key) and any
    /// of a sweep no longer running (a batch validated just before a cancel
    /// lands after it: the check and the cancel are serialised here), and
    /// bumps each sweep's counters by what was new. One transaction.
    /// Returns how many rows were new.
    pub fn record(&mut self, results: &[ResultRecord]) -> Result<u64> {
        let tx = self.conn.transaction()?;
        let mut new_rows = 0u64;
        {
            let mut insert = tx.prepare_cached(
                "INSERT OR IGNORE INTO results
                 (sweep, config, start_index, method, start_cell, success, attempts, visited, micros, worker, outcome)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?;
            let mut state = tx.prepare_cached("SELECT state FROM sweeps WHERE key = ?1")?;
            // Per sweep of the batch (one or few): still running?
            let mut running: Vec<(SweepKey, bool)> = Vec::new();
            let mut bump = tx.prepare_cached(
                "UPDATE sweeps SET tasks_done = tasks_done + ?2, successes = successes + ?3 WHERE key = ?1",
            )?;
            // Counters are bumped per run of one sweep (batches hold one or few).
            let mut pending: Option<(SweepKey, i64, i64)> = None;
            for r in results {
                let live = match running.iter().find(|(k, _)| *k == r.sweep) {
                    Some(&(_, live)) => live,
                    None => {
                        let s: Option<i64> = state.query_row([r.sweep.0], |row| row.get(0)).optional()?;
                        let live = s == Some(SweepState::Running as i64);
                        running.push((r.sweep, live));
                        live
                    }
                };
                if !live {
                    continue;
                }
                let inserted = insert.execute(params![
                    r.sweep.0,
                    r.config,
                    r.start_index as i64,
                    r.method,
                    r.start_cell as i64,
                    r.success,
                    r.attempts,
                    r.visited as i64,
                    r.micros as i64,
                    r.worker.0 as i64,
                    outcome_code(r.outcome)
                ])? as i64;
                new_rows += inserted as u64;
                match &mut pending {
                    Some((key, done, ok)) if *key == r.sweep => {
                        *done += inserted;
                        *ok += inserted * r.success as i64;
                    }
                    _ => {
                        if let Some((key, done, ok)) = pending.take() {
                            bump.execute(params![key.0, done, ok])?;
                        }
                        pending = Some((r.sweep, inserted, inserted * r.success as i64));
                    }
                }
            }
            if let Some((key, done, ok)) = pending {
                bump.execute(params![key.0, done, ok])?;
            }
        }
        tx.commit()?;
        Ok(new_rows)
    }

    /// Marks shards done, and others failed with their error; failed shards
    /// count into their sweep's `shards_failed`.
    pub fn finish_shards(&mut self, done: &[ShardId], failed: &[(ShardId, String)]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut mark_done = tx.prepare_cached("UPDATE shards SET state = 1 WHERE id = ?1")?;
            for id in done {
                mark_done.execute([id.0 as i64])?;
            }
            let mut mark_failed = tx.prepare_cached(
                "UPDATE shards SET state = 2, failures = failures + 1, error = ?2 WHERE id = ?1 AND state = 0",
            )?;
            let mut bump = tx.prepare_cached(
                "UPDATE sweeps SET shards_failed = shards_failed + 1
                 WHERE key = (SELECT sweep FROM shards WHERE id = ?1)",
            )?;
            for (id, error) in failed {
                if mark_failed.execute(params![id.0 as i64, error])? == 1 {
                    bump.execute([id.0 as i64])?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Counts a failed attempt at a shard that will be retried.
    pub fn shard_failed_once(&mut self, id: ShardId, error: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE shards SET failures = failures + 1, error = ?2 WHERE id = ?1",
            params![id.0 as i64, error],
        )?;
        Ok(())
    }

    /// Sets a sweep's state (and error, for failed sweeps).
    pub fn set_state(&mut self, sweep: SweepKey, state: SweepState, error: Option<&str>) -> Result<()> {
        self.conn.execute(
            "UPDATE sweeps SET state = ?2, error = ?3 WHERE key = ?1",
            params![sweep.0, state as i64, error],
        )?;
        Ok(())
    }

    /// Shards of a sweep that are neither done nor failed.
    pub fn open_shards(&self, sweep: SweepKey) -> Result<Vec<OpenShard>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, config, start_lo, start_hi, failures FROM shards WHERE sweep = ?1 AND state = 0 ORDER BY id",
        )?;
        let rows = stmt
            .query_map([sweep.0], |r| {
                Ok(OpenShard {
                    id: ShardId(r.get::<_, i64>(0)? as u64),
                    plan: ShardPlan {
                        config: r.get(1)?,
                        start_lo: r.get::<_, i64>(2)? as u64,
                        start_hi: r.get::<_, i64>(3)? as u64,
                    },
                    failures: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Registers a worker; ids are never reused.
    pub fn register_worker(&mut self, name: &str, threads: u32) -> Result<WorkerId> {
        self.conn.execute(
            "INSERT INTO workers (name, threads, registered_ms) VALUES (?1, ?2, ?3)",
            params![name, threads, now_ms() as i64],
        )?;
        Ok(WorkerId(self.conn.last_insert_rowid() as u64))
    }

    /// Aggregates per (configuration, method), in configuration then method
    /// order, with impossible configurations marked and unrun ones at zero.
    pub fn aggregates(&self, record: &SweepRecord, sweep: &Sweep) -> Result<Vec<AggregateRow>> {
        let methods = sweep.methods();
        let configs = sweep.configurations();
        let mut rows: Vec<AggregateRow> = Vec::with_capacity(configs.len() * methods.len());
        for c in configs {
            for &m in methods {
                rows.push(AggregateRow::new(c, m));
            }
        }
        let at = |config: u32, method: u32| config as usize * methods.len() + method as usize;
        let mut stmt = self.conn.prepare(
            "SELECT config, method, COUNT(*), SUM(success), AVG(micros), AVG(attempts), SUM(outcome = 2)
             FROM results WHERE sweep = ?1 GROUP BY config, method",
        )?;
        let mut q = stmt.query([record.key.0])?;
        while let Some(r) = q.next()? {
            let row = &mut rows[at(r.get(0)?, r.get(1)?)];
            row.tasks = r.get::<_, i64>(2)? as u64;
            row.successes = r.get::<_, i64>(3)? as u64;
            row.mean_micros = r.get(4)?;
            row.mean_attempts = r.get(5)?;
            row.no_tour = r.get::<_, i64>(6)? as u64;
        }
        // Medians: one ordered pass, picking the middle of each group.
        let mut stmt = self
            .conn
            .prepare("SELECT config, method, micros FROM results WHERE sweep = ?1 ORDER BY config, method, micros")?;
        let mut q = stmt.query([record.key.0])?;
        let mut group: Option<(u32, u32)> = None;
        let mut seen = 0u64;
        let mut lower = 0f64;
        while let Some(r) = q.next()? {
            let key: (u32, u32) = (r.get(0)?, r.get(1)?);
            let micros = r.get::<_, i64>(2)? as f64;
            if group != Some(key) {
                group = Some(key);
                seen = 0;
            }
            let row = &mut rows[at(key.0, key.1)];
            let n = row.tasks;
            // Median: the middle value, or the mean of the two middle values.
            let odd = n % 2 == 1;
            if odd && seen == n / 2 {
                row.median_micros = micros;
            } else if !odd && seen + 1 == n / 2 {
                lower = micros;
            } else if !odd && seen == n / 2 {
                row.median_micros = (lower + micros) / 2.0;
            }
            seen += 1;
        }
        Ok(rows)
    }

    /// Up to `limit` results of a sweep after `after` (exclusive), in
    /// (config, start index, method) order: the export's pages.
    pub fn results_page(
        &self,
        sweep: SweepKey,
        after: Option<(u32, u64, u32)>,
        limit: usize,
    ) -> Result<Vec<ResultRecord>> {
        let (c, s, m) = after.map_or((-1i64, -1i64, -1i64), |(c, s, m)| (c as i64, s as i64, m as i64));
        let mut stmt = self.conn.prepare_cached(
            "SELECT config, start_index, method, start_cell, success, attempts, visited, micros, worker, outcome
             FROM results WHERE sweep = ?1 AND (config, start_index, method) > (?2, ?3, ?4)
             ORDER BY config, start_index, method LIMIT ?5",
        )?;
        let rows = stmt
            .query_map(params![sweep.0, c, s, m, limit as i64], |r| {
                Ok(ResultRecord {
                    sweep,
                    config: r.get(0)?,
                    start_index: r.get::<_, i64>(1)? as u64,
                    method: r.get(2)?,
                    start_cell: r.get::<_, i64>(3)? as u64,
                    success: r.get(4)?,
                    attempts: r.get(5)?,
                    visited: r.get::<_, i64>(6)? as u64,
                    micros: r.get::<_, i64>(7)? as u64,
                    worker: WorkerId(r.get::<_, i64>(8)? as u64),
                    outcome: outcome_of(r.get(9)?),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Name of a worker, for exports.
    pub fn worker_names(&self) -> Result<std::collections::HashMap<u64, String>> {
        let mut stmt = self.conn.prepare("SELECT id, name FROM workers")?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn result(sweep: SweepKey, config: u32, start_index: u64, method: u32, success: bool, micros: u64) -> ResultRecord {
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
            store.cut_shards(rec.key, &plans, Cursor { config: 1, start: 0 }).unwrap();
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
}
