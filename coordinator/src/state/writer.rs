//! The one writer of what polls produce: new shards (cuts), results and
//! settled shards, queued by any number of polls and written by one
//! blocking task in few transactions (group commit, each taking the
//! oldest polls' results up to [`GROUP_ROWS`]), in that order.
//!
//! Why one writer: a transaction per poll cost 16 us a result in batches of
//! 10, 4.5 in batches of 1,000, and polls that each waited for the store's
//! lock (their results, then their cuts) queued behind one another's
//! commits: with 1,000 workers a poll spent over a second waiting. Cuts are
//! queued under the scheduler's lock, so they reach the database in the
//! order they were cut (a stored cursor is never past an unstored shard);
//! a poll does not wait for its cuts, which are always older in the queue
//! than any result for them, nor for the shards its results settled (they
//! are queued once those results are stored; a crash before they are
//! written only runs those shards again, their results counting once).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::settle::{log_settled, settle_in_store, Replan};
use super::Shared;
use crate::error::{Error, Result};
use crate::model::{NewShards, ResultRecord};
use crate::scheduler::Settled;
use crate::store::Store;

/// What a waiter hears of its write.
type Written = std::result::Result<(), String>;

/// Writes waiting for the writer, and whether it runs.
#[derive(Default)]
pub(super) struct WriteQueue {
    /// Cuts in cut order, with those waiting for them to be stored.
    cuts: Vec<NewShards>,
    cut_waiters: Vec<oneshot::Sender<Written>>,
    /// Each poll's results and where to say how their write went.
    pub(super) results: Vec<(Vec<ResultRecord>, oneshot::Sender<Written>)>,
    /// What polls' stored results settled, merged, with the target cost
    /// for planning a short sweep's gaps.
    settled: Settled,
    target_cost: f64,
    /// Sweeps a settle found short, for the state to take back.
    short: Vec<Replan>,
    writing: bool,
}

impl WriteQueue {
    /// True if there is something to write other than what failed in this
    /// run of the writer.
    fn due(&self, failed: &Failed) -> bool {
        (failed.cuts.is_none() && !self.cuts.is_empty())
            || !self.results.is_empty()
            || (!failed.settled && self.settled != Settled::default())
    }

    /// Puts cuts whose write failed back ahead of any queued since.
    fn requeue_cuts(&mut self, cuts: Vec<NewShards>) {
        let later = std::mem::replace(&mut self.cuts, cuts);
        self.cuts.extend(later);
    }

    /// Puts settled shards whose write failed back, before any since.
    fn requeue_settled(&mut self, settled: Settled) {
        let later = std::mem::replace(&mut self.settled, settled);
        merge(&mut self.settled, later);
    }

    /// Marks the writer running; true if it was not (the caller starts it).
    fn claim(&mut self) -> bool {
        !std::mem::replace(&mut self.writing, true)
    }
}

