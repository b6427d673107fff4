//! SQLite persistence: sweeps, shards, workers and every task result.
//! Synchronous (rusqlite); the services call it from blocking tasks.
//! Every write is one transaction, so a coordinator killed at any point
//! restarts on a consistent database: results are committed or absent, and a
//! shard is marked done only after its results are.
//!
//! One file per concern: [`schema`] (tables, version), `lock` (one writer
//! per file), `open` (the checks opening a file makes), `sweeps`,
//! `shards`, `results`, `workers` and `aggregates`. The stored integers
//! are [`crate::codes`]; the records the scheduler shares,
//! [`crate::model`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::error::{Error, Result};

mod aggregates;
mod backup;
mod facts;
mod identities;
mod lock;
mod merge;
mod open;
mod parsed;
mod readers;
mod removal;
mod results;
mod reuse;
pub mod schema;
mod shards;
mod standings;
mod sweeps;
mod workers;

pub use crate::codes::{StoredOutcome, StoredShardState, SweepState, UnknownCode};
pub use crate::model::{NewShards, OpenShard, ResultRecord};
pub use aggregates::StoredCounts;
pub use backup::place_new;
pub use facts::{Fact, Facts};
pub use merge::Imported;
pub use parsed::ParsedSweeps;
pub use readers::Readers;
pub use reuse::Known;
pub use shards::FailedShard;
pub use sweeps::SweepRecord;
pub use workers::{WorkerRecord, WorkerTotals};

use lock::WriterLock;
use open::{check_shm_writable, damaged, database_file, immutable_uri, needs_immutable};

/// The database. Fields drop in order: the connection closes before the
/// lock is released and before a file this store created is removed.
pub struct Store {
    conn: Connection,
    _lock: Option<WriterLock>,
    created: Option<CreatedFile>,
    /// Its sweeps' specs, parsed once; shared with its [`Readers`].
    parsed: Arc<ParsedSweeps>,
    /// What opening it did to an older file, if anything.
    upgraded: Option<Upgrade>,
    /// How many `no-tour` results each board may have, so a batch counts
    /// its refuted starts only when they may cover it ([`facts::Bounds`]).
    refutations: facts::Bounds,
}

/// An older database brought up to date when it was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upgrade {
    /// Its version before; after, it is [`schema::SCHEMA_VERSION`].
    pub from: i64,
    /// The file as it was before, copied beside it.
    pub backup: PathBuf,
    /// What failed after the upgrade committed (recording this build as
    /// the file's writer): the upgrade stands, so it is said, not an error.
    pub warning: Option<String>,
}

/// A database file this store created: removed when the store is dropped
/// still holding nothing and never kept ([`Store::keep`]), so a coordinator
/// that fails to start leaves no empty database behind.
struct CreatedFile {
    path: PathBuf,
    remove: bool,
}

