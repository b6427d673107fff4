//! Shards as stored: cut with their sweep's cursor, then done or failed;
//! open ones are queued again after a restart.

use rusqlite::params;
use sweep::ShardPlan;

use super::Store;
use crate::codes::{StoredShardState, SweepState};
use crate::error::Result;
use crate::ids::{ShardId, SweepKey};
use crate::model::{NewShards, OpenShard};

impl Store {
    /// Records cuts (ids chosen by the scheduler) and the cursor each
    /// advanced its sweep to, in order and in one transaction: all of them
    /// or none.
    pub fn cut_shards(&mut self, cuts: &[NewShards]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO shards (id, sweep, config, start_lo, start_hi, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            let mut advance =
                tx.prepare_cached("UPDATE sweeps SET cursor_config = ?2, cursor_start = ?3 WHERE key = ?1")?;
            for cut in cuts {
                for (id, p) in &cut.shards {
                    insert.execute(params![
                        id.0 as i64,
                        cut.sweep.0,
                        p.config,
                        p.start_lo as i64,
                        p.start_hi as i64,
                        StoredShardState::Open
                    ])?;
                }
                advance.execute(params![cut.sweep.0, cut.cursor.config, cut.cursor.start as i64])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The largest shard id ever stored, so new ids never collide after a restart.
    pub fn max_shard_id(&self) -> Result<u64> {
        let max: Option<i64> = self.conn.query_row("SELECT MAX(id) FROM shards", [], |r| r.get(0))?;
        Ok(max.unwrap_or(0) as u64)
    }

    /// Marks shards done, and others failed with their error; failed shards
    /// count into their sweep's `shards_failed`.
    pub fn finish_shards(&mut self, done: &[ShardId], failed: &[(ShardId, String)]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut mark_done = tx.prepare_cached("UPDATE shards SET state = ?2 WHERE id = ?1")?;
            for id in done {
                mark_done.execute(params![id.0 as i64, StoredShardState::Done])?;
            }
            let mut mark_failed = tx.prepare_cached(
                "UPDATE shards SET state = ?3, failures = failures + 1, error = ?2 WHERE id = ?1 AND state = ?4",
            )?;
            let mut bump = tx.prepare_cached(
                "UPDATE sweeps SET shards_failed = shards_failed + 1
                 WHERE key = (SELECT sweep FROM shards WHERE id = ?1)",
            )?;
            for (id, error) in failed {
                if mark_failed.execute(params![id.0 as i64, error, StoredShardState::Failed, StoredShardState::Open])?
                    == 1
                {
                    bump.execute([id.0 as i64])?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// A sweep's shards that failed for good, in id order, at most `limit`
    /// of them, with the error of their last attempt.
    pub fn failed_shards(&self, sweep: SweepKey, limit: usize) -> Result<Vec<FailedShard>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, config, start_lo, start_hi, COALESCE(error, '') FROM shards
             WHERE sweep = ?1 AND state = ?2 ORDER BY id LIMIT ?3",
        )?;
        let rows = stmt
            .query_map(params![sweep.0, StoredShardState::Failed, limit as i64], |r| {
                Ok(FailedShard { id: ShardId(r.get::<_, i64>(0)? as u64), plan: plan_at(r, 1)?, error: r.get(4)? })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Gives a failed sweep's failed shards a fresh start (`ksweep resume`):
    /// open again with no failures counted, the sweep running again with
    /// none failed. One transaction; returns how many shards reopened.
    pub fn reopen_failed(&mut self, sweep: SweepKey) -> Result<u64> {
        let tx = self.conn.transaction()?;
        let reopened = tx.execute(
            "UPDATE shards SET state = ?2, failures = 0, error = NULL WHERE sweep = ?1 AND state = ?3",
            params![sweep.0, StoredShardState::Open, StoredShardState::Failed],
        )?;
        tx.execute(
            "UPDATE sweeps SET state = ?2, shards_failed = 0, error = NULL WHERE key = ?1",
            params![sweep.0, SweepState::Running],
        )?;
        tx.commit()?;
        Ok(reopened as u64)
    }

    /// Counts a failed attempt at a shard that will be retried.
    pub fn shard_failed_once(&mut self, id: ShardId, error: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE shards SET failures = failures + 1, error = ?2 WHERE id = ?1",
            params![id.0 as i64, error],
        )?;
        Ok(())
    }

    /// Every shard of a sweep, whatever its state: what must tile the plan
    /// up to the sweep's cursor.
    pub fn shard_plans(&self, sweep: SweepKey) -> Result<Vec<ShardPlan>> {
        let mut stmt = self.conn.prepare("SELECT config, start_lo, start_hi FROM shards WHERE sweep = ?1")?;
        let rows = stmt.query_map([sweep.0], plan_from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Start ranges of a sweep that need no more running: starts with a
    /// stored result for each of the sweep's `methods`, and the ranges of
    /// shards that failed for good. Whatever else the plan holds is missing.
    /// Reads every result of the sweep: for the rare check that finds the
    /// results count short of the task count.
    pub fn settled_ranges(&self, sweep: SweepKey, methods: u32) -> Result<Vec<ShardPlan>> {
        let mut out: Vec<ShardPlan> = Vec::new();
        let mut stmt = self.conn.prepare(
            "SELECT config, start_index FROM results WHERE sweep = ?1
             GROUP BY config, start_index HAVING COUNT(*) >= ?2 ORDER BY config, start_index",
        )?;
        let mut rows = stmt.query(params![sweep.0, methods])?;
        while let Some(r) = rows.next()? {
            let (config, start): (u32, u64) = (r.get(0)?, r.get::<_, i64>(1)? as u64);
            match out.last_mut() {
                Some(last) if last.config == config && last.start_hi == start => last.start_hi += 1,
                _ => out.push(ShardPlan { config, start_lo: start, start_hi: start + 1 }),
            }
        }
        let mut failed =
            self.conn.prepare("SELECT config, start_lo, start_hi FROM shards WHERE sweep = ?1 AND state = ?2")?;
        for plan in failed.query_map(params![sweep.0, StoredShardState::Failed], plan_from_row)? {
            out.push(plan?);
        }
        Ok(out)
    }

    /// Shards of a sweep that are neither done nor failed.
    /// Refuses a sweep with a shard state this build does not know, rather
    /// than resume it without those shards.
    pub fn open_shards(&self, sweep: SweepKey) -> Result<Vec<OpenShard>> {
        let mut states = self.conn.prepare("SELECT DISTINCT state FROM shards WHERE sweep = ?1")?;
        states.query_map([sweep.0], |r| r.get::<_, StoredShardState>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
        let mut stmt = self.conn.prepare(
            "SELECT id, config, start_lo, start_hi, failures FROM shards WHERE sweep = ?1 AND state = ?2 ORDER BY id",
        )?;
        let rows = stmt
            .query_map(params![sweep.0, StoredShardState::Open], |r| {
                Ok(OpenShard {
                    id: ShardId(r.get::<_, i64>(0)? as u64),
                    plan: plan_at(r, 1)?,
                    failures: r.get(4)?,
                    methods: None,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }
}

/// A shard that failed on every retry, and why (its last attempt's error).
#[derive(Debug, Clone, PartialEq)]
pub struct FailedShard {
    pub id: ShardId,
    pub plan: ShardPlan,
    pub error: String,
}

fn plan_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ShardPlan> {
    plan_at(r, 0)
}

/// The plan in columns `first..first + 3` (config, start_lo, start_hi).
fn plan_at(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<ShardPlan> {
    Ok(ShardPlan {
        config: r.get(first)?,
        start_lo: r.get::<_, i64>(first + 1)? as u64,
        start_hi: r.get::<_, i64>(first + 2)? as u64,
    })
}
