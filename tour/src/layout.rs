//! The padded board layout a walk runs on: every axis gets a border as wide
//! as the longest move component, so a neighbour is `cell + offset` with no
//! bounds check; border cells are permanently "blocked".

use crate::board::Board;
use crate::error::{Error, Result};
use crate::moves::Moves;

/// Upper bound on padded cells, whatever the cell limit: a high-D board with
/// long moves can need far more border than board.
pub const MAX_PADDED_CELLS: u64 = 1 << 36;

/// Degree storage: one byte per cell while K <= 254, two bytes beyond.
/// `BLOCKED` marks visited and border cells, so "least degree" never picks
/// one and "no candidate" is "least degree is BLOCKED".
pub(crate) trait Degree: Copy + Ord + Send + Sync + 'static {
    const BLOCKED: Self;
    fn from_count(count: usize) -> Self;
    fn decrement(self) -> Self;
    fn to_u32(self) -> u32;
    /// The buffer as bytes, when its cells are bytes (for the keyed kernel).
    fn narrow(deg: &mut [Self]) -> Option<&mut [u8]>;
}

impl Degree for u8 {
    const BLOCKED: u8 = u8::MAX;
    fn from_count(count: usize) -> u8 {
        count as u8
    }
    fn decrement(self) -> u8 {
        self - 1
    }
    fn to_u32(self) -> u32 {
        self as u32
    }
    fn narrow(deg: &mut [u8]) -> Option<&mut [u8]> {
        Some(deg)
    }
}

impl Degree for u16 {
    const BLOCKED: u16 = u16::MAX;
    fn from_count(count: usize) -> u16 {
        count as u16
    }
    fn decrement(self) -> u16 {
        self - 1
    }
    fn to_u32(self) -> u32 {
        self as u32
    }
    fn narrow(_: &mut [u16]) -> Option<&mut [u8]> {
        None
    }
}

/// A degree buffer of the width the move count needs.
#[derive(Debug, Clone)]
pub(crate) enum Degrees {
    Narrow(Vec<u8>),
    Wide(Vec<u16>),
}

impl Degrees {
    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Degrees::Narrow(v) => v.capacity(),
            Degrees::Wide(v) => v.capacity() * 2,
        }
    }

    /// Overwrites `self` with `from` (same width and length): the per-attempt reset.
    pub(crate) fn reset_from(&mut self, from: &Degrees) {
        match (self, from) {
            (Degrees::Narrow(a), Degrees::Narrow(b)) => a.copy_from_slice(b),
            (Degrees::Wide(a), Degrees::Wide(b)) => a.copy_from_slice(b),
            _ => unreachable!("workspace and solver always share a width"),
        }
    }
}

/// Geometry of the padded array for one (board, moves) pair.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pad: usize,
    sides: Vec<usize>,
    strides: Vec<usize>,
    len: usize,
    /// Linear offset of each move, in move order.
    offsets: Vec<isize>,
}

impl Layout {
    pub(crate) fn new(board: &Board, moves: &Moves) -> Result<Layout> {
        let pad = moves.reach() as usize;
        let sides: Vec<usize> = board.sides().iter().map(|&n| n as usize).collect();
        let padded_sides: Vec<usize> = sides.iter().map(|&n| n + 2 * pad).collect();
        let mut len: u128 = 1;
        for &p in &padded_sides {
            len = len.saturating_mul(p as u128);
        }
        if len > MAX_PADDED_CELLS as u128 {
            return Err(Error::PaddedTooLarge { cells: len, max: MAX_PADDED_CELLS });
        }
        let mut strides = vec![1usize; sides.len()];
        for axis in (0..sides.len().saturating_sub(1)).rev() {
            strides[axis] = strides[axis + 1] * padded_sides[axis + 1];
        }
        let offsets =
            moves.iter().map(|mv| mv.iter().zip(&strides).map(|(&c, &s)| c as isize * s as isize).sum()).collect();
        Ok(Layout { pad, sides, strides, len: len as usize, offsets })
    }

    /// Slots of the padded array, border included.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Linear offset of each move, in move order.
    #[inline]
    pub(crate) fn offsets(&self) -> &[isize] {
        &self.offsets
    }

    /// Padded index of a board cell index.
    pub(crate) fn padded(&self, mut index: u64) -> usize {
        let mut out = 0;
        for axis in (0..self.sides.len()).rev() {
            let side = self.sides[axis] as u64;
            out += ((index % side) as usize + self.pad) * self.strides[axis];
            index /= side;
        }
        out
    }

    /// Board cell index of a padded index inside the board.
    pub(crate) fn unpadded(&self, mut padded: usize) -> u64 {
        let mut out = 0u64;
        for axis in 0..self.sides.len() {
            let x = padded / self.strides[axis];
            padded %= self.strides[axis];
            out = out * self.sides[axis] as u64 + (x - self.pad) as u64;
        }
        out
    }

    /// Board coordinates of a padded index inside the board.
    pub(crate) fn coords(&self, mut padded: usize, out: &mut [i64]) {
        for (axis, slot) in out.iter_mut().enumerate() {
            *slot = (padded / self.strides[axis]) as i64 - self.pad as i64;
            padded %= self.strides[axis];
        }
    }

    /// Padded index of the first cell of every row along the last axis
    /// (rows are contiguous in the padded array).
    fn row_bases(&self) -> impl Iterator<Item = usize> + '_ {
        let dims = self.sides.len();
        let rows: usize = self.sides[..dims - 1].iter().product();
        (0..rows).map(move |r| {
            let mut rem = r;
            let mut base = self.pad;
            for axis in (0..dims - 1).rev() {
                base += (rem % self.sides[axis] + self.pad) * self.strides[axis];
                rem /= self.sides[axis];
            }
            base
        })
    }

    /// The starting degree of every cell: the number of moves from it that
    /// stay on the board; border cells are BLOCKED.
    pub(crate) fn initial_degrees<T: Degree>(&self) -> Vec<T> {
        let mut deg = vec![T::BLOCKED; self.len];
        let row = self.sides[self.sides.len() - 1];
        for base in self.row_bases() {
            deg[base..base + row].fill(T::from_count(0));
        }
        for base in self.row_bases() {
            for c in base..base + row {
                let count = self.offsets.iter().filter(|&&o| deg[(c as isize + o) as usize] != T::BLOCKED).count();
                deg[c] = T::from_count(count);
            }
        }
        deg
    }

    /// Strides of the padded array, axis 0 first.
    #[inline]
    pub(crate) fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// Border width on every side.
    #[inline]
    pub(crate) fn pad(&self) -> usize {
        self.pad
    }

    /// Side lengths of the board (unpadded).
    #[inline]
    pub(crate) fn sides(&self) -> &[usize] {
        &self.sides
    }
}
