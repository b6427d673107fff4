//! The coordinator's logic, apart from its transport and its database: which
//! shard goes to which worker, leases and their expiry, retries, and which
//! results are new. Time is passed in, so every rule here is tested without
//! a clock or a network.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sweep::{Cursor, Planner, ShardPlan, Sweep};

use crate::error::{Error, Result};
use crate::ids::{Epoch, ShardId, SweepKey, WorkerId};
use crate::store::{OpenShard, ResultRecord, SweepState};

/// The smallest shard [`Scheduler::shard_micros_now`] cuts near the end of
/// the work, as a fraction of the target shard.
const MIN_SHARD_FRACTION: f64 = 0.05;

/// Tunables of the scheduler.
#[derive(Debug, Clone)]
pub struct SchedulerConfig {
    /// A shard not heartbeated within this long goes back to the queue.
    pub lease: Duration,
    /// A shard that fails this many times is marked failed, not retried.
    pub max_shard_failures: u32,
    /// Wall time one shard should take on one thread.
    pub target_shard: Duration,
    /// Target shards' worth of estimated work one worker thread may hold,
    /// whatever it asks for.
    pub held_per_thread: f64,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            lease: Duration::from_secs(10),
            max_shard_failures: 3,
            target_shard: Duration::from_secs(1),
            held_per_thread: 2.0,
        }
    }
}

/// A shard handed to a worker: everything it needs to run it.
#[derive(Debug, Clone)]
pub struct Assignment {
    pub shard: ShardId,
    pub epoch: Epoch,
    pub sweep_id: String,
    pub sweep: Arc<Sweep>,
    pub plan: ShardPlan,
    pub starts: Arc<[u64]>,
}

/// A shard cut by `assign` that the database must record before the
/// assignment is handed out.
#[derive(Debug, Clone, PartialEq)]
pub struct NewShards {
    pub sweep: SweepKey,
    pub shards: Vec<(ShardId, ShardPlan)>,
    pub cursor: Cursor,
}

/// One task's report, as the scheduler sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskReport {
    pub start_offset: u32,
    pub method_index: u32,
    pub success: bool,
    pub attempts: u32,
    pub visited: u64,
    pub micros: u64,
    pub error: Option<String>,
    pub outcome: tour::Outcome,
}

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
    /// Shards that failed once and went back to the queue.
    pub retried: Vec<(ShardId, String)>,
    /// Sweeps that just ended, with their final state.
    pub finished: Vec<(SweepKey, SweepState)>,
}

#[derive(Debug)]
struct Lease {
    worker: WorkerId,
    epoch: Epoch,
    deadline: Instant,
}

#[derive(Debug)]
struct ShardRun {
    sweep: SweepKey,
    plan: ShardPlan,
    lease: Option<Lease>,
    /// Workers this shard was ever leased to: only they may report on it.
    given_to: Vec<WorkerId>,
    /// Start cells of the shard, set when it is first leased.
    starts: Option<Arc<[u64]>>,
    /// One flag per (start offset, method): which results are recorded.
    received: Vec<bool>,
    remaining: usize,
    failures: u32,
}

#[derive(Debug)]
struct WorkerRun {
    seen: Instant,
    threads: u32,
}

#[derive(Debug)]
struct SweepRun {
    id: String,
    sweep: Arc<Sweep>,
    cursor: Cursor,
    exhausted: bool,
    any_failed: bool,
    /// Shards cut and not yet done or failed.
    open: usize,
    /// The start list of the configuration shards are being cut from.
    starts: Option<(u32, Arc<Vec<u64>>)>,
}

/// The scheduler's state. Not thread-safe by itself: the service holds it
/// behind a mutex and never across an await.
#[derive(Debug)]
pub struct Scheduler {
    config: SchedulerConfig,
    sweeps: BTreeMap<SweepKey, SweepRun>,
    shards: HashMap<ShardId, ShardRun>,
    /// Shards done or failed, with the workers they were given to, so late
    /// duplicates are told apart from unsolicited reports.
    settled: HashMap<ShardId, (SweepKey, Vec<WorkerId>)>,
    queue: VecDeque<ShardId>,
    workers: HashMap<WorkerId, WorkerRun>,
    next_shard: u64,
    next_epoch: u64,
    /// Measured microseconds per unit of estimated cost (cells x moves per
    /// task), smoothed; sizes shards to the target time.
    micros_per_cost: f64,
}

