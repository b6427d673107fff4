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
    check(board, path, &Steps::new(board, moves))
}

/// Checks that `path` is a closed tour: an open tour whose last cell is one
/// move from its first.
pub fn verify_closed(board: &Board, moves: &Moves, path: &[u64]) -> Result<(), TourError> {
    let steps = Steps::new(board, moves);
    check(board, path, &steps)?;
    let (last, first) = (path[path.len() - 1], path[0]);
    // A one-cell board has no closing move to make.
    if path.len() > 1 && !steps.advance(&mut board.coords(last), last, first) {
        return Err(TourError::NotClosed { from: board.coords(last), to: board.coords(first) });
    }
    Ok(())
}

/// [`verify`] with the moves already arranged by offset.
fn check(board: &Board, path: &[u64], steps: &Steps) -> Result<(), TourError> {
    if path.len() as u64 != board.cells() {
        return Err(TourError::Length { len: path.len(), cells: board.cells() });
    }
    let mut seen = vec![false; board.cells() as usize];
    // The coordinates of the cell the path stands on, found once and then
    // moved along with it: no division per step.
    let mut at = Vec::new();
    for (step, &cell) in path.iter().enumerate() {
        if cell >= board.cells() {
            return Err(TourError::OffBoard { step, cell });
        }
        if std::mem::replace(&mut seen[cell as usize], true) {
            return Err(TourError::Repeated { step, cell });
        }
        if step == 0 {
            at = board.coords(cell);
        } else if !steps.advance(&mut at, path[step - 1], cell) {
            return Err(TourError::IllegalStep { step, from: board.coords(path[step - 1]), to: board.coords(cell) });
        }
    }
    Ok(())
}

/// The moves by the difference of cell indices they make: a step from
/// `from` to `to` is move `m` exactly when `to - from` is m's offset and
/// `from`'s coordinates plus m stay on the board (then they are `to`'s, as
/// a cell's index is linear in its coordinates). Checking a step is a
/// search of K sorted offsets and D bounds checks, not D divisions.
struct Steps<'a> {
    /// (index offset, move), sorted by offset; moves whose offset does not
    /// fit an i64 cannot be a step on this board and are left out.
    by_offset: Vec<(i64, &'a [i32])>,
    /// Where the moves of each offset start in `by_offset`, plus one (0:
    /// none), indexed by offset + `reach`: a load instead of a binary
    /// search. Empty when it would pass [`TABLE_MAX`] entries.
    first: Vec<u32>,
    /// The largest |offset|.
    reach: u64,
    sides: &'a [u32],
}

/// Largest [`Steps::first`] table: 2 reach + 1 entries.
const TABLE_MAX: u64 = 1 << 20;

