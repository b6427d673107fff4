//! Handing shards out: queued ones first, then newly cut ones, within the
//! worker's budget of held work.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use sweep::{Cursor, MethodSet, Planner, ShardPlan, Sweep};

use super::placement::MAX_UNFIT_CUTS;
use super::shard::{Lease, ShardRun, ShardState};
use super::sweep_run::SweepPhase;
use super::Scheduler;
use crate::ids::{Epoch, ShardId, SweepKey, WorkerId};
use crate::model::NewShards;

/// A shard handed to a worker: everything it needs to run it. `S` is its
/// start cells: drawn (the default), or `Option` in a [`LeasedShard`].
#[derive(Debug, Clone)]
pub struct Assignment<S = Arc<[u64]>> {
    pub shard: ShardId,
    pub epoch: Epoch,
    pub sweep_key: SweepKey,
    pub sweep_id: String,
    pub sweep: Arc<Sweep>,
    pub plan: ShardPlan,
    /// The sweep's methods it runs, in sweep order.
    pub methods: MethodSet,
    pub starts: S,
}

/// A shard just leased, whose start cells are None until drawn
/// ([`Grant::draw_starts`]).
pub type LeasedShard = Assignment<Option<Arc<[u64]>>>;

impl<S> Assignment<S> {
    /// The same shard with start cells `starts`.
    pub fn with_starts<T>(self, starts: T) -> Assignment<T> {
        let Assignment { shard, epoch, sweep_key, sweep_id, sweep, plan, methods, starts: _ } = self;
        Assignment { shard, epoch, sweep_key, sweep_id, sweep, plan, methods, starts }
    }
}

/// Estimated work a worker holds, and the most it may hold (µs).
struct Room {
    held: f64,
    budget: f64,
}

impl Room {
    /// Nothing more fits (a worker holding nothing takes one shard anyway).
    fn full(&self) -> bool {
        self.held > 0.0 && self.held >= self.budget
    }
}

/// What one [`Scheduler::assign`] leased.
#[derive(Debug, Clone, Default)]
pub struct Grant {
    pub leased: Vec<LeasedShard>,
}

impl Scheduler {
    /// Leases up to `free` shards that the worker can run (see
    /// `scheduler::placement`) within its budget of held work (target shards
    /// per trusted thread, see `WorkerRun::trusted_threads`): queued ones
    /// first, then newly cut ones (kept for the database to record, see
    /// [`Scheduler::take_unstored`], before the assignments are sent). Start
    /// cells not cached are left to [`Grant::draw_starts`], outside the lock.
    pub fn assign(&mut self, worker: WorkerId, free: usize, now: Instant) -> Grant {
        let mut grant = Grant::default();
        if self.is_draining(worker) {
            return grant;
        }
        // However many slots a worker asks for, it holds at most about
        // `held_per_thread` target shards of estimated work per thread, so
        // one fast-polling worker cannot take the remaining work from others.
        let threads = self.workers.get(&worker).map_or(1.0, |w| w.trusted_threads());
        let target = self.shard_micros_now();
        let budget = target * self.config.held_per_thread * threads;
        let held: f64 = self.held_by(worker).map(|(_, r)| self.estimate_micros(r)).sum();
        if self.held_by(worker).next().is_none() {
            // Its progress clock starts with the work it now takes.
            if let Some(w) = self.workers.get_mut(&worker) {
                w.progress_at = now;
            }
        }
        let mut room = Room { held, budget };
        let mut taken = HashSet::new();
        for shard in self.queued_for(worker, now) {
            if grant.leased.len() >= free || !self.lease_within(shard, worker, now, &mut room, &mut grant) {
                break;
            }
            taken.insert(shard);
        }
        if !taken.is_empty() {
            self.queue.retain(|id| !taken.contains(id));
        }
        // New cuts when the queue had nothing more for this worker. A cut
        // it cannot run is queued for others; a few, so that the grid's
        // order cannot keep a worker from the boards it can run.
        let mut unfit = 0;
        let kept_off = self.kept_off(worker, now);
        while grant.leased.len() < free && !room.full() && unfit < MAX_UNFIT_CUTS {
            let Some(shard) = self.cut(target, &kept_off) else { break };
            if !self.can_run(worker, shard, now) {
                self.queue.push_back(shard);
                unfit += 1;
                // Too long for the time the worker has left: so is the
                // next cut, about as large.
                if self.shards.get(&shard).is_some_and(|r| r.requirement.met_by(self.resources(worker))) {
                    break;
                }
                continue;
            }
            if !self.lease_within(shard, worker, now, &mut room, &mut grant) {
                self.queue.push_front(shard);
                break;
            }
        }
        grant
    }

