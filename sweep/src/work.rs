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
/// ratios between methods matter once a sweep has results: those of the
/// Warnsdorff family are measured ones (CPU time a unit against W's, on
/// (3,2) 2D N 5..230 and (2,1) 3D N 4..70, 400 starts: W+ 2.2, AW 1.5, AW+
/// 2.3, MW 1.3, WR 5.8, whose random tiebreaks draw numbers and run no
/// walks together); a method priced as W's 5.8th part made `check` say
/// 1 min 35 s for 3 min 53 s.
fn prior_micros_per_unit(method: Method) -> f64 {
    match method {
        Method::W => 0.0015,
        Method::WPlus => 0.0033,
        Method::Wr | Method::WrPlus => 0.0087,
        // Up to K walks where the first fails; one where it succeeds.
        Method::Aw => 0.0022,
        Method::AwPlus => 0.0034,
        Method::Mw => 0.002,
        Method::Construct => 0.01,
        // Search within a budget, network iterations: far dearer per cell.
        Method::Bt | Method::Solve => 0.05,
        Method::Nn(_) => 2.0,
    }
}

/// Measured cost and time of one group of results, and the sums a line
/// `micros per task = fixed + per_unit x units per task` is fitted from
/// (each configuration's tasks a point): a task has a cost of its own
/// besides its cells (a reset, a start drawn, a result sent), which on
/// small boards is most of it, so one rate per unit fitted there would
/// price a large board many times too dear.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sums {
    /// Tasks.
    tasks: f64,
    /// Units of cost (cells x moves, summed over tasks).
    units: f64,
    /// Their measured time, in microseconds.
    micros: f64,
    /// Sum over tasks of units squared, and of units x micros per task.
    units_sq: f64,
    units_micros: f64,
}

/// A group's price of a task: fixed microseconds, plus microseconds per
/// unit of cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TaskPrice {
    /// Microseconds every task takes, whatever its board.
    pub fixed: f64,
    /// Microseconds per unit of cost (cells x moves).
    pub per_unit: f64,
}

impl TaskPrice {
    /// Estimated microseconds of `tasks` tasks of `units` units in all.
    pub fn of(&self, tasks: f64, units: f64) -> f64 {
        self.fixed * tasks + self.per_unit * units
    }

    fn proportional(per_unit: f64) -> TaskPrice {
        TaskPrice { fixed: 0.0, per_unit }
    }
}

impl Sums {
    /// `tasks` tasks of `per_task` units each that took `micros` in all.
    fn add(&mut self, tasks: f64, per_task: f64, micros: f64) {
        self.tasks += tasks;
        self.units += tasks * per_task;
        self.micros += micros;
        self.units_sq += tasks * per_task * per_task;
        self.units_micros += per_task * micros;
    }

    fn merge(&mut self, other: &Sums) {
        self.tasks += other.tasks;
        self.units += other.units;
        self.micros += other.micros;
        self.units_sq += other.units_sq;
        self.units_micros += other.units_micros;
    }

    /// Microseconds per unit over the whole group, where enough was measured.
    fn rate(&self) -> Option<f64> {
        (self.micros >= MIN_MEASURED_MICROS && self.units > 0.0).then(|| self.micros / self.units)
    }