/// The writer: while anything is queued, takes all of it, writes the cuts,
/// then the results, then the settled shards (each in one transaction) and
/// answers the waiters. Cuts or settles whose write failed go back to the
/// head of the queue and are not tried again until the writer is next
/// started (the next poll's results or the next tick), so a refusing disk
/// does not spin it.
fn write_queued(store: &Mutex<Store>, queue: &Mutex<WriteQueue>, writes: &AtomicU64) {
    let lock_queue = || queue.lock().unwrap_or_else(|p| p.into_inner());
    let mut failed = Failed::default();
    loop {
        let store = store.lock();
        let (cuts, cut_waiters, results, settled, target_cost) = {
            let mut queue = lock_queue();
            if !queue.due(&failed) {
                // Those who came to wait after a failure hear of it now.
                if let Some(error) = &failed.cuts {
                    queue.cut_waiters.drain(..).for_each(|w| drop(w.send(Err(error.clone()))));
                }
                queue.writing = false;
                return;
            }
            let cuts_due = failed.cuts.is_none();
            let cuts = if cuts_due { std::mem::take(&mut queue.cuts) } else { Vec::new() };
            let waiters = if cuts_due { std::mem::take(&mut queue.cut_waiters) } else { Vec::new() };
            let settled = if failed.settled { Settled::default() } else { std::mem::take(&mut queue.settled) };
            let results = take_group(&mut queue.results, GROUP_ROWS);
            (cuts, waiters, results, settled, queue.target_cost)
        };
        // One round's transactions (cuts, results, settles): its events and
        // how long it held the store (`RUST_LOG=ksweep_coordinator=debug`).
        let rows: usize = results.iter().map(|(r, _)| r.len()).sum();
        let _round = tracing::debug_span!("write", cuts = cuts.len(), results = rows, polls = results.len()).entered();
        let mut store = match store {
            Ok(store) => store,
            Err(_) => {
                // Nothing is written: cuts and settles stay queued (not
                // tried again in this run), waiters hear why.
                let error = "the store lock is poisoned".to_string();
                let mut queue = lock_queue();
                queue.requeue_cuts(cuts);
                queue.requeue_settled(settled);
                failed = Failed { cuts: Some(error.clone()), settled: true };
                cut_waiters.into_iter().for_each(|w| drop(w.send(Err(error.clone()))));
                results.into_iter().for_each(|(_, w)| drop(w.send(Err(error.clone()))));
                continue;
            }
        };
        if !cuts.is_empty() {
            let written = store.cut_shards(&cuts).map_err(|e| e.to_string());
            if let Err(error) = &written {
                failed.cuts = Some(error.clone());
                lock_queue().requeue_cuts(cuts);
            }
            for waiter in cut_waiters {
                let _ = waiter.send(written.clone());
            }
        }
        if !results.is_empty() {
            let (rows, waiting): (Vec<_>, Vec<_>) = results.into_iter().unzip();
            let written = store.record(&rows.concat()).map(drop).map_err(|e| e.to_string());
            writes.fetch_add(1, Ordering::Relaxed);
            for done in waiting {
                let _ = done.send(written.clone()); // a dropped poll no longer waits
            }
        }
        if settled != Settled::default() {
            match settle_in_store(&mut store, &settled, target_cost) {
                Ok(short) => lock_queue().short.extend(short),
                Err(error) => {
                    tracing::error!(%error, "recording settled shards failed; retried with the next write");
                    failed.settled = true;
                    lock_queue().requeue_settled(settled);
                }
            }
        }
    }
}

/// About how many results one transaction of the writer takes (the oldest
/// polls until they hold this many; a poll's results are never split).
///
/// Why a bound: a group answers its polls at once, so their workers start
/// their next shards together and come back together; with every queued
/// poll in one transaction, 1,000 workers of 1 s shards fell into waves of
/// a hundred or more polls, each waiting for its whole wave's transaction
/// and the one before (Poll p50 41-115 ms, p99 183-513 ms, the writer busy
/// only about 60 % of the time). Smaller groups answer a wave in slices,
/// which spreads the next arrivals out: Poll p99 43-60 ms with 1,024 to
/// 8,192, stored results 247,000-249,000 a second against 219,000-240,000
/// (docs/performance/coordinator.md). A result costs the same in transactions of
/// 1,120 rows as in those of 20,160.
pub(super) const GROUP_ROWS: usize = 2048;

/// The oldest queued polls of the next transaction, until they hold at
/// least `cap` results (all of them if they hold fewer).
fn take_group<R, W>(queued: &mut Vec<(Vec<R>, W)>, cap: usize) -> Vec<(Vec<R>, W)> {
    let mut rows = 0;
    let n = queued
        .iter()
        .take_while(|(r, _)| {
            let more = rows < cap;
            rows += r.len();
            more
        })
        .count();
    queued.drain(..n).collect()
}

/// What failed in one run of the writer, not tried again in that run.
#[derive(Default)]
struct Failed {
    cuts: Option<String>,
    settled: bool,
}

/// Adds `more` to `into`, as if both had been settled at once.
fn merge(into: &mut Settled, more: Settled) {
    into.done.extend(more.done);
    into.failed.extend(more.failed);
    into.retried.extend(more.retried);
    into.requeued.extend(more.requeued);
    into.finished.extend(more.finished);
    into.stages.extend(more.stages);
}

impl Shared {
    /// Starts the writer on the blocking pool if `start` (it was idle).
    fn start_writer(&self, start: bool) {
        if start {
            let (store, queue, writes) = (self.store.clone(), self.writes.clone(), self.result_writes.clone());
            tokio::task::spawn_blocking(move || write_queued(&store, &queue, &writes));
        }
    }

    fn write_queue(&self) -> std::sync::MutexGuard<'_, WriteQueue> {
        self.writes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores results in the writer's next transaction, shared with every
    /// other poll's queued meanwhile, and waits for it: a result
    /// acknowledged is a result stored. The write runs to its end even
    /// when this call is dropped.
    pub(super) async fn store_results(&self, rows: Vec<ResultRecord>) -> Result<()> {
        let (done, stored) = oneshot::channel();
        let start = {
            let mut queue = self.write_queue();
            queue.results.push((rows, done));
            queue.claim()
        };
        self.start_writer(start);
        match stored.await {
            Ok(written) => written.map_err(|e| Error::Internal(format!("storing results: {e}"))),
            Err(_) => Err(Error::Internal("storing results: the writer stopped".into())),
        }
    }

