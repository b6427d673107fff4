//! Rule W+ on cells that carry their own key: each cell of a 2D board with
//! 8 moves holds a `u32` of (degree, distance from the centre), so a
//! candidate's W+ key is one load instead of a degree plus a per-move
//! distance term kept up to date every step ([`super::keyed`]'s `walk_plus_8`). The
//! board costs 4 bytes a cell instead of 1, so only W+ walks use it, and only
//! where the distance fits the cell. Where [`super::sse_windows`]'s 16-bit cells
//! fit (x86-64 with SSE4.1, the leapers whose row moves lie within 8 cells)
//! those run instead, four walks at once.
//!
//! Measured on aw+ (3,2) 400x400, 30 starts (2.6 walks a task), six runs
//! alternating with the byte kernel's binary: 69.9-88.1 ms against
//! 82.3-107.3 ms, 1.14-1.22x run by run.

use std::marker::PhantomData;

use super::cpu::Cpu;
use super::kernel::{self, GroupWalk, WALKS_AT_ONCE};
use super::{cell, doomed, run_pair, set_cell, tree_min, BufferedWalk, Paired, PausedWalk, Stepper};
use crate::board::Board;
use crate::layout::{self, BoardCell, Layout, MoveTable, Padded};
use crate::moves::Moves;

/// Moves a cell-keyed walk takes (2D leapers).
pub(crate) const K: usize = 8;
/// Bits of a cell below its degree: `FIELD - dist2`, where dist2 is the
/// squared doubled distance from the centre (larger is farther).
const DISTANCE_BITS: u32 = 24;
/// Bits of the padded cell in a key; the move index sits above them.
const CELL_BITS: u32 = 28;
/// A blocked (border or visited) cell: degree 255, distance bits clear.
/// Every neighbour of the walk loses one per visit, blocked cells included
/// (branch-free), so a blocked cell never falls below 255 - K.
const BLOCKED: u32 = 0xff << DISTANCE_BITS;
/// One degree.
const ONE: u32 = 1 << DISTANCE_BITS;

/// Whether walks on this board and move set can run on keyed cells: 2D, 8
/// moves closed under negation (a row-major layout whose neighbours are
/// their own predecessors), the largest squared doubled distance below
/// 2^24 (a square board up to 2,897 a side) and the padded board below
/// 2^28 cells.
pub(crate) fn fits(board: &Board, moves: &Moves) -> bool {
    let sides = board.sides();
    if sides.len() != 2 || moves.len() != K || !moves.closed_under_negation() {
        return false;
    }
    let far: u64 = sides.iter().map(|&n| (u64::from(n) - 1).pow(2)).sum();
    let tile_bits = layout::walk_tile_bits(2);
    let padded = layout::padded_len(board, moves, tile_bits);
    tile_bits == 0 && far < 1 << DISTANCE_BITS && padded < 1 << CELL_BITS
}

/// The kind of [`Padded`] buffer keyed cells are.
#[derive(Debug)]
pub(crate) struct KeyedCells;

/// The starting cells of a board that [`fits`]: each board cell's starting
/// degree (from `degrees`, the layout's byte degrees) and distance term,
/// every border cell [`BLOCKED`]. One pass, no division per cell: it is
/// part of the first W+ task's time.
pub(crate) fn starting_cells(layout: &Layout, degrees: &Padded<u8>) -> Padded<u32, KeyedCells> {
    assert_eq!(degrees.layout(), layout.id(), "degrees of this layout");
    let degrees = degrees.as_slice();
    let sides = layout.sides();
    assert!(sides.len() == 2 && layout.phase_mask() == 0, "a 2D row-major layout");
    let (rows, cols) = (sides[0] as i64, sides[1] as i64);
    let far = (rows - 1).pow(2) + (cols - 1).pow(2);
    assert!(far < 1 << DISTANCE_BITS, "distances past the cell's bits");
    let mut out = vec![BLOCKED; degrees.len()];
    // Row-major: a board row is a run of padded cells.
    for x in 0..rows {
        let first = layout.padded((x * cols) as u64);
        let r = 2 * x - (rows - 1);
        let run = first..first + cols as usize;
        for ((o, &d), y) in out[run.clone()].iter_mut().zip(&degrees[run]).zip(0..) {
            let s = 2 * y - (cols - 1);
            *o = (d as u32) << DISTANCE_BITS | (far - r * r - s * s) as u32;
        }
    }
    // SAFETY: border cells BLOCKED, board cells their degree (at most K)
    // and a distance term below ONE: a walk's first step may take them.
    unsafe { layout.buffer(out) }
}

/// W+ walks on keyed cells as a [`GroupWalk`]: two at a time, the starting
/// cells shared.
#[derive(Debug)]
pub(crate) struct DistanceCells;

impl GroupWalk for DistanceCells {
    type Cell = u32;
    type Kind = KeyedCells;
    type Shared = Padded<u32, KeyedCells>;
    const AT_ONCE: usize = 2;
    const ALONE_ON_DEGREES: bool = false;

