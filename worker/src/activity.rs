//! What the pool's threads are doing, for the poll loop to tell the
//! coordinator: since when each thread has been on the batch it runs (a
//! pool held up by long tasks takes no more shards, and hands back those
//! it has not started), and how often running tasks have polled their
//! cancel flags (tasks that poll are working, even while none finishes).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a thread may be on one batch before the pool counts it held
/// up: a batch is a part of a shard, and shards are cut for about a second
/// on one thread.
pub const HELD_UP: Duration = Duration::from_secs(2);

#[derive(Debug)]
pub struct Activity {
    origin: Instant,
    /// Per pool thread: microseconds from `origin` to when it began its
    /// batch, plus one; 0 while it runs none.
    batch_since: Vec<AtomicU64>,
    polls: AtomicU64,
}

/// A pool thread's batch, from its start to its drop.
pub struct Batch<'a> {
    slot: Option<&'a AtomicU64>,
}

impl Activity {
    pub fn new(threads: usize) -> Activity {
        Activity {
            origin: Instant::now(),
            batch_since: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            polls: 0.into(),
        }
    }

    /// Marks the calling pool thread busy until the guard drops (nothing
    /// off the pool, as in tests that run a shard on their own thread).
    pub fn batch(&self) -> Batch<'_> {
        let slot = rayon::current_thread_index().and_then(|i| self.batch_since.get(i));
        if let Some(slot) = slot {
            slot.store(self.origin.elapsed().as_micros() as u64 + 1, Ordering::Relaxed);
        }
        Batch { slot }
    }

    /// Threads that have been on one batch for longer than `long`.
    pub fn held_up(&self, long: Duration) -> usize {
        let now = self.origin.elapsed().as_micros() as u64 + 1;
        let long = long.as_micros() as u64;
        self.batch_since
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .filter(|&s| s != 0 && now - s.min(now) > long)
            .count()
    }

    /// Cancel-flag polls of the tasks run here, which count them
    /// ([`tour::Cancel::counting`]).
    pub fn polls(&self) -> &AtomicU64 {
        &self.polls
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            slot.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_on_one_batch_past_the_limit_are_held_up() {
        let activity = Activity::new(2);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let (entered, release) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        std::thread::scope(|scope| {
            scope.spawn(|| {
                pool.install(|| {
                    let _batch = activity.batch();
                    entered.wait();
                    release.wait();
                })
            });
            entered.wait();
            std::thread::sleep(Duration::from_millis(5));
            assert_eq!(activity.held_up(Duration::ZERO), 1);
            assert_eq!(activity.held_up(Duration::from_secs(60)), 0);
            release.wait();
        });
        assert_eq!(activity.held_up(Duration::ZERO), 0, "the batch ended");
        // Off the pool nothing is marked.
        let _batch = activity.batch();
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(activity.held_up(Duration::ZERO), 0);
    }
}