    /// The fitted line (least squares over tasks), where enough was
    /// measured: a fixed part only where the group's boards differ in size
    /// and the fit gives both parts a positive value; else proportional.
    fn price(&self) -> Option<TaskPrice> {
        let rate = self.rate()?;
        let spread = self.tasks * self.units_sq - self.units * self.units;
        if spread > 1e-9 * self.tasks * self.units_sq {
            let per_unit = (self.tasks * self.units_micros - self.units * self.micros) / spread;
            let fixed = (self.micros - per_unit * self.units) / self.tasks;
            if per_unit > 0.0 && fixed > 0.0 {
                return Some(TaskPrice { fixed, per_unit });
            }
        }
        Some(TaskPrice::proportional(rate))
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

    /// Folds in `tasks` results of `dims`-dimensional boards by `method`,
    /// of `units_per_task` units of cost (cells x moves) each, that took
    /// `micros` in all.
    pub fn observe(&mut self, dims: usize, method: Method, tasks: f64, units_per_task: f64, micros: f64) {
        let fine = |x: f64| x.is_finite() && x >= 0.0;
        if fine(tasks) && fine(units_per_task) && fine(micros) && tasks > 0.0 && units_per_task > 0.0 {
            self.groups.entry((dims, method)).or_default().add(tasks, units_per_task, micros);
        }
    }

    /// The price of a task of (D, method): its own fitted line where it has
    /// enough measured; else the method's rate per unit over every D
    /// measured; else the prior, scaled by how the measured groups compare
    /// with their priors (a faster or slower machine than the priors').
    pub fn price(&self, dims: usize, method: Method) -> TaskPrice {
        if let Some(price) = self.groups.get(&(dims, method)).and_then(Sums::price) {
            return price;
        }
        let mut same_method = Sums::default();
        let (mut measured, mut expected) = (0.0, 0.0);
        for (&(_, m), sums) in &self.groups {
            if m == method {
                same_method.merge(sums);
            }
            measured += sums.micros;
            expected += sums.units * prior_micros_per_unit(m);
        }
        if let Some(rate) = same_method.rate() {
            return TaskPrice::proportional(rate);
        }
        let speed = if measured >= MIN_MEASURED_MICROS && expected > 0.0 { measured / expected } else { 1.0 };
        TaskPrice::proportional(prior_micros_per_unit(method) * speed)
    }

    /// Estimated CPU microseconds of one task of `entry` by `method`.
    pub fn task_micros(&self, entry: &ConfigEntry, method: Method) -> f64 {
        self.price(entry.dims(), method).of(1.0, entry.cost_per_task())
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
    /// The cells it took from stored results when submitted: they price the
    /// model, but are no part of the work a run does.
    reused: Reused,
}

/// The work done so far, per (D, method): tasks and units of cost, so that
/// a rate of work is priced at the model's current rates at both ends of
/// its window ([`WorkRate`]), not at rates refitted in between.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DoneCounts {
    groups: HashMap<(usize, Method), (f64, f64)>,
}

impl DoneCounts {
    /// Estimated microseconds of this work at `model`'s prices.
    pub fn priced(&self, model: &CostModel) -> f64 {
        self.groups.iter().map(|(&(dims, method), &(tasks, units))| model.price(dims, method).of(tasks, units)).sum()
    }

