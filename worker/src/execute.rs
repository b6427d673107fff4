//! Running one shard on the rayon pool: take the configuration's runner
//! (kept from an earlier shard, or built), run every (start, method) task,
//! send each result back as it finishes. The shard arrives decoded (domain
//! types only here); the session turns results into messages.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use ksweep_proto::convert::ShardWork;
use rayon::prelude::*;
use tokio::sync::mpsc::UnboundedSender;
use tour::{format_bytes, Cancel, Runner, Task, TaskResult};

use crate::activity::Activity;
use crate::error::ShardError;
use crate::memory::MemoryBudget;
use crate::runners::RunnerCache;
use crate::thread_clock::CpuWindow;

/// A shard's lease: which shard, under which epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub shard: u64,
    pub epoch: u64,
}

/// One task's result, as a running shard sends it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskDone {
    /// Index of the start in the shard.
    pub start_offset: u32,
    /// Index of the method in the sweep.
    pub method_index: u32,
    /// What the engine found, or why the task failed (its panic).
    pub result: Result<TaskResult, String>,
}

/// What a running shard sends to the poll loop.
#[derive(Debug)]
pub enum Event {
    Task {
        lease: Lease,
        task: TaskDone,
    },
    /// Every task of the shard was sent (or it was cancelled / failed);
    /// `busy` is the wall time it ran, queueing aside.
    Finished {
        lease: Lease,
        error: Option<ShardError>,
        busy: std::time::Duration,
    },
}

/// What shards share on a worker: its memory budget, the runners it
/// keeps, its threads and what they are doing.
#[derive(Debug, Clone)]
pub struct Resources {
    pub memory: Arc<MemoryBudget>,
    pub runners: Arc<RunnerCache>,
    pub threads: usize,
    pub activity: Arc<Activity>,
}

impl Resources {
    /// `threads` threads and a budget of `memory` bytes, keeping runners
    /// within it ([`RunnerCache::for_budget`]).
    pub fn new(memory: u64, threads: usize) -> Resources {
        let memory = MemoryBudget::new(memory);
        Resources {
            runners: Arc::new(RunnerCache::for_budget(memory.clone())),
            memory,
            threads,
            activity: Arc::new(Activity::new(threads)),
        }
    }
}

/// What the poll loop and a shard's job on the pool share.
#[derive(Debug, Default)]
pub struct Control {
    /// Raised to stop the shard (cancelled sweep, lost lease, shutdown):
    /// its running tasks poll it and stop within milliseconds.
    pub cancelled: AtomicBool,
    /// Set once a pool thread takes the shard up.
    pub started: AtomicBool,
}

/// Runs a shard to the end (or until cancelled), on the current rayon
/// pool, with as many tasks at once as `resources` allow.
pub fn run_shard(
    lease: Lease,
    work: &ShardWork,
    control: Arc<Control>,
    events: UnboundedSender<Event>,
    resources: &Resources,
) {
    let began = std::time::Instant::now();
    control.started.store(true, Ordering::Relaxed);
    let cancelled = &control.cancelled;
    let result = catch_unwind(AssertUnwindSafe(|| {
        if cancelled.load(Ordering::Relaxed) {
            // Handed back or revoked while it waited: nothing to build.
            return Ok(());
        }
        run_tasks(lease, work, cancelled, &events, resources)
    }));
    let error = match result {
        Ok(result) => result.err(),
        Err(panic) => Some(ShardError::Panicked(panic_message(&panic))),
    };
    let _ = events.send(Event::Finished { lease, error, busy: began.elapsed() });
}