impl<'a> Steps<'a> {
    fn new(board: &'a Board, moves: &'a Moves) -> Steps<'a> {
        let sides = board.sides();
        let mut by_offset: Vec<(i64, &[i32])> = moves
            .iter()
            .filter_map(|m| {
                // Row-major: the last axis is the least significant.
                let (mut offset, mut stride) = (0i64, 1i64);
                for (&c, &side) in m.iter().zip(sides).rev() {
                    offset = offset.checked_add(i64::from(c).checked_mul(stride)?)?;
                    stride = stride.checked_mul(i64::from(side))?;
                }
                Some((offset, m))
            })
            .collect();
        by_offset.sort_unstable();
        let reach = by_offset.iter().map(|&(o, _)| o.unsigned_abs()).max().unwrap_or(0);
        let mut first = Vec::new();
        if reach < TABLE_MAX {
            let reach = reach as i64;
            first = vec![0u32; 2 * reach as usize + 1];
            for (i, &(o, _)) in by_offset.iter().enumerate().rev() {
                first[(o + reach) as usize] = i as u32 + 1;
            }
        }
        Steps { by_offset, first, reach, sides }
    }

    /// True when some move takes the cell at coordinates `at` (index
    /// `from`) to `to`; `at` then holds `to`'s coordinates.
    #[inline]
    fn advance(&self, at: &mut [u32], from: u64, to: u64) -> bool {
        let Some(offset) = (to as i64).checked_sub(from as i64) else { return false };
        let start = if self.first.is_empty() {
            self.by_offset.partition_point(|&(o, _)| o < offset)
        } else {
            if offset.unsigned_abs() > self.reach {
                return false;
            }
            match self.first[(offset + self.reach as i64) as usize] {
                0 => return false,
                i => i as usize - 1,
            }
        };
        for &(o, m) in &self.by_offset[start..] {
            if o != offset {
                break;
            }
            // Off the board below zero wraps to a huge unsigned value.
            let on_board =
                at.iter().zip(m).zip(self.sides).all(|((&x, &c), &side)| ((x as i64 + c as i64) as u64) < side as u64);
            if on_board {
                for (x, &c) in at.iter_mut().zip(m) {
                    *x = x.wrapping_add_signed(c);
                }
                return true;
            }
        }
        false
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

    /// A step is legal exactly when the coordinate difference is a move:
    /// the index-offset check agrees with the plain one on random pairs of
    /// cells (neighbours and not), across rules, dimensions and shapes, by
    /// table and by binary search.
    #[test]
    fn steps_by_offset_agree_with_coordinate_differences() {
        let cases: &[(&[u32], &[u32])] = &[
            (&[2, 1], &[8, 8]),
            (&[2, 1], &[3, 11]),
            (&[4, 3], &[9, 6]),
            (&[1, 2, 2], &[5, 4, 6]),
            (&[3, 2], &[4, 5, 3, 4, 3]),
            (&[1], &[1, 7]),
            // Offsets past the table: the binary search.
            (&[2, 1], &[3, 1100, 1000]),
        ];
        let mut rng = crate::seed::Rng::new(3);
        for &(rule, sides) in cases {
            let b = Board::new(sides).unwrap();
            let m = Moves::from_rule(rule, sides.len()).unwrap();
            let steps = Steps::new(&b, &m);
            assert_eq!(steps.first.is_empty(), b.cells() > 1_000_000, "{rule:?} on {b}");
            let (mut legal, mut illegal) = (0, 0);
            for _ in 0..20_000 {
                let from = rng.below(b.cells());
                // Half the time a move's neighbour, so that legal steps occur.
                let to = if rng.below(2) == 0 {
                    let mv = m.get(rng.below(m.len() as u64) as usize);
                    let c: Vec<i64> =
                        b.coords(from).iter().zip(mv).map(|(&x, &d)| i64::from(x) + i64::from(d)).collect();
                    match c.iter().zip(sides).all(|(&x, &n)| (0..i64::from(n)).contains(&x)) {
                        true => b.index_of(&c.iter().map(|&x| x as u64).collect::<Vec<_>>()).unwrap(),
                        false => rng.below(b.cells()),
                    }
                } else {
                    rng.below(b.cells())
                };
                let (cf, ct) = (b.coords(from), b.coords(to));
                let diff: Vec<i32> = cf.iter().zip(&ct).map(|(&x, &y)| y as i32 - x as i32).collect();
                let expected = m.iter().any(|mv| mv == diff.as_slice());
                let mut at = cf.clone();
                assert_eq!(steps.advance(&mut at, from, to), expected, "{b} {rule:?}: {cf:?} -> {ct:?}");
                if expected {
                    assert_eq!(at, ct, "the coordinates move with the step");
                    legal += 1;
                } else {
                    assert_eq!(at, cf, "a refused step leaves the coordinates");
                    illegal += 1;
                }
            }
            assert!(legal > 500 && illegal > 1000, "{rule:?} on {b}: {legal} legal, {illegal} illegal");
        }
    }

    #[test]
    fn closed_tour_on_a_1x2_board_with_a_unit_move() {
        let b = Board::new(&[1, 2]).unwrap();
        let m = Moves::from_rule(&[1], 2).unwrap();
        verify_closed(&b, &m, &[0, 1]).unwrap();
    }
}
