//! A walk as the window kernels' loop holds it: its cells as a pointer
//! with a real borrow, apart from the loop, so the borrow's argument can be
//! read on its own.

use std::marker::PhantomData;

use super::Row;

/// A walk as the kernel holds it: its cells as a pointer, borrowed for
/// `'a`.
///
/// The borrow is a real one: [`Walker::new`] takes the cells as
/// `&'a mut [C]`, so the walker holds them exclusively for as long as it
/// lives, as a `&'a mut [C]` would, and the compiler rejects a walker that
/// outlives its buffer or a use of the buffer while a walker holds it.
/// After the kernel the walks' cells are reached through their walkers
/// ([`Walker::cells_mut`]). The type is private to the window kernels, which a
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
pub(super) struct Walker<'a, C> {
    pub(super) cells: *mut C,
    pub(super) len: usize,
    /// The cell stood on, unmarked.
    pub(super) cur: usize,
    /// The last `phminposuw` result: the lane the walk came in through
    /// (bits 16-18, [`NONE`](super::NONE) at first) and the key (bits 0-15).
    pub(super) key: u32,
    pub(super) ranks: *const Row,
    /// Least key that needs no second look: [`WindowKernel::DOOM_CHECK`](super::WindowKernel::DOOM_CHECK) when the
    /// walk may stop doomed, else 0 (only a visited key ends it).
    pub(super) threshold: u16,
    pub(super) forced: u32,
    pub(super) steps: u64,
    pub(super) ended: bool,
    /// The cells, borrowed for as long as the walker lives (taken from the
    /// `&'a mut [C]` [`Walker::new`] is given).
    buffer: PhantomData<&'a mut [C]>,
}

impl<'a, C> Walker<'a, C> {
    /// A walk standing on `cur` of `cells`, which it borrows for `'a` (and
    /// its rank rows too), with its last key, its doom threshold and its
    /// count of last-cell candidates.
    pub(super) fn new(
        cells: &'a mut [C],
        cur: usize,
        key: u32,
        ranks: &'a [Row],
        threshold: u16,
        forced: u32,
    ) -> Walker<'a, C> {
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
    pub(super) fn cells_mut(&mut self) -> &mut [C] {
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
