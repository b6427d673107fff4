//! Cancelling running tasks: `bt`, `solve` and the `nn` methods, each on a
//! board where it would run for hours, stop within milliseconds of their
//! flag being raised from another thread and report no result; a flag
//! never raised changes nothing.
//!
//! Timings are bounded generously (a loaded CI machine), and every wait
//! has a timeout, so a task that ignores its flag fails the test instead
//! of hanging it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tour::neural::Remedy;
use tour::{Board, Cancel, Cancelled, Configuration, Method, Moves, Runner, Task, TaskOptions, TaskResult};

/// How long a cancelled task may take to return: polls come every few
/// milliseconds of work, so this is room for a slow machine, not the aim.
const PROMPTLY: Duration = Duration::from_millis(500);
/// How long the tests wait for anything before calling it a hang.
const HANG: Duration = Duration::from_secs(60);

fn runner(rule: Option<&[u32]>, explicit: &[Vec<i64>], sides: &[u32]) -> Runner {
    let board = Board::new(sides).unwrap();
    let moves = match rule {
        Some(rule) => Moves::from_rule(rule, sides.len()).unwrap(),
        None => Moves::explicit(explicit, sides.len()).unwrap(),
    };
    Runner::new(Configuration::new(board, moves).unwrap()).unwrap()
}

/// Long-running tasks: `bt` with an endless budget on (3,2) 12x12 (400 ns
/// a node, no tour found in 2*10^7 nodes); `solve` on 40x40 with the two
/// moves right and up from a corner, where no tour exists and no proof
/// applies (every cell is reachable, one cell has no way in and one no way
/// out), so it walks again and again until its budget is spent; the `nn`
/// network with both remedies on (2,1) 30x30, which does not settle in
/// 10,000 iterations (0.12 s), capped at 2^32 - 1.
fn long_tasks() -> Vec<(&'static str, Runner, Method, TaskOptions)> {
    let endless = TaskOptions { budget: u64::MAX, iterations: u32::MAX, ..TaskOptions::default() };
    let up_right = vec![vec![1, 0], vec![0, 1]];
    vec![
        ("bt", runner(Some(&[3, 2]), &[], &[12, 12]), Method::Bt, endless),
        ("solve", runner(None, &up_right, &[40, 40]), Method::Solve, endless),
        ("nn-both", runner(Some(&[2, 1]), &[], &[30, 30]), Method::Nn(Remedy::Both), endless),
    ]
}

/// Runs the task on another thread, raises its flag after `after`, and
/// returns what the task returned and how long after the flag it did.
fn cancel_after(
    runner: &Runner,
    method: Method,
    options: TaskOptions,
    after: Duration,
) -> (Result<TaskResult, Cancelled>, Duration) {
    let flag = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (done, returned) = mpsc::channel();
        let flag = &flag;
        scope.spawn(move || {
            let mut ws = runner.workspace();
            let r = runner.run_task_cancellable(&mut ws, 0, method, &options, Cancel::new(flag));
            let _ = done.send((r, Instant::now()));
        });
        std::thread::sleep(after);
        let raised = Instant::now();
        flag.store(true, Ordering::Relaxed);
        // A hang fails here; the scope then still waits for the thread,
        // so the flag stays raised for it.
        let (r, at) = returned.recv_timeout(HANG).expect("the task ignored its cancel flag");
        (r, at.saturating_duration_since(raised))
    })
}

#[test]
fn long_tasks_stop_promptly_once_cancelled() {
    for (name, runner, method, options) in long_tasks() {
        for after in [Duration::from_millis(5), Duration::from_millis(200)] {
            let (r, latency) = cancel_after(&runner, method, options, after);
            assert_eq!(r, Err(Cancelled), "{name}: a cancelled task has no result");
            assert!(latency < PROMPTLY, "{name}: returned {latency:?} after its flag was raised");
            eprintln!("{name}: cancelled after {after:?}, returned {latency:?} later");
        }
    }
}

/// The same tasks, with budgets they spend in well under a second, run to
/// their end with a flag nobody raises: the same results as without one,
/// and the polls that prove they were working are counted.
#[test]
fn a_flag_never_raised_changes_nothing_and_counts_the_polls() {
    let flag = AtomicBool::new(false);
    let polls = AtomicU64::new(0);
    for (name, runner, method, options) in long_tasks() {
        let options = TaskOptions { budget: 200_000, iterations: 2_000, seed: 7, ..options };
        let plain = runner.run_task(&mut runner.workspace(), 0, method, &options);
        let before = polls.load(Ordering::Relaxed);
        let cancel = Cancel::new(&flag).counting(&polls);
        let watched = runner.run_task_cancellable(&mut runner.workspace(), 0, method, &options, cancel).unwrap();
        let figures = |r: &TaskResult| (r.success, r.outcome, r.attempts, r.visited, r.path.clone());
        assert_eq!(figures(&watched), figures(&plain), "{name}");
        assert!(polls.load(Ordering::Relaxed) > before + 1, "{name} polled as it worked");
    }
}

/// A batch stops as a whole: no task of it has a result, and a flag raised
/// before it starts stops it before any work.
#[test]
fn a_cancelled_batch_has_no_results() {
    let (_, runner, _, endless) = long_tasks().swap_remove(0);
    let quick = TaskOptions::default();
    let tasks = [
        Task { start: 0, method: Method::W, options: quick },
        Task { start: 0, method: Method::Bt, options: endless },
        Task { start: 1, method: Method::AwPlus, options: quick },
    ];
    let flag = AtomicBool::new(false);
    let batch = std::thread::scope(|scope| {
        let (done, returned) = mpsc::channel();
        let (runner, tasks, flag) = (&runner, &tasks, &flag);
        scope.spawn(move || {
            let _ = done.send(runner.run_tasks_cancellable(&mut runner.workspace(), tasks, Cancel::new(flag)));
        });
        std::thread::sleep(Duration::from_millis(20));
        flag.store(true, Ordering::Relaxed);
        returned.recv_timeout(HANG).expect("the batch ignored its cancel flag")
    });
    assert_eq!(batch, Err(Cancelled));
    let began = Instant::now();
    assert_eq!(runner.run_tasks_cancellable(&mut runner.workspace(), &tasks, Cancel::new(&flag)), Err(Cancelled));
    assert!(began.elapsed() < PROMPTLY);
    // The quick tasks alone, never cancelled, all have results.
    let quick_only = [tasks[0], tasks[2]];
    let alone = runner.run_tasks(&mut runner.workspace(), &quick_only);
    let unraised = AtomicBool::new(false);
    let watched = runner.run_tasks_cancellable(&mut runner.workspace(), &quick_only, Cancel::new(&unraised)).unwrap();
    let flags = |rs: &[TaskResult]| rs.iter().map(|r| (r.success, r.attempts, r.visited)).collect::<Vec<_>>();
    assert_eq!(flags(&watched), flags(&alone));
}
