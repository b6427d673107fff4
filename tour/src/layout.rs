//! The padded board layout a walk runs on: every axis gets a border as wide
//! as the longest move component, so a neighbour is `cell + offset` with no
//! bounds check; border cells are permanently "blocked".
//!
//! Cells are stored in row-major order, or (walks on 3D boards) in tiles of
//! 4x4x4 cells, one cache line each: a cell's 24 neighbours then lie in at
//! most 8 lines instead of up to 24, and a walk's recent cells stay in few.
//! A tile-ordered layout's move offsets depend on the cell's place in its
//! tile (its phase), so offsets come as a table, one row per phase.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::board::{Board, MAX_DIMS};
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
            _ => unreachable!("workspace and solver always share a width"),
        }
    }
}

/// A number no other call returns in this process: the identity of a
/// layout, and of a walk begun on a buffer.
fn unique() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Which layout made a buffer, a board cell or a table of move offsets:
/// the walk kernels check once per walk that theirs agree. Clones of a
/// layout share it (they are the same geometry); 0 is no layout's (an
/// empty buffer's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct LayoutId(u64);

/// A board cell's padded index in one layout. Only the layout makes one,
/// so it lies at least the layout's reach from every edge of the padded
/// array: each move offset of that layout (and its negation) leads from it
/// to a slot of any buffer of the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BoardCell {
    index: usize,
    layout: LayoutId,
}

impl BoardCell {
    /// The padded index.
    #[inline]
    pub(crate) fn index(self) -> usize {
        self.index
    }
}

/// A walk's state of a [`Padded`] buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WalkState {
    /// As made: no walk has begun on it since.
    Fresh,
    /// Walk `n` ([`Padded::begin_walk`]) stands on it.
    Walk(u64),
    /// Copied from a buffer a walk stood on: no walk may begin on it until
    /// it is reset from a fresh one.
    Spent,
}

/// One value per slot of a layout's padded array (and any slack past it),
/// for the kernel `Kind` walks on. Only the layout makes one, with at
/// least [`Layout::len`] slots, and no safe method changes that: an index
/// reached from a [`BoardCell`] by a move offset of the same layout is in
/// bounds. Its contents start as a walk may start (border slots blocked),
/// and only the walk kernels, which keep them so, change them (through
/// [`Padded::cells_mut`]); a walk begins only on a fresh buffer (made, or
/// reset from a fresh one), so no walk runs on another's leftovers.
#[derive(Debug)]
pub(crate) struct Padded<T, Kind = ()> {
    cells: Vec<T>,
    layout: LayoutId,
    walk: WalkState,
    kind: PhantomData<Kind>,
}

impl<T, Kind> Default for Padded<T, Kind> {
    /// An empty buffer, of no layout: no walk can run on it until it is
    /// reset from one that is ([`Padded::copy_from`]).
    fn default() -> Self {
        Padded { cells: Vec::new(), layout: LayoutId(0), walk: WalkState::Spent, kind: PhantomData }
    }
}

impl<T: Copy, Kind> Clone for Padded<T, Kind> {
    /// A copy, fresh where `self` is: a copy of a buffer a walk stands on
    /// is spent (the walk stays with the original).
    fn clone(&self) -> Self {
        let walk = if self.walk == WalkState::Fresh { WalkState::Fresh } else { WalkState::Spent };
        Padded { cells: self.cells.clone(), layout: self.layout, walk, kind: PhantomData }
    }
}

impl<T: Copy, Kind> Padded<T, Kind> {
    /// Makes `self` a copy of `from` (see [`Clone::clone`]): a plain copy
    /// when the lengths agree, a reallocation only for an empty (or
    /// foreign) buffer. The per-walk reset.
    pub(crate) fn copy_from(&mut self, from: &Padded<T, Kind>) {
        copy_into(&mut self.cells, &from.cells);
        self.layout = from.layout;
        self.walk = if from.walk == WalkState::Fresh { WalkState::Fresh } else { WalkState::Spent };
    }
}

