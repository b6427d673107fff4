//! Workers' results and what they settle: stored before the scheduler
//! counts them; the shards and sweeps they end, written (and retried while
//! the database refuses).

use std::sync::Arc;

use sweep::{Cursor, MethodSet, Planner, Reused, ShardPlan, Sweep};

use super::{now, Shared};

use crate::error::Result;
use crate::ids::{SweepKey, WorkerId};
use crate::scheduler::{Settled, ShardReport};
use crate::store::{Store, StoredCounts, SweepRecord, SweepState};

pub(super) fn log_settled(settled: &Settled) {
    for (shard, error) in &settled.retried {
        tracing::warn!(%shard, %error, "shard failed; queued again");
    }
    for (shard, error) in &settled.requeued {
        tracing::warn!(%shard, %error, "shard taken from its holder; queued again");
    }
    for (shard, error) in &settled.failed {
        tracing::error!(%shard, %error, "shard failed for good");
    }
}

/// Shards a settled batch calls for.
pub(super) enum Replan {
    /// A sweep that drained with fewer results stored than it has tasks
    /// (or, with adaptive precision, with cells still going): taken back
    /// with shards for what it lacks.
    Short(Box<ShortSweep>),
    /// The next stage of a configuration of a running sweep with adaptive
    /// precision, whose last open shard settled.
    Stage { key: SweepKey, plans: Vec<(ShardPlan, MethodSet)> },
}

/// A sweep taken back, with what it lacks.
pub(super) struct ShortSweep {
    record: SweepRecord,
    sweep: Arc<Sweep>,
    reused: Reused,
    gaps: Vec<(ShardPlan, Option<MethodSet>)>,
    /// Its stored counts, as a sweep taken in gets them.
    counts: StoredCounts,
}

/// Writes one settled batch. A sweep ends only when every task has a
/// result or lies in a shard that failed for good, and with adaptive
/// precision when every cell stopped: one that drained short (results
/// lost, cells going) stays running and is returned with what it lacks,
/// as are the next stages of the configurations whose stage ended.
pub(super) fn settle_in_store(s: &mut Store, settled: &Settled, target_cost: f64) -> Result<Vec<Replan>> {
    s.finish_shards(&settled.done, &settled.failed)?;
    for (shard, error) in &settled.retried {
        s.shard_failed_once(*shard, error)?;
    }
    let mut short = Vec::new();
    for &(key, config) in &settled.stages {
        let record = s.record_of(key)?;
        if record.state != SweepState::Running || settled.finished.iter().any(|(k, _)| *k == key) {
            continue;
        }
        let sweep = s.sweep_of(&record)?;
        let plans = s.next_stages(key, &sweep, Some(config), target_cost)?;
        if !plans.is_empty() {
            short.push(Replan::Stage { key, plans });
        }
    }
    for &(key, state) in &settled.finished {
        let record = s.record_of(key)?;
        if record.state != SweepState::Running {
            continue;
        }
        let sweep = s.sweep_of(&record)?;
        let reused = s.reused(key, &sweep)?;
        let gaps: Vec<(ShardPlan, Option<MethodSet>)> = if sweep.precision().is_some() {
            let stages = s.next_stages(key, &sweep, None, target_cost)?;
            stages.into_iter().map(|(p, m)| (p, Some(m))).collect()
        } else if record.tasks_done < record.tasks_total {
            let settled = s.settled_ranges(key, sweep.methods().len() as u32)?;
            let end = Cursor { config: sweep.configurations().len() as u32, start: 0 };
            let gaps = Planner::reusing(&sweep, &reused).uncovered(&settled, end, target_cost);
            gaps.into_iter().map(|p| (p, None)).collect()
        } else {
            Vec::new()
        };
        if !gaps.is_empty() {
            let counts = s.stored_counts(key, &sweep)?;
            short.push(Replan::Short(Box::new(ShortSweep { record, sweep, reused, gaps, counts })));
            continue;
        }
        if sweep.precision().is_some() && state == SweepState::Done {
            s.close_total(key)?;
        }
        tracing::info!(sweep = %record.id, ?state, "sweep finished");
        let error = (state == SweepState::Failed).then(|| {
            format!(
                "{} shards failed on every retry (`ksweep status` says why; `ksweep resume` retries them)",
                record.shards_failed
            )
        });
        s.set_state(key, state, error.as_deref())?;
    }
    Ok(short)
}

impl Shared {
    /// Records which results of a worker's poll are new, then settles what
    /// they complete: rows are stored before the scheduler counts them, so a
    /// crash in between only means the worker's results are taken again.
    /// What they settled is queued for the writer, not waited for.
    pub async fn report(&self, worker: WorkerId, reports: &[ShardReport]) -> Result<()> {
        if reports.is_empty() {
            return Ok(());
        }
        let rows = self.scheduler().validate(worker, reports)?;
        if !rows.is_empty() {
            let counts: Vec<_> =
                rows.iter().map(|r| (r.sweep, r.config, r.method, r.success, r.micros, r.worker.0)).collect();
            let stored = self.store_results(rows).await;
            self.note_write(&stored);
            stored?;
            self.scheduler().count_stored(counts);
        }
        let settled = self.scheduler().commit(worker, reports, now());
        self.queue_settled(settled);
        self.changed();
        Ok(())
    }

    /// Writes settled batches, oldest first; on failure keeps the rest for
    /// the next try.
    pub(super) async fn write_settled(&self, pending: Vec<Settled>) -> Result<()> {
        let target_cost = self.scheduler().target_cost();
        let mut pending = pending.into_iter();
        while let Some(settled) = pending.next() {
            let batch = settled.clone();
            let written = self.with_store(move |s| settle_in_store(s, &batch, target_cost)).await;
            self.note_write(&written);
            match written {
                Ok(short) => self.reopen(short),
                Err(e) => {
                    let mut unsettled = self.unsettled.lock().unwrap_or_else(|p| p.into_inner());
                    let later = std::mem::take(&mut *unsettled);
                    unsettled.push(settled);
                    unsettled.extend(pending);
                    unsettled.extend(later);
                    return Err(e);
                }
            }
        }
        self.changed();
        Ok(())
    }

    /// Takes sweeps whose results fell short back into the scheduler, with
    /// shards for the starts that lack results, and queues next stages.
    pub(super) fn reopen(&self, replans: Vec<Replan>) {
        if replans.is_empty() {
            return;
        }
        let mut sched = self.scheduler();
        for replan in replans {
            match replan {
                // A sweep that ended meanwhile plans it at its end.
                Replan::Stage { key, plans } => sched.extend(key, plans),
                Replan::Short(short) => {
                    let ShortSweep { record, sweep, reused, gaps, counts: (work, workers, reused_from) } = *short;
                    if sweep.precision().is_some() {
                        // Its last stage ended with every shard: no loss.
                        tracing::debug!(sweep = %record.id, shards = gaps.len(), "next stage of a drained sweep");
                    } else {
                        tracing::error!(
                            sweep = %record.id, stored = record.tasks_done, tasks = record.tasks_total,
                            shards = gaps.len(),
                            "a drained sweep lacks results; running the missing starts again instead of ending it"
                        );
                    }
                    let (key, id, failed) = (record.key, record.id.clone(), record.shards_failed);
                    sched.add_sweep(key, id, sweep, record.cursor, Vec::new(), failed, reused);
                    sched.seed_counts(key, work, workers, reused_from);
                    sched.replan(key, gaps);
                }
            }
        }
    }
}
