//! The padded board layout a walk runs on: every axis gets a border as wide
//! as the longest move component, so a neighbour is `cell + offset` with no
//! bounds check; border cells are permanently "blocked".
//!
//! Cells are stored in row-major order, or (walks on 3D boards) in tiles of
//! 4x4x4 cells, one cache line each: a cell's 24 neighbours then lie in at
//! most 8 lines instead of up to 24, and a walk's recent cells stay in few.
//! A tile-ordered layout's move offsets depend on the cell's place in its
//! tile (its phase), so offsets come as a table, one row per phase.

mod degree;
mod huge_pages;
mod padded;
#[cfg(test)]
mod tests;

pub(crate) use degree::{Degree, Degrees};
use padded::{unique, WalkState};
pub(crate) use padded::{BoardCell, LayoutId, MoveTable, Padded};

use crate::board::{Board, MAX_DIMS};
use crate::error::{Error, Result};
use crate::moves::Moves;

/// Upper bound on padded cells, whatever the cell limit: a high-D board with
/// long moves can need far more border than board.
pub const MAX_PADDED_CELLS: u64 = 1 << 36;

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

/// Blocked slots after a 3D array (the 3D walks'), tiled or not, so that a
/// vector kernel may read a little past any cell a move reaches (a gather
/// reads a lane's word, a window eight bytes of a row): one tile, which
/// keeps a tiled buffer whole tiles.
pub(crate) const VECTOR_SLACK: usize = 64;

/// The blocked slots after an array of `dims` axes: only 3D arrays have
/// vector kernels that read past their last cell.
fn slack_for(dims: usize) -> usize {
    if dims == 3 {
        VECTOR_SLACK
    } else {
        0
    }
}

/// Slots of a padded array of `board` for `moves`: each side plus a
/// border of the moves' reach on both ends, rounded up to whole tiles of
/// `tile_bits` bits per axis, then, for a 3D array, the [`VECTOR_SLACK`].
pub(crate) fn padded_len(board: &Board, moves: &Moves, tile_bits: u32) -> u128 {
    let (tile, reach) = (1u128 << tile_bits, u128::from(moves.reach()));
    let cells = board.sides().iter().fold(1u128, |acc, &n| {
        let padded = (u128::from(n) + 2 * reach).div_ceil(tile) * tile;
        acc.saturating_mul(padded)
    });
    cells.saturating_add(slack_for(board.dims()) as u128)
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

    /// The layout walks run on where no kernel asks for another: tiled
    /// where [`walk_tile_bits`] says so.
    pub(crate) fn for_walks(board: &Board, moves: &Moves) -> Result<Layout> {
        Layout::with_tiles(board, moves, walk_tile_bits(board.dims()))
    }

    /// The layout with tiles of `tile_bits` bits per axis (0: row-major).
    pub(crate) fn with_tiles(board: &Board, moves: &Moves, tile_bits: u32) -> Result<Layout> {
        let pad = moves.reach() as usize;
        let sides: Vec<usize> = board.sides().iter().map(|&n| n as usize).collect();
        let len = padded_len(board, moves, tile_bits);
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

    /// Blocked slots after the array's last cell ([`VECTOR_SLACK`]).
    pub(crate) fn slack(&self) -> usize {
        slack_for(self.sides.len())
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
        Padded::new(cells, self.id, WalkState::Fresh)
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

    /// Side lengths of the board (unpadded).
    #[inline]
    pub(crate) fn sides(&self) -> &[usize] {
        &self.sides
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
