//! The merge's sweeps: joined with the same spec here or added with
//! their identities and shards, then counted again from their task lists.

use rusqlite::{params, Connection, OptionalExtension};

use super::Imported;
use crate::codes::{StoredShardState, SweepState};
use crate::error::{Error, Result};

/// Imports the sweeps: the same id is the same spec, joined; others are added
/// with their identities and shards (so an unfinished one resumes).
pub(super) fn join(tx: &Connection, shard_offset: i64, out: &mut Imported) -> Result<()> {
    let sweeps: Vec<(i64, String, String)> = tx
        .prepare("SELECT key, id, spec FROM src.sweeps ORDER BY key")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    const COLUMNS: &str = "id, name, spec, state, tasks_total, tasks_done, successes, configurations, impossible, \
        cursor_config, cursor_start, shards_failed, error, created_ms, first_result_ms, finished_ms, reuse, tasks_reused, \
        ran_ms, run_from_ms, last_result_ms";
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
    Ok(())
}

/// Counters as the task lists now count them. A joined sweep's first
/// result is the earlier input's; one the inputs complete together
/// is done, finished when the later input finished it (unknown where
/// neither did), its shards settled. Any other keeps the state it
/// had here (or in the input, for a new one), so it can resume.
pub(super) fn recount(tx: &Connection) -> Result<()> {
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
             ran_ms = (SELECT MAX(sweeps.ran_ms, s.ran_ms)
                       FROM temp.sweep_map sm JOIN src.sweeps s ON s.key = sm.old WHERE sm.new = sweeps.key),
             last_result_ms = (SELECT NULLIF(MAX(COALESCE(sweeps.last_result_ms, 0), COALESCE(s.last_result_ms, 0)), 0)
                               FROM temp.sweep_map sm JOIN src.sweeps s ON s.key = sm.old WHERE sm.new = sweeps.key)
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
    Ok(())
}
