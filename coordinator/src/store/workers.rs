//! Registered workers: ids never reused, names for exports.

use std::collections::HashMap;

use ksweep_proto::build::Provenance;
use rusqlite::params;

use super::{now_ms, Store};
use crate::error::Result;
use crate::ids::{SweepKey, WorkerId};

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

    /// The workers whose results a sweep holds, with their tasks and CPU
    /// time there, most tasks first. One pass over the sweep's results
    /// grouped by worker; registrations with the same name, build and
    /// machine (a restarted worker) then merge. A result whose worker row
    /// is missing counts under the worker's id, as exports name it.
    pub fn contributors(&self, sweep: SweepKey) -> Result<Vec<sweep::Contributor>> {
        let mut stmt = self.conn.prepare(
            "SELECT COALESCE(w.name, CAST(r.worker AS TEXT)) AS who, COALESCE(w.version, ''), COALESCE(w.build, ''),
                    COALESCE(w.host, ''), COALESCE(w.cpu, ''), COALESCE(w.features, ''),
                    SUM(r.tasks), SUM(r.micros)
             FROM (SELECT worker, COUNT(*) AS tasks, SUM(micros) AS micros
                   FROM results WHERE sweep = ?1 GROUP BY worker) AS r
             LEFT JOIN workers AS w ON w.id = r.worker
             GROUP BY 1, 2, 3, 4, 5, 6
             ORDER BY SUM(r.tasks) DESC, who",
        )?;
        let rows = stmt
            .query_map([sweep.0], |r| {
                Ok(sweep::Contributor {
                    name: r.get(0)?,
                    version: r.get(1)?,
                    build: r.get(2)?,
                    host: r.get(3)?,
                    cpu: r.get(4)?,
                    features: r.get::<_, String>(5)?.split_whitespace().map(str::to_string).collect(),
                    tasks: r.get::<_, i64>(6)? as u64,
                    cpu_micros: r.get::<_, i64>(7)? as u64,
                })
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

    /// The tasks each of `workers` delivered and their CPU time in µs, over
    /// every sweep: what a worker that is gone ran, kept after it left.
    /// One pass over the results, so its callers ask once per worker set.
    pub fn worker_totals(&self, workers: &[u64]) -> Result<HashMap<u64, (u64, u64)>> {
        if workers.is_empty() {
            return Ok(HashMap::new());
        }
        let list = workers.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let mut stmt = self.conn.prepare(&format!(
            "SELECT worker, COUNT(*), SUM(micros) FROM results WHERE worker IN ({list}) GROUP BY worker"
        ))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, i64>(0)? as u64, (r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)? as u64)))
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }
}
