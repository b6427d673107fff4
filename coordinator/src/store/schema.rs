//! The database's tables, as the ordered list of steps that made them.
//!
//! A new database runs every step; an older one (a file an earlier release
//! wrote) runs the steps it lacks, in one transaction, after a backup copy
//! of it was written beside it ([`super::Store::open`]); a newer one is
//! refused, naming both versions and the release that wrote it. The
//! version lives in SQLite's `user_version` (rusqlite_migration's) and, for
//! releases before the migrations, in `meta.schema`, which every step
//! keeps equal so an older build refuses a newer file by name too.
//!
//! A released step is never edited: a change to a table is a new step at
//! the end, a fixture database of the version before it under
//! `tests/fixtures/schema/` and a line in docs/database.md.

use rusqlite::{Connection, ErrorCode, OptionalExtension};
use rusqlite_migration::{Migrations, M};

use crate::error::{Error, Result};

/// The version this build writes: the number of steps below.
pub const SCHEMA_VERSION: i64 = 6;

/// Version 1 (the first release): sweeps, their shards, the workers and
/// every task's result.
const V1: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO meta (key, value) VALUES ('schema', 1);
CREATE TABLE sweeps (
    key INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    spec TEXT NOT NULL,
    state INTEGER NOT NULL,
    tasks_total INTEGER NOT NULL,
    tasks_done INTEGER NOT NULL DEFAULT 0,
    successes INTEGER NOT NULL DEFAULT 0,
    configurations INTEGER NOT NULL,
    impossible INTEGER NOT NULL,
    cursor_config INTEGER NOT NULL DEFAULT 0,
    cursor_start INTEGER NOT NULL DEFAULT 0,
    shards_failed INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created_ms INTEGER NOT NULL
);
CREATE TABLE shards (
    id INTEGER PRIMARY KEY,
    sweep INTEGER NOT NULL REFERENCES sweeps(key),
    config INTEGER NOT NULL,
    start_lo INTEGER NOT NULL,
    start_hi INTEGER NOT NULL,
    state INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    error TEXT
);
CREATE INDEX shards_by_state ON shards (sweep, state);
CREATE TABLE workers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    threads INTEGER NOT NULL,
    registered_ms INTEGER NOT NULL
);
CREATE TABLE results (
    sweep INTEGER NOT NULL,
    config INTEGER NOT NULL,
    start_index INTEGER NOT NULL,
    method INTEGER NOT NULL,
    start_cell INTEGER NOT NULL,
    success INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    visited INTEGER NOT NULL,
    micros INTEGER NOT NULL,
    worker INTEGER NOT NULL,
    PRIMARY KEY (sweep, config, start_index, method)
) WITHOUT ROWID;
";

/// Version 2: each result's outcome (tour, no tour proven, gave up). The
/// methods of version 1 were heuristics only, which never prove there is
/// no tour: a success was a tour, a failure giving up.
const V2: &str = "
ALTER TABLE results ADD COLUMN outcome INTEGER NOT NULL DEFAULT 3;
UPDATE results SET outcome = 1 WHERE success = 1;
UPDATE meta SET value = 2 WHERE key = 'schema';
";

/// Version 3: when a sweep first stored a result and when it finished;
/// what each worker ran (ksweep version and build, host, CPU model and the
/// CPU features its engine used); and the
/// text facts of the database itself (which build last wrote it).
const V3: &str = "
ALTER TABLE sweeps ADD COLUMN first_result_ms INTEGER;
ALTER TABLE sweeps ADD COLUMN finished_ms INTEGER;
ALTER TABLE workers ADD COLUMN version TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN build TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN cpu TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN features TEXT NOT NULL DEFAULT '';
CREATE TABLE about (key TEXT PRIMARY KEY, value TEXT NOT NULL);
UPDATE meta SET value = 3 WHERE key = 'schema';
";

