//! The scaled-degree step with the scan done as vectors: the 24
//! neighbours' bytes come in by gathers, their keys (degree, move index)
//! are made and reduced to the least in vector registers, and only the
//! decrement stays a store a neighbour (bytes have no scatter). The walk is
//! the same as [`super::Pointers`]', cell for cell.
//!
//! A gather reads four bytes from each address; [`crate::layout`] keeps a
//! tile of blocked slack after every buffer so the last cells' reads stay
//! inside it.

use std::arch::x86_64::*;

use super::{to_the_end, Buffer, K, LOW_SCALED, SCALE};
use crate::layout::VECTOR_SLACK;
use crate::walk::cpu::{Avx2, Avx512};
use crate::walk::{pair_loop, Paired, Stepper};

/// The blocked key: a scaled value of 128 or more in a key's top byte.
const BLOCKED_KEY: u32 = 128 << 24;
/// Keys below this are candidates of degree at most one after their
/// decrement, the only ones that can doom a walk.
const LOW_KEY: u32 = LOW_SCALED << 24;

/// The gather scan's stepper (see [`super::Pointers`]): the offsets of
/// each phase's moves as 32-bit lanes; `W`, the vector width, proves the
/// CPU has its instructions.
pub(crate) struct Gather<'a, W> {
    buffer: Buffer<'a>,
    /// The buffer's table as 32-bit lanes, a row of K per phase.
    lanes: Vec<i32>,
    width: W,
}

impl<'a, W: Lanes> Gather<'a, W> {
    /// The stepper of `buffer` on `width`. Panics where the layout is not
    /// tiled (the only one it is chosen on, where a 3D buffer ends in
    /// [`VECTOR_SLACK`] blocked bytes, so that a word read from any
    /// neighbour of a board cell stays inside) or an offset leaves 32 bits.
    pub(crate) fn new(buffer: Buffer<'a>, width: W) -> Gather<'a, W> {
        assert!(buffer.phase_mask > 0 && buffer.len >= VECTOR_SLACK, "a tiled buffer, with its slack");
        let lanes = buffer.table.iter().map(|&o| i32::try_from(o).expect("a move's offset fits 32 bits")).collect();
        Gather { buffer, lanes, width }
    }

    /// The step's end once the least key is known: the decrements, the
    /// doom test and the move.
    ///
    /// # Safety
    /// As for [`Stepper::step`].
    #[inline(always)]
    unsafe fn finish(&self, cur: usize, best: u32, forced: &mut u32) -> Option<usize> {
        let (base, len) = (self.buffer.base, self.buffer.len);
        let at = base.wrapping_add(cur);
        for &o in self.buffer.row(cur) {
            let p = at.wrapping_offset(o);
            debug_assert!((p as usize).wrapping_sub(base as usize) < len);
            // SAFETY: `p` is a neighbour of the board cell `cur`, inside
            // the buffer by the layout's invariant.
            unsafe { *p = (*p).wrapping_sub(SCALE) };
        }
        let least = (best < BLOCKED_KEY).then_some(((best & 31) as usize, best < LOW_KEY));
        // SAFETY: the caller's; the least key is `cur`'s.
        unsafe { self.buffer.take(cur, least, forced) }
    }
}

/// A vector width the gather step runs on: its feature type, which
/// proves the CPU has the instructions, and its loops, compiled with them
/// so that the step inlines.
pub(crate) trait Lanes: Copy + 'static {
    /// The least key (scaled value in the top byte, move index in the low
    /// bits) of the 24 neighbours `at + lanes[k]`.
    ///
    /// # Safety
    /// The CPU has the width's features (a value of the type proves it);
    /// `lanes` holds 24 offsets, and each `at + offset` has four readable
    /// bytes.
    unsafe fn least(at: *const u8, lanes: *const i32) -> u32;

    /// Two walks a step each in turn until one ends ([`crate::walk::run_pair`]).
    fn pair(a: Paired<'_, Gather<'_, Self>>, b: Paired<'_, Gather<'_, Self>>) -> [bool; 2];

    /// One walk to its end ([`super::to_the_end`]).
    fn alone(walk: Paired<'_, Gather<'_, Self>>, path: Option<&mut Vec<usize>>);
}

