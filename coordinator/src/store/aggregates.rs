//! Per (configuration, method) aggregates of a sweep's results: the rows of
//! its tables.

use rusqlite::params;
use sweep::{AggregateRow, CellPrecision, Sweep, WorkTally};
use tour::exists::Claim;

use super::sweeps::SweepRecord;
use super::{Store, WorkerTotals};
use crate::codes::StoredOutcome;
use crate::error::{Error, Result};
use crate::ids::SweepKey;

/// A sweep's stored results counted per cell, per worker, and by the sweeps
/// the ones it reused came from.
pub type StoredCounts = (WorkTally, WorkerTotals, Vec<(SweepKey, u64)>);

/// What one start's results prove, across methods.
#[derive(Default)]
struct Settled {
    /// Some method found a tour (an open one at least).
    found: bool,
    /// A method seeking closed tours found one.
    found_closed: bool,
    /// An open-tour method proved none from the start.
    refuted_open: bool,
    /// A closed-tour method proved none through the start.
    refuted_closed: bool,
}

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
                rows.push(AggregateRow::new(c, m, sweep.closed()));
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
        let cut = self.cut_at_looks(record, sweep, &mut rows)?;
        let mut stmt = self.conn.prepare(&format!(
            "SELECT config, method, COUNT(*), SUM(success), AVG(micros), AVG(attempts), SUM(outcome = ?2)
             FROM results WHERE sweep = ?1 {cut} GROUP BY config, method"
        ))?;
        let mut q = stmt.query(params![record.key.0, StoredOutcome(tour::Outcome::NoTour)])?;
        while let Some(r) = q.next()? {
            let row = &mut rows[at(r.get(0)?, r.get(1)?)?];
            row.tasks = r.get::<_, i64>(2)? as u64;
            row.successes = r.get::<_, i64>(3)? as u64;
            row.mean_micros = r.get(4)?;
            row.mean_attempts = r.get(5)?;
            row.no_tour = r.get::<_, i64>(6)? as u64;
        }
        self.settle_starts(record, &mut rows, &at, cut)?;
        // Medians: one ordered pass, picking the middle of each group.
        let mut stmt = self.conn.prepare(&format!(
            "SELECT config, method, micros FROM results WHERE sweep = ?1 {cut} ORDER BY config, method, micros"
        ))?;
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
    /// For a sweep with adaptive precision: sets each row's
    /// [`CellPrecision`] and returns the SQL condition that keeps only the
    /// starts its looks counted (from a temporary table of this
    /// connection), so the tables are the same whatever ran past a look;
    /// an empty condition for a fixed S.
    fn cut_at_looks(&self, record: &SweepRecord, sweep: &Sweep, rows: &mut [AggregateRow]) -> Result<&'static str> {
        let Some(precision) = sweep.precision() else { return Ok("") };
        let standings = self.standings(record.key, sweep, None)?;
        self.conn.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS counted
                 (config INTEGER NOT NULL, method INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (config, method))
                 WITHOUT ROWID;
             DELETE FROM temp.counted;",
        )?;
        let mut insert =
            self.conn.prepare_cached("INSERT INTO temp.counted (config, method, n) VALUES (?1, ?2, ?3)")?;
        let methods = sweep.methods().len();
        for (config, cells) in &standings {
            for (m, standing) in cells.iter().enumerate() {
                insert.execute(params![config, m as u32, standing.counted().0 as i64])?;
                if let Some(row) = rows.get_mut(*config as usize * methods + m) {
                    row.precision = Some(CellPrecision::new(precision, standing));
                }
            }
        }
        Ok("AND start_index < (SELECT c.n FROM temp.counted c WHERE c.config = results.config AND c.method = results.method)")
    }

    /// Counts each row's starts refuted and unsettled
    /// ([`AggregateRow::refuted`]): one pass over the results by start, so
    /// every method's proof or tour from a start speaks for the others on
    /// that start. An open refutation refutes a closed tour too; any tour
    /// found is an open one; a closed tour anywhere is one from every start.
    fn settle_starts(
        &self,
        record: &SweepRecord,
        rows: &mut [AggregateRow],
        at: &dyn Fn(u32, u32) -> Result<usize>,
        cut: &str,
    ) -> Result<()> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT config, start_index, method, success, outcome = ?2 FROM results WHERE sweep = ?1 {cut}
             ORDER BY config, start_index"
        ))?;
        let mut q = stmt.query(params![record.key.0, StoredOutcome(tour::Outcome::NoTour)])?;
        let exists = Claim::Exists("").verdict();
        // One start's results: (row, seeks closed), and what they settle.
        let mut start: Option<(u32, u64)> = None;
        let mut members: Vec<(usize, bool)> = Vec::new();
        let mut settled = Settled::default();
        let flush = |members: &mut Vec<(usize, bool)>, settled: &mut Settled, rows: &mut [AggregateRow]| {
            for (i, closed) in members.drain(..) {
                let row = &mut rows[i];
                let (refuted, found) = if closed {
                    (settled.refuted_open || settled.refuted_closed, settled.found_closed || row.closed_tour == exists)
                } else {
                    (settled.refuted_open, settled.found)
                };
                row.refuted += u64::from(refuted);
                *row.unsettled.get_or_insert(0) += u64::from(!refuted && !found);
            }
            *settled = Settled::default();
        };
        while let Some(r) = q.next()? {
            let key: (u32, u64) = (r.get(0)?, r.get::<_, i64>(1)? as u64);
            if start != Some(key) {
                flush(&mut members, &mut settled, rows);
                start = Some(key);
            }
            let i = at(key.0, r.get(2)?)?;
            let closed = rows[i].closed;
            let (success, no_tour): (bool, bool) = (r.get(3)?, r.get(4)?);
            settled.found |= success;
            settled.found_closed |= success && closed;
            settled.refuted_open |= no_tour && !closed;
            settled.refuted_closed |= no_tour && closed;
            members.push((i, closed));
        }
        flush(&mut members, &mut settled, rows);
        Ok(())
    }

    /// What a coordinator taking a sweep in counts from its stored results
    /// once, then as results come ([`crate::scheduler::Scheduler::seed_counts`]).
    pub fn stored_counts(&self, key: SweepKey, sweep: &Sweep) -> Result<StoredCounts> {
        Ok((self.work_tally(key, sweep)?, self.worker_totals(key)?, self.reused_from(key)?))
    }

    /// A sweep's results counted per (configuration, method) with their
    /// time: what its progress in estimated work is computed from
    /// ([`sweep::WorkTally`]). A pass over its results: a coordinator does it
    /// once, as it takes a sweep in, then counts new results as they come.
    pub fn work_tally(&self, key: SweepKey, sweep: &Sweep) -> Result<WorkTally> {
        let mut tally = WorkTally::new(sweep, self.reused(key, sweep)?);
        let mut stmt = self.conn.prepare_cached(
            "SELECT config, method, COUNT(*), SUM(success), SUM(micros) FROM results WHERE sweep = ?1 GROUP BY 1, 2",
        )?;
        let mut q = stmt.query([key.0])?;
        while let Some(r) = q.next()? {
            let (tasks, successes) = (r.get::<_, i64>(2)? as u64, r.get::<_, i64>(3)? as u64);
            tally.add(r.get(0)?, r.get(1)?, tasks, successes, r.get::<_, i64>(4)? as f64);
        }
        Ok(tally)
    }
}