    /// Queues what committed results settled for the writer, without
    /// waiting (the scheduler has moved on; the database follows), and
    /// takes back any sweep an earlier settle found short.
    pub(super) fn queue_settled(&self, settled: Settled) {
        if settled != Settled::default() {
            log_settled(&settled);
            let target_cost = self.scheduler().target_cost();
            let start = {
                let mut queue = self.write_queue();
                merge(&mut queue.settled, settled);
                queue.target_cost = target_cost;
                queue.claim()
            };
            self.start_writer(start);
        }
        self.reopen_short();
    }

    /// On every tick: takes back the sweeps settles found short, and
    /// returns the settled shards whose write failed while the writer is
    /// idle, for the tick to write (and report) itself.
    pub(super) fn unwritten_settles(&self) -> Option<Settled> {
        self.reopen_short();
        let mut queue = self.write_queue();
        let left = !queue.writing && queue.settled != Settled::default();
        left.then(|| std::mem::take(&mut queue.settled))
    }

    /// Waits until the writer has nothing left to do.
    #[cfg(test)]
    pub(crate) async fn writer_idle(&self) {
        while self.write_queue().writing {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    }

    fn reopen_short(&self) {
        let short = std::mem::take(&mut self.write_queue().short);
        self.reopen(short);
    }

    /// Queues every cut the scheduler holds unstored for the writer, in cut
    /// order (taken and queued under the scheduler's lock). With `wait`,
    /// returns once every cut queued so far is stored, or the error of a
    /// write that failed (the cuts stay queued and are retried).
    pub(super) async fn flush_cuts(&self, wait: bool) -> Result<()> {
        let (waiting, start) = {
            let mut sched = self.scheduler();
            let cuts = sched.take_unstored();
            let mut queue = self.write_queue();
            queue.cuts.extend(cuts);
            if queue.cuts.is_empty() || (!wait && queue.writing) {
                return Ok(());
            }
            let waiting = wait.then(|| {
                let (tx, rx) = oneshot::channel();
                queue.cut_waiters.push(tx);
                rx
            });
            (waiting, queue.claim())
        };
        self.start_writer(start);
        let Some(stored) = waiting else { return Ok(()) };
        let written = match stored.await {
            Ok(written) => written.map_err(|e| Error::Internal(format!("storing new shards: {e}"))),
            Err(_) => Err(Error::Internal("storing new shards: the writer stopped".into())),
        };
        self.note_write(&written);
        written
    }

    /// How many grouped results writes ([`Shared::store_results`]) ran.
    #[cfg(test)]
    pub(crate) fn result_writes(&self) -> u64 {
        self.result_writes.load(Ordering::Relaxed)
    }

    /// Polls' results queued for the writer, for tests that hold it back.
    #[cfg(test)]
    pub(crate) fn queued_results(&self) -> usize {
        self.write_queue().results.len()
    }
}

/// A queue shared by the state and its writer.
pub(super) fn queue() -> Arc<Mutex<WriteQueue>> {
    Arc::new(Mutex::new(WriteQueue::default()))
}

#[cfg(test)]
mod tests {
    use super::take_group;

    /// Polls of 3, 5, 2 and 4 results, each with its waiter's number.
    fn queue() -> Vec<(Vec<u8>, usize)> {
        [3, 5, 2, 4].iter().enumerate().map(|(i, &n)| (vec![0; n], i)).collect()
    }

    #[test]
    fn a_group_takes_the_oldest_polls_until_they_hold_the_bound() {
        let mut queued = queue();
        let waiters = |g: &[(Vec<u8>, usize)]| g.iter().map(|(_, w)| *w).collect::<Vec<_>>();
        assert_eq!(waiters(&take_group(&mut queued, 6)), [0, 1], "3 + 5 results reach 6; the poll is not split");
        assert_eq!(waiters(&take_group(&mut queued, 6)), [2, 3]);
        assert!(queued.is_empty());
        assert!(take_group(&mut queued, 6).is_empty());
    }

    #[test]
    fn a_poll_larger_than_the_bound_goes_alone_and_fewer_go_whole() {
        let mut queued = queue();
        assert_eq!(take_group(&mut queued, 1).len(), 1, "one poll, whatever its size");
        assert_eq!(queued.len(), 3);
        assert_eq!(take_group(&mut queued, 1000).len(), 3, "everything, when it holds less than the bound");
    }
}
