//! `nn`: the Takefuji-Lee neural network for closed knight's tours with the
//! Aoba-Takefuji remedies for local minima (seed 004).
//!
//! One hysteresis McCulloch-Pitts neuron per undirected edge {i, j} of the
//! move graph: V_ij = 1 means the tour uses the move between cells i and j.
//! The network settles when every cell has exactly two fired neurons, i.e.
//! the fired edges form a 2-factor (disjoint cycles covering every cell). A
//! 2-factor with one cycle is a closed tour; one with several subtours (the
//! seed's "more than two subtours": anything but a single cycle) is the local
//! minimum Aoba and Takefuji attack with their remedies.
//!
//! Dynamics (seed 004, section 2.1, equation (1), first-order Euler):
//!
//! ```text
//! U_ij <- U_ij + DT * ( -(deg_i - 2) - (deg_j - 2) )
//! V_ij <- 1 if U_ij > UTP, 0 if U_ij < LTP, else unchanged
//! ```
//!
//! where deg_i = sum_k V_ik d_ik counts the fired neurons at cell i (V_ij
//! itself included, as in equation (1)). One iteration updates every neuron
//! once, sequentially, in a seeded random order fixed for the run, each step
//! reading the outputs as they stand. The seed only says "first order
//! Euler's method at each iterative step"; we measured the synchronous
//! reading (all dU from the outputs at t) and it oscillates: on 8x8 none of
//! 100 seeds reached a 2-factor within 1,000 iterations (6x6: 9 within 100),
//! against 93 within 100 sequentially (6x6: 96). Parberry's re-implementation
//! of the network also updates in a random order fixed per run.
//!
//! Constants the seed leaves open, and where ours come from:
//! - `UTP` = 3, `LTP` = 0: the trip points of Takefuji and Lee's network
//!   ("Neural network computing for knight's tour problems", Neurocomputing
//!   4(5), 1992), as reproduced by Parberry's re-implementation of it.
//! - `DT` = 1: the Euler step of the same implementations; equation (1)'s
//!   right-hand side is an integer, so U stays integral until a remedy acts.
//! - Initial state: U_ij = 0 and V_ij = 0 or 1 with probability 1/2 each
//!   (Takefuji and Lee's random start), drawn in edge order from
//!   [`Rng::new`]`(seed)`, followed on the same stream by the update order.
//! - `F`, the remedies' "arbitrary constant": see the constant's doc in the source (private).
//!
//! Move sets that are not closed under negation are refused (GaveUp after 0
//! iterations): a neuron stands for an undirected edge, and a cycle that uses
//! a one-way move could not be written as a path in either direction.

use crate::board::Board;
use crate::cancel::{Cancel, Poll};
use crate::moves::Moves;
use crate::outcome::Outcome;
use crate::seed::Rng;
use crate::verify::verify_closed;

/// Upper trip point: a neuron fires once U exceeds it (Takefuji and Lee 1992).
const UTP: f64 = 3.0;
/// Lower trip point: a fired neuron stops once U drops below it (Takefuji and Lee 1992).
const LTP: f64 = 0.0;
/// Euler time step of equations (1)-(3).
const DT: f64 = 1.0;
/// The remedies' gain F in equations (2) and (3), "an arbitrary constant" in
/// seed 004. One remedy step moves an interior edge (both ends of degree 8)
/// by F ln 37 = 3.6 F, about the UTP-LTP gap at F = 1. The remedy is applied
/// again at every iteration the network stays on the local minimum, so F
/// mostly sets how many iterations a cut or connection takes: convergence on
/// 6x6..22x22 barely moved for F in 0.5, 1, 2, 4, and we keep the plain 1.
const F: f64 = 1.0;

/// Which remedy for local minima a run applies (seed 004).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Remedy {
    /// The plain Takefuji-Lee network.
    None,
    /// Cut subtours.
    Cut,
    /// Connect subtours.
    Connect,
    /// Both.
    Both,
}

/// The result of one network run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeuralResult {
    /// Tour (a single closed tour covering every cell) or GaveUp.
    pub outcome: Outcome,
    /// The closed tour as an open path from `start` (cell indices), for Tour.
    pub path: Option<Vec<u64>>,
    /// Network updates made.
    pub iterations: u32,
}

