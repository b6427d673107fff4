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

use std::collections::HashMap;
use std::marker::PhantomData;
use std::ops::{BitAnd, BitOr, Not};

use super::cpu::Cpu;
use super::kernel::{GroupWalk, WALKS_AT_ONCE};
use super::{doomed, BufferedWalk, PausedWalk};
use crate::board::Board;
use crate::layout::{self, BoardCell, Layout, LayoutId, MoveTable, Padded};
use crate::moves::Moves;

pub(crate) mod w_bytes;

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

/// Proof that the CPU running this has SSE4.1 and SSSE3: made only from a
/// [`Cpu`] that has them, and held by every plan, so a plan's kernel runs
/// only where its instructions exist.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sse41(());

impl Sse41 {
    /// The proof, where `cpu` has the features.
    pub(crate) fn new(cpu: Cpu) -> Option<Sse41> {
        cpu.has_sse41().then_some(Sse41(()))
    }
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
    let Sse41(()) = plan.sse41();
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

/// A walk as the kernel holds it: its cells as a pointer, borrowed for
/// `'a`.
///
/// The borrow is a real one: [`Walker::new`] takes the cells as
/// `&'a mut [C]`, so the walker holds them exclusively for as long as it
/// lives, as a `&'a mut [C]` would, and the compiler rejects a walker that
/// outlives its buffer or a use of the buffer while a walker holds it.
/// After the kernel the walks' cells are reached through their walkers
/// ([`Walker::cells_mut`]). The type is private to this module, which a
/// doctest (an outside crate) cannot name, so no `compile_fail` example
/// can show it; these are rejected (tried when this was written; with
/// the struct built from a bare `PhantomData` both compiled):
///
/// ```text
/// let walker = {
///     let mut cells = vec![0u16; 64];
///     Walker::new(&mut cells, 0, 0, &ranks, 0, 0)
/// }; // error[E0597]: `cells` does not live long enough
///
/// let mut walker = Walker::new(&mut cells, 0, 0, &ranks, 0, 0);
/// cells[0] = 2; // error[E0499]: cannot borrow `cells` as mutable more than once
/// walker.cells_mut()[0] = 1;
/// ```
#[derive(Debug)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct Walker<'a, C> {
    cells: *mut C,
    len: usize,
    /// The cell stood on, unmarked.
    cur: usize,
    /// The last `phminposuw` result: the lane the walk came in through
    /// (bits 16-18, [`NONE`] at first) and the key (bits 0-15).
    key: u32,
    ranks: *const Row,
    /// Least key that needs no second look: [`WindowKernel::DOOM_CHECK`] when the
    /// walk may stop doomed, else 0 (only a visited key ends it).
    threshold: u16,
    forced: u32,
    steps: u64,
    ended: bool,
    /// The cells, borrowed for as long as the walker lives (taken from the
    /// `&'a mut [C]` [`Walker::new`] is given).
    buffer: PhantomData<&'a mut [C]>,
}

impl<'a, C> Walker<'a, C> {
    /// A walk standing on `cur` of `cells`, which it borrows for `'a` (and
    /// its rank rows too), with its last key, its doom threshold and its
    /// count of last-cell candidates.
    fn new(cells: &'a mut [C], cur: usize, key: u32, ranks: &'a [Row], threshold: u16, forced: u32) -> Walker<'a, C> {
        Walker {
            cells: cells.as_mut_ptr(),
            len: cells.len(),
            cur,
            key,
            ranks: ranks.as_ptr(),
            threshold,
            forced,
            steps: 0,
            ended: false,
            buffer: PhantomData,
        }
    }

    /// The cells, once the kernel is done with them.
    fn cells_mut(&mut self) -> &mut [C] {
        // SAFETY: `cells` and `len` are those of the `&'a mut [C]` the
        // walker was made from (or a dangling pointer and 0 for a default
        // one), which it borrows until it is dropped; `&mut self` keeps
        // this slice the only way to them while it lives.
        unsafe { std::slice::from_raw_parts_mut(self.cells, self.len) }
    }
}

impl<C> Default for Walker<'_, C> {
    /// A walker on no cells (an empty slice), for the slots of a group
    /// left unused.
    fn default() -> Self {
        Walker {
            cells: std::ptr::NonNull::dangling().as_ptr(),
            len: 0,
            cur: 0,
            key: 0,
            ranks: std::ptr::null(),
            threshold: 0,
            forced: 0,
            steps: 0,
            ended: false,
            buffer: PhantomData,
        }
    }
}

