//! A sweep's work, as progress and ETAs count it: a task's cost spans six
//! orders of magnitude (a 5x5 W walk against a 4D `solve`), so a count of
//! tasks says little about how far a sweep is or how long it has left.
//!
//! A task's work is its estimated CPU time: its configuration's cost
//! (cells x moves, [`ConfigEntry::cost_per_task`]) times a rate in
//! microseconds per unit of cost for its (D, method). The rates are fitted
//! from the results so far ([`CostModel`]): a (D, method) with enough
//! measured time uses its own; one without borrows its method's rate at
//! other D, else a prior scaled by how fast this sweep's machines are
//! against the priors.

use std::collections::HashMap;

use tour::Method;

use crate::precision::{Look, Precision};
use crate::sweep::ConfigEntry;
use crate::{Reused, Sweep};

/// Measured time a (D, method) needs before its own rate is used: less is
/// mostly timer resolution (a task's time is whole microseconds, and a 5x5
/// walk takes well under one).
const MIN_MEASURED_MICROS: f64 = 2_000.0;

/// Microseconds per unit of cost (cells x moves) each method takes on one
/// thread of a 2020s desktop core, averaged over the boards of the report's
/// sweeps: the start of every estimate, before anything is measured. Only
/// ratios between methods matter once a sweep has results.
fn prior_micros_per_unit(method: Method) -> f64 {
    match method {
        Method::W | Method::WPlus | Method::Wr | Method::WrPlus => 0.0015,
        // Up to K walks where the first fails; one where it succeeds.
        Method::Aw | Method::AwPlus => 0.003,
        Method::Mw => 0.005,
        Method::Construct => 0.01,
        // Search within a budget, network iterations: far dearer per cell.
        Method::Bt | Method::Solve => 0.05,
        Method::Nn(_) => 2.0,
    }
}

/// Measured cost and time of one group of results.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sums {
    /// Units of cost (cells x moves, summed over tasks).
    units: f64,
    /// Their measured time, in microseconds.
    micros: f64,
}

impl Sums {
    fn add(&mut self, units: f64, micros: f64) {
        self.units += units;
        self.micros += micros;
    }

    fn rate(&self) -> Option<f64> {
        (self.micros >= MIN_MEASURED_MICROS && self.units > 0.0).then(|| self.micros / self.units)
    }
}

/// Microseconds per unit of cost for each (D, method), fitted from
/// measured results.
#[derive(Clone, Debug, Default)]
pub struct CostModel {
    groups: HashMap<(usize, Method), Sums>,
}

impl CostModel {
    /// A model with nothing measured: every rate is its prior.
    pub fn new() -> CostModel {
        CostModel::default()
    }

    /// Folds in results of `dims`-dimensional boards by `method`: `units`
    /// of cost (cells x moves, summed) that took `micros` in all.
    pub fn observe(&mut self, dims: usize, method: Method, units: f64, micros: f64) {
        if units.is_finite() && micros.is_finite() && units > 0.0 && micros >= 0.0 {
            self.groups.entry((dims, method)).or_default().add(units, micros);
        }
    }

    /// Microseconds per unit of cost for (D, method): its own measured rate
    /// where it has enough; else the method's over every D measured; else
    /// the prior, scaled by how the measured groups compare with their
    /// priors (a faster or slower machine than the priors').
    pub fn micros_per_unit(&self, dims: usize, method: Method) -> f64 {
        if let Some(rate) = self.groups.get(&(dims, method)).and_then(Sums::rate) {
            return rate;
        }
        let mut same_method = Sums::default();
        let (mut measured, mut expected) = (0.0, 0.0);
        for (&(_, m), sums) in &self.groups {
            if m == method {
                same_method.add(sums.units, sums.micros);
            }
            measured += sums.micros;
            expected += sums.units * prior_micros_per_unit(m);
        }
        if let Some(rate) = same_method.rate() {
            return rate;
        }
        let speed = if measured >= MIN_MEASURED_MICROS && expected > 0.0 { measured / expected } else { 1.0 };
        prior_micros_per_unit(method) * speed
    }

    /// Estimated CPU microseconds of one task of `entry` by `method`.
    pub fn task_micros(&self, entry: &ConfigEntry, method: Method) -> f64 {
        entry.cost_per_task() * self.micros_per_unit(entry.dims(), method)
    }
}

