//! The coordinator's logic, apart from its transport and its database: which
//! shard goes to which worker, leases and their expiry, retries, and which
//! results are new. Time is passed in, so every rule here is tested without
//! a clock or a network.
//!
//! One file per concern: `shard` (a shard's states), `sweep_run` (a sweep's
//! phases and how it ends), `lease` (workers, heartbeats, expiry), `stalls`
//! (holders that deliver nothing, how failures count, cooldowns), `assign`
//! (handing shards out), `sizing` (how large a shard is cut), `starts`
//! (start cells, drawn off the lock), `report` (validating and committing
//! results), `resources` (the memory and labels workers advertise),
//! `placement` (which worker may run which shard).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use sweep::{Cursor, Reused, Sweep};

use crate::ids::{ShardId, SweepKey, WorkerId};
use crate::model::{NewShards, OpenShard};

mod assign;
mod lease;
mod placement;
mod report;
mod resources;
mod shard;
mod sizing;
mod stalls;
mod starts;
mod sweep_run;

pub use assign::{Assignment, Grant, LeasedShard};
pub use lease::WorkerView;
pub use placement::Waiting;
pub use report::{Settled, ShardReport, TaskReport};
pub use resources::{Requirement, WorkerResources};
pub use shard::{Lease, ShardState};
pub use starts::DrawnStarts;
pub use sweep_run::{Counted, SweepPhase};

use lease::WorkerRun;
use shard::ShardRun;
use sizing::Rate;
use sweep_run::SweepRun;

/// Tunables of the scheduler.
#[derive(Debug, Clone)]
pub struct SchedulerConfig {
    /// A shard not heartbeated within this long goes back to the queue.
    pub lease: Duration,
    /// A shard that fails this many times is marked failed, not retried:
    /// an expiry or stall counts once per worker, an error every time (see
    /// `scheduler::stalls`).
    pub max_shard_failures: u32,
    /// Wall time one shard should take on one thread.
    pub target_shard: Duration,
    /// Target shards' worth of estimated work one worker thread may hold,
    /// whatever it asks for.
    pub held_per_thread: f64,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            lease: Duration::from_secs(10),
            max_shard_failures: 3,
            target_shard: Duration::from_secs(1),
            held_per_thread: 2.0,
        }
    }
}

/// The scheduler's state. Not thread-safe by itself: the service holds it
/// behind a mutex and never across an await.
#[derive(Debug)]
pub struct Scheduler {
    config: SchedulerConfig,
    sweeps: BTreeMap<SweepKey, SweepRun>,
    /// Every shard of a running sweep, settled ones included (so late
    /// duplicates are told apart from unsolicited reports).
    shards: HashMap<ShardId, ShardRun>,
    /// The ids of `shards` not settled (queued or leased), and those each
    /// worker holds a lease of: what a poll looks at grows with the work in
    /// flight, not with every shard a long sweep has finished. Kept by
    /// [`Scheduler::insert_shard`], [`Scheduler::transition`] and
    /// [`Scheduler::forget_sweep`].
    open: BTreeSet<ShardId>,
    held: HashMap<WorkerId, Vec<ShardId>>,
    /// Shards in [`ShardState::Queued`], in the order they are handed out.
    queue: VecDeque<ShardId>,
    workers: HashMap<WorkerId, WorkerRun>,
    /// What registered workers advertised besides their threads.
    advertised: HashMap<WorkerId, WorkerResources>,
    next_shard: u64,
    next_epoch: u64,
    rate: Rate,
    /// Shards not yet recorded by the database, in cut order.
    unstored: Vec<NewShards>,
}

impl Scheduler {
    /// A scheduler whose new shard ids start above `max_shard_id`.
    pub fn new(config: SchedulerConfig, max_shard_id: u64) -> Scheduler {
        Scheduler {
            config,
            sweeps: BTreeMap::new(),
            shards: HashMap::new(),
            open: BTreeSet::new(),
            held: HashMap::new(),
            queue: VecDeque::new(),
            workers: HashMap::new(),
            advertised: HashMap::new(),
            next_shard: max_shard_id + 1,
            next_epoch: 1,
            rate: Rate::default(),
            unstored: Vec::new(),
        }
    }

