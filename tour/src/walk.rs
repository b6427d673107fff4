//! The walk kernel: one Warnsdorff walk on a padded degree buffer. This is
//! the inner loop every figure of a sweep is made of, so it is monomorphised
//! per tiebreak and move-set symmetry and touches each neighbour once.
//!
//! The kernels here and in this module's children index the padded buffer
//! without bounds checks (they and [`crate::layout`]'s buffer type are the
//! one place in the workspace that holds unsafe code). The types carry the
//! proof, memchr's pattern: a buffer ([`Padded`]) is at least its layout's
//! length and keeps its border blocked, a start ([`BoardCell`]) is one of
//! its layout's board cells, and the moves ([`MoveTable`]) are its
//! layout's; only the layout makes any of them. So the entry points
//! ([`walk`], [`run_pair`], the kernels' `walk` and `run`) are safe: they
//! check once per walk that their arguments come from one layout (a compare
//! or two) and that a paused walk goes on only on the cells it was begun
//! on, and the unsafe blocks inside cite those invariants. Every remaining
//! `unsafe fn` (a kernel's internals, and the buffer's two unchecked doors,
//! `Padded::cells_mut` and `Layout::buffer`) says what its caller proves
//! under `# Safety`.

// The workspace denies unsafe code; the walk kernels are the exception.
#![allow(unsafe_code)]

use std::any::TypeId;

use generic::walk_generic;
use keyed::{key_holds_cells, walk_keyed, BIAS, KEYED_MAX_MOVES, KEY_PACKED, KEY_PLUS, PACKED_BIAS};

use crate::layout::{phase_row, BoardCell, Degree, Layout, MoveTable, Padded};
use crate::seed::Rng;

/// How a walk breaks ties among candidates of least degree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tiebreak {
    /// W: first in the current move order.
    First,
    /// W+ (Roth): greatest squared distance from the centre, then first.
    Distance,
    /// WR (Squirrel and Cull): uniformly at random.
    Random,
    /// WR+: greatest distance, then uniformly at random.
    DistanceRandom,
}

/// Above this many moves rule W picks its move branch-free in the generic
/// kernel (16-bit degrees); byte degrees always take the keyed kernel.
pub(super) const BRANCH_FREE_MIN_MOVES: usize = 32;

/// What a walk needs to know besides the degree buffer, in the current
/// (possibly rotated) move order: all of one layout ([`WalkMoves::new`]).
pub(crate) struct WalkMoves<'a> {
    /// The layout the moves are of.
    layout: &'a Layout,
    /// Offset of each move in the padded layout, from a cell of each phase
    /// (one row of K per phase, see [`crate::layout::Layout::phase_mask`]).
    offsets: &'a [isize],
    /// `cell & phase_mask` is the row of offsets that holds from `cell`.
    phase_mask: usize,
    /// Move vectors, K x D, same order (W+ distance only).
    vectors: &'a [i32],
    /// Offsets from a cell to the cells that can move onto it (the negated
    /// moves), which lose a neighbour when it is visited, in rows like
    /// `offsets`; `None` for sets closed under negation, whose predecessors
    /// are their successors.
    predecessors: Option<&'a [isize]>,
    /// Board sides (W+ distance only).
    sides: &'a [usize],
}

