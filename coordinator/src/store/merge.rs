//! Joining databases computed apart (`ksweep merge`): a laptop's run and a
//! cluster's, or two halves of one sweep. Every result of a database is
//! checked before any of it is imported, as a worker's are ([`check`]).
//! Identities are matched by their text (docs/identity.md), never by key;
//! a task both hold is checked to agree, and where it does not, the result
//! already here stays and the disagreement is listed in `conflicts`:
//! nothing is overwritten.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::Store;
use crate::error::Result;

mod check;
mod sweeps;
mod tasks;

/// Conflicts described in an [`Imported`], at most.
const SAMPLES: usize = 5;

/// What importing one database did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    /// Sweeps this database did not have.
    pub sweeps_new: u64,
    /// Sweeps it had (the same spec): their task lists were joined.
    pub sweeps_joined: u64,
    /// Results of identities it lacked.
    pub tasks_new: u64,
    /// Results it held already, with the same flags.
    pub tasks_agreeing: u64,
    /// Results it held with other flags: its own stayed.
    pub tasks_conflicting: u64,
    /// The first few conflicts, for people.
    pub conflicts: Vec<String>,
    /// Workers added (every registration is kept, with a new id).
    pub workers: u64,
}

impl Imported {
    /// Sweeps the imported database held.
    pub fn sweeps(&self) -> u64 {
        self.sweeps_new + self.sweeps_joined
    }

    /// Results the imported database held (each identity once).
    pub fn tasks(&self) -> u64 {
        self.tasks_new + self.tasks_agreeing + self.tasks_conflicting
    }

    /// Adds another import's counts and samples (up to the limit): the
    /// total of several inputs.
    pub fn add(&mut self, other: &Imported) {
        self.sweeps_new += other.sweeps_new;
        self.sweeps_joined += other.sweeps_joined;
        self.tasks_new += other.tasks_new;
        self.tasks_agreeing += other.tasks_agreeing;
        self.tasks_conflicting += other.tasks_conflicting;
        self.workers += other.workers;
        let room = SAMPLES.saturating_sub(self.conflicts.len());
        self.conflicts.extend(other.conflicts.iter().take(room).cloned());
    }
}

/// A consistent copy of a database, taken with `VACUUM INTO` (so a
/// coordinator may go on writing the original), removed when dropped.
struct Snapshot(PathBuf);

impl Drop for Snapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Copies `from` (brought up to date as every read does, in place or in
/// memory) to a new file in the temporary directory.
fn snapshot(from: &Path) -> Result<Snapshot> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "ksweep-merge-{}-{}.db",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    // A leftover of a killed merge whose pid this process now has.
    let _ = std::fs::remove_file(&path);
    let snap = Snapshot(path);
    let source = Store::open_read_only(from)?;
    source.conn.execute("VACUUM INTO ?1", [snap.0.to_string_lossy()])?;
    Ok(snap)
}

impl Store {
    /// Imports every worker, sweep and result of the database `from`, in
    /// one transaction: all of it or nothing. A result a worker could not
    /// have reported for its sweep's task, or one no sweep refers to,
    /// refuses the whole file ([`Error::Refused`], naming the row). `from`
    /// is read from a copy (`snapshot`) and never changed, unless it is
    /// older and this read upgrades it as every read does.
    ///
    /// [`Error::Refused`]: crate::error::Error::Refused
    pub fn import(&mut self, from: &Path) -> Result<Imported> {
        let snap = snapshot(from)?;
        self.conn.execute("ATTACH DATABASE ?1 AS src", [snap.0.to_string_lossy()])?;
        let imported = self.import_attached();
        // Results merged in are not in the bounds of refuted starts.
        self.refutations = Default::default();
        let detached = self.conn.execute("DETACH DATABASE src", []);
        let imported = imported?;
        detached?;
        Ok(imported)
    }

    fn import_attached(&mut self) -> Result<Imported> {
        let mut out = Imported::default();
        let tx = self.conn.transaction()?;
        check::check_source(&tx)?;
        let max = |sql: &str| -> rusqlite::Result<i64> { tx.query_row(sql, [], |r| r.get(0)) };
        // New ids above every id here, so none is ever reused.
        let worker_offset = max("SELECT COALESCE(MAX(id), 0) FROM main.workers")?;
        let shard_offset = max("SELECT COALESCE(MAX(id), 0) FROM main.shards")?;
        out.workers = tx.execute(
            "INSERT INTO main.workers (id, name, threads, registered_ms, version, build, host, cpu, features)
             SELECT id + ?1, name, threads, registered_ms, version, build, host, cpu, features FROM src.workers",
            [worker_offset],
        )? as u64;
        // The maps are keyed: unkeyed, SQLite looked `main.tasks` up by
        // configuration alone and scanned its tasks once per task.
        tx.execute_batch(
            "INSERT OR IGNORE INTO main.configs (identity, cells, moves) SELECT identity, cells, moves FROM src.configs
                 WHERE key IN (SELECT config_key FROM src.sweep_configs WHERE sweep IN (SELECT key FROM src.sweeps));
             INSERT OR IGNORE INTO main.methods (identity, name) SELECT identity, name FROM src.methods
                 WHERE key IN (SELECT method_key FROM src.sweep_methods WHERE sweep IN (SELECT key FROM src.sweeps));
             CREATE TEMP TABLE config_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
             INSERT INTO temp.config_map (old, new)
                 SELECT s.key, m.key FROM src.configs s JOIN main.configs m ON m.identity = s.identity;
             CREATE TEMP TABLE method_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
             INSERT INTO temp.method_map (old, new)
                 SELECT s.key, m.key FROM src.methods s JOIN main.methods m ON m.identity = s.identity;
             CREATE TEMP TABLE sweep_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL, joined INTEGER NOT NULL);",
        )?;
        sweeps::join(&tx, shard_offset, &mut out)?;
        tasks::compare_known(&tx, worker_offset, &mut out)?;
        tasks::add_new(&tx, worker_offset, &mut out)?;
        sweeps::recount(&tx)?;
        tx.execute_batch(
            "DROP TABLE temp.config_map; DROP TABLE temp.method_map; DROP TABLE temp.sweep_map;
             DROP TABLE temp.task_map; DROP TABLE temp.completed;",
        )?;
        // Results merged in may prove what this file's did not.
        super::facts::derive_all(&tx)?;
        tx.commit()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