    /// Takes over a running sweep: its cursor, its open shards (queued
    /// again, whatever lease they had before a restart) and how many of its
    /// shards already failed for good (so it cannot end done without them),
    /// and the methods each configuration took from stored results (which
    /// it never plans).
    #[allow(clippy::too_many_arguments)]
    pub fn add_sweep(
        &mut self,
        key: SweepKey,
        id: String,
        sweep: Arc<Sweep>,
        cursor: Cursor,
        open: Vec<OpenShard>,
        shards_failed: u64,
        reused: Reused,
    ) {
        let mut run = SweepRun::new(id, sweep, cursor, reused);
        run.tally.failed = shards_failed as usize;
        let (methods, reused) = (run.sweep.methods().len(), run.reused.clone());
        self.sweeps.insert(key, run);
        for s in open {
            let requirement = self.requirement(key, s.plan.config);
            let to_run = s.methods.unwrap_or_else(|| reused.to_run(s.plan.config, methods));
            self.insert_shard(s.id, ShardRun::new(key, s.plan, to_run, s.failures, requirement));
            if let Some(run) = self.sweeps.get_mut(&key) {
                run.tally.open += 1;
            }
            self.queue.push_back(s.id);
        }
    }

    /// True while the sweep is known and running here.
    pub fn is_running(&self, key: SweepKey) -> bool {
        self.sweeps.contains_key(&key)
    }

    /// Stops a sweep: nothing more of it is handed out, running leases are
    /// revoked at their next heartbeat, and late reports on its shards are
    /// accepted and dropped.
    pub fn cancel(&mut self, key: SweepKey) {
        if self.sweeps.contains_key(&key) {
            self.forget_sweep(key);
        }
    }

    /// Drops an ended sweep and its shards. Reports that arrive later for
    /// its (issued) shards are accepted and count nothing, so memory holds
    /// only running sweeps, however long the coordinator runs.
    fn forget_sweep(&mut self, key: SweepKey) {
        self.sweeps.remove(&key);
        self.shards.retain(|_, r| r.sweep != key);
        let shards = &self.shards;
        self.queue.retain(|id| shards.contains_key(id));
        self.open.retain(|id| shards.contains_key(id));
        self.held.retain(|_, ids| {
            ids.retain(|id| shards.contains_key(id));
            !ids.is_empty()
        });
        for w in self.workers.values_mut() {
            w.stalls.remove(&key);
        }
    }

    /// Number of shards currently leased.
    pub fn leased(&self) -> usize {
        self.held.values().map(Vec::len).sum()
    }

    /// Adds a new shard (queued; the caller queues or leases it).
    fn insert_shard(&mut self, id: ShardId, run: ShardRun) {
        if run.state.is_open() {
            self.open.insert(id);
        }
        self.shards.insert(id, run);
    }

    /// The shards not settled, in id order.
    fn open_shards(&self) -> impl Iterator<Item = (ShardId, &ShardRun)> {
        self.open.iter().filter_map(|id| Some((*id, self.shards.get(id)?)))
    }

    /// The shards `worker` holds a lease of.
    fn held_by(&self, worker: WorkerId) -> impl Iterator<Item = (ShardId, &ShardRun)> {
        let ids = self.held.get(&worker).map_or(&[][..], Vec::as_slice);
        ids.iter().filter_map(|id| Some((*id, self.shards.get(id)?)))
    }

    /// Moves a shard to a new state: the one place the queue and the sweep's
    /// tally follow a shard's state.
    fn transition(&mut self, id: ShardId, to: ShardState) {
        let Some(run) = self.shards.get_mut(&id) else { return };
        if let ShardState::Leased(lease) = &run.state {
            if let Some(ids) = self.held.get_mut(&lease.worker) {
                ids.retain(|&held| held != id);
                if ids.is_empty() {
                    self.held.remove(&lease.worker);
                }
            }
        }
        if let ShardState::Leased(lease) = &to {
            self.held.entry(lease.worker).or_default().push(id);
        }
        if to.is_open() {
            self.open.insert(id);
        } else {
            self.open.remove(&id);
        }
        let from = std::mem::replace(&mut run.state, to);
        if let Some(sweep) = self.sweeps.get_mut(&run.sweep) {
            sweep.tally.leave(&from);
            sweep.tally.enter(&run.state);
        }
        let queued = matches!(run.state, ShardState::Queued) && !matches!(from, ShardState::Queued);
        if !run.state.is_open() {
            run.settle();
        }
        if queued {
            self.queue.push_back(id);
        }
    }
}

#[cfg(test)]
mod tests;