impl<'a> WalkMoves<'a> {
    /// The moves of `table` (and `predecessors`, for a move set not closed
    /// under negation) on `layout`, which made them (else this panics).
    pub(crate) fn new(layout: &'a Layout, table: &'a MoveTable, predecessors: Option<&'a MoveTable>) -> WalkMoves<'a> {
        assert_eq!(table.layout(), layout.id(), "moves of this layout");
        assert!(predecessors.is_none_or(|p| p.layout() == layout.id()), "predecessors of this layout");
        WalkMoves {
            layout,
            offsets: table.rows(),
            phase_mask: table.phase_mask(),
            vectors: table.vectors(),
            predecessors: predecessors.map(MoveTable::rows),
            sides: layout.sides(),
        }
    }

    /// Moves per cell, K.
    fn count(&self) -> usize {
        self.offsets.len() / (self.phase_mask + 1)
    }
}

/// Runs one walk from board cell `start` on the fresh buffer `deg` (made
/// by the layout of `moves`, or reset from one that was) on the kernel
/// `kernel` (chosen for this configuration and the walk's tiebreak by
/// [`select::Kernels::degree_kernel`]); returns cells visited. `xy` gets
/// the start's coordinates (used by the distance tiebreaks).
///
/// With `stop_when_doomed` the walk may stop early, returning fewer cells
/// than it would have visited, once it can no longer become a tour (see
/// [`doomed`]): for walks whose length nobody reads, such as every attempt
/// of aw, aw+ and mw but the last.
///
/// Panics if `deg`, `moves` and `start` are not of one layout, `deg` is
/// not fresh, or the keyed kernel's keys cannot hold this board.
#[allow(clippy::too_many_arguments)]
pub(crate) fn walk<T: Degree>(
    deg: &mut Padded<T>,
    moves: &WalkMoves<'_>,
    start: BoardCell,
    kernel: DegreeKernel,
    rng: &mut Rng,
    xy: &mut [i64],
    path: Option<&mut Vec<usize>>,
    stop_when_doomed: bool,
) -> u64 {
    let layout = moves.layout;
    assert_eq!(deg.layout(), layout.id(), "a buffer of the moves' layout");
    deg.begin_walk(start);
    assert_eq!(xy.len(), moves.sides.len(), "a coordinate an axis");
    layout.coords(start.index(), xy);
    let start = start.index();
    // SAFETY: only the kernels below write to the buffer, and they leave it
    // as a walk may find it: border cells blocked, a walk's cells as its
    // steps leave them.
    let deg = unsafe { deg.cells_mut() };
    match kernel {
        DegreeKernel::Keyed(key) => {
            let deg = T::narrow(deg).expect("keyed walks are chosen for byte degrees");
            // A key that carries the cell must hold every cell of the
            // buffer, one with a distance term every distance of the board,
            // and a blocked cell must stay above every open one.
            assert!(key_holds_cells(key, deg.len() as u128), "key {key} on {} cells", deg.len());
            let bias = match key {
                KEY_PACKED => PACKED_BIAS,
                KEY_PLUS => BIAS,
                _ => i64::MAX,
            };
            assert!(layout.distance_bound() < bias as u128, "key {key}: distances past its bias");
            assert!(moves.count() <= KEYED_MAX_MOVES, "{} moves for the keyed kernel", moves.count());
            // SAFETY: `deg` is a buffer of the layout of `moves`, at least
            // its length (`Padded`), and `start` a board cell of it
            // (`BoardCell`), both checked above, as are the keys.
            unsafe { walk_keyed(deg, moves, start, key, xy, path, stop_when_doomed) }
        }
        DegreeKernel::Scaled3d(rule) => {
            let deg = T::narrow(deg).expect("scaled walks are chosen for byte degrees");
            assert!(moves.count() == w_3d_scaled::K && xy.len() == 3, "scaled walks take 24 moves in 3D");
            let plus = matches!(rule, w_3d_scaled::Rule::Plus(_));
            assert!(!plus || w_3d_scaled::plus::fits(layout.distance_bound()), "W+ distances past the scaled keys");
            // SAFETY: as above.
            unsafe { w_3d_scaled::walk(deg, moves, (start, xy), rule, path, stop_when_doomed) }
        }
        // SAFETY: as above.
        DegreeKernel::Generic { tiebreak, symmetric, branch_free } => unsafe {
            walk_generic((deg, moves, start, rng, xy, path), (tiebreak, symmetric, branch_free))
        },
    }
}

/// The kernel a walk on the degree buffer runs on ([`walk`]), for one
/// tiebreak: chosen once per configuration by [`select::Kernels`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DegreeKernel {
    /// One integer key a candidate, the least wins ([`walk_keyed`]), in
    /// this key layout (`KEY_W`, `KEY_W_SMALL`, `KEY_PACKED`, `KEY_PLUS`):
    /// byte degrees, a move set closed under negation of at most 127
    /// moves, and a deterministic tiebreak.
    Keyed(u8),
    /// Rule W or W+ on degrees scaled by four ([`w_3d_scaled::walk`]):
    /// byte degrees, 24 moves on a 3D board, closed under negation.
    Scaled3d(w_3d_scaled::Rule),
    /// The generic kernel ([`walk_with`](generic::walk_with)): the tiebreak, whether the move
    /// set is closed under negation, and whether rule W picks its move
    /// branch-free (many moves).
    Generic { tiebreak: Tiebreak, symmetric: bool, branch_free: bool },
}

