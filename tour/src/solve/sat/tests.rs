//! The SAT route against `bt`, from every start and from anywhere, and on
//! a board the searches over paths cannot exhaust.

use super::*;
use crate::backtrack::search_closed;
use crate::layout::Layout;
use crate::moves::Colouring;
use crate::{verify, verify_closed, Board, Moves};

/// Small boards, bipartite or not, with tours and without.
fn boards() -> Vec<(Moves, &'static [u32])> {
    let king: Vec<Vec<i64>> =
        (-1..=1).flat_map(|x| (-1..=1).map(move |y| vec![x, y])).filter(|v| v != &vec![0, 0]).collect();
    vec![
        (Moves::from_rule(&[2, 1], 2).unwrap(), &[3, 4]),
        (Moves::from_rule(&[2, 1], 2).unwrap(), &[4, 4]),
        (Moves::from_rule(&[2, 1], 2).unwrap(), &[5, 5]),
        (Moves::from_rule(&[2, 1], 2).unwrap(), &[3, 7]),
        (Moves::from_rule(&[2, 1], 2).unwrap(), &[6, 6]),
        (Moves::from_rule(&[2, 1], 3).unwrap(), &[2, 3, 4]),
        (Moves::from_rule(&[3, 2], 2).unwrap(), &[5, 6]),
        (Moves::from_rule(&[4, 1], 2).unwrap(), &[5, 6]),
        (Moves::from_rule(&[1, 2, 2], 3).unwrap(), &[3, 3, 3]),
        (Moves::from_rule(&[1], 2).unwrap(), &[3, 5]),
        (Moves::explicit(&king, 2).unwrap(), &[3, 3]),
        (Moves::explicit(&king, 2).unwrap(), &[2, 5]),
        (Moves::from_rule(&[3, 1], 2).unwrap(), &[4, 5]),
    ]
}

/// On every start of small boards, open and closed, bipartite or not,
/// the SAT route settles exactly what `bt` settles, and its tours are
/// tours: a cut never removes the last tour.
#[test]
fn agrees_with_bt_on_every_start() {
    let boards = boards();
    let (mut tours, mut none) = (0, 0);
    for (moves, sides) in &boards {
        let board = Board::new(sides).unwrap();
        let layout = Layout::new(&board, moves).unwrap();
        let g = Graph::new(layout.clone(), true);
        let bipartite = moves.colouring() == Colouring::AlwaysChanges;
        for closed in [false, true] {
            for start in 0..board.cells() {
                let bt = search_closed(&board, moves, start, closed, u64::MAX);
                let found = search(&g, layout.padded(start), closed, bipartite, u64::MAX, Cancel::NEVER);
                let at = format!("{moves:?} on {board} from {start}, closed {closed}");
                assert_eq!(found.outcome, bt.outcome, "{at}");
                if let Some(p) = found.path {
                    let p: Vec<u64> = p.iter().map(|&c| layout.unpadded(c as usize)).collect();
                    assert_eq!(p[0], start, "{at}");
                    let ok = if closed { verify_closed(&board, moves, &p) } else { verify(&board, moves, &p) };
                    ok.unwrap_or_else(|e| panic!("{at}: {e}"));
                    tours += 1;
                } else {
                    none += 1;
                }
            }
        }
    }
    assert!(tours > 150 && none > 150, "both answers occur: {tours} tours, {none} none");
}

/// On the same boards, the search for an open tour from any start finds
/// one exactly where `bt` finds one from some start.
#[test]
fn anywhere_agrees_with_bt() {
    let (mut some, mut none) = (0, 0);
    for (moves, sides) in &boards() {
        let board = Board::new(sides).unwrap();
        let layout = Layout::new(&board, moves).unwrap();
        let g = Graph::new(layout.clone(), true);
        let bipartite = moves.colouring() == Colouring::AlwaysChanges;
        let bt = (0..board.cells()).any(|s| search_closed(&board, moves, s, false, u64::MAX).outcome == Outcome::Tour);
        // On a board of odd cells, a bipartite leaper's tour runs between
        // majority (even) cells.
        let ends: Vec<usize> =
            g.board_cells().filter(|&c| !bipartite || board.cells().is_multiple_of(2) || g.is_even(c)).collect();
        let found = search_anywhere(&g, &ends, bipartite, u64::MAX, Cancel::NEVER);
        assert_eq!(found.outcome == Outcome::Tour, bt, "{moves:?} on {board}");
        assert_ne!(found.outcome, Outcome::GaveUp);
        if bt {
            some += 1
        } else {
            none += 1
        }
    }
    assert!(some > 3 && none > 3, "both answers occur: {some} with, {none} without");
}

/// The boards whose starts the searches over paths could not settle
/// within 10^9 work: (4,3) 24x24 from (1,0) has no open tour (checked
/// independently with CaDiCaL on the same cuts).
#[test]
fn refutes_what_path_searches_cannot() {
    let board = Board::new(&[24, 24]).unwrap();
    let moves = Moves::from_rule(&[4, 3], 2).unwrap();
    let layout = Layout::new(&board, &moves).unwrap();
    let g = Graph::new(layout.clone(), true);
    let start = board.index_of(&[1, 0]).unwrap();
    let found = search(&g, layout.padded(start), false, true, 200_000, Cancel::NEVER);
    assert_eq!(found.outcome, Outcome::NoTour);
}
