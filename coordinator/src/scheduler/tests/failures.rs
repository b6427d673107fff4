//! Shards failing for good: errors and lost leases counted toward the
//! limit, once per worker, and the sweep that ends failed.

use super::*;

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
