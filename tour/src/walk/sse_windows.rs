//! Warnsdorff walks of 2D leapers of 8 moves on x86-64 (SSE4.1), up to
//! six at once: rule W+ on 16-bit cells ([`WPlusTables`]) and rule W on the byte
//! degrees ([`w_bytes::WTables`]).
//!
//! A leaper's 8 neighbours lie in four board rows, two in each, close
//! enough that one load of 8 cells of each row holds both. A step
//! loads those four windows, takes one degree from its neighbours with a
//! vector subtraction, stores the windows back, gathers the 8 neighbours
//! into one vector (`pshufb`) and takes the least with `phminposuw`, which
//! also gives its lane. About 35 instructions a step against the keyed
//! cells' 60 ([`super::distance_cells`]), but a longer chain of latency (alone
//! no faster), so the kernel pays by running up to [`WALKS_AT_ONCE`] walks side by
//! side, a step of each in turn (docs/engine.md).
//!
//! A 16-bit cell is `visited:1 degree:4 0:3 class:8`, the class doubled
//! (classes are fewer than 128), so that the class byte of a key, scaled
//! by 8, is its rank row's offset (one instruction a step fewer). A candidate's key is
//! its cell with the W+ rank of its move in bits 8-10: the rank orders the
//! moves from the current cell by distance from the centre (farthest
//! first), then by the walk's move order. Two moves' distances compare
//! alike from every cell of a sector around the centre (all 8 moves of a
//! leaper are equally long, so the order depends only on the direction from
//! the centre), so the rank of every lane is a row of a small table, one
//! per sector (`class`) and rotation of the move order, and the chosen
//! neighbour's class comes with its key. Equal distances lie on the
//! sectors' borders, which are classes of their own.
//!
//! The cell the walk stands on is marked visited one step late, by the
//! next step's windows (the lane it was entered through is known): a
//! store of its own would still be in flight when the next step loads the
//! window over it, and a load that overlaps part of a pending store waits
//! for it to reach the cache. The windows of two consecutive steps of a
//! (3,2) or (3,1) leaper never share a row at all. Between calls a walk is
//! a [`PausedWalk`] like any other kernel's.

use std::ops::{BitAnd, BitOr, Not};

use super::cpu::{Cpu, Sse41};
use super::kernel::WALKS_AT_ONCE;
use super::{doomed, BufferedWalk, PausedWalk};
use crate::board::Board;
use crate::layout::{self, BoardCell, LayoutId, MoveTable, Padded};
use crate::moves::Moves;

#[cfg(target_arch = "x86_64")]
mod simd;
pub(crate) mod w_bytes;
mod w_plus;
mod walker;

pub(crate) use w_plus::WPlusTables;
use walker::Walker;

/// Moves of a walk (2D leapers).
const K: usize = 8;
/// The visited bit of a key, and of a 16-bit cell.
const VISITED: u16 = 0x8000;
const DEGREE_SHIFT: u32 = 11;
/// One degree.
const ONE: u16 = 1 << DEGREE_SHIFT;
const RANK_SHIFT: u32 = 8;
/// A border cell: visited, and every neighbour's visit takes a degree, so
/// it starts with as many as it can lose.
const BORDER: u16 = VISITED | (K as u16) << DEGREE_SHIFT;
/// The lane a walk came in through when no step has marked its previous
/// cell for it (a start, or a walk resumed from a [`PausedWalk`]).
const NONE: u32 = K as u32;
/// Cells past the padded board that the last windows may read.
const SLACK: usize = 8;
/// Classes a board can have: the 28 pairs of moves of one length compare
/// alike on either side of at most 28 lines through the centre, which
/// leave at most 56 sectors, 56 rays and the centre.
const CLASSES: usize = 128;

/// Eight lanes of 16 bits, aligned so that a step can use them straight
/// from memory.
#[repr(C, align(16))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Row([u16; 8]);

/// Where a move set's neighbours lie from any cell: four windows of 8
/// cells, two neighbours each, and each key lane's move.
struct Windows {
    /// Offset of each window's first cell from the current cell.
    starts: [isize; 4],
    /// Each lane's canonical move index, window and place in the window.
    lanes: [(usize, usize, usize); K],
}

impl Windows {
    /// Whether the windows neither overlap nor cover the current cell.
    fn apart(&self) -> bool {
        let window = |w: usize| self.starts[w]..self.starts[w] + 8;
        (0..4).all(|a| {
            !window(a).contains(&0)
                && (a + 1..4).all(|b| window(a).start >= window(b).end || window(b).start >= window(a).end)
        })
    }
}