/// Estimated CPU time of a sweep: of the tasks with a result and of all.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    /// Estimated CPU microseconds of the tasks with a result.
    pub done_micros: f64,
    /// Estimated CPU microseconds of every task (with adaptive precision,
    /// of the starts each cell is expected to stop at).
    pub total_micros: f64,
    /// With adaptive precision, how far its cells are.
    pub adaptive: Option<Cells>,
}

/// The cells of a sweep with adaptive precision: how many stopped, and the
/// most the sweep can take (every cell going on to its cap).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cells {
    /// Cells whose looks stopped them.
    pub settled: u64,
    /// Its (configuration, method) cells that run.
    pub cells: u64,
    /// Estimated CPU microseconds were every cell to run to its cap.
    pub most_micros: f64,
}

impl Work {
    /// Percent of the estimated work done; 100 for a sweep without work.
    pub fn percent(&self) -> f64 {
        if self.total_micros > 0.0 {
            (100.0 * self.done_micros / self.total_micros).clamp(0.0, 100.0)
        } else {
            100.0
        }
    }

    /// Estimated CPU microseconds left.
    pub fn remaining_micros(&self) -> f64 {
        (self.total_micros - self.done_micros).max(0.0)
    }
}

/// Per (configuration, method) counts of a sweep's results and their
/// measured time: what its [`Work`] is estimated from. The coordinator keeps
/// one per running sweep, fed as results are stored.
#[derive(Clone, Debug)]
pub struct WorkTally {
    methods: usize,
    /// Row-major: configuration, then method index: tasks, successes and
    /// their measured micros.
    cells: Vec<(u64, u64, f64)>,
}

impl WorkTally {
    /// An empty tally for `sweep`.
    pub fn new(sweep: &Sweep) -> WorkTally {
        let methods = sweep.methods().len();
        WorkTally { methods, cells: vec![(0, 0, 0.0); sweep.configurations().len() * methods] }
    }

    /// Counts `tasks` results of (configuration, method index), `successes`
    /// of them tours, that took `micros` in all; indices outside the sweep
    /// are ignored (the coordinator has checked every result against the
    /// grid before).
    pub fn add(&mut self, config: u32, method: u32, tasks: u64, successes: u64, micros: f64) {
        if (method as usize) < self.methods {
            if let Some(cell) = self.cells.get_mut(config as usize * self.methods + method as usize) {
                cell.0 += tasks;
                cell.1 += successes;
                cell.2 += micros;
            }
        }
    }

    /// The model fitted from this tally's results.
    pub fn model(&self, sweep: &Sweep) -> CostModel {
        let mut model = CostModel::new();
        self.each(sweep, |entry, method, (tasks, _, micros)| {
            model.observe(entry.dims(), method, tasks as f64 * entry.cost_per_task(), micros);
        });
        model
    }

    /// The sweep's work: every task priced by the model fitted from the
    /// results so far. A result counts for at most its (configuration,
    /// method)'s task count (a duplicate stored twice counts once).
    pub fn work(&self, sweep: &Sweep) -> Work {
        let model = self.model(sweep);
        let per_config = sweep.starts_per_config();
        // One rate per (D, method), not one fit per configuration.
        let mut rates: HashMap<(usize, Method), f64> = HashMap::new();
        let mut work = Work::default();
        let mut cells = sweep.precision().map(|_| Cells::default());
        self.each(sweep, |entry, method, (tasks, successes, _)| {
            let most = entry.start_count(per_config);
            let rate =
                *rates.entry((entry.dims(), method)).or_insert_with(|| model.micros_per_unit(entry.dims(), method));
            let each = entry.cost_per_task() * rate;
            let total = match (&mut cells, sweep.cell_precision(entry.index)) {
                (Some(cells), Some(precision)) if most > 0 => {
                    let (expected, settled) = expected_starts(&precision, tasks, successes);
                    cells.cells += 1;
                    cells.settled += u64::from(settled);
                    cells.most_micros += most as f64 * each;
                    expected
                }
                _ => most,
            };
            work.total_micros += total as f64 * each;
            work.done_micros += tasks.min(total) as f64 * each;
        });
        work.adaptive = cells;
        work
    }

    fn each(&self, sweep: &Sweep, mut f: impl FnMut(&ConfigEntry, Method, (u64, u64, f64))) {
        let methods = sweep.methods();
        for (entry, row) in sweep.configurations().iter().zip(self.cells.chunks(self.methods.max(1))) {
            for (&method, &cell) in methods.iter().zip(row) {
                f(entry, method, cell);
            }
        }
    }
}

