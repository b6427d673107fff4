//! Workers' results and what they settle: stored before the scheduler
//! counts them; the shards and sweeps they end, written (and retried while
//! the database refuses).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sweep::{Cursor, Planner, Reused, ShardPlan, Sweep};

use super::Shared;
use tokio::sync::oneshot;

use crate::error::{Error, Result};
use crate::ids::WorkerId;
use crate::model::ResultRecord;
use crate::scheduler::{Settled, ShardReport};
use crate::store::{Store, SweepRecord, SweepState};

pub(super) fn log_settled(settled: &Settled) {
    for (shard, error) in &settled.retried {
        tracing::warn!(%shard, %error, "shard failed; queued again");
    }
    for (shard, error) in &settled.failed {
        tracing::error!(%shard, %error, "shard failed for good");
    }
}

/// A sweep that drained with fewer results stored than it has tasks.
struct ShortSweep {
    record: SweepRecord,
    sweep: Arc<Sweep>,
    reused: Reused,
    gaps: Vec<ShardPlan>,
}

/// Writes one settled batch. A sweep ends only when every task has a
/// result or lies in a shard that failed for good: one that drained short
/// (results lost) stays running and is returned with the missing starts.
fn settle_in_store(s: &mut Store, settled: &Settled, target_cost: f64) -> Result<Vec<ShortSweep>> {
    s.finish_shards(&settled.done, &settled.failed)?;
    for (shard, error) in &settled.retried {
        s.shard_failed_once(*shard, error)?;
    }
    let mut short = Vec::new();
    for &(key, state) in &settled.finished {
        let record = s.record_of(key)?;
        if record.state != SweepState::Running {
            continue;
        }
        if record.tasks_done < record.tasks_total {
            let sweep = s.sweep_of(&record)?;
            let settled = s.settled_ranges(key, sweep.methods().len() as u32)?;
            let end = Cursor { config: sweep.configurations().len() as u32, start: 0 };
            let reused = s.reused(key, &sweep)?;
            let gaps = Planner::reusing(&sweep, &reused).uncovered(&settled, end, target_cost);
            if !gaps.is_empty() {
                short.push(ShortSweep { record, sweep, reused, gaps });
                continue;
            }
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

/// Results polls wait to have stored, and whether a writer is taking them.
#[derive(Default)]
pub(super) struct ResultsQueue {
    pub waiting: Vec<QueuedResults>,
    pub writing: bool,
}

/// One poll's results and where to say how their write went.
pub(super) type QueuedResults = (Vec<ResultRecord>, oneshot::Sender<std::result::Result<(), String>>);

/// The results writer: while polls have queued results, waits for the
/// store, then writes all of them in one transaction and answers each.
fn write_queued_results(store: &Mutex<Store>, queue: &Mutex<ResultsQueue>, writes: &AtomicU64) {
    let lock_queue = || queue.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let store = store.lock();
        let batch = {
            let mut queue = lock_queue();
            if queue.waiting.is_empty() {
                queue.writing = false;
                return;
            }
            std::mem::take(&mut queue.waiting)
        };
        let (rows, waiting): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
        let written = match store {
            Ok(mut store) => store.record(&rows.concat()).map(drop).map_err(|e| e.to_string()),
            Err(_) => Err("the store lock is poisoned".to_string()),
        };
        writes.fetch_add(1, Ordering::Relaxed);
        for done in waiting {
            let _ = done.send(written.clone()); // a dropped poll no longer waits
        }
    }
}

impl Shared {
    /// Records which results of a worker's poll are new, then settles what
    /// they complete: rows are stored before the scheduler counts them, so a
    /// crash in between only means the worker's results are taken again.
    pub async fn report(&self, worker: WorkerId, reports: &[ShardReport]) -> Result<()> {
        if reports.is_empty() {
            return Ok(());
        }
        let rows = self.scheduler().validate(worker, reports)?;
        if !rows.is_empty() {
            let counts: Vec<_> = rows.iter().map(|r| (r.sweep, r.config, r.method, r.micros, r.worker.0)).collect();
            let stored = self.store_results(rows).await;
            self.note_write(&stored);
            stored?;
            self.scheduler().count_stored(counts);
        }
        let settled = self.scheduler().commit(worker, reports);
        self.persist_settled(settled).await?;
        self.changed();
        Ok(())
    }

    /// Stores results in a transaction shared with every other poll's that
    /// waits for the store meanwhile (group commit): one writer on the
    /// blocking pool takes everything queued each time it gets the store,
    /// until the queue is empty. A transaction per poll cost 16 us a result
    /// in batches of 10, 4.5 in batches of 1,000; and a blocking thread per
    /// waiting poll left none for `Status` with 1,000 workers. The writer
    /// runs to its end even when the poll that started it is dropped.
    async fn store_results(&self, rows: Vec<ResultRecord>) -> Result<()> {
        let (done, stored) = oneshot::channel();
        let start_writer = {
            let mut queue = self.results_queue.lock().unwrap_or_else(|p| p.into_inner());
            queue.waiting.push((rows, done));
            !std::mem::replace(&mut queue.writing, true)
        };
        if start_writer {
            let (store, queue, writes) = (self.store.clone(), self.results_queue.clone(), self.result_writes.clone());
            tokio::task::spawn_blocking(move || write_queued_results(&store, &queue, &writes));
        }
        match stored.await {
            Ok(written) => written.map_err(|e| Error::Internal(format!("storing results: {e}"))),
            Err(_) => Err(Error::Internal("storing results: the writer stopped".into())),
        }
    }

    /// How many grouped results writes ([`Shared::store_results`]) ran.
    #[cfg(test)]
    pub(crate) fn result_writes(&self) -> u64 {
        self.result_writes.load(Ordering::Relaxed)
    }

    /// Persists what settling shards decided. The scheduler has already
    /// moved on, so a write that fails is kept and retried on every tick
    /// (the sweep would otherwise stay running for ever in the database);
    /// the error still reaches the caller.
    pub async fn persist_settled(&self, settled: Settled) -> Result<()> {
        if settled == Settled::default() {
            return Ok(());
        }
        log_settled(&settled);
        let pending = {
            let mut unsettled = self.unsettled.lock().unwrap_or_else(|p| p.into_inner());
            unsettled.push(settled);
            std::mem::take(&mut *unsettled)
        };
        self.write_settled(pending).await
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
    /// shards for the starts that lack results.
    fn reopen(&self, short: Vec<ShortSweep>) {
        if short.is_empty() {
            return;
        }
        let mut sched = self.scheduler();
        for s in short {
            tracing::error!(
                sweep = %s.record.id, stored = s.record.tasks_done, tasks = s.record.tasks_total,
                shards = s.gaps.len(),
                "a drained sweep lacks results; running the missing starts again instead of ending it"
            );
            let (key, id, failed) = (s.record.key, s.record.id.clone(), s.record.shards_failed);
            sched.add_sweep(key, id, s.sweep, s.record.cursor, Vec::new(), failed, s.reused);
            sched.replan(key, s.gaps);
        }
    }
}
