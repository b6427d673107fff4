//! How large a shard is cut: a measured rate of microseconds per unit of
//! estimated cost, the configured target, and guided self-scheduling near
//! the end of the work.

use super::shard::ShardRun;
use super::sweep_run::SweepPhase;
use super::Scheduler;

/// The smallest shard [`Scheduler::shard_micros_now`] cuts near the end of
/// the work, as a fraction of the target shard.
const MIN_SHARD_FRACTION: f64 = 0.05;

/// A task's reported time counts toward shard sizing up to this many
/// leases: a worker's clock or a bug cannot make every shard tiny.
pub(super) const MAX_TASK_MICROS_PER_LEASE: f64 = 10.0;

/// Measured microseconds per unit of estimated cost (cells x moves per
/// task), smoothed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rate {
    pub micros_per_cost: f64,
}

impl Default for Rate {
    fn default() -> Self {
        // About 1.5 ns per cell and move for a W walk, as a start.
        Rate { micros_per_cost: 0.0015 }
    }
}

impl Rate {
    /// Folds in `tasks` new tasks of `cost_per_task` each that took
    /// `micros` in all (already bounded per task).
    pub fn observe(&mut self, micros: f64, tasks: usize, cost_per_task: f64) {
        if micros <= 0.0 || tasks == 0 {
            return;
        }
        let rate = micros / (cost_per_task * tasks as f64);
        if rate.is_finite() && rate > 0.0 {
            self.micros_per_cost = 0.8 * self.micros_per_cost + 0.2 * rate;
        }
    }
}

impl Scheduler {
    /// The most one task's reported time counts for, in microseconds.
    pub(super) fn max_task_micros(&self) -> f64 {
        MAX_TASK_MICROS_PER_LEASE * self.config.lease.as_micros() as f64
    }

    /// Estimated wall time of a shard on one thread, from the measured rate.
    pub(super) fn estimate_micros(&self, run: &ShardRun) -> f64 {
        let cost = self.sweeps.get(&run.sweep).map_or(0.0, |s| {
            s.sweep.configurations().get(run.plan.config as usize).map_or(0.0, |c| c.cost_per_task()) * run.tasks as f64
        });
        cost * self.rate.micros_per_cost
    }

    /// The shard size to aim for now, in estimated microseconds on one
    /// thread: the configured target, shrunk towards the end of the work so
    /// that every thread gets a share of what is left (guided
    /// self-scheduling) instead of one worker finishing a long last shard
    /// while the others idle. Never below `MIN_SHARD_FRACTION` of the target,
    /// so the tail does not drown in per-shard overhead.
    ///
    /// Runs on every poll: the open shards (a thousand with a thousand
    /// workers) are summed only when the work not yet cut does not already
    /// give every thread a whole target, which is most of a long sweep.
    pub(super) fn shard_micros_now(&self) -> f64 {
        let target = self.config.target_shard.as_micros() as f64;
        let threads: f64 = self.workers.values().map(|w| w.trusted_threads()).sum();
        let unplanned: f64 = self
            .sweeps
            .values()
            .filter(|s| s.phase == SweepPhase::Cutting)
            .map(|s| s.sweep.cost_after(s.cursor))
            .sum::<f64>()
            * self.rate.micros_per_cost;
        let share = |work: f64| work / (2.0 * threads.max(1.0));
        if share(unplanned) >= target {
            return target;
        }
        let open: f64 = self.open_shards().map(|(_, r)| self.estimate_micros(r)).sum();
        share(unplanned + open).clamp(target * MIN_SHARD_FRACTION, target)
    }
}
