//! Task results: stored once per task identity, referred to by each sweep
//! that has the task and counted into it, read back in pages for exports.

use rusqlite::{params, OptionalExtension};

use super::facts::Proofs;
use super::identities::KeyCache;
use super::{now_ms, Store};
use crate::codes::{StoredOutcome, SweepState};
use crate::error::{Error, Result};
use crate::ids::{SweepKey, WorkerId};
use crate::model::ResultRecord;

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
        let mut new_rows = 0u64;
        let now = now_ms() as i64;
        {
            let mut keys = KeyCache::default();
            let mut proofs = Proofs::default();
            let mut insert_task = tx.prepare_cached(
                "INSERT INTO tasks
                 (config_key, method_key, start_cell, success, attempts, visited, micros, worker, outcome, sweep)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (config_key, method_key, start_cell) DO NOTHING",
            )?;
            let mut stored = tx.prepare_cached(
                "SELECT id, success, attempts, visited, outcome FROM tasks
                 WHERE config_key = ?1 AND method_key = ?2 AND start_cell = ?3",
            )?;
            let mut conflict = tx.prepare_cached(
                "INSERT INTO conflicts
                 (sweep, config, start_index, method, task, success, attempts, visited, outcome, worker, at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?;
            let mut refer = tx.prepare_cached(
                "INSERT OR IGNORE INTO sweep_tasks (sweep, config, start_index, method, task) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            let mut state = tx.prepare_cached("SELECT state FROM sweeps WHERE key = ?1")?;
            // Per sweep of the batch (one or few): still running?
            let mut running: Vec<(SweepKey, bool)> = Vec::new();
            let mut bump = tx.prepare_cached(
                "UPDATE sweeps SET tasks_done = tasks_done + ?2, successes = successes + ?3,
                 first_result_ms = CASE WHEN ?2 > 0 THEN COALESCE(first_result_ms, ?4) ELSE first_result_ms END
                 WHERE key = ?1",
            )?;
            // Counters are bumped per run of one sweep (batches hold one or few).
            let mut pending: Option<(SweepKey, i64, i64)> = None;
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
                let outcome = StoredOutcome(r.outcome);
                // The task's row, and its success as stored (the first result).
                let (task, success) = if insert_task.execute(params![
                    config_key,
                    method_key,
                    r.start_cell as i64,
                    r.success,
                    r.attempts,
                    r.visited as i64,
                    r.micros as i64,
                    r.worker.0 as i64,
                    outcome,
                    r.sweep.0
                ])? == 1
                {
                    proofs.add(config_key, method_key, r.start_cell, r.sweep.0, r.outcome);
                    (tx.last_insert_rowid(), r.success)
                } else {
                    let (task, success, attempts, visited, was): (i64, bool, u32, i64, StoredOutcome) = stored
                        .query_row(params![config_key, method_key, r.start_cell as i64], |row| {
                            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?))
                        })?;
                    if (success, attempts, visited as u64, was.0) != (r.success, r.attempts, r.visited, r.outcome) {
                        tracing::error!(
                            sweep = r.sweep.0, config = r.config, start = r.start_cell, method = r.method,
                            stored = %format!("{success} {} attempts {attempts} visited {visited}", was.0),
                            rerun = %format!("{} {} attempts {} visited {}", r.success, r.outcome, r.attempts, r.visited),
                            "a rerun disagrees with the stored result of the same task identity: a bug, or a method \
                             changed without a new engine version; the stored result is kept"
                        );
                        conflict.execute(params![
                            r.sweep.0,
                            r.config,
                            r.start_index as i64,
                            r.method,
                            task,
                            r.success,
                            r.attempts,
                            r.visited as i64,
                            outcome,
                            r.worker.0 as i64,
                            now
                        ])?;
                    }
                    (task, success)
                };
                let inserted =
                    refer.execute(params![r.sweep.0, r.config, r.start_index as i64, r.method, task])? as i64;
                new_rows += inserted as u64;
                match &mut pending {
                    Some((key, done, ok)) if *key == r.sweep => {
                        *done += inserted;
                        *ok += inserted * success as i64;
                    }
                    _ => {
                        if let Some((key, done, ok)) = pending.take() {
                            bump.execute(params![key.0, done, ok, now])?;
                        }
                        pending = Some((r.sweep, inserted, inserted * success as i64));
                    }
                }
            }
            if let Some((key, done, ok)) = pending {
                bump.execute(params![key.0, done, ok, now])?;
            }
            super::facts::note(&tx, &proofs, &mut self.refutations)?;
        }
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