/// Whether W+ walks on this board and move set run here on `cpu`: x86-64
/// with SSE4.1, a 2D row-major board, 8 moves of one length closed under
/// negation, two in each of four rows within 8 consecutive cells, and
/// rows wide enough that the windows neither overlap nor cover the cell.
pub(crate) fn fits(board: &Board, moves: &Moves, cpu: Cpu) -> bool {
    Sse41::new(cpu).is_some() && windows_fit(board, moves)
}

/// [`fits`] on a CPU with SSE4.1: whether the board and move set have the
/// windows.
pub(crate) fn windows_fit(board: &Board, moves: &Moves) -> bool {
    windows(board.sides(), moves).is_some()
}

/// The windows of a board's rows, each starting at its row's leftmost
/// neighbour.
fn windows(sides: &[u32], moves: &Moves) -> Option<Windows> {
    if sides.len() != 2 || moves.len() != K || !moves.closed_under_negation() || layout::walk_tile_bits(2) != 0 {
        return None;
    }
    let length = |v: &[i32]| v.iter().map(|&c| i64::from(c).pow(2)).sum::<i64>();
    if moves.iter().any(|v| length(v) != length(moves.get(0))) {
        return None;
    }
    let stride = sides[1] as isize + 2 * moves.reach() as isize;
    let mut rows: Vec<i32> = moves.iter().map(|v| v[0]).collect();
    rows.sort_unstable();
    rows.dedup();
    if rows.len() != 4 {
        return None;
    }
    let mut out = Windows { starts: [0; 4], lanes: [(0, 0, 0); K] };
    for (w, &row) in rows.iter().enumerate() {
        let group: Vec<usize> = (0..K).filter(|&k| moves.get(k)[0] == row).collect();
        let [a, b] = group[..] else { return None };
        let first = moves.get(a)[1].min(moves.get(b)[1]);
        if moves.get(a)[1].max(moves.get(b)[1]) - first >= 8 {
            return None;
        }
        out.starts[w] = row as isize * stride + first as isize;
        for (h, &k) in group.iter().enumerate() {
            out.lanes[2 * w + h] = (k, w, (moves.get(k)[1] - first) as usize);
        }
    }
    out.apart().then_some(out)
}

/// Bytes a [`WPlusTables`] holds on a board of `padded` cells.
pub(crate) fn shared_bytes(padded: u128) -> u128 {
    cell_bytes(padded) + (K * CLASSES * std::mem::size_of::<Row>()) as u128
}

/// Bytes of one walk's cells on a board of `padded` cells.
pub(crate) fn cell_bytes(padded: u128) -> u128 {
    (padded + SLACK as u128) * 2
}

/// The kind of [`Padded`] buffer 16-bit cells are.
#[derive(Debug)]
pub(crate) struct WindowCells;

