//! Rule W+ on the scaled degrees: the scalar scan of rule W
//! ([`Pointers::least`]) with a key that also ranks by distance from the
//! centre. A candidate's key is its scaled degree above a part kept per
//! move, `(BIAS - rel) << 5 | k` (rel as in [`keyed::walk_keyed`]: larger
//! is farther), so the least key is W+'s choice. A step moves the centre
//! offset by twice the chosen move, which takes `2 v_j . v_k` from every
//! part: 24 subtractions the compiler does as vectors, and no multiply.
//! It replaces the keyed kernel's 24-move W+ walk (64-bit parts, each
//! neighbour's address in its key): 284 instructions a step against 524,
//! 1.1-1.6 times as fast on (2,1) N=140 (docs/performance/engine.md). Its
//! walks run alone: in pairs they were slower.

use super::{Pointers, K, MOVE_MASK, SCALE};
use crate::walk::{keyed, Stepper};

/// Bits of a part: the distance term and the move index below a key's
/// scaled degree.
const PART_BITS: u32 = 32;
/// Offset of the distance term, so that `BIAS - rel` stays positive and
/// below 2^20: boards whose distance bound ([`fits`]) is below it.
const BIAS: i64 = 1 << 19;
/// The move index's bits in a part.
const MOVE_BITS: u32 = 5;
/// Keys from here up are blocked cells (a scaled value of 128 or more).
const BLOCKED_KEY: u64 = 128 << PART_BITS;
/// Keys below this can doom the walk (see [`super::LOW_SCALED`]).
const LOW_KEY: u64 = (super::LOW_SCALED as u64) << PART_BITS;

/// Whether a board whose |rel| stays below `distance_bound` (see
/// [`crate::layout::Layout::distance_bound`]) fits the parts.
pub(crate) fn fits(distance_bound: u128) -> bool {
    distance_bound < BIAS as u128
}

/// A W+ walk's stepper: rule W's pointers and the parts of the cell it
/// stands on.
pub(crate) struct Plus<'a> {
    pointers: Pointers<'a>,
    /// `(BIAS - rel(k)) << 5 | k` per move, from where the walk stands.
    parts: [u32; K],
    /// `(2 v_j . v_k) << 5` by (j, k): what a move j takes from part k.
    dot2: [[u32; K]; K],
}

/// A walk's parts and the moves' products: `(BIAS - rel(k)) << 5 | k` per
/// move from the cell whose doubled centre offset is `centred` (`2x - (n -
/// 1)` an axis), and `(2 v_j . v_k) << 5` by (j, k), what a move j takes
/// from part k; the moves `vectors` are K x 3, in the walk's order. Each
/// part is below 2^25. Panics if a distance term falls outside the parts
/// ([`fits`] says which boards).
pub(crate) fn parts(vectors: &[i32], centred: &[i64]) -> ([u32; K], [[u32; K]; K]) {
    assert_eq!(vectors.len(), K * centred.len(), "K moves of the board's axes");
    let v = |k: usize| &vectors[k * centred.len()..(k + 1) * centred.len()];
    let part = |k: usize| {
        let term = BIAS - keyed::rel(v(k), centred);
        assert!((0..2 * BIAS).contains(&term), "a distance term past the parts");
        (term as u32) << MOVE_BITS | k as u32
    };
    let dot2 = std::array::from_fn(|j| std::array::from_fn(|k| (keyed::dot2_of(v(j), v(k)) as u32) << MOVE_BITS));
    (std::array::from_fn(part), dot2)
}

impl<'a> Plus<'a> {
    /// The stepper of a walk on `pointers`' buffer standing on the cell
    /// whose doubled centre offset is `centred` ([`parts`], from the
    /// buffer's moves).
    pub(crate) fn new(pointers: Pointers<'a>, centred: &[i64]) -> Plus<'a> {
        let (parts, dot2) = parts(pointers.vectors(), centred);
        Plus { pointers, parts, dot2 }
    }
}

// SAFETY: as for `Pointers`, whose scan and `take` this step uses.
unsafe impl Stepper for Plus<'_> {
    type Key = u64;

    #[inline(always)]
    unsafe fn scan(&self, cur: usize) -> u64 {
        let parts = &self.parts;
        // SAFETY: the caller's.
        unsafe { self.pointers.least(cur, |b, k| u64::from(b) << PART_BITS | u64::from(parts[k])) }
    }

    #[inline(always)]
    unsafe fn take(&mut self, cur: usize, best: u64, forced: &mut u32) -> Option<usize> {
        let k = (best & MOVE_MASK) as usize;
        let least = (best < BLOCKED_KEY).then_some((k, best < LOW_KEY));
        // SAFETY: the caller's; the least key is `cur`'s.
        let next = unsafe { self.pointers.buffer.take(cur, least, forced) }?;
        // The walk moved by move k: every distance term shifts with it.
        for (part, &d) in self.parts.iter_mut().zip(&self.dot2[k]) {
            *part = part.wrapping_sub(d);
        }
        Some(next)
    }
}

const _: () = assert!(K < 1 << MOVE_BITS && (SCALE as u32) * (K as u32) < 128 && (2 * BIAS) << MOVE_BITS <= 1 << 25);
