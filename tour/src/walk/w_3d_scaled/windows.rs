//! The scaled-degree step on a row-major 3D board, for rule W
//! ([`Windows`], [`ShuffledWindows`]) and W+ ([`PlusWindows`]): the 24
//! neighbours of a cell lie in at most 16 rows of the last axis, each
//! within 8 bytes of the others in its row, so the step reads 16 row
//! windows of 8 bytes (two to a 16-byte vector), takes a degree from the
//! neighbours with one byte subtraction a pair of windows, stores the
//! windows back, and picks the 24 neighbours' keys out of the windows:
//!
//! - with AVX-512 VBMI, out of two 64-byte registers with one byte permute
//!   (`vpermt2b`) and a vector minimum: 88 instructions a (2,1) rule-W
//!   step in the compiled loop against the scalar scan's 200;
//! - with SSE4.1 alone, one byte shuffle (`pshufb`) a pair of windows
//!   into four 16-bit lanes of its own: a pair of windows holds at most
//!   four moves of any 3D leaper ([`shuffle_lanes`]).
//!
//! Neither gathers (Zen 4 runs those slower than the loads they replace,
//! docs/performance/engine.md).
//!
//! Row-major, because the windows need each row's cells in order; the
//! board takes that layout wherever this kernel will walk it
//! ([`crate::walk::select::tile_bits`]), up to [`WINDOWS_MAX_PADDED`]
//! cells, past 1.5 Mi only where it times faster than the tiles
//! (`crate::runner::layout_choice`). The walk is the same as
//! [`super::Pointers`]', cell for cell (the walk tests).
//!
//! A step's windows overlap the previous step's at other offsets, and a
//! load cannot take its bytes from a pending store it only partly covers:
//! it waits for the store to reach the cache. The previous step's stores
//! come early in it and its minimum takes longer, which leaves them time
//! to land (this machine has no counters to show how often they have not).

use std::arch::x86_64::*;

use super::{to_the_end, Buffer, Scan, K, LOW_SCALED, SCALE, WINDOWS_MAX_PADDED};
use crate::board::Board;
use crate::layout::Layout;
use crate::moves::Moves;
use crate::walk::cpu::{Avx512Vbmi, Cpu, Sse41};
use crate::walk::{pair_loop, Paired, PausedWalk, Stepper};

/// Bytes a window holds: one 64-bit load.
const WIDTH: i64 = 8;
/// At most this many windows (two 64-byte registers of 8-byte windows).
const MAX_ROWS: usize = 16;
/// A key (scaled value in the high byte, move index in the low one) of a
/// blocked neighbour: a scaled value of 128 or more, decremented or not.
const BLOCKED_KEY: u32 = 128 << 8;
/// The scaled value, after the step's decrement, below which a candidate
/// can doom a walk ([`LOW_SCALED`] before it): the windows' keys are
/// taken after it ([`RowWindows::take_degrees`]).
const LOW_TAKEN: u32 = LOW_SCALED - SCALE as u32;
/// Keys below this can doom a walk (see [`super::LOW_KEY`]).
const LOW_KEY: u32 = LOW_TAKEN << 8;

/// Where a move set's windows lie from a cell, and what a step does with
/// them: a plan for one move order. Its [`Rows`] depend on the moves
/// alone, so two walks in other orders of them share one copy (two
/// copies spill the registers: 15.0 ns a step in pairs against 11.1 in a
/// scratch C harness, (2,1) 3D N=140).
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    rows: Rows,
    /// `vpermt2b`'s index for rule W: the high byte of 16-bit lane `k` is
    /// move `k`'s byte among the 128 of the windows.
    index: Bytes64,
    /// W+'s: the high byte of 32-bit lane `k` (of 16, then of 8).
    index_plus: [Bytes64; 2],
    /// The SSE step's move indices, by the lanes [`Rows::shuffles`] fill:
    /// 16-bit lane `l` of register `j` holds the move in lane `4 (2j) + l`
    /// of the pairs' lanes, 0xffff where no move is.
    keys: [Bytes16; MAX_ROWS / 4],
    /// Each move's lane among the pairs' ([`shuffle_lanes`]).
    lane_of: [u8; K],
}

/// The windows of a move set, in the order of their offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rows {
    /// Offset of each window's first byte from the cell, two windows to a
    /// vector; a set of an odd number of rows repeats its last window in
    /// the pair's second half, which subtracts and stores the same bytes.
    starts: [isize; MAX_ROWS],
    /// The decrement of each pair of windows: the scaled degree, 4, in
    /// each neighbour's byte.
    masks: Masks,
    /// Each lane's move index (its low byte); 0xffff in the lanes past K.
    lanes: Bytes64,
    /// Pairs of windows a step loads (6 or 8).
    pairs: usize,
    /// The SSE step's `pshufb` index a pair of windows: its moves' bytes
    /// in the high bytes of four 16-bit lanes, the low four of a register
    /// for an even pair and the high four for an odd one, so that two
    /// pairs' shuffles join with an `or`; 0x80 (a zero) elsewhere.
    shuffles: [Bytes16; MAX_ROWS / 2],
    /// The SSE W+ step's: the same bytes in the high bytes of four 32-bit
    /// lanes, a register a pair.
    plus_shuffles: [Bytes16; MAX_ROWS / 2],
}

