//! The status model's tests: states, waiting shards, contributors, reuse
//! and the figures status derives.

use super::*;

#[test]
fn waiting_shards_say_what_they_wait_for() {
    assert_eq!(Waiting::default().text(), None);
    let one = Waiting { shards: 1, memory_bytes: 1024, labels: Vec::new(), excluded: 0, behind: None };
    assert_eq!(one.text().unwrap(), "1 shard waits for a worker with >= 1.0 KiB");
    let two = Waiting { shards: 2, labels: vec!["bigmem".into(), "gpu".into()], ..one.clone() };
    assert_eq!(two.text().unwrap(), "2 shards wait for a worker with >= 1.0 KiB and labels bigmem, gpu");
    let kept = Waiting { excluded: 1, ..Waiting::default() };
    assert_eq!(
        kept.text().unwrap(),
        "1 shard waits out the cooldown of the only workers able to run it, which stalled on or failed it"
    );
    let both = Waiting { excluded: 3, ..one };
    assert_eq!(
        both.text().unwrap(),
        "1 shard waits for a worker with >= 1.0 KiB; 3 shards wait out the cooldown of the only workers able \
         to run them, which stalled on or failed them"
    );
    assert_eq!(both.short(), Some("waits for memory"));
}

#[test]
fn a_sweep_behind_busy_workers_or_none_says_so() {
    let behind = Waiting { behind: Some(1), ..Waiting::default() };
    assert_eq!(behind.text().unwrap(), "queued behind other sweeps: the one worker here is busy with their shards");
    assert_eq!(behind.short(), Some("queued behind others"));
    let none = Waiting { behind: Some(0), ..Waiting::default() };
    assert!(none.text().unwrap().contains("no worker is registered"), "{:?}", none.text());
    assert_eq!(none.short(), Some("no worker"));
    assert_eq!(Waiting::default().short(), None);
}

#[test]
fn failed_shards_name_their_starts() {
    let f = FailedShard {
        shard_id: 1,
        config: 0,
        board: "5x5".into(),
        moves: "2,1".into(),
        start_lo: 4,
        start_hi: 5,
        error: String::new(),
    };
    assert_eq!(f.starts_text(), "start 4");
    assert_eq!(FailedShard { start_lo: 0, start_hi: 10, ..f }.starts_text(), "starts 0..10");
}

fn status(state: SweepState) -> SweepStatus {
    SweepStatus {
        sweep_id: "abc".into(),
        name: "times".into(),
        state,
        tasks_total: 10,
        tasks_done: 10,
        successes: 10,
        configurations: 1,
        impossible_configurations: 0,
        shards_failed: 0,
        created_unix_ms: 1_740_837_600_000,
        seed: Some(7),
        started_unix_ms: Some(1_740_837_605_000),
        finished_unix_ms: Some(1_740_837_738_000),
        // One run, from its first result to its end (2 min 13 s), or going on.
        runs: match state {
            SweepState::Running => RunTimes { current_from_unix_ms: Some(1_740_837_605_000), ..RunTimes::default() },
            _ => RunTimes { ended_ms: 133_000, ..RunTimes::default() },
        },
        cpu_micros: Some(250_500_000),
        reused_cpu_micros: None,
        contributors: Vec::new(),
        error: None,
        spec_toml: String::new(),
        rate_per_sec: None,
        eta: None,
        failed_shards: Vec::new(),
        waiting: Waiting::default(),
        reuse: Reuse::default(),
        work: None,
    }
}

#[test]
fn a_sweep_that_took_stored_results_says_how_many_and_whose() {
    let mut taken = status(SweepState::Done);
    taken.reuse = Reuse {
        tasks: 6,
        from: vec![ReusedFrom { sweep_id: "0123456789abcdef".into(), name: "quick".into(), tasks: 6 }],
        conflicts: 0,
        no_reuse: false,
    };
    let lines = taken.time_lines(u64::MAX);
    assert_eq!(
        lines.last().unwrap(),
        &("reused", "6 of 10 tasks taken from stored results; results computed by quick 01234567: 6".to_string())
    );
    taken.reuse.conflicts = 2;
    assert!(taken.time_lines(u64::MAX).last().unwrap().1.contains("2 reruns DISAGREED"));
    assert!(!status(SweepState::Done).time_lines(u64::MAX).iter().any(|(l, _)| *l == "reused"));
    taken.started_unix_ms = None;
    taken.tasks_done = 6;
    assert_eq!(taken.time_lines(u64::MAX)[1].1, "no result yet", "taken results are not this sweep's");
}

#[test]
fn a_finished_sweep_says_when_it_ran_and_what_it_cost() {
    let done = status(SweepState::Done);
    assert_eq!(done.wall_time(u64::MAX), Some(Duration::from_secs(133)), "from the first result to the end");
    let lines = done.time_lines(u64::MAX);
    let want = [
        ("submitted", "2025-03-01 14:00:00 UTC"),
        ("started", "2025-03-01 14:00:05 UTC"),
        ("finished", "2025-03-01 14:02:18 UTC"),
        ("wall time", "2 min 13 s"),
        ("CPU time", "4 min 10 s"),
    ];
    assert_eq!(lines, want.map(|(l, t)| (l, t.to_string())));
}

