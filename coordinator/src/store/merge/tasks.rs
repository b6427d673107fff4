//! The merge's results: those of identities here already compared (a
//! disagreement listed, never overwritten), the others added, and every
//! sweep's reference pointed at the row now here.

use rusqlite::{params, Connection};

use super::{Imported, SAMPLES};
use crate::codes::StoredOutcome;
use crate::error::Result;
use crate::store::now_ms;

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

/// Compares the tasks whose identity is here already: agreeing, or a conflict,
/// recorded against the place the computing sweep has it.
pub(super) fn compare_known(tx: &Connection, worker_offset: i64, out: &mut Imported) -> Result<()> {
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
    Ok(())
}

/// Adds the new identities; then every reference, to the row now here.
pub(super) fn add_new(tx: &Connection, worker_offset: i64, out: &mut Imported) -> Result<()> {
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
    Ok(())
}