#[repr(C, align(16))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Masks([u64; MAX_ROWS]);

#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bytes64([u8; 64]);

#[repr(C, align(16))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bytes16([u8; 16]);

/// Moves a pair of windows may hold for the SSE step: four 16-bit lanes.
const SHUFFLE_LANES: usize = 4;

/// Whether walks of `moves` on `board` can take this kernel on a
/// row-major layout: [`Plan::new`]'s conditions on that layout's offsets,
/// on a board of at most [`WINDOWS_MAX_PADDED`] padded cells. [`scan_on`]
/// asks the same of the CPU too.
#[cfg(test)]
pub(crate) fn fits(board: &Board, moves: &Moves) -> bool {
    plan_on(board, moves).is_some()
}

/// The window scan walks of `moves` on `board` take on `cpu`, where
/// [`fits`] holds: the VBMI step where the CPU has it, else the SSE one.
pub(crate) fn scan_on(board: &Board, moves: &Moves, cpu: Cpu) -> Option<Scan> {
    plan_on(board, moves).and_then(|_| scan(cpu))
}

/// [`scan_on`] for the walks on `layout`, `None` where it is tiled.
pub(crate) fn scan_of(layout: &Layout, moves: &Moves, cpu: Cpu) -> Option<Scan> {
    if layout.phase_mask() != 0 {
        return None;
    }
    Plan::new(layout.offsets(), &vectors(moves)).and_then(|_| scan(cpu))
}

/// The best window scan `cpu` has.
fn scan(cpu: Cpu) -> Option<Scan> {
    match Avx512Vbmi::new(cpu) {
        Some(proof) => Some(Scan::Windows(proof)),
        None => Sse41::new(cpu).map(Scan::SseWindows),
    }
}

/// The plan of `moves` on the row-major layout of `board`, where [`fits`].
fn plan_on(board: &Board, moves: &Moves) -> Option<Plan> {
    if !super::fits(board, moves) {
        return None;
    }
    if crate::layout::padded_len(board, moves, 0) > WINDOWS_MAX_PADDED {
        return None;
    }
    Plan::new(Layout::new(board, moves).ok()?.offsets(), &vectors(moves))
}

/// The moves' vectors, 3 a move.
fn vectors(moves: &Moves) -> Vec<i32> {
    moves.iter().flatten().copied().collect()
}

impl Plan {
    /// The plan of 24 moves of row-major `offsets` (one row) and their
    /// `vectors` (3 a move), or `None` where windows cannot hold them: a
    /// move's last component more than 7 from another's, rows other than
    /// 11-12 or 15-16 (6 or 8 pairs, the two loops compiled), a move
    /// within its own cell's row, two rows' windows closer than 8 bytes
    /// (a small board, whose windows would overlap), or more than four
    /// moves in a pair of windows ([`shuffle_lanes`]).
    pub(crate) fn new(offsets: &[isize], vectors: &[i32]) -> Option<Plan> {
        if offsets.len() != K || vectors.len() != 3 * K {
            return None;
        }
        let last = |k: usize| vectors[3 * k + 2] as isize;
        let least = (0..K).map(last).min()?;
        if (0..K).any(|k| last(k) - least >= WIDTH as isize || offsets[k] == last(k)) {
            return None;
        }
        // Each move's window, by its first byte.
        let start = |k: usize| offsets[k] - last(k) + least;
        let mut starts: Vec<isize> = (0..K).map(start).collect();
        starts.sort_unstable();
        starts.dedup();
        let pairs = starts.len().div_ceil(2);
        let apart = starts.windows(2).all(|w| w[1] - w[0] >= WIDTH as isize);
        if !(pairs == 6 || pairs == 8) || !apart {
            return None;
        }
        let mut rows = Rows {
            starts: [0; MAX_ROWS],
            masks: Masks([0; MAX_ROWS]),
            lanes: Bytes64([0xff; 64]),
            pairs,
            shuffles: [Bytes16([0x80; 16]); MAX_ROWS / 2],
            plus_shuffles: [Bytes16([0x80; 16]); MAX_ROWS / 2],
        };
        rows.starts[..starts.len()].copy_from_slice(&starts);
        let (mut index, mut index_plus) = ([0u8; 64], [Bytes64([0; 64]); 2]);
        // Each move's byte among the 128 of the windows, in move order.
        let mut bytes = [0u8; K];
        for k in 0..K {
            let (row, at) = (starts.binary_search(&start(k)).unwrap_or(0), (last(k) - least) as u32);
            rows.masks.0[row] |= u64::from(super::SCALE) << (8 * at);
            let byte = (row * WIDTH as usize) as u8 + at as u8;
            bytes[k] = byte;
            index[2 * k + 1] = byte;
            index_plus[k / 16].0[4 * (k % 16) + 3] = byte;
            (rows.lanes.0[2 * k], rows.lanes.0[2 * k + 1]) = (k as u8, 0);
        }
        if starts.len() % 2 == 1 {
            let r = starts.len();
            (rows.starts[r], rows.masks.0[r]) = (rows.starts[r - 1], rows.masks.0[r - 1]);
        }
        let lane_of = shuffle_lanes(&bytes)?;
        let mut keys = [Bytes16([0xff; 16]); MAX_ROWS / 4];
        for (k, &lane) in lane_of.iter().enumerate() {
            let lane = usize::from(lane);
            let (pair, slot) = (lane / SHUFFLE_LANES, lane % SHUFFLE_LANES);
            // The move's byte in its pair's register, and its 16-bit lane
            // in the register two pairs' keys share.
            let (source, at) = (bytes[k] % (2 * WIDTH as u8), 2 * (lane % (2 * SHUFFLE_LANES)));
            rows.shuffles[pair].0[at + 1] = source;
            rows.plus_shuffles[pair].0[4 * slot + 3] = source;
            (keys[pair / 2].0[at], keys[pair / 2].0[at + 1]) = (k as u8, 0);
        }
        Some(Plan { rows, index: Bytes64(index), index_plus, keys, lane_of })
    }
}