impl Drop for CreatedFile {
    fn drop(&mut self) {
        if self.remove {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let mut name = self.path.as_os_str().to_owned();
                name.push(suffix);
                let _ = std::fs::remove_file(PathBuf::from(name));
            }
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        // A writer folds the WAL into the file as it closes: SQLite does so
        // only for the last connection, and a reader still open (a `--db`
        // query in the same process) would leave every result in `-wal`,
        // so that copying the database file alone copied nothing.
        if self._lock.is_some() {
            let _ = self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
        if let Some(created) = &mut self.created {
            // Removed only when surely empty: no tables yet, or no sweep and
            // no worker in them. Any doubt (an error) keeps the file.
            let count = |sql: &str| self.conn.query_row(sql, [], |r| r.get::<_, i64>(0));
            created.remove = match count("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'") {
                Ok(0) => true,
                Ok(_) => {
                    matches!(count("SELECT (SELECT COUNT(*) FROM sweeps) + (SELECT COUNT(*) FROM workers)"), Ok(0))
                }
                Err(_) => false,
            };
        }
    }
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl Store {
    /// Opens (creating if needed) a database file in WAL mode, for writing:
    /// one writer per file (a second one is refused, naming the holder).
    /// A file created here and dropped still empty is removed again.
    pub fn open(path: &Path) -> Result<Store> {
        let existed = database_file(path, false)?;
        let lock = WriterLock::acquire(path)?;
        let conn = Connection::open(path).map_err(schema::foreign)?;
        // Armed by `Drop for Store` only, once it knows the file is empty.
        let created = (!existed).then(|| CreatedFile { path: path.to_path_buf(), remove: false });
        // From here on a failure drops `store`, which removes a new file.
        let mut store = Store::on(conn);
        (store._lock, store.created) = (Some(lock), created);
        if existed {
            check_shm_writable(path)?;
        }
        store.init(existed.then_some(path)).map_err(|e| damaged(path, e))?;
        Ok(store)
    }

    /// SQLite's quick check: a database whose pages are damaged is refused
    /// at start, with what SQLite found, instead of serving counters that
    /// no longer match its results.
    fn quick_check(&self) -> Result<()> {
        let mut stmt = self.conn.prepare("PRAGMA quick_check(5)")?;
        let found = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
        if found.len() == 1 && found[0] == "ok" {
            return Ok(());
        }
        Err(Error::Corrupt(format!("SQLite's quick_check found: {}", found.join("; "))))
    }

    /// Opens an existing database read-only (offline queries), checking it
    /// is a ksweep database of this version. A database in a directory this
    /// process cannot write (where SQLite cannot create its WAL index) is
    /// opened immutable: nothing can be writing it there.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        database_file(path, true)?;
        let store = match Store::open_read_only_unchecked(path) {
            // An older database is brought up to date as a writer would
            // (in place, after a backup), then read; where that cannot be
            // done (another process writes it, or the file is not
            // writable), a copy in memory is upgraded and read instead.
            Err(Error::SchemaOlder { found, .. }) => match Store::open(path) {
                Ok(upgraded) => {
                    drop(upgraded);
                    Store::open_read_only_unchecked(path)?
                }
                Err(why) => {
                    tracing::warn!(
                        db = %path.display(),
                        "cannot upgrade the database from schema version {found} in place ({why}); reading an \
                         upgraded copy in memory"
                    );
                    return Store::upgraded_copy(path);
                }
            },
            other => other?,
        };
        // Checked as a coordinator checks it at start, so an offline query
        // never answers from a damaged file as if it were whole.
        store.quick_check().map_err(|e| damaged(path, e))?;
        Ok(store)
    }

    /// Opens an existing database read-only as [`Store::open_read_only`]
    /// does, but never changes the file: an older one is read through a
    /// copy upgraded in memory, with no backup and nothing written. For the
    /// commands documented to change nothing (`check --db`, `exists --db`).
    pub fn open_unchanged(path: &Path) -> Result<Store> {
        database_file(path, true)?;
        let store = match Store::open_read_only_unchecked(path) {
            Err(Error::SchemaOlder { .. }) => return Store::upgraded_copy(path),
            other => other?,
        };
        store.quick_check().map_err(|e| damaged(path, e))?;
        Ok(store)
    }

    /// A copy in memory of an older database file, brought up to date.
    fn upgraded_copy(path: &Path) -> Result<Store> {
        let source = Store::open_read_only_unchecked_any(path)?;
        source.quick_check().map_err(|e| damaged(path, e))?;
        let mut conn = Connection::open_in_memory()?;
        rusqlite::backup::Backup::new(&source.conn, &mut conn)?.run_to_completion(
            4096,
            std::time::Duration::ZERO,
            None,
        )?;
        let found = schema::inspect(&conn)?;
        schema::migrate(&mut conn, found)?;
        Ok(Store::on(conn))
    }

    fn open_read_only_unchecked(path: &Path) -> Result<Store> {
        let store = Store::open_read_only_unchecked_any(path)?;
        schema::check(&store.conn)?;
        Ok(store)
    }

    /// Opens a file read-only without checking its version.
    fn open_read_only_unchecked_any(path: &Path) -> Result<Store> {
        let conn =
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                .map_err(schema::foreign)?;
        match schema::inspect(&conn) {
            Ok(_) => Ok(Store::on(conn)),
            Err(Error::Database(e)) if needs_immutable(&e) => {
                drop(conn);
                let conn = Connection::open_with_flags(
                    immutable_uri(path),
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )
                .map_err(schema::foreign)?;
                schema::inspect(&conn)?;
                Ok(Store::on(conn))
            }
            Err(e) => Err(e),
        }
    }

    /// A store on `conn` with nothing else yet: no writer lock, no file of
    /// its own to remove, nothing parsed or upgraded.
    fn on(conn: Connection) -> Store {
        Store {
            conn,
            _lock: None,
            created: None,
            parsed: Arc::default(),
            upgraded: None,
            refutations: Default::default(),
        }
    }

    /// A private in-memory database (tests, and a coordinator that keeps
    /// nothing).
    pub fn in_memory() -> Result<Store> {
        let mut store = Store::on(Connection::open_in_memory()?);
        store.init(None)?;
        Ok(store)
    }

    /// What opening did to an older file: its version then and the backup
    /// of it ([`Store::open`]); None for a file already current or new.
    pub fn upgraded(&self) -> Option<&Upgrade> {
        self.upgraded.as_ref()
    }

    /// True while a coordinator (or `ksweep run`) has the database file
    /// open for writing: an offline read of a sweep stored as running then
    /// knows whether anything runs it.
    pub fn is_served(path: &Path) -> bool {
        lock::writer_present(path)
    }

    /// The schema version of a database file and the build that last
    /// wrote it (where it says), read without changing it.
    pub fn schema_of(path: &Path) -> Result<(i64, Option<String>)> {
        database_file(path, true)?;
        let store = Store::open_read_only_unchecked_any(path)?;
        Ok((schema::version(&store.conn)?, schema::writer(&store.conn)))
    }

    /// What SQLite's quick check finds wrong with a database file (at most
    /// five problems), or None; read without changing the file. It reads
    /// every page, so it takes time in proportion to the file's size.
    pub fn damage_of(path: &Path) -> Result<Option<String>> {
        database_file(path, true)?;
        let store = Store::open_read_only_unchecked_any(path)?;
        match store.quick_check() {
            Ok(()) => Ok(None),
            Err(Error::Corrupt(found)) => Ok(Some(found)),
            // Pages so damaged that the check itself stops.
            Err(Error::Database(e)) if e.sqlite_error_code() == Some(ErrorCode::DatabaseCorrupt) => {
                Ok(Some(e.to_string()))
            }
            Err(e) => Err(e),
        }
    }

    /// The database is in use (a coordinator serves on it): keep a file
    /// this store created even if nothing is ever stored in it.
    pub fn keep(&mut self) {
        if let Some(mut created) = self.created.take() {
            created.remove = false;
        }
    }

    /// Records when a coordinator started on this database: the first
    /// write of a start, so a disk that refuses writes (full, read-only) is
    /// known before any worker or client meets it.
    pub fn note_start(&mut self) -> Result<()> {
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES ('started_ms', ?1) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [now_ms() as i64],
        )?;
        Ok(())
    }

