//! Existence facts: tours found and boards refuted, with their evidence.

use super::*;

#[test]
fn a_tour_found_is_a_stored_fact_with_its_evidence() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(FACTS_SPEC).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    store.record(&[proof(rec.key, 11, 0, tour::Outcome::GaveUp)]).unwrap();
    assert_eq!(store.facts(&board_key(&sweep)).unwrap(), Facts::default(), "a heuristic's failure proves nothing");
    store.record(&[proof(rec.key, 12, 0, tour::Outcome::Tour), proof(rec.key, 13, 0, tour::Outcome::Tour)]).unwrap();
    let facts = store.facts(&board_key(&sweep)).unwrap();
    let want = format!("a tour from (1,2) found by `w v1` in sweep {}", sweep.id());
    assert_eq!(facts.open, Some(Fact::Exists(want)), "the first tour of the batch");
    assert_eq!(facts.closed, None, "an open-tour method's tour says nothing of closed ones");
    let rows = store.aggregates(&rec, &sweep).unwrap();
    // The atlas says (3,2) 10x10 has closed tours.
    assert!(rows.iter().all(|r| r.open_tour == "exists" && r.closed_tour == "exists"), "{rows:?}");
}

#[test]
fn every_start_refuted_makes_a_board_impossible_and_survives_reopening() {
    let dir = temp();
    let path = dir.path().join("s.db");
    // A move set outside the atlas (the (3,2) leaper and (3,0)), which
    // nothing proves either way: only the stored results speak.
    let moves = "moves = [[3, 2], [3, -2], [-3, 2], [-3, -2], [2, 3], [-2, 3], [2, -3], [-2, -3], [3, 0], [-3, 0]]";
    let sweep = Sweep::parse(&FACTS_SPEC.replace("rule = [3, 2]", moves)).unwrap();
    let key = board_key(&sweep);
    {
        let mut store = Store::open(&path).unwrap();
        store.keep();
        let (rec, _) = store.insert_sweep(&sweep).unwrap();
        let refuted: Vec<ResultRecord> = (0..99).map(|s| proof(rec.key, s, 1, tour::Outcome::NoTour)).collect();
        store.record(&refuted).unwrap();
        assert_eq!(store.facts(&key).unwrap(), Facts::default(), "99 of 100 starts prove nothing");
        assert_eq!(store.impossible_by_facts(rec.key.0, &sweep).unwrap(), 0);
        store.record(&[proof(rec.key, 99, 1, tour::Outcome::NoTour)]).unwrap();
    }
    let store = Store::open_read_only(&path).unwrap();
    let facts = store.facts(&key).unwrap();
    let want =
        format!("no open tour from all 100 starts, proven by `solve v1 budget 100000000 open` in sweep {}", sweep.id());
    assert_eq!(facts.open, Some(Fact::Impossible(want)));
    assert!(matches!(facts.closed, Some(Fact::Impossible(_))), "{facts:?}");
    let rec = store.resolve(None).unwrap();
    let rows = store.aggregates(&rec, &sweep).unwrap();
    assert!(rows.iter().all(|r| r.no_open_tour() && r.closed_tour == "impossible"), "{rows:?}");
    assert_eq!(store.impossible_by_facts(rec.key.0, &sweep).unwrap(), 1);
    // Another order of the same moves is the same board and move set.
    let c = sweep.configurations()[0].configuration();
    let mut list: Vec<Vec<i64>> = c.moves().iter().map(|m| m.iter().map(|&x| i64::from(x)).collect()).collect();
    list.reverse();
    let reordered = sweep::board_moves(&[10, 10], &tour::Moves::explicit(&list, 2).unwrap());
    assert_eq!(store.facts(&reordered).unwrap(), facts);
}

