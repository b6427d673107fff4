//! A model-based property test of the scheduler with its store: random
//! sequences of assign, report, duplicate report, late report, expiry,
//! heartbeat, goodbye, cancel and coordinator restart (the scheduler rebuilt
//! from the store), driven the way the services drive them. After every
//! step: the stored results are each task at most once, with the right start
//! cell, and the sweep's counters match them; a sweep ending done holds
//! every task.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ksweep_coordinator::ids::{Epoch, ShardId, SweepKey, WorkerId};
use ksweep_coordinator::scheduler::{Assignment, Scheduler, SchedulerConfig, Settled, ShardReport, TaskReport};
use ksweep_coordinator::store::{Store, SweepState};
use proptest::prelude::*;
use sweep::{Planner, Sweep};

static SPEC: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| sweep::fixtures::knight_spec("model", 7, 4, &[5, 6]));

const LEASE: Duration = Duration::from_secs(10);
const WORKERS: usize = 3;

#[derive(Debug, Clone)]
enum Op {
    Assign { worker: usize, free: usize },
    Report { worker: usize, pick: usize, half: bool, error: bool },
    Duplicate { worker: usize },
    Advance { secs: u64 },
    Heartbeat { worker: usize },
    Goodbye { worker: usize },
    Cancel,
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    let w = 0..WORKERS;
    prop_oneof![
        6 => (w.clone(), 1..4usize).prop_map(|(worker, free)| Op::Assign { worker, free }),
        8 => (w.clone(), 0..8usize, any::<bool>(), prop::bool::weighted(0.3))
            .prop_map(|(worker, pick, half, error)| Op::Report { worker, pick, half, error }),
        2 => w.clone().prop_map(|worker| Op::Duplicate { worker }),
        3 => (1..25u64).prop_map(|secs| Op::Advance { secs }),
        2 => w.clone().prop_map(|worker| Op::Heartbeat { worker }),
        1 => w.prop_map(|worker| Op::Goodbye { worker }),
        1 => Just(Op::Cancel),
        1 => Just(Op::Restart),
    ]
}

/// What a worker believes it holds (stale leases included) and its last
/// report, to send again.
#[derive(Default)]
struct ModelWorker {
    id: Option<WorkerId>,
    held: Vec<Assignment>,
    last: Option<ShardReport>,
}

type TaskKey = (u32, u64, u32);

struct Harness {
    config: SchedulerConfig,
    store: Store,
    sched: Scheduler,
    now: Instant,
    key: SweepKey,
    sweep_id: String,
    sweep: Arc<Sweep>,
    /// Start cells of each configuration, as the planner draws them.
    starts: Vec<Arc<Vec<u64>>>,
    workers: Vec<ModelWorker>,
    /// Tasks the scheduler found new since it was (re)built.
    validated: HashSet<TaskKey>,
    /// The model's view of each shard's current lease: holder slot, epoch,
    /// deadline.
    leases: HashMap<ShardId, (usize, Epoch, Instant)>,
    /// Failed attempts at each shard: errors its lease holder reported and
    /// leases that expired. Only these may fail a shard.
    holder_errors: HashMap<ShardId, u32>,
    cancelled: bool,
}

/// A task's deterministic result, so stored rows can be checked.
fn succeeds(start_index: u64, method: u32) -> bool {
    (start_index + method as u64).is_multiple_of(2)
}

impl Harness {
    fn new() -> Harness {
        let config = SchedulerConfig {
            lease: LEASE,
            max_shard_failures: 2,
            target_shard: Duration::from_nanos(1),
            held_per_thread: f64::INFINITY,
        };
        let mut store = Store::in_memory().unwrap();
        let sweep = Arc::new(Sweep::parse(&SPEC).unwrap());
        let (record, _) = store.insert_sweep(&sweep).unwrap();
        let planner = Planner::new(&sweep);
        let starts = (0..sweep.configurations().len() as u32).map(|c| planner.starts(c)).collect();
        let mut h = Harness {
            sched: Scheduler::new(config.clone(), 0),
            config,
            store,
            now: Instant::now(),
            key: record.key,
            sweep_id: record.id,
            sweep,
            starts,
            workers: (0..WORKERS).map(|_| ModelWorker::default()).collect(),
            validated: HashSet::new(),
            leases: HashMap::new(),
            holder_errors: HashMap::new(),
            cancelled: false,
        };
        h.restart();
        h
    }

    /// Every task of the sweep.
    fn all_tasks(&self) -> BTreeSet<TaskKey> {
        let methods = self.sweep.methods().len() as u32;
        let mut all = BTreeSet::new();
        for (c, list) in self.starts.iter().enumerate() {
            for s in 0..list.len() as u64 {
                for m in 0..methods {
                    all.insert((c as u32, s, m));
                }
            }
        }
        all
    }

    /// The worker's id, registering it (again) when the scheduler does not
    /// know it: what a worker does when told so.
    fn worker(&mut self, w: usize) -> WorkerId {
        match self.known(w) {
            Some(id) => id,
            None => self.worker(w),
        }
    }