/// A kind of cell the walks of this module walk on, and its plan: what a
/// step reads besides the cells. The walks' loop ([`WindowKernel::run`]) is
/// the same for every kind.
///
/// # Safety
/// The loop trusts the plan: [`WindowKernel::layout`] is the layout it was
/// made for, [`WindowKernel::buffer_len`] the cells of that layout's
/// buffers with the slack the windows need, [`WindowKernel::offsets`] that
/// layout's moves, and [`WindowKernel::step`] from a board cell of such a
/// buffer stays inside it and returns a neighbour of the cell.
pub(crate) unsafe trait WindowKernel: Sized + 'static {
    /// A cell: its visited bit is [`WindowKernel::VISITED`].
    type Cell: Copy + BitOr<Output = Self::Cell> + BitAnd<Output = Self::Cell> + Not<Output = Self::Cell>;
    /// The kind of buffer the cells are.
    type Kind;
    const VISITED: Self::Cell;
    /// Keys below this (degree 0 or 1) may mean the walk is doomed.
    const DOOM_CHECK: u16;

    /// The proof that this CPU runs the kernel's instructions.
    fn sse41(&self) -> Sse41;

    /// The layout the plan was made for.
    fn layout(&self) -> LayoutId;

    /// Each key lane's padded offset.
    fn offsets(&self) -> &[isize; K];

    /// Cells a walk's buffer holds: the padded board's, and any slack the
    /// windows need past it.
    fn buffer_len(&self) -> usize;

    /// The rank rows of a walk in move order `offsets` (a rotation of the
    /// canonical order).
    fn ranks(&self, offsets: &[isize]) -> &[Row];

    /// The low bits of a walk's first key: what its first step needs of
    /// the cell it stands on.
    fn first_key(cell: Self::Cell) -> u32;

    /// A stored cell's degree, 255 when visited.
    fn degree(cell: Self::Cell) -> u8;

    /// One step of a walk standing on unmarked cell `at`, whose last key is
    /// `key`: takes a degree from each neighbour, marks the previous cell,
    /// and returns the least candidate's cell and `phminposuw`'s result (the
    /// key in bits 0-15, visited at [`VISITED`], the lane chosen in bits
    /// 16-18, and zeros above: the walk's next key in its low 32 bits). The cell
    /// is a pointer, not an index, so the loop needs no register for each
    /// walk's buffer.
    ///
    /// # Safety
    /// SSE4.1 and SSSE3; `at` points to a board cell of a buffer of
    /// [`WindowKernel::buffer_len`] cells (which hold every window of a
    /// board cell), and `ranks` to the walk's rank rows.
    #[cfg(target_arch = "x86_64")]
    unsafe fn step(
        &self,
        at: *mut Self::Cell,
        key: u32,
        ranks: *const Row,
    ) -> (*mut Self::Cell, std::arch::x86_64::__m128i);

    /// One walk from board cell `start` on the fresh `cells` (reset from
    /// the starting cells, which mark nothing visited) in move order
    /// `offsets`, to its end; returns cells visited, pushing each to
    /// `path`. The same walk as [`super::walk`]'s, the doom cut included.
    /// Panics where [`WindowKernel::run`] does.
    fn walk(
        &self,
        (cells, offsets): (&mut Padded<Self::Cell, Self::Kind>, &MoveTable),
        start: BoardCell,
        mut path: Option<&mut Vec<usize>>,
        stop_when_doomed: bool,
    ) -> u64 {
        let mut progress = begin::<Self>(cells, start);
        if let Some(p) = path.as_deref_mut() {
            p.push(start.index());
        }
        let walk = BufferedWalk { cells, offsets, progress: &mut progress, stop_when_doomed };
        advance(self, &mut [walk], path);
        progress.visited
    }

    /// Advances up to [`WALKS_AT_ONCE`] walks, each on its own cells, a step of
    /// each in turn, until one or more end; returns which ended. Panics
    /// unless each walk was begun by [`begin`] on its cells, a buffer of
    /// the layout this plan was made for, and has not ended.
    fn run(&self, walks: &mut [BufferedWalk<'_, Self::Cell, Self::Kind>]) -> [bool; WALKS_AT_ONCE] {
        advance(self, walks, None)
    }
}

/// A walk about to leave board cell `start` of the fresh `cells`, which
/// this marks visited.
pub(crate) fn begin<P: WindowKernel>(cells: &mut Padded<P::Cell, P::Kind>, start: BoardCell) -> PausedWalk {
    let progress = PausedWalk::begin::<P, _, _>(cells, start);
    // SAFETY: marks a board cell visited, as a step does.
    let cells = unsafe { cells.cells_mut() };
    cells[start.index()] = cells[start.index()] | P::VISITED;
    progress
}

