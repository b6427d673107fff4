//! A running sweep's phases: shards are cut from its grid, then the last
//! ones settle and the sweep ends done or failed.

use std::collections::HashMap;
use std::sync::Arc;

use sweep::{Cursor, MethodSet, Planner, Reused, ShardPlan, Sweep, Work, WorkNow, WorkTally};

use super::resources::Requirement;
use super::shard::ShardState;
use super::Scheduler;
use crate::codes::SweepState;
use crate::ids::{ShardId, SweepKey};
use crate::store::WorkerTotals;

/// Where a running sweep is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepPhase {
    /// Shards are still cut from the grid as workers ask.
    Cutting,
    /// The whole grid is cut; the sweep ends when its last shard settles.
    Draining,
}

/// How many of a sweep's shards are in each state.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tally {
    /// Queued or leased.
    pub open: usize,
    pub done: usize,
    pub failed: usize,
}

impl Tally {
    pub fn enter(&mut self, state: &ShardState) {
        match state {
            ShardState::Queued | ShardState::Leased(_) => self.open += 1,
            ShardState::Done => self.done += 1,
            ShardState::Failed => self.failed += 1,
        }
    }

    pub fn leave(&mut self, state: &ShardState) {
        match state {
            ShardState::Queued | ShardState::Leased(_) => self.open -= 1,
            ShardState::Done => self.done -= 1,
            ShardState::Failed => self.failed -= 1,
        }
    }
}

#[derive(Debug)]
pub(super) struct SweepRun {
    pub id: String,
    pub sweep: Arc<Sweep>,
    pub cursor: Cursor,
    /// The methods each configuration took from stored results: not planned.
    pub reused: Arc<Reused>,
    pub phase: SweepPhase,
    pub tally: Tally,
    /// The start list of the configuration shards are being cut from.
    pub starts: Option<(u32, Arc<Vec<u64>>)>,
    /// Each configuration's requirement, computed when its first shard is
    /// made ([`Scheduler::requirement`]).
    pub requirements: HashMap<u32, Requirement>,
    /// Its results per (configuration, method) and their time: its progress
    /// in estimated work ([`Scheduler::work`]).
    pub work: WorkTally,
    /// Its results per worker ([`Counted::workers`]).
    pub workers: WorkerTotals,
    /// Where the results it took at submission came from.
    pub reused_from: Vec<(SweepKey, u64)>,
}

/// What a sweep's status would otherwise sum from all its results on every
/// ask (seconds on a sweep of millions): a running sweep's figures, read
/// from the store once when the coordinator takes it in and counted as
/// results are stored after that.
#[derive(Debug, Clone, PartialEq)]
pub struct Counted {
    pub work: Work,
    /// Tasks and CPU microseconds per worker id.
    pub workers: WorkerTotals,
    /// The sweeps whose stored results it took when submitted, and how many.
    pub reused_from: Vec<(SweepKey, u64)>,
}

impl SweepRun {
    pub fn new(id: String, sweep: Arc<Sweep>, cursor: Cursor, reused: Reused) -> SweepRun {
        SweepRun {
            id,
            work: WorkTally::new(&sweep, reused.clone()),
            sweep,
            cursor,
            reused: Arc::new(reused),
            phase: SweepPhase::Cutting,
            tally: Tally::default(),
            starts: None,
            requirements: HashMap::new(),
            workers: WorkerTotals::new(),
            reused_from: Vec::new(),
        }
    }

    /// The final state, once the grid is cut and every shard settled.
    fn outcome(&self) -> Option<SweepState> {
        if self.phase != SweepPhase::Draining || self.tally.open > 0 {
            return None;
        }
        Some(if self.tally.failed > 0 { SweepState::Failed } else { SweepState::Done })
    }
}

impl Scheduler {
    /// Ends a sweep whose grid is cut and whose shards are all settled;
    /// returns its final state.
    pub(super) fn finish_if_drained(&mut self, key: SweepKey) -> Option<SweepState> {
        let state = self.sweeps.get(&key)?.outcome()?;
        self.forget_sweep(key);
        Some(state)
    }

