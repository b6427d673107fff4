//! The board-wide refutation: it refutes exactly the boards without an
//! open tour, and keeps no answer of a cancelled search.

use std::sync::atomic::AtomicBool;

use super::*;
use crate::backtrack::search_closed;

/// The refutation of a whole board, symmetries and root checks
/// included, answers as `bt` from every start does: no open tour from
/// anywhere exactly where it proves none.
#[test]
fn refutes_exactly_the_boards_without_an_open_tour() {
    let king: Vec<Vec<i64>> =
        (-1..=1).flat_map(|x| (-1..=1).map(move |y| vec![x, y])).filter(|v| v != &vec![0, 0]).collect();
    let cases: Vec<(Moves, &[u32])> = vec![
        (Moves::from_rule(&[2, 1], 2).unwrap(), &[3, 3]),
        (Moves::from_rule(&[2, 1], 2).unwrap(), &[3, 4]),
        (Moves::from_rule(&[2, 1], 2).unwrap(), &[4, 4]),
        (Moves::from_rule(&[2, 1], 2).unwrap(), &[5, 5]),
        (Moves::from_rule(&[2, 1], 2).unwrap(), &[6, 6]),
        (Moves::from_rule(&[2, 1], 2).unwrap(), &[3, 6]),
        (Moves::from_rule(&[2, 1], 3).unwrap(), &[2, 3, 4]),
        (Moves::from_rule(&[2, 1], 3).unwrap(), &[2, 2, 4]),
        (Moves::from_rule(&[3, 2], 2).unwrap(), &[5, 6]),
        (Moves::from_rule(&[4, 1], 2).unwrap(), &[5, 6]),
        (Moves::from_rule(&[4, 1], 2).unwrap(), &[6, 6]),
        (Moves::from_rule(&[1, 2, 2], 3).unwrap(), &[3, 3, 3]),
        (Moves::from_rule(&[1], 2).unwrap(), &[4, 4]),
        (Moves::explicit(&king, 2).unwrap(), &[3, 3]),
    ];
    let (mut with, mut without) = (0, 0);
    for (moves, sides) in &cases {
        let board = Board::new(sides).unwrap();
        let g = Graph::new(layout(&board, moves).unwrap(), true);
        let bipartite = moves.colouring() == Colouring::AlwaysChanges;
        let bt = (0..board.cells()).any(|s| search_closed(&board, moves, s, false, u64::MAX).outcome == Outcome::Tour);
        let r = Refutation::search(&g, moves, false, bipartite, u64::MAX, Cancel::NEVER);
        assert_eq!(r.none, !bt, "{moves:?} on {board}");
        if bt {
            with += 1
        } else {
            without += 1
        }
    }
    assert!(with >= 5 && without >= 3, "both answers occur: {with} with a tour, {without} without");
}

/// What a cancelled task's search found is not kept (it stopped part
/// way, and may even look like a proof): the next task searches again.
#[test]
fn a_cancelled_search_is_not_kept() {
    let raised = AtomicBool::new(true);
    // (2,1) 6x6 has open tours; a refutation stopped before it looked
    // at any end would say there are none.
    let (board, moves) = (Board::new(&[6, 6]).unwrap(), Moves::from_rule(&[2, 1], 2).unwrap());
    let g = Graph::new(layout(&board, &moves).unwrap(), true);
    let shared = Shared::default();
    let _ = shared.refuted(&g, &moves, false, true, 1 << 30, Cancel::new(&raised));
    assert_eq!(shared.refuted(&g, &moves, false, true, 1 << 30, Cancel::NEVER), None);
    // (2,1) 40x40's starts read one closed tour, searched for once.
    let (board, moves) = (Board::new(&[40, 40]).unwrap(), Moves::from_rule(&[2, 1], 2).unwrap());
    let shared = Shared::default();
    let _ = shared.solve_within(&board, &moves, 5, false, 1, 1 << 20, Cancel::new(&raised));
    let after = shared.solve(&board, &moves, 5, false, 1, 1 << 20);
    assert_eq!(after.phase, Phase::Shared);
    assert_eq!(after, Shared::default().solve(&board, &moves, 5, false, 1, 1 << 20));
}
