//! Handing out work: shard sizes, how much a worker holds, resumed and
//! requeued shards, forgotten workers, and the indexes of what is held.

use super::*;

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
    half.tasks[0].summary.micros = micros;
    let before = s.rate.micros_per_cost;
    s.commit(WorkerId(1), std::slice::from_ref(&half), now);
    let sample = micros as f64 / cost;
    let expect = 0.8 * before + 0.2 * sample;
    assert!((s.rate.micros_per_cost - expect).abs() < 1e-9 * expect, "{} vs {expect}", s.rate.micros_per_cost);
    // The full report repeats the first task: one new task, one sample.
    let mut full = full_report(a);
    full.tasks.iter_mut().for_each(|t| t.summary.micros = micros);
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
    absurd.tasks.iter_mut().for_each(|t| t.summary.micros = u64::MAX / 4);
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
        report.tasks.iter_mut().for_each(|t| t.summary.micros = micros);
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
    let open = vec![OpenShard {
        id: ShardId(40),
        plan: ShardPlan { config: 0, start_lo: 2, start_hi: 3 },
        failures: 1,
        methods: None,
    }];
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
                r.tasks.iter_mut().for_each(|task| task.summary.micros = (cost * 0.0015) as u64);
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
