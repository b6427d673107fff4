//! Independent checks of a claimed tour: every figure a sweep reports for a
//! success can be re-checked with these, without trusting the walk.

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
    let legal = Legal::new(moves);
    let mut seen = vec![false; board.cells() as usize];
    // Each cell's coordinates are found once, and are the next step's
    // `from`: the divisions are most of a check.
    let (mut from, mut to, mut step_vec) =
        (vec![0u32; board.dims()], vec![0u32; board.dims()], vec![0i32; board.dims()]);
    for (step, &cell) in path.iter().enumerate() {
        if cell >= board.cells() {
            return Err(TourError::OffBoard { step, cell });
        }
        if std::mem::replace(&mut seen[cell as usize], true) {
            return Err(TourError::Repeated { step, cell });
        }
        coords_into(board, cell, &mut to);
        if step > 0 && !is_step(&legal, &from, &to, &mut step_vec) {
            return Err(TourError::IllegalStep { step, from, to });
        }
        std::mem::swap(&mut from, &mut to);
    }
    Ok(())
}

/// Checks that `path` is a closed tour: an open tour whose last cell is one
/// move from its first.
pub fn verify_closed(board: &Board, moves: &Moves, path: &[u64]) -> Result<(), TourError> {
    verify(board, moves, path)?;
    let legal = Legal::new(moves);
    let (from, to) = (board.coords(path[path.len() - 1]), board.coords(path[0]));
    let mut step_vec = vec![0i32; board.dims()];
    // A one-cell board has no closing move to make.
    if path.len() > 1 && !is_step(&legal, &from, &to, &mut step_vec) {
        return Err(TourError::NotClosed { from, to });
    }
    Ok(())
}

/// The moves, looked up once a step of a path. Where every step of at
/// most `reach` a component fits a table of up to [`DENSE_MAX`] entries, a
/// step is its index there (a few adds and one load); elsewhere a binary
/// search of the sorted moves.
enum Legal<'m> {
    Dense { reach: i32, table: Vec<bool> },
    Sorted(Vec<&'m [i32]>),
}

/// Largest table of [`Legal::Dense`]: (2 reach + 1)^D entries.
const DENSE_MAX: u64 = 1 << 16;

impl<'m> Legal<'m> {
    fn new(moves: &'m Moves) -> Legal<'m> {
        let reach = moves.iter().flatten().map(|c| c.unsigned_abs()).max().unwrap_or(0);
        let side = 2 * u64::from(reach) + 1;
        let entries = (0..moves.dims()).try_fold(1u64, |n, _| n.checked_mul(side).filter(|&n| n <= DENSE_MAX));
        match entries {
            Some(entries) => {
                let reach = reach as i32;
                let mut table = vec![false; entries as usize];
                for m in moves.iter() {
                    table[Self::dense_index(reach, m).expect("within reach")] = true;
                }
                Legal::Dense { reach, table }
            }
            None => {
                let mut sorted: Vec<&[i32]> = moves.iter().collect();
                sorted.sort_unstable();
                Legal::Sorted(sorted)
            }
        }
    }

    /// The step's slot in the dense table, None when a component is out of reach.
    fn dense_index(reach: i32, step: &[i32]) -> Option<usize> {
        let side = 2 * reach as usize + 1;
        let mut index = 0usize;
        for &c in step.iter().rev() {
            if c.abs() > reach {
                return None;
            }
            index = index * side + (c + reach) as usize;
        }
        Some(index)
    }

    fn contains(&self, step: &[i32]) -> bool {
        match self {
            Legal::Dense { reach, table } => Self::dense_index(*reach, step).is_some_and(|i| table[i]),
            Legal::Sorted(sorted) => sorted.binary_search_by(|m| (*m).cmp(step)).is_ok(),
        }
    }
}

/// True when `to - from` is one of `legal`; `buf` holds the difference,
/// so checking a long path allocates nothing.
fn is_step(legal: &Legal, from: &[u32], to: &[u32], buf: &mut [i32]) -> bool {
    for ((slot, &a), &b) in buf.iter_mut().zip(from).zip(to) {
        *slot = b as i32 - a as i32;
    }
    legal.contains(&*buf)
}

/// [`Board::coords`] into `out`, in 32-bit arithmetic where the index
/// fits (a 64-bit division takes several times as long).
fn coords_into(board: &Board, index: u64, out: &mut [u32]) {
    if let Ok(mut index) = u32::try_from(index) {
        for (slot, &side) in out.iter_mut().zip(board.sides()).rev() {
            *slot = index % side;
            index /= side;
        }
    } else {
        let mut index = index;
        for (slot, &side) in out.iter_mut().zip(board.sides()).rev() {
            *slot = (index % u64::from(side)) as u32;
            index /= u64::from(side);
        }
    }
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
    fn the_move_table_and_the_sorted_moves_agree() {
        for (rule, dims) in [(&[2, 1][..], 2), (&[4, 3], 2), (&[1, 2, 2], 3), (&[3, 2], 5), (&[40, 1], 3)] {
            let m = Moves::from_rule(rule, dims).unwrap();
            let legal = Legal::new(&m);
            let mut sorted: Vec<&[i32]> = m.iter().collect();
            sorted.sort_unstable();
            let dense = matches!(legal, Legal::Dense { .. });
            assert_eq!(dense, rule[0] < 40, "{rule:?} in {dims}D");
            let reference = Legal::Sorted(sorted);
            let mut rng = crate::seed::Rng::new(7);
            let reach = rule[0] as i32 + 2;
            let mut hits = 0;
            for _ in 0..20_000 {
                let step: Vec<i32> = (0..dims).map(|_| rng.below(2 * reach as u64 + 1) as i32 - reach).collect();
                assert_eq!(legal.contains(&step), reference.contains(&step), "{step:?}");
                hits += usize::from(reference.contains(&step));
            }
            assert!(hits > 0 || !dense, "{rule:?}: the random steps hit no move");
            for s in m.iter() {
                assert!(legal.contains(s));
                let near: Vec<i32> = s.iter().enumerate().map(|(a, &c)| if a == 0 { c + 1 } else { c }).collect();
                assert_eq!(legal.contains(&near), reference.contains(&near), "{near:?}");
            }
        }
    }

    #[test]
    fn closed_tour_on_a_1x2_board_with_a_unit_move() {
        let b = Board::new(&[1, 2]).unwrap();
        let m = Moves::from_rule(&[1], 2).unwrap();
        verify_closed(&b, &m, &[0, 1]).unwrap();
    }
}
