//! Results: each task counted once, late, duplicate, unsolicited and
//! impossible reports refused or ignored, and the methods a shard runs.

use super::*;

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
        ("more than the board", |t, cells| t.summary.visited = cells + 1),
        ("a tour must visit all", |t, _| t.summary.visited = 2),
        ("contradicts outcome", |t, _| t.summary.outcome = tour::Outcome::NoTour),
        ("attempts 0 is outside", |t, _| t.summary.attempts = 0),
        ("over the bound", |t, _| t.summary.micros = u64::MAX),
    ];
    for (why, lie) in lies {
        let mut forged = honest.clone();
        lie(&mut forged.tasks[1], cells);
        let e = s.validate(WorkerId(1), &[forged]).unwrap_err().to_string();
        assert!(e.contains(why) && e.contains("task (0, 1)"), "{why}: {e}");
    }
    assert_eq!(s.validate(WorkerId(1), &[honest]).unwrap().len(), 2);
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
