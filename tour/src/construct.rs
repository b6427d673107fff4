//! `construct`: a deterministic knight's tour of a 2D board from any start,
//! or the proof that there is none.
//!
//! Boards with both sides >= 5 are built from blocks (see `blocks`): closed
//! tours of 5..=11-sided blocks, found once by exhaustive search, merged by
//! Parberry's edge swaps (Parberry 1997, Discrete Applied Mathematics
//! 73:251-260). A closed tour starts anywhere, which settles boards of even
//! area. On odd x odd boards no tour starts on the minority colour (odd
//! coordinate sum): a knight alternates colours, so a path through all cells
//! starts and ends on the majority colour. From every other start the start's
//! block is cut odd and all the others even, and an exhaustively searched path
//! through the start's block hands over to the closed tour of the rest. The
//! work is linear in the cells; the searches are bounded in size and cached.
//! Smaller boards (a side below 5, at most 32 cells) are settled by
//! exhaustive search of the whole board.
//!
//! Seed 001 solves the square case differently, peeling 4-wide rings with
//! four parallel knight strips onto hard-coded 5x5..8x8 base tours; its
//! figures (the strips and the nine base tours) are missing, so this module
//! follows Parberry's divide and conquer, which also covers rectangles, and
//! takes from seed 001 only the idea of handing the start's corner of the
//! problem to a small searched piece.

mod blocks;
mod pieces;
mod search;
#[cfg(test)]
mod tests;

use crate::board::Board;
use crate::moves::Moves;
use crate::outcome::Outcome;

/// Boards with a side below 5 and at most this many cells are searched
/// exhaustively; larger ones are unsupported.
const SMALL_CELLS: u64 = 32;

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

/// Checks that [`construct`] covers `moves` on `board` (without building
/// anything): 2D boards with the knight's (2,1) moves, both sides at least 5,
/// or any shape of at most 32 cells.
pub fn covers(board: &Board, moves: &Moves) -> Result<(), Unsupported> {
    let &[m, n] = board.sides() else {
        return Err(Unsupported(format!("{}D board {board}: only 2D boards are supported", board.dims())));
    };
    if moves.dims() != 2 || !crate::exists::is_knight(moves) {
        return Err(Unsupported(format!("moves {}: only the knight's (2,1) moves are supported", moves.describe())));
    }
    // Cell indices are kept in 32 bits.
    if board.cells() >= u32::MAX as u64 {
        return Err(Unsupported(format!("board {board} has more than 2^32 - 1 cells")));
    }
    if (m < 5 || n < 5) && board.cells() > SMALL_CELLS {
        return Err(Unsupported(format!("board {board}: a side below 5 and more than {SMALL_CELLS} cells")));
    }
    Ok(())
}

/// Builds an open knight's tour of `board` from `start`, or proves none
/// exists. Errors for configurations it does not cover (see [`covers`]) and
/// starts off the board.
pub fn construct(board: &Board, moves: &Moves, start: u64) -> Result<Constructed, Unsupported> {
    covers(board, moves)?;
    let &[m, n] = board.sides() else { unreachable!("covers checked the board is 2D") };
    if start >= board.cells() {
        return Err(Unsupported(format!("start {start} is off the {board} board")));
    }
    let (r, c) = ((start / n as u64) as u32, (start % n as u64) as u32);
    let tour = |path: Vec<u64>| Constructed { outcome: Outcome::Tour, path: Some(path) };
    let none = Constructed { outcome: Outcome::NoTour, path: None };
    if m >= 5 && n >= 5 {
        if m % 2 == 1 && n % 2 == 1 && (r + c) % 2 == 1 {
            return Ok(none);
        }
        let internal = |why: String| Unsupported(format!("internal error on {board} from {start}: {why}"));
        let plan = blocks::Plan::new(m, n, r, c).ok_or_else(|| internal("no cut of the board".into()))?;
        return plan.build().map(tour).map_err(internal);
    }
    let graph = search::Graph::knight(m as usize, n as usize);
    let problem = search::Problem {
        graph: &graph,
        start: start as u16,
        end_ok: vec![true; graph.len()],
        forced: vec![],
        cycle: false,
    };
    Ok(match search::hamiltonian(&problem) {
        Some(path) => tour(path.into_iter().map(u64::from).collect()),
        None => none,
    })
}
