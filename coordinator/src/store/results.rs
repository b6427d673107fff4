//! Task results: stored once per task identity, referred to by each sweep
//! that has the task and counted into it, read back in pages for exports.

use std::sync::LazyLock;

use rusqlite::{params, params_from_iter, Connection, OptionalExtension};

use super::facts::Proofs;
use super::identities::KeyCache;
use super::{now_ms, Store};
use crate::codes::{StoredOutcome, SweepState};
use crate::error::{Error, Result};
use crate::ids::{SweepKey, WorkerId};
use crate::model::ResultRecord;

/// Rows one statement inserts, into `sweep_tasks` and into `tasks`. Each
/// statement's own upkeep (binding, cursor, reset) was much of a stored
/// result's cost, and 64 rows share it (docs/performance/coordinator.md, "A sweep's
/// references, 64 to a statement" and "A result's task row, 64 to a
/// statement").
const ROWS_PER_STATEMENT: usize = 64;

/// The statements inserting one reference and [`ROWS_PER_STATEMENT`].
static INSERT_REF: LazyLock<String> = LazyLock::new(|| insert_refs_sql(1));
static INSERT_REFS: LazyLock<String> = LazyLock::new(|| insert_refs_sql(ROWS_PER_STATEMENT));

/// The statements inserting one task and [`ROWS_PER_STATEMENT`].
static INSERT_TASK: LazyLock<String> = LazyLock::new(|| insert_tasks_sql(1));
static INSERT_TASKS: LazyLock<String> = LazyLock::new(|| insert_tasks_sql(ROWS_PER_STATEMENT));

/// `INSERT ... VALUES` of `rows` rows of `columns` parameters each.
fn values_sql(insert: &str, columns: usize, rows: usize, tail: &str) -> String {
    let row = format!("({})", vec!["?"; columns].join(", "));
    format!("{insert} VALUES {} {tail}", vec![row; rows].join(", "))
}

fn insert_refs_sql(rows: usize) -> String {
    values_sql("INSERT OR IGNORE INTO sweep_tasks (sweep, config, start_index, method, task)", 5, rows, "")
}

fn insert_tasks_sql(rows: usize) -> String {
    values_sql(
        "INSERT INTO tasks
         (config_key, method_key, start_cell, success, attempts, visited, micros, worker, outcome, sweep)",
        10,
        rows,
        "ON CONFLICT (config_key, method_key, start_cell) DO NOTHING",
    )
}

/// A sweep's reference to a stored task: its place in the sweep and the
/// task's row.
pub(super) struct TaskRef {
    pub config: u32,
    pub start_index: u64,
    pub method: u32,
    pub task: i64,
}

/// The references of one run of a batch's results of one sweep, by the
/// stored task's success, so that the rows each statement inserts (a
/// reference the sweep already has is ignored) count its results and
/// its successes.
struct SweepRefs {
    sweep: SweepKey,
    succeeded: Vec<TaskRef>,
    other: Vec<TaskRef>,
}

impl SweepRefs {
    fn new(sweep: SweepKey) -> SweepRefs {
        SweepRefs { sweep, succeeded: Vec::new(), other: Vec::new() }
    }

    /// Inserts the references and bumps the sweep's counters by the new ones.
    fn write(&self, tx: &Connection, now: i64) -> Result<u64> {
        let succeeded = insert_refs(tx, self.sweep, &self.succeeded)?;
        let done = succeeded + insert_refs(tx, self.sweep, &self.other)?;
        tx.prepare_cached(
            "UPDATE sweeps SET tasks_done = tasks_done + ?2, successes = successes + ?3,
             first_result_ms = CASE WHEN ?2 > 0 THEN COALESCE(first_result_ms, ?4) ELSE first_result_ms END,
             run_from_ms = CASE WHEN ?2 > 0 THEN COALESCE(run_from_ms, ?4) ELSE run_from_ms END,
             last_result_ms = CASE WHEN ?2 > 0 THEN ?4 ELSE last_result_ms END
             WHERE key = ?1",
        )?
        .execute(params![self.sweep.0, done as i64, succeeded as i64, now])?;
        Ok(done)
    }
}

/// Inserts `refs` of `sweep` (inside the caller's transaction), ignoring
/// those it has; returns how many were new.
pub(super) fn insert_refs(tx: &Connection, sweep: SweepKey, refs: &[TaskRef]) -> Result<u64> {
    let values = |r: &TaskRef| [sweep.0, i64::from(r.config), r.start_index as i64, i64::from(r.method), r.task];
    Ok(insert_rows(tx, refs, values, (&INSERT_REF, &INSERT_REFS))? as u64)
}

