//! Whole-board refutations for [`crate::exists::decide`], by two routes
//! that share no search code, so that a "no tour" rests on two proofs:
//!
//! - **search**: the cover-pruned exact search (`exact`, bipartite boards)
//!   or plain backtracking ([`crate::backtrack`], any other) from every
//!   start a refutation needs, each to its end;
//! - **SAT**: the board as satisfiability (`sat`): a cycle through every
//!   cell from one start for a closed tour, a path from any cell to any
//!   other for an open one.
//!
//! Both read only the move graph. A closed tour passes every cell, so one
//! start decides it; an open one may begin anywhere.

use super::graph::{layout, Graph};
use super::symmetry::{keeping_colours, least_of_orbit, symmetries};
use super::{exact, sat};
use crate::backtrack;
use crate::board::Board;
use crate::cancel::Cancel;
use crate::moves::{Colouring, Moves};
use crate::outcome::Outcome;

/// What one route settled, and its effort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Settled {
    /// NoTour (proven), Tour (found: the other route was wrong) or GaveUp
    /// (the flag was raised first).
    pub outcome: Outcome,
    /// Search nodes or SAT conflicts spent.
    pub effort: u64,
    /// The start a Tour was found from (a cell index), else 0.
    pub start: u64,
    /// Starts searched: those a refutation takes, one of each orbit under
    /// the board's symmetries that keep the moves.
    pub searched: u64,
}

/// The SAT route's name, as `exists` prints it.
pub(crate) const SAT_ROUTE: &str = "the SAT route";

/// The search route's name, as `exists` prints it.
pub(crate) fn search_route(moves: &Moves) -> &'static str {
    if bipartite(moves) {
        "the cover-pruned exact search"
    } else {
        "backtracking"
    }
}

/// Why the routes do not apply to `board`, if they do not: they take
/// symmetric move sets on boards small enough for 32-bit cells.
pub(crate) fn unsupported(board: &Board, moves: &Moves) -> Option<&'static str> {
    if moves.dims() != board.dims() || !moves.closed_under_negation() {
        return Some("the refutation routes take move sets closed under negation");
    }
    layout(board, moves).is_none().then_some("the board is over solve's limit of 32-bit cell numbers")
}

fn bipartite(moves: &Moves) -> bool {
    moves.colouring() == Colouring::AlwaysChanges
}

/// The search route from each start [`picked`], stopping at the first
/// that is not refuted.
pub(crate) fn by_search(board: &Board, moves: &Moves, starts: &[u64], closed: bool, cancel: Cancel) -> Settled {
    let Some(g) = layout(board, moves).map(|l| Graph::new(l, true)) else {
        return Settled { outcome: Outcome::GaveUp, effort: 0, start: 0, searched: 0 };
    };
    let (mut effort, mut searched) = (0u64, 0u64);
    for (start, padded) in picked(&g, moves, starts, closed) {
        searched += 1;
        let (outcome, nodes) = if bipartite(moves) {
            let found = exact::search(&g, padded, closed, u64::MAX, cancel);
            (found.outcome, found.nodes)
        } else {
            let found = backtrack::search_within(board, moves, start, closed, u64::MAX, cancel);
            (found.outcome, found.nodes)
        };
        effort = effort.saturating_add(nodes);
        if outcome != Outcome::NoTour {
            return Settled { outcome, effort, start, searched };
        }
    }
    Settled { outcome: Outcome::NoTour, effort, start: 0, searched }
}

/// The starts of `starts` (cell indices, with their padded cells) the
/// search route takes: the least of each orbit under the board's
/// symmetries, since a tour from a start carries over to its images. An
/// open tour on a bipartite board has an even end (both ends are even, the
/// majority, on a board of odd cells) and may be read from it, so there
/// only even starts are taken, up to the symmetries that keep colours.
fn picked(g: &Graph, moves: &Moves, starts: &[u64], closed: bool) -> Vec<(u64, usize)> {
    let even_end = bipartite(moves) && !closed;
    let sides = g.layout.sides();
    let syms = if even_end { keeping_colours(sides, moves) } else { symmetries(sides, moves) };
    let take = |&(_, c): &(u64, usize)| (!even_end || g.is_even(c)) && least_of_orbit(g, &syms, c);
    starts.iter().map(|&s| (s, g.layout.padded(s))).filter(take).collect()
}