    fn shared(layout: &Layout, _: &Moves, degrees: &Padded<u8>, _: Cpu) -> Padded<u32, KeyedCells> {
        starting_cells(layout, degrees)
    }

    fn shared_bytes(shared: &Padded<u32, KeyedCells>) -> usize {
        shared.bytes()
    }

    /// 4 bytes a padded cell: the starting cells, and a thread's two
    /// working copies.
    fn need(padded: u128) -> (u128, u128) {
        (padded.saturating_mul(4), padded.saturating_mul(8))
    }

    fn reset(shared: &Padded<u32, KeyedCells>, _: &Padded<u8>, cells: &mut Padded<u32, KeyedCells>) {
        cells.copy_from(shared);
    }

    fn begin(cells: &mut Padded<u32, KeyedCells>, start: BoardCell) -> PausedWalk {
        begin(cells, start)
    }

    fn walk(
        _: &Padded<u32, KeyedCells>,
        (cells, offsets): (&mut Padded<u32, KeyedCells>, &MoveTable),
        start: BoardCell,
        path: Option<&mut Vec<usize>>,
        stop_when_doomed: bool,
    ) -> u64 {
        walk(cells, offsets, start, path, stop_when_doomed)
    }

    /// A lone walk on [`run`]'s loop (the leaner pair step is slower
    /// alone), two on [`Pointers`].
    fn run(_: &Padded<u32, KeyedCells>, walks: &mut [BufferedWalk<'_, u32, KeyedCells>]) -> [bool; WALKS_AT_ONCE] {
        match walks {
            [a] => {
                run(a.reborrow(), None);
                kernel::ended(&[true])
            }
            [a, b] => kernel::ended(&run_pair(Pointers::of(a.reborrow()), Pointers::of(b.reborrow()))),
            _ => panic!("keyed cells take one or two walks, not {}", walks.len()),
        }
    }
}

/// A walk about to leave board cell `start` of the fresh `cells`, which
/// this marks visited.
pub(crate) fn begin(cells: &mut Padded<u32, KeyedCells>, start: BoardCell) -> PausedWalk {
    let progress = PausedWalk::begin::<DistanceCells, _, _>(cells, start);
    // SAFETY: blocks a board cell, as a step does.
    unsafe { cells.cells_mut()[start.index()] = BLOCKED };
    progress
}

/// Checks, once per call, what [`run`] and [`Pointers::of`] need besides
/// [`BufferedWalk::check`]: 8 moves on a row-major layout, a board whose
/// cells a key holds.
fn check(walk: &BufferedWalk<'_, u32, KeyedCells>) {
    walk.check::<DistanceCells>();
    assert!(walk.offsets.count() == K && walk.offsets.phase_mask() == 0, "8 moves, row-major");
    assert!(walk.cells.len() < 1 << CELL_BITS, "{} cells", walk.cells.len());
}

/// One W+ walk from board cell `start` on the fresh `cells` (from
/// [`starting_cells`]), `offsets` the 8 moves in the current order; returns
/// cells visited. The same walk as [`super::walk`]'s with rule W+, the doom
/// cut included (see [`doomed`]).
pub(crate) fn walk(
    cells: &mut Padded<u32, KeyedCells>,
    offsets: &MoveTable,
    start: BoardCell,
    mut path: Option<&mut Vec<usize>>,
    stop_when_doomed: bool,
) -> u64 {
    let mut progress = begin(cells, start);
    if let Some(p) = path.as_deref_mut() {
        p.push(start.index());
    }
    run(BufferedWalk { cells, offsets, progress: &mut progress, stop_when_doomed }, path);
    progress.visited
}

/// Takes a walk on to its end, pushing each cell it enters to `path`.
///
/// A candidate's key is (cell before its decrement, move index, cell): each
/// neighbour loses the same one, so the least key is the same, and the key
/// does not wait on the subtraction.
pub(crate) fn run(walk: BufferedWalk<'_, u32, KeyedCells>, mut path: Option<&mut Vec<usize>>) {
    check(&walk);
    let BufferedWalk { cells, offsets, progress, stop_when_doomed } = walk;
    // SAFETY: only this walk's steps write to the cells.
    let cells = unsafe { cells.cells_mut() };
    let mut offset = [0isize; K];
    offset.copy_from_slice(&offsets.rows()[..K]);
    let PausedWalk { mut cur, mut visited, mut forced, .. } = *progress;
    loop {
        let mut keys = [0u64; K];
        for k in 0..K {
            let n = cur.wrapping_add_signed(offset[k]);
            // SAFETY: `n` is a neighbour of the board cell `cur` (the walk's,
            // checked to be of these cells, or the open one a step chose),
            // inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            let before = unsafe { cell(cells, n) };
            // SAFETY: as above.
            unsafe { set_cell(cells, n, before.wrapping_sub(ONE)) };
            keys[k] = (before as u64) << 32 | (k << CELL_BITS | n) as u64;
        }
        let best = tree_min(keys);
        // The least candidate's degree before this step's decrement: an
        // open cell's is at most K, a blocked one's at least 255 - K.
        let least = best >> (32 + DISTANCE_BITS);
        if least > K as u64 {
            break;
        }
        let next = (best & ((1 << CELL_BITS) - 1)) as usize;
        // As in the byte kernel: a cell left behind can doom the walk only
        // if it has at most one unvisited neighbour (then so has `next`).
        if stop_when_doomed
            && least < 3
            // SAFETY: `cur` is a board cell, the offsets the layout's.
            && unsafe { doomed(cells, |c| (c >> DISTANCE_BITS) as u8, (&offset, 0, K), cur, next, &mut forced) }
        {
            break;
        }
        cur = next;
        // SAFETY: `cur` is a board cell: the open cell a step chose.
        unsafe { set_cell(cells, cur, BLOCKED) };
        visited += 1;
        if let Some(p) = path.as_deref_mut() {
            p.push(cur);
        }
    }
    (progress.cur, progress.visited, progress.forced, progress.ended) = (cur, visited, forced, true);
}

/// A walk's keyed cells as the pair kernel reads them ([`Stepper`]):
/// every access goes through `base` or the pointers made from it, none
/// through the slice.
///
/// Its step is leaner than [`run`]'s, which a lone walk's latency
/// favours: a neighbour is read through a pointer per move that already
/// holds `cells + offset`, its key is `cell << 3 | k` (one `lea`), and the
/// next cell is `cur + offset[k]` (aw+ (3,2) N=400: 5.7 ns a step in a
/// pair, 8.5 alone, against [`run`]'s 7.8 alone).
pub(crate) struct Pointers<'a> {
    base: *mut u32,
    len: usize,
    stop_when_doomed: bool,
    offsets: [isize; K],
    /// `base + offset` per move: outside the buffer for negative offsets,
    /// which `wrapping_offset` allows; `cur` is added before any access.
    bases: [*mut u32; K],
    /// The cells, borrowed for as long as the pointers live.
    cells: PhantomData<&'a mut [u32]>,
}

