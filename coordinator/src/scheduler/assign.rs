//! Handing shards out: queued ones first, then newly cut ones, within the
//! worker's budget of held work.

use std::sync::Arc;
use std::time::Instant;

use sweep::{Cursor, Planner, ShardPlan, Sweep};

use super::shard::{Lease, ShardRun, ShardState};
use super::sweep_run::SweepPhase;
use super::Scheduler;
use crate::ids::{Epoch, ShardId, SweepKey, WorkerId};
use crate::store::NewShards;

/// A shard handed to a worker: everything it needs to run it.
#[derive(Debug, Clone)]
pub struct Assignment {
    pub shard: ShardId,
    pub epoch: Epoch,
    pub sweep_key: SweepKey,
    pub sweep_id: String,
    pub sweep: Arc<Sweep>,
    pub plan: ShardPlan,
    pub starts: Arc<[u64]>,
}

/// A shard just leased, whose start cells may still have to be drawn.
#[derive(Debug, Clone)]
pub struct LeasedShard {
    pub shard: ShardId,
    pub epoch: Epoch,
    pub sweep_key: SweepKey,
    pub sweep_id: String,
    pub sweep: Arc<Sweep>,
    pub plan: ShardPlan,
    /// None until drawn ([`Grant::draw_starts`]).
    pub starts: Option<Arc<[u64]>>,
}

/// What one [`Scheduler::assign`] leased.
#[derive(Debug, Clone, Default)]
pub struct Grant {
    pub leased: Vec<LeasedShard>,
}

impl Scheduler {
    /// Leases up to `free` shards to the worker, within its budget of held
    /// work (target shards per trusted thread, see `WorkerRun::trusted_threads`):
    /// queued ones first, then
    /// newly cut ones (kept for the database to record, see
    /// [`Scheduler::take_unstored`], before the assignments are sent). Start
    /// cells not cached are left to [`Grant::draw_starts`], outside the lock.
    pub fn assign(&mut self, worker: WorkerId, free: usize, now: Instant) -> Grant {
        let mut grant = Grant::default();
        // However many slots a worker asks for, it holds at most about
        // `held_per_thread` target shards of estimated work per thread, so
        // one fast-polling worker cannot take the remaining work from others.
        let threads = self.workers.get(&worker).map_or(1.0, |w| w.trusted_threads());
        let target = self.shard_micros_now();
        let budget = target * self.config.held_per_thread * threads;
        let held_shards = self.shards.values().filter(|r| r.lease().is_some_and(|l| l.worker == worker));
        let mut held: f64 = held_shards.map(|r| self.estimate_micros(r)).sum();
        if held == 0.0 {
            // Its progress clock starts with the work it now takes.
            if let Some(w) = self.workers.get_mut(&worker) {
                w.progress_at = now;
            }
        }
        while grant.leased.len() < free {
            let shard = match self.queue.pop_front() {
                Some(id) => match self.shards.get(&id) {
                    Some(run) if run.state == ShardState::Queued => id,
                    _ => continue,
                },
                None => match self.cut(target) {
                    Some(id) => id,
                    None => break,
                },
            };
            let Some(run) = self.shards.get(&shard) else { continue };
            let estimate = self.estimate_micros(run);
            if held > 0.0 && held + estimate > budget {
                self.queue.push_front(shard);
                break;
            }
            held += estimate;
            let epoch = Epoch(self.next_epoch);
            self.next_epoch += 1;
            let lease = Lease { worker, epoch, deadline: now + self.config.lease };
            // A shard of a queued sweep is always in the map; taken above.
            let (key, plan) = (run.sweep, run.plan.clone());
            let starts = run.starts.clone().or_else(|| self.cached_starts(key, &plan));
            let Some(s) = self.sweeps.get(&key) else { continue };
            let (sweep_id, sweep) = (s.id.clone(), s.sweep.clone());
            self.transition(shard, ShardState::Leased(lease));
            if let Some(run) = self.shards.get_mut(&shard) {
                if !run.given_to.contains(&worker) {
                    run.given_to.push(worker);
                }
                if run.starts.is_none() {
                    run.starts = starts.clone();
                }
            }
            grant.leased.push(LeasedShard { shard, epoch, sweep_key: key, sweep_id, sweep, plan, starts });
        }
        grant
    }

    /// Cuts one new shard, of about `target` estimated microseconds, from
    /// the oldest running sweep with grid left. The new shard is queued
    /// state-wise but not in the queue: the caller leases it at once.
    fn cut(&mut self, target: f64) -> Option<ShardId> {
        let target_cost = target / self.rate.micros_per_cost;
        let key = self.sweeps.iter_mut().find_map(|(&key, s)| {
            if s.phase == SweepPhase::Draining {
                return None;
            }
            match Planner::new(&s.sweep).next_shard(&mut s.cursor, target_cost) {
                Some(plan) => Some((key, plan)),
                None => {
                    s.phase = SweepPhase::Draining;
                    None
                }
            }
        });
        let (key, plan) = key?;
        Some(self.add_shard(key, plan))
    }

    /// Adds a queued-state shard of `key` (a new cut, or a re-planned gap)
    /// and notes it for the database, with the sweep's cursor as it now is.
    pub(super) fn add_shard(&mut self, key: SweepKey, plan: ShardPlan) -> ShardId {
        let id = ShardId(self.next_shard);
        self.next_shard += 1;
        let (methods, cursor) = match self.sweeps.get_mut(&key) {
            Some(s) => {
                s.tally.open += 1;
                (s.sweep.methods().len(), s.cursor)
            }
            None => (0, Cursor::default()),
        };
        self.shards.insert(id, ShardRun::new(key, plan.clone(), methods, 0));
        match self.unstored.last_mut() {
            Some(n) if n.sweep == key => {
                n.shards.push((id, plan));
                n.cursor = cursor;
            }
            _ => self.unstored.push(NewShards { sweep: key, shards: vec![(id, plan)], cursor }),
        }
        id
    }

    /// Shards cut since the last call, in cut order, for the database to
    /// record. Give them back with [`Scheduler::restore_unstored`] if the
    /// write fails, so they are recorded (in order) by the next one.
    pub fn take_unstored(&mut self) -> Vec<NewShards> {
        std::mem::take(&mut self.unstored)
    }

    /// Puts back cuts whose write failed, ahead of any cut since.
    pub fn restore_unstored(&mut self, mut cuts: Vec<NewShards>) {
        cuts.append(&mut self.unstored);
        self.unstored = cuts;
    }
}
