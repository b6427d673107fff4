//! `tour::exists::decide`: theorems and the atlas answer at once, a search
//! (the atlas set aside) finds tours that verify on their own, a
//! refutation comes from two routes, and a raised flag ends the search
//! with "unknown".

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tour::exists::{decide, decide_with, Claim, Decision};
use tour::{verify, verify_closed, Board, Cancel, Configuration, Moves};

fn config(rule: &[u32], sides: &[u32]) -> Configuration {
    let board = Board::new(sides).unwrap();
    let moves = Moves::from_rule(rule, sides.len()).unwrap();
    Configuration::new(board, moves).unwrap()
}

/// `decide` without the atlas, with a flag raised after `limit`, so that
/// no test can hang.
fn search_within(c: &Configuration, closed: bool, limit: Duration) -> Decision {
    tour::within(limit, |cancel| decide_with(c, closed, false, cancel)).unwrap()
}

#[test]
fn theorems_answer_without_search() {
    let stop = AtomicBool::new(true); // no time at all
    let knight = config(&[2, 1], &[8, 8]);
    for closed in [false, true] {
        let d = decide(&knight, closed, Cancel::new(&stop)).unwrap();
        assert!(matches!(d, Decision::Known { claim: Claim::Exists(_), second: None }), "{d:?}");
    }
    let d = decide(&config(&[2, 1], &[4, 4]), false, Cancel::new(&stop)).unwrap();
    assert!(matches!(d, Decision::Known { claim: Claim::Impossible(_), .. }), "{d:?}");
}

/// A theorem's or an argument's "no tour" is checked by a second,
/// independent proof: one needing no search, else a refutation route.
#[test]
fn a_cited_refutation_gets_a_second_proof() {
    let cases: [(&[u32], &[u32], bool); 8] = [
        (&[2, 1], &[4, 4], false),
        (&[2, 1], &[3, 6], false),
        (&[2, 1], &[4, 7], true),
        (&[2, 1], &[4, 40], true),
        (&[2, 1], &[5, 5], true),
        (&[2, 1], &[3, 3, 3], false),
        (&[2, 2], &[6, 6], false),
        (&[3, 1], &[9, 9], true),
    ];
    for (rule, sides, closed) in cases {
        let d = tour::within(Duration::from_secs(60), |cancel| decide(&config(rule, sides), closed, cancel)).unwrap();
        let Decision::Known { claim: Claim::Impossible(why), second: Some(second) } = d else {
            panic!("{rule:?} {sides:?} closed {closed}: {d:?}");
        };
        assert!(!why.is_empty(), "{rule:?} {sides:?}: {second:?}");
    }
}

#[test]
fn a_found_tour_verifies_on_its_own() {
    // No theorem covers these leapers; each board has tours of both kinds.
    for (rule, sides) in [([3, 2], [10, 10]), ([4, 1], [10, 10]), ([5, 2], [14, 14])] {
        let c = config(&rule, &sides);
        for closed in [false, true] {
            let Decision::Tour { path, .. } = search_within(&c, closed, Duration::from_secs(60)) else {
                panic!("{rule:?} {sides:?} closed {closed}: no tour within a minute");
            };
            let checked =
                if closed { verify_closed(c.board(), c.moves(), &path) } else { verify(c.board(), c.moves(), &path) };
            assert_eq!(checked, Ok(()), "{rule:?} {sides:?} closed {closed}");
        }
    }
}

#[test]
fn a_refutation_names_two_routes_that_both_ran_to_their_end() {
    // (4,1) 8x8 and (3,2) 12x12: no theorem, and no tour of either kind.
    for (rule, sides) in [([4, 1], [8, 8]), ([3, 2], [12, 12])] {
        let c = config(&rule, &sides);
        for closed in [false, true] {
            let d = search_within(&c, closed, Duration::from_secs(120));
            let Decision::Refuted { starts, searched, routes } = d else {
                panic!("{rule:?} {sides:?} closed {closed}: {d:?}");
            };
            assert_eq!(starts, if closed { 1 } else { c.board().cells() });
            assert!(searched >= 1 && searched <= starts);
            assert_ne!(routes[0].0, routes[1].0, "two different routes");
        }
    }
}

#[test]
fn a_raised_flag_gives_unknown_with_what_was_spent() {
    let stop = AtomicBool::new(true);
    for closed in [false, true] {
        let d = decide_with(&config(&[3, 2], &[10, 10]), closed, false, Cancel::new(&stop)).unwrap();
        assert!(matches!(d, Decision::Unknown { starts_tried: 0, refuted: 0, .. }), "{d:?}");
    }
}

#[test]
fn the_atlas_answers_at_once() {
    let stop = AtomicBool::new(true); // no time to search
    let cancel = Cancel::new(&stop);
    for closed in [false, true] {
        let d = decide(&config(&[4, 1], &[8, 8]), closed, cancel).unwrap();
        assert!(matches!(d, Decision::Atlas(_)), "{d:?}");
        // 10x14 and 14x10 are one board of the atlas (sides ascending):
        // its tour is carried to either axis order and verifies there.
        for sides in [[10, 14], [14, 10]] {
            let c = config(&[4, 1], &sides);
            let Decision::Tour { path, .. } = decide(&c, closed, cancel).unwrap() else {
                panic!("(4,1) {sides:?} closed {closed}: no tour from the atlas");
            };
            let checked =
                if closed { verify_closed(c.board(), c.moves(), &path) } else { verify(c.board(), c.moves(), &path) };
            assert_eq!(checked, Ok(()), "{sides:?} closed {closed}");
        }
    }
}