impl<T, Kind> Padded<T, Kind> {
    /// The values, border and slack included.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[T] {
        &self.cells
    }

    /// Slots held, at least the layout's.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }

    /// The layout that made it.
    #[inline]
    pub(crate) fn layout(&self) -> LayoutId {
        self.layout
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.cells.capacity() * std::mem::size_of::<T>()
    }

    /// The values, to change.
    ///
    /// # Safety
    /// Whatever is written leaves the buffer as its kernel (`Kind`'s) may
    /// walk on: border slots blocked (never a candidate, however many
    /// neighbours' visits take a degree from them), and a walk's cells
    /// only as its steps leave them. The walk kernels alone call this.
    #[inline]
    #[allow(unsafe_code)]
    pub(crate) unsafe fn cells_mut(&mut self) -> &mut [T] {
        &mut self.cells
    }

    /// Begins a walk from `start` on this fresh buffer of its layout, and
    /// returns the walk's number, which [`Padded::walk_of`] checks before
    /// the walk goes on. Panics if the buffer is not fresh or `start` is
    /// another layout's.
    pub(crate) fn begin_walk(&mut self, start: BoardCell) -> u64 {
        assert_eq!(start.layout, self.layout, "a start of this buffer's layout");
        assert_eq!(self.walk, WalkState::Fresh, "a walk begins on a fresh buffer");
        let walk = unique();
        self.walk = WalkState::Walk(walk);
        walk
    }

    /// Whether walk `walk` stands on this buffer (begun on it, and it not
    /// reset since).
    #[inline]
    pub(crate) fn walk_of(&self, walk: u64) -> bool {
        self.walk == WalkState::Walk(walk)
    }
}

/// The moves in one layout and one order: their offsets, one row of K per
/// phase (see [`Layout::phase_mask`]), and their vectors, in a rotation of
/// the move order, or negated (the predecessors). Only the layout makes
/// one, so from a [`BoardCell`] of that layout every offset leads inside
/// its buffers.
#[derive(Debug, Clone, Default)]
pub(crate) struct MoveTable {
    rows: Vec<isize>,
    vectors: Vec<i32>,
    phase_mask: usize,
    layout: LayoutId,
}

impl MoveTable {
    /// Every phase's row of offsets.
    #[inline]
    pub(crate) fn rows(&self) -> &[isize] {
        &self.rows
    }

    /// The move vectors, K x D, in the rows' order.
    #[inline]
    pub(crate) fn vectors(&self) -> &[i32] {
        &self.vectors
    }

    /// `cell & phase_mask` is the row of offsets that holds from `cell`.
    #[inline]
    pub(crate) fn phase_mask(&self) -> usize {
        self.phase_mask
    }

    /// Moves per row, K.
    #[inline]
    pub(crate) fn count(&self) -> usize {
        self.rows.len() / (self.phase_mask + 1)
    }

    /// The layout that made it.
    #[inline]
    pub(crate) fn layout(&self) -> LayoutId {
        self.layout
    }

    /// Makes `self` a copy of `from`, reusing its allocations.
    pub(crate) fn copy_from(&mut self, from: &MoveTable) {
        copy_into(&mut self.rows, &from.rows);
        copy_into(&mut self.vectors, &from.vectors);
        (self.phase_mask, self.layout) = (from.phase_mask, from.layout);
    }
}

/// Makes `to` a copy of `from`: a plain copy when the lengths agree, a
/// reallocation only for an empty (or foreign) buffer.
pub(crate) fn copy_into<T: Copy>(to: &mut Vec<T>, from: &[T]) {
    if to.len() == from.len() {
        to.copy_from_slice(from);
    } else {
        to.clear();
        to.extend_from_slice(from);
    }
}

/// Bits of each coordinate a tile holds, for walks on a board of `dims`
/// axes: 3D boards take 4x4x4 tiles (one 64-byte line of byte degrees);
/// other boards row-major order, where tiles measured no faster.
pub(crate) fn walk_tile_bits(dims: usize) -> u32 {
    if dims == 3 {
        2
    } else {
        0
    }
}

/// The row of `table` (K offsets per phase, see [`Layout::phase_mask`])
/// that holds from `cell`.
#[inline(always)]
pub(crate) fn phase_row(table: &[isize], phase_mask: usize, k: usize, cell: usize) -> &[isize] {
    &table[(cell & phase_mask) * k..][..k]
}

