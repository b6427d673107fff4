//! The keyed kernel: byte degrees, a move set closed under negation and a
//! deterministic tiebreak, every candidate one integer key and the least
//! wins, so no branch depends on the board; specialised for the common move
//! counts so the loop over moves unrolls.

use super::{cell, doomed, set_cell, tree_min, WalkMoves, MINIMA_CHAINS};
use crate::layout::phase_row;

// The key layouts of [`walk_keyed`], high bits first; each is ordered as
// its rule ranks candidates, the move index breaking the last ties. They
// are `u8`s so they can be const parameters of the kernel.

/// Rule W on boards of at most 2^32 padded cells: degree 8 bits, move
/// index 8, padded cell 32. Carrying the cell takes the move table's load
/// off the step's critical path: 2D (2,1) N=1000, 131 -> 158 M steps/s.
pub(super) const KEY_W: u8 = 0;
/// Rule W elsewhere, and for move counts the kernel is not unrolled for:
/// degree 8, move index 8.
pub(super) const KEY_W_SMALL: u8 = 3;
/// Bits of the padded cell in a W key.
pub(super) const W_CELL_BITS: u32 = 32;
/// Rule W+ on boards of at most 2^28 padded cells and |rel| < 2^19:
/// degree 8, BIAS - rel 20, move index 8, padded cell 28.
pub(super) const KEY_PACKED: u8 = 1;
/// Rule W+ elsewhere: degree 8, BIAS - rel 48, move index 8; the cell is
/// looked up from the move index.
pub(super) const KEY_PLUS: u8 = 2;

/// Offset of the distance part of a wide W+ key, so that `BIAS - rel` is positive.
pub(super) const BIAS: i64 = 1 << 47;
/// The same for a packed W+ key.
pub(super) const PACKED_BIAS: i64 = 1 << 19;
/// Bits of the padded cell in a packed W+ key.
pub(super) const PACKED_CELL_BITS: u32 = 28;

/// Whether keys of layout `key` hold every cell of a buffer of `cells`:
/// those of W and packed W+ carry the cell in their low bits.
pub(super) fn key_holds_cells(key: u8, cells: u128) -> bool {
    match key {
        KEY_W => cells <= 1 << W_CELL_BITS,
        KEY_PACKED => cells <= 1 << PACKED_CELL_BITS,
        _ => true,
    }
}

/// The walk for byte degrees, a move set closed under negation and a
/// deterministic tiebreak: every candidate gets one integer key and the
/// least key wins, so no branch depends on the board. Rule W's key is
/// (degree, move index); W+'s is (degree, -distance, move index), with the
/// centre distance of candidate k compared through
/// rel(k) = sum_a v_a (c_a + v_a), where c = 2x - (n - 1): the squared
/// doubled distance is sum c^2 + 4 rel(k), so a larger rel is farther.
/// Specialised for the common move counts (8 in 2D, 24 in 3D) so the loop
/// over moves unrolls.
///
/// # Safety
/// What [`walk`](super::walk) checks: `deg` is a buffer of the layout of `moves`, at
/// least its length, `start` a board cell of it, and `key` holds its cells
/// and distances with at most [`KEYED_MAX_MOVES`] moves.
pub(super) unsafe fn walk_keyed(
    deg: &mut [u8],
    moves: &WalkMoves<'_>,
    start: usize,
    key: u8,
    xy: &mut [i64],
    path: Option<&mut Vec<usize>>,
    stop_when_doomed: bool,
) -> u64 {
    centre(xy, moves.sides);
    let shape = (moves.count(), xy.len(), key);
    let a = (deg, moves, start, xy, path, stop_when_doomed);
    // SAFETY: the caller's.
    unsafe {
        match shape {
            (8, 2, KEY_W) => walk_keyed_with::<8, 2, KEY_W>(a),
            (8, 2, KEY_PACKED) if moves.phase_mask == 0 => walk_plus_8(a),
            (24, 3, KEY_PACKED) => walk_keyed_with::<24, 3, KEY_PACKED>(a),
            // Past the unrolled shapes a step is bound by its K keys, not by
            // its latency, so the key with fewer instructions.
            (_, _, KEY_W | KEY_W_SMALL) => walk_keyed_with::<0, 0, KEY_W_SMALL>(a),
            (_, _, KEY_PACKED) => walk_keyed_with::<0, 0, KEY_PACKED>(a),
            _ => walk_keyed_with::<0, 0, KEY_PLUS>(a),
        }
    }
}

