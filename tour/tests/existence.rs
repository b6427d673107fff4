//! No existence claim contradicts an exhaustive search: on every small board
//! in 2D and 3D (the knight up to 40 cells in 2D and 36 in 3D), for several
//! leapers, `bt` classifies every start, and
//! - "open tour exists" means some start has a tour, "impossible" none;
//! - "closed tour exists" means every start has an (open) tour.

use tour::backtrack::search;
use tour::exists::{known, Claim};
use tour::{Board, Moves, Outcome};

/// Every shape of `dims` non-decreasing sides with at most `max_cells` cells.
fn shapes(dims: usize, max_cells: u64) -> Vec<Vec<u32>> {
    fn extend(prefix: &mut Vec<u32>, dims: usize, cells: u64, max_cells: u64, out: &mut Vec<Vec<u32>>) {
        if prefix.len() == dims {
            out.push(prefix.clone());
            return;
        }
        let mut side = prefix.last().copied().unwrap_or(1);
        while cells * side as u64 <= max_cells {
            prefix.push(side);
            extend(prefix, dims, cells * side as u64, max_cells, out);
            prefix.pop();
            side += 1;
        }
    }
    let mut out = Vec::new();
    extend(&mut Vec::new(), dims, 1, max_cells, &mut out);
    out
}

#[test]
fn no_claim_contradicts_exhaustive_search() {
    let cases: Vec<(Vec<u32>, usize, u64)> = vec![
        (vec![2, 1], 2, 40),
        (vec![3, 2], 2, 25),
        (vec![1], 2, 16),
        (vec![2, 2], 2, 16),
        (vec![3, 1], 2, 16),
        (vec![2, 1], 3, 36),
        (vec![1, 2, 2], 3, 24),
    ];
    let mut checked = 0;
    let mut claims = 0;
    for (rule, dims, max_cells) in cases {
        for sides in shapes(dims, max_cells) {
            let board = Board::new(&sides).unwrap();
            let moves = Moves::from_rule(&rule, dims).unwrap();
            let e = known(&board, &moves);
            let mut tours = 0u64;
            for start in 0..board.cells() {
                let r = search(&board, &moves, start, u64::MAX);
                assert_ne!(r.outcome, Outcome::GaveUp, "bt must classify {rule:?} on {sides:?} from {start}");
                tours += (r.outcome == Outcome::Tour) as u64;
            }
            let shape = format!("{rule:?} on {sides:?}");
            match e.open {
                Claim::Exists(why) => assert!(tours > 0, "{shape}: open tours claimed ({why}) but bt finds none"),
                Claim::Impossible(why) => assert_eq!(tours, 0, "{shape}: no open tour claimed ({why})"),
                Claim::Unknown => {}
            }
            if let Claim::Exists(why) = e.closed {
                assert_eq!(tours, board.cells(), "{shape}: a closed tour ({why}) gives tours from every start");
            }
            claims += (e.open != Claim::Unknown) as u32 + (e.closed != Claim::Unknown) as u32;
            checked += 1;
        }
    }
    eprintln!("{checked} boards, {claims} claims checked against bt");
    assert!(checked > 60, "only {checked} boards checked");
    assert!(claims > 60, "only {claims} claims tested");
}
