//! Runners kept between shards. A sweep sends many shards of one
//! configuration, and a runner's padded layout and starting degrees (a pass
//! over the board per move; megabytes to gigabytes) are the same for all of
//! them: the worker keeps the few it used last, each with the bytes it
//! holds reserved in the memory budget, and gives an idle one's room to any
//! shard that needs it before that shard waits or takes fewer threads.
//!
//! A kept runner is the one a shard would have built: the state it keeps
//! across tasks (W+ tables, `solve`'s shared tours) is a function of the
//! configuration and the task's options, so results do not depend on
//! which shards ran before. One that saw a panic is not kept.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tour::{Configuration, MemoryNeed, Runner};

use crate::error::ShardError;
use crate::memory::{Free, MemoryBudget, Reservation};

/// Most runners kept: a sweep's shards come in its grid's order, a few
/// configurations at a time.
pub const MAX_KEPT: usize = 8;

/// The runners a worker keeps, shared by its shards.
#[derive(Debug)]
pub struct RunnerCache {
    budget: Arc<MemoryBudget>,
    max_kept: usize,
    /// Most bytes the kept runners may hold in all.
    max_bytes: u64,
    kept: Mutex<Kept>,
    /// Runners built, for the logs and tests.
    builds: AtomicU64,
}

#[derive(Debug, Default)]
struct Kept {
    entries: Vec<Entry>,
    /// Ticks at each use, to find the least recently used.
    clock: u64,
}

#[derive(Debug)]
struct Entry {
    runner: Arc<Runner>,
    /// The bytes the runner itself holds: the most any shard that used it
    /// needed shared (W+ tables and `solve`'s tours are built by a first
    /// task and kept).
    held: Reservation,
    used: u64,
}

impl Entry {
    /// No shard is using it: only the cache holds it (a shard gets its
    /// handle under the cache's lock, so this cannot change under it).
    fn idle(&self) -> bool {
        Arc::strong_count(&self.runner) == 1
    }
}

/// What [`RunnerCache::grant`] gives a shard: its reservation, its workspaces
/// and the kept runner, if any.
type Grant = (Reservation, usize, Option<Arc<Runner>>);

/// A shard's runner and the memory it runs with, until the shard ends.
#[derive(Debug)]
pub struct ShardRunner<'a> {
    // Dropped before `held`, so that the runner is idle (evictable) by the
    // time the release of `held` wakes shards waiting for memory.
    runner: Arc<Runner>,
    /// The shard's workspaces, and the runner's shared bytes unless the cache
    /// holds them; never empty (a workspace has its degree array).
    held: Reservation,
    workspaces: usize,
    cache: &'a RunnerCache,
    /// A task panicked: the runner is not kept for other shards.
    tainted: AtomicBool,
}

impl ShardRunner<'_> {
    pub fn runner(&self) -> &Runner {
        &self.runner
    }

    /// Tasks the shard may run at once.
    pub fn workspaces(&self) -> usize {
        self.workspaces
    }

    /// Marks the runner as having seen a panic.
    pub fn taint(&self) {
        self.tainted.store(true, Ordering::Relaxed);
    }
}

impl Drop for ShardRunner<'_> {
    fn drop(&mut self) {
        if self.tainted.load(Ordering::Relaxed) || std::thread::panicking() {
            self.cache.discard(&self.runner);
        }
    }
}

impl RunnerCache {
    /// A cache of at most `max_kept` runners holding at most `max_bytes`,
    /// their memory taken from `budget`.
    pub fn new(budget: Arc<MemoryBudget>, max_kept: usize, max_bytes: u64) -> RunnerCache {
        RunnerCache { budget, max_kept, max_bytes, kept: Mutex::default(), builds: AtomicU64::new(0) }
    }

    /// The default bounds: [`MAX_KEPT`] runners, half the budget.
    pub fn for_budget(budget: Arc<MemoryBudget>) -> RunnerCache {
        let max_bytes = budget.total() / 2;
        RunnerCache::new(budget, MAX_KEPT, max_bytes)
    }

    /// Runners built so far.
    #[cfg(test)]
    pub fn builds(&self) -> u64 {
        self.builds.load(Ordering::Relaxed)
    }

