//! Workers and their leases: registration, heartbeats that extend leases,
//! expiry that returns silent workers' shards to the queue, and goodbye.

use std::time::Instant;

use super::shard::ShardState;
use super::{Scheduler, Settled};
use crate::error::{Error, Result};
use crate::ids::{Epoch, ShardId, WorkerId};

#[derive(Debug)]
pub(super) struct WorkerRun {
    pub seen: Instant,
    pub threads: u32,
}

impl Scheduler {
    /// A worker registered, with its thread count (it sizes how much work
    /// the worker may hold at once).
    pub fn register(&mut self, worker: WorkerId, threads: u32, now: Instant) {
        self.workers.insert(worker, WorkerRun { seen: now, threads: threads.max(1) });
    }

    /// True while the worker is registered here (not silent for long).
    pub fn knows(&self, worker: WorkerId) -> bool {
        self.workers.contains_key(&worker)
    }

    /// Checks that the worker is known and notes that it is alive.
    pub fn touch(&mut self, worker: WorkerId, now: Instant) -> Result<()> {
        match self.workers.get_mut(&worker) {
            Some(w) => {
                w.seen = now;
                Ok(())
            }
            None => Err(Error::UnknownWorker(worker.0)),
        }
    }

    /// Heartbeats: extends the leases the worker still holds; returns the
    /// ones it should stop (expired and re-leased, or cancelled).
    pub fn heartbeat(&mut self, worker: WorkerId, running: &[(ShardId, Epoch)], now: Instant) -> Vec<(ShardId, Epoch)> {
        let mut revoked = Vec::new();
        for &(id, epoch) in running {
            match self.shards.get_mut(&id).map(|s| &mut s.state) {
                Some(ShardState::Leased(lease)) if lease.worker == worker && lease.epoch == epoch => {
                    lease.deadline = now + self.config.lease;
                }
                _ => revoked.push((id, epoch)),
            }
        }
        revoked
    }

    /// Takes expired leases back and forgets workers silent for several
    /// leases. A lease that expires is a failed attempt (its worker died,
    /// stalled or was cut off; a shard that kills every worker taking it
    /// would otherwise loop for ever): the shard is queued again, or fails
    /// for good at the failure limit. Returns both, for the database.
    pub fn expire(&mut self, now: Instant) -> Settled {
        let mut expired: Vec<ShardId> = self
            .shards
            .iter()
            .filter(|(_, run)| run.lease().is_some_and(|l| l.deadline <= now))
            .map(|(&id, _)| id)
            .collect();
        expired.sort_unstable();
        let mut out = Settled::default();
        for id in expired {
            let failures = self.shards.get_mut(&id).map_or(0, |run| {
                run.failures += 1;
                run.failures
            });
            let error = format!("lease expired {failures} time(s): the worker holding it died, stalled or was cut off");
            if failures >= self.config.max_shard_failures {
                self.transition(id, ShardState::Failed);
                out.failed.push((id, error));
            } else {
                self.transition(id, ShardState::Queued);
                out.retried.push((id, error));
            }
        }
        let forget = self.config.lease * 3;
        self.workers.retain(|_, w| now.duration_since(w.seen) < forget);
        out
    }

    /// A worker leaves: the shards it hands back go to the front of the
    /// queue at once.
    pub fn goodbye(&mut self, worker: WorkerId, returned: &[(ShardId, Epoch)]) {
        for &(id, epoch) in returned {
            if self.shards.get(&id).is_some_and(|run| run.is_held_by(worker, epoch)) {
                self.transition(id, ShardState::Queued);
                // Handed back on purpose: next in line, before older ones.
                if let Some(pos) = self.queue.iter().rposition(|&q| q == id) {
                    self.queue.remove(pos);
                }
                self.queue.push_front(id);
            }
        }
        self.workers.remove(&worker);
    }
}
