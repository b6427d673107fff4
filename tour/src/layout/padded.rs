//! The values only a layout makes, which the walk kernels' unsafe code
//! rests on: a buffer ([`Padded`]) at least the layout's length with its
//! border blocked, a board cell ([`BoardCell`]) of it, and its moves
//! ([`MoveTable`]), each carrying the identity ([`LayoutId`]) of the layout
//! that made it. Their fields are the layout's alone (`pub(super)`).

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

/// A number no other call returns in this process: the identity of a
/// layout, and of a walk begun on a buffer.
pub(super) fn unique() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Which layout made a buffer, a board cell or a table of move offsets:
/// the walk kernels check once per walk that theirs agree. Clones of a
/// layout share it (they are the same geometry); 0 is no layout's (an
/// empty buffer's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct LayoutId(pub(super) u64);

/// A board cell's padded index in one layout. Only the layout makes one,
/// so it lies at least the layout's reach from every edge of the padded
/// array: each move offset of that layout (and its negation) leads from it
/// to a slot of any buffer of the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BoardCell {
    pub(super) index: usize,
    pub(super) layout: LayoutId,
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
pub(super) enum WalkState {
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
/// least [`Layout::len`](super::Layout::len) slots, and no safe method changes that: an index
/// reached from a [`BoardCell`] by a move offset of the same layout is in
/// bounds. Its contents start as a walk may start (border slots blocked),
/// and only the walk kernels, which keep them so, change them (through
/// [`Padded::cells_mut`]); a walk begins only on a fresh buffer (made, or
/// reset from a fresh one), so no walk runs on another's leftovers.
#[derive(Debug)]
pub(crate) struct Padded<T, Kind = ()> {
    pub(super) cells: Vec<T>,
    pub(super) layout: LayoutId,
    pub(super) walk: WalkState,
    pub(super) kind: PhantomData<Kind>,
}

impl<T, Kind> Default for Padded<T, Kind> {
    /// An empty buffer, of no layout: no walk can run on it until it is
    /// reset from one that is ([`Padded::copy_from`]).
    fn default() -> Self {
        Padded { cells: Vec::new(), layout: LayoutId(0), walk: WalkState::Spent, kind: PhantomData }
    }
}

impl<T, Kind> Padded<T, Kind> {
    /// The one place a buffer's cells are taken in: a buffer of 4 MiB and
    /// more is advised onto 2 MiB pages ([`super::huge_pages`]) once, here.
    pub(super) fn new(cells: Vec<T>, layout: LayoutId, walk: WalkState) -> Self {
        // Advice only: a buffer the kernel leaves on small pages works alike.
        let _ = super::huge_pages::advise(&cells);
        Padded { cells, layout, walk, kind: PhantomData }
    }
}

impl WalkState {
    /// The state of a copy of a buffer in this state: fresh where the
    /// original is, else spent (a walk stays with the original).
    fn copied(self) -> WalkState {
        if self == WalkState::Fresh {
            WalkState::Fresh
        } else {
            WalkState::Spent
        }
    }
}

impl<T: Copy, Kind> Clone for Padded<T, Kind> {
    /// A copy, fresh where `self` is ([`WalkState::copied`]).
    fn clone(&self) -> Self {
        Padded::new(self.cells.clone(), self.layout, self.walk.copied())
    }
}

impl<T: Copy, Kind> Padded<T, Kind> {
    /// Makes `self` a copy of `from` (see [`Clone::clone`]): a plain copy
    /// when the lengths agree, a reallocation only for an empty (or
    /// foreign) buffer. The per-walk reset.
    pub(crate) fn copy_from(&mut self, from: &Padded<T, Kind>) {
        if self.cells.len() != from.cells.len() {
            *self = from.clone();
            return;
        }
        self.cells.copy_from_slice(&from.cells);
        (self.layout, self.walk) = (from.layout, from.walk.copied());
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
/// phase (see [`Layout::phase_mask`](super::Layout::phase_mask)), and their vectors, in a rotation of
/// the move order, or negated (the predecessors). Only the layout makes
/// one, so from a [`BoardCell`] of that layout every offset leads inside
/// its buffers.
#[derive(Debug, Clone, Default)]
pub(crate) struct MoveTable {
    pub(super) rows: Vec<isize>,
    pub(super) vectors: Vec<i32>,
    pub(super) phase_mask: usize,
    pub(super) layout: LayoutId,
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
