//! The conversions' round trips and the refusals of malformed messages,
//! each naming its field.

use sweep::Sweep;
use tour::TaskResult;

use super::*;
use crate::v1 as pb;

const SPEC: &str = r#"
    name = "convert"
    seed = 5
    starts = 4
    methods = ["w", "aw+", "wr"]
    budget = 1234
    [[grid]]
    rule = [2, 1]
    dims = [2, 3]
    n = [5]
    [[grid]]
    moves = [[1, 2], [-2, 1], [-1, -2], [2, -1]]
    shapes = [[4, 6]]
"#;

fn task_result(outcome: tour::Outcome) -> TaskResult {
    TaskResult { success: outcome == tour::Outcome::Tour, outcome, attempts: 3, visited: 25, micros: 17, path: None }
}

#[test]
fn outcomes_round_trip() {
    for o in [tour::Outcome::Tour, tour::Outcome::NoTour, tour::Outcome::GaveUp] {
        assert_eq!(outcome(outcome_code(o), "f").unwrap(), Some(o));
        let t = task_done(2, 1, &task_result(o));
        assert_eq!((t.start_offset, t.method_index, t.attempts, t.visited, t.micros), (2, 1, 3, 25, 17));
        assert_eq!(task_outcome(&t).unwrap(), o);
    }
    assert_eq!(outcome(pb::Outcome::Unspecified as i32, "f").unwrap(), None);
}

#[test]
fn an_unknown_outcome_is_refused_by_name() {
    let t = pb::TaskOutcome { outcome: 9, success: true, ..Default::default() };
    let e = task_outcome(&t).unwrap_err();
    assert_eq!(e.field(), "TaskOutcome.outcome");
    assert!(matches!(e, ConvertError::UnknownValue { value: 9, .. }), "{e}");
}

#[test]
fn a_worker_without_outcomes_reads_as_success_or_gave_up() {
    let ok = pb::TaskOutcome { success: true, ..Default::default() };
    assert_eq!(task_outcome(&ok).unwrap(), tour::Outcome::Tour);
    assert_eq!(task_outcome(&pb::TaskOutcome::default()).unwrap(), tour::Outcome::GaveUp);
    let failed = task_failed(1, 2, "boom".into());
    assert_eq!((failed.error.as_str(), failed.success, failed.attempts), ("boom", false, 0));
}

#[test]
fn a_reported_task_decodes_with_its_error_cut() {
    let long = "x".repeat(MAX_ERROR_CHARS + 5);
    let t = pb::TaskOutcome { start_offset: 3, method_index: 1, error: long, ..Default::default() };
    let report = sweep::TaskReport::try_from(t).unwrap();
    assert_eq!((report.start_offset, report.method_index, report.summary.outcome), (3, 1, tour::Outcome::GaveUp));
    let error = report.error.unwrap();
    assert!(error.ends_with(&format!("... ({} bytes)", MAX_ERROR_CHARS + 5)), "{error}");
    assert_eq!(reported_error(String::new()), None);
    let bad = pb::TaskOutcome { outcome: 9, ..Default::default() };
    assert_eq!(sweep::TaskReport::try_from(bad).unwrap_err().field(), "TaskOutcome.outcome");
}

#[test]
fn aggregate_rows_round_trip() {
    let row = sweep::AggregateRow {
        config: 3,
        moves: "2,1".into(),
        dims: 2,
        shape: "8x8".into(),
        n: Some(8),
        method: "aw+".into(),
        impossible: false,
        tasks: 100,
        successes: 97,
        no_tour: 2,
        refuted: 5,
        unsettled: Some(1),
        closed: true,
        mean_micros: 1.5,
        median_micros: 1.25,
        mean_attempts: 1.01,
        open_tour: "exists".into(),
        closed_tour: "unknown".into(),
        precision: None,
    };
    let wire = pb::AggregateRow::from(row.clone());
    assert_eq!(sweep::AggregateRow::from(wire), row);
    let precision = sweep::CellPrecision { asked: 0.02, low: 0.91, high: 0.99, settled: true, reached: false };
    let adaptive = sweep::AggregateRow { precision: Some(precision), ..row.clone() };
    assert_eq!(sweep::AggregateRow::from(pb::AggregateRow::from(adaptive.clone())), adaptive);
    let irregular = sweep::AggregateRow { n: None, ..row };
    assert_eq!(sweep::AggregateRow::from(pb::AggregateRow::from(irregular.clone())), irregular);
}

