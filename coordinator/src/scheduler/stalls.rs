//! Holders that keep shards without delivering (issue 58): how long a
//! worker may hold shards without delivering a result, whatever its
//! heartbeats and polls say; what losing a shard costs the shard and its
//! holder; and the cooldown that keeps a worker that stalls again and
//! again off a sweep.
//!
//! Only a new result is progress. Heartbeats keep a lease from expiring,
//! and the cancel-flag polls a worker reports are recorded, but neither
//! shows work done: a liar sends both. A worker that holds shards and
//! delivers no new result, on any of them, for its results window
//! (`Scheduler::results_windows`) stalls: it loses every shard it holds.
//! The window follows the longest task among them at its worst, budget or
//! iterations included, so an honest worker on long `bt`, `solve` or `nn`
//! tasks is not taken for a stalled one, and a shard that waits at its
//! worker behind others costs nothing while the worker delivers those.
//!
//! One window per worker, not a bound per shard: a worker that delivers
//! results on some shards while it keeps another unstarted is not caught
//! until it runs out of the others. An honest worker does that too (its
//! queue), and a per-shard bound cannot tell the two apart without knowing
//! the worker's queue, which is why there is none.
//!
//! A shard fails for good once it failed `max_shard_failures` times,
//! where an expired lease or a stall counts once per worker and a reported
//! error every time: a worker that lies (about its memory, labels or
//! progress) but reports no error can delay the shards only it may run,
//! never fail them; a shard that kills every worker taking it still fails,
//! since a restarted worker registers with a new id; and a shard that
//! errors deterministically fails on a lone worker (`ksweep run`) too.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tour::{Method, Runner};

use super::shard::{ShardRun, ShardState};
use super::{Scheduler, Settled};
use crate::ids::{ShardId, SweepKey, WorkerId};

/// Leases a worker holding shards may go without delivering a new result
/// before it stalls, at least: six (a minute at the default 10 s lease),
/// what a worker on the walks' shards (cut to about a second each) gets.
const NO_PROGRESS_LEASES: u32 = 6;

/// How many times the longest task it holds at its worst
/// (`Scheduler::worst_task_micros`) a worker may go without a new
/// result, unless a batch of such tasks is longer (see
/// `Scheduler::results_windows`). Four, as the stall window had for the
/// walks' estimates before issue 58: for them it is an average, and an
/// `aw` task that fails makes K walks; the budgeted bounds below already
/// sit a few times above what was measured, and four more cover a machine
/// slower or busier than this one and results waiting for the next poll.
const STALL_TASK_FACTOR: f64 = 4.0;

/// Microseconds a `bt` node takes at worst. Measured here (`ksweep tour
/// --method bt`, one thread, both cores loaded by other work): 0.26 µs a
/// node on (3,2) 12x12 (1e8 nodes in 25.7 s), 0.31 on (1,2,2) 6x6x6, 0.24
/// on (2,1) 4x4x4x4 closed (48 moves), 0.75 to 0.95 on (4,3) 1000x1000
/// (3e7 nodes in 24.5 s, a million cells and their set-up). Three is three
/// times the worst of those: 300 s for the default budget of 1e8.
const BT_MICROS_PER_NODE: f64 = 3.0;

/// Microseconds a unit of `solve`'s work budget takes at worst. Measured
/// here: 0.11 µs a unit on a 30x30 board of six one-way moves (1e8 units
/// in 11.4 s, walks and rotations to the end of the budget), 0.08 on (4,3)
/// 24x24 (1e7 units in 0.82 s, the board's refutation included), 0.23 at
/// 1e6 units where fixed costs weigh. The first task on a board may also
/// spend the board's refutation (4 budgets) and the SAT route overruns its
/// share up to threefold (`tour::solve`): one microsecond covers five
/// budgets at twice the rate measured.
const SOLVE_MICROS_PER_UNIT: f64 = 1.0;

/// Microseconds one update of an `nn` neuron takes at worst, counting a
/// neuron per cell and move (twice the edges the network has) and an
/// update per neuron an iteration. Measured here (`ksweep tour --method
/// nn-both`/`nn-cut`): 1.2 ns on (2,1) 30x30 (20,000 iterations in 0.17 s),
/// 7.8 on 300x300, 8.8 on (1,2,2) 40x40x40, 21 on 1000x1000 (100
/// iterations in 17.1 s), and 60 for one iteration there with the
/// network's set-up. A tenth of a microsecond is five times the steady
/// worst and covers that set-up: 80 s for 100 iterations on a million
/// cells.
const NN_MICROS_PER_UPDATE: f64 = 0.1;

/// The longest results window, in seconds: past any real task, and no
/// budget can make the window overflow a `Duration`.
const MAX_WINDOW_SECS: f64 = 1e9;

/// Leases of the cooldown: a worker that stalled on a sweep twice is given
/// none of its shards for this long, and no worker is given back a shard
/// it lost for this long. Thirty (five minutes at the default 10 s lease):
/// a worker that stalls on purpose spends 30 leases off the sweep for every
/// two stall windows (12 leases at least) it holds shards in, so others run
/// them; an honest worker that lost its leases to a network blip is back in
/// minutes.
const STALL_COOLDOWN_LEASES: u32 = 30;