impl Scheduler {
    /// A scheduler whose new shard ids start above `max_shard_id`.
    pub fn new(config: SchedulerConfig, max_shard_id: u64) -> Scheduler {
        Scheduler {
            config,
            sweeps: BTreeMap::new(),
            shards: HashMap::new(),
            settled: HashMap::new(),
            queue: VecDeque::new(),
            workers: HashMap::new(),
            next_shard: max_shard_id + 1,
            next_epoch: 1,
            // About 1.5 ns per cell and move for a W walk, as a start.
            micros_per_cost: 0.0015,
        }
    }

    /// Takes over a running sweep: its cursor and its open shards (queued
    /// again, whatever lease they had before a restart).
    pub fn add_sweep(&mut self, key: SweepKey, id: String, sweep: Arc<Sweep>, cursor: Cursor, open: Vec<OpenShard>) {
        let shards_per_sweep = open.len();
        for s in open {
            let tasks = (s.plan.start_hi - s.plan.start_lo) as usize * sweep.methods().len();
            self.shards.insert(
                s.id,
                ShardRun {
                    sweep: key,
                    plan: s.plan,
                    lease: None,
                    given_to: Vec::new(),
                    starts: None,
                    received: vec![false; tasks],
                    remaining: tasks,
                    failures: s.failures,
                },
            );
            self.queue.push_back(s.id);
        }
        self.sweeps.insert(
            key,
            SweepRun { id, sweep, cursor, exhausted: false, any_failed: false, open: shards_per_sweep, starts: None },
        );
    }

    /// True while the sweep is known and running here.
    pub fn is_running(&self, key: SweepKey) -> bool {
        self.sweeps.contains_key(&key)
    }

    /// A worker registered, with its thread count (it sizes how much work
    /// the worker may hold at once).
    pub fn register(&mut self, worker: WorkerId, threads: u32, now: Instant) {
        self.workers.insert(worker, WorkerRun { seen: now, threads: threads.max(1) });
    }

    /// Checks that the worker is known and notes that it is alive.
    pub fn touch(&mut self, worker: WorkerId, now: Instant) -> Result<()> {
        match self.workers.get_mut(&worker) {
            Some(w) => {
                w.seen = now;
                Ok(())
            }
            None => Err(Error::UnknownWorker(worker.0)),
        }
    }

    /// Heartbeats: extends the leases the worker still holds; returns the
    /// ones it should stop (expired and re-leased, or cancelled).
    pub fn heartbeat(&mut self, worker: WorkerId, running: &[(ShardId, Epoch)], now: Instant) -> Vec<(ShardId, Epoch)> {
        let mut revoked = Vec::new();
        for &(id, epoch) in running {
            match self.shards.get_mut(&id).and_then(|s| s.lease.as_mut()) {
                Some(lease) if lease.worker == worker && lease.epoch == epoch => {
                    lease.deadline = now + self.config.lease;
                }
                _ => revoked.push((id, epoch)),
            }
        }
        revoked
    }