fn sweep_status() -> sweep::SweepStatus {
    sweep::SweepStatus {
        sweep_id: "0123abcd".into(),
        name: "convert".into(),
        state: sweep::SweepState::Running,
        tasks_total: 100,
        tasks_done: 40,
        successes: 38,
        configurations: 3,
        impossible_configurations: 1,
        shards_failed: 2,
        created_unix_ms: 1_700_000_000_000,
        seed: Some(2025),
        started_unix_ms: Some(1_700_000_001_000),
        finished_unix_ms: None,
        runs: sweep::RunTimes {
            ended_ms: 60_000,
            current_from_unix_ms: Some(1_700_000_100_000),
            last_result_unix_ms: Some(1_700_000_160_000),
        },
        cpu_micros: Some(123_456),
        reused_cpu_micros: Some(23_456),
        contributors: vec![sweep::Contributor {
            name: "node-1".into(),
            version: "0.1.0".into(),
            build: "abc123-dirty".into(),
            host: "node-1.lab".into(),
            cpu: "Some CPU".into(),
            features: vec!["sse4.1".into(), "ssse3".into()],
            tasks: 40,
            cpu_micros: 123_456,
        }],
        error: None,
        spec_toml: "name = \"convert\"\n".into(),
        rate_per_sec: Some(12.5),
        eta: Some(std::time::Duration::from_millis(4800)),
        failed_shards: vec![sweep::FailedShard {
            shard_id: 7,
            config: 1,
            board: "5x5".into(),
            moves: "2,1".into(),
            start_lo: 0,
            start_hi: 4,
            error: "boom".into(),
        }],
        waiting: sweep::Waiting {
            shards: 2,
            memory_bytes: 1 << 30,
            labels: vec!["bigmem".into()],
            excluded: 3,
            behind: Some(2),
        },
        reuse: sweep::Reuse {
            tasks: 30,
            from: vec![sweep::ReusedFrom { sweep_id: "fedc".into(), name: "quick".into(), tasks: 30 }],
            conflicts: 1,
            no_reuse: false,
        },
        work: Some(sweep::Work {
            done_micros: 1.5e6,
            total_micros: 4e6,
            adaptive: Some(sweep::Cells { settled: 3, cells: 10, most_micros: 9e6 }),
        }),
    }
}

#[test]
fn sweep_statuses_round_trip() {
    let status = sweep_status();
    let wire = pb::SweepStatus::from(status.clone());
    assert_eq!(wire.state, pb::SweepState::Running as i32);
    assert_eq!((wire.eta_secs, wire.error.as_str()), (Some(4.8), ""));
    assert_eq!((wire.shards_waiting, wire.waiting_labels.len(), wire.failed_shards.len()), (2, 1, 1));
    assert_eq!(wire.waiting_excluded, 3);
    assert_eq!(
        (wire.started_unix_ms, wire.finished_unix_ms, wire.cpu_micros),
        (Some(1_700_000_001_000), None, Some(123_456))
    );
    let provenance = wire.contributors[0].provenance.as_ref().unwrap();
    assert_eq!((provenance.build.as_str(), provenance.features.len()), ("abc123-dirty", 2));
    assert_eq!(sweep::SweepStatus::try_from(wire).unwrap(), status);
    for state in [sweep::SweepState::Done, sweep::SweepState::Cancelled, sweep::SweepState::Failed] {
        let ended = sweep::SweepStatus {
            state,
            error: Some("some shards failed on every retry".into()),
            rate_per_sec: None,
            eta: None,
            failed_shards: Vec::new(),
            waiting: sweep::Waiting::default(),
            finished_unix_ms: Some(1_700_000_009_000),
            cpu_micros: None,
            contributors: Vec::new(),
            ..sweep_status()
        };
        assert_eq!(sweep::SweepStatus::try_from(pb::SweepStatus::from(ended.clone())).unwrap(), ended);
    }
}

#[test]
fn a_contributor_without_provenance_reads_as_not_recorded() {
    let wire = pb::Contributor { name: "old".into(), provenance: None, tasks: 3, cpu_micros: 9 };
    let c = sweep::Contributor::from(wire);
    assert_eq!((c.name.as_str(), c.tasks, c.cpu_micros, c.build_label()), ("old", 3, 9, String::new()));
}

#[test]
fn a_status_without_a_known_state_is_refused_by_name() {
    let unknown = pb::SweepStatus { state: 9, ..pb::SweepStatus::from(sweep_status()) };
    let e = sweep::SweepStatus::try_from(unknown).unwrap_err();
    assert_eq!(e.field(), "SweepStatus.state");
    assert!(matches!(e, ConvertError::UnknownValue { value: 9, .. }), "{e}");
    let e = sweep::SweepStatus::try_from(pb::SweepStatus::default()).unwrap_err();
    assert!(matches!(e, ConvertError::Missing { field: "SweepStatus.state" }), "{e}");
}

#[test]
fn a_status_with_a_bad_eta_or_failed_shard_is_refused_by_name() {
    let wire = pb::SweepStatus::from(sweep_status());
    for eta in [-1.0, f64::NAN, f64::INFINITY] {
        let bad = pb::SweepStatus { eta_secs: Some(eta), ..wire.clone() };
        assert_eq!(sweep::SweepStatus::try_from(bad).unwrap_err().field(), "SweepStatus.eta_secs");
    }
    let mut bad = wire;
    bad.failed_shards[0].start_lo = 5;
    assert_eq!(sweep::SweepStatus::try_from(bad).unwrap_err().field(), "FailedShard.start_hi");
}

