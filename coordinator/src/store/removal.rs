//! Removing a sweep (`ksweep rm`): its row, shards, task list and
//! conflicts go, and of its results those no other sweep refers to. A
//! result is stored once per task identity and shared (docs/identity.md):
//! one another sweep also has stays, and where the removed sweep had
//! computed it, it is then computed by an unknown sweep (key 0, as
//! `ksweep merge` marks one whose sweep is not in the file). Other sweeps'
//! counters are untouched: their task lists are.

use rusqlite::params;
use sweep::Removal;

use super::Store;
use crate::error::Result;
use crate::ids::SweepKey;

/// What `tasks.sweep` holds for a result whose computing sweep is not in
/// the database.
const UNKNOWN_SWEEP: i64 = 0;

impl Store {
    /// Removes sweep `key`, in one transaction. The caller decides whether
    /// it may go (a coordinator refuses a running one; offline, the writer
    /// lock says nothing runs it).
    pub fn remove_sweep(&mut self, key: SweepKey) -> Result<Removal> {
        let record = self.record_of(key)?;
        let tx = self.conn.transaction()?;
        // Its tasks, then those another sweep refers to struck off: one
        // pass over the other sweeps' lists (`sweep_tasks` has no index
        // by task).
        tx.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS removed_tasks (id INTEGER PRIMARY KEY);
             DELETE FROM temp.removed_tasks;",
        )?;
        let referred = tx.execute(
            "INSERT OR IGNORE INTO temp.removed_tasks (id) SELECT task FROM sweep_tasks WHERE sweep = ?1",
            [key.0],
        )? as u64;
        tx.execute(
            "DELETE FROM temp.removed_tasks WHERE id IN (SELECT task FROM sweep_tasks WHERE sweep != ?1)",
            [key.0],
        )?;
        let deleted = tx.execute("DELETE FROM tasks WHERE id IN (SELECT id FROM temp.removed_tasks)", [])? as u64;
        tx.execute("UPDATE tasks SET sweep = ?2 WHERE sweep = ?1", params![key.0, UNKNOWN_SWEEP])?;
        for table in ["sweep_tasks", "shards", "sweep_configs", "sweep_methods", "conflicts"] {
            tx.execute(&format!("DELETE FROM {table} WHERE sweep = ?1"), [key.0])?;
        }
        tx.execute("DELETE FROM sweeps WHERE key = ?1", [key.0])?;
        tx.execute("DELETE FROM temp.removed_tasks", [])?;
        tx.commit()?;
        self.parsed.forget(key);
        Ok(Removal { sweep_id: record.id, name: record.name, tasks_deleted: deleted, tasks_kept: referred - deleted })
    }
}