/// Inserts `rows` with `one` (a row) and `many` ([`ROWS_PER_STATEMENT`]
/// rows), each row's parameters from `values`, in order: many while
/// [`ROWS_PER_STATEMENT`] remain, then one at a time. Returns how many rows
/// the statements inserted.
fn insert_rows<T, const C: usize>(
    tx: &Connection,
    rows: &[T],
    values: impl Fn(&T) -> [i64; C],
    (one, many): (&str, &str),
) -> Result<usize> {
    let mut inserted = 0;
    let chunks = rows.chunks_exact(ROWS_PER_STATEMENT);
    let rest = chunks.remainder();
    if chunks.len() > 0 {
        let mut many = tx.prepare_cached(many)?;
        for chunk in chunks {
            inserted += many.execute(params_from_iter(chunk.iter().flat_map(&values)))?;
        }
    }
    if !rest.is_empty() {
        let mut one = tx.prepare_cached(one)?;
        for row in rest {
            inserted += one.execute(params_from_iter(values(row)))?;
        }
    }
    Ok(inserted)
}

/// A live result bound for `tasks`, with its identity's keys.
struct Keyed<'r> {
    r: &'r ResultRecord,
    config_key: i64,
    method_key: i64,
}

impl Keyed<'_> {
    fn identity(&self) -> (i64, i64, u64) {
        (self.config_key, self.method_key, self.r.start_cell)
    }

    /// The `tasks` row, in [`insert_tasks_sql`]'s column order.
    fn values(&self) -> [i64; 10] {
        let r = self.r;
        [
            self.config_key,
            self.method_key,
            r.start_cell as i64,
            i64::from(r.success),
            i64::from(r.attempts),
            r.visited as i64,
            r.micros as i64,
            r.worker.0 as i64,
            StoredOutcome(r.outcome).code(),
            r.sweep.0,
        ]
    }
}

/// One transaction's results on their way in. Tasks are gathered and
/// inserted [`ROWS_PER_STATEMENT`] to a statement, never one identity
/// twice in a statement (the second is a rerun of the first, checked
/// once the first is stored); then each result, in order, is checked
/// against the stored one if it was a rerun and referred to by its sweep
/// ([`Ledger`]).
struct Batch<'t, 'r> {
    tasks: Vec<Keyed<'r>>,
    ledger: Ledger<'t>,
}

impl<'t, 'r> Batch<'t, 'r> {
    fn new(tx: &'t Connection) -> Result<Batch<'t, 'r>> {
        let ledger = Ledger {
            tx,
            now: now_ms() as i64,
            last_id: tx.query_row("SELECT COALESCE(MAX(id), 0) FROM tasks", [], |row| row.get(0))?,
            refs: None,
            proofs: Proofs::default(),
            new_rows: 0,
        };
        Ok(Batch { tasks: Vec::with_capacity(ROWS_PER_STATEMENT), ledger })
    }

    fn push(&mut self, task: Keyed<'r>) -> Result<()> {
        if self.tasks.len() == ROWS_PER_STATEMENT || self.tasks.iter().any(|t| t.identity() == task.identity()) {
            self.flush()?;
        }
        self.tasks.push(task);
        Ok(())
    }

    /// Inserts the gathered tasks, then checks and refers to each.
    fn flush(&mut self) -> Result<()> {
        let Batch { tasks, ledger } = self;
        let n = tasks.len();
        if n == 0 {
            return Ok(());
        }
        let inserted = insert_rows(ledger.tx, tasks, Keyed::values, (&INSERT_TASK, &INSERT_TASKS))?;
        let before = ledger.last_id;
        if inserted == n && ledger.tx.last_insert_rowid() == before + n as i64 {
            for (t, id) in tasks.iter().zip(before + 1..) {
                ledger.proofs.add(t.config_key, t.method_key, t.r.start_cell, t.r.sweep.0, t.r.outcome);
                ledger.refer(t.r, id, t.r.success)?;
            }
            ledger.last_id += n as i64;
        } else {
            for t in tasks.iter() {
                let (id, success) = ledger.stored(t, before)?;
                ledger.last_id = ledger.last_id.max(id);
                ledger.refer(t.r, id, success)?;
            }
        }
        tasks.clear();
        Ok(())
    }

    /// Stores what is gathered; returns how many tasks were new to their
    /// sweeps, and what the new results prove.
    fn finish(mut self) -> Result<(u64, Proofs)> {
        self.flush()?;
        let mut ledger = self.ledger;
        if let Some(refs) = ledger.refs.take() {
            ledger.new_rows += refs.write(ledger.tx, ledger.now)?;
        }
        Ok((ledger.new_rows, ledger.proofs))
    }
}

/// What a [`Batch`] does with its stored tasks: the sweeps' references
/// and counters, the reruns' checks and the new results' proofs.
struct Ledger<'t> {
    tx: &'t Connection,
    now: i64,
    /// The largest task id so far. A rowid table without AUTOINCREMENT
    /// numbers a new row one past its largest, and a many-row `VALUES`
    /// is inserted in order, so a statement that inserted all its n rows
    /// gave them the n ids after this one (checked against
    /// `last_insert_rowid`; where it does not hold, each row is looked up).
    last_id: i64,
    refs: Option<SweepRefs>,
    proofs: Proofs,
    new_rows: u64,
}