/// Each move's lane in the SSE step, four a pair of windows, for moves
/// at `bytes` of the windows: a pair's moves take its lanes in the order
/// of their bytes, which depends on the moves alone, so two orders of them
/// share the shuffles ([`Rows::shuffles`]). `None` where a pair of windows
/// holds more than four moves, which no 3D leaper's do: a row fixes two
/// components of a move, which leaves the third its sign, so a row holds
/// at most two.
fn shuffle_lanes(bytes: &[u8; K]) -> Option<[u8; K]> {
    let mut by_byte: Vec<usize> = (0..K).collect();
    by_byte.sort_unstable_by_key(|&k| bytes[k]);
    let (mut lane_of, mut taken) = ([0u8; K], [0usize; MAX_ROWS / 2]);
    for k in by_byte {
        let pair = usize::from(bytes[k]) / (2 * WIDTH as usize);
        if taken[pair] == SHUFFLE_LANES {
            return None;
        }
        lane_of[k] = (SHUFFLE_LANES * pair + taken[pair]) as u8;
        taken[pair] += 1;
    }
    Some(lane_of)
}

/// A walk's row windows: its buffer and the rows it shares with the walk
/// beside it; `P` pairs of windows a step. Every window stepper holds
/// one.
struct RowWindows<'a, 'r, const P: usize> {
    buffer: Buffer<'a>,
    /// The offsets of the moves from every cell (one row: row-major).
    moves: &'a [isize; K],
    rows: &'r Rows,
    _proof: Sse41,
}

impl<'a, 'r, const P: usize> RowWindows<'a, 'r, P> {
    /// The windows of `rows` on `buffer`. Panics where the buffer is
    /// tiled.
    fn new(buffer: Buffer<'a>, rows: &'r Rows, _proof: Sse41) -> RowWindows<'a, 'r, P> {
        assert_eq!(buffer.phase_mask, 0, "a row-major buffer");
        RowWindows { moves: buffer.row(0), buffer, rows, _proof }
    }

    /// Takes a degree from each neighbour of `cur` and returns the
    /// windows as they are after it, two rows of 8 bytes a vector (the
    /// first `P`). A neighbour's byte is then `SCALE` times its degree
    /// once `cur` is visited, which is what rule W compares; keeping the
    /// windows as they were before took a register copy a pair (8
    /// instructions of about 121 a step with SSE, where `psubb` overwrites
    /// its operand).
    ///
    /// # Safety
    /// As for [`Stepper::step`]; the CPU has the proof's features, and the
    /// function this inlines into is compiled with them.
    #[inline(always)]
    unsafe fn take_degrees(&self, cur: usize) -> [__m128i; 8] {
        let rows = self.rows;
        let at = self.buffer.base.wrapping_add(cur);
        let (base, len) = (self.buffer.base, self.buffer.len);
        // SAFETY: each window starts at most `reach` before a neighbour of
        // the board cell `cur` and ends at most 7 bytes after it, inside
        // the buffer or its slack ([`crate::layout::VECTOR_SLACK`]); the
        // windows of a step are disjoint (`Plan::new`), so a pair's two
        // stores never undo another's decrement.
        unsafe {
            let mut w = [_mm_setzero_si128(); 8];
            for (i, w) in w.iter_mut().enumerate().take(P) {
                let (a, b) = (at.wrapping_offset(rows.starts[2 * i]), at.wrapping_offset(rows.starts[2 * i + 1]));
                debug_assert!((a as usize).wrapping_sub(base as usize) + 8 <= len);
                debug_assert!((b as usize).wrapping_sub(base as usize) + 8 <= len);
                // The second window loaded into the high half as a
                // double: one `movhps`, where the integer insert took a
                // `movq` and a `punpcklqdq`.
                let high = f64::from_bits(b.cast::<u64>().read_unaligned());
                let low = _mm_cvtsd_f64(_mm_castsi128_pd(_mm_loadl_epi64(a.cast())));
                let v = _mm_castpd_si128(_mm_setr_pd(low, high));
                let d = _mm_sub_epi8(v, _mm_load_si128(rows.masks.0.as_ptr().add(2 * i).cast()));
                _mm_storel_epi64(a.cast(), d);
                b.cast::<i64>().write_unaligned(_mm_extract_epi64::<1>(d));
                *w = d;
            }
            w
        }
    }

