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

/// What a walk needs to know besides the degree buffer, in the current
/// (possibly rotated) move order.
pub(crate) struct WalkMoves<'a> {
    /// Linear offset of each move in the padded layout.
    pub offsets: &'a [isize],
    /// Move vectors, K x D, same order (W+ distance only).
    pub vectors: &'a [i32],
    /// Offsets whose cells lose a neighbour when a cell is visited, when the
    /// set is not closed under negation; `None` for symmetric sets, whose
    /// predecessors are their successors.
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
    match (tiebreak, moves.predecessors.is_none()) {
        (First, true) => walk_with::<T, false, false, true>(deg, moves, start, rng, xy, path),
        (First, false) => walk_with::<T, false, false, false>(deg, moves, start, rng, xy, path),
        (Distance, true) => walk_with::<T, true, false, true>(deg, moves, start, rng, xy, path),
        (Distance, false) => walk_with::<T, true, false, false>(deg, moves, start, rng, xy, path),
        (Random, true) => walk_with::<T, false, true, true>(deg, moves, start, rng, xy, path),
        (Random, false) => walk_with::<T, false, true, false>(deg, moves, start, rng, xy, path),
        (DistanceRandom, true) => {
            walk_with::<T, true, true, true>(deg, moves, start, rng, xy, path)
        }
        (DistanceRandom, false) => {
            walk_with::<T, true, true, false>(deg, moves, start, rng, xy, path)
        }
    }
}

/// Squared distance of candidate `k` from the centre, doubled on every axis
/// so the centre (n-1)/2 stays an integer: sum of (2x - (n-1))^2.
#[inline]
fn centre_distance(moves: &WalkMoves<'_>, xy: &[i64], k: usize) -> u128 {
    let dims = xy.len();
    let v = &moves.vectors[k * dims..(k + 1) * dims];
    let mut sum = 0u128;
    for a in 0..dims {
        let t = 2 * (xy[a] + v[a] as i64) - (moves.sides[a] as i64 - 1);
        sum += (t.unsigned_abs() as u128) * (t.unsigned_abs() as u128);
    }
    sum
}

#[inline(always)]
fn walk_with<T: Degree, const PLUS: bool, const RANDOM: bool, const SYMMETRIC: bool>(
    deg: &mut [T],
    moves: &WalkMoves<'_>,
    start: usize,
    rng: &mut Rng,
    xy: &mut [i64],
    mut path: Option<&mut Vec<usize>>,
) -> u64 {
    let offsets = moves.offsets;
    let dims = xy.len();
    let mut cur = start;
    deg[cur] = T::BLOCKED;
    let mut visited = 1u64;
    if let Some(p) = path.as_deref_mut() {
        p.push(cur);
    }
    loop {
        if !SYMMETRIC {
            for &o in moves.predecessors.unwrap_or(&[]) {
                let n = cur.wrapping_add_signed(-o);
                let d = deg[n];
                if d != T::BLOCKED {
                    deg[n] = d.decrement();
                }
            }
        }
        let mut best = T::BLOCKED;
        let mut chosen = usize::MAX;
        // Lazily computed distance of `chosen`, and how many candidates tie
        // with it so far (for uniform reservoir choice).
        let mut chosen_distance: Option<u128> = None;
        let mut ties = 0u64;
        for (k, &o) in offsets.iter().enumerate() {
            let n = cur.wrapping_add_signed(o);
            let mut d = deg[n];
            if d == T::BLOCKED {
                continue;
            }
            if SYMMETRIC {
                // `cur` was just visited: its neighbours lose one unvisited neighbour.
                d = d.decrement();
                deg[n] = d;
            }
            if d < best {
                best = d;
                chosen = k;
                chosen_distance = None;
                ties = 1;
            } else if (PLUS || RANDOM) && d == best {
                if PLUS {
                    let bd =
                        *chosen_distance.get_or_insert_with(|| centre_distance(moves, xy, chosen));
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
        if chosen == usize::MAX {
            return visited;
        }
        cur = cur.wrapping_add_signed(offsets[chosen]);
        deg[cur] = T::BLOCKED;
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
