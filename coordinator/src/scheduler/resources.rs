//! What each worker advertised at registration besides its threads: its
//! memory budget and its labels, kept beside its lease record so placing a
//! shard can ask which workers can hold its board or carry a label; and
//! what a shard requires of them ([`Requirement`]), which shards, sweeps
//! and placement share.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::Scheduler;
use crate::ids::WorkerId;

/// A worker's advertised memory budget and labels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerResources {
    /// Bytes the boards of its running tasks may take in all; None from a
    /// worker that did not say (built before workers advertised it).
    pub memory: Option<u64>,
    pub labels: BTreeSet<String>,
}

/// What a worker must have to run a shard's tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirement {
    /// Bytes one task of the shard's board takes (shared arrays and one
    /// thread's), as the worker's memory budget counts them.
    pub memory: u64,
    /// Labels the shard's grid requires (`requires = [..]`), all of them.
    pub labels: Arc<BTreeSet<String>>,
}

impl Requirement {
    /// True when a worker with these resources can run the shard. A worker
    /// that advertised no memory (one older than the field) is taken at its
    /// word that it fits: its own budget still refuses what cannot.
    pub fn met_by(&self, resources: Option<&WorkerResources>) -> bool {
        let Some(r) = resources else { return self.labels.is_empty() };
        r.memory.is_none_or(|m| self.memory <= m) && self.labels.is_subset(&r.labels)
    }
}

impl Scheduler {
    /// Records what a registered worker advertised; a worker the scheduler
    /// does not know is ignored. Entries of workers gone since (goodbye, or
    /// forgotten after their leases) are dropped here, so the record never
    /// holds more than the workers known plus this one.
    pub fn advertise(&mut self, worker: WorkerId, resources: WorkerResources) {
        let known = &self.workers;
        self.advertised.retain(|id, _| known.contains_key(id));
        if known.contains_key(&worker) {
            self.advertised.insert(worker, resources);
        }
    }

    /// What a known worker advertised; None for a worker gone or unknown.
    pub fn resources(&self, worker: WorkerId) -> Option<&WorkerResources> {
        self.advertised.get(&worker).filter(|_| self.workers.contains_key(&worker))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::scheduler::SchedulerConfig;

    #[test]
    fn advertised_resources_follow_the_workers_known() {
        let mut s = Scheduler::new(SchedulerConfig::default(), 0);
        let now = Instant::now();
        let big = WorkerResources { memory: Some(64 << 30), labels: ["bigmem".to_string()].into() };
        s.advertise(WorkerId(1), big.clone());
        assert_eq!(s.resources(WorkerId(1)), None, "not registered: ignored");

        s.register(WorkerId(1), 8, now);
        s.advertise(WorkerId(1), big.clone());
        s.register(WorkerId(2), 1, now);
        s.advertise(WorkerId(2), WorkerResources::default());
        assert_eq!(s.resources(WorkerId(1)), Some(&big));
        assert_eq!(s.resources(WorkerId(2)), Some(&WorkerResources::default()));

        s.goodbye(WorkerId(1), &[]);
        assert_eq!(s.resources(WorkerId(1)), None, "gone");
        s.register(WorkerId(3), 1, now);
        s.advertise(WorkerId(3), WorkerResources::default());
        assert_eq!(s.advertised.len(), 2, "the gone worker's entry was dropped");
    }
}
