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
    // A tiny target: every shard holds one start, so there are several;
    // no cap on held work (tested on its own below).
    let config = SchedulerConfig {
        target_shard: Duration::from_nanos(1),
        held_per_thread: f64::INFINITY,
        ..SchedulerConfig::default()
    };
    let mut s = Scheduler::new(config, 0);
    let sweep = Arc::new(Sweep::parse(&SPEC).unwrap());
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
    let (given, _) = assign(&mut s, WorkerId(1), 1, now);
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
    assert_eq!(s.commit(WorkerId(1), &[late]).done, vec![a.shard]);
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

#[test]
fn a_shard_failing_repeatedly_is_marked_failed_and_the_sweep_ends_failed() {
    let (mut s, key, now) = scheduler();
    let mut failed = None;
    for attempt in 0..3 {
        let (given, _) = assign(&mut s, WorkerId(1), 1, now);
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
        let (given, _) = assign(&mut s, WorkerId(1), 4, now);
        if given.is_empty() {
            break;
        }
        for a in &given {
            finished.extend(s.commit(WorkerId(1), &[full_report(a)]).finished);
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
        let settled = s.commit(WorkerId(1), &[report]);
        assert!(settled.failed.is_empty() && settled.retried.is_empty(), "{settled:?}");
    }
    assert!(s.heartbeat(WorkerId(2), &[(second[0].shard, second[0].epoch)], expired_at).is_empty(), "still held");
    let report = ShardReport { shard: second[0].shard, epoch: second[0].epoch, tasks: vec![], error: Some("x".into()) };
    assert_eq!(s.commit(WorkerId(2), &[report]).retried.len(), 1, "the holder's own error counts once");
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
    s.commit(WorkerId(1), std::slice::from_ref(&half));
    let sample = micros as f64 / cost;
    let expect = 0.8 * before + 0.2 * sample;
    assert!((s.rate.micros_per_cost - expect).abs() < 1e-9 * expect, "{} vs {expect}", s.rate.micros_per_cost);
    // The full report repeats the first task: one new task, one sample.
    let mut full = full_report(a);
    full.tasks.iter_mut().for_each(|t| t.micros = micros);
    let before = s.rate.micros_per_cost;
    s.commit(WorkerId(1), &[full]);
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
    s.commit(WorkerId(1), &[absurd]);
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
    s.commit(WorkerId(1), &[full_report(&first[0])]);
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
    let (again, _) = assign(&mut s, WorkerId(1), 1, expired_at);
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
            finished.extend(s.commit(WorkerId(1), &[full_report(a)]).finished);
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
        finished.extend(s.commit(WorkerId(9), &reports).finished);
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
        s.commit(WorkerId(1), &reports);
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
    assert!(settled.retried[0].1.contains("delivered no result"), "{settled:?}");
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
/// shard while its tasks poll (paused time, ten minutes of it): nothing is
/// charged a failure, the quick sweep ends done on the other worker. A
/// worker whose polls stop moving is still caught.
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
    assert_eq!(s.commit(free, &reports).finished, vec![(quick_key, SweepState::Done)]);

    // Ten minutes of heartbeats whose polls move: the hog keeps its shard.
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
    // Polls that stop moving (a count sent again is no progress) are a
    // stall like any other: after six leases the shard goes elsewhere.
    let stalled_at = t;
    let settled = loop {
        t += Duration::from_secs(2);
        s.touch(hogged, t).unwrap();
        s.note_polls(hogged, polls);
        s.heartbeat(hogged, &hog, t);
        let settled = s.expire(t);
        if settled != Settled::default() {
            break settled;
        }
        assert!(t < stalled_at + Duration::from_secs(70), "a stalled holder must be caught");
    };
    assert!(t >= stalled_at + Duration::from_secs(60), "caught after {:?}", t - stalled_at);
    assert_eq!(settled.retried.iter().map(|r| r.0).collect::<Vec<_>>(), vec![hog[0].0]);
    assert!(settled.retried[0].1.contains("delivered no result"), "{settled:?}");
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
    let settled = s.commit(WorkerId(1), &[report]);
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
    assert_eq!(s.commit(WorkerId(1), &[full_report(&one[0])]).done, vec![one[0].shard]);
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
