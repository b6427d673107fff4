//! Holders that keep shards without delivering (issue 58): what losing a
//! shard costs the shard and its holder, and the cooldown that keeps a
//! worker that stalls again and again off a sweep.
//!
//! A shard fails for good only once it failed on `max_shard_failures`
//! distinct workers: a worker that lies (about its memory, labels or
//! progress) can delay the shards only it may run, never fail them, while
//! a shard that kills every worker taking it still fails, since a restarted
//! worker registers with a new id.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::shard::{ShardRun, ShardState};
use super::{Scheduler, Settled};
use crate::ids::{ShardId, SweepKey, WorkerId};

/// Leases a holder may heartbeat without delivering a new result, nor its
/// tasks polling, before it loses its shards (at least; longer for tasks
/// estimated longer).
const NO_PROGRESS_LEASES: u32 = 6;

/// Leases of the cooldown: a worker that stalled on a sweep twice is given
/// none of its shards for this long, and no worker is given back a shard
/// it lost for this long. Thirty (five minutes at the default 10 s lease):
/// a worker that stalls on purpose spends 30 leases off the sweep for every
/// two stall windows (12 leases at least) it holds shards in, so others run
/// them; an honest worker that lost its leases to a network blip is back in
/// minutes.
const STALL_COOLDOWN_LEASES: u32 = 30;

/// Stalls of a worker on one sweep, each within a cooldown of the last,
/// that start a cooldown: one may be bad luck (a blip, an estimate far
/// short), a second is a pattern.
const STALLS_BEFORE_COOLDOWN: u32 = 2;

/// How a holder lost a shard.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Loss {
    /// It reported the error (a worker saying it cannot run the shard).
    Error(String),
    /// Its lease expired: it died, was cut off, or stopped listing it.
    Expired,
    /// It delivered no result, and its tasks did not poll, for the stall
    /// window.
    Stalled,
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
            Loss::Stalled => "its holder heartbeated but delivered no result".into(),
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

    /// Workers holding shards that have delivered no new result, and whose
    /// tasks have not polled, for `NO_PROGRESS_LEASES` leases, or four times
    /// the longest task they hold is estimated to take if that is longer;
    /// with that window.
    pub(super) fn stalled_holders(&self, now: Instant) -> Vec<(WorkerId, Duration)> {
        let mut longest: HashMap<WorkerId, f64> = HashMap::new();
        for (_, run) in self.open_shards() {
            if let Some(lease) = run.lease() {
                let task = self.estimate_micros(run) / run.tasks.max(1) as f64;
                let entry = longest.entry(lease.worker).or_default();
                *entry = entry.max(task);
            }
        }
        let base = self.config.lease * NO_PROGRESS_LEASES;
        let mut stalled: Vec<(WorkerId, Duration)> = longest
            .into_iter()
            .filter_map(|(worker, task_micros)| {
                let window = base.max(Duration::from_secs_f64((4.0 * task_micros / 1e6).min(1e9)));
                let w = self.workers.get(&worker)?;
                (now.saturating_duration_since(w.progress_at) > window).then_some((worker, window))
            })
            .collect();
        stalled.sort_unstable_by_key(|&(w, _)| w);
        stalled
    }

    /// `worker` lost the shard it held: it is not given it again within the
    /// cooldown, and the shard is queued again, or fails for good once it
    /// failed on `max_shard_failures` distinct workers. A stall counts
    /// toward the worker's cooldown. Nothing happens unless `worker` holds
    /// the shard.
    pub(super) fn lose(&mut self, id: ShardId, worker: WorkerId, loss: Loss, now: Instant, out: &mut Settled) {
        let cooldown = self.cooldown();
        let Some(run) = self.shards.get_mut(&id).filter(|r| r.lease().is_some_and(|l| l.worker == worker)) else {
            return;
        };
        run.lost_to.retain(|&(w, at)| w != worker && now.saturating_duration_since(at) < cooldown);
        run.lost_to.push((worker, now));
        let counted = !run.failed_on.contains(&worker);
        if counted {
            run.failed_on.push(worker);
            run.failures += 1;
        }
        let (failures, key) = (run.failures, run.sweep);
        let error = match (&loss, counted) {
            (Loss::Error(e), _) => e.clone(),
            (_, true) => format!("{} (failed attempt {failures}, each on another worker)", loss.reason()),
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
    /// the last are one stall (a worker's shards expire one by one); a
    /// stall a cooldown after the last starts the count again.
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
