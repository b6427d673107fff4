//! A validated sweep: the spec plus the configurations it expands to, each
//! checked by the engine, with the sweep's id and task count.

use tour::exists::Claim;
use tour::{Configuration, Method, Outcome};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::cursor::Cursor;
use crate::error::SpecError;
use crate::precision::Precision;
use crate::spec::{Limits, SweepSpec};
use crate::task_report::TaskSummary;

/// A spec that passed every check, expanded into its configurations.
#[derive(Debug, Clone)]
pub struct Sweep {
    spec: SweepSpec,
    configurations: Vec<ConfigEntry>,
    total_tasks: u64,
    /// `cost_suffix[i]`: estimated cost of every task of configurations
    /// `i..`, so the cost left after a cursor is O(1).
    cost_suffix: Vec<f64>,
    id: String,
    /// Starts until each cell's interval is tight, when the spec asks.
    precision: Option<Precision>,
    /// Its schedules by a configuration's start count, laid out as first
    /// asked for (each takes milliseconds; a grid has few distinct counts
    /// below the point where every schedule ends alike).
    schedules: Arc<Mutex<HashMap<u64, Arc<Precision>>>>,
}

mod entry;
mod expand;
mod id;
mod identity;
pub use identity::{board_moves, board_moves_configuration, board_moves_of, identity_dims, identity_seeks_closed};

pub use entry::{ConfigEntry, MoveSpec, MovesKind};
use expand::{check_methods, expand};
use id::content_id;
// Named by the tests (`use super::*`).
#[cfg(test)]
use tour::Eligibility;

impl Sweep {
    /// Parses and validates a spec (see [`crate::spec`] for the format).
    pub fn parse(toml_text: &str) -> Result<Sweep, SpecError> {
        Sweep::new(SweepSpec::from_toml(toml_text)?)
    }

    /// [`Sweep::parse`] with the spec's limits lowered to `caps` first, so a
    /// spec cannot raise them past what the caller allows (a coordinator's
    /// own limits): a spec asking for 2^24 configurations is refused before
    /// any is built.
    pub fn parse_capped(toml_text: &str, caps: &Limits) -> Result<Sweep, SpecError> {
        let mut spec = SweepSpec::from_toml(toml_text)?;
        spec.limits = spec.limits.capped(caps);
        Sweep::new(spec)
    }

    /// Validates a spec and expands its configurations.
    pub fn new(spec: SweepSpec) -> Result<Sweep, SpecError> {
        spec.check()?;
        let precision = spec.precision()?;
        let configurations = expand(&spec)?;
        check_methods(&spec, &configurations)?;
        let total_tasks = configurations.iter().map(|c| c.start_count(spec.starts) * spec.methods.len() as u64).sum();
        if total_tasks > spec.limits.max_tasks {
            return Err(SpecError::TooManyTasks { tasks: total_tasks, max: spec.limits.max_tasks });
        }
        let id = content_id(&spec, &configurations, precision.as_ref());
        let methods = spec.methods.len() as f64;
        let mut cost_suffix = vec![0.0; configurations.len() + 1];
        for (i, c) in configurations.iter().enumerate().rev() {
            cost_suffix[i] = cost_suffix[i + 1] + c.start_count(spec.starts) as f64 * methods * c.cost_per_task();
        }
        Ok(Sweep { spec, configurations, total_tasks, cost_suffix, id, precision, schedules: Arc::default() })
    }

    /// 16 hex digits naming what the sweep computes: name, seed, S, methods
    /// and the ordered configurations. Layout, comments and limits of the
    /// text do not change it.
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// The spec's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The sweep seed.
    pub fn seed(&self) -> u64 {
        self.spec.seed
    }

    /// S, the starts asked for per configuration.
    pub fn starts_per_config(&self) -> u64 {
        self.spec.starts
    }

    /// The methods every start runs, in table order.
    pub fn methods(&self) -> &[Method] {
        &self.spec.methods
    }

    /// True when the sweep asks for closed tours.
    pub fn closed(&self) -> bool {
        self.spec.closed
    }

    /// Node budget of `bt` (work budget of `solve`) per task.
    pub fn budget(&self) -> u64 {
        self.spec.budget.unwrap_or(tour::DEFAULT_BUDGET)
    }

    /// Iteration cap of the `nn` methods.
    pub fn iterations(&self) -> u32 {
        self.spec.iterations.unwrap_or(tour::DEFAULT_ITERATIONS)
    }

    /// The options of one task as a worker runs it: its seed, the sweep's
    /// budget and iterations, no path. Rerunning a task with these gives
    /// its recorded flags (see `ksweep plot --all-starts`).
    pub fn task_options(&self, config: &Configuration, start: u64, method: Method) -> tour::TaskOptions {
        tour::TaskOptions {
            seed: config.task_seed(self.seed(), start, method),
            record_path: false,
            budget: self.budget(),
            iterations: self.iterations(),
            closed: self.closed(),
        }
    }

    /// The limits the sweep was checked against.
    pub fn limits(&self) -> &Limits {
        &self.spec.limits
    }

    /// The spec as parsed.
    pub fn spec(&self) -> &SweepSpec {
        &self.spec
    }

    /// Grid by grid; D in `dims` order with N ascending, then shapes; repeats dropped.
    pub fn configurations(&self) -> &[ConfigEntry] {
        &self.configurations
    }

    /// Sum over configurations of min(eligible, S) x methods: with
    /// precision, the most the sweep can run (every cell at its cap).
    pub fn total_tasks(&self) -> u64 {
        self.total_tasks
    }