/// Stalls of a worker on one sweep, each within a cooldown of the last,
/// that start a cooldown: one may be bad luck (a blip), a second is a
/// pattern.
const STALLS_BEFORE_COOLDOWN: u32 = 2;

/// How a holder lost a shard.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Loss {
    /// It reported the error (a worker saying it cannot run the shard).
    Error(String),
    /// Its lease expired: it died, was cut off, or stopped listing it.
    Expired,
    /// It delivered no new result, on any shard it held, for its results
    /// window (given), whatever its heartbeats and polls said.
    Stalled(Duration),
}

impl Loss {
    /// A stall of the holder, toward its cooldown. An error is not: the
    /// worker let the shard go at once.
    fn is_stall(&self) -> bool {
        !matches!(self, Loss::Error(_))
    }

    fn reason(&self) -> String {
        match self {
            Loss::Error(e) => e.clone(),
            Loss::Expired => "lease expired: the worker holding it died, stalled or was cut off".into(),
            Loss::Stalled(window) => {
                format!("its holder heartbeated but delivered no new result for {} s", window.as_secs())
            }
        }
    }
}

/// A worker's recent stalls on one sweep.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Stalls {
    count: u32,
    last: Option<Instant>,
    /// Kept off the sweep until then.
    until: Option<Instant>,
}

impl Stalls {
    fn keep_off(&self, now: Instant) -> bool {
        self.until.is_some_and(|until| now < until)
    }
}

impl Scheduler {
    fn cooldown(&self) -> Duration {
        self.config.lease * STALL_COOLDOWN_LEASES
    }

    /// The longest one task of `run` may take at worst, in microseconds:
    /// its walk estimate (cells x moves at the measured rate: the whole of
    /// a Warnsdorff walk or `construct`, and the board's set-up for the
    /// others) plus, for the longest of its budgeted methods, the sweep's
    /// `budget` times `BT_MICROS_PER_NODE` (`bt`) or
    /// `SOLVE_MICROS_PER_UNIT` (`solve`), or its `iterations` times cells
    /// x moves times `NN_MICROS_PER_UPDATE` (the `nn` methods).
    pub(super) fn worst_task_micros(&self, run: &ShardRun) -> f64 {
        let walk = self.estimate_micros(run) / run.tasks.max(1) as f64;
        let Some(sweep) = self.sweeps.get(&run.sweep).map(|s| &s.sweep) else { return walk };
        let Some(entry) = sweep.configurations().get(run.plan.config as usize) else { return walk };
        let budget = sweep.budget() as f64;
        let updates = f64::from(sweep.iterations().max(1)) * entry.cells() as f64 * f64::from(entry.move_count());
        let budgeted = run
            .methods
            .indices()
            .filter_map(|i| sweep.methods().get(i))
            .map(|method| match method {
                Method::Bt => budget * BT_MICROS_PER_NODE,
                Method::Solve => budget * SOLVE_MICROS_PER_UNIT,
                Method::Nn(_) => updates * NN_MICROS_PER_UPDATE,
                _ => 0.0,
            })
            .fold(0.0, f64::max);
        walk + budgeted
    }

    /// How long a worker holding `run` may go without a new result, in
    /// microseconds, as far as `run` goes: `STALL_TASK_FACTOR` times its
    /// worst task, or a batch of them if longer. A worker's workspace runs up to
    /// `Runner::tasks_at_once` (32) tasks of a shard one after the other
    /// and sends their results together, so a lone workspace on a shard of
    /// thirty-two 1e8-node `bt` tasks of (3,2) 12x12 goes 14 minutes here
    /// without one.
    fn window_micros(&self, run: &ShardRun) -> f64 {
        let batch = Runner::tasks_at_once(run.tasks, 1) as f64;
        self.worst_task_micros(run) * STALL_TASK_FACTOR.max(batch)
    }

    /// The results window of every worker holding shards: how long it may
    /// go without delivering a new result, on any shard, before it stalls.
    /// `NO_PROGRESS_LEASES` leases, or the longest `window_micros` of the
    /// shards it holds if longer.
    pub(super) fn results_windows(&self) -> HashMap<WorkerId, Duration> {
        let mut longest: HashMap<WorkerId, f64> = HashMap::new();
        for (_, run) in self.open_shards() {
            if let Some(lease) = run.lease() {
                let micros = self.window_micros(run);
                let entry = longest.entry(lease.worker).or_default();
                *entry = entry.max(micros);
            }
        }
        let floor = (self.config.lease * NO_PROGRESS_LEASES).as_secs_f64();
        longest
            .into_iter()
            .map(|(worker, micros)| {
                let secs = floor.max(micros / 1e6);
                let secs = if secs.is_finite() { secs.min(MAX_WINDOW_SECS) } else { MAX_WINDOW_SECS };
                (worker, Duration::from_secs_f64(secs))
            })
            .collect()
    }

