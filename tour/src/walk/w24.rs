//! Rule W for 24 moves on a tiled 3D board: the report's 3D leapers ((2,1),
//! (1,2,2), (3,1) and the like). With 24 neighbours a step is bound by the
//! work it does on them, not by its latency, so each neighbour gets as few
//! instructions as the step allows (7, against 11 in
//! [`super::walk_keyed_with`]):
//!
//! - the walk reads each neighbour through a pointer per (phase, move),
//!   `cell + offset` precomputed, so its address needs no addition;
//! - the buffer holds degrees times four (255 blocked, as elsewhere), so a
//!   candidate's key, `4d * 8 + k` = (degree, move index), is one `lea`;
//! - the key does not carry the cell: the next cell is `cur + offset[k]`,
//!   one load after the least key (the latency this adds is hidden behind
//!   the 24 neighbours' work).
//!
//! The walk is the same as the keyed kernel's, cell for cell (the walk tests
//! run both kernels against the generic one).

use super::{doomed, tree_min, WalkMoves, LANES};

/// Moves this kernel takes.
pub(crate) const K: usize = 24;
/// A blocked (border or visited) cell, as in the byte buffer the walk is
/// given. Each neighbour of the walk loses [`SCALE`] per visit, blocked ones
/// included (branch-free): a blocked cell never falls below 255 - 4K = 159.
const BLOCKED: u8 = u8::MAX;
/// One degree in the scaled buffer: an open cell holds at most 4K = 96.
const SCALE: u8 = 4;
/// A key is the scaled value shifted by this: degree << 5, which leaves the
/// low 5 bits to the move index (K < 32), added by the same `lea`.
const SHIFT: u32 = 3;
/// The move index's bits in a key.
const MOVE_MASK: u64 = 31;
/// Keys from here up are blocked cells: a scaled value of 128 or more.
const BLOCKED_KEY: u64 = 128 << SHIFT;
/// Keys below this are candidates of degree at most one after their
/// decrement (scaled value before it below 3 x 4), the only ones that can
/// doom a walk (see [`doomed`]).
const LOW_KEY: u64 = (3 * SCALE as u64) << SHIFT;

/// Runs one rule-W walk from padded cell `start` on byte degrees `deg`
/// (unscaled on entry, left scaled), 24 moves in the rows of `moves`.
/// Returns cells visited; see [`super::walk`].
#[allow(unsafe_code)]
pub(crate) fn walk(
    deg: &mut [u8],
    moves: &WalkMoves<'_>,
    start: usize,
    mut path: Option<&mut Vec<usize>>,
    stop_when_doomed: bool,
) -> u64 {
    debug_assert_eq!(moves.count(), K);
    for d in deg.iter_mut() {
        *d = if *d == BLOCKED { BLOCKED } else { *d * SCALE };
    }
    let (table, mask) = (moves.offsets, moves.phase_mask);
    let len = deg.len();
    let base = deg.as_mut_ptr();
    // `base + offset` per (phase, move): out of the buffer for negative
    // offsets, which `wrapping_offset` allows; `cur` is added before any
    // access, and that lands inside (the layout's invariant, see walk.rs).
    let pointers: Vec<*mut u8> = table.iter().map(|&o| base.wrapping_offset(o)).collect();
    let mut cur = start;
    debug_assert!(cur < len);
    // SAFETY: `start` is a board cell, inside the buffer.
    unsafe { *base.add(cur) = BLOCKED };
    let (mut visited, mut forced) = (1u64, 0u32);
    if let Some(p) = path.as_deref_mut() {
        p.push(cur);
    }
    loop {
        let row = (cur & mask) * K;
        let Ok(row_pointers) = <&[*mut u8; K]>::try_from(&pointers[row..row + K]) else {
            unreachable!("a row holds K pointers")
        };
        let mut lanes = [u64::MAX; LANES];
        for round in 0..K / LANES {
            for (j, lane) in lanes.iter_mut().enumerate() {
                let k = round * LANES + j;
                let p = row_pointers[k].wrapping_add(cur);
                debug_assert!((p as usize).wrapping_sub(base as usize) < len);
                // SAFETY: `p` is a neighbour of the board cell `cur`, inside
                // the buffer by the layout's invariant.
                let b = unsafe { *p };
                // SAFETY: as above.
                unsafe { *p = b.wrapping_sub(SCALE) };
                *lane = (*lane).min((u64::from(b) << SHIFT) + k as u64);
            }
        }
        let best = tree_min(lanes);
        if best >= BLOCKED_KEY {
            return visited;
        }
        let next = cur.wrapping_add_signed(table[row + (best & MOVE_MASK) as usize]);
        if stop_when_doomed && best < LOW_KEY {
            // SAFETY: no pointer writes while this view lives.
            let view = unsafe { std::slice::from_raw_parts(base, len) };
            if doomed(view, |d| d / SCALE, (table, mask, K), cur, next, &mut forced) {
                return visited;
            }
        }
        cur = next;
        debug_assert!(cur < len);
        // SAFETY: `next` is a board cell (the least key is an open one).
        unsafe { *base.add(cur) = BLOCKED };
        visited += 1;
        if let Some(p) = path.as_deref_mut() {
            p.push(cur);
        }
    }
}