/// Runs `walks` in the kernel until one or more end, and hands them back
/// paused. Checks once per call that each walk is one the kernel may go on
/// with (see [`WindowKernel::run`]).
fn advance<P: WindowKernel>(
    plan: &P,
    walks: &mut [BufferedWalk<'_, P::Cell, P::Kind>],
    path: Option<&mut Vec<usize>>,
) -> [bool; WALKS_AT_ONCE] {
    let n = walks.len();
    assert!((1..=WALKS_AT_ONCE).contains(&n), "1 to {WALKS_AT_ONCE} walks, not {n}");
    assert!(path.is_none() || n == 1, "a path is recorded for a lone walk");
    let mut walkers: [Walker<'_, P::Cell>; WALKS_AT_ONCE] = std::array::from_fn(|_| Walker::default());
    // Each walk's progress, beside the walker that borrows its cells.
    let mut paused: [Option<&mut PausedWalk>; WALKS_AT_ONCE] = Default::default();
    for ((walker, walk), p) in walkers.iter_mut().zip(walks.iter_mut()).zip(&mut paused) {
        walk.check::<P>();
        assert_eq!(walk.cells.layout(), plan.layout(), "cells of this plan's board");
        assert_eq!(walk.cells.len(), plan.buffer_len(), "cells of this plan's board");
        let BufferedWalk { cells, offsets, progress, stop_when_doomed } = walk;
        let cur = progress.cur;
        // SAFETY: only the kernel's steps write to the cells from here, and
        // the marking below that hands the walk back in the common form.
        let cells = unsafe { cells.cells_mut() };
        // The kernel's walk stands on an unmarked cell (see the module
        // documentation); its previous cell is marked already.
        cells[cur] = cells[cur] & !P::VISITED;
        let key = NONE << 16 | P::first_key(cells[cur]);
        let threshold = if *stop_when_doomed { P::DOOM_CHECK } else { 0 };
        *walker = Walker::new(cells, cur, key, plan.ranks(offsets.rows()), threshold, progress.forced);
        *p = Some(&mut **progress);
    }
    // SAFETY: each walker stands on a board cell of its own cells, a buffer
    // of the plan's layout with the slack its windows need (checked above).
    unsafe { step_until_one_ends(plan, &mut walkers[..n], path) };
    let mut ended = [false; WALKS_AT_ONCE];
    for ((walker, p), ended) in walkers[..n].iter_mut().zip(paused).zip(&mut ended) {
        let Walker { cur, key, steps, forced, ended: walk_ended, .. } = *walker;
        let cells = walker.cells_mut();
        // Back to the common form: the cell stood on and the previous
        // one marked.
        let came = (key >> 16) as usize;
        if came < K {
            let before = cur.wrapping_add_signed(-plan.offsets()[came]);
            cells[before] = cells[before] | P::VISITED;
        }
        cells[cur] = cells[cur] | P::VISITED;
        let p = p.expect("a walk beside each walker");
        (p.cur, p.visited, p.forced, p.ended) = (cur, p.visited + steps, forced, walk_ended);
        *ended = walk_ended;
    }
    ended
}

/// Steps `walkers` until one or more end.
///
/// # Safety
/// Each walker stands on a board cell of its own cells, a buffer of the
/// plan's layout.
#[cfg(target_arch = "x86_64")]
unsafe fn step_until_one_ends<P: WindowKernel>(
    plan: &P,
    walkers: &mut [Walker<'_, P::Cell>],
    path: Option<&mut Vec<usize>>,
) {
    let _proof: Sse41 = plan.sse41();
    // SAFETY: the CPU has SSE4.1 and SSSE3 (the plan holds the proof);
    // each walker stands on a board cell of its own cells (the caller's),
    // which no reference reaches while the kernel runs (the walks are
    // borrowed mutably by the caller and not used until this returns).
    unsafe {
        match walkers.len() {
            1 => simd::run::<1, P>(plan, walkers, path),
            2 => simd::run::<2, P>(plan, walkers, None),
            3 => simd::run::<3, P>(plan, walkers, None),
            4 => simd::run::<4, P>(plan, walkers, None),
            5 => simd::run::<5, P>(plan, walkers, None),
            _ => simd::run::<6, P>(plan, walkers, None),
        }
    }
}

/// No plan is made off x86-64, so no walker ever gets here.
///
/// # Safety
/// None needed; unsafe as the x86-64 one is.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn step_until_one_ends<P: WindowKernel>(_: &P, _: &mut [Walker<'_, P::Cell>], _: Option<&mut Vec<usize>>) {
    unreachable!("no plan is built without SSE4.1");
}

/// The least of a step's 8 `keys` (`phminposuw`), and the cell its lane
/// leads to from `p`: what [`WindowKernel::step`] returns.
///
/// # Safety
/// SSE4.1; `p` plus any of `offsets` lies in `p`'s buffer.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn chosen<C>(
    p: *mut C,
    offsets: &[isize; K],
    keys: std::arch::x86_64::__m128i,
) -> (*mut C, std::arch::x86_64::__m128i) {
    use std::arch::x86_64::*;
    // SAFETY: SSE4.1 is the caller's; `phminposuw` zeroes the bits above
    // the lane (0..8), so the lane indexes `offsets` as it is (one
    // instruction fewer than a mask), and the cell lies in the buffer (the
    // caller's).
    unsafe {
        let least = _mm_minpos_epu16(keys);
        let lane = (_mm_cvtsi128_si32(least) as u32 >> 16) as usize;
        (p.offset(*offsets.get_unchecked(lane)), least)
    }
}

/// The key lane back to the previous cell after a step through lane `came`.
fn back(offsets: &[isize; K], came: usize) -> usize {
    (0..K).find(|&t| offsets[t] == -offsets[came]).expect("moves closed under negation")
}

/// The rotation of the canonical move order that move order `offsets` is,
/// from each key lane's offset and canonical move index.
fn rotation(lane_offsets: &[isize; K], lane_moves: &[usize; K], offsets: &[isize]) -> usize {
    let first = (0..K).find(|&t| lane_offsets[t] == offsets[0]).expect("a move of this board");
    let rotation = lane_moves[first];
    debug_assert!((0..K).all(|t| offsets[(lane_moves[t] + K - rotation) % K] == lane_offsets[t]));
    rotation
}