/// Runs the network from a seeded random state for at most `max_iterations`
/// iterations, each one update of every neuron (seed 004 caps at 100).
///
/// Without a remedy the run gives up as soon as the network settles on
/// several subtours. With one, every update made while the network sits on
/// such a local minimum follows the remedy's equation instead of equation
/// (1) (which is zero there anyway), until equation (1) has something to do
/// again; the run goes on until a tour or the iteration cap. A start off the
/// board, a one-way move set or a cell with fewer than two moves (no closed
/// tour can pass through it) give GaveUp after 0 iterations.
pub fn solve(board: &Board, moves: &Moves, start: u64, remedy: Remedy, seed: u64, max_iterations: u32) -> NeuralResult {
    solve_within(board, moves, start, remedy, seed, max_iterations, Cancel::NEVER)
}

/// [`solve`], giving up early once `cancel` is raised (the caller then
/// reports no result), polled from the neuron updates made.
pub(crate) fn solve_within(
    board: &Board,
    moves: &Moves,
    start: u64,
    remedy: Remedy,
    seed: u64,
    max_iterations: u32,
    cancel: Cancel,
) -> NeuralResult {
    let gave_up = |iterations| NeuralResult { outcome: Outcome::GaveUp, path: None, iterations };
    if start >= board.cells() || !moves.closed_under_negation() {
        return gave_up(0);
    }
    let Some(graph) = MoveGraph::new(board, moves) else {
        return gave_up(0);
    };
    let mut net = Network::new(&graph, seed);
    let mut iterations = 0;
    let (mut poll, mut updated) = (Poll::new(cancel), 0);
    loop {
        let equation = if net.is_two_factor() {
            let cycle = graph.cycle_through(start as usize, &net.fired);
            if cycle.len() == graph.cells() {
                return tour_result(board, moves, cycle, iterations);
            }
            match remedy {
                Remedy::None => return gave_up(iterations),
                Remedy::Cut => Equation::Remedy { cut: true, connect: false },
                Remedy::Connect => Equation::Remedy { cut: false, connect: true },
                Remedy::Both => Equation::Remedy { cut: true, connect: true },
            }
        } else {
            Equation::TakefujiLee
        };
        if iterations >= max_iterations || !net.step(&graph, equation, &mut poll, &mut updated) {
            return gave_up(iterations);
        }
        iterations += 1;
    }
}

/// Checks a cycle before calling it a tour: a path that fails
/// `verify_closed` would be a bug here, never a result.
fn tour_result(board: &Board, moves: &Moves, cycle: Vec<usize>, iterations: u32) -> NeuralResult {
    let path: Vec<u64> = cycle.into_iter().map(|c| c as u64).collect();
    match verify_closed(board, moves, &path) {
        Ok(()) => NeuralResult { outcome: Outcome::Tour, path: Some(path), iterations },
        Err(e) => {
            debug_assert!(false, "nn built a cycle that is not a closed tour: {e}");
            NeuralResult { outcome: Outcome::GaveUp, path: None, iterations }
        }
    }
}

/// The neurons: the move graph's undirected edges {i, j}, i < j, with each
/// cell's incident edges and each edge's remedy weight.
struct MoveGraph {
    /// Edge endpoints, in the order the random initial state is drawn.
    edges: Vec<[usize; 2]>,
    /// Incident edges of cell c: `incident[offsets[c]..offsets[c + 1]]`.
    offsets: Vec<usize>,
    incident: Vec<usize>,
    /// ln((sum_k d_ik - 2)(sum_k d_jk - 2) + 1), the bracket of equations (2)
    /// and (3). Seed 004 writes it with the legality d, not the outputs V: at
    /// a local minimum every sum_k V_ik - 2 is zero, so a V-based term would
    /// never act. With d it is fixed per edge: 0 when an end has only two
    /// moves (such edges are in every tour), largest between open cells.
    weight: Vec<f64>,
}