/// The arguments of [`walk_keyed_with`], passed as one value.
type KeyedArgs<'d, 'm, 'a> = (&'d mut [u8], &'m WalkMoves<'a>, usize, &'d mut [i64], Option<&'d mut Vec<usize>>, bool);

/// [`walk_keyed`] for K moves in D dimensions (0: as many as given).
///
/// # Safety
/// As for [`walk_keyed`].
#[inline(always)]
unsafe fn walk_keyed_with<const K: usize, const D: usize, const KEY: u8>(
    (deg, moves, start, centred, mut path, stop_when_doomed): KeyedArgs<'_, '_, '_>,
) -> u64 {
    const BLOCKED: u8 = u8::MAX;
    const OPEN: u8 = KEYED_MAX_MOVES as u8 + 1;
    // A packed W+ key carries the neighbour's padded index, so the next
    // cell needs no lookup.
    const PACKED_CELLS: u64 = (1 << PACKED_CELL_BITS) - 1;
    let plus = KEY != KEY_W && KEY != KEY_W_SMALL;
    let k_count = if K == 0 { moves.count() } else { K };
    let dims = if D == 0 { centred.len() } else { D };
    let (table, mask) = (moves.offsets, moves.phase_mask);
    let vectors = &moves.vectors[..k_count * dims];
    // W+: each candidate's key less its degree and cell, (BIAS - rel, k) in
    // place, kept up to date by subtracting, per step, the chosen move's row
    // of dot2[j][k] = 2 v_j . v_k (the centre offset c grows by 2 v_j), so a
    // candidate's key costs no multiply.
    let (bias, rel_shift, k_shift) = match KEY {
        KEY_PACKED => (PACKED_BIAS, 36, PACKED_CELL_BITS),
        _ => (BIAS, 8, 0),
    };
    let (mut base_fixed, mut base_any, mut dot2) = ([0u64; K], Vec::new(), Vec::new());
    if plus {
        if K == 0 {
            base_any = vec![0; k_count];
        }
        let v = |k: usize| &vectors[k * dims..(k + 1) * dims];
        let base: &mut [u64] = if K > 0 { &mut base_fixed } else { &mut base_any };
        for (k, b) in base.iter_mut().enumerate() {
            let rel = rel(v(k), &centred[..dims]);
            *b = ((bias - rel) as u64) << rel_shift | (k as u64) << k_shift;
        }
        dot2 =
            (0..k_count * k_count).map(|jk| (dot2_of(v(jk / k_count), v(jk % k_count)) as u64) << rel_shift).collect();
    }
    let base: &mut [u64] = if K > 0 { &mut base_fixed } else { &mut base_any };
    let mut cur = start;
    // SAFETY: `cur` is a board cell: the start, or the open cell a step chose.
    unsafe { set_cell(deg, cur, BLOCKED) };
    let mut visited = 1u64;
    let mut forced = 0u32;
    if let Some(p) = path.as_deref_mut() {
        p.push(cur);
    }
    let fixed = &table[..k_count];
    loop {
        // Row-major layouts have one row (a branch the loop hoists).
        let offsets = if mask == 0 { fixed } else { phase_row(table, mask, k_count, cur) };
        let mut key_of = |k: usize| {
            let n = cur.wrapping_add_signed(offsets[k]);
            // `cur` was just visited: each unvisited neighbour loses one.
            // Blocked cells lose one too, which keeps this branch-free: a
            // cell is decremented at most once per neighbour, so a blocked
            // cell (255 when blocked) never falls below 255 - K >= OPEN.
            // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            let d = (unsafe { cell(deg, n) } as u32).wrapping_sub(1);
            // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            unsafe { set_cell(deg, n, d as u8) };
            if KEY == KEY_W {
                return ((d as u64) << (W_CELL_BITS + 8)) | (((k as u64) << W_CELL_BITS) + n as u64);
            }
            if KEY == KEY_W_SMALL {
                return (d << 8 | k as u32) as u64;
            }
            let d = d as u8;
            if KEY == KEY_PACKED {
                (d as u64) << 56 | (base[k] + n as u64)
            } else {
                (d as u64) << 56 | base[k]
            }
        };
        // Whole rounds of MINIMA_CHAINS keys (unrolled, the minima in registers),
        // then the rest.
        let mut chains = [u64::MAX; MINIMA_CHAINS];
        let rounds = k_count / MINIMA_CHAINS;
        for round in 0..rounds {
            for (j, chain) in chains.iter_mut().enumerate() {
                *chain = (*chain).min(key_of(round * MINIMA_CHAINS + j));
            }
        }
        for (chain, k) in chains.iter_mut().zip(rounds * MINIMA_CHAINS..k_count) {
            *chain = (*chain).min(key_of(k));
        }
        let best = tree_min(chains);
        let least = match KEY {
            KEY_W => (best >> (W_CELL_BITS + 8)) as u8,
            KEY_W_SMALL => (best >> 8) as u8,
            _ => (best >> 56) as u8,
        };
        if least >= OPEN {
            return visited;
        }
        let chosen = match KEY {
            KEY_W => (best >> W_CELL_BITS) & 0xff,
            KEY_PACKED => (best >> PACKED_CELL_BITS) & 0xff,
            _ => best & 0xff,
        } as usize;
        let next = match KEY {
            KEY_PACKED => (best & PACKED_CELLS) as usize,
            KEY_W => best as u32 as usize,
            _ => cur.wrapping_add_signed(offsets[chosen]),
        };
        // A cell left behind can doom the walk only if it has at most one
        // unvisited neighbour, and then so has the least-degree candidate.
        if stop_when_doomed
            && least < 2
            // SAFETY: `cur` is a board cell, `table` the layout's rows of offsets.
            && unsafe { doomed(deg, |d| d, (table, mask, k_count), cur, next, &mut forced) }
        {
            return visited;
        }
        if plus {
            for (b, &d) in base.iter_mut().zip(&dot2[chosen * k_count..(chosen + 1) * k_count]) {
                *b = b.wrapping_sub(d);
            }
        }
        cur = next;
        // SAFETY: `cur` is a board cell: the start, or the open cell a step chose.
        unsafe { set_cell(deg, cur, BLOCKED) };
        visited += 1;
        if let Some(p) = path.as_deref_mut() {
            p.push(cur);
        }
    }
}