    /// The adaptive precision, when the spec asks for one.
    pub fn precision(&self) -> Option<&Precision> {
        self.precision.as_ref()
    }

    /// The precision of configuration `config`'s cells: the spec's, capped
    /// at the configuration's starts. None for a fixed-S sweep or an index
    /// out of range.
    pub fn cell_precision(&self, config: u32) -> Option<Arc<Precision>> {
        let entry = self.configurations.get(config as usize)?;
        let precision = self.precision.as_ref()?;
        let count = entry.start_count(self.spec.starts);
        let mut schedules = self.schedules.lock().unwrap_or_else(|p| p.into_inner());
        Some(schedules.entry(count).or_insert_with(|| Arc::new(precision.with_cap(count))).clone())
    }

    /// Starts of configuration `config` that shards cover before any look:
    /// its first checkpoint with precision, else all of them.
    pub fn first_starts(&self, config: u32) -> u64 {
        let Some(entry) = self.configurations.get(config as usize) else { return 0 };
        let count = entry.start_count(self.spec.starts);
        match &self.precision {
            Some(p) => p.min_starts.min(count),
            None => count,
        }
    }

    /// The least the sweep can run: [`Sweep::total_tasks`] for a fixed S,
    /// every cell stopping at its first look with precision.
    pub fn least_tasks(&self) -> u64 {
        let methods = self.spec.methods.len() as u64;
        (0..self.configurations.len() as u32).map(|c| self.first_starts(c) * methods).sum()
    }

    /// Estimated cost (cells x moves per task) of the tasks not yet planned
    /// at `cursor`.
    pub fn cost_after(&self, cursor: Cursor) -> f64 {
        let Some(entry) = self.configurations.get(cursor.config as usize) else { return 0.0 };
        let left = entry.start_count(self.spec.starts).saturating_sub(cursor.start) as f64;
        left * self.spec.methods.len() as f64 * entry.cost_per_task() + self.cost_suffix[cursor.config as usize + 1]
    }

    /// Checks that a result a worker reports for a task of configuration
    /// `config` could have come from the engine: visited within the board, a
    /// success is a whole-board tour, attempts within the method's bounds, a
    /// plausible time. A coordinator refuses a batch that fails, so a buggy
    /// or hostile worker cannot put impossible figures into the tables.
    pub fn check_result(&self, config: u32, start: u64, method: Method, r: &TaskSummary) -> Result<(), String> {
        let Some(entry) = self.configurations.get(config as usize) else {
            return Err(format!("configuration {config} is not in the sweep"));
        };
        if !self.spec.methods.contains(&method) {
            return Err(format!("method {} is not in the sweep", method.name()));
        }
        let cells = entry.cells();
        if r.visited > cells {
            return Err(format!("visited {} is more than the board's {cells} cells", r.visited));
        }
        if r.success != (r.outcome == Outcome::Tour) {
            return Err(format!("success {} contradicts outcome {}", r.success, r.outcome));
        }
        if r.success && r.visited != cells {
            return Err(format!("a tour must visit all {cells} cells, not {}", r.visited));
        }
        let claim = if method.seeks_closed(self.closed()) { entry.existence.closed } else { entry.existence.open };
        if let (true, Claim::Impossible(why)) = (r.success, claim) {
            // Stored, it would be a fact against a proof (a theorem, the
            // move graph or the atlas's two).
            return Err(format!("a tour from start {start} on a board proven to have none: {why}"));
        }
        if r.outcome == Outcome::NoTour && !method.proves_absence() {
            // A heuristic's failure proves nothing; the engine says no-tour
            // for it only where the colour rule or a theorem does.
            let proven = !entry.eligibility.admits(start, cells) || matches!(claim, Claim::Impossible(_));
            if !proven {
                return Err(format!(
                    "no-tour from {} on eligible start {start} is not a proof: only the colour rule, a theorem, \
                     bt, solve or construct may say no-tour",
                    method.name()
                ));
            }
        }
        let (low, high) = match method {
            m if m.is_warnsdorff() => (1, m.max_attempts(entry.move_count() as usize) as u64),
            Method::Bt => (1, self.budget().min(u64::from(u32::MAX))),
            Method::Construct => (0, 1),
            Method::Nn(_) => (0, u64::from(self.iterations())),
            _ => (0, u64::from(u32::MAX)),
        };
        if !(low..=high).contains(&u64::from(r.attempts)) {
            return Err(format!("attempts {} is outside {low}..={high} for {}", r.attempts, method.name()));
        }
        if method.is_warnsdorff() && r.visited == 0 {
            return Err("a walk visits at least its start".into());
        }
        if method.is_warnsdorff() && !r.success && u64::from(r.attempts) != high {
            return Err(format!("a failed {} makes all {high} walks, not {}", method.name(), r.attempts));
        }
        if r.micros > MAX_TASK_MICROS {
            return Err(format!("micros {} is over the bound {MAX_TASK_MICROS} (30 days)", r.micros));
        }
        Ok(())
    }

    /// The labels a worker must carry to run the boards of grid `grid`
    /// (its `requires`); none for a grid that requires none.
    pub fn required_labels(&self, grid: u32) -> std::collections::BTreeSet<String> {
        self.spec.grids.get(grid as usize).map(|g| g.requires.iter().cloned().collect()).unwrap_or_default()
    }

    /// The spec in canonical TOML; parsing it gives the same id.
    pub fn canonical_toml(&self) -> String {
        self.spec.to_canonical_toml()
    }
}

/// Longest time a task may report: 30 days, in microseconds.
pub const MAX_TASK_MICROS: u64 = 30 * 24 * 3600 * 1_000_000;

#[cfg(test)]
mod tests;
