//! Registered workers: ids never reused, names for exports.

use std::collections::HashMap;

use ksweep_proto::build::Provenance;
use rusqlite::{params, OptionalExtension};

use super::{now_ms, Store};
use crate::error::Result;
use crate::ids::{SweepKey, WorkerId};

/// Tasks and CPU microseconds per worker id, in one sweep.
pub type WorkerTotals = HashMap<u64, (u64, u64)>;

/// A worker as contributors merge it: name, version, build, host, CPU and
/// features.
type Who = (String, String, String, String, String, String);

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

    /// Forgets registrations of `workers` (none of which delivered a
    /// result), but never the last one: a row id is then never given
    /// twice (SQLite gives a new row one more than the largest). Returns
    /// how many rows went.
    pub fn forget_workers(&mut self, workers: &[WorkerId]) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let mut forgotten = 0;
        {
            let mut stmt = tx.prepare("DELETE FROM workers WHERE id = ?1 AND id < (SELECT MAX(id) FROM workers)")?;
            for worker in workers {
                forgotten += stmt.execute([worker.0 as i64])?;
            }
        }
        tx.commit()?;
        Ok(forgotten)
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

    /// Tasks and CPU microseconds per worker id among a sweep's results:
    /// one pass over them (a running coordinator counts them as they come,
    /// [`crate::scheduler::Counted`]).
    pub fn worker_totals(&self, sweep: SweepKey) -> Result<WorkerTotals> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT worker, COUNT(*), SUM(micros) FROM results WHERE sweep = ?1 GROUP BY worker")?;
        let rows = stmt
            .query_map([sweep.0], |r| {
                Ok((r.get::<_, i64>(0)? as u64, (r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)? as u64)))
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// The CPU time, in µs, of the results a sweep took from other sweeps
    /// (computed by them): what its own CPU time leaves out. A pass over
    /// its results where it took some; none otherwise.
    pub fn reused_micros(&self, sweep: SweepKey, tasks_reused: u64) -> Result<u64> {
        if tasks_reused == 0 {
            return Ok(0);
        }
        let micros: i64 = self.conn.query_row(
            "SELECT COALESCE(SUM(micros), 0) FROM results WHERE sweep = ?1 AND source != ?1",
            [sweep.0],
            |r| r.get(0),
        )?;
        Ok(micros as u64)
    }

    /// The workers whose results a sweep holds, with their tasks and CPU
    /// time there, most tasks first ([`Store::contributors_of`] of its
    /// [`Store::worker_totals`]).
    pub fn contributors(&self, sweep: SweepKey) -> Result<Vec<sweep::Contributor>> {
        self.contributors_of(&self.worker_totals(sweep)?)
    }

    /// Contributors from per-worker totals, most tasks first: registrations
    /// with the same name, build and machine (a restarted worker) merge. A
    /// worker whose row is missing counts under its id, as exports name it.
    pub fn contributors_of(&self, totals: &WorkerTotals) -> Result<Vec<sweep::Contributor>> {
        let mut stmt =
            self.conn.prepare_cached("SELECT name, version, build, host, cpu, features FROM workers WHERE id = ?1")?;
        let mut merged: HashMap<Who, (u64, u64)> = HashMap::new();
        for (&worker, &(tasks, micros)) in totals {
            let who = stmt
                .query_row([worker as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
                .optional()?
                .unwrap_or_else(|| {
                    (worker.to_string(), String::new(), String::new(), String::new(), String::new(), String::new())
                });
            let sums = merged.entry(who).or_default();
            sums.0 += tasks;
            sums.1 += micros;
        }
        let mut out: Vec<sweep::Contributor> = merged
            .into_iter()
            .map(|((name, version, build, host, cpu, features), (tasks, cpu_micros))| sweep::Contributor {
                name,
                version,
                build,
                host,
                cpu,
                features: features.split_whitespace().map(str::to_string).collect(),
                tasks,
                cpu_micros,
            })
            .collect();
        out.sort_by(|a, b| {
            let key = |c: &sweep::Contributor| (c.name.clone(), c.version.clone(), c.build.clone(), c.host.clone());
            b.tasks.cmp(&a.tasks).then_with(|| key(a).cmp(&key(b)))
        });
        Ok(out)
    }

    /// The host each worker registered from, by id (empty where not
    /// recorded): what the dashboard's workers page shows beside the name.
    pub fn worker_hosts(&self) -> Result<HashMap<u64, String>> {
        let mut stmt = self.conn.prepare("SELECT id, host FROM workers")?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?)))?
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
    /// every sweep (each task once, however many sweeps refer to it): what
    /// a worker that is gone ran, kept after it left. One pass over the
    /// tasks, so its callers ask once per worker set.
    pub fn lifetime_totals(&self, workers: &[u64]) -> Result<WorkerTotals> {
        if workers.is_empty() {
            return Ok(HashMap::new());
        }
        let list = workers.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let mut stmt = self.conn.prepare(&format!(
            "SELECT worker, COUNT(*), SUM(micros) FROM tasks WHERE worker IN ({list}) GROUP BY worker"
        ))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, i64>(0)? as u64, (r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)? as u64)))
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }
}
