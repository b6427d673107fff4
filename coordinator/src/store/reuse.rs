//! What the database already holds of a sweep (docs/identity.md): found
//! when it is submitted, taken into it as references to the stored tasks,
//! and reported by `ksweep check --db` before anything runs.
//!
//! Reuse is decided per (configuration, method): a method whose every
//! start of the configuration has a stored result is taken whole; one with
//! only some runs again (its stored results are then checked against the
//! rerun, see [`Store::record`]).

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension};
use sweep::{MethodSet, Planner, Reused, Sweep};

use super::results::{insert_refs, TaskRef};
use super::Store;
use crate::error::{Error, Result};
use crate::ids::SweepKey;

/// Stored results per unit of estimated work (cells x moves) are averaged
/// over at most this many of the most recent tasks, so estimating stays
/// fast on a large database.
const RATE_SAMPLE: i64 = 100_000;

/// What a database holds of a sweep's tasks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Known {
    /// Per configuration, the methods whose every start is stored.
    pub reused: Reused,
    /// Tasks those are.
    pub tasks: u64,
    /// Successes among them.
    pub successes: u64,
    /// The sweeps that computed them, with how many each, most first.
    pub from: Vec<(SweepKey, u64)>,
    /// Estimated CPU microseconds of the tasks left to run, at the stored
    /// results' rates per (D, method), the priors where none are stored.
    pub micros_to_run: f64,
}

/// Finds what `conn` holds of `sweep`; with `refs`, collects each taken
/// task's reference too.
fn find(conn: &Connection, sweep: &Sweep, mut refs: Option<&mut Vec<TaskRef>>) -> Result<Known> {
    let mut known = Known::default();
    let method_keys: Vec<Option<i64>> = sweep
        .methods()
        .iter()
        .map(|&m| {
            conn.prepare_cached("SELECT key FROM methods WHERE identity = ?1")?
                .query_row([sweep.method_identity(m)], |r| r.get(0))
                .optional()
        })
        .collect::<rusqlite::Result<_>>()?;
    let planner = Planner::new(sweep);
    let mut taken = Vec::new();
    let mut from: HashMap<i64, u64> = HashMap::new();
    let mut counts =
        conn.prepare_cached("SELECT method_key, COUNT(*) FROM tasks WHERE config_key = ?1 GROUP BY method_key")?;
    let mut lookup = conn.prepare_cached(
        "SELECT id, success, sweep FROM tasks WHERE config_key = ?1 AND method_key = ?2 AND start_cell = ?3",
    )?;
    for (index, entry) in sweep.configurations().iter().enumerate() {
        let mut whole = MethodSet::EMPTY;
        let wanted = entry.start_count(sweep.starts_per_config());
        let config_key: Option<i64> = conn
            .prepare_cached("SELECT key FROM configs WHERE identity = ?1")?
            .query_row([entry.identity()], |r| r.get(0))
            .optional()?;
        if let (Some(config_key), true) = (config_key, wanted > 0) {
            let stored: HashMap<i64, i64> =
                counts.query_map([config_key], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
            let candidates: Vec<(usize, i64)> = method_keys
                .iter()
                .enumerate()
                .filter_map(|(j, k)| k.filter(|k| stored.get(k).is_some_and(|&n| n as u64 >= wanted)).map(|k| (j, k)))
                .collect();
            if !candidates.is_empty() {
                let starts = planner.starts(index as u32);
                for (j, method_key) in candidates {
                    let mut found = Vec::with_capacity(starts.len());
                    for (start_index, &cell) in starts.iter().enumerate() {
                        let row: Option<(i64, bool, i64)> = lookup
                            .query_row(params![config_key, method_key, cell as i64], |r| {
                                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                            })
                            .optional()?;
                        match row {
                            Some(row) => found.push((start_index as u64, row)),
                            None => break,
                        }
                    }
                    if found.len() as u64 != wanted {
                        continue;
                    }
                    whole.insert(j);
                    for (start_index, (task, success, source)) in found {
                        known.tasks += 1;
                        known.successes += u64::from(success);
                        *from.entry(source).or_default() += 1;
                        if let Some(refs) = refs.as_deref_mut() {
                            refs.push(TaskRef { config: index as u32, start_index, method: j as u32, task });
                        }
                    }
                }
            }
        }
        taken.push(whole);
    }
    known.reused = Reused::new(taken);
    let mut from: Vec<(SweepKey, u64)> = from.into_iter().map(|(k, n)| (SweepKey(k), n)).collect();
    from.sort_by_key(|&(k, n)| (std::cmp::Reverse(n), k.0));
    known.from = from;
    known.micros_to_run = estimate_micros(conn, sweep, &known.reused)?;
    Ok(known)
}

/// Estimated CPU microseconds of the tasks of `sweep` that `reused` leaves
/// to run, at the rates of the stored results (the last RATE_SAMPLE) per
/// (D, method) ([`sweep::CostModel`]). A database with no timed result
/// still gets an estimate: the model's priors, the figure `ksweep check`
/// prints without a database.
fn estimate_micros(conn: &Connection, sweep: &Sweep, reused: &Reused) -> Result<f64> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.identity, m.name, SUM(t.micros), COUNT(*), c.cells * c.moves
         FROM (SELECT micros, config_key, method_key FROM tasks ORDER BY id DESC LIMIT ?1) t
         JOIN configs c ON c.key = t.config_key JOIN methods m ON m.key = t.method_key
         WHERE c.cells > 0
         GROUP BY t.config_key, m.name",
    )?;
    let mut model = sweep::CostModel::new();
    let mut q = stmt.query([RATE_SAMPLE])?;
    while let Some(r) = q.next()? {
        let (identity, name): (String, String) = (r.get(0)?, r.get(1)?);
        // A method or shape this build does not know tells nothing here.
        let (Some(dims), Ok(method)) = (sweep::identity_dims(&identity), name.parse()) else { continue };
        model.observe(dims, method, r.get::<_, i64>(3)? as f64, r.get::<_, i64>(4)? as f64, r.get(2)?);
    }
    Ok(sweep::micros_to_run(sweep, reused, &model))
}