impl MoveGraph {
    /// None when the board is too large to index or some cell has fewer
    /// than two moves (then no Hamiltonian cycle exists and the remedy
    /// weight's logarithm would be undefined).
    fn new(board: &Board, moves: &Moves) -> Option<MoveGraph> {
        let cells = usize::try_from(board.cells()).ok()?;
        let sides = board.sides();
        let mut strides = vec![1usize; sides.len()];
        for axis in (0..sides.len().saturating_sub(1)).rev() {
            strides[axis] = strides[axis + 1].checked_mul(sides[axis + 1] as usize)?;
        }
        let mut edges = Vec::new();
        let mut degree = vec![0usize; cells];
        for (cell, deg) in degree.iter_mut().enumerate() {
            let coords = board.coords(cell as u64);
            for mv in moves.iter() {
                if let Some(target) = step(&coords, mv, sides, &strides) {
                    *deg += 1;
                    if cell < target {
                        edges.push([cell, target]);
                    }
                }
            }
        }
        if degree.iter().any(|&d| d < 2) {
            return None;
        }
        let mut offsets = vec![0usize; cells + 1];
        for (c, &d) in degree.iter().enumerate() {
            offsets[c + 1] = offsets[c] + d;
        }
        let mut fill = offsets.clone();
        let mut incident = vec![0usize; offsets[cells]];
        for (e, &[i, j]) in edges.iter().enumerate() {
            for c in [i, j] {
                incident[fill[c]] = e;
                fill[c] += 1;
            }
        }
        let weight = edges.iter().map(|&[i, j]| (((degree[i] - 2) * (degree[j] - 2) + 1) as f64).ln()).collect();
        Some(MoveGraph { edges, offsets, incident, weight })
    }

    fn cells(&self) -> usize {
        self.offsets.len() - 1
    }

    fn incident(&self, cell: usize) -> &[usize] {
        &self.incident[self.offsets[cell]..self.offsets[cell + 1]]
    }

    fn other_end(&self, edge: usize, cell: usize) -> usize {
        let [i, j] = self.edges[edge];
        if i == cell {
            j
        } else {
            i
        }
    }

    /// The cycle of a 2-factor through `start`, written from `start` towards
    /// its smaller-numbered neighbour (a fixed choice of direction).
    fn cycle_through(&self, start: usize, fired: &[bool]) -> Vec<usize> {
        let fired_neighbours = |cell: usize| {
            let mut it = self.incident(cell).iter().filter(|&&e| fired[e]).map(|&e| self.other_end(e, cell));
            let (a, b) = (it.next(), it.next());
            debug_assert!(a.is_some() && b.is_some() && it.next().is_none(), "not a 2-factor at {cell}");
            (a.unwrap_or(cell), b.unwrap_or(cell))
        };
        let (a, b) = fired_neighbours(start);
        let mut path = vec![start];
        let (mut prev, mut cur) = (start, a.min(b));
        // A 2-factor's component is a simple cycle, so this returns to start
        // within `cells` steps; the bound only guards against a broken state.
        while cur != start && path.len() < self.cells() {
            path.push(cur);
            let (a, b) = fired_neighbours(cur);
            let next = if a == prev { b } else { a };
            (prev, cur) = (cur, next);
        }
        if cur != start {
            path.clear();
        }
        path
    }
}

/// The neighbour of `coords` by move `mv`, if it is on the board.
fn step(coords: &[u32], mv: &[i32], sides: &[u32], strides: &[usize]) -> Option<usize> {
    let mut index = 0usize;
    for (((&x, &d), &side), &stride) in coords.iter().zip(mv).zip(sides).zip(strides) {
        let t = x as i64 + d as i64;
        if t < 0 || t >= side as i64 {
            return None;
        }
        index += t as usize * stride;
    }
    Some(index)
}

/// Which motion equation an update follows.
#[derive(Debug, Clone, Copy)]
enum Equation {
    /// Equation (1), Takefuji-Lee.
    TakefujiLee,
    /// At a local minimum (Aoba-Takefuji): equation (2) on fired neurons
    /// if `cut`, equation (3) on unfired ones if `connect`.
    Remedy { cut: bool, connect: bool },
}

/// The neurons' inputs U and outputs V, each cell's fired-edge count, and
/// the order the neurons are updated in.
struct Network {
    input: Vec<f64>,
    fired: Vec<bool>,
    degree: Vec<u32>,
    order: Vec<usize>,
}