#[test]
fn a_running_sweep_counts_to_now_and_a_list_has_no_cpu_time() {
    let now = 1_740_837_665_000;
    let running = SweepStatus { finished_unix_ms: None, cpu_micros: None, ..status(SweepState::Running) };
    assert_eq!(running.wall_time(now), Some(Duration::from_secs(60)));
    let lines = running.time_lines(now);
    assert_eq!(lines[2], ("finished", "not yet".to_string()));
    assert_eq!(lines[3], ("wall time", "1 min 0 s so far".to_string()));
    assert_eq!(lines.len(), 4, "no CPU time line without the sum");
    let queued = SweepStatus { started_unix_ms: None, tasks_done: 0, runs: RunTimes::default(), ..running };
    assert_eq!(queued.wall_time(now), Some(Duration::from_secs(65)), "from its submission, before a result");
    assert_eq!(queued.time_lines(now)[1], ("started", "no result yet".to_string()));
}

#[test]
fn a_resumed_sweep_counts_only_its_runs_and_has_no_finish_yet() {
    // Ran 2 min 13 s, cancelled, resumed a day later: 30 s into its second run.
    let (resumed_at, now) = (1_740_924_000_000, 1_740_924_030_000);
    let resumed = SweepStatus {
        runs: RunTimes { ended_ms: 133_000, current_from_unix_ms: Some(resumed_at), last_result_unix_ms: None },
        ..status(SweepState::Running)
    };
    assert_eq!(resumed.wall_time(now), Some(Duration::from_secs(163)), "not the day it sat cancelled");
    let lines = resumed.time_lines(now);
    assert_eq!(lines[2], ("finished", "not yet".to_string()), "its last end is not its finish");
    assert_eq!(lines[3], ("wall time", "2 min 43 s so far".to_string()));
    // Its process killed 40 s into the second run: stopped, until its last result.
    let stopped = SweepStatus {
        state: SweepState::Stopped,
        finished_unix_ms: None,
        runs: RunTimes { last_result_unix_ms: Some(resumed_at + 40_000), ..resumed.runs },
        ..resumed
    };
    assert_eq!(stopped.wall_time(u64::MAX), Some(Duration::from_secs(173)));
    assert_eq!(stopped.time_lines(u64::MAX)[3], ("wall time", "2 min 53 s until its last result".to_string()));
}

#[test]
fn the_cpu_time_of_reused_results_is_told_apart() {
    let mut taken = status(SweepState::Done);
    taken.reuse.tasks = 6;
    taken.reused_cpu_micros = Some(200_500_000);
    let cpu = taken.time_lines(u64::MAX).into_iter().find(|(l, _)| *l == "CPU time").unwrap().1;
    assert_eq!(cpu, "50 s (its own tasks; the 6 results it reused took 3 min 20 s more when computed)");
}

#[test]
fn times_a_database_did_not_record_say_so_and_never_1970() {
    let old = SweepStatus {
        started_unix_ms: None,
        finished_unix_ms: None,
        runs: RunTimes::default(),
        ..status(SweepState::Done)
    };
    assert_eq!(old.wall_time(u64::MAX), None);
    let lines = old.time_lines(u64::MAX);
    for (label, text) in &lines[1..4] {
        assert_eq!(text, "not recorded", "{label}");
    }
    let unset = SweepStatus { created_unix_ms: 0, ..old };
    assert_eq!(unset.time_lines(0)[0], ("submitted", "not recorded".to_string()));
    assert!(unset.time_lines(0).iter().all(|(_, t)| !t.contains("1970")));
}

#[test]
fn the_cpu_time_is_the_contributors_summed() {
    let worker = |cpu_micros| Contributor { tasks: 5, cpu_micros, ..Contributor::default() };
    let status = status(SweepState::Done).with_contributors(vec![worker(1_500), worker(2_500)]);
    assert_eq!((status.cpu_micros, status.contributors.len()), (Some(4_000), 2));
    assert_eq!(status.with_contributors(Vec::new()).cpu_micros, Some(0), "no results: none spent");
}

#[test]
fn builds_read_as_release_and_commit() {
    assert_eq!(build_label("0.1.0", "abc123-dirty"), "0.1.0 (abc123-dirty)");
    assert_eq!(build_label("0.1.0", ""), "0.1.0");
    assert_eq!(build_label("", "abc123"), "", "no release: not recorded");
    let c = Contributor { version: "0.2.0".into(), build: "unknown".into(), ..Contributor::default() };
    assert_eq!(c.build_label(), "0.2.0 (unknown)");
}

#[test]
fn states_read_as_their_names() {
    let all = [SweepState::Running, SweepState::Done, SweepState::Cancelled, SweepState::Failed, SweepState::Stopped];
    let names: Vec<String> = all.iter().map(ToString::to_string).collect();
    assert_eq!(names, ["running", "done", "cancelled", "failed", "stopped"]);
    assert_eq!(all.map(SweepState::is_terminal), [false, true, true, true, true]);
}