    /// Checks a worker's reports and returns the results not yet recorded,
    /// ready for the database. Refuses the whole batch if any report is for
    /// a shard the worker was never given or a task outside that shard.
    /// Changes nothing: call [`Scheduler::commit`] once the rows are stored.
    pub fn validate(&self, worker: WorkerId, reports: &[ShardReport]) -> Result<Vec<ResultRecord>> {
        let mut rows = Vec::new();
        for report in reports {
            let (run, given_to) = match (self.shards.get(&report.shard), self.settled.get(&report.shard)) {
                (Some(run), _) => (Some(run), &run.given_to),
                (None, Some((_, given_to))) => (None, given_to),
                // Issued, and its sweep has ended since: nothing can count.
                (None, None) if report.shard.0 < self.next_shard => continue,
                (None, None) => return Err(Error::Refused(format!("{} was never issued", report.shard))),
            };
            if !given_to.contains(&worker) {
                return Err(Error::Refused(format!("{} was never given to {worker}", report.shard)));
            }
            let Some(run) = run else {
                continue; // settled: a late duplicate, nothing new
            };
            let sweep = &self.sweeps[&run.sweep];
            let methods = sweep.sweep.methods().len() as u32;
            let starts = (run.plan.start_hi - run.plan.start_lo) as u32;
            for t in &report.tasks {
                if t.start_offset >= starts || t.method_index >= methods {
                    return Err(Error::Refused(format!(
                        "{} has no task ({}, {}); it has {starts} starts x {methods} methods",
                        report.shard, t.start_offset, t.method_index
                    )));
                }
                let slot = (t.start_offset * methods + t.method_index) as usize;
                if t.error.is_some() || run.received[slot] {
                    continue;
                }
                let start_index = run.plan.start_lo + t.start_offset as u64;
                rows.push(ResultRecord {
                    sweep: run.sweep,
                    config: run.plan.config,
                    start_index,
                    method: t.method_index,
                    start_cell: run.starts.as_ref().expect("a leased shard has its starts")[t.start_offset as usize],
                    success: t.success,
                    attempts: t.attempts,
                    visited: t.visited,
                    micros: t.micros,
                    worker,
                    outcome: t.outcome,
                });
            }
        }
        Ok(rows)
    }

    /// Notes reports whose results are now stored: marks tasks received,
    /// settles complete shards, retries or fails shards that reported an
    /// error, and ends sweeps with nothing left to run.
    pub fn commit(&mut self, worker: WorkerId, reports: &[ShardReport]) -> Settled {
        let mut out = Settled::default();
        for report in reports {
            let Some(run) = self.shards.get_mut(&report.shard) else {
                continue;
            };
            let methods = self.sweeps[&run.sweep].sweep.methods().len() as u32;
            let mut error = report.error.clone();
            let mut micros = 0u64;
            for t in &report.tasks {
                if let Some(e) = &t.error {
                    error.get_or_insert_with(|| e.clone());
                    continue;
                }
                let slot = (t.start_offset * methods + t.method_index) as usize;
                if !std::mem::replace(&mut run.received[slot], true) {
                    run.remaining -= 1;
                    micros += t.micros;
                }
            }
            let key = run.sweep;
            if micros > 0 {
                let cost = self.sweeps[&key].sweep.configurations()[run.plan.config as usize].cost_per_task();
                let counted = report.tasks.iter().filter(|t| t.error.is_none()).count() as f64;
                let rate = micros as f64 / (cost * counted);
                if rate.is_finite() && rate > 0.0 {
                    self.micros_per_cost = 0.8 * self.micros_per_cost + 0.2 * rate;
                }
            }
            if run.remaining == 0 {
                self.settle(report.shard);
                out.done.push(report.shard);
            } else if let Some(error) = error {
                run.failures += 1;
                // Only the worker holding the lease can fail it; a stale
                // worker's error is noted but does not steal the lease.
                if run.lease.as_ref().is_some_and(|l| l.worker == worker && l.epoch == report.epoch) {
                    run.lease = None;
                }
                if run.failures >= self.config.max_shard_failures {
                    self.settle(report.shard);
                    self.sweeps.get_mut(&key).expect("sweep of a shard").any_failed = true;
                    out.failed.push((report.shard, error));
                } else {
                    if run.lease.is_none() {
                        self.queue.push_back(report.shard);
                    }
                    out.retried.push((report.shard, error));
                }
            }
            if let Some(state) = self.finish_if_drained(key) {
                out.finished.push((key, state));
            }
        }
        out
    }

    fn settle(&mut self, shard: ShardId) {
        if let Some(run) = self.shards.remove(&shard) {
            if let Some(s) = self.sweeps.get_mut(&run.sweep) {
                s.open -= 1;
            }
            self.settled.insert(shard, (run.sweep, run.given_to));
        }
    }

    /// Ends a sweep whose shards are all settled and whose grid is fully
    /// planned; returns its final state.
    fn finish_if_drained(&mut self, key: SweepKey) -> Option<SweepState> {
        let s = self.sweeps.get(&key)?;
        if !(s.exhausted && s.open == 0) {
            return None;
        }
        let state = if s.any_failed { SweepState::Failed } else { SweepState::Done };
        self.forget_sweep(key);
        Some(state)
    }

