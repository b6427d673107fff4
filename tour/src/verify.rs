//! Independent checks of a claimed tour: every figure a sweep reports for a
//! success can be re-checked with these, without trusting the walk.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use thiserror::Error;

use crate::board::Board;
use crate::moves::Moves;

/// Why a path is not a tour.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TourError {
    /// The path does not have one cell per board cell.
    #[error("path has {len} cells, the board has {cells}")]
    Length {
        /// Cells in the path.
        len: usize,
        /// Cells of the board.
        cells: u64,
    },
    /// A cell index past the board.
    #[error("step {step}: cell {cell} is off the board")]
    OffBoard {
        /// The step, 0-based.
        step: usize,
        /// The cell index.
        cell: u64,
    },
    /// A cell visited twice.
    #[error("step {step}: cell {cell} was already visited")]
    Repeated {
        /// The step of the second visit, 0-based.
        step: usize,
        /// The cell index.
        cell: u64,
    },
    /// Two consecutive cells that no move joins.
    #[error("step {step}: {from:?} -> {to:?} is not a move")]
    IllegalStep {
        /// The step, 0-based.
        step: usize,
        /// Coordinates of the cell before.
        from: Vec<u32>,
        /// Coordinates of the cell at `step`.
        to: Vec<u32>,
    },
    /// A closed tour whose last cell is not one move from its first.
    #[error("closing step {from:?} -> {to:?} is not a move")]
    NotClosed {
        /// Coordinates of the last cell.
        from: Vec<u32>,
        /// Coordinates of the first cell.
        to: Vec<u32>,
    },
}

/// Checks that `path` (cell indices) is an open tour: every cell exactly
/// once, every step one of `moves`.
pub fn verify(board: &Board, moves: &Moves, path: &[u64]) -> Result<(), TourError> {
    if path.len() as u64 != board.cells() {
        return Err(TourError::Length { len: path.len(), cells: board.cells() });
    }
    let legal: Legal = moves.iter().collect();
    let mut seen = vec![false; board.cells() as usize];
    let mut step_vec = vec![0i32; board.dims()];
    for (step, &cell) in path.iter().enumerate() {
        if cell >= board.cells() {
            return Err(TourError::OffBoard { step, cell });
        }
        if std::mem::replace(&mut seen[cell as usize], true) {
            return Err(TourError::Repeated { step, cell });
        }
        if step > 0 && !is_move(board, &legal, path[step - 1], cell, &mut step_vec) {
            let (from, to) = (board.coords(path[step - 1]), board.coords(cell));
            return Err(TourError::IllegalStep { step, from, to });
        }
    }
    Ok(())
}

/// Checks that `path` is a closed tour: an open tour whose last cell is one
/// move from its first.
pub fn verify_closed(board: &Board, moves: &Moves, path: &[u64]) -> Result<(), TourError> {
    verify(board, moves, path)?;
    let legal: Legal = moves.iter().collect();
    let (first, last) = (path[0], path[path.len() - 1]);
    let mut step_vec = vec![0i32; board.dims()];
    // A one-cell board has no closing move to make.
    if path.len() > 1 && !is_move(board, &legal, last, first, &mut step_vec) {
        return Err(TourError::NotClosed { from: board.coords(last), to: board.coords(first) });
    }
    Ok(())
}

/// The moves, looked up once a step of a path: a multiply-rotate hash of
/// their few words, where SipHash took a sixth of `solve`'s time on a
/// board it walks in one go. Nothing here comes from an adversary that
/// could pick colliding keys: the move set is the caller's.
type Legal<'m> = HashSet<&'m [i32], BuildHasherDefault<MoveHasher>>;

#[derive(Default)]
struct MoveHasher(u64);

impl Hasher for MoveHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// True when `to - from` (as coordinates) is one of `legal`; `buf` holds
/// the difference, so checking a long path allocates nothing.
fn is_move(board: &Board, legal: &Legal, mut from: u64, mut to: u64, buf: &mut [i32]) -> bool {
    for (slot, &side) in buf.iter_mut().zip(board.sides()).rev() {
        let side = u64::from(side);
        *slot = (to % side) as i32 - (from % side) as i32;
        (from, to) = (from / side, to / side);
    }
    legal.contains(&*buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(b: &Board, cells: &[[u64; 2]]) -> Vec<u64> {
        cells.iter().map(|c| b.index_of(c).unwrap()).collect()
    }

    #[test]
    fn accepts_a_known_3x4_tour_and_rejects_breakage() {
        // An open knight's tour of the 3x4 board.
        let b = Board::new(&[3, 4]).unwrap();
        let m = Moves::from_rule(&[2, 1], 2).unwrap();
        let tour =
            idx(&b, &[[0, 0], [1, 2], [2, 0], [0, 1], [1, 3], [2, 1], [0, 2], [2, 3], [1, 1], [0, 3], [2, 2], [1, 0]]);
        verify(&b, &m, &tour).unwrap();
        assert!(matches!(verify_closed(&b, &m, &tour), Err(TourError::NotClosed { .. })));

        let mut short = tour.clone();
        short.pop();
        assert!(matches!(verify(&b, &m, &short), Err(TourError::Length { .. })));
        let mut repeated = tour.clone();
        repeated[5] = repeated[3];
        assert!(matches!(verify(&b, &m, &repeated), Err(TourError::Repeated { step: 5, .. })));
        let mut swapped = tour.clone();
        swapped.swap(1, 2);
        assert!(matches!(verify(&b, &m, &swapped), Err(TourError::IllegalStep { step: 1, .. })));
        let mut off = tour;
        off[0] = 99;
        assert!(matches!(verify(&b, &m, &off), Err(TourError::OffBoard { step: 0, .. })));
    }

    #[test]
    fn closed_tour_on_a_1x2_board_with_a_unit_move() {
        let b = Board::new(&[1, 2]).unwrap();
        let m = Moves::from_rule(&[1], 2).unwrap();
        verify_closed(&b, &m, &[0, 1]).unwrap();
    }
}