// The kernels index without bounds checks. Sound because of the padded
// layout's invariant, which its types carry: the walk starts on a board
// cell (`BoardCell`) and only ever steps to open cells, which are board
// cells (border cells stay blocked, `Padded`); every board cell is at least
// `reach` cells from the array's edge on every axis, and no offset of the
// layout (`MoveTable`), nor its negation, reaches further than `reach` on
// any axis; so a neighbour or predecessor index is always inside a buffer
// of the layout, which is at least the layout's length (`Padded`). Debug
// builds assert it.

/// The value at `n`, unchecked.
///
/// # Safety
/// `n < deg.len()`: in the kernels, `n` is a board cell of the layout
/// `deg` is a buffer of, or a neighbour or predecessor of one.
#[inline(always)]
unsafe fn cell<T: Copy>(deg: &[T], n: usize) -> T {
    debug_assert!(n < deg.len());
    // SAFETY: the caller's.
    unsafe { *deg.get_unchecked(n) }
}

/// Sets the value at `n`, unchecked.
///
/// # Safety
/// As for [`cell`].
#[inline(always)]
unsafe fn set_cell<T: Copy>(deg: &mut [T], n: usize, value: T) {
    debug_assert!(n < deg.len());
    // SAFETY: the caller's.
    unsafe { *deg.get_unchecked_mut(n) = value }
}

/// Independent running minima per step: the minimum over K keys is the
/// critical path of a step, and a tree of eight chains makes it ~K/8 + 3
/// compare-and-select deep instead of K.
const MINIMA_CHAINS: usize = 8;

/// The least of the chains' minima, as a tree of pairwise minima (3 deep, not 7).
#[inline(always)]
fn tree_min(l: [u64; MINIMA_CHAINS]) -> u64 {
    let quarter = [l[0].min(l[1]), l[2].min(l[3]), l[4].min(l[5]), l[6].min(l[7])];
    quarter[0].min(quarter[1]).min(quarter[2].min(quarter[3]))
}

/// Whether the walk, about to move from `cur` to `next`, can no longer
/// become a tour. Called with `cur`'s neighbours' degrees up to date;
/// `degree` reads a cell's degree from its stored value.
///
/// An unvisited cell n can only be entered from the cell the walk stands on
/// or from an unvisited neighbour. So once the walk is not next to n: with
/// no unvisited neighbour n is never reached (doomed); with exactly one, u,
/// n is entered from u and has nowhere to go after, so n must be the tour's
/// last cell; two such cells cannot both be last (doomed). A cell's degree
/// only drops while it is next to the walk, so every such cell is seen
/// here, when the walk moves away from it; `forced` counts the last-cell
/// candidates seen so far. A counted cell is examined again only when the
/// walk stands on its u, and then the walk ends at the next step anyway.
///
/// # Safety
/// `cur` is a board cell of the layout `deg` is a buffer of, and `table`
/// holds that layout's offsets (one row of `k` per phase of `mask`).
#[cold]
#[inline(never)]
unsafe fn doomed<C: Copy>(
    deg: &[C],
    degree: impl Fn(C) -> u8,
    (table, mask, k): (&[isize], usize, usize),
    cur: usize,
    next: usize,
    forced: &mut u32,
) -> bool {
    for &o in phase_row(table, mask, k, cur) {
        let n = cur.wrapping_add_signed(o);
        // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
        let d = degree(unsafe { cell(deg, n) });
        if n == next || d >= 2 {
            continue;
        }
        if phase_row(table, mask, k, next).iter().any(|&p| next.wrapping_add_signed(p) == n) {
            continue;
        }
        if d == 0 {
            return true;
        }
        *forced += 1;
        if *forced >= 2 {
            return true;
        }
    }
    false
}

