//! Board shapes: D axes with their own side lengths, cells numbered
//! row-major (axis 0 most significant), 0-based coordinates.

use crate::error::{Error, Result};

/// Most axes a board may have; keeps coordinate vectors and move counts sane.
pub const MAX_DIMS: usize = 32;
/// Default cell limit, so a typo such as `--n 100000 --dims 3` is refused
/// instead of trying to allocate terabytes.
pub const DEFAULT_MAX_CELLS: u64 = 1 << 32;

/// The shape of a board, validated: 1..=MAX_DIMS axes, every side >= 1 and
/// the cell count within the limit it was built with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Board {
    sides: Vec<u32>,
    cells: u64,
}

impl Board {
    /// A board with the given sides and the default cell limit.
    pub fn new(sides: &[u32]) -> Result<Board> {
        Board::with_max_cells(sides, DEFAULT_MAX_CELLS)
    }

    /// A regular N^D board.
    pub fn regular(dims: usize, n: u32) -> Result<Board> {
        Board::regular_with_max_cells(dims, n, DEFAULT_MAX_CELLS)
    }

    /// A regular N^D board under a custom cell limit.
    pub fn regular_with_max_cells(dims: usize, n: u32, max_cells: u64) -> Result<Board> {
        if dims == 0 || dims > MAX_DIMS {
            return Err(Error::Dims { dims, max: MAX_DIMS });
        }
        Board::with_max_cells(&vec![n; dims], max_cells)
    }

    /// A board with the given sides, refusing more than `max_cells` cells.
    pub fn with_max_cells(sides: &[u32], max_cells: u64) -> Result<Board> {
        if sides.is_empty() || sides.len() > MAX_DIMS {
            return Err(Error::Dims { dims: sides.len(), max: MAX_DIMS });
        }
        let mut cells: u128 = 1;
        for (axis, &side) in sides.iter().enumerate() {
            if side == 0 {
                return Err(Error::ZeroSide { axis });
            }
            // Sides are u32 and there are at most 32 of them, but the product
            // can still overflow u128; saturate and let the limit refuse it.
            cells = cells.saturating_mul(side as u128);
        }
        if cells > max_cells as u128 {
            return Err(Error::TooManyCells { cells, max: max_cells });
        }
        Ok(Board { sides: sides.to_vec(), cells: cells as u64 })
    }

    /// Number of axes D.
    pub fn dims(&self) -> usize {
        self.sides.len()
    }

    /// Side lengths n_1 .. n_D.
    pub fn sides(&self) -> &[u32] {
        &self.sides
    }

    /// Number of cells, the product of the sides.
    pub fn cells(&self) -> u64 {
        self.cells
    }

    /// True when every side has the same length.
    pub fn is_regular(&self) -> bool {
        self.sides.windows(2).all(|w| w[0] == w[1])
    }

    /// Checks a start given as coordinates and returns its cell index.
    pub fn index_of(&self, coords: &[u64]) -> Result<u64> {
        if coords.len() != self.dims() {
            return Err(Error::StartLength { len: coords.len(), dims: self.dims() });
        }
        let mut index = 0u64;
        for (axis, (&x, &side)) in coords.iter().zip(&self.sides).enumerate() {
            if x >= side as u64 {
                return Err(Error::StartOffBoard { axis, value: x, side });
            }
            index = index * side as u64 + x;
        }
        Ok(index)
    }

    /// Coordinates of a cell index (which must be below `cells()`).
    pub fn coords(&self, mut index: u64) -> Vec<u32> {
        debug_assert!(index < self.cells);
        let mut out = vec![0u32; self.dims()];
        for (slot, &side) in out.iter_mut().zip(&self.sides).rev() {
            *slot = (index % side as u64) as u32;
            index /= side as u64;
        }
        out
    }

    /// `"8x8"`, `"5x5x5"`: the shape as users write it.
    pub fn shape_string(&self) -> String {
        self.sides.iter().map(u32::to_string).collect::<Vec<_>>().join("x")
    }
}

impl std::fmt::Display for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shape_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_coords_round_trip() {
        let b = Board::new(&[3, 4, 5]).unwrap();
        assert_eq!(b.cells(), 60);
        for i in 0..60 {
            let c: Vec<u64> = b.coords(i).into_iter().map(u64::from).collect();
            assert_eq!(b.index_of(&c).unwrap(), i);
        }
        assert_eq!(b.coords(1), vec![0, 0, 1], "last axis varies fastest");
    }

    #[test]
    fn bad_shapes_name_the_field() {
        assert_eq!(Board::new(&[]).unwrap_err().field(), "dims");
        assert!(matches!(Board::new(&[3, 0]), Err(Error::ZeroSide { axis: 1 })));
        let e = Board::regular(3, 100_000).unwrap_err();
        assert!(matches!(e, Error::TooManyCells { .. }));
        assert!(e.to_string().contains("4294967296"), "{e}");
        assert!(matches!(Board::regular(0, 5), Err(Error::Dims { .. })));
    }

    #[test]
    fn start_checks() {
        let b = Board::regular(2, 8).unwrap();
        assert!(matches!(b.index_of(&[1]), Err(Error::StartLength { len: 1, dims: 2 })));
        assert!(matches!(b.index_of(&[0, 8]), Err(Error::StartOffBoard { axis: 1, value: 8, side: 8 })));
    }
}