impl Store {
    /// What the database holds of `sweep`'s tasks, changing nothing (`ksweep
    /// check --db`).
    pub fn known(&self, sweep: &Sweep) -> Result<Known> {
        find(&self.conn, sweep, None)
    }

    /// The methods each configuration of the stored sweep `key` took from
    /// stored results when it was submitted.
    pub fn reused(&self, key: SweepKey, sweep: &Sweep) -> Result<Reused> {
        let mut taken = vec![MethodSet::EMPTY; sweep.configurations().len()];
        let mut stmt =
            self.conn.prepare_cached("SELECT config, taken FROM sweep_configs WHERE sweep = ?1 AND taken != 0")?;
        let rows = stmt.query_map([key.0], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
        for row in rows {
            let (config, bits) = row?;
            if let Some(slot) = taken.get_mut(config as usize) {
                *slot = MethodSet::from_bits(bits as u32);
            }
        }
        Ok(Reused::new(taken))
    }

    /// How many of sweep `key`'s results another sweep computed, per sweep,
    /// most first: a pass over its task list.
    pub fn reused_from(&self, key: SweepKey) -> Result<Vec<(SweepKey, u64)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT t.sweep, COUNT(*) FROM sweep_tasks st JOIN tasks t ON t.id = st.task
             WHERE st.sweep = ?1 AND t.sweep != ?1 GROUP BY t.sweep ORDER BY COUNT(*) DESC, t.sweep",
        )?;
        let from = stmt
            .query_map([key.0], |r| Ok((SweepKey(r.get(0)?), r.get::<_, i64>(1)? as u64)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(from)
    }

    /// How many of sweep `key`'s reruns disagreed with a stored result.
    pub fn conflict_count(&self, key: SweepKey) -> Result<u64> {
        let conflicts: i64 =
            self.conn.query_row("SELECT COUNT(*) FROM conflicts WHERE sweep = ?1", [key.0], |r| r.get(0))?;
        Ok(conflicts as u64)
    }
}

/// What a sweep submitted with `--no-reuse` takes: nothing, all of it
/// estimated.
pub(super) fn nothing_taken(conn: &Connection, sweep: &Sweep) -> Result<Known> {
    let reused = Reused::none();
    let micros_to_run = estimate_micros(conn, sweep, &reused)?;
    Ok(Known { reused, micros_to_run, ..Known::default() })
}

/// Takes into the new sweep `key` (inside the caller's transaction) every
/// task the database holds of it; returns what was taken.
pub(super) fn take_known(conn: &Connection, key: SweepKey, sweep: &Sweep) -> Result<Known> {
    let mut refs = Vec::new();
    let known = find(conn, sweep, Some(&mut refs))?;
    if insert_refs(conn, key, &refs)? != refs.len() as u64 {
        return Err(Error::Internal(format!("sweep key {} took a stored task twice", key.0)));
    }
    let mut mark = conn.prepare_cached("UPDATE sweep_configs SET taken = ?3 WHERE sweep = ?1 AND config = ?2")?;
    for config in 0..sweep.configurations().len() as u32 {
        let taken = known.reused.taken(config);
        if !taken.is_empty() {
            mark.execute(params![key.0, config, taken.bits()])?;
        }
    }
    conn.execute(
        "UPDATE sweeps SET tasks_done = ?2, successes = ?3, tasks_reused = ?2 WHERE key = ?1",
        params![key.0, known.tasks as i64, known.successes as i64],
    )?;
    Ok(known)
}

#[cfg(test)]
mod tests {
    use sweep::{Planner, Sweep};

