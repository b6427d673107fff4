//! Holders that keep shards without delivering (issue 58): how long a
//! lease may go without a result whatever its heartbeats and polls say,
//! what losing a shard costs the shard and its holder, and the cooldown
//! that keeps a worker that stalls again and again off a sweep.
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

use super::shard::{ShardRun, ShardState};
use super::{Scheduler, Settled};
use crate::ids::{ShardId, SweepKey, WorkerId};

/// Leases a holder may heartbeat without delivering a new result, nor its
/// tasks polling, before it loses its shards (at least; longer for tasks
/// estimated longer). Also the least a lease may go without a new result on
/// its shard, polls or not (`Scheduler::hold_bound`).
const NO_PROGRESS_LEASES: u32 = 6;

/// How many times its estimated time (the whole shard on one thread) a
/// lease may go without a new result on its shard. The clock restarts with
/// every result, so this covers the wait for the first: a shard queues at
/// its worker behind at most `held_per_thread` (2) target shards a thread,
/// then takes its own estimate; eight leaves more than twice that for
/// estimates that run short.
const HOLD_FACTOR: f64 = 8.0;

/// Doublings of a shard's hold bound at most, one for each earlier holder
/// that lost it for holding it past its bound. Estimates come from a rate
/// fitted to the walks and know nothing of a `bt` or `solve` budget (a 1e8
/// node `bt` task on a 12x12 (3,2) board took 48 s here, estimated at
/// 2 µs), so no multiple of them keeps an honest long task; a bound that
/// doubles does, after a few losses, which cost time but no failure. Ten
/// doublings of six 10 s leases are 17 hours, past a 1e10-node task on
/// that board (about 80 minutes at that rate).
const MAX_HOLD_DOUBLINGS: u32 = 10;

/// The longest hold bound: the estimate a worker's reported times feed
/// cannot push a deadline past what an `Instant` holds.
const MAX_HOLD: Duration = Duration::from_secs(30 * 86_400);

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
    /// It delivered no result within the shard's hold bound, busy or not.
    Overdue(Duration),
}

impl Loss {
    /// A failed attempt at the shard. Holding it past its bound is not:
    /// the holder was working by its polls, and the bound may just be
    /// short of an honest long task (see `MAX_HOLD_DOUBLINGS`).
    fn is_failure(&self) -> bool {
        !matches!(self, Loss::Overdue(_))
    }

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
            Loss::Overdue(bound) => {
                format!("its holder delivered no result within its hold bound of {} s", bound.as_secs())
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

    /// How long a lease of `run` may go without a new result on it, polls
    /// or not: `NO_PROGRESS_LEASES` leases, or `HOLD_FACTOR` times its
    /// estimated time if longer, doubled for each earlier holder that lost
    /// it so (`MAX_HOLD_DOUBLINGS`).
    pub(super) fn hold_bound(&self, run: &ShardRun) -> Duration {
        let floor = (self.config.lease * NO_PROGRESS_LEASES).as_secs_f64();
        let base = floor.max(HOLD_FACTOR * self.estimate_micros(run) / 1e6);
        let secs = base * f64::from(1u32 << run.overdue.min(MAX_HOLD_DOUBLINGS));
        if secs.is_finite() && secs < MAX_HOLD.as_secs_f64() {
            Duration::from_secs_f64(secs)
        } else {
            MAX_HOLD
        }
    }

    /// Restarts the hold bound of a shard whose holder just delivered a
    /// new result on it.
    pub(super) fn extend_hold(&mut self, id: ShardId, now: Instant) {
        let Some(bound) = self.shards.get(&id).map(|run| self.hold_bound(run)) else { return };
        if let Some(ShardState::Leased(lease)) = self.shards.get_mut(&id).map(|run| &mut run.state) {
            lease.hold_until = now + bound;
        }
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

    /// Leases held past their hold bound, by shard id.
    pub(super) fn overdue(&self, now: Instant) -> Vec<(ShardId, WorkerId, Duration)> {
        let mut overdue: Vec<(ShardId, WorkerId, Duration)> = self
            .open_shards()
            .filter_map(|(id, run)| {
                let lease = run.lease().filter(|l| l.hold_until < now)?;
                Some((id, lease.worker, self.hold_bound(run)))
            })
            .collect();
        overdue.sort_unstable_by_key(|&(id, _, _)| id);
        overdue
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
        run.lost_to.push((worker, now));
        if matches!(loss, Loss::Overdue(_)) {
            run.overdue += 1;
        }
        // An error counts every time: a shard that errors deterministically
        // must fail on a lone worker (`ksweep run`) too. An expiry or a
        // stall counts once per worker, none after a counted failure there.
        let counted = match loss {
            Loss::Error(_) => true,
            _ => loss.is_failure() && !run.failed_on.contains(&worker),
        };
        if counted {
            if !run.failed_on.contains(&worker) {
                run.failed_on.push(worker);
            }
            run.failures += 1;
        }
        let (failures, key) = (run.failures, run.sweep);
        let error = match (&loss, counted) {
            (Loss::Error(e), _) => e.clone(),
            (_, true) => format!("{} (failed attempt {failures}, each on another worker)", loss.reason()),
            (Loss::Overdue(_), false) => format!("{} (no failure counted: its tasks polled)", loss.reason()),
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
    /// the last are one stall (a worker's shards expire or overrun one by
    /// one); a stall a cooldown after the last starts the count again.
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