    /// Moves a rule-W walk from `cur` by the move of its least key `best`
    /// ([`BLOCKED_KEY`]): the cell it enters, `None` where it ends.
    ///
    /// # Safety
    /// As for [`Stepper::step`]; `best` is the least key of `cur`'s
    /// neighbours.
    #[inline(always)]
    unsafe fn take_w(&mut self, cur: usize, best: u32, forced: &mut u32) -> Option<usize> {
        let least = (best < BLOCKED_KEY).then_some(((best & MOVE_MASK) as usize, best < LOW_KEY));
        // SAFETY: the caller's.
        unsafe { self.buffer.take_by(self.moves, cur, least, forced) }
    }

    /// Moves a W+ walk from `cur` by the move of its least key `best`
    /// ([`PLUS_SHIFT`]): the cell it enters and the move, `None` where it
    /// ends.
    ///
    /// # Safety
    /// As for [`Stepper::step`]; `best` is the least key of `cur`'s
    /// neighbours.
    #[inline(always)]
    unsafe fn take_plus(&mut self, cur: usize, best: u32, forced: &mut u32) -> Option<(usize, usize)> {
        let k = (best & MOVE_MASK) as usize;
        let least = (best < PLUS_BLOCKED).then_some((k, best < PLUS_LOW));
        // SAFETY: the caller's.
        unsafe { self.buffer.take_by(self.moves, cur, least, forced) }.map(|next| (next, k))
    }
}

/// The windows `w` as two 64-byte registers: rows 0-7 and 8-15.
///
/// # Safety
/// The CPU has AVX-512 F, and the function this inlines into is compiled
/// with it.
#[inline(always)]
unsafe fn halves(w: [__m128i; 8]) -> (__m512i, __m512i) {
    // SAFETY: the caller's.
    unsafe {
        let half = |i: usize| {
            let low = _mm256_set_m128i(w[i + 1], w[i]);
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low), _mm256_set_m128i(w[i + 3], w[i + 2]))
        };
        (half(0), half(4))
    }
}

/// Rule W's window stepper (see [`super::Pointers`]).
pub(crate) struct Windows<'a, 'r, const P: usize> {
    windows: RowWindows<'a, 'r, P>,
    /// [`Plan::index`].
    index: Bytes64,
}

/// Which move of a lane's key: its low bits.
const MOVE_MASK: u32 = 31;

impl<const P: usize> Windows<'_, '_, P> {
    /// The least key of the neighbours of `cur`, each neighbour's degree
    /// taken.
    ///
    /// # Safety
    /// As for [`RowWindows::take_degrees`].
    #[inline(always)]
    unsafe fn least(&self, cur: usize) -> u32 {
        // SAFETY: the caller's.
        unsafe {
            let (low, high) = halves(self.windows.take_degrees(cur));
            let index = _mm512_load_si512(self.index.0.as_ptr().cast());
            let picked = _mm512_maskz_permutex2var_epi8(0xaaaa_aaaa_aaaa, low, index, high);
            let keys = _mm512_or_si512(picked, _mm512_load_si512(self.windows.rows.lanes.0.as_ptr().cast()));
            let h = _mm256_min_epu16(_mm512_castsi512_si256(keys), _mm512_extracti64x4_epi64::<1>(keys));
            let q = _mm_min_epu16(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h));
            _mm_cvtsi128_si32(_mm_minpos_epu16(q)) as u32 & 0xffff
        }
    }
}

// SAFETY: as for `Pointers`: the windows hold the neighbours of a board
// cell, inside the buffer and its slack, and the step returns an open
// cell.
unsafe impl<const P: usize> Stepper for Windows<'_, '_, P> {
    type Key = u32;
    const SCANS_TOGETHER: bool = true;

    #[inline(always)]
    unsafe fn scan(&self, cur: usize) -> u32 {
        // SAFETY: the caller's; the proof's features are compiled in
        // (`alone`, `pair`).
        unsafe { self.least(cur) }
    }

    #[inline(always)]
    unsafe fn take(&mut self, cur: usize, best: u32, forced: &mut u32) -> Option<usize> {
        // SAFETY: the caller's; the least key is `cur`'s.
        unsafe { self.windows.take_w(cur, best, forced) }
    }
}