    /// Leases up to `free` shards to the worker: queued ones first, then
    /// newly cut ones (returned in `NewShards` for the database to record
    /// before the assignments are sent).
    pub fn assign(&mut self, worker: WorkerId, free: usize, now: Instant) -> (Vec<Assignment>, Vec<NewShards>) {
        let mut assignments = Vec::new();
        let mut new_shards: Vec<NewShards> = Vec::new();
        // However many slots a worker asks for, it holds at most about
        // `held_per_thread` target shards of estimated work per thread, so
        // one fast-polling worker cannot take the remaining work from others.
        let threads = self.workers.get(&worker).map_or(1, |w| w.threads);
        let target = self.shard_micros_now();
        let budget = target * self.config.held_per_thread * threads as f64;
        let mut held: f64 = self
            .shards
            .values()
            .filter(|r| r.lease.as_ref().is_some_and(|l| l.worker == worker))
            .map(|r| self.estimate_micros(r))
            .sum();
        while assignments.len() < free {
            let shard = match self.queue.pop_front() {
                Some(id) => match self.shards.get(&id) {
                    Some(run) if run.lease.is_none() => id,
                    _ => continue,
                },
                None => match self.cut(target, &mut new_shards) {
                    Some(id) => id,
                    None => break,
                },
            };
            let estimate = self.estimate_micros(&self.shards[&shard]);
            if held > 0.0 && held + estimate > budget {
                self.queue.push_front(shard);
                break;
            }
            held += estimate;
            let epoch = Epoch(self.next_epoch);
            self.next_epoch += 1;
            let (key, plan) = {
                let run = &self.shards[&shard];
                (run.sweep, run.plan.clone())
            };
            if self.shards[&shard].starts.is_none() {
                let all = self.starts_of(key, plan.config);
                let mine: Arc<[u64]> = all[plan.start_lo as usize..plan.start_hi as usize].into();
                self.shards.get_mut(&shard).expect("exists").starts = Some(mine);
            }
            let run = self.shards.get_mut(&shard).expect("queued or cut shard exists");
            run.lease = Some(Lease { worker, epoch, deadline: now + self.config.lease });
            if !run.given_to.contains(&worker) {
                run.given_to.push(worker);
            }
            let starts = run.starts.clone().expect("set above");
            let s = &self.sweeps[&key];
            assignments.push(Assignment { shard, epoch, sweep_id: s.id.clone(), sweep: s.sweep.clone(), plan, starts });
        }
        (assignments, new_shards)
    }

    /// The start list of a configuration, cached for the one being cut.
    fn starts_of(&mut self, key: SweepKey, config: u32) -> Arc<Vec<u64>> {
        let s = self.sweeps.get_mut(&key).expect("running sweep");
        match &s.starts {
            Some((c, list)) if *c == config => list.clone(),
            _ => {
                let list = Planner::new(&s.sweep).starts(config);
                s.starts = Some((config, list.clone()));
                list
            }
        }
    }

    /// Estimated wall time of a shard on one thread, from the measured rate.
    fn estimate_micros(&self, run: &ShardRun) -> f64 {
        let cost = self.sweeps.get(&run.sweep).map_or(0.0, |s| {
            s.sweep.configurations()[run.plan.config as usize].cost_per_task() * run.received.len() as f64
        });
        cost * self.micros_per_cost
    }

    /// The shard size to aim for now, in estimated microseconds on one
    /// thread: the configured target, shrunk towards the end of the work so
    /// that every thread gets a share of what is left (guided
    /// self-scheduling) instead of one worker finishing a long last shard
    /// while the others idle. Never below `MIN_SHARD_FRACTION` of the target,
    /// so the tail does not drown in per-shard overhead.
    fn shard_micros_now(&self) -> f64 {
        let target = self.config.target_shard.as_micros() as f64;
        let threads: u32 = self.workers.values().map(|w| w.threads).sum();
        let unplanned: f64 =
            self.sweeps.values().filter(|s| !s.exhausted).map(|s| s.sweep.cost_after(s.cursor)).sum::<f64>()
                * self.micros_per_cost;
        let open: f64 = self.shards.values().map(|r| self.estimate_micros(r)).sum();
        let share = (unplanned + open) / (2.0 * threads.max(1) as f64);
        share.clamp(target * MIN_SHARD_FRACTION, target)
    }