/// The SAT route: from cell 0 for a closed tour, between any two cells
/// (majority cells on a bipartite board of odd cells) for an open one.
pub(crate) fn by_sat(board: &Board, moves: &Moves, closed: bool, cancel: Cancel) -> Settled {
    let Some(l) = layout(board, moves) else {
        return Settled { outcome: Outcome::GaveUp, effort: 0, start: 0, searched: 0 };
    };
    let g = Graph::new(l, true);
    let bipartite = bipartite(moves);
    let found = if closed {
        let first = g.board_cells().next().unwrap_or(0);
        sat::search(&g, first, true, bipartite, u64::MAX, cancel)
    } else {
        let odd = g.cells % 2 == 1;
        let ends: Vec<usize> = g.board_cells().filter(|&c| !(bipartite && odd) || g.is_even(c)).collect();
        sat::search_anywhere(&g, &ends, bipartite, u64::MAX, cancel)
    };
    let start = match (&found.path, found.outcome) {
        (Some(p), Outcome::Tour) => p.first().map_or(0, |&c| g.layout.unpadded(c as usize)),
        _ => 0,
    };
    Settled { outcome: found.outcome, effort: found.conflicts, start, searched: 1 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use std::sync::atomic::AtomicBool;

    /// Every even cell is carried to a picked start by a symmetry that
    /// keeps colours (and so joins the picked start to an odd other end):
    /// no open tour's even end is left out. Picking the least of each
    /// orbit under every symmetry would leave out the orbits whose least
    /// cell is odd, such as that of (0,6) on 8x8.
    #[test]
    fn every_even_end_has_a_picked_image() {
        for (rule, sides) in [([2u32, 1], [8u32, 8]), ([3, 2], [6, 6]), ([2, 1], [5, 5]), ([4, 1], [6, 10])] {
            let board = Board::new(&sides).unwrap();
            let moves = Moves::from_rule(&rule, 2).unwrap();
            let g = Graph::new(Layout::new(&board, &moves).unwrap(), true);
            let all: Vec<u64> = (0..board.cells()).collect();
            let picked: Vec<usize> = picked(&g, &moves, &all, false).into_iter().map(|(_, c)| c).collect();
            let keep = keeping_colours(g.layout.sides(), &moves);
            let images = |c: usize| -> Vec<usize> {
                let (mut x, mut y) = ([0i64; 2], [0i64; 2]);
                g.layout.coords(c, &mut x);
                keep.iter()
                    .map(|s| {
                        s.apply(g.layout.sides(), &x, &mut y);
                        g.layout.padded(board.index_of(&[y[0] as u64, y[1] as u64]).unwrap())
                    })
                    .collect()
            };
            for c in g.board_cells().filter(|&c| g.is_even(c)) {
                assert!(
                    images(c).iter().any(|i| picked.contains(i)),
                    "{rule:?} {sides:?}: cell {c} has no picked image"
                );
            }
            assert!(picked.iter().all(|&c| g.is_even(c)));
        }
    }

    /// Whether plain backtracking finds an open tour from any cell at all,
    /// no symmetry or colour consulted.
    fn from_any_start(board: &Board, moves: &Moves, cancel: Cancel) -> bool {
        (0..board.cells())
            .any(|s| backtrack::search_within(board, moves, s, false, u64::MAX, cancel).outcome == Outcome::Tour)
    }

    /// The search route, which reads an open tour from its even end up to
    /// the colour-keeping symmetries, says what an exhaustive search from
    /// every cell says, on every small board of four bipartite leapers:
    /// squares (whose symmetries include colour-changing ones on even
    /// sides), rectangles, boards of odd cells, with and without tours.
    #[test]
    fn even_ends_up_to_symmetry_find_every_open_tour() {
        let stop = AtomicBool::new(false);
        let cancel = Cancel::new(&stop);
        let (mut tours, mut none) = (0, 0);
        for rule in [[2u32, 1], [1, 0], [3, 2], [4, 1]] {
            for m in 1..=5u32 {
                // One cell is its own tour, which `proven` says before
                // any route runs.
                for n in m.max(2)..=6u32 {
                    let board = Board::new(&[m, n]).unwrap();
                    let moves = Moves::from_rule(&rule, 2).unwrap();
                    let all: Vec<u64> = (0..board.cells()).collect();
                    let settled = by_search(&board, &moves, &all, false, cancel);
                    let exists = from_any_start(&board, &moves, cancel);
                    assert_eq!(settled.outcome == Outcome::Tour, exists, "{rule:?} {m}x{n}: {settled:?}");
                    assert_ne!(settled.outcome, Outcome::GaveUp);
                    if exists {
                        tours += 1;
                    } else {
                        none += 1;
                    }
                }
            }
        }
        assert!(tours >= 20 && none >= 20, "both kinds of board are covered: {tours} with a tour, {none} without");
    }
}