    /// The worker's id if the scheduler still knows it; otherwise the
    /// worker registers again and drops what it held (as a real worker does
    /// when refused with "register again"), and this poll is lost.
    fn known(&mut self, w: usize) -> Option<WorkerId> {
        if let Some(id) = self.workers[w].id {
            if self.sched.touch(id, self.now).is_ok() {
                return Some(id);
            }
        }
        let id = self.store.register_worker(&format!("w{w}"), 1, &Default::default()).unwrap();
        self.sched.register(id, 1, self.now);
        self.workers[w] = ModelWorker { id: Some(id), ..ModelWorker::default() };
        None
    }

    fn persist(&mut self, settled: Settled) {
        self.store.finish_shards(&settled.done, &settled.failed).unwrap();
        for (shard, error) in &settled.retried {
            self.store.shard_failed_once(*shard, error).unwrap();
        }
        for (key, state) in &settled.finished {
            let error = (*state == SweepState::Failed).then_some("some shards failed on every retry");
            self.store.set_state(*key, *state, error).unwrap();
        }
    }

    /// A poll carrying reports, as the Workers service handles it.
    fn send(&mut self, w: usize, reports: Vec<ShardReport>) {
        let Some(id) = self.known(w) else { return };
        for r in &reports {
            let holds = self.leases.get(&r.shard).is_some_and(|&(slot, epoch, _)| slot == w && epoch == r.epoch);
            if holds && r.error.is_some() {
                *self.holder_errors.entry(r.shard).or_default() += 1;
                self.leases.remove(&r.shard);
            }
        }
        let rows = self.sched.validate(id, &reports).expect("a worker reports only what it was given");
        let mut batch = HashSet::new();
        for r in &rows {
            let task = (r.config, r.start_index, r.method);
            assert!(batch.insert(task), "task {task:?} twice in one batch");
            assert!(self.validated.insert(task), "task {task:?} found new twice by one scheduler");
        }
        self.store.record(&rows).unwrap();
        let settled = self.sched.commit(id, &reports, self.now);
        self.persist(settled);
        self.workers[w].last = reports.into_iter().next();
    }

    fn report(a: &Assignment, half: bool, error: bool) -> ShardReport {
        let methods = a.sweep.methods().len() as u32;
        let mut tasks: Vec<TaskReport> = (0..a.starts.len() as u32)
            .flat_map(|o| (0..methods).map(move |m| (o, m)))
            .map(|(o, m)| {
                let success = succeeds(a.plan.start_lo + o as u64, m);
                // Figures the engine could produce (they are checked).
                let entry = &a.sweep.configurations()[a.plan.config as usize];
                let walks = a.sweep.methods()[m as usize].max_attempts(entry.move_count() as usize) as u32;
                TaskReport {
                    start_offset: o,
                    method_index: m,
                    summary: sweep::TaskSummary {
                        success,
                        attempts: if success { 1 } else { walks },
                        visited: if success { entry.cells() } else { 1 },
                        micros: 5,
                        outcome: if success { tour::Outcome::Tour } else { tour::Outcome::GaveUp },
                    },
                    error: None,
                }
            })
            .collect();
        if half {
            tasks.truncate(tasks.len() / 2);
        }
        ShardReport { shard: a.shard, epoch: a.epoch, tasks, error: error.then(|| "boom".to_string()) }
    }

    fn assign(&mut self, w: usize, free: usize) {
        let id = self.worker(w);
        let drawn = self.sched.assign_drawn(id, free, self.now);
        self.store.cut_shards(&self.sched.take_unstored()).unwrap();
        for a in &drawn.assignments {
            let config = &self.starts[a.plan.config as usize];
            assert_eq!(&a.starts[..], &config[a.plan.start_lo as usize..a.plan.start_hi as usize]);
        }
        for a in &drawn.assignments {
            self.leases.insert(a.shard, (w, a.epoch, self.now + LEASE));
        }
        self.workers[w].held.extend(drawn.assignments);
    }

    fn advance(&mut self, by: Duration) {
        self.now += by;
        let now = self.now;
        for (shard, _) in self.leases.iter().filter(|(_, &(_, _, deadline))| deadline <= now) {
            *self.holder_errors.entry(*shard).or_default() += 1;
        }
        self.leases.retain(|_, &mut (_, _, deadline)| deadline > now);
        let mut settled = self.sched.expire(self.now);
        settled.finished = self.sched.drain_finished();
        // As the coordinator's tick: silent workers are forgotten.
        let _ = self.sched.forget_silent(self.now);
        self.persist(settled);
    }