    /// The work done since `earlier` (a count never goes back; where it
    /// did, a restart, none).
    fn since(&self, earlier: &DoneCounts) -> DoneCounts {
        let groups = self
            .groups
            .iter()
            .map(|(&g, &(tasks, units))| {
                let (t0, u0) = earlier.groups.get(&g).copied().unwrap_or_default();
                (g, ((tasks - t0).max(0.0), (units - u0).max(0.0)))
            })
            .collect();
        DoneCounts { groups }
    }
}

/// A running sweep's estimated work: what it has done and has left, the
/// model that priced them, and the work done per (D, method) for its rate.
#[derive(Clone, Debug)]
pub struct WorkNow {
    /// Its work done and in all.
    pub work: Work,
    /// The model that priced it.
    pub model: CostModel,
    /// Its work done, per (D, method).
    pub done: DoneCounts,
}

impl WorkTally {
    /// An empty tally for `sweep`, whose cells `reused` took from stored
    /// results.
    pub fn new(sweep: &Sweep, reused: Reused) -> WorkTally {
        let methods = sweep.methods().len();
        WorkTally { methods, cells: vec![(0, 0, 0.0); sweep.configurations().len() * methods], reused }
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

    /// The model fitted from this tally's results (reused ones included:
    /// they were measured too).
    pub fn model(&self, sweep: &Sweep) -> CostModel {
        let mut model = CostModel::new();
        self.each(sweep, |entry, _, method, (tasks, _, micros)| {
            model.observe(entry.dims(), method, tasks as f64, entry.cost_per_task(), micros);
        });
        model
    }

    /// The sweep's work: every task it runs (not those it took from stored
    /// results) priced by the model fitted from the results so far. A
    /// result counts for at most its (configuration, method)'s task count
    /// (a duplicate stored twice counts once).
    pub fn work(&self, sweep: &Sweep) -> Work {
        self.now(sweep).work
    }

    /// [`WorkTally::work`], with the model and the work done per group.
    pub fn now(&self, sweep: &Sweep) -> WorkNow {
        let model = self.model(sweep);
        let per_config = sweep.starts_per_config();
        // One price per (D, method), not one fit per configuration.
        let mut prices: HashMap<(usize, Method), TaskPrice> = HashMap::new();
        let mut work = Work::default();
        let mut done = DoneCounts::default();
        let mut cells = sweep.precision().map(|_| Cells::default());
        self.each(sweep, |entry, j, method, (tasks, successes, _)| {
            if self.reused.taken(entry.index).contains(j) {
                return;
            }
            let most = entry.start_count(per_config);
            let group = (entry.dims(), method);
            let price = *prices.entry(group).or_insert_with(|| model.price(group.0, method));
            let each = price.of(1.0, entry.cost_per_task());
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
            let counted = tasks.min(total) as f64;
            work.total_micros += total as f64 * each;
            work.done_micros += counted * each;
            let sums = done.groups.entry(group).or_default();
            sums.0 += counted;
            sums.1 += counted * entry.cost_per_task();
        });
        work.adaptive = cells;
        WorkNow { work, model, done }
    }

    fn each(&self, sweep: &Sweep, mut f: impl FnMut(&ConfigEntry, usize, Method, (u64, u64, f64))) {
        let methods = sweep.methods();
        for (entry, row) in sweep.configurations().iter().zip(self.cells.chunks(self.methods.max(1))) {
            for (j, (&method, &cell)) in methods.iter().zip(row).enumerate() {
                f(entry, j, method, cell);
            }
        }
    }
}

/// A running sweep's rate of work over a sliding window of samples of its
/// work done ([`DoneCounts`]), priced at the model of the moment: the ETA
/// divides the work left by it. Pricing both ends alike keeps a refit
/// (a group measured dearer than its borrowed rate) from reading as work
/// done, which made early ETAs optimistic.
#[derive(Clone, Debug)]
pub struct WorkRate {
    window: std::time::Duration,
    samples: std::collections::VecDeque<(std::time::Duration, DoneCounts)>,
}

impl WorkRate {
    /// A window of `window` (a minute, say).
    pub fn new(window: std::time::Duration) -> WorkRate {
        WorkRate { window, samples: Default::default() }
    }

    /// Records the work `done` at time `at` (any monotonic origin).
    pub fn observe(&mut self, at: std::time::Duration, done: DoneCounts) {
        if self.samples.back().is_some_and(|(t, _)| at < *t) {
            self.samples.clear();
        }
        self.samples.push_back((at, done));
        while self.samples.len() > 2 && at.saturating_sub(self.samples[1].0) >= self.window {
            self.samples.pop_front();
        }
    }

    /// Estimated microseconds of work a second over the window at `model`'s
    /// prices; None until it spans two seconds.
    pub fn rate(&self, model: &CostModel) -> Option<f64> {
        let ((t0, d0), (t1, d1)) = (self.samples.front()?, self.samples.back()?);
        let span = t1.checked_sub(*t0)?;
        (span >= crate::progress::MIN_SPAN).then(|| d1.since(d0).priced(model) / span.as_secs_f64())
    }