fn run_tasks(
    lease: Lease,
    work: &ShardWork,
    cancelled: &AtomicBool,
    events: &UnboundedSender<Event>,
    resources: &Resources,
) -> Result<(), ShardError> {
    let need = work.configuration.memory_need_for(&work.methods, false);
    let tasks = work.starts.len() * work.methods.len();
    // Before anything is allocated: a board that cannot fit fails here.
    // No more workspaces than tasks: a workspace's memory would be taken for nothing.
    let shard_runner = resources.runners.take(&work.configuration, need, resources.threads.min(tasks).max(1))?;
    let (runner, workspaces) = (shard_runner.runner(), shard_runner.workspaces());
    for &m in &work.methods {
        runner.supports(m)?;
        if work.closed && !m.finds_closed() {
            return Err(ShardError::NotClosed(m));
        }
    }
    let methods = &work.methods;
    if workspaces < resources.threads && workspaces < tasks {
        tracing::info!(
            board = %runner.config().board(), workspaces, threads = resources.threads, per_task = %format_bytes(need.per_thread),
            "memory allows only this many tasks of this board at once"
        );
    }
    // A workspace per task running at once (as many as the memory budget
    // holds), each taking the next few tasks until none is left
    // (a few at once, so that their W+ walks pair up: `Runner::run_tasks`).
    let at_once = Runner::tasks_at_once(tasks, workspaces);
    let next = AtomicUsize::new(0);
    let cancel = Cancel::new(cancelled).counting(resources.activity.polls());
    let send = |done: Vec<TaskDone>| {
        for task in done {
            let _ = events.send(Event::Task { lease, task });
        }
    };
    (0..workspaces).into_par_iter().for_each(|_| {
        let mut ws = runner.workspace();
        // Results wait here (a few ms) until their times are CPU times.
        let mut window = CpuWindow::start();
        loop {
            let first = next.fetch_add(at_once, Ordering::Relaxed);
            if first >= tasks || cancelled.load(Ordering::Relaxed) {
                send(window.flush(task_micros));
                return;
            }
            let indices = first..(first + at_once).min(tasks);
            let batch: Vec<(u32, u32, Task)> = indices
                .map(|task| {
                    let (offset, m) = (task / methods.len(), task % methods.len());
                    let (start, method) = (work.starts[offset], methods[m]);
                    let options = work.options(runner.config().task_seed(work.sweep_seed, start, method));
                    (offset as u32, m as u32, Task { start, method, options })
                })
                .collect();
            let tasks: Vec<Task> = batch.iter().map(|&(_, _, t)| t).collect();
            let _busy = resources.activity.batch();
            let done: Option<Vec<TaskDone>> =
                match catch_unwind(AssertUnwindSafe(|| runner.run_tasks_cancellable(&mut ws, &tasks, cancel))) {
                    Ok(results) => results.ok().map(|results| {
                        let each = batch.iter().zip(results);
                        each.map(|(&(start_offset, method_index, _), r)| TaskDone {
                            start_offset,
                            method_index,
                            result: Ok(r),
                        })
                        .collect()
                    }),
                    Err(_) => {
                        // The workspace may be half-written. Run the batch's
                        // tasks again one by one, so that only the task that
                        // panics fails. The runner is not kept for other shards.
                        shard_runner.taint();
                        ws = runner.workspace();
                        batch.iter().map(|&(offset, m, t)| run_alone(runner, &mut ws, offset, m, &t, cancel)).collect()
                    }
                };
            // Cancelled: no result of the batch is sent (a task stopped part
            // way has none), and this workspace's thread stops.
            let Some(done) = done else {
                send(window.flush(task_micros));
                return;
            };
            send(window.add(done, task_micros));
        }
    });
    Ok(())
}

/// A task's time scaled to the share of its window the thread was on a
/// core (a failed task has none).
fn task_micros(task: &mut TaskDone, share: f64) {
    if let Ok(r) = &mut task.result {
        crate::thread_clock::scale(&mut r.micros, share);
    }
}

