//! Per (configuration, method) aggregates of a sweep's results: the rows of
//! its tables.

use rusqlite::params;
use sweep::{AggregateRow, Sweep, WorkTally};
use tour::exists::Claim;

use super::sweeps::SweepRecord;
use super::Store;
use crate::codes::StoredOutcome;
use crate::error::{Error, Result};
use crate::ids::SweepKey;

impl Store {
    /// Aggregates per (configuration, method), in configuration then method
    /// order, with impossible configurations marked and unrun ones at zero.
    /// A row's `open_tour` and `closed_tour` are the theorems' verdicts,
    /// and the stored existence facts' where the theorems say `unknown`.
    /// A result outside the sweep's grid (a damaged or foreign database) is
    /// an error, not a panic.
    pub fn aggregates(&self, record: &SweepRecord, sweep: &Sweep) -> Result<Vec<AggregateRow>> {
        let methods = sweep.methods();
        let configs = sweep.configurations();
        let mut rows: Vec<AggregateRow> = Vec::with_capacity(configs.len() * methods.len());
        for c in configs {
            for &m in methods {
                rows.push(AggregateRow::new(c, m));
            }
        }
        // Where no theorem speaks, what the stored results prove.
        let facts = self.sweep_facts(record.key.0)?;
        for row in rows.iter_mut() {
            let Some(found) = facts.get(&row.config) else { continue };
            for (verdict, fact) in [(&mut row.open_tour, found[0]), (&mut row.closed_tour, found[1])] {
                if let (true, Some(exists)) = (*verdict == Claim::Unknown.verdict(), fact) {
                    let claim = if exists { Claim::Exists("") } else { Claim::Impossible("") };
                    *verdict = claim.verdict().to_string();
                }
            }
        }
        let at = |config: u32, method: u32| -> Result<usize> {
            if (config as usize) < configs.len() && (method as usize) < methods.len() {
                Ok(config as usize * methods.len() + method as usize)
            } else {
                Err(Error::Corrupt(format!(
                    "sweep {} has a result for configuration {config}, method {method}: outside its grid",
                    record.id
                )))
            }
        };
        let mut stmt = self.conn.prepare(
            "SELECT config, method, COUNT(*), SUM(success), AVG(micros), AVG(attempts), SUM(outcome = ?2)
             FROM results WHERE sweep = ?1 GROUP BY config, method",
        )?;
        let mut q = stmt.query(params![record.key.0, StoredOutcome(tour::Outcome::NoTour)])?;
        while let Some(r) = q.next()? {
            let row = &mut rows[at(r.get(0)?, r.get(1)?)?];
            row.tasks = r.get::<_, i64>(2)? as u64;
            row.successes = r.get::<_, i64>(3)? as u64;
            row.mean_micros = r.get(4)?;
            row.mean_attempts = r.get(5)?;
            row.no_tour = r.get::<_, i64>(6)? as u64;
        }
        // Medians: one ordered pass, picking the middle of each group.
        let mut stmt = self
            .conn
            .prepare("SELECT config, method, micros FROM results WHERE sweep = ?1 ORDER BY config, method, micros")?;
        let mut q = stmt.query([record.key.0])?;
        let mut group: Option<(u32, u32)> = None;
        let mut seen = 0u64;
        let mut lower = 0f64;
        while let Some(r) = q.next()? {
            let key: (u32, u32) = (r.get(0)?, r.get(1)?);
            let micros = r.get::<_, i64>(2)? as f64;
            if group != Some(key) {
                group = Some(key);
                seen = 0;
            }
            let row = &mut rows[at(key.0, key.1)?];
            let n = row.tasks;
            // Median: the middle value, or the mean of the two middle values.
            let odd = n % 2 == 1;
            if odd && seen == n / 2 {
                row.median_micros = micros;
            } else if !odd && seen + 1 == n / 2 {
                lower = micros;
            } else if !odd && seen == n / 2 {
                row.median_micros = (lower + micros) / 2.0;
            }
            seen += 1;
        }
        Ok(rows)
    }
}

impl Store {
    /// A sweep's results counted per (configuration, method) with their
    /// time: what its progress in estimated work is computed from
    /// ([`sweep::WorkTally`]). A pass over its results: a coordinator does it
    /// once, as it takes a sweep in, then counts new results as they come.
    pub fn work_tally(&self, key: SweepKey, sweep: &Sweep) -> Result<WorkTally> {
        let mut tally = WorkTally::new(sweep);
        let mut stmt = self.conn.prepare_cached(
            "SELECT config, method, COUNT(*), SUM(micros) FROM results WHERE sweep = ?1 GROUP BY 1, 2",
        )?;
        let mut q = stmt.query([key.0])?;
        while let Some(r) = q.next()? {
            tally.add(r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as u64, r.get::<_, i64>(3)? as f64);
        }
        Ok(tally)
    }
}
