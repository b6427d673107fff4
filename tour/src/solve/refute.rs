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
use super::symmetry::{least_of_orbit, symmetries};
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

/// A route's name, as `exists` prints it.
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

/// The search route from every start in `starts` (cell indices) that is
/// the least of its orbit under the board's symmetries (a tour from a
/// start carries over to its images), stopping at the first that is not
/// refuted.
pub(crate) fn by_search(board: &Board, moves: &Moves, starts: &[u64], closed: bool, cancel: Cancel) -> Settled {
    let Some(g) = layout(board, moves).map(|l| Graph::new(l, true)) else {
        return Settled { outcome: Outcome::GaveUp, effort: 0, start: 0, searched: 0 };
    };
    let syms = symmetries(g.layout.sides(), moves);
    let (mut effort, mut searched) = (0u64, 0u64);
    for &start in starts {
        let padded = g.layout.padded(start);
        if !least_of_orbit(&g, &syms, padded) {
            continue;
        }
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
