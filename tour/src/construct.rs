//! `construct`: a deterministic 2D knight's tour from any start (to be
//! implemented; see issue "The seeds' other solvers").

use crate::board::Board;
use crate::moves::Moves;
use crate::outcome::Outcome;

/// Why `construct` cannot handle a configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("construct: {0}")]
pub struct Unsupported(pub String);

/// The constructed tour, or the proof that none exists from `start`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constructed {
    /// Tour or NoTour: the construction never gives up.
    pub outcome: Outcome,
    /// The tour as cell indices from `start`, for Outcome::Tour.
    pub path: Option<Vec<u64>>,
}

/// Builds an open knight's tour of `board` from `start`, or proves none
/// exists. Errors for configurations it does not cover.
pub fn construct(board: &Board, moves: &Moves, start: u64) -> Result<Constructed, Unsupported> {
    let _ = (board, moves, start);
    Err(Unsupported("not implemented yet".into()))
}