    /// Sweeps whose grid is planned and whose shards are all settled, ended
    /// now (e.g. a sweep with only impossible configurations).
    pub fn drain_finished(&mut self) -> Vec<(SweepKey, SweepState)> {
        let keys: Vec<SweepKey> = self.sweeps.keys().copied().collect();
        let mut out = Vec::new();
        for key in keys {
            if let Some(s) = self.sweeps.get_mut(&key) {
                if s.phase == SweepPhase::Cutting && s.tally.open == 0 {
                    // Probe: is there anything left to plan?
                    let mut probe = s.cursor;
                    if Planner::reusing(&s.sweep, &s.reused).next_shard(&mut probe, f64::MAX).is_none() {
                        s.phase = SweepPhase::Draining;
                    }
                }
            }
            if let Some(state) = self.finish_if_drained(key) {
                out.push((key, state));
            }
        }
        out
    }

    /// Queues shards for starts the database lacks, found by a check
    /// ([`sweep::Planner::uncovered`]): a gap in the stored shards at start,
    /// or a finished sweep whose results fall short of its task count. They
    /// are recorded like new cuts ([`Scheduler::take_unstored`]).
    pub fn replan(&mut self, key: SweepKey, plans: Vec<(ShardPlan, Option<MethodSet>)>) {
        for (plan, methods) in plans {
            let id = self.add_shard(key, plan, methods);
            self.queue.push_back(id);
        }
    }

    /// Queues the next stage of a sweep with adaptive precision (shards
    /// with the methods still going, [`sweep::Planner::next_stage`]);
    /// nothing when the sweep is not running here (it ended meanwhile: its
    /// end's settle plans what it lacks).
    pub fn extend(&mut self, key: SweepKey, plans: Vec<(ShardPlan, MethodSet)>) {
        if self.is_running(key) {
            self.replan(key, plans.into_iter().map(|(p, m)| (p, Some(m))).collect());
        }
    }

    /// The configurations of sweeps with adaptive precision whose shards
    /// `settled` ended the last open one of, the cursor past them: their
    /// cells can look now ([`Settled::stages`]).
    pub(super) fn stages_ended(&self, settled: &[ShardId]) -> Vec<(SweepKey, u32)> {
        let mut out: Vec<(SweepKey, u32)> = Vec::new();
        for id in settled {
            let Some(run) = self.shards.get(id) else { continue };
            let (key, config) = (run.sweep, run.plan.config);
            let Some(s) = self.sweeps.get(&key) else { continue };
            if s.sweep.precision().is_none() || out.contains(&(key, config)) || s.cursor.config <= config {
                continue;
            }
            if !self.open_shards().any(|(_, r)| r.sweep == key && r.plan.config == config) {
                out.push((key, config));
            }
        }
        out
    }

    /// The cost a shard is cut to now ([`sweep::Planner`]'s `target_cost`).
    pub fn target_cost(&self) -> f64 {
        self.shard_micros_now() / self.rate.micros_per_cost
    }

    /// Gives a sweep just taken in the counts of its stored results (read
    /// with its record), in place of the empty ones it was added with.
    pub fn seed_counts(
        &mut self,
        key: SweepKey,
        work: WorkTally,
        workers: WorkerTotals,
        reused_from: Vec<(SweepKey, u64)>,
    ) {
        if let Some(s) = self.sweeps.get_mut(&key) {
            (s.work, s.workers, s.reused_from) = (work, workers, reused_from);
        }
    }

    /// Counts stored results of running sweeps: (sweep, configuration,
    /// method index, success, micros, worker id) each.
    pub fn count_stored(&mut self, results: impl IntoIterator<Item = (SweepKey, u32, u32, bool, u64, u64)>) {
        for (key, config, method, success, micros, worker) in results {
            if let Some(s) = self.sweeps.get_mut(&key) {
                s.work.add(config, method, 1, u64::from(success), micros as f64);
                let totals = s.workers.entry(worker).or_default();
                totals.0 += 1;
                totals.1 += micros;
            }
        }
    }

    /// A running sweep's progress in estimated work, with the model that
    /// priced it and its work done per (D, method), by its id.
    pub fn work_now(&self, sweep_id: &str) -> Option<WorkNow> {
        self.sweeps.values().find(|s| s.id == sweep_id).map(|s| s.work.now(&s.sweep))
    }

    /// A running sweep's counted figures, by its key.
    pub fn counted(&self, key: SweepKey) -> Option<Counted> {
        self.sweeps.get(&key).map(|s| Counted {
            work: s.work.work(&s.sweep),
            workers: s.workers.clone(),
            reused_from: s.reused_from.clone(),
        })
    }

    /// The phase of a running sweep.
    pub fn phase(&self, key: SweepKey) -> Option<SweepPhase> {
        self.sweeps.get(&key).map(|s| s.phase)
    }
}
