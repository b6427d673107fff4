//! Task results: stored once per task key, counted into their sweep, read
//! back in pages for exports.

use rusqlite::{params, OptionalExtension};

use super::{now_ms, Store};
use crate::codes::{StoredOutcome, SweepState};
use crate::error::Result;
use crate::ids::{SweepKey, WorkerId};
use crate::model::ResultRecord;

impl Store {
    /// Inserts results, ignoring any already stored (same task key) and any
    /// of a sweep no longer running (a batch validated just before a cancel
    /// lands after it: the check and the cancel are serialised here), and
    /// bumps each sweep's counters by what was new. One transaction.
    /// Returns how many rows were new.
    pub fn record(&mut self, results: &[ResultRecord]) -> Result<u64> {
        let tx = self.conn.transaction()?;
        let mut new_rows = 0u64;
        let now = now_ms() as i64;
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
                    StoredOutcome(r.outcome)
                ])? as i64;
                new_rows += inserted as u64;
                match &mut pending {
                    Some((key, done, ok)) if *key == r.sweep => {
                        *done += inserted;
                        *ok += inserted * r.success as i64;
                    }
                    _ => {
                        if let Some((key, done, ok)) = pending.take() {
                            bump.execute(params![key.0, done, ok, now])?;
                        }
                        pending = Some((r.sweep, inserted, inserted * r.success as i64));
                    }
                }
            }
            if let Some((key, done, ok)) = pending {
                bump.execute(params![key.0, done, ok, now])?;
            }
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
                    outcome: r.get::<_, StoredOutcome>(9)?.0,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }
}
