//! The walk kernel: one Warnsdorff walk on a padded degree buffer. This is
//! the inner loop every figure of a sweep is made of, so it is monomorphised
//! per tiebreak and move-set symmetry and touches each neighbour once.

use crate::layout::Degree;
use crate::seed::Rng;

/// How a walk breaks ties among candidates of least degree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tiebreak {
    /// W: first in the current move order.
    First,
    /// W+ (Roth): greatest squared distance from the centre, then first.
    Distance,
    /// WR (Squirrel and Cull): uniformly at random.
    Random,
    /// WR+: greatest distance, then uniformly at random.
    DistanceRandom,
}

/// Above this many moves rule W picks its move branch-free. Measured with
/// `ksweep bench`: branch-free is ~1.6x faster with 80 moves (5D), where
/// off-board and visited neighbours are unpredictable, but slower with 8.
const BRANCH_FREE_MIN_MOVES: usize = 32;

/// What a walk needs to know besides the degree buffer, in the current
/// (possibly rotated) move order.
pub(crate) struct WalkMoves<'a> {
    /// Linear offset of each move in the padded layout.
    pub offsets: &'a [isize],
    /// Move vectors, K x D, same order (W+ distance only).
    pub vectors: &'a [i32],
    /// Offsets from a cell to the cells that can move onto it (the negated
    /// moves), which lose a neighbour when it is visited; `None` for sets
    /// closed under negation, whose predecessors are their successors.
    pub predecessors: Option<&'a [isize]>,
    /// Board sides (W+ distance only).
    pub sides: &'a [usize],
}

/// Runs one walk from padded cell `start`; returns cells visited. `xy` holds
/// the start's coordinates on entry (used by the distance tiebreaks).
pub(crate) fn walk<T: Degree>(
    deg: &mut [T],
    moves: &WalkMoves<'_>,
    start: usize,
    tiebreak: Tiebreak,
    rng: &mut Rng,
    xy: &mut [i64],
    path: Option<&mut Vec<usize>>,
) -> u64 {
    use Tiebreak::*;
    let symmetric = moves.predecessors.is_none();
    let many = moves.offsets.len() > BRANCH_FREE_MIN_MOVES;
    let a = (deg, moves, start, rng, xy, path);
    match (tiebreak, symmetric, many) {
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

/// The arguments of one walk, passed as one value to the monomorphised kernels.
type WalkArgs<'d, 'm, 'a, T> =
    (&'d mut [T], &'m WalkMoves<'a>, usize, &'d mut Rng, &'d mut [i64], Option<&'d mut Vec<usize>>);

// The kernel indexes without bounds checks. Sound because of the padded
// layout's invariant: the walk only ever stands on board cells, every board
// cell is at least `reach` cells from the array's edge on every axis, and no
// offset (nor its negation) reaches further than `reach` on any axis; so a
// neighbour or predecessor index is always inside the buffer. Debug builds
// assert it.

#[allow(unsafe_code)]
#[inline(always)]
fn cell<T: Degree>(deg: &[T], n: usize) -> T {
    debug_assert!(n < deg.len());
    // SAFETY: see the layout invariant above.
    unsafe { *deg.get_unchecked(n) }
}

#[allow(unsafe_code)]
#[inline(always)]
fn set_cell<T: Degree>(deg: &mut [T], n: usize, value: T) {
    debug_assert!(n < deg.len());
    // SAFETY: see the layout invariant above.
    unsafe { *deg.get_unchecked_mut(n) = value }
}

#[inline(always)]
fn walk_with<T: Degree, const PLUS: bool, const RANDOM: bool, const SYMMETRIC: bool, const BRANCH_FREE: bool>(
    (deg, moves, start, rng, xy, mut path): WalkArgs<'_, '_, '_, T>,
) -> u64 {
    let offsets = moves.offsets;
    let dims = xy.len();
    let mut cur = start;
    set_cell(deg, cur, T::BLOCKED);
    let mut visited = 1u64;
    if let Some(p) = path.as_deref_mut() {
        p.push(cur);
    }
    loop {
        if !SYMMETRIC {
            for &o in moves.predecessors.unwrap_or(&[]) {
                let n = cur.wrapping_add_signed(o);
                let d = cell(deg, n);
                if d != T::BLOCKED {
                    set_cell(deg, n, d.decrement());
                }
            }
        }
        let chosen = if BRANCH_FREE {
            choose_first_branch_free::<T, SYMMETRIC>(deg, offsets, cur)
        } else {
            choose::<T, PLUS, RANDOM, SYMMETRIC>(deg, moves, cur, rng, xy)
        };
        let Some(chosen) = chosen else {
            return visited;
        };
        cur = cur.wrapping_add_signed(offsets[chosen]);
        set_cell(deg, cur, T::BLOCKED);
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
#[inline(always)]
fn choose<T: Degree, const PLUS: bool, const RANDOM: bool, const SYMMETRIC: bool>(
    deg: &mut [T],
    moves: &WalkMoves<'_>,
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
    for (k, &o) in moves.offsets.iter().enumerate() {
        let n = cur.wrapping_add_signed(o);
        let mut d = cell(deg, n);
        if d == T::BLOCKED {
            continue;
        }
        if SYMMETRIC {
            d = d.decrement();
            set_cell(deg, n, d);
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
#[inline(always)]
fn choose_first_branch_free<T: Degree, const SYMMETRIC: bool>(
    deg: &mut [T],
    offsets: &[isize],
    cur: usize,
) -> Option<usize> {
    let mut best_key = u32::MAX;
    for (k, &o) in offsets.iter().enumerate() {
        let n = cur.wrapping_add_signed(o);
        let mut d = cell(deg, n);
        if SYMMETRIC {
            if d != T::BLOCKED {
                d = d.decrement();
            }
            set_cell(deg, n, d);
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
