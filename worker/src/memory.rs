//! Memory as a resource the worker schedules: every shard knows its need
//! before it runs (`tour::Configuration::memory_need`), takes it from one
//! budget shared by all running shards, and runs only as many tasks at once
//! as fit. A board that cannot fit at all fails its shard with a clear
//! error instead of aborting the process. Runners kept between shards
//! (`crate::runners`) hold their bytes from the same budget, and give them
//! back when evicted.

use std::sync::{Arc, Condvar, Mutex};

use tour::MemoryNeed;

/// Bytes the worker may use for boards, shared by every running shard.
#[derive(Debug)]
pub struct MemoryBudget {
    total: u64,
    free: Mutex<u64>,
    released: Condvar,
}

/// Bytes taken from a budget, given back when dropped.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<MemoryBudget>,
    bytes: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // Empty (given back under the lock, or moved to another): nothing
        // to return, and the lock may be held by the caller.
        if self.bytes == 0 {
            return;
        }
        let mut free = self.budget.free.lock().unwrap_or_else(|p| p.into_inner());
        *free += self.bytes;
        self.budget.released.notify_all();
    }
}

impl Reservation {
    /// The bytes it holds.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Moves `bytes` (at most all it holds) into a reservation of their own.
    pub fn split(&mut self, bytes: u64) -> Reservation {
        let bytes = bytes.min(self.bytes);
        self.bytes -= bytes;
        Reservation { budget: self.budget.clone(), bytes }
    }

    /// Takes over what `other`, of the same budget, holds.
    pub fn merge(&mut self, mut other: Reservation) {
        debug_assert!(Arc::ptr_eq(&self.budget, &other.budget), "reservations of two budgets");
        self.bytes += std::mem::take(&mut other.bytes);
    }
}

/// The free bytes of a budget, its lock held: what
/// [`MemoryBudget::wait_for`] hands its attempts.
#[derive(Debug)]
pub struct Free<'a> {
    budget: &'a Arc<MemoryBudget>,
    bytes: &'a mut u64,
}

impl Free<'_> {
    /// Bytes free now.
    pub fn bytes(&self) -> u64 {
        *self.bytes
    }

    /// Takes `bytes`, which must be free.
    pub fn take(&mut self, bytes: u64) -> Reservation {
        assert!(bytes <= *self.bytes, "taking {bytes} bytes of {} free", *self.bytes);
        *self.bytes -= bytes;
        Reservation { budget: self.budget.clone(), bytes }
    }

    /// Frees what `held`, of this budget, holds, at once (its drop would
    /// wait for the lock this holds).
    pub fn give_back(&mut self, held: &mut Reservation) {
        debug_assert!(Arc::ptr_eq(self.budget, &held.budget), "a reservation of another budget");
        *self.bytes += std::mem::take(&mut held.bytes);
    }

    /// How many tasks of `need` (up to `threads`) fit in the free bytes.
    pub fn workspaces(&self, need: MemoryNeed, threads: usize) -> usize {
        let more =
            self.bytes().saturating_sub(need.with_threads(1)).checked_div(need.per_thread).unwrap_or(threads as u64);
        1 + more.min(threads.saturating_sub(1) as u64) as usize
    }
}

impl MemoryBudget {
    /// A budget of `total` bytes.
    pub fn new(total: u64) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget { total, free: Mutex::new(total), released: Condvar::new() })
    }

    /// The whole budget, in bytes.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes not taken now.
    pub fn free(&self) -> u64 {
        *self.free.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes what a shard needs to run one task at a time, waiting while
    /// other shards hold it, then as many more threads' worth (up to
    /// `threads` in all) as are free now. Returns the reservation and the
    /// number of tasks the shard may run at once. Errs, without waiting,
    /// when even one task could never fit: that board fails, the worker
    /// goes on. A shard holding nothing while it waits, no two can block
    /// each other.
    pub fn reserve(self: &Arc<Self>, need: MemoryNeed, threads: usize) -> Result<(Reservation, usize), u64> {
        let first = need.with_threads(1);
        if first > self.total {
            return Err(first);
        }
        Ok(self.wait_for(|free| {
            if free.bytes() < first {
                return None;
            }
            let workspaces = free.workspaces(need, threads);
            Some((free.take(need.with_threads(workspaces as u64)), workspaces))
        }))
    }

    /// Calls `attempt` with the free bytes, under the budget's lock, until
    /// it returns something: at once, then each time bytes are given back.
    /// `attempt` may free bytes held elsewhere (`Free::give_back`), but
    /// must not drop a non-empty reservation of this budget.
    pub fn wait_for<T>(self: &Arc<Self>, mut attempt: impl FnMut(&mut Free<'_>) -> Option<T>) -> T {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(done) = attempt(&mut Free { budget: self, bytes: &mut free }) {
                return done;
            }
            free = self.released.wait(free).unwrap_or_else(|p| p.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn a_budget_runs_as_many_tasks_as_fit_and_refuses_what_never_can() {
        // 3D N = 1000: about 1 GB shared and 1 GB a thread; 4 GB in all.
        let need = MemoryNeed { shared: GIB, per_thread: GIB };
        let budget = MemoryBudget::new(4 * GIB);
        let (held, workspaces) = budget.reserve(need, 16).unwrap();
        assert_eq!(workspaces, 3, "16 threads, room for 3 walks beside the shared array");
        assert_eq!(*budget.free.lock().unwrap(), 0);
        drop(held);
        assert_eq!(*budget.free.lock().unwrap(), 4 * GIB, "given back");
        // Never more workspaces than threads, however much is free.
        assert_eq!(budget.reserve(MemoryNeed { shared: 1, per_thread: 1 }, 2).unwrap().1, 2);
        // A board whose one task needs more than the budget fails at once.
        assert_eq!(budget.reserve(MemoryNeed { shared: 3 * GIB, per_thread: 2 * GIB }, 1).unwrap_err(), 5 * GIB);
    }

    #[test]
    fn a_shard_waits_for_memory_another_holds() {
        let need = MemoryNeed { shared: GIB, per_thread: GIB };
        let budget = MemoryBudget::new(3 * GIB);
        let (held, workspaces) = budget.reserve(need, 4).unwrap();
        assert_eq!(workspaces, 2);
        let waiter = {
            let budget = budget.clone();
            std::thread::spawn(move || budget.reserve(need, 4).map(|(_, workspaces)| workspaces))
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!waiter.is_finished(), "no room until the first shard ends");
        drop(held);
        assert_eq!(waiter.join().unwrap(), Ok(2));
    }
}
