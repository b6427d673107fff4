//! Shards as stored: cut with their sweep's cursor, then done or failed;
//! open ones are queued again after a restart.

use rusqlite::params;
use sweep::{Cursor, ShardPlan};

use super::codes::StoredShardState;
use super::Store;
use crate::error::Result;
use crate::ids::{ShardId, SweepKey};

/// A shard not yet done or failed, for resuming after a restart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenShard {
    pub id: ShardId,
    pub plan: ShardPlan,
    pub failures: u32,
}

impl Store {
    /// Records newly cut shards (ids chosen by the scheduler) and the
    /// advanced cursor of their sweep, in one transaction.
    pub fn cut_shards(&mut self, sweep: SweepKey, shards: &[(ShardId, ShardPlan)], cursor: Cursor) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO shards (id, sweep, config, start_lo, start_hi, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for (id, p) in shards {
                insert.execute(params![
                    id.0 as i64,
                    sweep.0,
                    p.config,
                    p.start_lo as i64,
                    p.start_hi as i64,
                    StoredShardState::Open
                ])?;
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

    /// Counts a failed attempt at a shard that will be retried.
    pub fn shard_failed_once(&mut self, id: ShardId, error: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE shards SET failures = failures + 1, error = ?2 WHERE id = ?1",
            params![id.0 as i64, error],
        )?;
        Ok(())
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
}