impl Ledger<'_> {
    /// The stored row of `t`'s identity: its id and its success. A row of
    /// an id up to `before` was there before `t` came (a rerun) and is
    /// checked against it: a disagreement is kept in `conflicts`, and the
    /// stored result stays.
    fn stored(&mut self, t: &Keyed, before: i64) -> Result<(i64, bool)> {
        let r = t.r;
        let (task, success, attempts, visited, was): (i64, bool, u32, i64, StoredOutcome) = self
            .tx
            .prepare_cached(
                "SELECT id, success, attempts, visited, outcome FROM tasks
                 WHERE config_key = ?1 AND method_key = ?2 AND start_cell = ?3",
            )?
            .query_row(params![t.config_key, t.method_key, r.start_cell as i64], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?))
            })?;
        if task > before {
            self.proofs.add(t.config_key, t.method_key, r.start_cell, r.sweep.0, r.outcome);
        } else if (success, attempts, visited as u64, was.0) != (r.success, r.attempts, r.visited, r.outcome) {
            tracing::error!(
                sweep = r.sweep.0, config = r.config, start = r.start_cell, method = r.method,
                stored = %format!("{success} {} attempts {attempts} visited {visited}", was.0),
                rerun = %format!("{} {} attempts {} visited {}", r.success, r.outcome, r.attempts, r.visited),
                "a rerun disagrees with the stored result of the same task identity: a bug, or a method \
                 changed without a new engine version; the stored result is kept"
            );
            self.tx
                .prepare_cached(
                    "INSERT INTO conflicts
                     (sweep, config, start_index, method, task, success, attempts, visited, outcome, worker, at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )?
                .execute(params![
                    r.sweep.0,
                    r.config,
                    r.start_index as i64,
                    r.method,
                    task,
                    r.success,
                    r.attempts,
                    r.visited as i64,
                    StoredOutcome(r.outcome),
                    r.worker.0 as i64,
                    self.now
                ])?;
        }
        Ok((task, success))
    }

    /// `r`'s sweep refers to stored task `task` of success `success`.
    /// References are inserted, and counters bumped, per run of one sweep
    /// (batches hold one or few).
    fn refer(&mut self, r: &ResultRecord, task: i64, success: bool) -> Result<()> {
        let refs = match &mut self.refs {
            Some(refs) if refs.sweep == r.sweep => refs,
            _ => {
                if let Some(refs) = self.refs.take() {
                    self.new_rows += refs.write(self.tx, self.now)?;
                }
                self.refs.insert(SweepRefs::new(r.sweep))
            }
        };
        let task = TaskRef { config: r.config, start_index: r.start_index, method: r.method, task };
        if success {
            refs.succeeded.push(task)
        } else {
            refs.other.push(task)
        }
        Ok(())
    }
}

impl Store {
    /// Stores results: each task's row once per identity (docs/identity.md)
    /// and the sweep's reference to it, ignoring a task the sweep already
    /// has and any of a sweep no longer running (a batch validated just
    /// before a cancel lands after it: the check and the cancel are
    /// serialised here), and bumps each sweep's counters by what was new.
    /// A result whose identity is stored already (a rerun) is checked
    /// against the stored one: a disagreement is kept in `conflicts` and
    /// logged as an error, and the stored result stays. A new result that
    /// proves a tour exists or refutes a start updates the board's
    /// existence facts (`facts`), in the same transaction. One transaction.
    /// Returns how many tasks were new to their sweeps.
    pub fn record(&mut self, results: &[ResultRecord]) -> Result<u64> {
        let tx = self.conn.transaction()?;
        let new_rows = {
            let mut keys = KeyCache::default();
            let mut state = tx.prepare_cached("SELECT state FROM sweeps WHERE key = ?1")?;
            // Per sweep of the batch (one or few): still running?
            let mut running: Vec<(SweepKey, bool)> = Vec::new();
            let mut batch = Batch::new(&tx)?;
            for r in results {
                let live = match running.iter().find(|(k, _)| *k == r.sweep) {
                    Some(&(_, live)) => live,
                    None => {
                        let s: Option<SweepState> = state.query_row([r.sweep.0], |row| row.get(0)).optional()?;
                        let live = s == Some(SweepState::Running);
                        running.push((r.sweep, live));
                        live
                    }
                };
                if !live {
                    continue;
                }
                let Some((config_key, method_key)) = keys.keys(&tx, r.sweep.0, r.config, r.method)? else {
                    return Err(Error::Internal(format!(
                        "sweep key {} has no configuration {} or method {}",
                        r.sweep.0, r.config, r.method
                    )));
                };
                batch.push(Keyed { r, config_key, method_key })?;
            }
            let (new_rows, proofs) = batch.finish()?;
            super::facts::note(&tx, &proofs, &mut self.refutations)?;
            new_rows
        };
        tx.commit()?;
        Ok(new_rows)
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
            "SELECT config, start_index, method, start_cell, success, attempts, visited, micros, worker, outcome, source
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
                    outcome: r.get::<_, StoredOutcome>(9)?.0,
                    computed_by: SweepKey(r.get(10)?),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }
}