impl Network {
    /// U = 0 everywhere, V drawn fair and independent per neuron in edge
    /// order, then the update order as a Fisher-Yates shuffle, all from
    /// one stream seeded with `seed`.
    fn new(graph: &MoveGraph, seed: u64) -> Network {
        let mut rng = Rng::new(seed);
        let edges = graph.edges.len();
        let fired: Vec<bool> = (0..edges).map(|_| rng.below(2) == 1).collect();
        let mut order: Vec<usize> = (0..edges).collect();
        for k in (1..edges).rev() {
            // k + 1 <= edges fits u64; the draw is below k + 1.
            order.swap(k, rng.below(k as u64 + 1) as usize);
        }
        let mut degree = vec![0u32; graph.cells()];
        for (&[i, j], _) in graph.edges.iter().zip(&fired).filter(|(_, &v)| v) {
            degree[i] += 1;
            degree[j] += 1;
        }
        Network { input: vec![0.0; edges], fired, degree, order }
    }

    fn is_two_factor(&self) -> bool {
        self.degree.iter().all(|&d| d == 2)
    }

    /// One iteration: every neuron updated once, in `order`, each Euler step
    /// reading the outputs as they stand (so a cell's count already reflects
    /// the neurons updated before it in this sweep). An iteration on a
    /// board of a million cells takes 0.6 s (4 M neurons), so `poll` is
    /// asked every few thousand neurons, `updated` counting them: false
    /// when it stopped the iteration part way.
    fn step(&mut self, graph: &MoveGraph, equation: Equation, poll: &mut Poll, updated: &mut u64) -> bool {
        for (k, &e) in self.order.iter().enumerate() {
            if k % POLL_NEURONS == 0 && poll.stop(*updated + k as u64) {
                return false;
            }
            let [i, j] = graph.edges[e];
            let was_fired = self.fired[e];
            let du = match equation {
                // Equation (1).
                Equation::TakefujiLee => 4.0 - f64::from(self.degree[i]) - f64::from(self.degree[j]),
                // Equation (2): cut subtours.
                Equation::Remedy { cut, .. } if was_fired && cut => -F * graph.weight[e],
                // Equation (3): connect subtours.
                Equation::Remedy { connect, .. } if !was_fired && connect => F * graph.weight[e],
                Equation::Remedy { .. } => 0.0,
            };
            let u = self.input[e] + DT * du;
            self.input[e] = u;
            let now_fired = if u > UTP {
                true
            } else if u < LTP {
                false
            } else {
                was_fired
            };
            if now_fired != was_fired {
                self.fired[e] = now_fired;
                if now_fired {
                    self.degree[i] += 1;
                    self.degree[j] += 1;
                } else {
                    self.degree[i] -= 1;
                    self.degree[j] -= 1;
                }
            }
        }
        *updated += self.order.len() as u64;
        true
    }
}

/// Neurons updated between two looks at the poll's counter.
const POLL_NEURONS: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    fn knight(n: u32) -> (Board, Moves) {
        (Board::regular(2, n).unwrap(), Moves::from_rule(&[2, 1], 2).unwrap())
    }

    #[test]
    fn graph_has_one_neuron_per_undirected_move() {
        let (b, m) = knight(8);
        let g = MoveGraph::new(&b, &m).unwrap();
        // 168 undirected knight moves on 8x8.
        assert_eq!(g.edges.len(), 168);
        assert!(g.edges.iter().all(|&[i, j]| i < j));
        assert_eq!(g.incident(0).len(), 2);
        assert_eq!(g.incident(27).len(), 8);
    }

    #[test]
    fn remedy_weight_spares_corner_edges() {
        let (b, m) = knight(8);
        let g = MoveGraph::new(&b, &m).unwrap();
        for &e in g.incident(0) {
            assert_eq!(g.weight[e], 0.0, "a corner's two moves are in every tour");
        }
        let centre = g.incident(27).iter().find(|&&e| g.other_end(e, 27) == 44).copied().unwrap();
        assert!((g.weight[centre] - 37f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn cells_with_fewer_than_two_moves_refuse_the_graph() {
        // The 3x3 centre has no knight move.
        let (b, m) = knight(3);
        assert!(MoveGraph::new(&b, &m).is_none());
    }
}