/// [`Lanes`] for a width: its least key and its two loops, compiled with
/// `$features`, which its type proves.
macro_rules! lanes {
    ($width:ty, $features:literal, $least:ident) => {
        impl Lanes for $width {
            #[inline(always)]
            unsafe fn least(at: *const u8, lanes: *const i32) -> u32 {
                // SAFETY: the caller's.
                unsafe { $least(at, lanes) }
            }

            fn pair(a: Paired<'_, Gather<'_, $width>>, b: Paired<'_, Gather<'_, $width>>) -> [bool; 2] {
                #[target_feature(enable = $features)]
                unsafe fn pair(a: Paired<'_, Gather<'_, $width>>, b: Paired<'_, Gather<'_, $width>>) -> [bool; 2] {
                    pair_loop(a, b)
                }
                // SAFETY: the steppers hold the proof of the features.
                unsafe { pair(a, b) }
            }

            fn alone(walk: Paired<'_, Gather<'_, $width>>, path: Option<&mut Vec<usize>>) {
                #[target_feature(enable = $features)]
                unsafe fn alone(walk: Paired<'_, Gather<'_, $width>>, path: Option<&mut Vec<usize>>) {
                    to_the_end(walk, path);
                }
                // SAFETY: the stepper holds the proof of the features.
                unsafe { alone(walk, path) }
            }
        }
    };
}

lanes!(Avx2, "avx2", least_avx2);
lanes!(Avx512, "avx512f,avx2", least_avx512);

/// Move indices in a key's low bits, lane by lane.
const INDEX: [i32; 24] = {
    let mut out = [0; 24];
    let mut k = 0;
    while k < 24 {
        out[k] = k as i32;
        k += 1;
    }
    out
};

// SAFETY: as for `Pointers`: the lanes are the table's offsets, each
// gather reads four bytes from a neighbour of a board cell, inside the
// buffer and its slack, and the step returns an open cell.
unsafe impl<W: Lanes> Stepper for Gather<'_, W> {
    type Key = u32;

    #[inline(always)]
    unsafe fn scan(&self, cur: usize) -> u32 {
        let row = (cur & self.buffer.phase_mask) * K;
        let _proof = self.width;
        // SAFETY: the caller's: `cur` is a board cell and the row its
        // phase's; the width's feature type proves the CPU.
        unsafe { W::least(self.buffer.base.add(cur), self.lanes.as_ptr().add(row)) }
    }

    #[inline(always)]
    unsafe fn take(&mut self, cur: usize, best: u32, forced: &mut u32) -> Option<usize> {
        // SAFETY: the caller's.
        unsafe { self.finish(cur, best, forced) }
    }
}

/// The least key of the 24 neighbours `at + lanes[k]`, on AVX2.
///
/// # Safety
/// The CPU has AVX2; `lanes` holds 24 offsets, and each `at + offset`
/// has four readable bytes.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn least_avx2(at: *const u8, lanes: *const i32) -> u32 {
    let at = at.cast::<i32>();
    let lanes = lanes.cast::<__m256i>();
    let index = INDEX.as_ptr().cast::<__m256i>();
    // SAFETY: the caller's: 24 lanes, and each gather's bytes readable.
    unsafe {
        let key = |i: usize| {
            let g = _mm256_i32gather_epi32::<1>(at, _mm256_loadu_si256(lanes.add(i)));
            _mm256_or_si256(_mm256_slli_epi32::<24>(g), _mm256_loadu_si256(index.add(i)))
        };
        let m = _mm256_min_epu32(_mm256_min_epu32(key(0), key(1)), key(2));
        let h = _mm_min_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256::<1>(m));
        let h = _mm_min_epu32(h, _mm_shuffle_epi32::<0b01_00_11_10>(h));
        let h = _mm_min_epu32(h, _mm_shuffle_epi32::<0b10_11_00_01>(h));
        _mm_cvtsi128_si32(h) as u32
    }
}

/// [`least_avx2`] on AVX-512: one 16-lane and one 8-lane gather.
///
/// # Safety
/// The CPU has AVX-512F; otherwise as for [`least_avx2`].
#[target_feature(enable = "avx512f,avx2")]
#[inline]
unsafe fn least_avx512(at: *const u8, lanes: *const i32) -> u32 {
    let index = INDEX.as_ptr();
    // SAFETY: the caller's: 24 lanes, and each gather's bytes readable.
    unsafe {
        let wide = _mm512_i32gather_epi32::<1>(_mm512_loadu_si512(lanes.cast()), at.cast());
        let wide = _mm512_or_si512(_mm512_slli_epi32::<24>(wide), _mm512_loadu_si512(index.cast()));
        let narrow = _mm256_i32gather_epi32::<1>(at.cast(), _mm256_loadu_si256(lanes.add(16).cast()));
        let narrow = _mm256_or_si256(_mm256_slli_epi32::<24>(narrow), _mm256_loadu_si256(index.add(16).cast()));
        let m = _mm256_min_epu32(
            _mm256_min_epu32(_mm512_castsi512_si256(wide), _mm512_extracti64x4_epi64::<1>(wide)),
            narrow,
        );
        let h = _mm_min_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256::<1>(m));
        let h = _mm_min_epu32(h, _mm_shuffle_epi32::<0b01_00_11_10>(h));
        let h = _mm_min_epu32(h, _mm_shuffle_epi32::<0b10_11_00_01>(h));
        _mm_cvtsi128_si32(h) as u32
    }
}