/// The starts a cell of a sweep with adaptive precision is expected to
/// take, from `tasks` results with `successes` tours so far, and whether it
/// has stopped: a cell at a checkpoint its look stops is done; one going
/// is expected to stop where its share so far would, and at least at its
/// next look; one not yet looked at, where a cell at 1/2 would (the most),
/// so the estimate of the work left mostly shrinks as cells stop.
fn expected_starts(precision: &Precision, tasks: u64, successes: u64) -> (u64, bool) {
    let checkpoints = precision.checkpoints();
    if checkpoints.contains(&tasks) {
        if let Look::Stop { .. } = precision.look(successes, tasks) {
            return (tasks, true);
        }
    }
    if tasks < precision.min_starts {
        return (precision.expected_stop(0.5), false);
    }
    let next = checkpoints.iter().copied().find(|&c| c > tasks).unwrap_or(precision.cap);
    (precision.expected_stop(successes as f64 / tasks as f64).max(next).min(precision.cap), false)
}

/// Estimated CPU microseconds of the tasks of `sweep` left to run when
/// `reused` are taken from stored results, at `model`'s rates (`ksweep
/// check`, and what a submit prints).
/// With adaptive precision, the most: every cell at its cap.
pub fn micros_to_run(sweep: &Sweep, reused: &Reused, model: &CostModel) -> f64 {
    let per_config = sweep.starts_per_config();
    micros_of(sweep, reused, model, |entry| entry.start_count(per_config))
}

/// [`micros_to_run`] when every cell stops at its first look: the least a
/// sweep with adaptive precision can take (the same figure for a fixed S).
pub fn least_micros_to_run(sweep: &Sweep, reused: &Reused, model: &CostModel) -> f64 {
    micros_of(sweep, reused, model, |entry| sweep.first_starts(entry.index))
}

/// The estimated CPU microseconds of `starts(entry)` starts of each
/// configuration, for the methods it does not take from stored results.
fn micros_of(sweep: &Sweep, reused: &Reused, model: &CostModel, starts: impl Fn(&ConfigEntry) -> u64) -> f64 {
    let methods = sweep.methods();
    let mut total = 0.0;
    for (index, entry) in sweep.configurations().iter().enumerate() {
        let starts = starts(entry) as f64;
        for j in reused.to_run(index as u32, methods.len()).indices() {
            total += starts * model.task_micros(entry, methods[j]);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(grids: &str, starts: u64, methods: &str) -> Sweep {
        Sweep::parse(&format!("name = \"t\"\nseed = 1\nstarts = {starts}\nmethods = [{methods}]\n{grids}")).unwrap()
    }

    #[test]
    fn an_unmeasured_group_borrows_its_method_then_the_machine_speed() {
        let mut model = CostModel::new();
        assert_eq!(model.micros_per_unit(2, Method::W), prior_micros_per_unit(Method::W));
        // W on 2D measured at twice the prior: W on 3D borrows it...
        model.observe(2, Method::W, 1e7, 2.0 * 0.0015 * 1e7);
        assert!((model.micros_per_unit(3, Method::W) - 0.003).abs() < 1e-12);
        // ...and an unmeasured method runs twice its prior too.
        let aw = model.micros_per_unit(2, Method::Aw);
        assert!((aw - 2.0 * prior_micros_per_unit(Method::Aw)).abs() < 1e-12, "{aw}");
        // Too little measured time is timer noise: the prior stands.
        let mut noise = CostModel::new();
        noise.observe(2, Method::W, 1e6, 10.0);
        assert_eq!(noise.micros_per_unit(2, Method::W), prior_micros_per_unit(Method::W));
    }

    #[test]
    fn work_weights_tasks_by_cost() {
        // One 10x10 and one 100x100 board, 4 starts each: the big board's
        // tasks cost 100 times the small one's.
        let s = sweep("[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [10, 100]\n", 4, "\"w\"");
        let mut tally = WorkTally::new(&s);
        let small = s.configurations()[0].cost_per_task();
        tally.add(0, 0, 4, 0, 4.0 * small * 1.0);
        let work = tally.work(&s);
        // Half the tasks, but 1/101 of the work.
        assert!((work.percent() - 100.0 / 101.0).abs() < 1e-9, "{work:?}");
        assert!((work.done_micros - 4.0 * small * 1.0).abs() < 1e-6);
        tally.add(1, 0, 4, 0, 4.0 * 100.0 * small * 1.0);
        assert_eq!(tally.work(&s).percent(), 100.0);
        // A duplicate result does not push it past the whole.
        tally.add(1, 0, 1, 0, 1.0);
        assert_eq!(tally.work(&s).percent(), 100.0);
    }
}
