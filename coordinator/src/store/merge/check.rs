//! What a database to merge must hold before any of it is imported. Its
//! results become evidence (tables, existence facts, results later sweeps
//! take instead of running), so each one a sweep of the file refers to is
//! checked as a coordinator checks a worker's report
//! ([`sweep::Sweep::check_result`]), against that sweep's stored spec: the
//! task is one the spec plans (its configuration, method and start index,
//! at the cell the planner draws there) under the identities the spec
//! gives. A result no sweep refers to is refused: nothing checks it, and a
//! later sweep of its identity would take it. The first row that fails
//! refuses the whole file, named.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, Row};
use sweep::TaskSummary;
use sweep::{Planner, Sweep};

use crate::codes::StoredOutcome;
use crate::error::{Error, Result};

/// A sweep of the attached file `src`, as its stored spec says it is.
struct Source {
    id: String,
    name: String,
    sweep: Sweep,
    /// The file's key of each configuration's identity, by index (None
    /// until its `sweep_configs` row is read and checked).
    config_keys: Vec<Option<i64>>,
    /// The same for the methods.
    method_keys: Vec<Option<i64>>,
}

impl Source {
    /// `sweep 1a2b3c4d5e6f7a8b (quick)`.
    fn named(&self) -> String {
        format!("sweep {} ({})", self.id, self.name)
    }
}

/// Checks the attached database `src` (see the module's doc); refuses it
/// with [`Error::Refused`], naming the first row that fails.
pub(super) fn check_source(conn: &Connection) -> Result<()> {
    let mut sources = sweeps(conn)?;
    identities(conn, &mut sources)?;
    task_lists(conn, &sources)?;
    unreferenced(conn)
}

fn refuse(text: String) -> Error {
    Error::Refused(text)
}

