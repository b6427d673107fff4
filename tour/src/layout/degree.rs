//! Degree storage (a byte or two a cell, by the move count) and the
//! starting degrees every walk on degrees begins from, counted per class
//! of cells rather than per cell.

use super::{Layout, Odometer, Padded};
use crate::board::MAX_DIMS;

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
    Narrow(Padded<u8>),
    Wide(Padded<u16>),
}

impl Degrees {
    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Degrees::Narrow(v) => v.bytes(),
            Degrees::Wide(v) => v.bytes(),
        }
    }

    /// Overwrites `self` with `from` (same width): the per-attempt reset.
    pub(crate) fn reset_from(&mut self, from: &Degrees) {
        match (self, from) {
            (Degrees::Narrow(a), Degrees::Narrow(b)) => a.copy_from(b),
            (Degrees::Wide(a), Degrees::Wide(b)) => a.copy_from(b),
            _ => unreachable!("workspace and runner always share a width"),
        }
    }
}

impl Layout {
    /// The starting degree of every cell: the number of moves from it that
    /// stay on the board; border cells are BLOCKED.
    ///
    /// Which moves from a coordinate stay on its axis depends only on its
    /// distances to the axis's two edges, each capped at `reach`: at most
    /// `2 reach + 1` classes an axis. So the degrees of the few class
    /// tuples are counted once, and the board is filled from that table in
    /// the buffer's own order, a run of cells along the last axis at a
    /// time. Counting each edge cell's neighbours instead cost about 300
    /// instructions a cell: (1,2,2) 3D N=300's set-up took about 0.45 s,
    /// half as long as its walk.
    pub(crate) fn initial_degrees<T: Degree>(&self) -> Vec<T> {
        let dims = self.sides.len();
        let classes: Vec<AxisClasses> = (0..dims).map(|a| AxisClasses::new(self, a)).collect();
        let table = self.class_degrees::<T>(&classes);
        let mut deg = vec![T::BLOCKED; self.len];
        let b = self.tile_bits as usize;
        let last = dims - 1;
        let strides = class_strides(&classes);
        // The buffer's order: blocks (tiles, or rows of the last axis),
        // each a sequence of runs along the last axis. Odometer digits are
        // (axis, count, weight in the coordinate), most significant first.
        let (mut blocks, mut runs, run) = if b == 0 {
            (Odometer::new((0..last).map(|a| (a, self.tiles[a], 1))), Odometer::new([]), self.tiles[last])
        } else {
            let tiles = Odometer::new((0..dims).map(|a| (a, self.tiles[a], 1 << b)));
            (tiles, Odometer::new((0..last).map(|a| (a, 1 << b, 1))), 1 << b)
        };
        let extent = |a: usize| if a == last { run } else { 1 << b };
        // A block of middle cells on every axis takes the middle degree
        // whole: most of a big 3D board's tiles.
        let middle = classes.iter().zip(&strides).try_fold(0, |acc, (c, &s)| c.middle.map(|m| acc + m as usize * s));
        let mut x = [0usize; MAX_DIMS];
        for block in deg[..self.len - self.slack()].chunks_exact_mut(run * runs.cycle()) {
            let inner = (0..dims).all(|a| classes[a].middle_run[x[a]] >= extent(a));
            match middle {
                Some(m) if inner => block.fill(table[m]),
                _ => {
                    for chunk in block.chunks_exact_mut(run) {
                        let partial = (0..last).try_fold(0usize, |acc, a| {
                            let c = classes[a].of[x[a]];
                            (c != BORDER).then(|| acc + c as usize * strides[a])
                        });
                        if let Some(partial) = partial {
                            for (d, &c) in chunk.iter_mut().zip(&classes[last].of[x[last]..]) {
                                if c != BORDER {
                                    *d = table[partial + c as usize];
                                }
                            }
                        }
                        runs.advance(&mut x);
                    }
                }
            }
            blocks.advance(&mut x);
        }
        deg
    }

    /// The degree of each tuple of axis classes (mixed radix, axis 0 most
    /// significant): the moves that stay on the board from a cell of those
    /// classes.
    fn class_degrees<T: Degree>(&self, classes: &[AxisClasses]) -> Vec<T> {
        let dims = classes.len();
        let mut tuples = Odometer::new(classes.iter().enumerate().map(|(a, c)| (a, c.representative.len(), 1)));
        let total = tuples.cycle();
        let mut table = Vec::with_capacity(total);
        let mut tuple = vec![0usize; dims];
        for _ in 0..total {
            let count = self
                .moves
                .chunks_exact(dims)
                .filter(|v| {
                    v.iter().zip(&tuple).enumerate().all(|(a, (&d, &c))| {
                        let to = classes[a].representative[c] + i64::from(d);
                        (0..self.sides[a] as i64).contains(&to)
                    })
                })
                .count();
            table.push(T::from_count(count));
            tuples.advance(&mut tuple);
        }
        table
    }
}

/// An axis class that is not on the board.
const BORDER: u32 = u32::MAX;

/// One axis's classes for [`Layout::initial_degrees`]: coordinates with the
/// same distances to both edges, capped at the padding (the longest move
/// component), keep the same moves on this axis.
struct AxisClasses {
    /// The class of each padded coordinate, [`BORDER`] off the board.
    of: Vec<u32>,
    /// A board coordinate of each class.
    representative: Vec<i64>,
    /// The class of coordinates at least `pad` from both edges, if any.
    middle: Option<u32>,
    /// How many coordinates from each padded one on are of the middle class.
    middle_run: Vec<usize>,
}

impl AxisClasses {
    fn new(layout: &Layout, axis: usize) -> AxisClasses {
        let (side, pad) = (layout.sides[axis], layout.pad);
        let padded_side = layout.tiles[axis] << layout.tile_bits;
        let mut of = vec![BORDER; padded_side];
        let mut keys: Vec<(usize, usize)> = Vec::new();
        let mut representative = Vec::new();
        for x in 0..side {
            let key = (x.min(pad), (side - 1 - x).min(pad));
            let class = keys.iter().position(|&k| k == key).unwrap_or_else(|| {
                keys.push(key);
                representative.push(x as i64);
                keys.len() - 1
            });
            of[x + pad] = class as u32;
        }
        let middle = keys.iter().position(|&k| k == (pad, pad)).map(|m| m as u32);
        let mut middle_run = vec![0; padded_side + 1];
        for x in (0..padded_side).rev() {
            if Some(of[x]) == middle {
                middle_run[x] = middle_run[x + 1] + 1;
            }
        }
        AxisClasses { of, representative, middle, middle_run }
    }
}

/// Each axis's weight in [`Layout::class_degrees`]'s table.
fn class_strides(classes: &[AxisClasses]) -> Vec<usize> {
    let mut strides = vec![1usize; classes.len()];
    for a in (0..classes.len().saturating_sub(1)).rev() {
        strides[a] = strides[a + 1] * classes[a + 1].representative.len();
    }
    strides
}