/// One task on its own, a panic caught and reported as its failure; None
/// when it was cancelled.
fn run_alone(
    runner: &Runner,
    ws: &mut tour::Workspace,
    start_offset: u32,
    method_index: u32,
    task: &Task,
    cancel: Cancel,
) -> Option<TaskDone> {
    let run = || runner.run_task_cancellable(ws, task.start, task.method, &task.options, cancel);
    let result = match catch_unwind(AssertUnwindSafe(run)) {
        Ok(r) => Ok(r.ok()?),
        Err(panic) => {
            *ws = runner.workspace();
            Err(format!("task panicked: {}", panic_message(&panic)))
        }
    };
    Some(TaskDone { start_offset, method_index, result })
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ksweep_proto::v1 as pb;

    fn shard(starts: Vec<u64>, methods: &[&str]) -> pb::Shard {
        pb::Shard {
            shard_id: 7,
            epoch: 3,
            sweep_id: "s".into(),
            sweep_seed: 1,
            config: Some(pb::BoardConfig { sides: vec![8, 8], rule: vec![2, 1], moves_flat: vec![], max_cells: 0 }),
            methods: methods.iter().map(|m| m.to_string()).collect(),
            starts,
            budget: 0,
            iterations: 0,
            closed: false,
        }
    }

    /// A task's figures: which task, and what it found.
    type Figures = (u32, u32, bool, u32, u64);

    fn figures(t: &TaskDone) -> Figures {
        let r = t.result.as_ref().expect("no task failed");
        (t.start_offset, t.method_index, r.success, r.attempts, r.visited)
    }

    const LEASE: Lease = Lease { shard: 7, epoch: 3 };

    /// Runs `shard` (decoded first, as the session does) and collects what it sends.
    fn run(shard: &pb::Shard, control: Arc<Control>, tx: UnboundedSender<Event>, resources: &Resources) {
        let work = ShardWork::try_from(shard).expect("a shard this worker can build");
        run_shard(LEASE, &work, control, tx, resources);
    }

    fn collect(shard: pb::Shard) -> (Vec<TaskDone>, Option<String>) {
        collect_within(shard, u64::MAX)
    }

    fn resources(memory: u64) -> Resources {
        Resources::new(memory, 2)
    }

    fn collect_within(shard: pb::Shard, memory: u64) -> (Vec<TaskDone>, Option<String>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        run(&shard, Arc::new(Control::default()), tx, &resources(memory));
        drain(rx)
    }

    fn drain(mut rx: tokio::sync::mpsc::UnboundedReceiver<Event>) -> (Vec<TaskDone>, Option<String>) {
        let mut tasks = Vec::new();
        let mut finished = None;
        while let Ok(e) = rx.try_recv() {
            match e {
                Event::Task { lease, task } => {
                    assert_eq!(lease, LEASE);
                    tasks.push(task);
                }
                Event::Finished { lease, error, .. } => {
                    assert_eq!(lease, LEASE);
                    finished = Some(error.map(|e| e.to_string()));
                }
            }
        }
        (tasks, finished.expect("a finished event"))
    }

    #[test]
    fn runs_every_task_and_matches_the_engine() {
        let (mut tasks, error) = collect(shard(vec![0, 9, 27], &["w", "aw+"]));
        assert_eq!(error, None);
        assert_eq!(tasks.len(), 6);
        tasks.sort_by_key(|t| (t.start_offset, t.method_index));
        let config = tour::Configuration::try_from(&shard(vec![], &[]).config.unwrap()).unwrap();
        let runner = Runner::new(config).unwrap();
        let mut ws = runner.workspace();
        for t in &tasks {
            let start = [0u64, 9, 27][t.start_offset as usize];
            let method = [tour::Method::W, tour::Method::AwPlus][t.method_index as usize];
            let r = runner.run(&mut ws, start, method, runner.config().task_seed(1, start, method), false);
            assert_eq!(figures(t), (t.start_offset, t.method_index, r.success, r.attempts, r.visited));
        }
    }

    #[test]
    fn a_board_past_the_memory_budget_fails_its_shard_with_its_need() {
        // The need is the engine's on the CPU running this
        // (`memory_need_for`): on 8x8 with (2,1), 12x12 padded = 144 bytes
        // shared and 144 a thread, plus what this CPU's kernels add (with
        // SSE4.1, five more degree buffers a thread for rule-W walks
        // advancing six at a time).
        let config = tour::Configuration::try_from(&shard(vec![], &[]).config.unwrap()).unwrap();
        let need = |methods: &[tour::Method]| config.memory_need_for(methods, false);
        let w = need(&[tour::Method::W]);
        assert!(w.shared == 144 && [144, 6 * 144].contains(&w.per_thread), "{w}");
        let (tasks, error) = collect_within(shard(vec![0, 9], &["w"]), 200);
        assert!(tasks.is_empty());
        let error = error.expect("an error, not an abort");
        assert!(error.contains(&format!("board 8x8 needs {w}")) && error.contains("budget is 200 B"), "{error}");
        // aw+ walks add their own cells (16-bit cells and rank tables with
        // SSE4.1, keyed cells without). Room for one thread: every task
        // still runs; a byte less and the shard fails, naming its need.
        let both = need(&[tour::Method::W, tour::Method::AwPlus]);
        assert!(both.shared > w.shared && both.per_thread > w.per_thread, "{both} against {w}");
        let exact = both.with_threads(1);
        let (tasks, error) = collect_within(shard(vec![0, 9, 27], &["w", "aw+"]), exact - 1);
        assert!(tasks.is_empty());
        let error = error.expect("a budget a byte short");
        assert!(error.contains(&format!("board 8x8 needs {both}")), "{error}");
        assert!(error.contains(&format!("budget is {}", format_bytes(exact - 1))), "{error}");
        let (tasks, error) = collect_within(shard(vec![0, 9, 27], &["w", "aw+"]), exact);
        assert_eq!((tasks.len(), error), (6, None));
    }

    /// A running shard stops within milliseconds of its flag being raised,
    /// mid-task, and sends no result for the tasks it stopped: `bt` with an
    /// endless budget on (3,2) 12x12 would run for hours.
    #[test]
    fn a_cancelled_shard_stops_mid_task_and_sends_no_result() {
        let mut hog = shard(vec![0, 6, 13], &["w", "bt"]);
        hog.config = Some(pb::BoardConfig { sides: vec![12, 12], rule: vec![3, 2], moves_flat: vec![], max_cells: 0 });
        hog.budget = u64::MAX;
        let (control, resources) = (Arc::new(Control::default()), resources(u64::MAX));
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let stopped = std::thread::scope(|scope| {
            let running = scope.spawn(|| {
                run(&hog, control.clone(), tx, &resources);
                std::time::Instant::now()
            });
            std::thread::sleep(std::time::Duration::from_millis(100));
            assert!(control.started.load(Ordering::Relaxed));
            let raised = std::time::Instant::now();
            control.cancelled.store(true, Ordering::Relaxed);
            running.join().unwrap().duration_since(raised)
        });
        assert!(stopped < std::time::Duration::from_millis(500), "stopped {stopped:?} after the flag");
        let (tasks, error) = drain(rx);
        assert_eq!(error, None);
        assert!(tasks.iter().all(|t| t.method_index == 0), "no bt result: {tasks:?}");
        assert!(resources.activity.polls().load(Ordering::Relaxed) > 0, "the bt tasks polled as they worked");
        // A shard cancelled before a thread takes it up does nothing.
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let control = Arc::new(Control::default());
        control.cancelled.store(true, Ordering::Relaxed);
        run(&shard(vec![0, 9], &["w"]), control, tx, &resources);
        assert_eq!(drain(rx), (vec![], None));
    }

    /// Shards of one configuration on one worker share a runner, and get
    /// what shards each building their own get.
    #[test]
    fn shards_share_a_kept_solver_and_get_the_same_results() {
        let shards =
            || [shard(vec![0, 9, 27], &["w", "aw+"]), shard(vec![1, 10], &["aw+", "mw"]), shard(vec![5], &["w"])];
        let sorted = |tasks: Vec<TaskDone>| {
            let mut figures: Vec<Figures> = tasks.iter().map(figures).collect();
            figures.sort();
            figures
        };
        let shared = resources(u64::MAX);
        for shard in shards() {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            let alone = collect(shard.clone());
            run(&shard, Arc::new(Control::default()), tx, &shared);
            let (kept, error) = drain(rx);
            assert_eq!(error, None);
            assert_eq!(sorted(kept), sorted(alone.0));
        }
        assert_eq!(shared.runners.builds(), 1);
    }

    /// A shard the worker cannot build is refused as it is decoded, with
    /// the decoder's words as the shard's error; so is one whose methods
    /// cannot do what it asks.
    #[test]
    fn a_bad_shard_is_an_error_not_a_crash() {
        let decoded = |s: pb::Shard| ShardWork::try_from(&s).map_err(|e| ShardError::from(e).to_string());
        assert!(decoded(shard(vec![64], &["w"])).unwrap_err().contains("off the"));
        assert!(decoded(shard(vec![0], &["nope"])).unwrap_err().contains("method"));
        let closed = pb::Shard { closed: true, ..shard(vec![0], &["w"]) };
        let (tasks, error) = collect(closed);
        assert!(tasks.is_empty());
        assert_eq!(error.as_deref(), Some("method w cannot look for the closed tours this shard asks for"));
    }
}