#[test]
fn result_rows_round_trip() {
    let row = sweep::ResultRow {
        config: 2,
        moves: "2,1".into(),
        dims: 2,
        shape: "5x5".into(),
        method: "aw+".into(),
        start: vec![0, 3],
        start_index: 11,
        success: false,
        outcome: Some(tour::Outcome::NoTour),
        attempts: 3,
        visited: 24,
        micros: 17,
        worker: "node-1".into(),
        worker_version: "0.1.0 (abc123)".into(),
        worker_host: "node-1.lab".into(),
        worker_cpu: "Some CPU @ 3 GHz".into(),
        worker_features: "sse4.1 ssse3".into(),
        computed_by: "0123abcd".into(),
    };
    let wire = pb::ResultRow::from(row.clone());
    assert_eq!((wire.outcome, wire.error.as_str()), (pb::Outcome::NoTour as i32, ""));
    assert_eq!(sweep::ResultRow::try_from(wire).unwrap(), row);
    let old_worker = sweep::ResultRow { outcome: None, ..row };
    let wire = pb::ResultRow::from(old_worker.clone());
    assert_eq!(wire.outcome, pb::Outcome::Unspecified as i32);
    assert_eq!(sweep::ResultRow::try_from(wire).unwrap(), old_worker);
    let unknown = pb::ResultRow { outcome: 9, ..Default::default() };
    assert_eq!(sweep::ResultRow::try_from(unknown).unwrap_err().field(), "ResultRow.outcome");
}

#[test]
fn every_configuration_of_a_sweep_round_trips_through_a_shard() {
    let sweep = Sweep::parse(SPEC).unwrap();
    assert!(sweep.configurations().len() >= 3);
    for entry in sweep.configurations() {
        let starts: Vec<u64> = (0..entry.cells().min(4)).collect();
        let message = shard(7, 2, "sweep-id", &sweep, entry, sweep.methods(), &starts);
        assert_eq!((message.shard_id, message.epoch, message.sweep_id.as_str()), (7, 2, "sweep-id"));
        let work = ShardWork::try_from(&message).unwrap();
        assert_eq!(work.configuration, entry.configuration());
        assert_eq!(work.methods, sweep.methods());
        assert_eq!(work.starts, starts);
        assert_eq!((work.sweep_seed, work.budget, work.iterations), (5, 1234, sweep.iterations()));
    }
}

fn good_shard() -> pb::Shard {
    pb::Shard {
        config: Some(pb::BoardConfig { sides: vec![8, 8], rule: vec![2, 1], ..Default::default() }),
        methods: vec!["w".into()],
        starts: vec![0, 63],
        ..Default::default()
    }
}

#[test]
fn zeros_mean_the_engine_defaults() {
    let work = ShardWork::try_from(&good_shard()).unwrap();
    assert_eq!((work.budget, work.iterations), (tour::DEFAULT_BUDGET, tour::DEFAULT_ITERATIONS));
    assert_eq!(work.configuration.board().cells(), 64);
}

/// A change that breaks a good shard.
type Breakage = Box<dyn Fn(&mut pb::Shard)>;

#[test]
fn bad_shards_are_refused_naming_the_field() {
    let cases: Vec<(&str, Breakage)> = vec![
        ("Shard.config", Box::new(|s| s.config = None)),
        ("Shard.methods", Box::new(|s| s.methods = vec!["nope".into()])),
        ("Shard.starts", Box::new(|s| s.starts = vec![0, 64])),
        ("BoardConfig.sides", Box::new(|s| s.config.as_mut().unwrap().sides = vec![8, 0])),
        ("BoardConfig.sides", Box::new(|s| s.config.as_mut().unwrap().sides = vec![])),
        ("BoardConfig.sides", Box::new(|s| s.config.as_mut().unwrap().max_cells = 10)),
        ("BoardConfig.rule", Box::new(|s| s.config.as_mut().unwrap().rule = vec![0, 0])),
        ("BoardConfig.rule", Box::new(|s| s.config.as_mut().unwrap().moves_flat = vec![1, 2])),
        (
            "BoardConfig.moves_flat",
            Box::new(|s| {
                let c = s.config.as_mut().unwrap();
                c.rule.clear();
                c.moves_flat = vec![1, 2, 3];
            }),
        ),
        (
            "BoardConfig.moves_flat",
            Box::new(|s| {
                let c = s.config.as_mut().unwrap();
                c.rule.clear();
                c.moves_flat = vec![0, 0];
            }),
        ),
    ];
    for (field, break_it) in cases {
        let mut s = good_shard();
        break_it(&mut s);
        let e = ShardWork::try_from(&s).expect_err(field);
        assert_eq!(e.field(), field, "{e}");
        assert!(e.to_string().starts_with(field), "{e}");
    }
}