/// Rule W+ on 16-bit cells: what its walks share, the windows, the tables
/// a step reads, and the starting cells (2 bytes a padded cell).
#[derive(Debug)]
pub(crate) struct WPlusTables {
    /// Offset of each window's first cell from the current cell.
    windows: [isize; 4],
    /// `pshufb` controls: each window's two neighbours to their key lanes.
    gather: [[u8; 16]; 4],
    /// What a step subtracts from each window, by the lane the walk came in
    /// through: a degree from each neighbour, and the visited bit added to
    /// the previous cell.
    decrements: [[Row; 4]; K + 1],
    /// Each key lane's padded offset.
    offsets: [isize; K],
    /// Each key lane's canonical move index.
    moves: [usize; K],
    /// Rank rows (rank << 8 per lane), [`CLASSES`] per rotation of the move
    /// order (a fixed size, so a board's need is known before it is built).
    ranks: Vec<Row>,
    /// The starting cells, 16 bits a cell.
    initial: Padded<u16, WindowCells>,
    sse41: Sse41,
}

impl WPlusTables {
    /// The plan of a board, from the layout's byte degrees, where it
    /// [`fits`] on `cpu`. One pass over the board, a few sectors a row.
    pub(crate) fn new(layout: &Layout, moves: &Moves, degrees: &Padded<u8>, cpu: Cpu) -> Option<WPlusTables> {
        // The windows are placed by `moves`, and must lie in the layout's
        // border, which its own moves set.
        assert!(layout.has_moves(moves), "the layout's moves");
        let sse41 = Sse41::new(cpu)?;
        let sides: Vec<u32> = layout.sides().iter().map(|&n| n as u32).collect();
        let w = windows(&sides, moves)?;
        let offsets = w.lanes.map(|(k, _, _)| layout.offsets()[k]);
        let mut gather = [[0x80u8; 16]; 4];
        let mut decrements = [[Row::default(); 4]; K + 1];
        for (t, &(_, window, e)) in w.lanes.iter().enumerate() {
            gather[window][2 * t] = 2 * e as u8;
            gather[window][2 * t + 1] = 2 * e as u8 + 1;
            decrements.iter_mut().for_each(|d| d[window].0[e] = ONE);
        }
        for (came, d) in decrements.iter_mut().take(K).enumerate() {
            let (_, window, e) = w.lanes[back(&offsets, came)];
            d[window].0[e] = ONE.wrapping_add(VISITED);
        }
        let (initial, dense) = starting_cells(layout, moves, &w, degrees);
        let lane_moves = w.lanes.map(|(k, _, _)| k);
        let mut ranks = vec![Row::default(); K * CLASSES];
        for (rotation, table) in ranks.chunks_exact_mut(CLASSES).enumerate() {
            for (row, d) in table.iter_mut().zip(&dense) {
                let mut order: [usize; K] = std::array::from_fn(|t| t);
                order.sort_by_key(|&t| (d[t], (lane_moves[t] + K - rotation) % K));
                for (rank, &t) in order.iter().enumerate() {
                    row.0[t] = (rank as u16) << RANK_SHIFT;
                }
            }
        }
        Some(WPlusTables { windows: w.starts, gather, decrements, offsets, moves: lane_moves, ranks, initial, sse41 })
    }

    /// The starting cells, copied before each walk.
    pub(crate) fn starting_cells(&self) -> &Padded<u16, WindowCells> {
        &self.initial
    }

    /// Bytes the plan holds: [`shared_bytes`].
    pub(crate) fn bytes(&self) -> usize {
        self.initial.bytes() + self.ranks.capacity() * std::mem::size_of::<Row>()
    }
}

// SAFETY: made from its layout, whose moves place the windows (checked in
// `WPlusTables::new`), which lie in the border and slack from a board cell.
unsafe impl WindowKernel for WPlusTables {
    type Cell = u16;
    type Kind = WindowCells;
    const VISITED: u16 = VISITED;
    const DOOM_CHECK: u16 = 2 * ONE;

    fn sse41(&self) -> Sse41 {
        self.sse41
    }

    fn layout(&self) -> LayoutId {
        self.initial.layout()
    }

    fn offsets(&self) -> &[isize; K] {
        &self.offsets
    }

    fn buffer_len(&self) -> usize {
        self.initial.len()
    }

    fn ranks(&self, offsets: &[isize]) -> &[Row] {
        &self.ranks[rotation(&self.offsets, &self.moves, offsets) * CLASSES..][..CLASSES]
    }

    fn first_key(cell: u16) -> u32 {
        u32::from(cell & 0xff)
    }

