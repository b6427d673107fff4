//! The SIMD loop of the window kernels: `L` walks stepped in turn with
//! SSE4.1 and SSSE3 until one ends, apart from the plans that say what a
//! step reads.

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
