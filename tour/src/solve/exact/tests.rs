//! The cover-pruned search against `bt`: the same answer from every start
//! of small boards.

use super::*;
use crate::backtrack::search_closed;
use crate::layout::Layout;
use crate::{verify, verify_closed, Board, Moves};

/// On every start of small bipartite boards, open and closed, the
/// cover-pruned search settles exactly what `bt` settles, and its
/// tours are tours: its pruning never drops the last tour of a branch.
#[test]
fn agrees_with_bt_on_every_start() {
    let boards: &[(&[u32], &[u32])] = &[
        (&[2, 1], &[3, 4]),
        (&[2, 1], &[4, 4]),
        (&[2, 1], &[5, 5]),
        (&[2, 1], &[3, 7]),
        (&[2, 1], &[5, 6]),
        (&[2, 1], &[6, 6]),
        (&[2, 1], &[3, 3, 3]),
        (&[2, 1], &[2, 3, 4]),
        (&[3, 2], &[5, 6]),
        (&[3, 2], &[6, 7]),
        (&[1], &[3, 5]),
        (&[4, 1], &[5, 6]),
        (&[1, 2, 2], &[3, 3, 3]),
        (&[1, 2, 2], &[2, 3, 4]),
    ];
    let (mut tours, mut none) = (0, 0);
    for &(rule, sides) in boards {
        let board = Board::new(sides).unwrap();
        let moves = Moves::from_rule(rule, sides.len()).unwrap();
        let layout = Layout::new(&board, &moves).unwrap();
        let g = Graph::new(layout.clone(), true);
        for closed in [false, true] {
            for start in 0..board.cells() {
                let bt = search_closed(&board, &moves, start, closed, u64::MAX);
                let found = search(&g, layout.padded(start), closed, u64::MAX, Cancel::NEVER);
                let at = format!("{rule:?} on {board} from {start}, closed {closed}");
                assert_eq!(found.outcome, bt.outcome, "{at}");
                if let Some(p) = found.path {
                    let p: Vec<u64> = p.iter().map(|&c| layout.unpadded(c as usize)).collect();
                    assert_eq!(p[0], start, "{at}");
                    let ok = if closed { verify_closed(&board, &moves, &p) } else { verify(&board, &moves, &p) };
                    ok.unwrap_or_else(|e| panic!("{at}: {e}"));
                    tours += 1;
                } else {
                    none += 1;
                }
            }
        }
    }
    assert!(tours > 200 && none > 200, "both answers occur: {tours} tours, {none} none");
}
