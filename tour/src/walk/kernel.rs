//! What a kernel on which several tasks' walks advance together provides
//! ([`GroupWalk`]): each such kernel's module implements it, and
//! [`super::select`] maps each choice to one, so the runner runs any of
//! them through the same generic code, monomorphised per kernel and
//! dispatched once per walk or group. The kernels depend on this module,
//! never on `select`.

use super::cpu::Cpu;
use super::{BufferedWalk, PausedWalk};
use crate::layout::{BoardCell, Layout, MoveTable, Padded};
use crate::moves::Moves;

/// Walks any kernel advances together at most, and so the slots of a
/// batch: the SSE4.1 windows' (`sse_windows`). Six measured fastest on
/// 3,000 starts of aw+ (3,2) N=400 on Zen 5 (seconds: four 2.03-2.14, five
/// 1.85-1.93, six 1.81-1.89, seven 1.82-1.90, eight 1.97-2.07; rule W (2,1)
/// N=400: six 1.18x faster than four), though the loop spills more. Likely
/// why: on 96 % of a (3,2) walk's steps the windows overlap part of those
/// it stored two steps before, a load no store can forward to, which waits
/// for the store to reach the cache; more walks between the two leave it
/// longer to (docs/performance/engine.md). Other CPUs gain most from
/// fewer (four on Zen 2, three on Zen 3), so a runner times how many of
/// the six its window kernels take (`runner::group_width`).
pub(crate) const WALKS_AT_ONCE: usize = 6;

/// A kernel on which several tasks' walks advance together, a step of
/// each in turn ([`crate::Runner::run_tasks`]), each on cells of its own.
/// The type is also the tag a walk it begins carries ([`PausedWalk`]), so
/// only this kernel goes on with it.
pub(crate) trait GroupWalk: Sized + 'static {
    /// A walk's cell, and the kind of buffer the cells are.
    type Cell;
    type Kind;
    /// What a configuration's walks on this kernel share (tables, starting
    /// cells): built once, by the first walk that needs it.
    type Shared: std::fmt::Debug + Send + Sync;
    /// Walks that advance together at most (at least 2).
    const AT_ONCE: usize;
    /// Whether a walk with no partner left is fastest on the byte degrees'
    /// kernel (rule W) rather than on this one.
    const ALONE_ON_DEGREES: bool;

    /// The shared state of a board and move set this kernel was chosen
    /// for, on `cpu`, from the layout's byte degrees.
    fn shared(layout: &Layout, moves: &Moves, degrees: &Padded<u8>, cpu: Cpu) -> Self::Shared;

    /// Bytes of board state the shared state holds.
    fn shared_bytes(shared: &Self::Shared) -> usize;

    /// Bytes walks on this kernel add on a board of `padded` cells:
    /// (shared, a thread's), as [`crate::Configuration::memory_need_for`]
    /// counts them.
    fn need(padded: u128) -> (u128, u128);

    /// Makes `cells` a fresh buffer for a walk: the starting cells (or the
    /// byte degrees, `degrees`, for kernels that walk on them).
    fn reset(shared: &Self::Shared, degrees: &Padded<u8>, cells: &mut Padded<Self::Cell, Self::Kind>);

    /// A walk about to leave board cell `start` of the fresh `cells`,
    /// which this marks visited.
    fn begin(cells: &mut Padded<Self::Cell, Self::Kind>, start: BoardCell) -> PausedWalk;

    /// One walk alone from board cell `start` of the fresh `cells`, in
    /// move order `moves`, to its end; returns cells visited, pushing each
    /// to `path`.
    fn walk(
        shared: &Self::Shared,
        cells: (&mut Padded<Self::Cell, Self::Kind>, &MoveTable),
        start: BoardCell,
        path: Option<&mut Vec<usize>>,
        stop_when_doomed: bool,
    ) -> u64;

    /// Advances `walks` (1 to [`GroupWalk::AT_ONCE`], each begun by
    /// [`GroupWalk::begin`] on its own cells) a step of each in turn until
    /// one or more end; returns which ended, in the order given.
    fn run(shared: &Self::Shared, walks: &mut [BufferedWalk<'_, Self::Cell, Self::Kind>]) -> [bool; WALKS_AT_ONCE];
}

/// Which of a group's walks ended, from a kernel that ran fewer than
/// [`WALKS_AT_ONCE`] (the pairs).
pub(crate) fn ended(of: &[bool]) -> [bool; WALKS_AT_ONCE] {
    let mut out = [false; WALKS_AT_ONCE];
    out[..of.len()].copy_from_slice(of);
    out
}