/// Rule W's window stepper on SSE4.1: each pair of windows shuffled into
/// four 16-bit lanes of keys of its own ([`Rows::shuffles`]), two pairs'
/// lanes joined into a register, and a vector minimum.
pub(crate) struct ShuffledWindows<'a, 'r, const P: usize> {
    windows: RowWindows<'a, 'r, P>,
    /// [`Plan::keys`].
    keys: [Bytes16; MAX_ROWS / 4],
}

// SAFETY: as for `Windows`.
unsafe impl<const P: usize> Stepper for ShuffledWindows<'_, '_, P> {
    type Key = u32;
    const SCANS_TOGETHER: bool = true;

    #[inline(always)]
    unsafe fn scan(&self, cur: usize) -> u32 {
        // SAFETY: the caller's; SSE4.1 and SSSE3 are compiled in
        // (`alone`, `pair`).
        unsafe {
            let w = self.windows.take_degrees(cur);
            let shuffles = &self.windows.rows.shuffles;
            let load = |b: &Bytes16| _mm_load_si128(b.0.as_ptr().cast());
            let mut least = _mm_set1_epi16(-1);
            for j in 0..P / 2 {
                let a = _mm_shuffle_epi8(w[2 * j], load(&shuffles[2 * j]));
                let b = _mm_shuffle_epi8(w[2 * j + 1], load(&shuffles[2 * j + 1]));
                least = _mm_min_epu16(least, _mm_or_si128(_mm_or_si128(a, b), load(&self.keys[j])));
            }
            _mm_cvtsi128_si32(_mm_minpos_epu16(least)) as u32 & 0xffff
        }
    }

    #[inline(always)]
    unsafe fn take(&mut self, cur: usize, best: u32, forced: &mut u32) -> Option<usize> {
        // SAFETY: the caller's; the least key is `cur`'s.
        unsafe { self.windows.take_w(cur, best, forced) }
    }
}

/// W+'s keys in 32-bit lanes: the scaled degree `4d` shifted up by 23
/// (`d << 25`) plus the move's part ([`super::plus::Parts`], below 2^25),
/// so blocked cells (a scaled value of 128 or more) start at `128 << 23`.
const PLUS_SHIFT: u32 = 23;
const PLUS_BLOCKED: u32 = 128 << PLUS_SHIFT;
const PLUS_LOW: u32 = LOW_TAKEN << PLUS_SHIFT;

/// 32 lanes of 32 bits, as two vectors; lanes past K unused.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy)]
struct Lanes32([u32; 32]);

/// W+'s window stepper: rule W's windows, the parts of the cell it stands
/// on and the moves' products, as in [`super::plus::Plus`].
pub(crate) struct PlusWindows<'a, 'r, const P: usize> {
    windows: RowWindows<'a, 'r, P>,
    index: [Bytes64; 2],
    /// The parts as two vectors, which stay in registers from step to
    /// step: as a `[u32; 32]`, the compiler updated them in narrower
    /// pieces than the next step loads them, a load no store can forward
    /// to (a lone walk took 80 ms against the scalar step's 59, (2,1) 3D
    /// N=140).
    parts: [__m512i; 2],
    dot2: Box<[[__m512i; 2]; K]>,
}

// SAFETY: as for `Windows`.
unsafe impl<const P: usize> Stepper for PlusWindows<'_, '_, P> {
    type Key = u32;
    const SCANS_TOGETHER: bool = true;

    #[inline(always)]
    unsafe fn scan(&self, cur: usize) -> u32 {
        // SAFETY: the caller's; the proof's features are compiled in
        // (`alone_plus`).
        unsafe {
            let (low, high) = halves(self.windows.take_degrees(cur));
            let key = |i: usize, mask: u64| {
                let index = _mm512_load_si512(self.index[i].0.as_ptr().cast());
                let bytes = _mm512_maskz_permutex2var_epi8(mask, low, index, high);
                _mm512_add_epi32(_mm512_srli_epi32::<1>(bytes), self.parts[i])
            };
            let (a, b) = (key(0, 0x8888_8888_8888_8888), key(1, 0x8888_8888));
            let m = _mm256_min_epu32(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64::<1>(a));
            let m = _mm256_min_epu32(m, _mm512_castsi512_si256(b));
            let h = _mm_min_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256::<1>(m));
            let h = _mm_min_epu32(h, _mm_shuffle_epi32::<0b01_00_11_10>(h));
            let h = _mm_min_epu32(h, _mm_shuffle_epi32::<0b10_11_00_01>(h));
            _mm_cvtsi128_si32(h) as u32
        }
    }

    #[inline(always)]
    unsafe fn take(&mut self, cur: usize, best: u32, forced: &mut u32) -> Option<usize> {
        // SAFETY: the caller's; the least key is `cur`'s.
        let (next, k) = unsafe { self.windows.take_plus(cur, best, forced) }?;
        // The walk moved by move k: every distance term shifts with it.
        let row = &self.dot2[k];
        // SAFETY: the proof's features are compiled in.
        self.parts = unsafe { [_mm512_sub_epi32(self.parts[0], row[0]), _mm512_sub_epi32(self.parts[1], row[1])] };
        Some(next)
    }
}

