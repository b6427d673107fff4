//! Stalls: holders that deliver nothing lose their shards, hogged and
//! honest long-task workers do not, and the results window and cooldown.

use super::*;

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
/// of two starts each, both with tours (the atlas), which the reports
/// below say `bt` found.
const EXACT: &str = r#"
    name = "exact"
    seed = 4
    starts = 2
    methods = ["bt"]
    budget = 100000000
    [[grid]]
    rule = [3, 2]
    dims = [2]
    n = [10, 14]
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
    // estimate of a 10x10 task is microseconds).
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
