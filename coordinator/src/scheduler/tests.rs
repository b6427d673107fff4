use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use sweep::{Cursor, ShardPlan};

use super::*;
use crate::codes::SweepState;
use crate::error::Error;
use crate::ids::Epoch;
use crate::model::OpenShard;

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
        success,
        attempts: if success { 1 } else { walks },
        visited: if success { entry.cells() } else { 1 },
        micros: 3,
        error: None,
        outcome: if success { tour::Outcome::Tour } else { tour::Outcome::GaveUp },
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

#[test]
fn every_task_once_then_the_sweep_is_done() {
    let (mut s, key, now) = scheduler();
    let mut rows = 0;
    let mut finished = Vec::new();
    loop {
        let (given, cut) = assign(&mut s, WorkerId(1), 3, now);
        assert!(cut.iter().all(|n| n.sweep == key));
        if given.is_empty() {
            break;
        }
        for a in &given {
            assert_eq!(a.plan.start_hi - a.plan.start_lo, 1, "one start per shard at this target");
            let report = vec![full_report(a)];
            rows += s.validate(WorkerId(1), &report).unwrap().len();
            let settled = s.commit(WorkerId(1), &report, now);
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
    let (given, _) = assign(&mut s, WorkerId(1), 1, now);
    let mut half = full_report(&given[0]);
    half.tasks.truncate(1);
    assert_eq!(s.validate(WorkerId(1), std::slice::from_ref(&half)).unwrap().len(), 1);
    assert!(s.commit(WorkerId(1), std::slice::from_ref(&half), now).done.is_empty());
    assert!(s.validate(WorkerId(1), std::slice::from_ref(&half)).unwrap().is_empty(), "already received");
    let full = full_report(&given[0]);
    assert_eq!(s.validate(WorkerId(1), std::slice::from_ref(&full)).unwrap().len(), 1, "only the missing one");
    assert_eq!(s.commit(WorkerId(1), std::slice::from_ref(&full), now).done, vec![given[0].shard]);
    // A late copy of a settled shard is accepted and adds nothing.
    assert!(s.validate(WorkerId(1), &[full]).unwrap().is_empty());
}

#[test]
fn an_expired_lease_goes_to_another_worker_and_late_results_count_once() {
    let (mut s, _, now) = scheduler();
    let (first, _) = assign(&mut s, WorkerId(1), 1, now);
    let a = &first[0];
    // Heartbeats keep it.
    let later = now + Duration::from_secs(8);
    assert!(s.heartbeat(WorkerId(1), &[(a.shard, a.epoch)], later).is_empty());
    assert_eq!(s.expire(later + Duration::from_secs(5)), Settled::default(), "extended by the heartbeat");
    // Silence past the lease: back to the queue, then to worker 2.
    let expired_at = later + Duration::from_secs(11);
    assert_eq!(requeued(s.expire(expired_at)), vec![a.shard]);
    let (second, _) = assign(&mut s, WorkerId(2), 1, expired_at);
    assert_eq!(second[0].shard, a.shard);
    assert_ne!(second[0].epoch, a.epoch);
    // The old holder's heartbeat is revoked; its late results still count, once.
    assert_eq!(s.heartbeat(WorkerId(1), &[(a.shard, a.epoch)], expired_at), vec![(a.shard, a.epoch)]);
    let late = full_report(a);
    assert_eq!(s.validate(WorkerId(1), std::slice::from_ref(&late)).unwrap().len(), 2);
    assert_eq!(s.commit(WorkerId(1), &[late], expired_at).done, vec![a.shard]);
    assert!(s.validate(WorkerId(2), &[full_report(&second[0])]).unwrap().is_empty());
}

#[test]
fn unsolicited_and_out_of_range_reports_are_refused() {
    let (mut s, _, now) = scheduler();
    let (given, _) = assign(&mut s, WorkerId(1), 1, now);
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

/// `ksweep run`'s case: a shard whose error its one worker reports
/// `max_shard_failures` (3) times fails for good (an error counts every
/// time, a lost lease once per worker), each retry handed straight back to
/// it (a worker that reports an error did not stall); the sweep ends
/// failed.
#[test]
fn a_shard_failing_repeatedly_is_marked_failed_and_the_sweep_ends_failed() {
    let (mut s, key, mut now) = scheduler();
    let mut failed = None;
    for attempt in 0..3 {
        let (given, _) = assign(&mut s, WorkerId(1), 1, now);
        let a = &given[0];
        if let Some(first) = failed {
            assert_eq!(a.shard, first, "the failed shard is retried first");
        }
        failed = Some(a.shard);
        let report = ShardReport { shard: a.shard, epoch: a.epoch, tasks: vec![], error: Some("boom".into()) };
        let settled = s.commit(WorkerId(1), &[report], now);
        if attempt < 2 {
            assert_eq!(settled.retried, vec![(a.shard, "boom".to_string())]);
        } else {
            assert_eq!(settled.failed, vec![(a.shard, "boom".to_string())]);
        }
        now += Duration::from_secs(1);
    }
    // Finish everything else: the sweep ends failed.
    let mut finished = Vec::new();
    loop {
        let (given, _) = assign(&mut s, WorkerId(1), 4, now);
        if given.is_empty() {
            break;
        }
        for a in &given {
            finished.extend(s.commit(WorkerId(1), &[full_report(a)], now).finished);
        }
    }
    assert_eq!(finished, vec![(key, SweepState::Failed)]);
}

/// A worker whose lease expired and went to another worker may still
/// report an error; it must not count toward the shard's failure limit
/// nor take the shard from its current holder.
#[test]
fn a_stale_lease_holders_error_does_not_count() {
    let (mut s, _, now) = scheduler();
    let (first, _) = assign(&mut s, WorkerId(1), 1, now);
    let stale = &first[0];
    let expired_at = now + Duration::from_secs(11);
    assert_eq!(requeued(s.expire(expired_at)), vec![stale.shard]);
    let (second, _) = assign(&mut s, WorkerId(2), 1, expired_at);
    assert_eq!(second[0].shard, stale.shard);
    for _ in 0..5 {
        let report = ShardReport { shard: stale.shard, epoch: stale.epoch, tasks: vec![], error: Some("old".into()) };
        let settled = s.commit(WorkerId(1), &[report], expired_at);
        assert!(settled.failed.is_empty() && settled.retried.is_empty(), "{settled:?}");
    }
    assert!(s.heartbeat(WorkerId(2), &[(second[0].shard, second[0].epoch)], expired_at).is_empty(), "still held");
    let report = ShardReport { shard: second[0].shard, epoch: second[0].epoch, tasks: vec![], error: Some("x".into()) };
    assert_eq!(s.commit(WorkerId(2), &[report], expired_at).retried.len(), 1, "the holder's own error counts once");
}

/// The measured rate sizes shards: each task counts once, and a task's
/// reported time is bounded, so one report cannot shrink every shard.
#[test]
fn shard_sizing_counts_each_task_once_and_bounds_reported_time() {
    let (mut s, _, now) = scheduler();
    let (given, _) = assign(&mut s, WorkerId(1), 2, now);
    let a = &given[0];
    let cost = a.sweep.configurations()[a.plan.config as usize].cost_per_task();
    let micros = 1000;
    let mut half = full_report(a);
    half.tasks.truncate(1);
    half.tasks[0].micros = micros;
    let before = s.rate.micros_per_cost;
    s.commit(WorkerId(1), std::slice::from_ref(&half), now);
    let sample = micros as f64 / cost;
    let expect = 0.8 * before + 0.2 * sample;
    assert!((s.rate.micros_per_cost - expect).abs() < 1e-9 * expect, "{} vs {expect}", s.rate.micros_per_cost);
    // The full report repeats the first task: one new task, one sample.
    let mut full = full_report(a);
    full.tasks.iter_mut().for_each(|t| t.micros = micros);
    let before = s.rate.micros_per_cost;
    s.commit(WorkerId(1), &[full], now);
    let expect = 0.8 * before + 0.2 * sample;
    assert!(
        (s.rate.micros_per_cost - expect).abs() < 1e-9 * expect,
        "duplicates dilute: {} vs {expect}",
        s.rate.micros_per_cost
    );
    // An absurd time is clamped.
    let b = &given[1];
    let mut absurd = full_report(b);
    absurd.tasks.iter_mut().for_each(|t| t.micros = u64::MAX / 4);
    let before = s.rate.micros_per_cost;
    s.commit(WorkerId(1), &[absurd], now);
    let cap = sizing::MAX_TASK_MICROS_PER_LEASE * s.config.lease.as_micros() as f64;
    let bound = 0.8 * before + 0.2 * cap / b.sweep.configurations()[b.plan.config as usize].cost_per_task();
    assert!(s.rate.micros_per_cost <= bound * (1.0 + 1e-9), "{} > {bound}", s.rate.micros_per_cost);
}

#[test]
fn goodbye_requeues_at_once_and_cancel_stops_handing_out() {
    let (mut s, key, now) = scheduler();
    let (given, _) = assign(&mut s, WorkerId(1), 2, now);
    s.goodbye(WorkerId(1), &[(given[1].shard, given[1].epoch)]);
    let (again, _) = assign(&mut s, WorkerId(2), 1, now);
    assert_eq!(again[0].shard, given[1].shard, "handed back, handed out first");
    assert!(matches!(s.touch(WorkerId(1), now), Err(Error::UnknownWorker(1))));

    s.cancel(key);
    assert!(assign(&mut s, WorkerId(2), 4, now).0.is_empty());
    assert_eq!(s.heartbeat(WorkerId(2), &[(again[0].shard, again[0].epoch)], now).len(), 1, "revoked");
    // Late results of the cancelled sweep are accepted and dropped.
    assert!(s.validate(WorkerId(2), &[full_report(&again[0])]).unwrap().is_empty());
}

/// Workers silent for three leases are forgotten; of those, the ones that
/// never called after registering are named, for the database to forget.
#[test]
fn silent_workers_are_forgotten_and_those_never_heard_from_named() {
    let (mut s, _, now) = scheduler();
    s.register(WorkerId(3), 1, now);
    let lease = SchedulerConfig::default().lease;
    s.touch(WorkerId(1), now + lease).unwrap();
    assert!(s.forget_silent(now + lease * 3 - Duration::from_millis(1)).is_empty());
    assert_eq!(s.forget_silent(now + lease * 3), vec![WorkerId(2), WorkerId(3)], "1 was heard from");
    assert!(s.knows(WorkerId(1)) && !s.knows(WorkerId(2)) && !s.knows(WorkerId(3)));
    assert!(s.forget_silent(now + lease * 4).is_empty(), "1 is forgotten, but not named");
    assert!(!s.knows(WorkerId(1)));
}

#[test]
fn a_worker_holds_a_bounded_amount_of_estimated_work() {
    // Shards of about a target each (one start of 6x6 at the initial
    // rate is far less; a large target makes every shard a whole config).
    let config = SchedulerConfig { target_shard: Duration::from_nanos(1), ..SchedulerConfig::default() };
    let mut s = Scheduler::new(config, 0);
    let sweep = Arc::new(Sweep::parse(&SPEC).unwrap());
    s.add_sweep(SweepKey(1), sweep.id(), sweep, Cursor::default(), Vec::new(), 0, sweep::Reused::none());
    let now = Instant::now();
    s.register(WorkerId(1), 1, now);
    s.register(WorkerId(2), 1, now);
    let (first, _) = assign(&mut s, WorkerId(1), 100, now);
    assert_eq!(first.len(), 1, "one shard already exceeds a tiny budget; the first is always given");
    let (again, _) = assign(&mut s, WorkerId(1), 100, now);
    assert!(again.is_empty(), "worker 1 holds its share");
    let (other, _) = assign(&mut s, WorkerId(2), 100, now);
    assert_eq!(other.len(), 1, "the rest stays for worker 2");
    s.commit(WorkerId(1), &[full_report(&first[0])], now);
    assert_eq!(assign(&mut s, WorkerId(1), 100, now).0.len(), 1, "room again once its shard is done");
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
    let config = SchedulerConfig { target_shard: target, held_per_thread: f64::INFINITY, ..SchedulerConfig::default() };
    let mut s = Scheduler::new(config, 0);
    s.add_sweep(SweepKey(1), sweep.id(), sweep, Cursor::default(), Vec::new(), 0, sweep::Reused::none());
    let now = Instant::now();
    s.register(WorkerId(1), 1, now);
    s.register(WorkerId(2), 1, now);
    let mut sizes = Vec::new();
    for turn in 0.. {
        let worker = WorkerId(1 + turn % 2);
        let (given, _) = assign(&mut s, worker, 1, now);
        let Some(a) = given.first() else { break };
        sizes.push(a.plan.start_hi - a.plan.start_lo);
        let mut report = full_report(a);
        report.tasks.iter_mut().for_each(|t| t.micros = micros);
        s.commit(worker, &[report], now);
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
    let sweep = Arc::new(Sweep::parse(&SPEC).unwrap());
    let open =
        vec![OpenShard { id: ShardId(40), plan: ShardPlan { config: 0, start_lo: 2, start_hi: 3 }, failures: 1 }];
    s.add_sweep(SweepKey(1), sweep.id(), sweep, Cursor { config: 0, start: 3 }, open, 0, sweep::Reused::none());
    let now = Instant::now();
    s.register(WorkerId(9), 1, now);
    let (given, cut) = assign(&mut s, WorkerId(9), 2, now);
    assert_eq!(given[0].shard, ShardId(40));
    assert_eq!(given[1].shard, ShardId(42), "new ids continue above the stored maximum");
    assert_eq!(given[1].plan, ShardPlan { config: 0, start_lo: 3, start_hi: 4 });
    assert_eq!(cut[0].cursor, Cursor { config: 1, start: 0 });
}

/// `assign` runs under the scheduler's lock: it never draws a start list
/// (up to 2^24 starts) itself, only hands out cached ones.
#[test]
fn assign_leaves_start_lists_to_be_drawn_off_the_lock() {
    let (mut s, key, now) = scheduler();
    let grant = s.assign(WorkerId(1), 1, now);
    assert_eq!(grant.leased.len(), 1);
    assert!(grant.leased[0].starts.is_none(), "not drawn under the lock");
    // A report before the assignment was completed cannot be stored.
    let early = ShardReport {
        shard: grant.leased[0].shard,
        epoch: grant.leased[0].epoch,
        tasks: vec![plausible(&grant.leased[0].sweep, grant.leased[0].plan.config, 0, 0, true)],
        error: None,
    };
    assert!(matches!(s.validate(WorkerId(1), std::slice::from_ref(&early)), Err(Error::Refused(_))));
    let drawn = grant.draw_starts();
    s.remember_starts(&drawn);
    assert_eq!(drawn.assignments[0].starts.len(), 1);
    assert_eq!(s.validate(WorkerId(1), &[early]).unwrap().len(), 1);
    // The next shard of the same configuration comes from the cache.
    let next = s.assign(WorkerId(1), 1, now);
    assert_eq!(next.leased[0].plan.config, drawn.assignments[0].plan.config);
    assert!(next.leased[0].starts.is_some(), "cached list of the configuration being cut");
    assert_eq!(s.phase(key), Some(SweepPhase::Cutting));
}

/// One poll may carry the same shard twice (held under an expired and a
/// new epoch) or a task twice: each task is new once.
#[test]
fn a_task_twice_in_one_batch_is_new_once() {
    let (mut s, _, now) = scheduler();
    let (first, _) = assign(&mut s, WorkerId(1), 1, now);
    let expired_at = now + Duration::from_secs(11);
    s.expire(expired_at);
    // Not given back to the worker that lost it before the cooldown.
    let back = expired_at + Duration::from_secs(300);
    let (again, _) = assign(&mut s, WorkerId(1), 1, back);
    assert_eq!(again[0].shard, first[0].shard);
    let mut repeated = full_report(&again[0]);
    repeated.tasks.extend(repeated.tasks.clone());
    let batch = [full_report(&first[0]), full_report(&again[0]), repeated];
    assert_eq!(s.validate(WorkerId(1), &batch).unwrap().len(), 2, "two tasks, once each");
}

/// A sweep resumed after a restart with a shard that already failed for
/// good ends failed, not done without that shard's tasks.
#[test]
fn a_resumed_sweep_with_a_failed_shard_ends_failed() {
    let config = SchedulerConfig { held_per_thread: f64::INFINITY, ..SchedulerConfig::default() };
    let mut s = Scheduler::new(config, 0);
    let sweep = Arc::new(Sweep::parse(&SPEC).unwrap());
    s.add_sweep(SweepKey(1), sweep.id(), sweep, Cursor::default(), Vec::new(), 1, sweep::Reused::none());
    let now = Instant::now();
    s.register(WorkerId(1), 1, now);
    let mut finished = Vec::new();
    loop {
        let (given, _) = assign(&mut s, WorkerId(1), 8, now);
        if given.is_empty() {
            break;
        }
        for a in &given {
            finished.extend(s.commit(WorkerId(1), &[full_report(a)], now).finished);
        }
    }
    assert_eq!(finished, vec![(SweepKey(1), SweepState::Failed)]);
}

/// A shard whose every holder dies (a board that aborts the worker) fails
/// for good at the failure limit instead of killing workers for ever, and
/// its sweep ends failed.
#[test]
fn a_lease_lost_again_and_again_fails_the_shard() {
    let (mut s, key, mut now) = scheduler();
    let (first, _) = assign(&mut s, WorkerId(1), 1, now);
    let poison = first[0].shard;
    for round in 1..=3u32 {
        now += Duration::from_secs(11);
        let settled = s.expire(now);
        if round < 3 {
            assert_eq!(requeued(settled), vec![poison], "round {round}");
            let (again, _) = assign(&mut s, WorkerId(round as u64 + 1), 1, now);
            assert_eq!(again[0].shard, poison);
        } else {
            assert_eq!(settled.failed.len(), 1, "{settled:?}");
            assert!(
                settled.failed[0].1.contains("lease expired") && settled.failed[0].1.contains("failed attempt 3"),
                "{settled:?}"
            );
        }
    }
    // The rest of the sweep runs; it then ends failed, not done.
    let mut finished = Vec::new();
    loop {
        let (more, _) = assign(&mut s, WorkerId(9), 64, now);
        if more.is_empty() {
            break;
        }
        let reports: Vec<ShardReport> = more.iter().map(full_report).collect();
        s.validate(WorkerId(9), &reports).unwrap();
        finished.extend(s.commit(WorkerId(9), &reports, now).finished);
    }
    finished.extend(s.drain_finished());
    assert_eq!(finished, vec![(key, SweepState::Failed)]);
}

/// A worker's figures are checked before anything is stored: a result the
/// engine cannot produce refuses the whole batch, naming the task.
#[test]
fn impossible_results_refuse_the_batch() {
    let (mut s, _, now) = scheduler();
    let (given, _) = assign(&mut s, WorkerId(1), 1, now);
    let a = &given[0];
    let cells = a.sweep.configurations()[a.plan.config as usize].cells();
    let honest = full_report(a);
    type Lie = fn(&mut TaskReport, u64);
    let lies: [(&str, Lie); 5] = [
        ("more than the board", |t, cells| t.visited = cells + 1),
        ("a tour must visit all", |t, _| t.visited = 2),
        ("contradicts outcome", |t, _| t.outcome = tour::Outcome::NoTour),
        ("attempts 0 is outside", |t, _| t.attempts = 0),
        ("over the bound", |t, _| t.micros = u64::MAX),
    ];
    for (why, lie) in lies {
        let mut forged = honest.clone();
        lie(&mut forged.tasks[1], cells);
        let e = s.validate(WorkerId(1), &[forged]).unwrap_err().to_string();
        assert!(e.contains(why) && e.contains("task (0, 1)"), "{why}: {e}");
    }
    assert_eq!(s.validate(WorkerId(1), &[honest]).unwrap().len(), 2);
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

/// A worker's claimed threads count only as far as its delivered work
/// shows them (slow start): one claiming 2^32 threads takes a few shards,
/// not the queue, and earns more only by delivering.
#[test]
fn a_worker_holds_only_what_its_throughput_shows() {
    // About 38 s of work at the initial rate, in 1 s shards.
    let spec =
        MANY_SHARDS.replace("starts = 100", "starts = 1000").replace("from = 20, to = 60", "from = 200, to = 260");
    let sweep = Arc::new(Sweep::parse(&spec).unwrap());
    let mut s = Scheduler::new(SchedulerConfig::default(), 0);
    s.add_sweep(SweepKey(1), sweep.id(), sweep, Cursor::default(), Vec::new(), 0, sweep::Reused::none());
    let now = Instant::now();
    s.register(WorkerId(1), u32::MAX, now);
    s.register(WorkerId(2), 2, now);
    let (hoard, _) = assign(&mut s, WorkerId(1), 1024, now);
    let (honest, _) = assign(&mut s, WorkerId(2), 1024, now);
    // Four trusted threads, two target seconds each (about 15 of the 61
    // boards); the honest worker's two threads get half as much.
    assert!(hoard.len() <= 16 && hoard.len() <= 2 * honest.len() + 1, "{} vs {}", hoard.len(), honest.len());
    // Delivering all it holds every second (its task times those the rate
    // predicts) shows eight threads' worth: it may then hold more.
    let mut t = now;
    let mut holding = hoard.clone();
    let mut most = 0;
    for _ in 0..3 {
        t += Duration::from_secs(1);
        let reports: Vec<ShardReport> = holding
            .iter()
            .map(|a| {
                let cost = a.sweep.configurations()[a.plan.config as usize].cost_per_task();
                let mut r = full_report(a);
                r.tasks.iter_mut().for_each(|task| task.micros = (cost * 0.0015) as u64);
                r
            })
            .collect();
        s.validate(WorkerId(1), &reports).unwrap();
        s.commit(WorkerId(1), &reports, t);
        s.touch(WorkerId(1), t).unwrap();
        s.heartbeat(WorkerId(1), &[], t);
        holding = assign(&mut s, WorkerId(1), 1024, t).0;
        most = most.max(holding.len());
    }
    assert!(most > hoard.len(), "proven throughput raises the budget: {most} vs {}", hoard.len());
}

/// A holder that heartbeats but delivers no result for several leases
/// loses its shards (a failed attempt each), and others run them.
#[test]
fn a_holder_that_delivers_nothing_loses_its_shards() {
    let now = Instant::now();
    let mut s = many_shards(now);
    let (hoard, _) = assign(&mut s, WorkerId(1), 1024, now);
    let held: Vec<(ShardId, Epoch)> = hoard.iter().map(|a| (a.shard, a.epoch)).collect();
    let mut t = now;
    while t < now + Duration::from_secs(59) {
        t += Duration::from_secs(2);
        s.touch(WorkerId(1), t).unwrap();
        assert!(s.heartbeat(WorkerId(1), &held, t).is_empty(), "still held at {:?}", t - now);
        s.touch(WorkerId(2), t).unwrap();
        assert_eq!(s.expire(t), Settled::default(), "at {:?}", t - now);
    }
    t += Duration::from_secs(2);
    s.touch(WorkerId(1), t).unwrap();
    s.heartbeat(WorkerId(1), &held, t);
    let settled = s.expire(t);
    let mut lost: Vec<ShardId> = settled.retried.iter().map(|(id, _)| *id).collect();
    lost.sort_unstable();
    assert_eq!(lost, held.iter().map(|h| h.0).collect::<Vec<_>>(), "{settled:?}");
    assert!(settled.retried[0].1.contains("delivered no new result for 60 s"), "{settled:?}");
    assert_eq!(s.heartbeat(WorkerId(1), &held, t).len(), held.len(), "revoked");
    let (taken, _) = assign(&mut s, WorkerId(2), 1024, t);
    assert!(taken.iter().any(|a| a.shard == held[0].0), "the honest worker runs them");
}

/// One sweep of endless-looking `bt` tasks beside the quick [`SPEC`].
const HOG: &str = r#"
    name = "hog"
    seed = 3
    starts = 6
    methods = ["bt"]
    budget = 10000000000
    [[grid]]
    rule = [3, 2]
    dims = [2]
    n = [12]
"#;

/// Issue 34: a worker whose every thread another sweep's long tasks hold
/// hands back the quick shards it has not started, and keeps its long
/// shard (paused time, ten minutes of it) for as long as the shard's tasks
/// may take at their worst (issue 58), its polls aside: nothing is charged
/// a failure, the quick sweep ends done on the other worker. Without a
/// result for that long, it is a stall.
#[test]
fn a_hogged_worker_hands_back_what_it_cannot_start_and_loses_nothing() {
    let now = Instant::now();
    let mut s = Scheduler::new(SchedulerConfig::default(), 0);
    let (hog_key, quick_key) = (SweepKey(1), SweepKey(2));
    for (key, spec) in [(hog_key, HOG), (quick_key, SPEC.as_str())] {
        let sweep = Arc::new(Sweep::parse(spec).unwrap());
        s.add_sweep(key, sweep.id(), sweep, Cursor::default(), Vec::new(), 0, sweep::Reused::none());
    }
    let (hogged, free) = (WorkerId(1), WorkerId(2));
    s.register(hogged, 2, now);
    s.register(free, 2, now);
    // The hogged worker asked first: the hog's one shard (the older sweep)
    // and quick shards that then wait behind it.
    let (given, _) = assign(&mut s, hogged, 3, now);
    assert_eq!(given.iter().map(|a| a.sweep_key).collect::<Vec<_>>(), [hog_key, quick_key, quick_key]);
    let hog = [(given[0].shard, given[0].epoch)];
    let unstarted: Vec<(ShardId, Epoch)> = given[1..].iter().map(|a| (a.shard, a.epoch)).collect();
    // A worker cannot hand back what it does not hold.
    s.hand_back(free, &hog);
    assert!(s.heartbeat(hogged, &hog, now).is_empty());

    let mut t = now + Duration::from_secs(2);
    s.touch(hogged, t).unwrap();
    s.note_polls(hogged, 2_000);
    s.hand_back(hogged, &unstarted);
    assert!(s.heartbeat(hogged, &hog, t).is_empty());
    assert_eq!(s.heartbeat(hogged, &unstarted, t).len(), 2, "handed back: no longer its leases");
    // The other worker takes them first and finishes the quick sweep.
    let (taken, _) = assign(&mut s, free, 3, t);
    assert_eq!(taken.iter().map(|a| a.shard).collect::<Vec<_>>(), unstarted.iter().map(|u| u.0).collect::<Vec<_>>());
    let reports: Vec<ShardReport> = taken.iter().map(full_report).collect();
    s.validate(free, &reports).unwrap();
    assert_eq!(s.commit(free, &reports, t).finished, vec![(quick_key, SweepState::Done)]);

    // Ten minutes of heartbeats, and no result: the hog keeps its shard,
    // whose six 1e10-node tasks may take days.
    let mut polls = 2_000;
    while t < now + Duration::from_secs(600) {
        t += Duration::from_secs(2);
        polls += 2_000;
        for w in [hogged, free] {
            s.touch(w, t).unwrap();
        }
        s.note_polls(hogged, polls);
        assert!(s.heartbeat(hogged, &hog, t).is_empty(), "still held at {:?}", t - now);
        assert_eq!(s.expire(t), Settled::default(), "at {:?}", t - now);
    }
    // That long, but no longer: past its window without a result (polls
    // or not) it is a stall, a failed attempt.
    let window = s.results_window(hogged).unwrap();
    let worst = 1e10 * 3.0 / 1e6 * 6.0; // a batch of six tasks at 3 µs a node
    assert!(window.as_secs_f64() >= worst && window.as_secs_f64() < 1.01 * worst, "{window:?}");
    t = now + window + Duration::from_secs(1);
    for w in [hogged, free] {
        s.touch(w, t).unwrap();
    }
    s.note_polls(hogged, polls + 2_000);
    s.heartbeat(hogged, &hog, t);
    let settled = s.expire(t);
    assert_eq!(settled.retried.iter().map(|r| r.0).collect::<Vec<_>>(), vec![hog[0].0]);
    assert!(settled.retried[0].1.contains("delivered no new result"), "{settled:?}");
}

/// A configuration that took some methods from stored results runs only
/// the others: its shards list them, a worker's method index counts within
/// them, and the rows name the sweep's own method index. A configuration
/// that took every method is never cut.
#[test]
fn shards_run_only_the_methods_not_taken() {
    let config = SchedulerConfig { held_per_thread: f64::INFINITY, ..SchedulerConfig::default() };
    let mut s = Scheduler::new(config, 0);
    let sweep = Arc::new(Sweep::parse(&SPEC).unwrap()); // methods w, aw; boards 5x5, 6x6
    let mut w_only = sweep::MethodSet::EMPTY;
    w_only.insert(0);
    let reused = sweep::Reused::new(vec![sweep::MethodSet::all(2), w_only]);
    let key = SweepKey(1);
    s.add_sweep(key, sweep.id(), sweep.clone(), Cursor::default(), Vec::new(), 0, reused);
    let now = Instant::now();
    s.register(WorkerId(1), 1, now);
    let (given, _) = assign(&mut s, WorkerId(1), 8, now);
    assert!(!given.is_empty());
    assert!(given.iter().all(|a| a.plan.config == 1), "5x5 took everything: {given:?}");
    let a = &given[0];
    assert_eq!(a.methods.indices().collect::<Vec<_>>(), [1], "aw alone");
    let starts = a.starts.len() as u32;
    // Method index 1 is past the shard's one method.
    let mut bad = plausible(&sweep, 1, 0, 1, true);
    bad.method_index = 1;
    let refused =
        s.validate(WorkerId(1), &[ShardReport { shard: a.shard, epoch: a.epoch, tasks: vec![bad], error: None }]);
    assert!(matches!(refused, Err(Error::Refused(_))), "{refused:?}");
    let tasks: Vec<TaskReport> =
        (0..starts).map(|o| TaskReport { method_index: 0, ..plausible(&sweep, 1, o, 1, true) }).collect();
    let report = ShardReport { shard: a.shard, epoch: a.epoch, tasks, error: None };
    let rows = s.validate(WorkerId(1), std::slice::from_ref(&report)).unwrap();
    assert_eq!(rows.len() as u32, starts);
    assert!(rows.iter().all(|r| r.method == 1 && r.config == 1), "the sweep's method index");
    let settled = s.commit(WorkerId(1), &[report], now);
    assert_eq!(settled.done, [a.shard], "one method per start completes the shard");
}

/// The scheduler's indexes of open shards and of each worker's leases,
/// against the states they index.
fn check_indexes(s: &Scheduler) {
    let open: BTreeSet<ShardId> = s.shards.iter().filter(|(_, r)| r.state.is_open()).map(|(&id, _)| id).collect();
    assert_eq!(s.open, open, "open shards");
    let mut held: HashMap<WorkerId, Vec<ShardId>> = HashMap::new();
    for (&id, run) in &s.shards {
        if let Some(lease) = run.lease() {
            held.entry(lease.worker).or_default().push(id);
        }
    }
    let mut indexed = s.held.clone();
    for ids in held.values_mut().chain(indexed.values_mut()) {
        ids.sort_unstable();
    }
    assert_eq!(indexed, held, "leases by worker");
}

#[test]
fn the_indexes_of_open_and_held_shards_follow_every_transition() {
    let (mut s, key, now) = scheduler();
    let (one, _) = assign(&mut s, WorkerId(1), 3, now);
    let (two, _) = assign(&mut s, WorkerId(2), 2, now);
    assert_eq!((one.len(), two.len()), (3, 2));
    check_indexes(&s);
    assert_eq!(s.leased(), 5);
    assert_eq!(s.commit(WorkerId(1), &[full_report(&one[0])], now).done, vec![one[0].shard]);
    check_indexes(&s);
    assert_eq!(s.leased(), 4);
    // Worker 2 keeps its leases; worker 1's expire and go to worker 2.
    let later = now + Duration::from_secs(11);
    let beat: Vec<_> = two.iter().map(|a| (a.shard, a.epoch)).collect();
    assert!(s.heartbeat(WorkerId(2), &beat, now + Duration::from_secs(5)).is_empty());
    assert_eq!(requeued(s.expire(later)), vec![one[1].shard, one[2].shard]);
    check_indexes(&s);
    let (again, _) = assign(&mut s, WorkerId(2), 2, later);
    assert_eq!(again.iter().map(|a| a.shard).collect::<Vec<_>>(), vec![one[1].shard, one[2].shard]);
    check_indexes(&s);
    assert_eq!(s.drain(WorkerId(2)), Some(4));
    s.goodbye(WorkerId(2), &[(again[0].shard, again[0].epoch)]);
    check_indexes(&s);
    s.cancel(key);
    check_indexes(&s);
    assert!(s.open.is_empty() && s.held.is_empty() && s.leased() == 0);
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

/// Issue 58: a holder whose tasks' cancel-flag polls keep rising but which
/// delivers no result is stalled after its results window (six leases for
/// walk shards): it loses its shards, a failed attempt each, another worker
/// runs them, not the one that held them, and a second such stall keeps it
/// off the sweep.
#[test]
fn rising_polls_without_results_are_a_stall() {
    let (mut s, _, now) = scheduler();
    let (busy, other) = (WorkerId(1), WorkerId(2));
    let (given, _) = assign(&mut s, busy, 2, now);
    let held: Vec<(ShardId, Epoch)> = given.iter().map(|a| (a.shard, a.epoch)).collect();
    assert_eq!(s.results_window(busy), Some(Duration::from_secs(60)), "walk shards: six leases");
    // Heartbeats with rising polls until something settles.
    let run = |s: &mut Scheduler, held: &[(ShardId, Epoch)], mut t: Instant, polls: &mut u64| loop {
        t += Duration::from_secs(2);
        *polls += 2_000;
        for w in [busy, other] {
            s.touch(w, t).unwrap();
        }
        s.note_polls(busy, *polls);
        let revoked = s.heartbeat(busy, held, t);
        let settled = s.expire(t);
        if settled != Settled::default() {
            return (settled, t);
        }
        assert!(revoked.is_empty(), "still held at {:?}", t - now);
        assert!(t < now + Duration::from_secs(600), "ten minutes of rising polls, and never a result");
    };
    let mut polls = 0;
    let (settled, t) = run(&mut s, &held, now, &mut polls);
    let waited = t - now;
    assert!(waited > Duration::from_secs(60) && waited <= Duration::from_secs(62), "lost after {waited:?}");
    assert_eq!(requeued(settled.clone()), held.iter().map(|h| h.0).collect::<Vec<_>>());
    let why = &settled.retried[0].1;
    assert!(why.contains("delivered no new result for 60 s") && why.contains("failed attempt 1"), "{settled:?}");
    assert_eq!(s.heartbeat(busy, &held, t).len(), 2, "revoked");
    let (again, _) = assign(&mut s, busy, 2, t);
    assert!(again.iter().all(|a| held.iter().all(|h| h.0 != a.shard)), "not handed straight back: {again:?}");
    let (taken, _) = assign(&mut s, other, 2, t);
    assert_eq!(taken.iter().map(|a| a.shard).collect::<Vec<_>>(), held.iter().map(|h| h.0).collect::<Vec<_>>());
    let reports: Vec<ShardReport> = taken.iter().map(full_report).collect();
    assert_eq!(s.commit(other, &reports, t).done.len(), 2);
    // It does the same with the other shards it took: a second stall.
    let held: Vec<(ShardId, Epoch)> = again.iter().map(|a| (a.shard, a.epoch)).collect();
    let (settled, t) = run(&mut s, &held, t, &mut polls);
    assert_eq!(requeued(settled), held.iter().map(|h| h.0).collect::<Vec<_>>());
    assert!(assign(&mut s, busy, 2, t).0.is_empty(), "two stalls: kept off the sweep");
}

/// A new result on any shard a worker holds restarts its results window:
/// a holder delivering one task of one of its two shards at 50 s keeps
/// both until 60 s after that result, not after they were given.
#[test]
fn a_result_on_any_shard_restarts_the_window() {
    let (mut s, _, now) = scheduler();
    let (given, _) = assign(&mut s, WorkerId(1), 2, now);
    let held: Vec<(ShardId, Epoch)> = given.iter().map(|a| (a.shard, a.epoch)).collect();
    let mut half = full_report(&given[0]);
    half.tasks.truncate(1);
    let mut t = now;
    let settled = loop {
        t += Duration::from_secs(2);
        for w in [WorkerId(1), WorkerId(2)] {
            s.touch(w, t).unwrap();
        }
        if t == now + Duration::from_secs(50) {
            assert!(s.commit(WorkerId(1), std::slice::from_ref(&half), t).done.is_empty());
        }
        s.heartbeat(WorkerId(1), &held, t);
        let settled = s.expire(t);
        if settled != Settled::default() {
            break settled;
        }
        assert!(t < now + Duration::from_secs(120), "held past its window");
    };
    assert_eq!(t, now + Duration::from_secs(112), "60 s after the result, at the next tick");
    assert_eq!(requeued(settled), held.iter().map(|h| h.0).collect::<Vec<_>>(), "both shards");
}

/// Exact baselines: `bt` with the default budget of 1e8 nodes, two boards
/// of two starts each.
const EXACT: &str = r#"
    name = "exact"
    seed = 4
    starts = 2
    methods = ["bt"]
    budget = 100000000
    [[grid]]
    rule = [3, 2]
    dims = [2]
    n = [12, 13]
"#;

/// Issue 58, the other way round: an honest worker on a `bt` sweep whose
/// tasks take five minutes each (its polls rising, no result meanwhile)
/// keeps both its shards, the one it runs and the one queued behind it,
/// for the twenty minutes they take, is not kept off the sweep, and loses
/// nothing. A worker that delivers nothing on such shards stalls after
/// the window their budget gives them.
#[test]
fn an_honest_worker_on_long_bt_tasks_is_not_taken_for_a_staller() {
    // Shards of a whole board each (a target of a second, and the walk
    // estimate of a 12x12 task is microseconds).
    let config = SchedulerConfig { held_per_thread: f64::INFINITY, ..SchedulerConfig::default() };
    let mut s = Scheduler::new(config, 0);
    let sweep = Arc::new(Sweep::parse(EXACT).unwrap());
    let key = SweepKey(1);
    s.add_sweep(key, sweep.id(), sweep, Cursor::default(), Vec::new(), 0, sweep::Reused::none());
    let now = Instant::now();
    let (honest, liar) = (WorkerId(1), WorkerId(2));
    s.register(honest, 1, now);
    s.register(liar, 1, now);
    let (given, _) = assign(&mut s, honest, 2, now);
    assert_eq!(given.iter().map(|a| (a.plan.config, a.starts.len())).collect::<Vec<_>>(), [(0, 2), (1, 2)]);
    let held: Vec<(ShardId, Epoch)> = given.iter().map(|a| (a.shard, a.epoch)).collect();
    // Each task's result comes five minutes after the last: both of the
    // first shard's, then both of the second's.
    let results: Vec<(Duration, ShardReport)> = (0..4)
        .map(|i| {
            let mut report = full_report(&given[i / 2]);
            report.tasks = vec![report.tasks[i % 2].clone()];
            (Duration::from_secs(300 * (i as u64 + 1)), report)
        })
        .collect();
    let (mut t, mut polls, mut done) = (now, 0, Vec::new());
    while t < now + Duration::from_secs(1200) {
        t += Duration::from_secs(2);
        polls += 2_000;
        for w in [honest, liar] {
            s.touch(w, t).unwrap();
        }
        s.note_polls(honest, polls);
        let running = if t - now <= Duration::from_secs(600) { &held[..] } else { &held[1..] };
        assert!(s.heartbeat(honest, running, t).is_empty(), "revoked at {:?}", t - now);
        for (at, report) in &results {
            if t - now == *at {
                s.validate(honest, std::slice::from_ref(report)).unwrap();
                let settled = s.commit(honest, std::slice::from_ref(report), t);
                assert!(settled.retried.is_empty() && settled.failed.is_empty(), "{settled:?}");
                done.extend(settled.done);
            }
        }
        let settled = s.expire(t);
        assert!(settled == Settled::default(), "at {:?}: {settled:?}", t - now);
        assert!(s.kept_off(honest, t).is_empty(), "cooled down at {:?}", t - now);
    }
    assert_eq!(done, held.iter().map(|h| h.0).collect::<Vec<_>>(), "both shards done, by their first holder");

    // The same shards on a worker that delivers nothing: a stall, once
    // its window (four tasks of 1e8 nodes at 3 µs a node: 20 minutes) is
    // over, polls or not.
    let sweep = Arc::new(Sweep::parse(&EXACT.replace("seed = 4", "seed = 5")).unwrap());
    s.add_sweep(SweepKey(2), sweep.id(), sweep, Cursor::default(), Vec::new(), 0, sweep::Reused::none());
    let (given, _) = assign(&mut s, liar, 2, t);
    let held: Vec<(ShardId, Epoch)> = given.iter().map(|a| (a.shard, a.epoch)).collect();
    let window = s.results_window(liar).unwrap();
    assert!(window >= Duration::from_secs(1200) && window < Duration::from_secs(1201), "{window:?}");
    let began = t;
    let settled = loop {
        t += Duration::from_secs(2);
        polls += 2_000;
        for w in [honest, liar] {
            s.touch(w, t).unwrap();
        }
        s.note_polls(liar, polls);
        s.heartbeat(liar, &held, t);
        let settled = s.expire(t);
        if settled != Settled::default() {
            break settled;
        }
        assert!(t < began + Duration::from_secs(1210), "a liar on bt shards is caught too");
    };
    assert!(t - began > window, "{:?}", t - began);
    assert_eq!(requeued(settled), held.iter().map(|h| h.0).collect::<Vec<_>>());
}

/// The results window follows the longest task a worker holds at its
/// worst: six leases for the walks, the budget for `bt` and `solve`, the
/// iterations and the network's size for `nn`.
#[test]
fn the_results_window_follows_the_budget_of_what_a_worker_holds() {
    let window = |methods: &str, extra: &str, n: u32| {
        let spec = format!(
            "name = \"w\"\nseed = 1\nstarts = 1\nmethods = [{methods}]\n{extra}\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [{n}]\n"
        );
        let (mut s, _, now) = with_spec(&spec);
        assert_eq!(assign(&mut s, WorkerId(1), 1, now).0.len(), 1);
        s.results_window(WorkerId(1)).unwrap().as_secs_f64()
    };
    // Six leases for walks; more than twice as long with a batch of them
    // at their worst would be longer.
    assert_eq!(window("\"w\", \"aw\"", "", 8), 60.0);
    // One start, one task each: four times the worst task. bt: 1e8 nodes
    // at 3 µs (walk estimate aside).
    let bt = window("\"bt\"", "", 8);
    assert!((1200.0..1201.0).contains(&bt), "{bt}");
    // A budget ten times smaller: a tenth, but no less than six leases.
    assert!((120.0..121.0).contains(&window("\"bt\"", "budget = 10000000", 8)));
    assert_eq!(window("\"bt\"", "budget = 1000", 8), 60.0);
    // solve: 1e8 units at 1 µs.
    assert!((400.0..401.0).contains(&window("\"solve\"", "", 8)));
    // nn: 100 iterations of 8x8 cells x 8 moves at 0.1 µs is short: six
    // leases; on 1000x1000, 100 x 8 M updates at 0.1 µs, 80 s, four times.
    assert_eq!(window("\"nn-both\"", "", 8), 60.0);
    let nn = window("\"nn-both\"", "", 1000);
    assert!((320.0..321.0).contains(&nn), "{nn}");
    assert!(window("\"nn\"", "iterations = 1000", 1000) > 9.0 * nn);
    // Mixed: the longest method counts.
    assert!((1200.0..1201.0).contains(&window("\"w\", \"solve\", \"bt\"", "", 8)));
}

/// Issue 58: a worker that stalls twice on a sweep (heartbeats, but no
/// new result for its six-lease window) is given none of its shards
/// for the cooldown, while another worker is; after it, it takes them again.
#[test]
fn a_worker_that_stalls_twice_sits_out_the_cooldown() {
    let (mut s, _, now) = with_spec(&sweep::fixtures::knight_spec("t", 1, 20, &[6, 7, 8]));
    let (staller, honest) = (WorkerId(1), WorkerId(2));
    let mut t = now;
    let mut lost = Vec::new();
    for stall in 1..=2 {
        let (given, _) = assign(&mut s, staller, 1, t);
        assert_eq!(given.len(), 1, "stall {stall}: it may still take work");
        let held = [(given[0].shard, given[0].epoch)];
        let began = t;
        let settled = loop {
            t += Duration::from_secs(2);
            for w in [staller, honest] {
                s.touch(w, t).unwrap();
            }
            s.heartbeat(staller, &held, t);
            let settled = s.expire(t);
            if settled != Settled::default() {
                break settled;
            }
            assert!(t < began + Duration::from_secs(70), "stall {stall} is caught");
        };
        assert_eq!(requeued(settled), [held[0].0], "stall {stall}");
        lost.push(held[0].0);
    }
    // For the cooldown (30 leases) the staller is given nothing, however
    // often it asks; the honest worker takes the shards it lost, and more.
    let cooled = t;
    let mut ran = Vec::new();
    while t < cooled + Duration::from_secs(290) {
        t += Duration::from_secs(10);
        for w in [staller, honest] {
            s.touch(w, t).unwrap();
        }
        assert!(assign(&mut s, staller, 8, t).0.is_empty(), "kept off the sweep at {:?}", t - cooled);
        let (given, _) = assign(&mut s, honest, 1, t);
        assert_eq!(given.len(), 1, "the honest worker runs the sweep at {:?}", t - cooled);
        ran.push(given[0].shard);
        assert!(s.commit(honest, &[full_report(&given[0])], t).failed.is_empty());
        assert_eq!(s.expire(t), Settled::default());
    }
    assert_eq!(ran[..2], lost[..], "the lost shards first");
    t = cooled + Duration::from_secs(301);
    for w in [staller, honest] {
        s.touch(w, t).unwrap();
    }
    assert_eq!(assign(&mut s, staller, 1, t).0.len(), 1, "back after the cooldown");
}

/// Four boards, two starts each, that only a worker with a `gpu` label runs.
const GPU: &str = r#"
    name = "gpu"
    seed = 2
    starts = 2
    methods = ["w"]
    [[grid]]
    rule = [2, 1]
    dims = [2]
    n = [5, 6, 7, 8]
    requires = ["gpu"]
"#;

/// Issue 58's attack: a worker advertising 16 EiB and a `gpu` label, the
/// only one able to run the sweep, holds its shards and lies every way it
/// can short of reporting errors for four hours (heartbeats with rising
/// polls, goes idle, lets its leases expire): no shard fails, and the
/// sweep runs on, its status saying which shards wait on the liar's
/// cooldown.
#[test]
fn a_lone_liar_cannot_fail_a_shard() {
    let (mut s, key, now) = with_spec(GPU);
    let (liar, plain) = (WorkerId(1), WorkerId(2));
    s.register(liar, 64, now);
    s.advertise(liar, WorkerResources { memory: Some(u64::MAX), labels: ["gpu".to_string()].into() });
    s.advertise(plain, WorkerResources { memory: Some(1 << 30), labels: BTreeSet::new() });
    let mut held: Vec<Assignment> = Vec::new();
    let (mut t, mut polls, mut taken, mut lost, mut most_kept) = (now, 0u64, 0, 0, 0);
    while t < now + Duration::from_secs(4 * 3600) {
        t += Duration::from_secs(2);
        // It changes its lie every ten minutes.
        let lie = (t - now).as_secs() / 600 % 3;
        for w in [liar, plain] {
            s.touch(w, t).unwrap();
        }
        if lie == 0 {
            polls += 2_000; // busy, by its polls
        }
        s.note_polls(liar, polls); // idle, when they stop
        let listed: Vec<(ShardId, Epoch)> = match lie {
            2 => Vec::new(), // its leases expire
            _ => held.iter().map(|a| (a.shard, a.epoch)).collect(),
        };
        let revoked = s.heartbeat(liar, &listed, t);
        held.retain(|a| !revoked.contains(&(a.shard, a.epoch)));
        let settled = s.expire(t);
        assert!(settled.failed.is_empty() && settled.finished.is_empty(), "at {:?}: {settled:?}", t - now);
        lost += settled.retried.len() + settled.requeued.len();
        assert!(assign(&mut s, plain, 8, t).0.is_empty(), "no gpu, nothing to run");
        let (given, _) = assign(&mut s, liar, 8, t);
        taken += given.len();
        held.extend(given);
        // What the status says: the liar can run them; those it may not
        // take now wait on its cooldown.
        let waiting = s.waiting(key, t);
        assert_eq!(waiting.shards, 0, "{waiting:?}");
        most_kept = most_kept.max(waiting.excluded);
    }
    assert!(s.is_running(key));
    assert!(taken > 8 && lost > 8, "it held and lost shards again and again: {taken} taken, {lost} lost");
    assert!(most_kept >= 4, "shards wait on the liar's cooldown: at most {most_kept}");
}

/// A shard whose holders let its lease expire fails for good once that
/// happened on `max_shard_failures` (3) distinct workers: the same worker
/// letting it expire again counts nothing (a lone liar cannot fail it).
#[test]
fn a_shard_fails_for_good_on_as_many_distinct_workers() {
    let (mut s, _, now) = scheduler();
    let (a, b, c) = (WorkerId(1), WorkerId(2), WorkerId(3));
    s.register(c, 1, now);
    let (given, _) = assign(&mut s, a, 1, now);
    let x = given[0].shard;
    // Lets `holder`'s lease expire, the others alive.
    let expire = |s: &mut Scheduler, holder: WorkerId, t: Instant| {
        let t = t + Duration::from_secs(11);
        for w in [a, b, c].into_iter().filter(|&w| w != holder) {
            s.touch(w, t).unwrap();
        }
        (s.expire(t), t)
    };
    // a lets its lease expire: the first failure.
    let (settled, mut t) = expire(&mut s, a, now);
    assert_eq!(requeued(settled), [x]);
    // After the cooldown a takes it again and lets it expire again: the
    // same worker, so nothing is counted.
    idle(&mut s, &[a, b, c], t, t + Duration::from_secs(310));
    t += Duration::from_secs(310);
    let (given, _) = assign(&mut s, a, 1, t);
    assert_eq!(given[0].shard, x);
    let (settled, t) = expire(&mut s, a, t);
    assert!(settled.retried.is_empty() && settled.failed.is_empty(), "{settled:?}");
    assert_eq!(settled.requeued.len(), 1, "{settled:?}");
    assert!(settled.requeued[0].1.contains("no failure counted"), "{settled:?}");
    // b's expiry is the second.
    let (given, _) = assign(&mut s, b, 1, t);
    assert_eq!(given[0].shard, x, "retried first, elsewhere");
    let (settled, t) = expire(&mut s, b, t);
    assert_eq!(requeued(settled), [x]);
    // c's is the third, on a third worker. Failed for good.
    let (given, _) = assign(&mut s, c, 1, t);
    assert_eq!(given[0].shard, x);
    let (settled, _) = expire(&mut s, c, t);
    assert_eq!(settled.failed.len(), 1, "{settled:?}");
    assert_eq!(settled.failed[0].0, x);
    assert!(settled.failed[0].1.contains("failed attempt 3"), "{settled:?}");
}