/// Version 4: results stored once per task identity (docs/identity.md),
/// which sweeps refer to, so a sweep takes what an earlier one computed.
/// `configs` and `methods` hold the identities; `sweep_configs` and
/// `sweep_methods` say which a sweep's indices are (and which methods a
/// configuration took whole from stored results when it was submitted);
/// `tasks` holds each result once, with the sweep it was computed for;
/// `sweep_tasks` is each sweep's task list; `conflicts`, a rerun that
/// disagreed with the stored result. `results` becomes a view of the old
/// columns (plus `source`). The steps' hook ([`identities_v4`]) fills the
/// new tables from each sweep's spec and the old results.
const V4: &str = "
CREATE TABLE configs (
    key INTEGER PRIMARY KEY,
    identity TEXT NOT NULL UNIQUE,
    cells INTEGER NOT NULL,
    moves INTEGER NOT NULL
);
CREATE TABLE methods (
    key INTEGER PRIMARY KEY,
    identity TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL
);
CREATE TABLE sweep_configs (
    sweep INTEGER NOT NULL,
    config INTEGER NOT NULL,
    config_key INTEGER NOT NULL REFERENCES configs(key),
    taken INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (sweep, config)
) WITHOUT ROWID;
CREATE TABLE sweep_methods (
    sweep INTEGER NOT NULL,
    method INTEGER NOT NULL,
    method_key INTEGER NOT NULL REFERENCES methods(key),
    PRIMARY KEY (sweep, method)
) WITHOUT ROWID;
CREATE TABLE tasks (
    id INTEGER PRIMARY KEY,
    config_key INTEGER NOT NULL,
    method_key INTEGER NOT NULL,
    start_cell INTEGER NOT NULL,
    success INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    visited INTEGER NOT NULL,
    micros INTEGER NOT NULL,
    worker INTEGER NOT NULL,
    outcome INTEGER NOT NULL,
    sweep INTEGER NOT NULL,
    UNIQUE (config_key, method_key, start_cell)
);
CREATE TABLE sweep_tasks (
    sweep INTEGER NOT NULL,
    config INTEGER NOT NULL,
    start_index INTEGER NOT NULL,
    method INTEGER NOT NULL,
    task INTEGER NOT NULL,
    PRIMARY KEY (sweep, config, start_index, method)
) WITHOUT ROWID;
CREATE TABLE conflicts (
    id INTEGER PRIMARY KEY,
    sweep INTEGER NOT NULL,
    config INTEGER NOT NULL,
    start_index INTEGER NOT NULL,
    method INTEGER NOT NULL,
    task INTEGER NOT NULL,
    success INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    visited INTEGER NOT NULL,
    outcome INTEGER NOT NULL,
    worker INTEGER NOT NULL,
    at_ms INTEGER NOT NULL
);
CREATE INDEX conflicts_by_sweep ON conflicts (sweep);
ALTER TABLE sweeps ADD COLUMN reuse INTEGER NOT NULL DEFAULT 1;
ALTER TABLE sweeps ADD COLUMN tasks_reused INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results RENAME TO results_v3;
UPDATE meta SET value = 4 WHERE key = 'schema';
";

/// Version 5: existence facts (docs/identity.md#existence-facts), what
/// stored results prove about open (`kind` 0) and closed (1) tours of a
/// board and move set: `verdict` 1 a tour exists, 2 none does, with the
/// evidence as text. `configs.board_moves` is each configuration's key
/// ([`sweep::board_moves`]); the hook ([`facts_v5`]) fills it and derives
/// the facts of the stored results.
const V5: &str = "
ALTER TABLE configs ADD COLUMN board_moves TEXT;
CREATE INDEX configs_by_board_moves ON configs (board_moves);
CREATE TABLE facts (
    board_moves TEXT NOT NULL,
    kind INTEGER NOT NULL,
    verdict INTEGER NOT NULL,
    evidence TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    PRIMARY KEY (board_moves, kind)
) WITHOUT ROWID;
UPDATE meta SET value = 5 WHERE key = 'schema';
";