    fn degree(cell: u16) -> u8 {
        if cell & VISITED != 0 {
            u8::MAX
        } else {
            (cell >> DEGREE_SHIFT) as u8
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn step(&self, p: *mut u16, key: u32, ranks: *const Row) -> (*mut u16, std::arch::x86_64::__m128i) {
        use std::arch::x86_64::*;
        // SAFETY: (the whole body) the windows of a board cell lie in the
        // buffer (border, then slack, see `windows`), the tables are the
        // plan's own, `key >> 16` is a lane or NONE (decrements has K + 1
        // rows) and `key & 0xff` twice one of the plan's classes.
        unsafe {
            let d = self.decrements.as_ptr().add((key >> 16) as usize).cast::<__m128i>();
            let at = |w: usize| p.offset(self.windows[w]).cast::<__m128i>();
            let w0 = _mm_sub_epi16(_mm_loadu_si128(at(0)), _mm_load_si128(d));
            let w1 = _mm_sub_epi16(_mm_loadu_si128(at(1)), _mm_load_si128(d.add(1)));
            let w2 = _mm_sub_epi16(_mm_loadu_si128(at(2)), _mm_load_si128(d.add(2)));
            let w3 = _mm_sub_epi16(_mm_loadu_si128(at(3)), _mm_load_si128(d.add(3)));
            _mm_storeu_si128(at(0), w0);
            _mm_storeu_si128(at(1), w1);
            _mm_storeu_si128(at(2), w2);
            _mm_storeu_si128(at(3), w3);
            let g = |w: usize| _mm_loadu_si128(self.gather[w].as_ptr().cast());
            let keys = _mm_or_si128(
                _mm_or_si128(_mm_shuffle_epi8(w0, g(0)), _mm_shuffle_epi8(w1, g(1))),
                _mm_or_si128(_mm_shuffle_epi8(w2, g(2)), _mm_shuffle_epi8(w3, g(3))),
            );
            // The class byte is twice the class: half a row's offset.
            let row = ranks.cast::<u64>().add((key & 0xff) as usize);
            chosen(p, &self.offsets, _mm_or_si128(keys, _mm_load_si128(row.cast())))
        }
    }
}

/// W+ walks on 16-bit cells as a [`GroupWalk`]: the plan is what they
/// share.
impl GroupWalk for WPlusTables {
    type Cell = u16;
    type Kind = WindowCells;
    type Shared = WPlusTables;
    const AT_ONCE: usize = WALKS_AT_ONCE;
    const ALONE_ON_DEGREES: bool = false;

    fn shared(layout: &Layout, moves: &Moves, degrees: &Padded<u8>, cpu: Cpu) -> WPlusTables {
        WPlusTables::new(layout, moves, degrees, cpu).expect("chosen where it fits")
    }

    fn shared_bytes(shared: &WPlusTables) -> usize {
        shared.bytes()
    }

    /// The starting cells and the tables shared, and a thread's working
    /// copy for each walk it advances together.
    fn need(padded: u128) -> (u128, u128) {
        (shared_bytes(padded), cell_bytes(padded).saturating_mul(WALKS_AT_ONCE as u128))
    }

    fn reset(shared: &WPlusTables, _: &Padded<u8>, cells: &mut Padded<u16, WindowCells>) {
        cells.copy_from(shared.starting_cells());
    }

    fn begin(cells: &mut Padded<u16, WindowCells>, start: BoardCell) -> PausedWalk {
        begin::<WPlusTables>(cells, start)
    }

    fn walk(
        shared: &WPlusTables,
        cells: (&mut Padded<u16, WindowCells>, &MoveTable),
        start: BoardCell,
        path: Option<&mut Vec<usize>>,
        stop_when_doomed: bool,
    ) -> u64 {
        WindowKernel::walk(shared, cells, start, path, stop_when_doomed)
    }

    fn run(shared: &WPlusTables, walks: &mut [BufferedWalk<'_, u16, WindowCells>]) -> [bool; WALKS_AT_ONCE] {
        WindowKernel::run(shared, walks)
    }
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

/// The starting cells (degree and class; [`BORDER`] around) and each
/// class's dense distance ranks by lane (0 the farthest).
///
/// Two moves' distances from the centre compare, along a row, as a linear
/// function of the column does with 0, so each changes at most once a
/// row: the cells between consecutive changes share a class, which is
/// looked up once per run of cells rather than per cell.
fn starting_cells(
    layout: &Layout,
    moves: &Moves,
    w: &Windows,
    degrees: &Padded<u8>,
) -> (Padded<u16, WindowCells>, Vec<[u8; K]>) {
    assert_eq!(degrees.layout(), layout.id(), "degrees of this layout");
    let degrees = degrees.as_slice();
    let (rows, cols) = (layout.sides()[0] as i128, layout.sides()[1] as i128);
    let v: [(i128, i128); K] = w.lanes.map(|(k, _, _)| (i128::from(moves.get(k)[0]), i128::from(moves.get(k)[1])));
    // The squared doubled distance from the centre of each lane's target.
    let far = |x: i128, y: i128| -> [i128; K] {
        v.map(|(dx, dy)| (2 * (x + dx) - (rows - 1)).pow(2) + (2 * (y + dy) - (cols - 1)).pow(2))
    };
    let mut cells = vec![BORDER; layout.len() + SLACK];
    let mut dense: Vec<[u8; K]> = Vec::new();
    let mut ids: HashMap<[u8; K], u16> = HashMap::new();
    let mut cuts = Vec::with_capacity(4 * K * K);
    for x in 0..rows {
        let (at0, at1) = (far(x, 0), far(x, 1));
        cuts.clear();
        cuts.push(0);
        for s in 0..K {
            for t in s + 1..K {
                let (a, b) = (at0[s] - at0[t], (at1[s] - at1[t]) - (at0[s] - at0[t]));
                if b != 0 {
                    // a + b y changes sign at -a / b: around its floor.
                    let z = if b > 0 { (-a).div_euclid(b) } else { a.div_euclid(-b) };
                    cuts.extend([z, z + 1].into_iter().filter(|&y| (1..cols).contains(&y)));
                }
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        let row = layout.padded((x * cols) as u64);
        for (i, &from) in cuts.iter().enumerate() {
            let to = cuts.get(i + 1).copied().unwrap_or(cols);
            let d = far(x, from);
            let id = *ids.entry(dense_ranks(&d)).or_insert_with_key(|r| {
                dense.push(*r);
                (dense.len() - 1) as u16
            });
            let run = row + from as usize..row + to as usize;
            for (cell, &deg) in cells[run.clone()].iter_mut().zip(&degrees[run]) {
                *cell = (u16::from(deg) << DEGREE_SHIFT) | (2 * id);
            }
        }
    }
    assert!(dense.len() <= CLASSES, "{} sectors", dense.len());
    // SAFETY: border cells and the slack BORDER (visited), board cells
    // their degree and class: a walk's first step may take them.
    (unsafe { layout.buffer(cells) }, dense)
}

/// Each lane's place among the distinct distances, farthest first.
fn dense_ranks(d: &[i128; K]) -> [u8; K] {
    let mut distinct = *d;
    distinct.sort_unstable_by(|a, b| b.cmp(a));
    let mut n = 0;
    for i in 1..K {
        if distinct[i] != distinct[n] {
            n += 1;
            distinct[n] = distinct[i];
        }
    }
    d.map(|f| distinct[..=n].iter().position(|&g| g == f).expect("a distance of the row") as u8)
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    use super::{doomed, Walker, WindowKernel, K, NONE, VISITED, WALKS_AT_ONCE};

    /// Vectors that check a round's keys, four walks' each.
    const CHECKS: usize = WALKS_AT_ONCE.div_ceil(4);

    /// Steps `L` walks in turn until one or more end, pushing lane 0's
    /// cells to `path`.
    ///
    /// Each walk's state is updated in place (a copy of the arrays per
    /// round went through the stack as 16-byte moves, which the next
    /// round's 8-byte loads could not forward from: 1.8 ms a task against
    /// the keyed cells' 1.5 on aw+ (3,2) N=400). Four walks' state is more
    /// than x86-64's 16 registers hold, and each spill is an instruction
    /// in a loop of about 35 a step: so a walk's cell is a pointer (no
    /// register for its buffer) and the rare keys are found with one
    /// vector compare a round (no register or load for each walk's
    /// threshold); together 8-10 % less time on aw+ (3,2) N=400, Zen 4
    /// (docs/performance/engine.md).
    ///
    /// # Safety
    /// SSE4.1 and SSSE3; each walker stands on a board cell of its own
    /// buffer, which nothing else reaches while this runs.
    #[target_feature(enable = "sse4.1,ssse3")]
    pub(super) unsafe fn run<const L: usize, P: WindowKernel>(
        plan: &P,
        walkers: &mut [Walker<'_, P::Cell>],
        mut path: Option<&mut Vec<usize>>,
    ) {
        let cells: [*mut P::Cell; L] = std::array::from_fn(|l| walkers[l].cells);
        let ranks: [*const super::Row; L] = std::array::from_fn(|l| walkers[l].ranks);
        let threshold: [u16; L] = std::array::from_fn(|l| walkers[l].threshold);
        // SAFETY: the walker's cell, in its buffer.
        let mut at: [*mut P::Cell; L] = std::array::from_fn(|l| unsafe { walkers[l].cells.add(walkers[l].cur) });
        let mut key: [u32; L] = std::array::from_fn(|l| walkers[l].key);
        // A key is rare when visited (stuck), or below the threshold where
        // the walk may stop (see `Walker::threshold`): `key - threshold` at
        // least `VISITED - threshold`, as 16 bits. Four walks' keys are
        // checked at once, in the even lanes of a vector (the odd ones hold
        // the lanes chosen, never rare against a span of 0xffff; a walk not
        // there has key 0, never rare against threshold 0 and span 0xffff):
        // a compare of its own took a register or a load a walk, where
        // registers are short.
        let lanes = |v: usize, f: &dyn Fn(u16) -> u16, absent: u16, odd: u16| {
            let t: [i16; 4] = std::array::from_fn(|l| threshold.get(4 * v + l).map_or(absent, |&t| f(t)) as i16);
            let odd = odd as i16;
            _mm_setr_epi16(t[0], odd, t[1], odd, t[2], odd, t[3], odd)
        };
        let low: [__m128i; CHECKS] = std::array::from_fn(|v| lanes(v, &|t| t, 0, 0));
        let span: [__m128i; CHECKS] = std::array::from_fn(|v| lanes(v, &|t| VISITED.wrapping_sub(t), 0xffff, 0xffff));
        let mut steps = 0u64;
        loop {
            let mut least = [_mm_setzero_si128(); 4 * CHECKS];
            for l in 0..L {
                // SAFETY: the caller's.
                (at[l], least[l]) = unsafe { plan.step(at[l], key[l], ranks[l]) };
                key[l] = _mm_cvtsi128_si32(least[l]) as u32;
            }
            let mut rare = false;
            for v in 0..L.div_ceil(4) {
                let l = &least[4 * v..];
                let keys = _mm_unpacklo_epi64(_mm_unpacklo_epi32(l[0], l[1]), _mm_unpacklo_epi32(l[2], l[3]));
                let over = _mm_sub_epi16(keys, low[v]);
                rare |= _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_max_epu16(over, span[v]), over)) != 0;
            }
            // SAFETY: each walker's cell lies in its buffer.
            let cur = |l: usize| unsafe { at[l].offset_from(cells[l]) } as usize;
            if rare && ends(plan, &mut walkers[..L], std::array::from_fn(cur), key) {
                let cur: [usize; L] = std::array::from_fn(cur);
                for (l, w) in walkers[..L].iter_mut().enumerate() {
                    if w.ended {
                        // Back on the cell it could not leave, whose
                        // previous cell the last step marked.
                        w.cur = before(plan, cur[l], key[l]);
                        (w.key, w.steps) = (NONE << 16, steps);
                    } else {
                        (w.cur, w.key, w.steps) = (cur[l], key[l], steps + 1);
                    }
                }
                if let Some(p) = path.as_deref_mut() {
                    p.extend((!walkers[0].ended).then_some(cur[0]));
                }
                return;
            }
            steps += 1;
            if let Some(p) = path.as_deref_mut() {
                p.push(cur(0));
            }
        }
    }

    /// The cell a step left, from the cell and key it chose.
    fn before<P: WindowKernel>(plan: &P, next: usize, key: u32) -> usize {
        next.wrapping_add_signed(-plan.offsets()[(key >> 16) as usize & (K - 1)])
    }

    /// After a step with a rare key: marks the walks that end (stuck, or
    /// doomed where they may stop) and says whether any did. Takes the
    /// walks' state by value, so that the hot loop never needs it in memory.
    #[cold]
    #[inline(never)]
    fn ends<const L: usize, P: WindowKernel>(
        plan: &P,
        walkers: &mut [Walker<'_, P::Cell>],
        next: [usize; L],
        key: [u32; L],
    ) -> bool {
        let mut any = false;
        for (l, w) in walkers.iter_mut().enumerate() {
            let low = key[l] as u16;
            w.ended = low & VISITED != 0
                || (low < w.threshold && {
                    // SAFETY: the walker's buffer, read only while this view
                    // lives (the kernel's stores to it are done).
                    let view = unsafe { std::slice::from_raw_parts(w.cells, w.len) };
                    let from = before(plan, next[l], key[l]);
                    // SAFETY: `from` is a board cell, the offsets the plan's.
                    unsafe { doomed(view, P::degree, (plan.offsets(), 0, K), from, next[l], &mut w.forced) }
                });
            any |= w.ended;
        }
        any
    }
}