/// A walk between two steps, so that it can go on in another call or
/// another kernel's loop (see [`run_pair`]): it stands on `cur`, which is
/// blocked, and `cur`'s neighbours have not lost it yet. Made only by a
/// kernel's `begin`, on the buffer it walks on, and neither `Clone` nor
/// `Copy`: so a kernel goes on with it only on that buffer (checked by
/// [`BufferedWalk::check`]), from where the walk last stopped.
#[derive(Debug, Default)]
pub(crate) struct PausedWalk {
    cur: usize,
    visited: u64,
    /// Last-cell candidates seen so far (see [`doomed`]).
    forced: u32,
    /// The walk's number on its buffer ([`Padded::begin_walk`]); 0 for no
    /// walk.
    walk: u64,
    /// The kernel that began it ([`kernel::GroupWalk`]), which alone goes
    /// on with it.
    kernel: Option<TypeId>,
    /// Whether the walk has ended (stuck, or stopped doomed).
    ended: bool,
}

impl PausedWalk {
    /// A walk of kernel `G` standing on `start` of `cells`, a fresh buffer
    /// of its layout (else this panics); the kernel blocks `start`.
    fn begin<G: 'static, C, Kind>(cells: &mut Padded<C, Kind>, start: BoardCell) -> PausedWalk {
        let walk = cells.begin_walk(start);
        let kernel = Some(TypeId::of::<G>());
        PausedWalk { cur: start.index(), visited: 1, forced: 0, walk, kernel, ended: false }
    }

    /// Cells visited so far (all of them once the walk has ended).
    pub(crate) fn visited(&self) -> u64 {
        self.visited
    }
}

/// One of the walks a group kernel advances: its own cells, its move
/// order (one row of offsets per phase), where it stands.
pub(crate) struct BufferedWalk<'a, C, Kind = ()> {
    pub cells: &'a mut Padded<C, Kind>,
    pub offsets: &'a MoveTable,
    pub progress: &'a mut PausedWalk,
    pub stop_when_doomed: bool,
}

impl<C, Kind> BufferedWalk<'_, C, Kind> {
    /// The same walk, borrowed for less long: the pair kernels take their
    /// walks by value from a group's slice.
    pub(crate) fn reborrow(&mut self) -> BufferedWalk<'_, C, Kind> {
        BufferedWalk {
            cells: &mut *self.cells,
            offsets: self.offsets,
            progress: &mut *self.progress,
            stop_when_doomed: self.stop_when_doomed,
        }
    }

    /// Checks, once per call of a kernel, what makes its walk safe to go
    /// on: the cells and offsets are of one layout, and the walk was begun
    /// on these cells by kernel `G`, has not ended, and they have not been
    /// reset since. Panics if not.
    fn check<G: 'static>(&self) {
        assert_eq!(self.cells.layout(), self.offsets.layout(), "cells and moves of one layout");
        assert!(self.cells.walk_of(self.progress.walk), "a walk begun on these cells");
        assert_eq!(self.progress.kernel, Some(TypeId::of::<G>()), "a walk of this kernel");
        assert!(!self.progress.ended, "a walk that has not ended");
    }
}

/// One walk's step, by a kernel that can run beside another's: the
/// walk's buffer as raw pointers, each kernel its own layout and keys.
///
/// A step is two halves: the scan, whose stores all lie around the cell
/// the walk stands on, and the move, whose store (the next cell's block)
/// lies where the scan's minimum says. A kernel may ask [`pair_loop`] to
/// run both walks' scans before either move ([`Stepper::SCANS_TOGETHER`]).
///
/// # Safety
/// [`Stepper::scan`] then [`Stepper::take`] from a board cell of the
/// stepper's buffer stay inside the buffer and return a board cell of it,
/// or `None`.
pub(crate) unsafe trait Stepper {
    /// A step's least key, from its scan to its move.
    type Key: Copy;

    /// Whether a pair of these walks runs both scans before either move.
    /// Where a walk's move came between the other's scans, the window
    /// scans' loads waited for its store, whose address the minimum
    /// decides: (2,1) 3D rule W in pairs took 13 % longer on Zen 4. The
    /// tiled scalar scan ran 12 % slower with its scans together (why,
    /// this machine has no counters to say), so it keeps the default
    /// (docs/performance/engine.md).
    const SCANS_TOGETHER: bool = false;

    /// Takes a degree from each neighbour of `cur` and returns the least
    /// of their keys.
    ///
    /// # Safety
    /// `cur` is a board cell of the stepper's buffer, and no reference to
    /// the buffer is live.
    unsafe fn scan(&self, cur: usize) -> Self::Key;