    /// The runner of `config` and the memory for a shard whose tasks need
    /// `need` each, up to `threads` at once: the kept runner if there is
    /// one, else a new one (kept if there is room). Waits while other
    /// shards hold the memory; evicts idle kept runners of other
    /// configurations first, for the shard's first task and then for as
    /// many more as it can run. Errs, without waiting, when one task could
    /// never fit, or the runner cannot be built.
    pub fn take(
        &self,
        config: &Configuration,
        need: MemoryNeed,
        threads: usize,
    ) -> Result<ShardRunner<'_>, ShardError> {
        let first = need.with_threads(1);
        if first > self.budget.total() {
            return Err(ShardError::TooBig { board: config.board().to_string(), need, budget: self.budget.total() });
        }
        // Evicted under the budget's lock with their bytes given back;
        // dropped (their runners freed) after it.
        let mut evicted = Vec::new();
        let (held, workspaces, kept) =
            self.budget.wait_for(|free| self.grant(config, need, threads, free, &mut evicted));
        drop(evicted);
        let built = kept.is_none();
        let runner = match kept {
            Some(runner) => {
                tracing::debug!(board = %config.board(), "runner cache hit");
                runner
            }
            None => {
                let began = Instant::now();
                let runner = Arc::new(Runner::new(config.clone())?);
                let builds = self.builds.fetch_add(1, Ordering::Relaxed) + 1;
                tracing::debug!(board = %config.board(), build = ?began.elapsed(), builds, "runner cache miss: built");
                runner
            }
        };
        let mut shard = ShardRunner { runner, held, workspaces, cache: self, tainted: AtomicBool::new(false) };
        if built {
            self.keep(&mut shard, need.shared);
        }
        Ok(shard)
    }

    /// One attempt, under the budget's lock, at the memory of a shard of
    /// `config`: the shard's workspaces, and the runner's shared bytes unless
    /// it is kept (then the kept runner, its reservation grown to `need`'s
    /// shared bytes). None while the first task does not fit.
    fn grant(
        &self,
        config: &Configuration,
        need: MemoryNeed,
        threads: usize,
        free: &mut Free<'_>,
        evicted: &mut Vec<Entry>,
    ) -> Option<Grant> {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let at = kept.entries.iter().position(|e| e.runner.config() == config);
        let covered = at.map_or(0, |i| kept.entries[i].held.bytes());
        let own = MemoryNeed { shared: need.shared.saturating_sub(covered), per_thread: need.per_thread };
        // Room for every workspace, from idle runners of other configurations,
        // least recently used first.
        let all = own.with_threads(threads as u64);
        while free.bytes() < all {
            let Some(victim) = kept
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.idle() && e.runner.config() != config)
                .min_by_key(|(_, e)| e.used)
                .map(|(i, _)| i)
            else {
                break;
            };
            let mut entry = kept.entries.swap_remove(victim);
            tracing::debug!(
                board = %entry.runner.config().board(), bytes = entry.held.bytes(), "kept runner evicted for a shard's memory"
            );
            free.give_back(&mut entry.held);
            evicted.push(entry);
        }
        if free.bytes() < own.with_threads(1) {
            return None;
        }
        let workspaces = free.workspaces(own, threads);
        let mut held = free.take(own.with_threads(workspaces as u64));
        kept.clock += 1;
        let clock = kept.clock;
        let runner = at.map(|i| {
            let entry = &mut kept.entries[i];
            entry.used = clock;
            // A W+ or `solve` shard on a runner kept by others: the tables
            // it builds stay with the runner, and so do their bytes.
            let grow = need.shared.saturating_sub(entry.held.bytes());
            entry.held.merge(held.split(grow));
            entry.runner.clone()
        });
        Some((held, workspaces, runner))
    }

    /// Keeps a shard's newly built runner, with `shared` bytes of its
    /// reservation, when there is room: evicts idle runners, least
    /// recently used first, to stay within the bounds, and keeps it only
    /// if it then fits.
    fn keep(&self, shard: &mut ShardRunner<'_>, shared: u64) {
        if shared > self.max_bytes {
            tracing::debug!(board = %shard.runner.config().board(), bytes = shared, "runner too big to keep");
            return;
        }
        let mut evicted = Vec::new();
        {
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            // Another shard's, built at the same time, is kept already.
            if kept.entries.iter().any(|e| e.runner.config() == shard.runner.config()) {
                return;
            }
            let fits = |kept: &Kept| {
                let bytes: u64 = kept.entries.iter().map(|e| e.held.bytes()).sum();
                kept.entries.len() < self.max_kept && bytes.saturating_add(shared) <= self.max_bytes
            };
            while !fits(&kept) {
                let victim = kept.entries.iter().enumerate().filter(|(_, e)| e.idle()).min_by_key(|(_, e)| e.used);
                let Some((i, _)) = victim else { break };
                let entry = kept.entries.swap_remove(i);
                tracing::debug!(
                    board = %entry.runner.config().board(), bytes = entry.held.bytes(), "kept runner evicted for a newer one"
                );
                evicted.push(entry);
            }
            if fits(&kept) && shared < shard.held.bytes() {
                kept.clock += 1;
                let entry = Entry { runner: shard.runner.clone(), held: shard.held.split(shared), used: kept.clock };
                kept.entries.push(entry);
            }
        }
        // Their reservations given back with the cache's lock released.
        drop(evicted);
    }

    /// Forgets `runner` if it is kept.
    fn discard(&self, runner: &Arc<Runner>) {
        let removed = {
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            let at = kept.entries.iter().position(|e| Arc::ptr_eq(&e.runner, runner));
            at.map(|i| kept.entries.swap_remove(i))
        };
        if let Some(entry) = removed {
            tracing::debug!(board = %entry.runner.config().board(), "kept runner dropped: a task panicked on it");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tour::{format_bytes, Board, Method, Moves};

    use super::*;

    fn config(sides: &[u32]) -> Configuration {
        let moves = Moves::from_rule(&[2, 1], sides.len()).unwrap();
        Configuration::new(Board::new(sides).unwrap(), moves).unwrap()
    }

    fn need(c: &Configuration) -> MemoryNeed {
        c.memory_need_for(&[Method::W], false)
    }

    fn kept(cache: &RunnerCache) -> Vec<Board> {
        let kept = cache.kept.lock().unwrap();
        kept.entries.iter().map(|e| e.runner.config().board().clone()).collect()
    }

    #[test]
    fn two_shards_of_one_configuration_build_one_solver() {
        let budget = MemoryBudget::new(1 << 30);
        let cache = RunnerCache::for_budget(budget.clone());
        let c = config(&[20, 20]);
        let first = cache.take(&c, need(&c), 2).unwrap();
        let built = Arc::as_ptr(&first.runner);
        drop(first);
        let second = cache.take(&c, need(&c), 2).unwrap();
        assert_eq!(cache.builds(), 1);
        assert!(std::ptr::eq(Arc::as_ptr(&second.runner), built), "the kept one");
        // The runner's shared bytes are held once, by the cache.
        assert_eq!(budget.free(), (1 << 30) - need(&c).with_threads(2));
        drop(second);
        assert_eq!(budget.free(), (1 << 30) - need(&c).shared);
        // Another configuration is built, and kept beside it.
        drop(cache.take(&config(&[8, 8]), need(&config(&[8, 8])), 1).unwrap());
        assert_eq!((cache.builds(), kept(&cache).len()), (2, 2));
    }

    #[test]
    fn an_evicted_solver_gives_back_its_budget() {
        let (small, big) = (config(&[8, 8]), config(&[40, 40]));
        let total = 10 * need(&big).with_threads(1);
        let budget = MemoryBudget::new(total);
        // Two kept at most: the third evicts the least recently used.
        let cache = RunnerCache::new(budget.clone(), 2, total);
        let third = config(&[9, 9]);
        for c in [&small, &big, &small, &third] {
            drop(cache.take(c, need(c), 1).unwrap());
        }
        assert_eq!(kept(&cache), [small.board().clone(), third.board().clone()]);
        assert_eq!(budget.free(), total - need(&small).shared - need(&third).shared, "big's bytes given back");
        assert_eq!(cache.builds(), 3);
        // Bounded by bytes too: a runner past the bound is not kept, and
        // evicts nothing.
        let cache = RunnerCache::new(MemoryBudget::new(total), 2, need(&big).shared - 1);
        drop(cache.take(&small, need(&small), 1).unwrap());
        drop(cache.take(&big, need(&big), 1).unwrap());
        assert_eq!(kept(&cache), [small.board().clone()]);
        assert_eq!(cache.budget.free(), total - need(&small).shared);
    }

    #[test]
    fn a_configuration_that_does_not_fit_beside_a_kept_one_evicts_it() {
        let (a, b) = (config(&[60, 60]), config(&[60, 59]));
        // Room for either's first task, not for b's beside a's runner.
        let total = need(&a).with_threads(1).max(need(&b).with_threads(1));
        assert!(need(&a).shared + need(&b).with_threads(1) > total);
        let budget = MemoryBudget::new(total);
        let cache = RunnerCache::new(budget.clone(), 8, total);
        drop(cache.take(&a, need(&a), 1).unwrap());
        assert_eq!(kept(&cache), [a.board().clone()]);
        let shard = cache.take(&b, need(&b), 4).unwrap();
        assert_eq!(shard.workspaces(), 1);
        assert!(kept(&cache).iter().all(|board| board != a.board()), "a evicted");
        drop(shard);
        assert_eq!(budget.free() + kept(&cache).len() as u64 * need(&b).shared, total);
    }

    #[test]
    fn idle_solvers_give_their_room_to_more_lanes() {
        let (a, b) = (config(&[30, 30]), config(&[20, 20]));
        // b's first task fits beside a's runner; its second needs a's room.
        let total = need(&a).shared + need(&b).with_threads(2) - 1;
        let cache = RunnerCache::new(MemoryBudget::new(total), 8, total);
        drop(cache.take(&a, need(&a), 1).unwrap());
        let shard = cache.take(&b, need(&b), 2).unwrap();
        assert_eq!((shard.workspaces(), cache.builds()), (2, 2));
        assert_eq!(kept(&cache), [b.board().clone()]);
    }

    /// A shard waiting for memory takes a kept runner's room once the shard
    /// using that runner ends, though that ending frees less than it needs.
    #[test]
    fn a_waiting_shard_evicts_a_solver_that_becomes_idle() {
        let (a, b) = (config(&[60, 60]), config(&[60, 59]));
        let total = need(&a).with_threads(1).max(need(&b).with_threads(1)) + need(&a).shared / 2;
        let cache = RunnerCache::new(MemoryBudget::new(total), 8, total);
        let running = cache.take(&a, need(&a), 1).unwrap();
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| cache.take(&b, need(&b), 1).map(|s| s.workspaces()));
            std::thread::sleep(Duration::from_millis(50));
            assert!(!waiter.is_finished(), "no room while a's shard runs");
            drop(running);
            assert_eq!(waiter.join().unwrap().unwrap(), 1);
        });
        assert!(kept(&cache).iter().all(|board| board != a.board()), "a evicted");
    }

    #[test]
    fn a_kept_solver_takes_the_bytes_its_later_shards_build() {
        let c = config(&[40, 30]);
        let (walk, plus) = (need(&c), c.memory_need_for(&[Method::W, Method::AwPlus], false));
        let budget = MemoryBudget::new(1 << 30);
        let cache = RunnerCache::for_budget(budget.clone());
        drop(cache.take(&c, walk, 1).unwrap());
        drop(cache.take(&c, plus, 1).unwrap());
        assert_eq!(budget.free(), (1 << 30) - plus.shared, "the W+ tables stay with the runner");
        drop(cache.take(&c, walk, 1).unwrap());
        assert_eq!(budget.free(), (1 << 30) - plus.shared);
        assert_eq!(cache.builds(), 1);
    }

    #[test]
    fn a_board_that_can_never_fit_is_refused_and_a_tainted_solver_is_not_kept() {
        let c = config(&[8, 8]);
        let cache = RunnerCache::for_budget(MemoryBudget::new(need(&c).with_threads(1) - 1));
        let refused = cache.take(&c, need(&c), 1).unwrap_err().to_string();
        assert!(refused.starts_with("board 8x8 needs"), "{refused}");
        let cache = RunnerCache::for_budget(MemoryBudget::new(1 << 20));
        let shard = cache.take(&c, need(&c), 1).unwrap();
        shard.taint();
        drop(shard);
        assert!(kept(&cache).is_empty());
        assert_eq!(cache.budget.free(), 1 << 20);
    }

    /// The figure asked for in issue 37: building a large board's runner
    /// against taking a kept one. Prints, asserts nothing about time:
    /// `cargo test -p ksweep-worker --release --locked -- --ignored --nocapture build_against_hit`
    #[test]
    #[ignore = "a measurement; run by hand"]
    fn build_against_hit() {
        for sides in [&[140u32, 140, 140][..], &[2000, 2000], &[400, 400, 400]] {
            let c = config(sides);
            let need = need(&c);
            let cache = RunnerCache::for_budget(MemoryBudget::new(u64::MAX));
            let began = Instant::now();
            drop(cache.take(&c, need, 1).unwrap());
            let build = began.elapsed();
            let hits = 100;
            let began = Instant::now();
            for _ in 0..hits {
                drop(cache.take(&c, need, 1).unwrap());
            }
            let hit = began.elapsed() / hits;
            assert_eq!(cache.builds(), 1);
            println!(
                "{} (2,1): shared {}: build {build:?}, kept {hit:?} ({:.0}x)",
                c.board(),
                format_bytes(need.shared),
                build.as_secs_f64() / hit.as_secs_f64()
            );
        }
    }
}