    /// Cuts one new shard, of about `target` estimated microseconds, from
    /// the oldest running sweep with grid left.
    fn cut(&mut self, target: f64, new_shards: &mut Vec<NewShards>) -> Option<ShardId> {
        let target_cost = target / self.micros_per_cost;
        let keys: Vec<SweepKey> = self.sweeps.keys().copied().collect();
        for key in keys {
            let s = self.sweeps.get_mut(&key).expect("listed");
            if s.exhausted {
                continue;
            }
            let Some(plan) = Planner::new(&s.sweep).next_shard(&mut s.cursor, target_cost) else {
                s.exhausted = true;
                continue;
            };
            let id = ShardId(self.next_shard);
            self.next_shard += 1;
            s.open += 1;
            let cursor = s.cursor;
            let tasks = (plan.start_hi - plan.start_lo) as usize * s.sweep.methods().len();
            self.shards.insert(
                id,
                ShardRun {
                    sweep: key,
                    plan: plan.clone(),
                    lease: None,
                    given_to: Vec::new(),
                    starts: None,
                    received: vec![false; tasks],
                    remaining: tasks,
                    failures: 0,
                },
            );
            match new_shards.iter_mut().find(|n| n.sweep == key) {
                Some(n) => {
                    n.shards.push((id, plan));
                    n.cursor = cursor;
                }
                None => new_shards.push(NewShards { sweep: key, shards: vec![(id, plan)], cursor }),
            }
            return Some(id);
        }
        None
    }

    /// Sweeps whose grid is planned and whose shards are all settled, ended
    /// now (e.g. a sweep with only impossible configurations).
    pub fn drain_finished(&mut self) -> Vec<(SweepKey, SweepState)> {
        let keys: Vec<SweepKey> = self.sweeps.keys().copied().collect();
        let mut out = Vec::new();
        for key in keys {
            let s = self.sweeps.get_mut(&key).expect("listed");
            if !s.exhausted && s.open == 0 {
                // Probe: is there anything left to plan?
                let mut probe = s.cursor;
                if Planner::new(&s.sweep).next_shard(&mut probe, f64::MAX).is_none() {
                    s.exhausted = true;
                }
            }
            if let Some(state) = self.finish_if_drained(key) {
                out.push((key, state));
            }
        }
        out
    }

    /// Returns expired leases' shards to the queue and forgets workers
    /// silent for several leases. Returns the shards requeued.
    pub fn expire(&mut self, now: Instant) -> Vec<ShardId> {
        let mut requeued = Vec::new();
        for (&id, run) in self.shards.iter_mut() {
            if run.lease.as_ref().is_some_and(|l| l.deadline <= now) {
                run.lease = None;
                requeued.push(id);
            }
        }
        requeued.sort_unstable();
        self.queue.extend(requeued.iter().copied());
        let forget = self.config.lease * 3;
        self.workers.retain(|_, w| now.duration_since(w.seen) < forget);
        requeued
    }

    /// A worker leaves: its shards go back to the queue at once.
    pub fn goodbye(&mut self, worker: WorkerId, returned: &[(ShardId, Epoch)]) {
        for &(id, epoch) in returned {
            if let Some(run) = self.shards.get_mut(&id) {
                if run.lease.as_ref().is_some_and(|l| l.worker == worker && l.epoch == epoch) {
                    run.lease = None;
                    self.queue.push_front(id);
                }
            }
        }
        self.workers.remove(&worker);
    }

    /// Stops a sweep: nothing more of it is handed out, running leases are
    /// revoked at their next heartbeat, and late reports on its shards are
    /// accepted and dropped.
    pub fn cancel(&mut self, key: SweepKey) {
        if self.sweeps.contains_key(&key) {
            self.forget_sweep(key);
        }
    }

    /// Drops an ended sweep and its shards. Reports that arrive later for
    /// its (issued) shards are accepted and count nothing, so memory holds
    /// only running sweeps, however long the coordinator runs.
    fn forget_sweep(&mut self, key: SweepKey) {
        self.sweeps.remove(&key);
        self.shards.retain(|_, r| r.sweep != key);
        self.settled.retain(|_, (sweep, _)| *sweep != key);
    }