/// Calls `run::<P>(args)` with the plan's pairs of windows a step, each
/// count compiled as its own loop (6 or 8, [`Plan::new`]).
macro_rules! by_pairs {
    ($pairs:expr, $run:ident($($arg:expr),*)) => {
        match $pairs {
            6 => $run::<6>($($arg),*),
            _ => $run::<8>($($arg),*),
        }
    };
}

/// The plan of `buffer`'s moves. Panics where the buffer is tiled or its
/// moves have no plan: the layout is row-major exactly where [`fits`]
/// holds.
fn plan_of(buffer: &Buffer<'_>) -> Plan {
    assert_eq!(buffer.phase_mask, 0, "a row-major buffer");
    Plan::new(buffer.table, buffer.vectors).expect("moves whose windows fit")
}

/// One walk to its end ([`super::to_the_end`]) on `buffer` with the
/// window scan `scan`. Panics if `scan` is not a window scan.
pub(crate) fn alone(buffer: Buffer<'_>, scan: Scan, progress: &mut PausedWalk, path: Option<&mut Vec<usize>>) {
    /// # Safety
    /// The CPU has the features.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx2,sse4.1")]
    unsafe fn vbmi<const P: usize>(
        (buffer, plan, proof): (Buffer<'_>, &Plan, Avx512Vbmi),
        progress: &mut PausedWalk,
        path: Option<&mut Vec<usize>>,
    ) {
        let windows = RowWindows::<P>::new(buffer, &plan.rows, proof.sse41());
        to_the_end(Paired { stepper: Windows { windows, index: plan.index }, progress }, path);
    }
    /// # Safety
    /// The CPU has the features.
    #[target_feature(enable = "sse4.1,ssse3")]
    unsafe fn sse<const P: usize>(
        (buffer, plan, _proof): (Buffer<'_>, &Plan, Sse41),
        progress: &mut PausedWalk,
        path: Option<&mut Vec<usize>>,
    ) {
        let windows = RowWindows::<P>::new(buffer, &plan.rows, _proof);
        to_the_end(Paired { stepper: ShuffledWindows { windows, keys: plan.keys }, progress }, path);
    }
    let plan = &plan_of(&buffer);
    // SAFETY: the proof says the CPU has the features.
    unsafe {
        match scan {
            Scan::Windows(proof) => by_pairs!(plan.rows.pairs, vbmi((buffer, plan, proof), progress, path)),
            Scan::SseWindows(proof) => by_pairs!(plan.rows.pairs, sse((buffer, plan, proof), progress, path)),
            _ => panic!("a walk on the windows takes a window scan, not {scan:?}"),
        }
    }
}

/// Two walks a step each in turn until one ends ([`crate::walk::run_pair`]),
/// each on its own buffer and move order (of the same moves, whose
/// [`Rows`] they share), with the window scan `scan`. Panics if `scan` is
/// not a window scan.
pub(crate) fn pair(
    (a, pa): (Buffer<'_>, &mut PausedWalk),
    (b, pb): (Buffer<'_>, &mut PausedWalk),
    scan: Scan,
) -> [bool; 2] {
    /// # Safety
    /// The CPU has the features.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx2,sse4.1")]
    unsafe fn vbmi<const P: usize>(
        (a, pa): (Buffer<'_>, &mut PausedWalk),
        (b, pb): (Buffer<'_>, &mut PausedWalk),
        (rows, index_a, index_b): (&Rows, Bytes64, Bytes64),
        proof: Avx512Vbmi,
    ) -> [bool; 2] {
        let _proof = proof.sse41();
        let a = Windows { windows: RowWindows::<P>::new(a, rows, _proof), index: index_a };
        let b = Windows { windows: RowWindows::<P>::new(b, rows, _proof), index: index_b };
        pair_loop(Paired { stepper: a, progress: pa }, Paired { stepper: b, progress: pb })
    }
    /// # Safety
    /// The CPU has the features.
    #[target_feature(enable = "sse4.1,ssse3")]
    unsafe fn sse<const P: usize>(
        (a, pa): (Buffer<'_>, &mut PausedWalk),
        (b, pb): (Buffer<'_>, &mut PausedWalk),
        (rows, keys_a, keys_b): (&Rows, [Bytes16; MAX_ROWS / 4], [Bytes16; MAX_ROWS / 4]),
        _proof: Sse41,
    ) -> [bool; 2] {
        let a = ShuffledWindows { windows: RowWindows::<P>::new(a, rows, _proof), keys: keys_a };
        let b = ShuffledWindows { windows: RowWindows::<P>::new(b, rows, _proof), keys: keys_b };
        pair_loop(Paired { stepper: a, progress: pa }, Paired { stepper: b, progress: pb })
    }
    let (plan_a, plan_b) = (plan_of(&a), plan_of(&b));
    assert_eq!(plan_a.rows, plan_b.rows, "two orders of the same moves");
    let rows = &plan_a.rows;
    // SAFETY: the proof says the CPU has the features.
    unsafe {
        match scan {
            Scan::Windows(proof) => {
                by_pairs!(rows.pairs, vbmi((a, pa), (b, pb), (rows, plan_a.index, plan_b.index), proof))
            }
            Scan::SseWindows(proof) => {
                by_pairs!(rows.pairs, sse((a, pa), (b, pb), (rows, plan_a.keys, plan_b.keys), proof))
            }
            _ => panic!("walks on the windows take a window scan, not {scan:?}"),
        }
    }
}

/// A W+ walk's window stepper on `buffer` with `rows` (its plan's, or
/// the pair's), standing on the cell whose doubled centre offset is
/// `centred` ([`super::plus::parts`]).
fn plus_stepper<'a, 'r, const P: usize>(
    buffer: Buffer<'a>,
    (rows, index): (&'r Rows, [Bytes64; 2]),
    centred: &[i64],
    _proof: Avx512Vbmi,
) -> PlusWindows<'a, 'r, P> {
    let (parts, products) = super::plus::parts(buffer.vectors, centred);
    let lanes = |values: &[u32; K]| {
        let mut out = Lanes32([0; 32]);
        out.0[..K].copy_from_slice(values);
        // SAFETY: 128 bytes either way, and any bits are a vector.
        unsafe { std::mem::transmute::<Lanes32, [__m512i; 2]>(out) }
    };
    let dot2 = Box::new(std::array::from_fn(|j| lanes(&products[j])));
    PlusWindows { windows: RowWindows::new(buffer, rows, _proof.sse41()), index, parts: lanes(&parts), dot2 }
}

/// W+'s window stepper on SSE4.1: a pair of windows shuffled into the
/// high bytes of four 32-bit keys ([`Rows::plus_shuffles`]), a register
/// a pair, each lane's part added as in [`PlusWindows`].
pub(crate) struct PlusShuffled<'a, 'r, const P: usize> {
    windows: RowWindows<'a, 'r, P>,
    /// The parts by lane ([`Plan::lane_of`]), `u32::MAX` in a lane with
    /// no move, whose key then never wins.
    parts: [__m128i; 8],
    dot2: Box<[[__m128i; 8]; K]>,
}

// SAFETY: as for `Windows`.
unsafe impl<const P: usize> Stepper for PlusShuffled<'_, '_, P> {
    type Key = u32;
    const SCANS_TOGETHER: bool = true;

    #[inline(always)]
    unsafe fn scan(&self, cur: usize) -> u32 {
        // SAFETY: the caller's; SSE4.1 and SSSE3 are compiled in
        // (`alone_plus`, `pair_plus`).
        unsafe {
            let w = self.windows.take_degrees(cur);
            let shuffles = &self.windows.rows.plus_shuffles;
            let mut least = _mm_set1_epi32(-1);
            for (i, w) in w.iter().enumerate().take(P) {
                let bytes = _mm_shuffle_epi8(*w, _mm_load_si128(shuffles[i].0.as_ptr().cast()));
                least = _mm_min_epu32(least, _mm_add_epi32(_mm_srli_epi32::<1>(bytes), self.parts[i]));
            }
            let h = _mm_min_epu32(least, _mm_shuffle_epi32::<0b01_00_11_10>(least));
            let h = _mm_min_epu32(h, _mm_shuffle_epi32::<0b10_11_00_01>(h));
            _mm_cvtsi128_si32(h) as u32
        }
    }

    #[inline(always)]
    unsafe fn take(&mut self, cur: usize, best: u32, forced: &mut u32) -> Option<usize> {
        // SAFETY: the caller's; the least key is `cur`'s.
        let (next, k) = unsafe { self.windows.take_plus(cur, best, forced) }?;
        // The walk moved by move k: every distance term shifts with it.
        let row = &self.dot2[k];
        for (part, d) in self.parts.iter_mut().zip(row).take(P) {
            // SAFETY: SSE2, which x86-64 has.
            *part = unsafe { _mm_sub_epi32(*part, *d) };
        }
        Some(next)
    }
}

/// A W+ walk's SSE stepper on `buffer` with `rows` (its plan's, or the
/// pair's) and its plan's lanes, standing on the cell whose doubled
/// centre offset is `centred`.
fn plus_shuffled<'a, 'r, const P: usize>(
    buffer: Buffer<'a>,
    (rows, lane_of): (&'r Rows, &[u8; K]),
    centred: &[i64],
    _proof: Sse41,
) -> PlusShuffled<'a, 'r, P> {
    let (parts, products) = super::plus::parts(buffer.vectors, centred);
    let lanes = |values: &[u32; K], none: u32| {
        let mut out = [none; 4 * MAX_ROWS / 2];
        for (k, &v) in values.iter().enumerate() {
            out[usize::from(lane_of[k])] = v;
        }
        // SAFETY: 128 bytes either way, and any bits are a vector.
        unsafe { std::mem::transmute::<[u32; 32], [__m128i; 8]>(out) }
    };
    let dot2 = Box::new(std::array::from_fn(|j| lanes(&products[j], 0)));
    PlusShuffled { windows: RowWindows::new(buffer, rows, _proof), parts: lanes(&parts, u32::MAX), dot2 }
}

/// One W+ walk to its end on `buffer` with the window scan `scan`,
/// standing on the cell whose doubled centre offset is `centred`
/// ([`super::plus::parts`]). Panics if `scan` is not a window scan.
pub(crate) fn alone_plus(
    buffer: Buffer<'_>,
    centred: &[i64],
    scan: Scan,
    progress: &mut PausedWalk,
    path: Option<&mut Vec<usize>>,
) {
    /// # Safety
    /// The CPU has the features.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx2,sse4.1")]
    unsafe fn vbmi<const P: usize>(
        (buffer, plan, centred, proof): (Buffer<'_>, Plan, &[i64], Avx512Vbmi),
        progress: &mut PausedWalk,
        path: Option<&mut Vec<usize>>,
    ) {
        let stepper = plus_stepper::<P>(buffer, (&plan.rows, plan.index_plus), centred, proof);
        to_the_end(Paired { stepper, progress }, path);
    }
    /// # Safety
    /// The CPU has the features.
    #[target_feature(enable = "sse4.1,ssse3")]
    unsafe fn sse<const P: usize>(
        (buffer, plan, centred, proof): (Buffer<'_>, Plan, &[i64], Sse41),
        progress: &mut PausedWalk,
        path: Option<&mut Vec<usize>>,
    ) {
        let stepper = plus_shuffled::<P>(buffer, (&plan.rows, &plan.lane_of), centred, proof);
        to_the_end(Paired { stepper, progress }, path);
    }
    let plan = plan_of(&buffer);
    // SAFETY: the proof says the CPU has the features.
    unsafe {
        match scan {
            Scan::Windows(proof) => by_pairs!(plan.rows.pairs, vbmi((buffer, plan, centred, proof), progress, path)),
            Scan::SseWindows(proof) => by_pairs!(plan.rows.pairs, sse((buffer, plan, centred, proof), progress, path)),
            _ => panic!("W+ on the windows takes a window scan, not {scan:?}"),
        }
    }
}

/// Two W+ walks a step each in turn until one ends, each on its own
/// buffer and move order (of the same moves, whose [`Rows`] they share),
/// standing on the cells whose doubled centre offsets are given. Panics
/// if `scan` is not a window scan.
pub(crate) fn pair_plus(
    (a, pa, ca): (Buffer<'_>, &mut PausedWalk, &[i64]),
    (b, pb, cb): (Buffer<'_>, &mut PausedWalk, &[i64]),
    scan: Scan,
) -> [bool; 2] {
    /// # Safety
    /// The CPU has the features.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx2,sse4.1")]
    unsafe fn vbmi<const P: usize>(
        (a, pa, ca): (Buffer<'_>, &mut PausedWalk, &[i64]),
        (b, pb, cb): (Buffer<'_>, &mut PausedWalk, &[i64]),
        (rows, index_a, index_b): (&Rows, [Bytes64; 2], [Bytes64; 2]),
        proof: Avx512Vbmi,
    ) -> [bool; 2] {
        let a = plus_stepper::<P>(a, (rows, index_a), ca, proof);
        let b = plus_stepper::<P>(b, (rows, index_b), cb, proof);
        pair_loop(Paired { stepper: a, progress: pa }, Paired { stepper: b, progress: pb })
    }
    /// # Safety
    /// The CPU has the features.
    #[target_feature(enable = "sse4.1,ssse3")]
    unsafe fn sse<const P: usize>(
        (a, pa, ca): (Buffer<'_>, &mut PausedWalk, &[i64]),
        (b, pb, cb): (Buffer<'_>, &mut PausedWalk, &[i64]),
        (rows, lanes_a, lanes_b): (&Rows, &[u8; K], &[u8; K]),
        proof: Sse41,
    ) -> [bool; 2] {
        let a = plus_shuffled::<P>(a, (rows, lanes_a), ca, proof);
        let b = plus_shuffled::<P>(b, (rows, lanes_b), cb, proof);
        pair_loop(Paired { stepper: a, progress: pa }, Paired { stepper: b, progress: pb })
    }
    let (plan_a, plan_b) = (plan_of(&a), plan_of(&b));
    assert_eq!(plan_a.rows, plan_b.rows, "two orders of the same moves");
    let rows = &plan_a.rows;
    // SAFETY: the proof says the CPU has the features.
    unsafe {
        match scan {
            Scan::Windows(proof) => {
                let shared = (rows, plan_a.index_plus, plan_b.index_plus);
                by_pairs!(rows.pairs, vbmi((a, pa, ca), (b, pb, cb), shared, proof))
            }
            Scan::SseWindows(proof) => {
                let shared = (rows, &plan_a.lane_of, &plan_b.lane_of);
                by_pairs!(rows.pairs, sse((a, pa, ca), (b, pb, cb), shared, proof))
            }
            _ => panic!("W+ on the windows takes a window scan, not {scan:?}"),
        }
    }
}
