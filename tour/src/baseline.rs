//! The report authors' algorithm, written the way their published programs
//! are: an `int` degree array, a `bool` visited array and an `int` step array
//! over the board, a bounds check per neighbour, the centre distance as an
//! `f64`, and every array re-initialised before each attempt. It is the
//! yardstick `ksweep bench` measures the engine against (so the ratio it
//! prints is the one a reader of the report cares about), and one more
//! cross-check in the tests. Not for production use.
//!
//! [`run_timed`] times a start as their programs do: from the first walk to
//! the last, the re-initialisations between attempts included, but not the
//! arrays' first set-up, which each program does before it starts its clock.

use std::time::{Duration, Instant};

use crate::board::Board;
use crate::method::Method;
use crate::moves::Moves;
use crate::walk::Tiebreak;

/// Runs `method` from `start` (coordinates); returns (success, attempts), or
/// `None` for the random and non-Warnsdorff methods and for boards of more
/// than 8 dimensions, which the baseline does not implement.
pub fn run(board: &Board, moves: &Moves, start: &[u32], method: Method) -> Option<(bool, u32)> {
    run_timed(board, moves, start, method).map(|t| (t.success, t.attempts))
}

/// What one start found, and the time the authors' programs would report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timed {
    /// A tour was found.
    pub success: bool,
    /// Walks made, the last included.
    pub attempts: u32,
    /// From the first walk's start to the last walk's end (see the module).
    pub walking: Duration,
}

/// [`run`], timed as the authors' programs time a start.
pub fn run_timed(board: &Board, moves: &Moves, start: &[u32], method: Method) -> Option<Timed> {
    if !method.is_warnsdorff() || method.is_random() {
        return None;
    }
    // Fixed-size coordinates, as the authors' programs have one per D.
    match board.dims() {
        1 => run_in::<1>(board, moves, start, method),
        2 => run_in::<2>(board, moves, start, method),
        3 => run_in::<3>(board, moves, start, method),
        4 => run_in::<4>(board, moves, start, method),
        5 => run_in::<5>(board, moves, start, method),
        6 => run_in::<6>(board, moves, start, method),
        7 => run_in::<7>(board, moves, start, method),
        8 => run_in::<8>(board, moves, start, method),
        _ => None,
    }
}

fn run_in<const D: usize>(board: &Board, moves: &Moves, start: &[u32], method: Method) -> Option<Timed> {
    let k = moves.len();
    let order_of = |rotation: usize| -> Vec<[i32; D]> {
        (0..k).map(|i| std::array::from_fn(|a| moves.get((i + rotation) % k)[a])).collect()
    };
    let mut grid = Grid::<D>::new(board);
    let start: [i32; D] = std::array::from_fn(|a| start[a] as i32);
    // The first attempt's arrays are set up before the clock starts.
    let (rotation, _) = method.attempt(0);
    grid.init_degree(&order_of(rotation));
    let began = Instant::now();
    for attempt in 0..method.max_attempts(k) {
        let (rotation, tiebreak) = method.attempt(attempt);
        let order = order_of(rotation);
        if attempt > 0 {
            grid.init_degree(&order);
        }
        if grid.tour(&order, &start, tiebreak == Tiebreak::Distance) {
            return Some(Timed { success: true, attempts: attempt as u32 + 1, walking: began.elapsed() });
        }
    }
    Some(Timed { success: false, attempts: method.max_attempts(k) as u32, walking: began.elapsed() })
}

/// The authors' global arrays, sized to the board.
struct Grid<const D: usize> {
    sides: [i32; D],
    cells: usize,
    degree: Vec<i32>,
    visited: Vec<bool>,
    step: Vec<i32>,
}

impl<const D: usize> Grid<D> {
    fn new(board: &Board) -> Grid<D> {
        let cells = board.cells() as usize;
        let sides = std::array::from_fn(|a| board.sides()[a] as i32);
        Grid { sides, cells, degree: vec![0; cells], visited: vec![false; cells], step: vec![0; cells] }
    }

    fn valid(&self, x: &[i32; D]) -> bool {
        (0..D).all(|a| 0 <= x[a] && x[a] < self.sides[a])
    }

    fn index(&self, x: &[i32; D]) -> usize {
        (0..D).fold(0usize, |acc, a| acc * self.sides[a] as usize + x[a] as usize)
    }

    fn neighbour(x: &[i32; D], mv: &[i32; D]) -> [i32; D] {
        std::array::from_fn(|a| x[a] + mv[a])
    }

    fn init_degree(&mut self, order: &[[i32; D]]) {
        for cell in 0..self.cells {
            let mut x = [0i32; D];
            let mut rest = cell;
            for a in (0..D).rev() {
                x[a] = (rest % self.sides[a] as usize) as i32;
                rest /= self.sides[a] as usize;
            }
            self.step[cell] = 0;
            self.visited[cell] = false;
            self.degree[cell] = order.iter().filter(|mv| self.valid(&Grid::neighbour(&x, mv))).count() as i32;
        }
    }

    fn distance_from_center(&self, x: &[i32; D]) -> f64 {
        (0..D).map(|a| (x[a] as f64 - (self.sides[a] as f64 - 1.0) / 2.0).powi(2)).sum()
    }

    fn tour(&mut self, order: &[[i32; D]], start: &[i32; D], plus: bool) -> bool {
        let mut x = *start;
        let mut step = 1;
        loop {
            let at = self.index(&x);
            self.step[at] = step;
            self.visited[at] = true;
            // The cells that lose a move are those that can move here; the
            // authors' programs step forward, the same for their symmetric
            // move sets.
            for mv in order {
                let n = Grid::neighbour(&x, &mv.map(|c| -c));
                if self.valid(&n) {
                    let j = self.index(&n);
                    if !self.visited[j] {
                        self.degree[j] -= 1;
                    }
                }
            }
            if step as usize == self.cells {
                return true;
            }
            let (mut best_deg, mut best_dist, mut best) = (i32::MAX, -1.0f64, None);
            for mv in order {
                let n = Grid::neighbour(&x, mv);
                if !self.valid(&n) {
                    continue;
                }
                let j = self.index(&n);
                if self.visited[j] {
                    continue;
                }
                let deg = self.degree[j];
                let dist = if plus { self.distance_from_center(&n) } else { 0.0 };
                if deg < best_deg || (plus && deg == best_deg && dist > best_dist) {
                    best_deg = deg;
                    best_dist = dist;
                    best = Some(n);
                }
            }
            match best {
                Some(n) => x = n,
                None => return false,
            }
            step += 1;
        }
    }
}