    fn restart(&mut self) {
        self.sched = Scheduler::new(self.config.clone(), self.store.max_shard_id().unwrap());
        for record in self.store.sweeps().unwrap() {
            if record.state == SweepState::Running {
                let open = self.store.open_shards(record.key).unwrap();
                self.sched.add_sweep(
                    record.key,
                    record.id.clone(),
                    self.sweep.clone(),
                    record.cursor,
                    open,
                    record.shards_failed,
                    self.store.reused(record.key, &self.sweep).unwrap(),
                );
            }
        }
        // A new coordinator nonce: every worker registers again and drops
        // what it held.
        self.workers.iter_mut().for_each(|w| *w = ModelWorker::default());
        self.validated.clear();
        self.leases.clear();
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Assign { worker, free } => self.assign(worker, free),
            Op::Report { worker, pick, half, error } => {
                let held = &self.workers[worker].held;
                if held.is_empty() {
                    return;
                }
                let i = pick % held.len();
                let report = Self::report(&held[i], half, error);
                if !half && !error {
                    self.workers[worker].held.remove(i);
                }
                self.send(worker, vec![report]);
            }
            Op::Duplicate { worker } => {
                if let Some(last) = self.workers[worker].last.clone() {
                    self.send(worker, vec![last]);
                }
            }
            Op::Advance { secs } => self.advance(Duration::from_secs(secs)),
            Op::Heartbeat { worker } => {
                let id = self.worker(worker);
                let running: Vec<_> = self.workers[worker].held.iter().map(|a| (a.shard, a.epoch)).collect();
                self.sched.heartbeat(id, &running, self.now);
                for (shard, epoch) in running {
                    if let Some(lease) = self.leases.get_mut(&shard) {
                        if lease.0 == worker && lease.1 == epoch {
                            lease.2 = self.now + LEASE;
                        }
                    }
                }
            }
            Op::Goodbye { worker } => {
                let id = self.worker(worker);
                let returned: Vec<_> = self.workers[worker].held.iter().map(|a| (a.shard, a.epoch)).collect();
                self.sched.goodbye(id, &returned);
                self.leases.retain(|_, lease| lease.0 != worker);
                self.workers[worker] = ModelWorker::default();
            }
            Op::Cancel => {
                if self.store.resolve(None).unwrap().state == SweepState::Running {
                    self.sched.cancel(self.key);
                    self.store.set_state(self.key, SweepState::Cancelled, None).unwrap();
                    self.cancelled = true;
                }
            }
            Op::Restart => self.restart(),
        }
    }

    /// Runs what is left with one reliable worker until the sweep ends.
    fn finish(&mut self) {
        for _ in 0..200 {
            if self.store.resolve(None).unwrap().state != SweepState::Running {
                return;
            }
            self.advance(LEASE + Duration::from_secs(1));
            self.assign(0, 64);
            let held = std::mem::take(&mut self.workers[0].held);
            let reports: Vec<_> = held.iter().map(|a| Self::report(a, false, false)).collect();
            if !reports.is_empty() {
                self.send(0, reports);
            }
        }
        panic!("the sweep did not end");
    }

    /// Stored results against the sweep's counters and the planner.
    fn check(&self) {
        let record = self.store.resolve(Some(&self.sweep_id)).unwrap();
        let mut stored = BTreeSet::new();
        let mut successes = 0;
        let mut after = None;
        loop {
            let page = self.store.results_page(self.key, after, 7).unwrap();
            let Some(last) = page.last() else { break };
            after = Some((last.config, last.start_index, last.method));
            for r in &page {
                assert!(stored.insert((r.config, r.start_index, r.method)), "stored twice: {r:?}");
                assert_eq!(r.start_cell, self.starts[r.config as usize][r.start_index as usize], "{r:?}");
                assert_eq!(r.success, succeeds(r.start_index, r.method), "{r:?}");
                successes += r.success as u64;
            }
        }
        assert_eq!(record.tasks_done, stored.len() as u64, "tasks_done counts the stored rows");
        assert_eq!(record.successes, successes);
        let all = self.all_tasks();
        assert_eq!(record.tasks_total, all.len() as u64);
        assert!(stored.is_subset(&all));
        if record.state == SweepState::Done {
            assert_eq!(stored, all, "a done sweep has every task");
        }
        if record.state == SweepState::Failed {
            assert!(record.shards_failed > 0);
        }
        let failable = self.holder_errors.values().filter(|&&n| n >= self.config.max_shard_failures).count();
        assert!(
            record.shards_failed as usize <= failable,
            "{} shards failed; only {failable} had {} failed attempts",
            record.shards_failed,
            self.config.max_shard_failures
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_task_is_committed_once_and_a_done_sweep_has_them_all(ops in prop::collection::vec(op(), 0..80)) {
        let mut h = Harness::new();
        for op in &ops {
            h.apply(op);
            h.check();
        }
        h.finish();
        h.check();
        let state = h.store.resolve(None).unwrap().state;
        if h.cancelled {
            prop_assert_eq!(state, SweepState::Cancelled);
        } else {
            prop_assert!(matches!(state, SweepState::Done | SweepState::Failed), "{:?}", state);
        }
    }
}

/// Without faults, the model ends done: the property above is not
/// satisfied by sweeps that always fail.
#[test]
fn a_clean_run_ends_done() {
    let mut h = Harness::new();
    h.finish();
    h.check();
    assert_eq!(h.store.resolve(None).unwrap().state, SweepState::Done);
}