    /// Moves the walk from `cur` by the move of `least` (with the walk's
    /// doom counter): the next cell, now blocked, or `None` when the walk
    /// is stuck or doomed.
    ///
    /// # Safety
    /// As for [`Stepper::scan`]; `least` is what this stepper's last scan,
    /// of `cur`, returned.
    unsafe fn take(&mut self, cur: usize, least: Self::Key, forced: &mut u32) -> Option<usize>;

    /// One step from `cur`: its scan, then its move.
    ///
    /// # Safety
    /// As for [`Stepper::scan`].
    #[inline(always)]
    unsafe fn step(&mut self, cur: usize, forced: &mut u32) -> Option<usize> {
        // SAFETY: the caller's; the key is this scan's, of `cur`.
        unsafe {
            let least = self.scan(cur);
            self.take(cur, least, forced)
        }
    }
}

/// A walk ready to advance beside another ([`run_pair`]): its kernel's
/// stepper and the walk, which stands on a board cell of the stepper's
/// buffer. Made only where a kernel has checked that: `w_3d_scaled`'s
/// `alone` and `pair` (from `Buffer::of` or `Buffer::from_raw`) and
/// `distance_cells::Pointers::of`.
pub(crate) struct Paired<'a, S> {
    stepper: S,
    progress: &'a mut PausedWalk,
}

/// Advances two independent walks, each on its own buffer, a step each in
/// turn until one of them ends; returns which ended. One walk's step is a
/// chain of dependent loads and compares that leaves much of the core
/// idle; a second chain beside it fills the gaps (aw+ (3,2) N=400: 7.8 ns
/// a step alone, 5.7 in a pair). Each walk brings its own kernel, made from
/// a [`BufferedWalk`] that it checks.
///
/// Never inlined: in a large caller the loop lost registers to it
/// (callgrind, aw+ (3,2) N=400: 8 % more instructions, 1.49 -> 1.62 ms a
/// task).
#[inline(never)]
pub(crate) fn run_pair(a: Paired<'_, impl Stepper>, b: Paired<'_, impl Stepper>) -> [bool; 2] {
    pair_loop(a, b)
}

/// [`run_pair`]'s loop, inlined where it is called: a vector kernel calls
/// it from a function compiled with its features, so its step inlines.
#[inline(always)]
pub(crate) fn pair_loop<A: Stepper, B: Stepper>(a: Paired<'_, A>, b: Paired<'_, B>) -> [bool; 2] {
    let (Paired { stepper: mut a, progress: pa }, Paired { stepper: mut b, progress: pb }) = (a, b);
    let (mut x, mut y) = (pa.cur, pb.cur);
    let (mut fx, mut fy) = (pa.forced, pb.forced);
    let mut steps = 0u64;
    let [extra_a, extra_b, ended_a, ended_b] = loop {
        // SAFETY: each walk stands on a board cell of its stepper's buffer:
        // its walk's (`Paired`), or one a step returned since (`Stepper`);
        // no reference to either buffer is live while the pair runs.
        let next = if A::SCANS_TOGETHER && B::SCANS_TOGETHER {
            // SAFETY: as above; each key is its walk's last scan, of its cell.
            unsafe {
                let (ka, kb) = (a.scan(x), b.scan(y));
                (a.take(x, ka, &mut fx), b.take(y, kb, &mut fy))
            }
        } else {
            // SAFETY: as above.
            unsafe { (a.step(x, &mut fx), b.step(y, &mut fy)) }
        };
        match next {
            (Some(p), Some(q)) => (x, y, steps) = (p, q, steps + 1),
            (None, Some(q)) => {
                y = q;
                break [0, 1, 1, 0];
            }
            (Some(p), None) => {
                x = p;
                break [1, 0, 0, 1];
            }
            (None, None) => break [0, 0, 1, 1],
        }
    };
    for (p, cur, extra, forced, ended) in [(pa, x, extra_a, fx, ended_a), (pb, y, extra_b, fy, ended_b)] {
        (p.cur, p.visited, p.forced, p.ended) = (cur, p.visited + steps + extra, forced, ended == 1);
    }
    [ended_a == 1, ended_b == 1]
}

pub(crate) mod cpu;
pub(crate) mod distance_cells;
mod generic;
pub(crate) mod kernel;
mod keyed;
pub(crate) mod select;
pub(crate) mod sse_windows;
#[cfg(test)]
mod tests;
pub(crate) mod w_3d_scaled;
