//! Workers' reports: which results are new (validate, before the database
//! stores them) and what they settle (commit, after).

use std::collections::HashSet;
use std::time::Instant;

use super::shard::ShardState;
use super::stalls::Loss;
use super::Scheduler;
use crate::codes::SweepState;
use crate::error::{Error, Result};
use crate::ids::{Epoch, ShardId, SweepKey, WorkerId};
use crate::model::ResultRecord;

/// One task's report, as the scheduler sees it (decoded by
/// `ksweep_proto::convert`).
pub use sweep::TaskReport;

/// A worker's reports for one shard.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardReport {
    pub shard: ShardId,
    pub epoch: Epoch,
    pub tasks: Vec<TaskReport>,
    pub error: Option<String>,
}

/// What the database must do after results were committed.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Settled {
    pub done: Vec<ShardId>,
    /// Shards that failed for good, with the error.
    pub failed: Vec<(ShardId, String)>,
    /// Shards that failed once more and went back to the queue.
    pub retried: Vec<(ShardId, String)>,
    /// Shards taken from their holder and queued again with no failure
    /// counted: it expired or stalled on a worker that has a failure
    /// counted on them already (`scheduler::stalls`).
    pub requeued: Vec<(ShardId, String)>,
    /// Sweeps that just ended, with their final state.
    pub finished: Vec<(SweepKey, SweepState)>,
    /// Configurations of running sweeps with adaptive precision whose last
    /// open shard just settled: their cells look now, and those going on
    /// get the next stage's shards.
    pub stages: Vec<(SweepKey, u32)>,
}

impl Settled {
    /// Notes the stages the shards it settled ended.
    pub(super) fn note_stages(&mut self, scheduler: &Scheduler) {
        let ended: Vec<ShardId> = self.done.iter().copied().chain(self.failed.iter().map(|(id, _)| *id)).collect();
        self.stages = scheduler.stages_ended(&ended);
    }
}

impl Scheduler {
    /// Checks a worker's reports and returns the results not yet recorded,
    /// ready for the database. Refuses the whole batch if any report is for
    /// a shard the worker was never given, a task outside that shard, or a
    /// result the engine cannot produce ([`sweep::Sweep::check_result`]).
    /// Changes nothing: call [`Scheduler::commit`] once the rows are stored.
    pub fn validate(&self, worker: WorkerId, reports: &[ShardReport]) -> Result<Vec<ResultRecord>> {
        let mut rows = Vec::new();
        // A task may come twice in one batch (the same shard under two
        // epochs, or repeated in a report): it is new once.
        let mut in_batch: HashSet<(ShardId, usize)> = HashSet::new();
        for report in reports {
            let Some(run) = self.shards.get(&report.shard) else {
                // Issued, and its sweep has ended since: nothing can count.
                if report.shard.0 < self.next_shard {
                    continue;
                }
                return Err(Error::Refused(format!("{} was never issued", report.shard)));
            };
            if !run.given_to.contains(&worker) {
                return Err(Error::Refused(format!("{} was never given to {worker}", report.shard)));
            }
            if !run.state.is_open() {
                continue; // settled: a late duplicate, nothing new
            }
            let Some(sweep) = self.sweeps.get(&run.sweep) else { continue };
            let methods = run.methods.len() as u32;
            let starts = (run.plan.start_hi - run.plan.start_lo) as u32;
            for t in &report.tasks {
                let in_sweep = run.methods.nth(t.method_index as usize);
                let (Some(index), true) = (in_sweep, t.start_offset < starts) else {
                    return Err(Error::Refused(format!(
                        "{} has no task ({}, {}); it has {starts} starts x {methods} methods",
                        report.shard, t.start_offset, t.method_index
                    )));
                };
                let slot = (t.start_offset * methods + t.method_index) as usize;
                if t.error.is_some() || run.received[slot] || !in_batch.insert((report.shard, slot)) {
                    continue;
                }
                let method = sweep.sweep.methods()[index];
                // Set when the shard's assignment was completed; a report
                // before that answers an assignment never sent.
                let Some(start_cell) = run.starts.as_ref().and_then(|s| s.get(t.start_offset as usize)) else {
                    return Err(Error::Refused(format!("{} was never sent to {worker}", report.shard)));
                };
                if let Err(why) = sweep.sweep.check_result(run.plan.config, *start_cell, method, &t.summary) {
                    return Err(Error::Refused(format!(
                        "{} task ({}, {}) cannot be a result of {}: {why}",
                        report.shard,
                        t.start_offset,
                        t.method_index,
                        method.name()
                    )));
                }
                rows.push(ResultRecord {
                    sweep: run.sweep,
                    config: run.plan.config,
                    start_index: run.plan.start_lo + t.start_offset as u64,
                    method: index as u32,
                    start_cell: *start_cell,
                    success: t.summary.success,
                    attempts: t.summary.attempts,
                    visited: t.summary.visited,
                    micros: t.summary.micros,
                    worker,
                    outcome: t.summary.outcome,
                    computed_by: run.sweep,
                });
            }
        }
        Ok(rows)
    }

    /// Notes reports whose results are now stored: marks tasks received,
    /// restarts the results window of a worker that delivered new ones,
    /// settles complete shards, retries or fails shards whose current lease
    /// holder reported an error, and ends sweeps with nothing left to run.
    pub fn commit(&mut self, worker: WorkerId, reports: &[ShardReport], now: Instant) -> Settled {
        let mut out = Settled::default();
        let max_task_micros = self.max_task_micros();
        for report in reports {
            let Some(run) = self.shards.get_mut(&report.shard) else { continue };
            if !run.state.is_open() {
                continue;
            }
            let key = run.sweep;
            let methods = run.methods.len() as u32;
            let mut error = report.error.clone();
            let mut micros = 0f64;
            let mut new_tasks = 0usize;
            for t in &report.tasks {
                if let Some(e) = &t.error {
                    error.get_or_insert_with(|| e.clone());
                    continue;
                }
                // Validated before the rows were stored.
                let Some(received) = run.received.get_mut((t.start_offset * methods + t.method_index) as usize) else {
                    continue;
                };
                if !std::mem::replace(received, true) {
                    run.remaining -= 1;
                    micros += (t.summary.micros as f64).min(max_task_micros);
                    new_tasks += 1;
                }
            }
            let (config, remaining) = (run.plan.config as usize, run.remaining);
            // Only the current lease holder's error counts: a worker whose
            // lease expired (and may be held by another worker now) cannot
            // fail the shard or take it from its holder.
            let holds = run.is_held_by(worker, report.epoch);
            if let Some(cost) = self.sweeps.get(&key).and_then(|s| s.sweep.configurations().get(config)) {
                self.rate.observe(micros, new_tasks, cost.cost_per_task());
            }
            if new_tasks > 0 {
                self.note_progress(worker, micros, new_tasks, now);
            }
            if remaining == 0 {
                self.transition(report.shard, ShardState::Done);
                out.done.push(report.shard);
            } else if let Some(error) = error {
                if holds {
                    self.lose(report.shard, worker, Loss::Error(error), now, &mut out);
                } else {
                    tracing::debug!(shard = %report.shard, %worker, %error, "error from a stale lease ignored");
                }
            }
            if let Some(state) = self.finish_if_drained(key) {
                out.finished.push((key, state));
            }
        }
        out.note_stages(self);
        out
    }
}
