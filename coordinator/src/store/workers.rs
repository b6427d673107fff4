//! Registered workers: ids never reused, names for exports.

use std::collections::HashMap;

use ksweep_proto::build::Provenance;
use rusqlite::params;

use super::{now_ms, Store};
use crate::error::Result;
use crate::ids::WorkerId;

/// A registered worker as stored: its name and what it ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerRecord {
    pub name: String,
    pub provenance: Provenance,
}

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

    /// Every registered worker with what it ran, for exports and reports.
    pub fn worker_records(&self) -> Result<HashMap<u64, WorkerRecord>> {
        let mut stmt = self.conn.prepare("SELECT id, name, version, build, host, cpu, features FROM workers")?;
        let rows = stmt
            .query_map([], |r| {
                let provenance = Provenance {
                    version: r.get(2)?,
                    build: r.get(3)?,
                    host: r.get(4)?,
                    cpu: r.get(5)?,
                    features: r.get::<_, String>(6)?.split_whitespace().map(str::to_string).collect(),
                };
                Ok((r.get::<_, i64>(0)? as u64, WorkerRecord { name: r.get(1)?, provenance }))
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
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
