//! Start cells of leased shards. Drawing a configuration's start list is
//! CPU work (up to 2^24 starts), so [`Scheduler::assign`] only hands out
//! what it has cached; [`Grant::draw_starts`] draws the rest outside the
//! scheduler's lock and [`Scheduler::remember_starts`] keeps the result.

use std::sync::Arc;

use sweep::Planner;

use super::assign::{Assignment, Grant};
use super::Scheduler;
use crate::ids::SweepKey;

/// Assignments with their start cells, and the lists drawn for them.
#[derive(Debug, Clone)]
pub struct DrawnStarts {
    pub assignments: Vec<Assignment>,
    /// Each configuration's list drawn here, once.
    lists: Vec<(SweepKey, u32, Arc<Vec<u64>>)>,
}

impl Grant {
    /// Draws the start cells the scheduler did not have, each
    /// configuration's list once. CPU-bound: call it on the blocking pool,
    /// never under the scheduler's lock.
    pub fn draw_starts(self) -> DrawnStarts {
        let mut lists: Vec<(SweepKey, u32, Arc<Vec<u64>>)> = Vec::new();
        let assignments = self
            .leased
            .into_iter()
            .map(|l| {
                let starts = match &l.starts {
                    Some(starts) => starts.clone(),
                    None => {
                        let config = l.plan.config;
                        let list = match lists.iter().find(|(k, c, _)| *k == l.sweep_key && *c == config) {
                            Some((_, _, list)) => list.clone(),
                            None => {
                                let list = Planner::new(&l.sweep).starts(config);
                                lists.push((l.sweep_key, config, list.clone()));
                                list
                            }
                        };
                        list[l.plan.start_lo as usize..l.plan.start_hi as usize].into()
                    }
                };
                l.with_starts(starts)
            })
            .collect();
        DrawnStarts { assignments, lists }
    }
}

impl Scheduler {
    /// Keeps drawn start cells: each assigned shard's (so its results can be
    /// validated), and the last list of each sweep (the configuration
    /// shards are being cut from, so the next shards need no drawing).
    pub fn remember_starts(&mut self, drawn: &DrawnStarts) {
        for a in &drawn.assignments {
            if let Some(run) = self.shards.get_mut(&a.shard) {
                if run.starts.is_none() && run.state.is_open() {
                    run.starts = Some(a.starts.clone());
                }
            }
        }
        for (key, config, list) in &drawn.lists {
            if let Some(s) = self.sweeps.get_mut(key) {
                s.starts = Some((*config, list.clone()));
            }
        }
    }

    /// The start cells of a shard of `key`, when its configuration's list
    /// is the cached one (no drawing here: see [`Grant::draw_starts`]).
    pub(super) fn cached_starts(&self, key: SweepKey, plan: &sweep::ShardPlan) -> Option<Arc<[u64]>> {
        match &self.sweeps.get(&key)?.starts {
            Some((config, list)) if *config == plan.config => {
                list.get(plan.start_lo as usize..plan.start_hi as usize).map(Into::into)
            }
            _ => None,
        }
    }

    /// Leases like [`Scheduler::assign`] and draws the start cells at once,
    /// on this thread: for callers without a runtime (tests, tools).
    pub fn assign_drawn(&mut self, worker: crate::ids::WorkerId, free: usize, now: std::time::Instant) -> DrawnStarts {
        let drawn = self.assign(worker, free, now).draw_starts();
        self.remember_starts(&drawn);
        drawn
    }
}
