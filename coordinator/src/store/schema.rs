//! The database's tables and version: created on a new file, checked on
//! every open (read-only ones included), so a foreign or newer file is
//! refused with a clear error instead of misread.

use rusqlite::{Connection, ErrorCode, OptionalExtension};

use crate::error::{Error, Result};

/// Bumped whenever a table changes; a database of another version is refused.
pub(super) const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sweeps (
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
CREATE TABLE IF NOT EXISTS shards (
    id INTEGER PRIMARY KEY,
    sweep INTEGER NOT NULL REFERENCES sweeps(key),
    config INTEGER NOT NULL,
    start_lo INTEGER NOT NULL,
    start_hi INTEGER NOT NULL,
    state INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    error TEXT
);
CREATE INDEX IF NOT EXISTS shards_by_state ON shards (sweep, state);
CREATE TABLE IF NOT EXISTS workers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    threads INTEGER NOT NULL,
    registered_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
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
    outcome INTEGER NOT NULL,
    PRIMARY KEY (sweep, config, start_index, method)
) WITHOUT ROWID;
";

/// Creates the tables of an empty database, or checks an existing one is
/// ours and of this version.
pub(super) fn create_or_check(conn: &Connection) -> Result<()> {
    let tables: i64 =
        conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0)).map_err(foreign)?;
    if tables == 0 {
        conn.execute_batch(SCHEMA)?;
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?1)", [SCHEMA_VERSION])?;
        return Ok(());
    }
    check(conn)?;
    conn.execute_batch(SCHEMA)?;
    Ok(())
}

/// Checks that the database is a ksweep database of this version.
pub(super) fn check(conn: &Connection) -> Result<()> {
    let version: Option<i64> =
        conn.query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0)).optional().map_err(foreign)?;
    match version {
        None => Err(Error::NotADatabase("it has no schema version".into())),
        Some(v) if v != SCHEMA_VERSION => Err(Error::SchemaVersion { found: v, want: SCHEMA_VERSION }),
        Some(_) => Ok(()),
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