/// Version 6: a sweep's wall time as the sum of its runs, not the span
/// from its first result to its end (which counted the days it sat
/// cancelled or stopped): `ran_ms`, the wall time of its ended runs;
/// `run_from_ms`, when its current run stored its first result;
/// `last_result_ms`, when it last stored one (the end of a run whose
/// process stopped without ending the sweep). An ended sweep keeps the
/// span it had as its one run.
const V6: &str = "
ALTER TABLE sweeps ADD COLUMN ran_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sweeps ADD COLUMN run_from_ms INTEGER;
ALTER TABLE sweeps ADD COLUMN last_result_ms INTEGER;
UPDATE sweeps SET ran_ms = MAX(finished_ms - first_result_ms, 0)
    WHERE finished_ms IS NOT NULL AND first_result_ms IS NOT NULL;
UPDATE sweeps SET run_from_ms = first_result_ms WHERE finished_ms IS NULL;
UPDATE meta SET value = 6 WHERE key = 'schema';
";

/// The view that keeps `results`' columns readable as before version 4.
const RESULTS_VIEW: &str = "
CREATE VIEW results AS
SELECT st.sweep AS sweep, st.config AS config, st.start_index AS start_index, st.method AS method,
       t.start_cell AS start_cell, t.success AS success, t.attempts AS attempts, t.visited AS visited,
       t.micros AS micros, t.worker AS worker, t.outcome AS outcome, t.sweep AS source
FROM sweep_tasks st JOIN tasks t ON t.id = st.task;
";

/// Every step, in order, each with what it does for the log.
fn steps() -> [(&'static str, &'static str); SCHEMA_VERSION as usize] {
    [
        (V1, "sweeps, shards, workers and results"),
        (V2, "each result's outcome"),
        (V3, "sweep times, worker provenance, the database's writer"),
        (V4, "results stored once per task identity, shared by sweeps"),
        (V5, "existence facts per board and move set, from the stored results"),
        (V6, "a sweep's wall time summed over its runs"),
    ]
}

fn migrations() -> Migrations<'static> {
    Migrations::new(
        steps()
            .into_iter()
            .enumerate()
            .map(|(i, (sql, what))| match i + 1 {
                4 => M::up_with_hook(sql, |tx: &rusqlite::Transaction| identities_v4(tx)).comment(what),
                5 => M::up_with_hook(sql, |tx: &rusqlite::Transaction| facts_v5(tx)).comment(what),
                _ => M::up(sql).comment(what),
            })
            .collect(),
    )
}