#[test]
fn a_closed_tour_refuted_from_one_start_is_no_closed_tour() {
    let mut store = Store::in_memory().unwrap();
    let spec = FACTS_SPEC
        .replace("methods = [\"w\", \"solve\"]", "methods = [\"solve\"]\n    closed = true")
        .replace("rule = [3, 2]", "rule = [4, 3]");
    let sweep = Sweep::parse(&spec).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    store.record(&[proof(rec.key, 4, 0, tour::Outcome::NoTour)]).unwrap();
    let facts = store.facts(&board_key(&sweep)).unwrap();
    assert_eq!(facts.open, None, "no closed tour through a cell says nothing of open ones");
    match facts.closed {
        Some(Fact::Impossible(why)) => assert!(why.contains("no closed tour passes through (0,4)"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_fact_against_the_atlas_is_an_error_and_nothing_of_its_batch_is_stored() {
    let mut store = Store::in_memory().unwrap();
    // The atlas: (3,2) 10x10 has tours; (4,3) 10x10 has none.
    let sweep = Sweep::parse(FACTS_SPEC).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let refuted: Vec<ResultRecord> = (0..100).map(|s| proof(rec.key, s, 1, tour::Outcome::NoTour)).collect();
    let err = store.record(&refuted).unwrap_err().to_string();
    assert!(err.contains("contradicts the atlas") && err.contains("not stored"), "{err}");
    assert_eq!(store.facts(&board_key(&sweep)).unwrap(), Facts::default());
    assert_eq!(store.record(&refuted[..10]).unwrap(), 10, "the failed batch wrote none of its rows");

    let sweep = Sweep::parse(&FACTS_SPEC.replace("rule = [3, 2]", "rule = [4, 3]")).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let err = store.record(&[proof(rec.key, 3, 0, tour::Outcome::Tour)]).unwrap_err().to_string();
    assert!(err.contains("contradicts the atlas"), "{err}");
    assert_eq!(store.facts(&board_key(&sweep)).unwrap(), Facts::default());
}

/// A move set nothing proves either way (the (3,2) leaper and (3,0)).
const UNPROVEN_MOVES: &str =
    "moves = [[3, 2], [3, -2], [-3, 2], [-3, -2], [2, 3], [-2, 3], [2, -3], [-2, -3], [3, 0], [-3, 0]]";

#[test]
fn a_start_one_method_refutes_leaves_every_methods_denominator() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(&FACTS_SPEC.replace("rule = [3, 2]", UNPROVEN_MOVES)).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let k = rec.key;
    use tour::Outcome::{GaveUp, NoTour, Tour};
    store
        .record(&[
            // Start 0: solve refutes it, so w's failure there is not w's fault.
            proof(k, 0, 0, GaveUp),
            proof(k, 0, 1, NoTour),
            // Start 1: solve finds a tour w missed.
            proof(k, 1, 0, GaveUp),
            proof(k, 1, 1, Tour),
            // Start 2: nobody settles it.
            proof(k, 2, 0, GaveUp),
            proof(k, 2, 1, GaveUp),
            // Start 3: w's tour settles it for solve too.
            proof(k, 3, 0, Tour),
            proof(k, 3, 1, GaveUp),
            // Start 4: solve has not run yet.
            proof(k, 4, 0, GaveUp),
        ])
        .unwrap();
    let rows = store.aggregates(&rec, &sweep).unwrap();
    let (w, solve) = (&rows[0], &rows[1]);
    assert_eq!((w.method.as_str(), w.tasks, w.successes, w.refuted, w.unsettled), ("w", 5, 1, 1, Some(2)), "{w:?}");
    assert_eq!((solve.tasks, solve.successes, solve.refuted, solve.unsettled), (4, 1, 1, Some(1)), "{solve:?}");
    assert_eq!(w.accuracy(), Some(20.0));
    assert_eq!(w.accuracy_possible(), Some(25.0), "1 tour among the 4 starts not refuted");
    assert_eq!(w.denominator(sweep::Metric::AccuracyPossible), 4);
    assert_eq!(solve.accuracy_possible(), Some(100.0 / 3.0));
    let table = sweep::render(
        &rows,
        &sweep::TableOptions {
            metric: sweep::Metric::AccuracyPossible,
            layout: sweep::TableLayout::ByMethods,
            ..sweep::TableOptions::default()
        },
    );
    assert!(table.contains("accuracy among starts from which a tour exists (%)"), "{table}");
    assert!(table.contains("9 run, less 2 refuted") && table.contains("the 3 no method settled stay in"), "{table}");
}

#[test]
fn a_closed_refutation_anywhere_refutes_every_start() {
    let mut store = Store::in_memory().unwrap();
    let spec = FACTS_SPEC
        .replace("rule = [3, 2]", UNPROVEN_MOVES)
        .replace("methods = [\"w\", \"solve\"]", "methods = [\"bt\", \"solve\"]\n    closed = true");
    let sweep = Sweep::parse(&spec).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let k = rec.key;
    use tour::Outcome::{GaveUp, NoTour};
    store.record(&[proof(k, 0, 0, GaveUp), proof(k, 1, 0, GaveUp), proof(k, 2, 1, NoTour)]).unwrap();
    let rows = store.aggregates(&rec, &sweep).unwrap();
    let (bt, solve) = (&rows[0], &rows[1]);
    assert!(bt.closed && solve.closed);
    // No closed tour through start 2 is none at all: bt's starts 0 and 1 are refuted too.
    assert_eq!(bt.closed_tour, "impossible");
    assert_eq!((bt.refuted, bt.starts_refuted(), bt.accuracy_possible()), (0, 2, None), "{bt:?}");
    assert_eq!((solve.starts_refuted(), solve.accuracy_possible()), (1, None), "{solve:?}");
}