    /// A stored sweep's spec, parsed once ([`ParsedSweeps`]).
    pub fn sweep_of(&self, record: &SweepRecord) -> Result<Arc<sweep::Sweep>> {
        self.parsed.of(record)
    }

    /// The specs parsed for this database, shared by its writer and readers.
    pub fn parsed(&self) -> &Arc<ParsedSweeps> {
        &self.parsed
    }

    /// The connection, for tests that break the database on purpose.
    #[cfg(test)]
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Sets the connection up, checks a file that `existing` names (its
    /// schema, then its pages) and brings its tables to this version:
    /// an older file is first copied beside it ([`backup::write`]).
    fn init(&mut self, existing: Option<&Path>) -> Result<()> {
        let conn = &mut self.conn;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(schema::foreign)?;
        // WAL + NORMAL: a commit survives a killed process (not a power cut).
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let found = schema::inspect(conn)?;
        if existing.is_some() {
            self.quick_check()?;
        }
        if let (schema::Found::Older(from), Some(path)) = (found, existing) {
            let backup = backup::write(&self.conn, path, from)?;
            // Said at warn: whichever command opened it, the user learns
            // their file changed and where its old copy is.
            tracing::warn!(
                db = %path.display(), backup = %backup.display(),
                "upgrading the database from schema version {from} to {}; its copy before is the backup",
                schema::SCHEMA_VERSION
            );
            self.upgraded = Some(Upgrade { from, backup, warning: None });
        }
        for step in schema::migrate(&mut self.conn, found)? {
            if existing.is_some() {
                tracing::info!("database schema {step}: done");
            }
        }
        let noted = schema::note_writer(&self.conn, &ksweep_proto::build::Build::current().to_string());
        match (noted, &mut self.upgraded) {
            // The upgrade committed: failing now would report it undone.
            (Err(e), Some(upgrade)) => {
                let what = format!("the upgrade is done, but recording this build as the file's writer failed: {e}");
                tracing::warn!("{what}");
                upgrade.warning = Some(what);
                Ok(())
            }
            (noted, _) => noted,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
