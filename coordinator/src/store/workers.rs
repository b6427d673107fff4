//! Registered workers: ids never reused, names for exports.

use std::collections::HashMap;

use rusqlite::params;

use super::{now_ms, Store};
use crate::error::Result;
use crate::ids::WorkerId;

impl Store {
    /// Registers a worker; ids are never reused.
    pub fn register_worker(&mut self, name: &str, threads: u32) -> Result<WorkerId> {
        self.conn.execute(
            "INSERT INTO workers (name, threads, registered_ms) VALUES (?1, ?2, ?3)",
            params![name, threads, now_ms() as i64],
        )?;
        Ok(WorkerId(self.conn.last_insert_rowid() as u64))
    }

    /// Name of a worker, for exports.
    pub fn worker_names(&self) -> Result<HashMap<u64, String>> {
        let mut stmt = self.conn.prepare("SELECT id, name FROM workers")?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }
}