/// Every sweep of the file, its spec parsed: one this build cannot parse
/// cannot be checked, and a spec that is not its sweep's id's is forged.
fn sweeps(conn: &Connection) -> Result<HashMap<i64, Source>> {
    let mut stmt = conn.prepare("SELECT key, id, name, spec FROM src.sweeps")?;
    let mut rows = stmt.query([])?;
    let mut sources = HashMap::new();
    while let Some(r) = rows.next()? {
        let (key, id, name, spec): (i64, String, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
        let sweep = Sweep::parse(&spec).map_err(|e| {
            refuse(format!(
                "sweep {id} ({name}): its stored spec does not parse with this build, so its results cannot be \
                 checked: {e}"
            ))
        })?;
        if sweep.id() != id {
            return Err(refuse(format!("sweep {id} ({name}): its stored spec is that of sweep {}", sweep.id())));
        }
        let (configs, methods) = (sweep.configurations().len(), sweep.methods().len());
        sources.insert(
            key,
            Source { id, name, sweep, config_keys: vec![None; configs], method_keys: vec![None; methods] },
        );
    }
    Ok(sources)
}

/// Each sweep's configuration and method identities as the file has them
/// must be the ones its spec gives (the identity text, and a
/// configuration's cells and moves, which time estimates read).
fn identities(conn: &Connection, sources: &mut HashMap<i64, Source>) -> Result<()> {
    let mut stmt = conn.prepare(
        "SELECT sc.sweep, sc.config, sc.config_key, c.identity, c.cells, c.moves
         FROM src.sweep_configs sc LEFT JOIN src.configs c ON c.key = sc.config_key",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        // A row of a sweep the file lacks is not imported.
        let Some(source) = sources.get_mut(&r.get::<_, i64>(0)?) else { continue };
        let named = source.named();
        let at = |why: String| refuse(format!("{named}: a configuration of the file: {why}"));
        let (config, key) = (int(r, 1, "config").map_err(at)?, int(r, 2, "config_key").map_err(at)?);
        let Some(index) = index(config, source.config_keys.len()) else {
            return Err(refuse(format!(
                "{named}: the file has a configuration {config}; its spec has {}",
                source.config_keys.len()
            )));
        };
        let entry = &source.sweep.configurations()[index];
        let stored: Option<String> = r.get(3)?;
        let (cells, moves) = (r.get::<_, Option<i64>>(4)?, r.get::<_, Option<i64>>(5)?);
        let want = entry.identity();
        if stored.as_deref() != Some(want.as_str())
            || cells != i64::try_from(entry.cells()).ok()
            || moves != Some(i64::from(entry.move_count()))
        {
            return Err(refuse(format!(
                "{named}: configuration {config} is `{}` ({} cells, {} moves) in the file, `{want}` ({} cells, {} \
                 moves) in its spec",
                stored.as_deref().unwrap_or("missing"),
                cells.map_or("no".into(), |c| c.to_string()),
                moves.map_or("no".into(), |m| m.to_string()),
                entry.cells(),
                entry.move_count()
            )));
        }
        source.config_keys[index] = Some(key);
    }
    let mut stmt = conn.prepare(
        "SELECT sm.sweep, sm.method, sm.method_key, m.identity, m.name
         FROM src.sweep_methods sm LEFT JOIN src.methods m ON m.key = sm.method_key",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let Some(source) = sources.get_mut(&r.get::<_, i64>(0)?) else { continue };
        let named = source.named();
        let at = |why: String| refuse(format!("{named}: a method of the file: {why}"));
        let (method, key) = (int(r, 1, "method").map_err(at)?, int(r, 2, "method_key").map_err(at)?);
        let Some(index) = index(method, source.method_keys.len()) else {
            return Err(refuse(format!(
                "{named}: the file has a method {method}; its spec has {}",
                source.method_keys.len()
            )));
        };
        let m = source.sweep.methods()[index];
        let (stored, name): (Option<String>, Option<String>) = (r.get(3)?, r.get(4)?);
        let want = source.sweep.method_identity(m);
        if stored.as_deref() != Some(want.as_str()) || name.as_deref() != Some(m.name()) {
            return Err(refuse(format!(
                "{named}: method {method} is `{}` in the file, `{want}` in its spec",
                stored.as_deref().unwrap_or("missing")
            )));
        }
        source.method_keys[index] = Some(key);
    }
    Ok(())
}

/// Every task of every sweep: the spec's, at the spec's start, of the
/// identities checked above, and a result the engine can give.
fn task_lists(conn: &Connection, sources: &HashMap<i64, Source>) -> Result<()> {
    let mut stmt = conn.prepare(
        "SELECT st.sweep, st.config, st.start_index, st.method, st.task, t.id, t.config_key, t.method_key,
                t.start_cell, t.success, t.attempts, t.visited, t.micros, t.outcome
         FROM src.sweep_tasks st LEFT JOIN src.tasks t ON t.id = st.task",
    )?;
    let mut rows = stmt.query([])?;
    let mut starts = Starts::default();
    while let Some(r) = rows.next()? {
        let sweep_key: i64 = r.get(0)?;
        // A row of a sweep the file lacks is not imported.
        let Some(source) = sources.get(&sweep_key) else { continue };
        let at = |why: String| refuse(format!("{}: a task of the file: {why}", source.named()));
        let config = int(r, 1, "config").map_err(at)?;
        let (start_index, method) = (int(r, 2, "start_index").map_err(at)?, int(r, 3, "method").map_err(at)?);
        let (Some(c), Some(m)) = (index(config, source.config_keys.len()), index(method, source.method_keys.len()))
        else {
            return Err(at(format!(
                "configuration {config}, method {method}: its spec has {} configurations and {} methods",
                source.config_keys.len(),
                source.method_keys.len()
            )));
        };
        let planned = starts.of(sweep_key, source, c);
        let method = source.sweep.methods()[m];
        let checked = (|| {
            let task = int(r, 4, "task")?;
            if matches!(r.get_ref(5), Ok(ValueRef::Null) | Err(_)) {
                return Err(format!("its result {task} is not in the file"));
            }
            let (config_key, method_key) = (int(r, 6, "config_key")?, int(r, 7, "method_key")?);
            if Some(config_key) != source.config_keys[c] || Some(method_key) != source.method_keys[m] {
                return Err(format!("its result {task} is of another configuration or method"));
            }
            let Some(want) = usize::try_from(start_index).ok().and_then(|i| planned.get(i)) else {
                return Err(format!("the spec draws {} starts there", planned.len()));
            };
            let cell = int(r, 8, "start_cell")?;
            if u64::try_from(cell).ok() != Some(*want) {
                return Err(format!("the spec's start {start_index} is cell {want}"));
            }
            let result = task_summary(r, 9)?;
            source
                .sweep
                .check_result(c as u32, *want, method, &result)
                .map_err(|why| format!("it cannot be a result of {}: {why}", method.name()))
        })();
        // Described only when refused: most files have every row right.
        checked.map_err(|why| {
            let cell = r.get_ref(8).ok().and_then(|v| v.as_i64().ok());
            refuse(format!(
                "{}, `{}`, `{}`, start cell {} (configuration {c}, start {start_index}, method {m}): {why}",
                source.named(),
                source.sweep.configurations()[c].identity(),
                source.sweep.method_identity(method),
                cell.map_or("missing".into(), |c| c.to_string())
            ))
        })?;
    }
    Ok(())
}

/// The planner's start cells of one (sweep, configuration), kept while the
/// rows are of it: they come in the table's order, which is theirs.
#[derive(Default)]
struct Starts {
    at: Option<(i64, usize)>,
    cells: Arc<Vec<u64>>,
}

impl Starts {
    fn of(&mut self, sweep_key: i64, source: &Source, config: usize) -> Arc<Vec<u64>> {
        if self.at != Some((sweep_key, config)) {
            self.cells = Planner::new(&source.sweep).starts(config as u32);
            self.at = Some((sweep_key, config));
        }
        self.cells.clone()
    }
}

/// A result no sweep of the file refers to (none does in a file ksweep
/// wrote: `ksweep rm` removes a sweep's sole results with it).
fn unreferenced(conn: &Connection) -> Result<()> {
    let found: Option<(i64, Option<String>, Option<String>, String)> = conn
        .query_row(
            "SELECT t.id, c.identity, m.identity, CAST(t.start_cell AS TEXT) FROM src.tasks t
             LEFT JOIN src.configs c ON c.key = t.config_key LEFT JOIN src.methods m ON m.key = t.method_key
             WHERE t.id NOT IN (SELECT st.task FROM src.sweep_tasks st JOIN src.sweeps s ON s.key = st.sweep)
             LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    match found {
        None => Ok(()),
        Some((id, config, method, cell)) => Err(refuse(format!(
            "result {id}, `{}`, `{}`, start cell {cell}: no sweep of the file refers to it, so nothing checks it \
             and a later sweep of its identity would take it",
            config.as_deref().unwrap_or("no configuration"),
            method.as_deref().unwrap_or("no method")
        ))),
    }
}

/// The flags and time of a task row from column `first` on (success,
/// attempts, visited, micros, outcome), each in the range its type has:
/// a negative or oversized integer is refused, never wrapped.
fn task_summary(r: &Row<'_>, first: usize) -> std::result::Result<TaskSummary, String> {
    let success = match int(r, first, "success")? {
        0 => false,
        1 => true,
        other => return Err(format!("success {other} is neither 0 nor 1")),
    };
    let attempts = int(r, first + 1, "attempts")?;
    let attempts = u32::try_from(attempts).map_err(|_| format!("attempts {attempts} is outside 0..={}", u32::MAX))?;
    let unsigned = |i: usize, name: &str| -> std::result::Result<u64, String> {
        let v = int(r, i, name)?;
        u64::try_from(v).map_err(|_| format!("{name} {v} is negative"))
    };
    let (visited, micros) = (unsigned(first + 2, "visited")?, unsigned(first + 3, "micros")?);
    let code = int(r, first + 4, "outcome")?;
    let outcome = StoredOutcome::try_from(code).map_err(|e| e.to_string())?.0;
    Ok(TaskSummary { success, outcome, attempts, visited, micros })
}

/// Column `i` (named `name`) as an integer: SQLite keeps whatever a file
/// was given, text or a real where a count belongs.
fn int(r: &Row<'_>, i: usize, name: &str) -> std::result::Result<i64, String> {
    match r.get_ref(i) {
        Ok(ValueRef::Integer(v)) => Ok(v),
        Ok(other) => Err(format!("{name} is {}, not an integer", other.data_type())),
        Err(e) => Err(format!("{name}: {e}")),
    }
}

/// `value` as an index below `len`.
fn index(value: i64, len: usize) -> Option<usize> {
    usize::try_from(value).ok().filter(|&i| i < len)
}