/// Version 4's hook: every stored sweep's identities (from its spec; a
/// spec this build cannot parse gets identities of its own, never shared),
/// then its results moved into `tasks` (the earliest sweep's result where
/// two agree on an identity; a disagreement kept in `conflicts`) and
/// `sweep_tasks`, then the view in place of the old table.
fn identities_v4(tx: &rusqlite::Transaction) -> rusqlite_migration::HookResult {
    let sweeps: Vec<(i64, String, String)> = tx
        .prepare("SELECT key, id, spec FROM sweeps ORDER BY key")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (key, id, spec) in sweeps {
        match sweep::Sweep::parse(&spec) {
            Ok(sweep) => super::identities::register(tx, key, &sweep)?,
            Err(e) => {
                tracing::warn!(sweep = %id, error = %e, "a stored spec this build cannot parse: its results are kept but not shared");
                super::identities::register_unparsed(tx, key, &id)?;
            }
        }
    }
    tx.execute_batch(
        "
        INSERT OR IGNORE INTO tasks
            (config_key, method_key, start_cell, success, attempts, visited, micros, worker, outcome, sweep)
        SELECT c.config_key, m.method_key, r.start_cell, r.success, r.attempts, r.visited, r.micros, r.worker,
               r.outcome, r.sweep
        FROM results_v3 r
        JOIN sweep_configs c ON c.sweep = r.sweep AND c.config = r.config
        JOIN sweep_methods m ON m.sweep = r.sweep AND m.method = r.method
        ORDER BY r.sweep, r.config, r.start_index, r.method;
        INSERT INTO sweep_tasks (sweep, config, start_index, method, task)
        SELECT r.sweep, r.config, r.start_index, r.method, t.id
        FROM results_v3 r
        JOIN sweep_configs c ON c.sweep = r.sweep AND c.config = r.config
        JOIN sweep_methods m ON m.sweep = r.sweep AND m.method = r.method
        JOIN tasks t ON t.config_key = c.config_key AND t.method_key = m.method_key AND t.start_cell = r.start_cell;
        INSERT INTO conflicts
            (sweep, config, start_index, method, task, success, attempts, visited, outcome, worker, at_ms)
        SELECT r.sweep, r.config, r.start_index, r.method, t.id, r.success, r.attempts, r.visited, r.outcome,
               r.worker, 0
        FROM results_v3 r
        JOIN sweep_configs c ON c.sweep = r.sweep AND c.config = r.config
        JOIN sweep_methods m ON m.sweep = r.sweep AND m.method = r.method
        JOIN tasks t ON t.config_key = c.config_key AND t.method_key = m.method_key AND t.start_cell = r.start_cell
        WHERE NOT (t.success = r.success AND t.attempts = r.attempts AND t.visited = r.visited
                   AND t.outcome = r.outcome);
        DROP TABLE results_v3;
        ",
    )?;
    tx.execute_batch(RESULTS_VIEW)?;
    // Counters as the view counts them: a sweep that disagreed with an
    // earlier one now shows the earlier result, as every table will.
    tx.execute_batch(
        "UPDATE sweeps SET
             tasks_done = (SELECT COUNT(*) FROM sweep_tasks st WHERE st.sweep = sweeps.key),
             successes = (SELECT COALESCE(SUM(t.success), 0) FROM sweep_tasks st JOIN tasks t ON t.id = st.task
                          WHERE st.sweep = sweeps.key);",
    )?;
    let conflicts: i64 = tx.query_row("SELECT COUNT(*) FROM conflicts", [], |r| r.get(0))?;
    if conflicts > 0 {
        tracing::error!(
            conflicts,
            "stored sweeps disagree on the results of some tasks of one identity: the earliest sweep's are kept, \
             the others listed in the table `conflicts` (a bug, or a method changed without a new version)"
        );
    }
    Ok(())
}

/// Version 5's hook: every configuration's key, and the facts its stored
/// results prove.
fn facts_v5(tx: &rusqlite::Transaction) -> rusqlite_migration::HookResult {
    super::facts::derive_all(tx)?;
    Ok(())
}

/// What a database file holds, as far as its schema goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// No tables at all: a new file.
    Empty,
    /// A ksweep database of this version.
    Current,
    /// A ksweep database of an older version, which the steps after it
    /// bring up to date.
    Older(i64),
}

/// Says what the database holds: refuses a foreign file, and a newer
/// version naming the build that wrote it.
pub(super) fn inspect(conn: &Connection) -> Result<Found> {
    let tables: i64 =
        conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0)).map_err(foreign)?;
    if tables == 0 {
        return Ok(Found::Empty);
    }
    let version = version(conn)?;
    match version {
        v if v == SCHEMA_VERSION => Ok(Found::Current),
        v if (1..SCHEMA_VERSION).contains(&v) => Ok(Found::Older(v)),
        v if v > SCHEMA_VERSION => {
            Err(Error::SchemaNewer { found: v, supported: SCHEMA_VERSION, writer: writer(conn) })
        }
        v => Err(Error::NotADatabase(format!("it has schema version {v}"))),
    }
}

/// The stored version: `user_version`, or `meta.schema` for a file of a
/// release before the migrations (which left `user_version` at 0).
pub(super) fn version(conn: &Connection) -> Result<i64> {
    let user = version_in_header(conn)?;
    if user != 0 {
        return Ok(user);
    }
    let meta: Option<i64> =
        conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).optional().map_err(foreign)?;
    meta.ok_or_else(|| Error::NotADatabase("it has no schema version".into()))
}