/// Rule W+ with a packed key for 8 moves on a row-major layout (2D leapers
/// on boards too wide for [`distance_cells`](super::distance_cells), which the runner uses where the
/// distance fits a cell): [`walk_keyed_with`]'s
/// walk with every per-move quantity a local the compiler keeps in
/// registers: about 120 instructions a step on (3,2) N=400, against 213. The
/// neighbour's address comes from the offset, not the key part: the part
/// waits on the chosen move's row of `dot2`, the address only on the cell.
///
/// # Safety
/// As for [`walk_keyed`], with 8 moves in 2D on a row-major layout.
unsafe fn walk_plus_8((deg, moves, start, centred, mut path, stop_when_doomed): KeyedArgs<'_, '_, '_>) -> u64 {
    const K: usize = 8;
    const OPEN: u64 = KEYED_MAX_MOVES as u64 + 1;
    // Key bits, high first: degree 8, PACKED_BIAS - rel 20, move index 4,
    // padded cell 32: the cell is the low half, so the next step needs no
    // mask.
    const REL_SHIFT: u32 = 36;
    const MOVE_SHIFT: u32 = 32;
    let v = |k: usize| &moves.vectors[2 * k..2 * k + 2];
    let mut parts = [0u64; K];
    let mut dot2 = [[0u64; K]; K];
    let mut offsets = [0isize; K];
    offsets.copy_from_slice(&moves.offsets[..K]);
    for (k, part) in parts.iter_mut().enumerate() {
        *part = ((PACKED_BIAS - rel(v(k), centred)) as u64) << REL_SHIFT | (k as u64) << MOVE_SHIFT;
        for (j, row) in dot2.iter_mut().enumerate() {
            row[k] = (dot2_of(v(j), v(k)) as u64) << REL_SHIFT;
        }
    }
    let mut cur = start;
    // SAFETY: `cur` is a board cell: the start, or the open cell a step chose.
    unsafe { set_cell(deg, cur, u8::MAX) };
    let (mut visited, mut forced) = (1u64, 0u32);
    if let Some(p) = path.as_deref_mut() {
        p.push(cur);
    }
    loop {
        let mut keys = [0u64; K];
        for ((key, &part), &o) in keys.iter_mut().zip(&parts).zip(&offsets) {
            let n = cur.wrapping_add_signed(o);
            // As in walk_keyed_with: every neighbour loses one, branch-free
            // (and never from 0: `cur` was one of its unvisited neighbours,
            // or it is blocked), so the wide decrement needs no widening.
            // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            let d = (unsafe { cell(deg, n) } as u64).wrapping_sub(1);
            // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            unsafe { set_cell(deg, n, d as u8) };
            *key = d << 56 | (part + n as u64);
        }
        let best = tree_min(keys);
        let least = best >> 56;
        if least >= OPEN {
            return visited;
        }
        let next = best as u32 as usize;
        let chosen = ((best >> MOVE_SHIFT) as usize) & (K - 1);
        // SAFETY: `cur` is a board cell, the offsets the layout's.
        if stop_when_doomed && least < 2 && unsafe { doomed(deg, |d| d, (moves.offsets, 0, K), cur, next, &mut forced) }
        {
            return visited;
        }
        for (part, &d) in parts.iter_mut().zip(&dot2[chosen]) {
            *part = part.wrapping_sub(d);
        }
        cur = next;
        // SAFETY: `cur` is a board cell: the start, or the open cell a step chose.
        unsafe { set_cell(deg, cur, u8::MAX) };
        visited += 1;
        if let Some(p) = path.as_deref_mut() {
            p.push(cur);
        }
    }
}

/// Most moves the keyed kernel takes: open cells' degrees stay at most K and
/// blocked cells' values at least 255 - K, apart while K < 128.
pub(super) const KEYED_MAX_MOVES: usize = 127;

/// Makes a cell's coordinates `xy` on a board of `sides` its doubled
/// offset from the centre, `c = 2x - (n - 1)` an axis (see [`walk_keyed`]).
pub(super) fn centre(xy: &mut [i64], sides: &[usize]) {
    for (x, &n) in xy.iter_mut().zip(sides) {
        *x = 2 * *x - (n as i64 - 1);
    }
}

/// W+'s rel for move `v` from a cell whose doubled centre offset is
/// `centred` (see [`walk_keyed`]): sum_a v_a (c_a + v_a).
pub(super) fn rel(v: &[i32], centred: &[i64]) -> i64 {
    v.iter().zip(centred).map(|(&v, &c)| v as i64 * (c + v as i64)).sum()
}

/// 2 a . b: what moving by `a` adds to rel of move `b` (c grows by 2a).
pub(super) fn dot2_of(a: &[i32], b: &[i32]) -> i64 {
    2 * a.iter().zip(b).map(|(&a, &b)| a as i64 * b as i64).sum::<i64>()
}
