//! `bt`: exact depth-first search for an open tour from a start (to be
//! implemented; see issue "The seeds' other solvers").

use crate::board::Board;
use crate::moves::Moves;
use crate::outcome::Outcome;

/// The result of an exhaustive search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    /// Tour (with `path`), NoTour (search space exhausted) or GaveUp (budget).
    pub outcome: Outcome,
    /// The tour, as cell indices from the start, when one was found.
    pub path: Option<Vec<u64>>,
    /// Search nodes expanded (cells placed on the path, backtracked ones included).
    pub nodes: u64,
}

/// Searches for an open tour of `board` from cell `start` with `moves`,
/// expanding at most `budget` nodes.
pub fn search(board: &Board, moves: &Moves, start: u64, budget: u64) -> SearchResult {
    let _ = (board, moves, start, budget);
    SearchResult { outcome: Outcome::GaveUp, path: None, nodes: 0 }
}
