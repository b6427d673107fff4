//! A deliberately straightforward implementation of the deterministic
//! methods: coordinates as vectors, a bounds check per neighbour, degrees
//! counted on demand, f64 centre distance, the board re-initialised per
//! attempt. It is the yardstick `ksweep bench` measures the engine against,
//! and one more cross-check in the tests. Not for production use.

use crate::board::Board;
use crate::method::Method;
use crate::moves::Moves;
use crate::walk::Tiebreak;

/// Runs `method` from `start` (coordinates); returns (success, attempts), or
/// `None` for the random and non-Warnsdorff methods, which the baseline does
/// not implement.
pub fn run(board: &Board, moves: &Moves, start: &[u32], method: Method) -> Option<(bool, u32)> {
    if !method.is_warnsdorff() || method.is_random() {
        return None;
    }
    let k = moves.len();
    let sides: Vec<i64> = board.sides().iter().map(|&n| n as i64).collect();
    let mut attempts = 0;
    for attempt in 0..method.max_attempts(k) {
        let (rotation, tiebreak) = method.attempt(attempt);
        let order: Vec<Vec<i64>> =
            (0..k).map(|i| moves.get((i + rotation) % k).iter().map(|&c| c as i64).collect()).collect();
        attempts += 1;
        if walk(&sides, &order, start, tiebreak == Tiebreak::Distance) == board.cells() {
            return Some((true, attempts));
        }
    }
    Some((false, attempts))
}

fn walk(sides: &[i64], order: &[Vec<i64>], start: &[u32], plus: bool) -> u64 {
    let cells: i64 = sides.iter().product();
    let mut visited = vec![false; cells as usize];
    let index = |x: &[i64]| x.iter().zip(sides).fold(0i64, |acc, (&xi, &n)| acc * n + xi) as usize;
    let on_board = |x: &[i64]| x.iter().zip(sides).all(|(&xi, &n)| xi >= 0 && xi < n);
    let step = |x: &[i64], mv: &[i64]| -> Vec<i64> { x.iter().zip(mv).map(|(a, b)| a + b).collect() };

    let mut cur: Vec<i64> = start.iter().map(|&c| c as i64).collect();
    visited[index(&cur)] = true;
    let mut count = 1u64;
    loop {
        let mut best: Option<(usize, f64, Vec<i64>)> = None;
        for mv in order {
            let next = step(&cur, mv);
            if !on_board(&next) || visited[index(&next)] {
                continue;
            }
            let degree = order.iter().map(|m| step(&next, m)).filter(|n| on_board(n) && !visited[index(n)]).count();
            let distance: f64 =
                next.iter().zip(sides).map(|(&x, &n)| (x as f64 - (n as f64 - 1.0) / 2.0).powi(2)).sum();
            let better = match &best {
                None => true,
                Some((d, dist, _)) => degree < *d || (plus && degree == *d && distance > *dist),
            };
            if better {
                best = Some((degree, distance, next));
            }
        }
        match best {
            Some((_, _, next)) => {
                visited[index(&next)] = true;
                count += 1;
                cur = next;
            }
            None => return count,
        }
    }
}