impl<'a> Pointers<'a> {
    /// A walk from [`begin`] on its own cells, ready to step (checked as
    /// [`run`] checks it).
    pub(crate) fn of(walk: BufferedWalk<'a, u32, KeyedCells>) -> Paired<'a, Pointers<'a>> {
        check(&walk);
        let BufferedWalk { cells, offsets: table, progress, stop_when_doomed } = walk;
        // SAFETY: only this walk's steps write to the cells.
        let cells = unsafe { cells.cells_mut() };
        let base = cells.as_mut_ptr();
        let mut offsets = [0isize; K];
        offsets.copy_from_slice(&table.rows()[..K]);
        let bases = offsets.map(|o| base.wrapping_offset(o));
        let len = cells.len();
        let stepper = Pointers { base, len, stop_when_doomed, offsets, bases, cells: PhantomData };
        Paired { stepper, progress }
    }
}

// SAFETY: the offsets are of the cells' layout (`Pointers::of` checked);
// a step from a board cell reads and writes its neighbours, inside the
// buffer, and returns an open cell, a board cell.
unsafe impl Stepper for Pointers<'_> {
    type Key = u64;

    #[inline(always)]
    unsafe fn scan(&self, cur: usize) -> u64 {
        let Pointers { base, len, ref bases, .. } = *self;
        let mut keys = [0u64; K];
        for (k, key) in keys.iter_mut().enumerate() {
            let p = bases[k].wrapping_add(cur);
            debug_assert!((p as usize).wrapping_sub(base as usize) / 4 < len);
            // SAFETY: a neighbour of a board cell, inside the buffer
            // (`BoardCell`, `MoveTable`, `Padded`; see walk.rs).
            let before = unsafe { *p };
            // SAFETY: as above.
            unsafe { *p = before.wrapping_sub(ONE) };
            *key = (u64::from(before) << 3) + k as u64;
        }
        tree_min(keys)
    }

    #[inline(always)]
    unsafe fn take(&mut self, cur: usize, best: u64, forced: &mut u32) -> Option<usize> {
        let Pointers { base, len, stop_when_doomed, ref offsets, .. } = *self;
        let least = best >> (3 + DISTANCE_BITS);
        if least > K as u64 {
            return None;
        }
        let next = cur.wrapping_add_signed(offsets[(best & 7) as usize]);
        if stop_when_doomed && least < 3 {
            // SAFETY: the buffer, read only while this view lives.
            let view = unsafe { std::slice::from_raw_parts(base, len) };
            // SAFETY: `cur` is a board cell, the offsets the layout's.
            if unsafe { doomed(view, |c| (c >> DISTANCE_BITS) as u8, (offsets, 0, K), cur, next, forced) } {
                return None;
            }
        }
        debug_assert!(next < len);
        // SAFETY: the least key is an open board cell's.
        unsafe { *base.add(next) = BLOCKED };
        Some(next)
    }
}
