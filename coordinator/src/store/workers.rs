//! Registered workers: ids never reused, names for exports.

use std::collections::HashMap;

use ksweep_proto::build::Provenance;
use rusqlite::params;

use super::{now_ms, Store};
use crate::error::Result;
use crate::ids::WorkerId;

impl Store {
    /// Registers a worker with what it runs; ids are never reused.
    pub fn register_worker(&mut self, name: &str, threads: u32, provenance: &Provenance) -> Result<WorkerId> {
        let p = provenance;
        self.conn.execute(
            "INSERT INTO workers (name, threads, registered_ms, version, build, host, cpu, features)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![name, threads, now_ms() as i64, p.version, p.build, p.host, p.cpu, p.features.join(" ")],
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
