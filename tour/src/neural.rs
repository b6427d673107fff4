//! `nn`: the Takefuji-Lee neural network for closed knight's tours with the
//! Aoba-Takefuji remedies (to be implemented; see issue "The seeds' other solvers").

use crate::board::Board;
use crate::moves::Moves;
use crate::outcome::Outcome;

/// Which remedy for local minima a run applies (seed 004).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Remedy {
    /// The plain Takefuji-Lee network.
    None,
    /// Cut subtours.
    Cut,
    /// Connect subtours.
    Connect,
    /// Both.
    Both,
}

/// The result of one network run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeuralResult {
    /// Tour (a single closed tour covering every cell) or GaveUp.
    pub outcome: Outcome,
    /// The closed tour as an open path from `start` (cell indices), for Tour.
    pub path: Option<Vec<u64>>,
    /// Network updates made.
    pub iterations: u32,
}

/// Runs the network from a seeded random state for at most `max_iterations`.
pub fn solve(board: &Board, moves: &Moves, start: u64, remedy: Remedy, seed: u64, max_iterations: u32) -> NeuralResult {
    let _ = (board, moves, start, remedy, seed, max_iterations);
    NeuralResult { outcome: Outcome::GaveUp, path: None, iterations: 0 }
}