    /// `worker`'s results window, if it holds shards.
    #[cfg(test)]
    pub(super) fn results_window(&self, worker: WorkerId) -> Option<Duration> {
        self.results_windows().remove(&worker)
    }

    /// Workers holding shards that have delivered no new result for their
    /// results window, by id, with that window.
    pub(super) fn stalled_holders(&self, now: Instant) -> Vec<(WorkerId, Duration)> {
        let mut stalled: Vec<(WorkerId, Duration)> = self
            .results_windows()
            .into_iter()
            .filter(|&(worker, window)| {
                self.workers.get(&worker).is_some_and(|w| now.saturating_duration_since(w.progress_at) > window)
            })
            .collect();
        stalled.sort_unstable_by_key(|&(w, _)| w);
        stalled
    }

    /// `worker` lost the shard it held: it is not given it again within the
    /// cooldown, and the shard is queued again, or fails for good at its
    /// `max_shard_failures`th counted failure (an error each time, an
    /// expiry or stall once per worker). A stall counts toward the worker's
    /// cooldown. Nothing happens unless `worker` holds
    /// the shard.
    pub(super) fn lose(&mut self, id: ShardId, worker: WorkerId, loss: Loss, now: Instant, out: &mut Settled) {
        let cooldown = self.cooldown();
        let Some(run) = self.shards.get_mut(&id).filter(|r| r.lease().is_some_and(|l| l.worker == worker)) else {
            return;
        };
        run.lost_to.retain(|&(w, at)| w != worker && now.saturating_duration_since(at) < cooldown);
        // A worker that reported an error may take the shard again at once
        // (`ksweep run` has no other); one that stalled or vanished may not.
        if loss.is_stall() {
            run.lost_to.push((worker, now));
        }
        // An error counts every time: a shard that errors deterministically
        // must fail on a lone worker (`ksweep run`) too. An expiry or a
        // stall counts once per worker, none after a counted failure there.
        let counted = matches!(loss, Loss::Error(_)) || !run.failed_on.contains(&worker);
        if counted {
            if !run.failed_on.contains(&worker) {
                run.failed_on.push(worker);
            }
            run.failures += 1;
        }
        let (failures, key) = (run.failures, run.sweep);
        let error = match (&loss, counted) {
            (Loss::Error(e), _) => e.clone(),
            (_, true) => format!("{} (failed attempt {failures})", loss.reason()),
            (_, false) => format!("{} (no failure counted: it failed on this worker before)", loss.reason()),
        };
        if counted && failures >= self.config.max_shard_failures {
            self.transition(id, ShardState::Failed);
            out.failed.push((id, error));
        } else {
            self.transition(id, ShardState::Queued);
            if counted { &mut out.retried } else { &mut out.requeued }.push((id, error));
        }
        if loss.is_stall() {
            self.note_stall(worker, key, now);
        }
    }

    /// Counts a stall of `worker` on sweep `key`; at `STALLS_BEFORE_COOLDOWN`
    /// it is kept off the sweep for the cooldown. Losses within a lease of
    /// the last are one stall (a worker's shards expire one by one, and a
    /// stall takes them all at once); a stall a cooldown after the last
    /// starts the count again.
    fn note_stall(&mut self, worker: WorkerId, key: SweepKey, now: Instant) {
        let (lease, cooldown) = (self.config.lease, self.cooldown());
        let Some(w) = self.workers.get_mut(&worker) else { return };
        let stalls = w.stalls.entry(key).or_default();
        let since = stalls.last.map(|last| now.saturating_duration_since(last));
        if since.is_some_and(|s| s < lease) {
            return;
        }
        if since.is_none_or(|s| s > cooldown) {
            stalls.count = 0;
        }
        stalls.count += 1;
        stalls.last = Some(now);
        if stalls.count >= STALLS_BEFORE_COOLDOWN {
            stalls.count = 0;
            stalls.until = Some(now + cooldown);
            tracing::warn!(%worker, sweep = key.0, ?cooldown, "a worker stalled twice on a sweep: it gets none of its shards for a while");
        }
    }

    /// The sweeps `worker` stalled on too often to be given their shards
    /// now: none of their grid is cut for it.
    pub(super) fn kept_off(&self, worker: WorkerId, now: Instant) -> Vec<SweepKey> {
        let Some(w) = self.workers.get(&worker) else { return Vec::new() };
        w.stalls.iter().filter(|(_, s)| s.keep_off(now)).map(|(&key, _)| key).collect()
    }

    /// True while `worker` may not be given `run`: it lost the shard within
    /// the cooldown, or is kept off its sweep.
    pub(super) fn excluded(&self, worker: WorkerId, run: &ShardRun, now: Instant) -> bool {
        let cooldown = self.cooldown();
        let stalls = self.workers.get(&worker).and_then(|w| w.stalls.get(&run.sweep));
        run.lost_to.iter().any(|&(w, at)| w == worker && now.saturating_duration_since(at) < cooldown)
            || stalls.is_some_and(|s| s.keep_off(now))
    }
}