fn version_in_header(conn: &Connection) -> Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(foreign)
}

/// The build that last wrote the database, where it says (version 3 on).
pub(super) fn writer(conn: &Connection) -> Option<String> {
    conn.query_row("SELECT value FROM about WHERE key = 'written_by'", [], |r| r.get(0)).optional().ok().flatten()
}

/// Brings a database that [`inspect`] found empty or older up to this
/// version, in one transaction: a failing step leaves it as it was.
/// Returns the steps it ran, for the log.
pub(super) fn migrate(conn: &mut Connection, found: Found) -> Result<Vec<String>> {
    let from = match found {
        Found::Current => return Ok(Vec::new()),
        Found::Empty => 0,
        Found::Older(v) => v,
    };
    // A file of a release before the migrations holds its version in
    // `meta` only: adopt it (the same fact in SQLite's header; harmless if
    // a step below then fails and rolls back).
    if from > 0 && version_in_header(conn)? == 0 {
        conn.pragma_update(None, "user_version", from)?;
    }
    // Every missing step in one transaction (rusqlite_migration's).
    migrations().to_latest(conn)?;
    Ok(steps()[from as usize..]
        .iter()
        .enumerate()
        .map(|(i, (_, what))| format!("version {}: {what}", from as usize + i + 1))
        .collect())
}

/// Records the build that last opened the database for writing, which a
/// newer database's refusal names.
pub(super) fn note_writer(conn: &Connection, writer: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO about (key, value) VALUES ('written_by', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [writer],
    )?;
    Ok(())
}

/// Checks that the database is a ksweep database of this version (a
/// read-only open, which cannot migrate).
pub(super) fn check(conn: &Connection) -> Result<()> {
    match inspect(conn)? {
        Found::Current => Ok(()),
        Found::Empty => Err(Error::NotADatabase("it has no tables".into())),
        Found::Older(found) => Err(Error::SchemaOlder { found, want: SCHEMA_VERSION }),
    }
}

/// A file SQLite cannot read, or one without our tables, is not ours.
pub(super) fn foreign(e: rusqlite::Error) -> Error {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => Error::NotADatabase("not an SQLite database".into()),
        Some(ErrorCode::DatabaseCorrupt) => Error::NotADatabase("damaged".into()),
        _ if e.to_string().starts_with("no such table") => Error::NotADatabase(e.to_string()),
        _ => Error::Database(e),
    }
}

impl From<rusqlite_migration::Error> for Error {
    fn from(e: rusqlite_migration::Error) -> Error {
        match e {
            rusqlite_migration::Error::RusqliteError { err, .. } => Error::Migration(err.to_string()),
            other => Error::Migration(other.to_string()),
        }
    }
}

/// Makes a database as a release of schema `version` before the
/// migrations made it: the steps up to it, `user_version` left at 0.
#[cfg(test)]
pub(super) fn create_as_released(conn: &mut Connection, version: i64) {
    for (sql, _) in &steps()[..version as usize] {
        conn.execute_batch(sql).expect("a released step runs");
    }
    if version >= 4 {
        let tx = conn.transaction().expect("a transaction");
        identities_v4(&tx).expect("version 4's hook runs");
        tx.commit().expect("committed");
    }
    if version >= 5 {
        let tx = conn.transaction().expect("a transaction");
        facts_v5(&tx).expect("version 5's hook runs");
        tx.commit().expect("committed");
    }
}

/// Brings a database [`create_as_released`] made up to `version` by the
/// steps after it, as the release of `version` would have on opening it.
#[cfg(test)]
pub(super) fn upgrade_as_released(conn: &mut Connection, version: i64) {
    let from = self::version(conn).expect("a ksweep database");
    conn.pragma_update(None, "user_version", from).expect("the version adopted");
    migrations().to_version(conn, version as usize).expect("the steps run");
}
