//! The generic kernel: any degree width, tiebreak and move set, one
//! candidate at a time, monomorphised per tiebreak, symmetry and
//! branch-free choice; what a walk runs on where the keyed kernel and the
//! group kernels do not apply.

use super::{cell, set_cell, Tiebreak, WalkMoves};
use crate::layout::{phase_row, Degree};
use crate::seed::Rng;

/// The generic kernel for this tiebreak, symmetry and branch-free choice.
///
/// # Safety
/// What [`walk`](super::walk) checks: `deg` is a buffer of the layout of `moves`, at
/// least its length, and `start` a board cell of it.
#[inline(never)]
pub(super) unsafe fn walk_generic<T: Degree>(a: WalkArgs<'_, '_, '_, T>, kernel: (Tiebreak, bool, bool)) -> u64 {
    use Tiebreak::*;
    // SAFETY: the caller's.
    unsafe {
        match kernel {
            (First, true, false) => walk_with::<T, false, false, true, false>(a),
            (First, false, false) => walk_with::<T, false, false, false, false>(a),
            (First, true, true) => walk_with::<T, false, false, true, true>(a),
            (First, false, true) => walk_with::<T, false, false, false, true>(a),
            (Distance, true, _) => walk_with::<T, true, false, true, false>(a),
            (Distance, false, _) => walk_with::<T, true, false, false, false>(a),
            (Random, true, _) => walk_with::<T, false, true, true, false>(a),
            (Random, false, _) => walk_with::<T, false, true, false, false>(a),
            (DistanceRandom, true, _) => walk_with::<T, true, true, true, false>(a),
            (DistanceRandom, false, _) => walk_with::<T, true, true, false, false>(a),
        }
    }
}

/// The arguments of one walk, passed as one value to the monomorphised kernels.
type WalkArgs<'d, 'm, 'a, T> =
    (&'d mut [T], &'m WalkMoves<'a>, usize, &'d mut Rng, &'d mut [i64], Option<&'d mut Vec<usize>>);

/// The generic kernel, for the tiebreak and move set the parameters say.
///
/// # Safety
/// As for [`walk_generic`].
#[inline(always)]
pub(super) unsafe fn walk_with<
    T: Degree,
    const PLUS: bool,
    const RANDOM: bool,
    const SYMMETRIC: bool,
    const BRANCH_FREE: bool,
>(
    (deg, moves, start, rng, xy, mut path): WalkArgs<'_, '_, '_, T>,
) -> u64 {
    let (mask, k) = (moves.phase_mask, moves.count());
    let dims = xy.len();
    let mut cur = start;
    // SAFETY: `cur` is a board cell: the start, or the open cell a step chose.
    unsafe { set_cell(deg, cur, T::BLOCKED) };
    let mut visited = 1u64;
    if let Some(p) = path.as_deref_mut() {
        p.push(cur);
    }
    loop {
        if !SYMMETRIC {
            for &o in moves.predecessors.map_or(&[][..], |p| phase_row(p, mask, k, cur)) {
                let n = cur.wrapping_add_signed(o);
                // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
                let d = unsafe { cell(deg, n) };
                if d != T::BLOCKED {
                    // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
                    unsafe { set_cell(deg, n, d.decrement()) };
                }
            }
        }
        let offsets = phase_row(moves.offsets, mask, k, cur);
        let chosen = if BRANCH_FREE {
            // SAFETY: `cur` is a board cell, `offsets` its row.
            unsafe { choose_first_branch_free::<T, SYMMETRIC>(deg, offsets, cur) }
        } else {
            // SAFETY: as above.
            unsafe { choose::<T, PLUS, RANDOM, SYMMETRIC>(deg, moves, offsets, cur, rng, xy) }
        };
        let Some(chosen) = chosen else {
            return visited;
        };
        cur = cur.wrapping_add_signed(offsets[chosen]);
        // SAFETY: `cur` is a board cell: the start, or the open cell a step chose.
        unsafe { set_cell(deg, cur, T::BLOCKED) };
        visited += 1;
        if PLUS {
            let v = &moves.vectors[chosen * dims..(chosen + 1) * dims];
            for (x, &c) in xy.iter_mut().zip(v) {
                *x += c as i64;
            }
        }
        if let Some(p) = path.as_deref_mut() {
            p.push(cur);
        }
    }
}

