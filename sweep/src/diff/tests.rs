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
    let text = diff.text(false);
    assert!(text.contains("2 (configuration, method) pairs in both; 0 only in A, 1 only in B"), "{text}");
    assert!(text.contains("\n2 pairs: 1 equal, 1 differ (0 significantly"), "{text}");
    assert!(text.contains("specs differ (A -> B):\n  grid[0].n: [5] -> [4, 5]\n  seed: 1 -> 2\n"), "{text}");
    assert!(text.contains("2,1    5x5    wr      2        100.0  2        0.0    -100.0  1         1"), "{text}");
    assert!(text.contains("  2,1 5x5 wr start 0,0: tour -> gave-up"), "{text}");
    let csv = diff.csv(false);
    assert!(csv.lines().nth(2).unwrap().ends_with(",2,2,100.0000,2,0,0.0000,-100.0000,false,1,1,\"0,0\""), "{csv}");
    let json: serde_json::Value = serde_json::from_str(&diff.json(false)).unwrap();
    assert_eq!(json["rows"][1]["differing"][0]["b"], "gave-up");
    assert_eq!(json["rows"][1]["difference"], -100.0);
    assert_eq!(json["spec_changes"][1], serde_json::json!({"field": "seed", "a": "1", "b": "2"}));
    assert_eq!(json["summary"], serde_json::json!({"pairs": 2, "equal": 1, "differ": 1, "significant": 0}));
}

/// Results of `method` on 5x5 for side `side`: `tours` of `starts` starts
/// found a tour, the rest gave up.
fn results(diff: &mut DiffBuilder, side: Side, method: &str, starts: u32, tours: u32) {
    for i in 0..starts {
        let outcome = if i < tours { tour::Outcome::Tour } else { tour::Outcome::GaveUp };
        diff.add(side, &row(0, "5x5", method, [i / 5, i % 5], outcome));
    }
}

/// Equal pairs are counted but, asked, not listed; a difference whose
/// intervals do not overlap is significant and marked.
#[test]
fn equal_pairs_are_counted_and_can_be_left_out() {
    let (a, b) = (sweep(1, "[5]"), sweep(1, "[5]"));
    let mut diff = DiffBuilder::new(&a, &b);
    // w: 20 of 25 in both. wr: 25 of 25 against 2 of 25.
    results(&mut diff, Side::A, "w", 25, 20);
    results(&mut diff, Side::B, "w", 25, 20);
    results(&mut diff, Side::A, "wr", 25, 25);
    results(&mut diff, Side::B, "wr", 25, 2);
    let diff = diff.finish(line("aaaaaaaa11"), line("bbbbbbbb22"));
    assert_eq!(diff.summary(), DiffSummary { pairs: 2, equal: 1, differ: 1, significant: 1 });
    assert!(diff.spec_changes.is_empty());
    let all = diff.text(false);
    assert!(all.contains("specs: the same\n") && all.contains("2,1    5x5    w  "), "{all}");
    assert!(all.contains("-92.0*") && all.contains("* significant: the two 95 % Wilson intervals"), "{all}");
    let only = diff.text(true);
    assert!(only.contains("2 pairs: 1 equal, 1 differ (1 significantly"), "{only}");
    assert!(only.contains("the 1 equal pairs are not listed (--only-differences)"), "{only}");
    assert!(!only.contains("2,1    5x5    w  ") && only.contains(" wr "), "{only}");
    assert_eq!(diff.csv(true).lines().count(), 2, "header and wr");
    let json: serde_json::Value = serde_json::from_str(&diff.json(true)).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), 1);
    assert_eq!(
        (json["rows"][0]["method"].as_str(), json["rows"][0]["significant"].as_bool()),
        (Some("wr"), Some(true))
    );
    assert_eq!(json["summary"]["pairs"], 2);
}

/// A start both ran with other flags makes a pair differ even when the
/// accuracies are the same.
#[test]
fn other_flags_at_equal_accuracy_differ() {
    use tour::Outcome::{GaveUp, Tour};
    let (a, b) = (sweep(1, "[5]"), sweep(2, "[5]"));
    let mut diff = DiffBuilder::new(&a, &b);
    diff.add(Side::A, &row(0, "5x5", "w", [0, 0], Tour));
    diff.add(Side::A, &row(0, "5x5", "w", [1, 1], GaveUp));
    diff.add(Side::B, &row(0, "5x5", "w", [0, 0], GaveUp));
    diff.add(Side::B, &row(0, "5x5", "w", [1, 1], Tour));
    let diff = diff.finish(line("aaaaaaaa11"), line("bbbbbbbb22"));
    assert_eq!((diff.rows[0].difference(), diff.rows[0].differs()), (0.0, true));
}

/// Specs are compared canonically, field by field: a grid only B has is
/// one change, `n` written out of order is no change, and a long value is
/// cut short.
#[test]
fn spec_changes_name_each_field() {
    let spec = |extra: &str, starts: &str| {
        Sweep::parse(&format!(
            "name = \"d\"\nseed = 1\nstarts = {starts}\nmethods = [\"w\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\n\
             n = [6, 5]\n{extra}"
        ))
        .unwrap()
    };
    let a = spec("", "2");
    let b = spec("[[grid]]\nrule = [3, 2]\ndims = [2]\nn = [7]\n", "3");
    let changes = spec_changes::spec_changes(a.spec(), b.spec());
    let fields: Vec<&str> = changes.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(fields, ["grid[1]", "starts"], "{changes:?}");
    assert_eq!((changes[0].a.as_str(), changes[1].a.as_str(), changes[1].b.as_str()), ("(not set)", "2", "3"));
    assert!(changes[0].b.contains("rule = [3, 2]"), "{changes:?}");
    // n = [6, 5] is n = [5, 6].
    let same = Sweep::parse(&a.canonical_toml()).unwrap();
    assert!(spec_changes::spec_changes(a.spec(), same.spec()).is_empty());
}

#[test]
fn a_long_value_is_cut_short_with_its_length() {
    let starts = toml::Value::Array((0..1000).map(toml::Value::Integer).collect());
    let shown = spec_changes::shown(Some(&starts));
    assert!(shown.starts_with("[0, 1, 2, ") && shown.ends_with("... (1000 items)"), "{shown}");
    assert_eq!(spec_changes::shown(None), "(not set)");
}