/// Slots of a padded array: each side plus a border of `reach` on both
/// ends, rounded up to whole tiles of `tile_bits` bits per axis.
pub(crate) fn padded_len(sides: impl IntoIterator<Item = u64>, reach: u32, tile_bits: u32) -> u128 {
    let tile = 1u128 << tile_bits;
    sides.into_iter().fold(1u128, |acc, n| {
        let padded = (u128::from(n) + 2 * u128::from(reach)).div_ceil(tile) * tile;
        acc.saturating_mul(padded)
    })
}

/// Geometry of the padded array for one (board, moves) pair.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pad: usize,
    sides: Vec<usize>,
    /// Bits of each coordinate inside a tile; 0 for row-major order.
    tile_bits: u32,
    /// Tiles along each axis (the padded sides, in row-major order).
    tiles: Vec<usize>,
    len: usize,
    /// Offset of each move from a cell of each phase: one row of K per phase.
    offsets: Vec<isize>,
    /// The moves' components, D a move, for the starting degrees.
    moves: Vec<i32>,
    id: LayoutId,
}

impl Layout {
    /// A row-major layout, whose offsets are the same from every cell.
    pub(crate) fn new(board: &Board, moves: &Moves) -> Result<Layout> {
        Layout::with_tiles(board, moves, 0)
    }

    /// The layout walks run on: tiled where [`walk_tile_bits`] says so.
    pub(crate) fn for_walks(board: &Board, moves: &Moves) -> Result<Layout> {
        Layout::with_tiles(board, moves, walk_tile_bits(board.dims()))
    }

    fn with_tiles(board: &Board, moves: &Moves, tile_bits: u32) -> Result<Layout> {
        let pad = moves.reach() as usize;
        let sides: Vec<usize> = board.sides().iter().map(|&n| n as usize).collect();
        let len = padded_len(board.sides().iter().map(|&n| u64::from(n)), moves.reach(), tile_bits);
        if len > MAX_PADDED_CELLS as u128 {
            return Err(Error::PaddedTooLarge { cells: len, max: MAX_PADDED_CELLS });
        }
        let tiles = sides.iter().map(|&n| (n + 2 * pad).div_ceil(1 << tile_bits)).collect();
        let moves_flat = moves.iter().flatten().copied().collect();
        let mut layout = Layout {
            pad,
            sides,
            tile_bits,
            tiles,
            len: len as usize,
            offsets: Vec::new(),
            moves: moves_flat,
            id: LayoutId(unique()),
        };
        layout.offsets = layout.offset_table(&moves.iter().collect::<Vec<_>>());
        Ok(layout)
    }

    /// Slots of the padded array, border included.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Linear offset of each move, in move order. Row-major layouts only,
    /// where one row serves every cell.
    #[inline]
    pub(crate) fn offsets(&self) -> &[isize] {
        debug_assert_eq!(self.tile_bits, 0, "a tiled layout's offsets depend on the cell");
        &self.offsets
    }

    /// `cell & phase_mask` is the cell's phase, the row of offsets that
    /// holds from it; 0 in a row-major layout.
    pub(crate) fn phase_mask(&self) -> usize {
        (1 << (self.tile_bits as usize * self.sides.len())) - 1
    }

    /// The moves' offsets from `cell`: its phase's row.
    #[cfg(test)]
    pub(crate) fn offsets_from(&self, cell: usize) -> &[isize] {
        let k = self.offsets.len() / (self.phase_mask() + 1);
        phase_row(&self.offsets, self.phase_mask(), k, cell)
    }

    /// The moves in the order rotated left by `rotation` (the first move
    /// becomes the last, `rotation` times), into `out`.
    pub(crate) fn rotated_moves(&self, rotation: usize, out: &mut MoveTable) {
        let dims = self.sides.len();
        let k = self.moves.len() / dims;
        out.rows.clear();
        for row in self.offsets.chunks_exact(k) {
            out.rows.extend((0..k).map(|i| row[(i + rotation) % k]));
        }
        out.vectors.clear();
        for i in 0..k {
            let j = (i + rotation) % k;
            out.vectors.extend_from_slice(&self.moves[j * dims..(j + 1) * dims]);
        }
        (out.phase_mask, out.layout) = (self.phase_mask(), self.id);
    }

