//! A shard's life in the scheduler: queued, leased to one worker under an
//! epoch, then done or failed for good.

use std::sync::Arc;
use std::time::Instant;

use sweep::{MethodSet, ShardPlan};

use super::resources::Requirement;
use crate::ids::{Epoch, SweepKey, WorkerId};

/// Where a shard is. A shard is in the queue exactly when it is `Queued`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShardState {
    /// Waiting for a worker.
    Queued,
    /// Held by one worker until the lease's deadline.
    Leased(Lease),
    /// Every task's result is stored.
    Done,
    /// Failed on every retry; its missing tasks will not run.
    Failed,
}

impl ShardState {
    /// True until the shard is done or failed.
    pub fn is_open(&self) -> bool {
        matches!(self, ShardState::Queued | ShardState::Leased(_))
    }
}

/// One lease of a shard: who holds it, under which epoch, until when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub worker: WorkerId,
    pub epoch: Epoch,
    /// Heartbeats move it; silence past it loses the shard.
    pub deadline: Instant,
}

#[derive(Debug)]
pub(super) struct ShardRun {
    pub sweep: SweepKey,
    pub plan: ShardPlan,
    /// The sweep's methods it runs (those its configuration did not take
    /// from stored results); its method `k` is the sweep's `methods.nth(k)`.
    pub methods: MethodSet,
    pub state: ShardState,
    /// Workers this shard was ever leased to: only they may report on it.
    pub given_to: Vec<WorkerId>,
    /// Start cells of the shard, set when they are first drawn.
    pub starts: Option<Arc<[u64]>>,
    /// One flag per (start offset, method): which results are recorded.
    /// Emptied once the shard settles.
    pub received: Vec<bool>,
    pub remaining: usize,
    /// Tasks per shard, kept after `received` is emptied.
    pub tasks: usize,
    /// Failures counted (stored with it, so those from before a restart
    /// count too): each reported error, and an expiry or stall once per
    /// worker. At `max_shard_failures` it fails for good.
    pub failures: u32,
    /// The workers with a failure counted in `failures` since it was taken
    /// in: an expiry or stall on one of them counts nothing.
    pub failed_on: Vec<WorkerId>,
    /// Workers that lately lost it (reported an error, stalled or let it
    /// expire), and when: none is given it again within
    /// `STALL_COOLDOWN_LEASES`.
    pub lost_to: Vec<(WorkerId, Instant)>,
    /// What a worker needs to run it.
    pub requirement: Requirement,
}

impl ShardRun {
    /// A queued shard that runs `methods` of its sweep on each start.
    pub fn new(
        sweep: SweepKey,
        plan: ShardPlan,
        methods: MethodSet,
        failures: u32,
        requirement: Requirement,
    ) -> ShardRun {
        let tasks = (plan.start_hi - plan.start_lo) as usize * methods.len();
        ShardRun {
            sweep,
            plan,
            methods,
            state: ShardState::Queued,
            given_to: Vec::new(),
            starts: None,
            received: vec![false; tasks],
            remaining: tasks,
            tasks,
            failures,
            failed_on: Vec::new(),
            lost_to: Vec::new(),
            requirement,
        }
    }

    /// The lease, when the shard is leased.
    pub fn lease(&self) -> Option<&Lease> {
        match &self.state {
            ShardState::Leased(lease) => Some(lease),
            _ => None,
        }
    }

    /// True when `worker` holds the shard's current lease under `epoch`.
    pub fn is_held_by(&self, worker: WorkerId, epoch: Epoch) -> bool {
        self.lease().is_some_and(|l| l.worker == worker && l.epoch == epoch)
    }

    /// Frees what a settled shard no longer needs; `given_to` stays, so
    /// late duplicates are still recognised.
    pub fn settle(&mut self) {
        self.received = Vec::new();
        self.starts = None;
    }
}
