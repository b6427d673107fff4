//! The scheduler's tests, one file per concern; here the helpers they
//! share (a scheduler of a small spec, plausible reports, idle workers).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use sweep::{Cursor, ShardPlan, TaskSummary};

use super::*;
use crate::codes::SweepState;
use crate::error::Error;
use crate::ids::Epoch;
use crate::model::OpenShard;

mod failures;
mod leases;
mod results;
mod stalls;

/// Leases and draws start cells at once, as the tests need.
fn assign(s: &mut Scheduler, worker: WorkerId, free: usize, now: Instant) -> (Vec<Assignment>, Vec<NewShards>) {
    let drawn = s.assign_drawn(worker, free, now);
    (drawn.assignments, s.take_unstored())
}

/// Shards an expiry queued again.
fn requeued(settled: Settled) -> Vec<ShardId> {
    assert!(settled.failed.is_empty(), "{settled:?}");
    settled.retried.into_iter().map(|(id, _)| id).collect()
}

static SPEC: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| sweep::fixtures::knight_spec("t", 1, 4, &[5, 6]));

fn scheduler() -> (Scheduler, SweepKey, Instant) {
    with_spec(&SPEC)
}

/// [`scheduler`] of another spec.
fn with_spec(spec: &str) -> (Scheduler, SweepKey, Instant) {
    // A tiny target: every shard holds one start, so there are several;
    // no cap on held work (tested on its own below).
    let config = SchedulerConfig {
        target_shard: Duration::from_nanos(1),
        held_per_thread: f64::INFINITY,
        ..SchedulerConfig::default()
    };
    let mut s = Scheduler::new(config, 0);
    let sweep = Arc::new(Sweep::parse(spec).unwrap());
    let key = SweepKey(1);
    s.add_sweep(key, sweep.id(), sweep, Cursor::default(), Vec::new(), 0, sweep::Reused::none());
    let now = Instant::now();
    s.register(WorkerId(1), 1, now);
    s.register(WorkerId(2), 1, now);
    (s, key, now)
}

/// A result the engine could produce (it passes `Sweep::check_result`).
fn plausible(sweep: &sweep::Sweep, config: u32, start_offset: u32, method_index: u32, success: bool) -> TaskReport {
    let entry = &sweep.configurations()[config as usize];
    let walks = sweep.methods()[method_index as usize].max_attempts(entry.move_count() as usize) as u32;
    TaskReport {
        start_offset,
        method_index,
        summary: TaskSummary {
            success,
            attempts: if success { 1 } else { walks },
            visited: if success { entry.cells() } else { 1 },
            micros: 3,
            outcome: if success { tour::Outcome::Tour } else { tour::Outcome::GaveUp },
        },
        error: None,
    }
}

fn full_report(a: &Assignment) -> ShardReport {
    let methods = a.sweep.methods().len() as u32;
    let tasks = (0..a.starts.len() as u32)
        .flat_map(|o| (0..methods).map(move |m| (o, m)))
        .map(|(o, m)| plausible(&a.sweep, a.plan.config, o, m, true))
        .collect();
    ShardReport { shard: a.shard, epoch: a.epoch, tasks, error: None }
}

/// 41 boards of 20x20 to 60x60, 100 starts each: hundreds of 1 ms shards.
const MANY_SHARDS: &str = r#"
    name = "many"
    seed = 5
    starts = 100
    methods = ["w"]
    [[grid]]
    rule = [2, 1]
    dims = [2]
    n_range = { from = 20, to = 60 }
"#;

fn many_shards(now: Instant) -> Scheduler {
    let config = SchedulerConfig { target_shard: Duration::from_millis(1), ..SchedulerConfig::default() };
    let mut s = Scheduler::new(config, 0);
    let sweep = Arc::new(Sweep::parse(MANY_SHARDS).unwrap());
    s.add_sweep(SweepKey(1), sweep.id(), sweep, Cursor::default(), Vec::new(), 0, sweep::Reused::none());
    s.register(WorkerId(1), u32::MAX, now); // claims every thread there is
    s.register(WorkerId(2), 2, now);
    s
}

/// Keeps `workers` alive from `from` to `to` (they touch every few
/// seconds, holding nothing) and checks that nothing settles meanwhile.
fn idle(s: &mut Scheduler, workers: &[WorkerId], from: Instant, to: Instant) {
    let mut t = from;
    while t < to {
        t = (t + Duration::from_secs(5)).min(to);
        for &w in workers {
            s.touch(w, t).unwrap();
        }
        assert_eq!(s.expire(t), Settled::default(), "at {:?}", t - from);
    }
}