    use super::*;
    use crate::ids::WorkerId;
    use crate::model::ResultRecord;

    fn spec(name: &str, methods: &str, ns: &str) -> Sweep {
        Sweep::parse(&format!(
            "name = \"{name}\"\nseed = 3\nstarts = 4\nmethods = {methods}\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = {ns}"
        ))
        .unwrap()
    }

    /// Every task of `sweep` the planner (with what it took) leaves to run,
    /// with made-up flags that depend only on the task's identity parts
    /// (so any sweep computing the same task reports the same).
    fn run_rest(store: &mut Store, key: SweepKey, sweep: &Sweep) -> u64 {
        let reused = store.reused(key, sweep).unwrap();
        let planner = Planner::reusing(sweep, &reused);
        let mut rows = Vec::new();
        for (config, entry) in sweep.configurations().iter().enumerate() {
            let config = config as u32;
            for (start_index, &cell) in planner.starts(config).iter().enumerate() {
                for j in planner.methods_to_run(config).indices() {
                    let method = sweep.methods()[j];
                    let success = (cell + entry.cells() + method.name().len() as u64).is_multiple_of(3);
                    rows.push(ResultRecord {
                        sweep: key,
                        config,
                        start_index: start_index as u64,
                        method: j as u32,
                        start_cell: cell,
                        success,
                        attempts: 1,
                        visited: if success { entry.cells() } else { 3 },
                        micros: 700,
                        worker: WorkerId(1),
                        outcome: if success { tour::Outcome::Tour } else { tour::Outcome::GaveUp },
                        computed_by: key,
                    });
                }
            }
        }
        store.record(&rows).unwrap();
        rows.len() as u64
    }