    /// Time to do `remaining_micros` of work at that rate; None without a
    /// rate, or with nothing done in the window.
    pub fn eta(&self, remaining_micros: f64, model: &CostModel) -> Option<std::time::Duration> {
        let rate = self.rate(model).filter(|&r| r > 0.0)?;
        std::time::Duration::try_from_secs_f64(remaining_micros / rate).ok()
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
    use crate::MethodSet;

    fn sweep(grids: &str, starts: u64, methods: &str) -> Sweep {
        Sweep::parse(&format!("name = \"t\"\nseed = 1\nstarts = {starts}\nmethods = [{methods}]\n{grids}")).unwrap()
    }

    #[test]
    fn an_unmeasured_group_borrows_its_method_then_the_machine_speed() {
        let mut model = CostModel::new();
        let prior = TaskPrice::proportional(prior_micros_per_unit(Method::W));
        assert_eq!(model.price(2, Method::W), prior);
        // W on 2D measured at twice the prior on one board size: W on 3D
        // borrows its rate per unit...
        model.observe(2, Method::W, 1e3, 1e4, 2.0 * 0.0015 * 1e7);
        assert!((model.price(3, Method::W).per_unit - 0.003).abs() < 1e-12);
        // ...and an unmeasured method runs twice its prior too.
        let aw = model.price(2, Method::Aw).per_unit;
        assert!((aw - 2.0 * prior_micros_per_unit(Method::Aw)).abs() < 1e-12, "{aw}");
        // Too little measured time is timer noise: the prior stands.
        let mut noise = CostModel::new();
        noise.observe(2, Method::W, 1e2, 1e4, 10.0);
        assert_eq!(noise.price(2, Method::W), prior);
    }

    #[test]
    fn a_task_has_a_fixed_cost_besides_its_cells() {
        // 2 µs a task plus 0.001 µs a unit, on boards of 10^3 and 10^6 units.
        let mut model = CostModel::new();
        for units in [1e3, 1e6] {
            model.observe(2, Method::W, 500.0, units, 500.0 * (2.0 + 0.001 * units));
        }
        let price = model.price(2, Method::W);
        assert!((price.fixed - 2.0).abs() < 1e-6 && (price.per_unit - 0.001).abs() < 1e-12, "{price:?}");
        // One rate per unit would have priced a task of 10^7 units at
        // about 10 % over the truth; the line is exact.
        assert!((price.of(1.0, 1e7) - 10_002.0).abs() < 1e-3);
        // A line whose fit says a negative fixed part is taken as proportional.
        let mut odd = CostModel::new();
        odd.observe(2, Method::W, 500.0, 1e3, 500.0 * 1.0);
        odd.observe(2, Method::W, 500.0, 1e6, 500.0 * 2_000.0);
        assert_eq!(odd.price(2, Method::W).fixed, 0.0);
    }

    #[test]
    fn work_weights_tasks_by_cost() {
        // One 10x10 and one 100x100 board, 4 starts each: the big board's
        // tasks cost 100 times the small one's.
        let s = sweep("[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [10, 100]\n", 4, "\"w\"");
        let mut tally = WorkTally::new(&s, Reused::none());
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

    #[test]
    fn results_taken_from_stored_ones_are_no_part_of_the_work() {
        // W and AW on two boards; the first board's W was taken whole.
        let s = sweep("[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [10, 11]\n", 4, "\"w\", \"aw\"");
        let mut taken = MethodSet::EMPTY;
        taken.insert(0);
        let mut tally = WorkTally::new(&s, Reused::new(vec![taken]));
        tally.add(0, 0, 4, 4, 4_000.0);
        let fresh = tally.now(&s);
        assert_eq!(fresh.work.percent(), 0.0, "nothing of the run's own work is done: {:?}", fresh.work);
        assert_eq!(fresh.done.priced(&fresh.model), 0.0);
        // Its time still prices the rest (W at 1 ms a task, as measured).
        assert!(fresh.work.total_micros > 1_000.0 * 4.0, "{:?}", fresh.work);
        tally.add(1, 0, 4, 4, 4_000.0);
        assert!(tally.work(&s).percent() > 0.0);
    }

    #[test]
    fn a_refit_is_not_work_done() {
        // Half the W tasks of a 2D and a 3D board run, timed only on 2D:
        // 3D borrows 2D's rate. Then 3D is measured ten times dearer. The
        // rate of work over the window is what ran in it, at today's prices.
        let s = sweep(
            "[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [40]\n[[grid]]\nrule = [2, 1]\ndims = [3]\nn = [12]\n",
            100,
            "\"w\"",
        );
        let (u2, u3) = (s.configurations()[0].cost_per_task(), s.configurations()[1].cost_per_task());
        let mut tally = WorkTally::new(&s, Reused::none());
        tally.add(0, 0, 50, 50, 50.0 * u2 * 0.01);
        let mut rate = WorkRate::new(std::time::Duration::from_secs(60));
        rate.observe(std::time::Duration::from_secs(0), tally.now(&s).done);
        // Ten seconds: 10 more 3D tasks, timed at 0.1 µs a unit.
        tally.add(1, 0, 10, 10, 10.0 * u3 * 0.1);
        let now = tally.now(&s);
        rate.observe(std::time::Duration::from_secs(10), now.done.clone());
        let per_sec = rate.rate(&now.model).unwrap();
        let ran = now.model.price(3, Method::W).of(10.0, 10.0 * u3);
        assert!((per_sec - ran / 10.0).abs() < 1e-6 * ran, "{per_sec} against {}", ran / 10.0);
    }
}
