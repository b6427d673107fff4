//! The diff's tests: tallies of agreeing and disagreeing starts, sides
//! missing, and the rows it prints.

use super::*;
use crate::SweepState;

fn sweep(seed: u64, n: &str) -> Sweep {
    Sweep::parse(&format!(
        "name = \"d\"\nseed = {seed}\nstarts = 2\nmethods = [\"w\", \"wr\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = {n}"
    ))
    .unwrap()
}

fn row(config: u32, shape: &str, method: &str, start: [u32; 2], outcome: tour::Outcome) -> ResultRow {
    ResultRow {
        config,
        moves: "2,1".into(),
        dims: 2,
        shape: shape.into(),
        method: method.into(),
        start: start.to_vec(),
        start_index: 0,
        success: outcome == tour::Outcome::Tour,
        outcome: Some(outcome),
        attempts: 1,
        visited: 1,
        micros: 1,
        worker: String::new(),
        worker_version: String::new(),
        worker_host: String::new(),
        worker_cpu: String::new(),
        worker_features: String::new(),
        computed_by: String::new(),
    }
}

fn line(id: &str) -> SweepLine {
    SweepLine {
        sweep_id: id.into(),
        name: "d".into(),
        state: SweepState::Done,
        tasks_done: 4,
        tasks_total: 4,
        created_unix_ms: 0,
    }
}

/// Configurations match by identity (B's 5x5 is its second), methods by
/// name; accuracy is each sweep's own, and only starts both ran count.
#[test]
fn pairs_in_both_are_compared_start_by_start() {
    use tour::Outcome::{GaveUp, Tour};
    let (a, b) = (sweep(1, "[5]"), sweep(2, "[4, 5]"));
    let mut diff = DiffBuilder::new(&a, &b);
    for r in [row(0, "5x5", "w", [0, 0], Tour), row(0, "5x5", "wr", [0, 0], Tour), row(0, "5x5", "wr", [2, 2], Tour)] {
        diff.add(Side::A, &r);
    }
    for r in [
        row(1, "5x5", "w", [0, 0], Tour),
        row(1, "5x5", "wr", [0, 0], GaveUp),
        row(1, "5x5", "wr", [4, 4], GaveUp),
        row(0, "4x4", "w", [0, 0], Tour),
    ] {
        diff.add(Side::B, &r);
    }
    let diff = diff.finish(line("aaaaaaaa11"), line("bbbbbbbb22"));
    assert_eq!((diff.rows.len(), diff.only_a, diff.only_b), (2, 0, 1));
    let wr = &diff.rows[1];
    assert_eq!(
        (wr.method.as_str(), wr.a, wr.b),
        ("wr", Tally { tasks: 2, successes: 2 }, Tally { tasks: 2, successes: 0 })
    );
    assert_eq!((wr.difference(), wr.both_ran), (-100.0, 1));
    assert_eq!(wr.differing, [StartDiff { start: vec![0, 0], a: "tour", b: "gave-up" }]);
    assert!(diff.rows[0].differing.is_empty());
    let text = diff.text();
    assert!(text.contains("2 (configuration, method) pairs in both; 0 only in A, 1 only in B"), "{text}");
    assert!(text.contains("2,1    5x5    wr      2        100.0  2        0.0    -100.0  1         1"), "{text}");
    assert!(text.contains("  2,1 5x5 wr start 0,0: tour -> gave-up"), "{text}");
    let csv = diff.csv();
    assert!(csv.lines().nth(2).unwrap().ends_with(",2,2,100.0000,2,0,0.0000,-100.0000,1,1,\"0,0\""), "{csv}");
    let json: serde_json::Value = serde_json::from_str(&diff.json()).unwrap();
    assert_eq!(json["rows"][1]["differing"][0]["b"], "gave-up");
    assert_eq!(json["rows"][1]["difference"], -100.0);
}