    #[test]
    fn a_widened_sweep_runs_only_its_new_tasks_and_ends_equal_to_a_fresh_one() {
        let mut store = Store::in_memory().unwrap();
        let first = spec("first", r#"["w", "aw"]"#, "[5, 6]");
        let (a, _) = store.insert_sweep(&first).unwrap();
        assert_eq!(run_rest(&mut store, a.key, &first), first.total_tasks(), "nothing to take at first");

        // One more board and one more method: 2 boards x 4 starts x mw, and the new board's 3 methods.
        let wide = spec("wide", r#"["w", "aw", "mw"]"#, "[5, 6, 7]");
        let known = store.known(&wide).unwrap();
        assert_eq!((known.tasks, known.from.clone()), (first.total_tasks(), vec![(a.key, first.total_tasks())]));
        let prior = sweep::micros_to_run(&wide, &known.reused, &sweep::CostModel::new());
        assert!(known.micros_to_run > 0.0 && known.micros_to_run != prior, "estimated from the stored times");
        let (b, taken) = store.insert_sweep_with(&wide, true).unwrap();
        assert_eq!(taken.unwrap().tasks, 16);
        assert_eq!((b.tasks_done, b.tasks_reused), (16, 16));
        let ran = run_rest(&mut store, b.key, &wide);
        assert_eq!(ran, 2 * 4 + 4 * 3, "exactly the new tasks");
        let b = store.record_of(b.key).unwrap();
        assert_eq!(b.tasks_done, b.tasks_total);

        // The same sweep in a fresh database: the same rows, task for task.
        let mut fresh = Store::in_memory().unwrap();
        let (f, _) = fresh.insert_sweep(&wide).unwrap();
        run_rest(&mut fresh, f.key, &wide);
        let flags = |s: &Store, key: SweepKey| -> Vec<(u32, u64, u32, u64, bool, u64)> {
            s.results_page(key, None, 1000)
                .unwrap()
                .iter()
                .map(|r| (r.config, r.start_index, r.method, r.start_cell, r.success, r.visited))
                .collect()
        };
        assert_eq!(flags(&store, b.key), flags(&fresh, f.key));
        assert_eq!(fresh.record_of(f.key).unwrap().successes, b.successes);
        let stored: i64 = store.conn.query_row("SELECT COUNT(*) FROM tasks", [], |r| r.get(0)).unwrap();
        assert_eq!(stored as u64, wide.total_tasks(), "each identity stored once");
        assert_eq!((store.reused_from(b.key).unwrap(), store.conflict_count(b.key).unwrap()), (vec![(a.key, 16)], 0));
    }

    #[test]
    fn a_fresh_database_estimates_from_the_priors() {
        let store = Store::in_memory().unwrap();
        let s = spec("first", r#"["w", "aw"]"#, "[5, 6]");
        let known = store.known(&s).unwrap();
        let prior = sweep::micros_to_run(&s, &sweep::Reused::none(), &sweep::CostModel::new());
        assert!(prior > 0.0);
        assert_eq!(known.micros_to_run, prior, "what `ksweep check` prints without a database");
    }

    #[test]
    fn no_reuse_reruns_everything_and_agreeing_reruns_are_no_conflict() {
        let mut store = Store::in_memory().unwrap();
        let first = spec("first", r#"["w"]"#, "[5, 6]");
        let (a, _) = store.insert_sweep(&first).unwrap();
        run_rest(&mut store, a.key, &first);
        let again = spec("again", r#"["w"]"#, "[5, 6]");
        let (b, taken) = store.insert_sweep_with(&again, false).unwrap();
        assert_eq!((taken.unwrap().tasks, b.tasks_done, b.reuse), (0, 0, false));
        assert_eq!(run_rest(&mut store, b.key, &again), again.total_tasks(), "every task runs");
        assert_eq!(store.record_of(b.key).unwrap().tasks_done, again.total_tasks());
        assert_eq!(store.conflict_count(b.key).unwrap(), 0, "the reruns agree");
    }

    #[test]
    fn a_rerun_that_disagrees_is_a_conflict_and_the_stored_result_stays() {
        let mut store = Store::in_memory().unwrap();
        let first = spec("first", r#"["w"]"#, "[5]");
        let (a, _) = store.insert_sweep(&first).unwrap();
        run_rest(&mut store, a.key, &first);
        let (b, _) = store.insert_sweep_with(&spec("again", r#"["w"]"#, "[5]"), false).unwrap();
        let mut row = store.results_page(a.key, None, 1).unwrap()[0];
        let stored = row.success;
        row.sweep = b.key;
        row.success = !row.success;
        row.visited = if row.success { 25 } else { 4 };
        assert_eq!(store.record(&[row]).unwrap(), 1, "the task counts for the rerunning sweep");
        assert_eq!(store.conflict_count(b.key).unwrap(), 1);
        assert_eq!(store.results_page(b.key, None, 1).unwrap()[0].success, stored, "the stored result stays");
    }

    #[test]
    fn results_of_another_method_version_are_not_taken() {
        let mut store = Store::in_memory().unwrap();
        let first = spec("first", r#"["w", "aw"]"#, "[5, 6]");
        let (a, _) = store.insert_sweep(&first).unwrap();
        run_rest(&mut store, a.key, &first);
        // As if `aw` had been computed by an engine whose aw was version 0.
        store.conn.execute("UPDATE methods SET identity = replace(identity, 'aw v1', 'aw v0')", []).unwrap();
        let again = spec("again", r#"["w", "aw"]"#, "[5, 6]");
        let known = store.known(&again).unwrap();
        assert_eq!(known.tasks, 8, "w only");
        assert_eq!(known.reused.taken(0), sweep::MethodSet::from_bits(0b01));
    }

    #[test]
    fn a_partly_stored_method_runs_again_whole() {
        let mut store = Store::in_memory().unwrap();
        let first = spec("first", r#"["w"]"#, "[5]");
        let (a, _) = store.insert_sweep(&first).unwrap();
        let mut rows = store.results_page(a.key, None, 10).unwrap();
        assert!(rows.is_empty());
        run_rest(&mut store, a.key, &first);
        rows = store.results_page(a.key, None, 10).unwrap();
        store.conn.execute("DELETE FROM tasks WHERE id = (SELECT MAX(id) FROM tasks)", []).unwrap();
        assert_eq!(store.known(&spec("again", r#"["w"]"#, "[5]")).unwrap().tasks, 0, "3 of 4 starts: not taken");
        assert_eq!(rows.len(), 4);
    }
}