    /// The moves onto each cell from those that move onto it (the negated
    /// moves), in the canonical order.
    pub(crate) fn predecessors(&self) -> MoveTable {
        let vectors: Vec<i32> = self.moves.iter().map(|&c| -c).collect();
        let rows = self.offset_table(&vectors.chunks_exact(self.sides.len()).collect::<Vec<_>>());
        MoveTable { rows, vectors, phase_mask: self.phase_mask(), layout: self.id }
    }

    /// A bound on |rel| of W+'s keyed walks (see `walk::walk_keyed`) over
    /// the board: D * reach * (longest side + reach).
    pub(crate) fn distance_bound(&self) -> u128 {
        let side = self.sides.iter().copied().max().unwrap_or(0) as u128;
        (self.sides.len() as u128) * (self.pad as u128) * (side + self.pad as u128)
    }

    /// Whether `moves` are the moves it was made for, in the same order.
    pub(crate) fn has_moves(&self, moves: &Moves) -> bool {
        moves.iter().flatten().eq(self.moves.iter())
    }

    /// Its identity, which its buffers, board cells and move offsets carry.
    pub(crate) fn id(&self) -> LayoutId {
        self.id
    }

    /// The board cell of cell index `index`.
    pub(crate) fn board_cell(&self, index: u64) -> BoardCell {
        BoardCell { index: self.padded(index), layout: self.id }
    }

    /// A buffer of this layout holding `cells`: at least [`Layout::len`]
    /// of them (else this panics).
    ///
    /// # Safety
    /// `cells` are a start the kernel `Kind` may walk on: see
    /// [`Padded::cells_mut`].
    #[allow(unsafe_code)]
    pub(crate) unsafe fn buffer<T, Kind>(&self, cells: Vec<T>) -> Padded<T, Kind> {
        assert!(cells.len() >= self.len, "{} slots, not the layout's {}", cells.len(), self.len);
        Padded { cells, layout: self.id, walk: WalkState::Fresh, kind: PhantomData }
    }

    /// [`Layout::initial_degrees`] as a buffer of this layout: the start
    /// every walk on degrees takes.
    #[allow(unsafe_code)]
    pub(crate) fn degree_buffer<T: Degree>(&self) -> Padded<T> {
        // SAFETY: the starting degrees: border slots BLOCKED, board cells
        // their degree, at most K, so never BLOCKED however many of K
        // neighbours' visits take one.
        unsafe { self.buffer(self.initial_degrees()) }
    }

    /// The offsets of `vectors` from a cell of each phase, phase by phase.
    pub(crate) fn offset_table(&self, vectors: &[&[i32]]) -> Vec<isize> {
        let tile = 1usize << self.tile_bits;
        let mut out = Vec::new();
        let mut from = vec![0usize; self.sides.len()];
        let mut to = vec![0usize; self.sides.len()];
        for phase in 0..=self.phase_mask() {
            // A cell of this phase whose neighbours' coordinates stay positive.
            for (axis, x) in from.iter_mut().enumerate() {
                *x = tile * (self.pad + 1) + self.phase_part(phase, axis);
            }
            for &v in vectors {
                for ((t, &f), &c) in to.iter_mut().zip(&from).zip(v) {
                    *t = f.wrapping_add_signed(c as isize);
                }
                out.push(self.index(&to) as isize - self.index(&from) as isize);
            }
        }
        out
    }

    /// The coordinate bits of `axis` in a phase.
    fn phase_part(&self, phase: usize, axis: usize) -> usize {
        let shift = self.tile_bits as usize * (self.sides.len() - 1 - axis);
        (phase >> shift) & ((1 << self.tile_bits) - 1)
    }

    /// Array index of padded coordinates: the tile's row-major number,
    /// then the cell's place in the tile (axis 0's bits first).
    fn index(&self, padded: &[usize]) -> usize {
        let b = self.tile_bits;
        let (mut tile, mut phase) = (0, 0);
        for (&x, &tiles) in padded.iter().zip(&self.tiles) {
            tile = tile * tiles + (x >> b);
            phase = phase << b | (x & ((1 << b) - 1));
        }
        tile << (b as usize * padded.len()) | phase
    }