    /// Number of shards currently leased.
    pub fn leased(&self) -> usize {
        self.shards.values().filter(|r| r.lease.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"
        name = "t"
        seed = 1
        starts = 4
        methods = ["w", "aw"]
        [[grid]]
        rule = [2, 1]
        dims = [2]
        n = [5, 6]
    "#;

    fn scheduler() -> (Scheduler, SweepKey, Instant) {
        // A tiny target: every shard holds one start, so there are several;
        // no cap on held work (tested on its own below).
        let config = SchedulerConfig {
            target_shard: Duration::from_nanos(1),
            held_per_thread: f64::INFINITY,
            ..SchedulerConfig::default()
        };
        let mut s = Scheduler::new(config, 0);
        let sweep = Arc::new(Sweep::parse(SPEC).unwrap());
        let key = SweepKey(1);
        s.add_sweep(key, sweep.id(), sweep, Cursor::default(), Vec::new());
        let now = Instant::now();
        s.register(WorkerId(1), 1, now);
        s.register(WorkerId(2), 1, now);
        (s, key, now)
    }

    fn full_report(a: &Assignment) -> ShardReport {
        let methods = a.sweep.methods().len() as u32;
        let tasks = (0..a.starts.len() as u32)
            .flat_map(|o| (0..methods).map(move |m| (o, m)))
            .map(|(o, m)| TaskReport {
                start_offset: o,
                method_index: m,
                success: true,
                attempts: 1,
                visited: 25,
                micros: 3,
                error: None,
                outcome: tour::Outcome::Tour,
            })
            .collect();
        ShardReport { shard: a.shard, epoch: a.epoch, tasks, error: None }
    }

    #[test]
    fn every_task_once_then_the_sweep_is_done() {
        let (mut s, key, now) = scheduler();
        let mut rows = 0;
        let mut finished = Vec::new();
        loop {
            let (given, cut) = s.assign(WorkerId(1), 3, now);
            assert!(cut.iter().all(|n| n.sweep == key));
            if given.is_empty() {
                break;
            }
            for a in &given {
                assert_eq!(a.plan.start_hi - a.plan.start_lo, 1, "one start per shard at this target");
                let report = vec![full_report(a)];
                rows += s.validate(WorkerId(1), &report).unwrap().len();
                let settled = s.commit(WorkerId(1), &report);
                assert_eq!(settled.done, vec![a.shard]);
                finished.extend(settled.finished);
            }
        }
        // 5x5: 13 eligible starts, S = 4; 6x6: 36 -> 4. Two methods.
        assert_eq!(rows, (4 + 4) * 2);
        assert_eq!(finished, vec![(key, SweepState::Done)]);
        assert!(!s.is_running(key));
    }

    #[test]
    fn duplicates_are_counted_once() {
        let (mut s, _, now) = scheduler();
        let (given, _) = s.assign(WorkerId(1), 1, now);
        let mut half = full_report(&given[0]);
        half.tasks.truncate(1);
        assert_eq!(s.validate(WorkerId(1), std::slice::from_ref(&half)).unwrap().len(), 1);
        assert!(s.commit(WorkerId(1), std::slice::from_ref(&half)).done.is_empty());
        assert!(s.validate(WorkerId(1), std::slice::from_ref(&half)).unwrap().is_empty(), "already received");
        let full = full_report(&given[0]);
        assert_eq!(s.validate(WorkerId(1), std::slice::from_ref(&full)).unwrap().len(), 1, "only the missing one");
        assert_eq!(s.commit(WorkerId(1), std::slice::from_ref(&full)).done, vec![given[0].shard]);
        // A late copy of a settled shard is accepted and adds nothing.
        assert!(s.validate(WorkerId(1), &[full]).unwrap().is_empty());
    }

    #[test]
    fn an_expired_lease_goes_to_another_worker_and_late_results_count_once() {
        let (mut s, _, now) = scheduler();
        let (first, _) = s.assign(WorkerId(1), 1, now);
        let a = &first[0];
        // Heartbeats keep it.
        let later = now + Duration::from_secs(8);
        assert!(s.heartbeat(WorkerId(1), &[(a.shard, a.epoch)], later).is_empty());
        assert!(s.expire(later + Duration::from_secs(5)).is_empty(), "extended by the heartbeat");
        // Silence past the lease: back to the queue, then to worker 2.
        let expired_at = later + Duration::from_secs(11);
        assert_eq!(s.expire(expired_at), vec![a.shard]);
        let (second, _) = s.assign(WorkerId(2), 1, expired_at);
        assert_eq!(second[0].shard, a.shard);
        assert_ne!(second[0].epoch, a.epoch);
        // The old holder's heartbeat is revoked; its late results still count, once.
        assert_eq!(s.heartbeat(WorkerId(1), &[(a.shard, a.epoch)], expired_at), vec![(a.shard, a.epoch)]);
        let late = full_report(a);
        assert_eq!(s.validate(WorkerId(1), std::slice::from_ref(&late)).unwrap().len(), 2);
        assert_eq!(s.commit(WorkerId(1), &[late]).done, vec![a.shard]);
        assert!(s.validate(WorkerId(2), &[full_report(&second[0])]).unwrap().is_empty());
    }

    #[test]
    fn unsolicited_and_out_of_range_reports_are_refused() {
        let (mut s, _, now) = scheduler();
        let (given, _) = s.assign(WorkerId(1), 1, now);
        let report = full_report(&given[0]);
        assert!(matches!(s.validate(WorkerId(2), std::slice::from_ref(&report)), Err(Error::Refused(_))));
        let mut unknown = report.clone();
        unknown.shard = ShardId(999);
        assert!(matches!(s.validate(WorkerId(1), &[unknown]), Err(Error::Refused(_))));
        let mut outside = report;
        outside.tasks[0].start_offset = 5;
        let e = s.validate(WorkerId(1), &[outside]).unwrap_err();
        assert!(e.to_string().contains("has no task"), "{e}");
    }

    #[test]
    fn a_shard_failing_repeatedly_is_marked_failed_and_the_sweep_ends_failed() {
        let (mut s, key, now) = scheduler();
        let mut failed = None;
        for attempt in 0..3 {
            let (given, _) = s.assign(WorkerId(1), 1, now);
            let a = &given[0];
            if let Some(first) = failed {
                assert_eq!(a.shard, first, "the failed shard is retried first");
            }
            failed = Some(a.shard);
            let report = ShardReport { shard: a.shard, epoch: a.epoch, tasks: vec![], error: Some("boom".into()) };
            let settled = s.commit(WorkerId(1), &[report]);
            if attempt < 2 {
                assert_eq!(settled.retried, vec![(a.shard, "boom".to_string())]);
            } else {
                assert_eq!(settled.failed, vec![(a.shard, "boom".to_string())]);
            }
        }
        // Finish everything else: the sweep ends failed.
        let mut finished = Vec::new();
        loop {
            let (given, _) = s.assign(WorkerId(1), 4, now);
            if given.is_empty() {
                break;
            }
            for a in &given {
                finished.extend(s.commit(WorkerId(1), &[full_report(a)]).finished);
            }
        }
        assert_eq!(finished, vec![(key, SweepState::Failed)]);
    }

    #[test]
    fn goodbye_requeues_at_once_and_cancel_stops_handing_out() {
        let (mut s, key, now) = scheduler();
        let (given, _) = s.assign(WorkerId(1), 2, now);
        s.goodbye(WorkerId(1), &[(given[1].shard, given[1].epoch)]);
        let (again, _) = s.assign(WorkerId(2), 1, now);
        assert_eq!(again[0].shard, given[1].shard, "handed back, handed out first");
        assert!(matches!(s.touch(WorkerId(1), now), Err(Error::UnknownWorker(1))));

        s.cancel(key);
        assert!(s.assign(WorkerId(2), 4, now).0.is_empty());
        assert_eq!(s.heartbeat(WorkerId(2), &[(again[0].shard, again[0].epoch)], now).len(), 1, "revoked");
        // Late results of the cancelled sweep are accepted and dropped.
        assert!(s.validate(WorkerId(2), &[full_report(&again[0])]).unwrap().is_empty());
    }

    #[test]
    fn a_worker_holds_a_bounded_amount_of_estimated_work() {
        // Shards of about a target each (one start of 6x6 at the initial
        // rate is far less; a large target makes every shard a whole config).
        let config = SchedulerConfig { target_shard: Duration::from_nanos(1), ..SchedulerConfig::default() };
        let mut s = Scheduler::new(config, 0);
        let sweep = Arc::new(Sweep::parse(SPEC).unwrap());
        s.add_sweep(SweepKey(1), sweep.id(), sweep, Cursor::default(), Vec::new());
        let now = Instant::now();
        s.register(WorkerId(1), 1, now);
        s.register(WorkerId(2), 1, now);
        let (first, _) = s.assign(WorkerId(1), 100, now);
        assert_eq!(first.len(), 1, "one shard already exceeds a tiny budget; the first is always given");
        let (again, _) = s.assign(WorkerId(1), 100, now);
        assert!(again.is_empty(), "worker 1 holds its share");
        let (other, _) = s.assign(WorkerId(2), 100, now);
        assert_eq!(other.len(), 1, "the rest stays for worker 2");
        s.commit(WorkerId(1), &[full_report(&first[0])]);
        assert_eq!(s.assign(WorkerId(1), 100, now).0.len(), 1, "room again once its shard is done");
    }

    /// Near the end of the work, shards shrink so both workers get a share
    /// of what is left (guided self-scheduling), down to single starts.
    #[test]
    fn shards_shrink_towards_the_end() {
        const ONE: &str =
            "name = \"t\"\nseed = 1\nstarts = 100\nmethods = [\"w\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [100]\n";
        let sweep = Arc::new(Sweep::parse(ONE).unwrap());
        let cost = sweep.configurations()[0].cost_per_task();
        // Tasks report exactly the initial rate, so estimates stay put; a
        // target of ten starts' worth.
        let micros = (cost * 0.0015).round() as u64;
        let target = Duration::from_micros(10 * micros);
        let config =
            SchedulerConfig { target_shard: target, held_per_thread: f64::INFINITY, ..SchedulerConfig::default() };
        let mut s = Scheduler::new(config, 0);
        s.add_sweep(SweepKey(1), sweep.id(), sweep, Cursor::default(), Vec::new());
        let now = Instant::now();
        s.register(WorkerId(1), 1, now);
        s.register(WorkerId(2), 1, now);
        let mut sizes = Vec::new();
        for turn in 0.. {
            let worker = WorkerId(1 + turn % 2);
            let (given, _) = s.assign(worker, 1, now);
            let Some(a) = given.first() else { break };
            sizes.push(a.plan.start_hi - a.plan.start_lo);
            let mut report = full_report(a);
            report.tasks.iter_mut().for_each(|t| t.micros = micros);
            s.commit(worker, &[report]);
        }
        assert_eq!(sizes.iter().sum::<u64>(), 100, "{sizes:?}");
        assert_eq!(sizes[0], 10, "full-size shards while plenty is left: {sizes:?}");
        assert!(sizes.windows(2).all(|w| w[1] <= w[0]), "sizes only shrink: {sizes:?}");
        assert_eq!(*sizes.last().unwrap(), 1, "the last shards are single starts: {sizes:?}");
    }

    #[test]
    fn resumed_open_shards_are_queued_before_new_ones() {
        let config = SchedulerConfig {
            target_shard: Duration::from_nanos(1),
            held_per_thread: f64::INFINITY,
            ..SchedulerConfig::default()
        };
        let mut s = Scheduler::new(config, 41);
        let sweep = Arc::new(Sweep::parse(SPEC).unwrap());
        let open =
            vec![OpenShard { id: ShardId(40), plan: ShardPlan { config: 0, start_lo: 2, start_hi: 3 }, failures: 1 }];
        s.add_sweep(SweepKey(1), sweep.id(), sweep, Cursor { config: 0, start: 3 }, open);
        let now = Instant::now();
        s.register(WorkerId(9), 1, now);
        let (given, cut) = s.assign(WorkerId(9), 2, now);
        assert_eq!(given[0].shard, ShardId(40));
        assert_eq!(given[1].shard, ShardId(42), "new ids continue above the stored maximum");
        assert_eq!(given[1].plan, ShardPlan { config: 0, start_lo: 3, start_hi: 4 });
        assert_eq!(cut[0].cursor, Cursor { config: 1, start: 0 });
    }
}