/// Picks the next move from `cur` by the rule's tiebreak, or `None` when no
/// unvisited cell is one move away. With SYMMETRIC it first does the visit's
/// bookkeeping in the same pass: `cur` was just visited, so each unvisited
/// neighbour loses one unvisited neighbour.
///
/// # Safety
/// `cur` is a board cell of the layout `deg` is a buffer of, `offsets` its
/// row of move offsets.
#[inline(always)]
unsafe fn choose<T: Degree, const PLUS: bool, const RANDOM: bool, const SYMMETRIC: bool>(
    deg: &mut [T],
    moves: &WalkMoves<'_>,
    offsets: &[isize],
    cur: usize,
    rng: &mut Rng,
    xy: &[i64],
) -> Option<usize> {
    let mut best = T::BLOCKED;
    // usize::MAX for "none yet": an Option here measurably slows the loop.
    let mut chosen = usize::MAX;
    // Lazily computed distance of `chosen`, and how many candidates tie
    // with it so far (for a uniform reservoir choice).
    let mut chosen_distance: Option<u128> = None;
    let mut ties = 0u64;
    for (k, &o) in offsets.iter().enumerate() {
        let n = cur.wrapping_add_signed(o);
        // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
        let mut d = unsafe { cell(deg, n) };
        if d == T::BLOCKED {
            continue;
        }
        if SYMMETRIC {
            d = d.decrement();
            // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            unsafe { set_cell(deg, n, d) };
        }
        if d < best {
            best = d;
            chosen = k;
            chosen_distance = None;
            ties = 1;
        } else if (PLUS || RANDOM) && d == best {
            if PLUS {
                let bd = *chosen_distance.get_or_insert_with(|| centre_distance(moves, xy, chosen));
                let cd = centre_distance(moves, xy, k);
                if cd > bd {
                    chosen = k;
                    chosen_distance = Some(cd);
                    ties = 1;
                    continue;
                }
                if cd < bd {
                    continue;
                }
            }
            if RANDOM {
                ties += 1;
                if rng.below(ties) == 0 {
                    chosen = k;
                }
            }
        }
    }
    (chosen != usize::MAX).then_some(chosen)
}

/// Rule W's choice without data-dependent branches: the least
/// (degree, move index) key. Blocked cells are written back unchanged so the
/// decrement needs no branch either.
///
/// # Safety
/// As for [`choose`].
#[inline(always)]
unsafe fn choose_first_branch_free<T: Degree, const SYMMETRIC: bool>(
    deg: &mut [T],
    offsets: &[isize],
    cur: usize,
) -> Option<usize> {
    let mut best_key = u32::MAX;
    for (k, &o) in offsets.iter().enumerate() {
        let n = cur.wrapping_add_signed(o);
        // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
        let mut d = unsafe { cell(deg, n) };
        if SYMMETRIC {
            if d != T::BLOCKED {
                d = d.decrement();
            }
            // SAFETY: `n` is a neighbour (or predecessor) of the board cell `cur`, inside the buffer (`BoardCell`, `MoveTable`, `Padded`).
            unsafe { set_cell(deg, n, d) };
        }
        best_key = best_key.min(d.to_u32() << 16 | k as u32);
    }
    (best_key < T::BLOCKED.to_u32() << 16).then_some((best_key & 0xffff) as usize)
}

/// Squared distance of candidate `k` from the centre, doubled on every axis
/// so the centre (n-1)/2 stays an integer: sum of (2x - (n-1))^2.
#[inline]
fn centre_distance(moves: &WalkMoves<'_>, xy: &[i64], k: usize) -> u128 {
    let dims = xy.len();
    let v = &moves.vectors[k * dims..(k + 1) * dims];
    let mut sum = 0u128;
    for a in 0..dims {
        let t = (2 * (xy[a] + v[a] as i64) - (moves.sides[a] as i64 - 1)).unsigned_abs() as u128;
        sum += t * t;
    }
    sum
}