    /// Padded coordinates of an array index; the inverse of [`Layout::index`].
    fn padded_coords(&self, index: usize, out: &mut [usize]) {
        let b = self.tile_bits;
        let phase = index & self.phase_mask();
        let mut tile = index >> (b as usize * out.len());
        for axis in (0..out.len()).rev() {
            out[axis] = (tile % self.tiles[axis]) << b | self.phase_part(phase, axis);
            tile /= self.tiles[axis];
        }
    }

    /// Padded index of a board cell index.
    pub(crate) fn padded(&self, mut index: u64) -> usize {
        let mut x = [0usize; MAX_DIMS];
        let x = &mut x[..self.sides.len()];
        for axis in (0..self.sides.len()).rev() {
            let side = self.sides[axis] as u64;
            x[axis] = (index % side) as usize + self.pad;
            index /= side;
        }
        self.index(x)
    }

    /// Board cell index of a padded index inside the board.
    pub(crate) fn unpadded(&self, padded: usize) -> u64 {
        let mut x = [0usize; MAX_DIMS];
        let x = &mut x[..self.sides.len()];
        self.padded_coords(padded, x);
        x.iter().zip(&self.sides).fold(0u64, |out, (&x, &side)| out * side as u64 + (x - self.pad) as u64)
    }

    /// Board coordinates of a padded index (negative or past the side for
    /// border cells).
    pub(crate) fn coords(&self, padded: usize, out: &mut [i64]) {
        let mut x = [0usize; MAX_DIMS];
        let x = &mut x[..self.sides.len()];
        self.padded_coords(padded, x);
        for (slot, &x) in out.iter_mut().zip(x.iter()) {
            *slot = x as i64 - self.pad as i64;
        }
    }

    /// Padded indices of the board's cells, in cell index order (no
    /// division per cell: boards can have billions).
    pub(crate) fn board_cells(&self) -> BoardCells<'_> {
        BoardCells { layout: self, x: [self.pad; MAX_DIMS], started: false, done: self.sides.contains(&0) }
    }

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
        for block in deg.chunks_exact_mut(run * runs.cycle()) {
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

    /// Side lengths of the board (unpadded).
    #[inline]
    pub(crate) fn sides(&self) -> &[usize] {
        &self.sides
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

/// A mixed-radix counter for the starting degrees (the buffer's order, and
/// the tuples of axis classes): each digit is (axis, count, weight), the
/// last the least significant, and moves its axis's coordinate by `weight`.
struct Odometer {
    digits: Vec<(usize, usize, usize)>,
    value: Vec<usize>,
}

impl Odometer {
    fn new(digits: impl IntoIterator<Item = (usize, usize, usize)>) -> Odometer {
        let digits: Vec<_> = digits.into_iter().collect();
        Odometer { value: vec![0; digits.len()], digits }
    }

    /// Steps before the counter comes back to zero.
    fn cycle(&self) -> usize {
        self.digits.iter().map(|d| d.1).product()
    }

    /// Counts one up, moving the coordinates `x` along; after a whole
    /// cycle they are back where they started.
    fn advance(&mut self, x: &mut [usize]) {
        for (value, &(axis, count, weight)) in self.value.iter_mut().zip(&self.digits).rev() {
            *value += 1;
            x[axis] += weight;
            if *value < count {
                return;
            }
            *value = 0;
            x[axis] -= count * weight;
        }
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

/// The iterator of [`Layout::board_cells`]: an odometer over the padded
/// coordinates.
pub(crate) struct BoardCells<'l> {
    layout: &'l Layout,
    /// Padded coordinates of the cell last returned.
    x: [usize; MAX_DIMS],
    started: bool,
    done: bool,
}

impl Iterator for BoardCells<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        let (layout, dims) = (self.layout, self.layout.sides.len());
        if self.started && !self.done {
            // The next cell in row-major order.
            self.done = true;
            for axis in (0..dims).rev() {
                self.x[axis] += 1;
                if self.x[axis] < layout.sides[axis] + layout.pad {
                    self.done = false;
                    break;
                }
                self.x[axis] = layout.pad;
            }
        }
        self.started = true;
        (!self.done).then(|| layout.index(&self.x[..dims]))
    }
}

#[cfg(test)]
mod tests;