    /// Leases `shard` if it fits in the worker's `room`; true when it did.
    fn lease_within(
        &mut self,
        shard: ShardId,
        worker: WorkerId,
        now: Instant,
        room: &mut Room,
        grant: &mut Grant,
    ) -> bool {
        let Some(run) = self.shards.get(&shard) else { return false };
        let estimate = self.estimate_micros(run);
        if room.held > 0.0 && room.held + estimate > room.budget {
            return false;
        }
        room.held += estimate;
        self.lease(shard, worker, now, grant);
        true
    }

    /// The queued shards `worker` can run, in the order it should take
    /// them: first those no other registered worker can (boards larger than
    /// any other's memory), so large workers are kept for the boards only
    /// they can run, then the rest in queue order.
    fn queued_for(&self, worker: WorkerId, now: Instant) -> Vec<ShardId> {
        if self.queue.is_empty() {
            return Vec::new(); // the usual case while cutting: no scan of the workers
        }
        let others = self.others_memory(worker);
        let mut only_here = Vec::new();
        let mut rest = Vec::new();
        for &id in &self.queue {
            let Some(run) = self.shards.get(&id).filter(|r| r.state == ShardState::Queued) else { continue };
            if !self.suits(worker, run, now) {
                continue;
            }
            if run.requirement.memory > others {
                only_here.push(id);
            } else {
                rest.push(id);
            }
        }
        only_here.extend(rest);
        only_here
    }

    /// Leases a queued shard to `worker` under a new epoch and adds it to
    /// `grant` (the caller takes it out of the queue).
    fn lease(&mut self, shard: ShardId, worker: WorkerId, now: Instant, grant: &mut Grant) {
        let Some(run) = self.shards.get(&shard) else { return };
        let epoch = Epoch(self.next_epoch);
        self.next_epoch += 1;
        let lease = Lease { worker, epoch, deadline: now + self.config.lease };
        // A shard of a queued sweep is always in the map; taken above.
        let (key, plan, methods) = (run.sweep, run.plan.clone(), run.methods);
        let starts = run.starts.clone().or_else(|| self.cached_starts(key, &plan));
        let Some(s) = self.sweeps.get(&key) else { return };
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
        grant.leased.push(LeasedShard { shard, epoch, sweep_key: key, sweep_id, sweep, plan, methods, starts });
    }

    /// Cuts one new shard, of about `target` estimated microseconds, from
    /// the oldest running sweep with grid left, but none of `skip` (sweeps
    /// the asking worker is kept off: their cuts would only wait). The new
    /// shard is queued state-wise but not in the queue: the caller leases
    /// it at once.
    pub(super) fn cut(&mut self, target: f64, skip: &[SweepKey]) -> Option<ShardId> {
        let target_cost = target / self.rate.micros_per_cost;
        let key = self.sweeps.iter_mut().find_map(|(&key, s)| {
            if s.phase == SweepPhase::Draining || skip.contains(&key) {
                return None;
            }
            match Planner::reusing(&s.sweep, &s.reused).next_shard(&mut s.cursor, target_cost) {
                Some(plan) => Some((key, plan)),
                None => {
                    s.phase = SweepPhase::Draining;
                    None
                }
            }
        });
        let (key, plan) = key?;
        Some(self.add_shard(key, plan, None))
    }

    /// Adds a queued-state shard of `key` (a new cut, or a re-planned gap)
    /// and notes it for the database, with the sweep's cursor as it now is.
    /// `methods`: those it runs, when not every method its configuration
    /// runs (a later stage of adaptive precision).
    pub(super) fn add_shard(&mut self, key: SweepKey, plan: ShardPlan, methods: Option<MethodSet>) -> ShardId {
        let id = ShardId(self.next_shard);
        self.next_shard += 1;
        let (methods, cursor) = match self.sweeps.get_mut(&key) {
            Some(s) => {
                s.tally.open += 1;
                (methods.unwrap_or_else(|| s.reused.to_run(plan.config, s.sweep.methods().len())), s.cursor)
            }
            None => (MethodSet::EMPTY, Cursor::default()),
        };
        let requirement = self.requirement(key, plan.config);
        self.insert_shard(id, ShardRun::new(key, plan.clone(), methods, 0, requirement));
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
    /// record (the state's writer queues them in that order).
    pub fn take_unstored(&mut self) -> Vec<NewShards> {
        std::mem::take(&mut self.unstored)
    }
}
