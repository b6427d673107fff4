//! Warnsdorff extension repaired by Posa rotations.
//!
//! The path grows from the start by Warnsdorff's rule (least unvisited
//! degree, ties at random). When its end `p_k` has no unvisited neighbour,
//! a rotation picks a neighbour `p_i` of the end (i < k - 1) and reverses
//! the tail: `p_0 .. p_i, p_k, p_(k-1) .. p_(i+1)`. The path keeps its
//! cells and its start, and ends at `p_(i+1)` instead. Rotations are
//! steered: a breadth-first search from the cells the end must reach (the
//! unvisited cells, or for a closed tour the start's neighbours) gives
//! every cell its distance to them, and the rotation whose new end is
//! nearest wins (ties and one rotation in eight at random, the last few
//! ends taboo), so the end travels towards what is left instead of
//! diffusing. An attempt that cannot steer within its limit starts again
//! from scratch with the random stream where it is.
//!
//! Rotations reverse path segments along moves, which needs the move graph
//! to be undirected; on a directed one only the extension runs, restarted.

use super::graph::{next_stamp, Graph};
use crate::cancel::{Cancel, Poll};
use crate::seed::Rng;

const NONE: u32 = u32::MAX;
const FAR: u32 = u32::MAX;
/// Work an attempt may spend per board cell before it starts over.
const ATTEMPT_WORK_PER_CELL: u64 = 500;
/// Recent ends a rotation avoids returning to.
const TABOO: usize = 8;

/// What the end is steered towards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Goal {
    /// An end with an unvisited neighbour (distance 1 from the unvisited).
    Unvisited,
    /// An end next to the start, closing the cycle (distance 0 from the
    /// start's neighbours).
    Close,
}

/// One thread's rotation-extension state over a graph.
pub(super) struct Walker<'g> {
    g: &'g Graph,
    /// Unvisited neighbours of every cell (out-neighbours when directed;
    /// the graph's BORDER on border slots).
    free: Vec<u16>,
    /// Position of every visited cell on the path, NONE elsewhere.
    pos: Vec<u32>,
    /// The path, as padded cells.
    pub(super) path: Vec<u32>,
    /// Cells that may be unvisited (a superset, compacted when read).
    unvisited: Vec<u32>,
    /// Distance to the goal, valid where `seen` holds the current stamp.
    dist: Vec<u32>,
    seen: Vec<u32>,
    stamp: u32,
    queue: Vec<u32>,
    taboo: [u32; TABOO],
    pub(super) rng: Rng,
    /// Work done: extension steps, cells reversed and cells searched.
    pub(super) work: u64,
    /// Rotations made.
    pub(super) rotations: u64,
    /// Truncations made.
    pub(super) truncations: u64,
    /// Polled from `work`: once cancelled, every attempt gives up.
    poll: Poll<'g>,
}

impl<'g> Walker<'g> {
    pub(super) fn new(g: &'g Graph, seed: u64, cancel: Cancel<'g>) -> Walker<'g> {
        let len = g.out_degree.len();
        Walker {
            g,
            free: Vec::new(),
            pos: vec![NONE; len],
            path: Vec::with_capacity(g.cells),
            unvisited: Vec::with_capacity(g.cells),
            dist: vec![0; len],
            seen: vec![0; len],
            stamp: 0,
            queue: Vec::new(),
            taboo: [NONE; TABOO],
            rng: Rng::new(seed),
            work: 0,
            rotations: 0,
            truncations: 0,
            poll: Poll::new(cancel),
        }
    }

    /// True once the task is cancelled (polled from `work`).
    pub(super) fn stopped(&mut self) -> bool {
        self.poll.stop(self.work)
    }

    /// True when the work has passed `limit`, or the task is cancelled.
    fn spent(&mut self, limit: u64) -> bool {
        self.work > limit || self.stopped()
    }

    /// One attempt: a path through every cell from `start` (a cycle when
    /// `closed`), true when it is in `self.path`. Gives up once `work`
    /// passes `budget`.
    pub(super) fn attempt(&mut self, start: usize, closed: bool, budget: u64) -> bool {
        self.reset();
        self.visit(start);
        // A steer gets a few dozen rotations; an attempt a few hundred
        // works per cell before it starts over.
        let patience = 4 * self.g.succ.len() as u64 + 16;
        let give_up = self.work.saturating_add(ATTEMPT_WORK_PER_CELL * self.g.cells as u64 + 10_000).min(budget);
        let mut wander = false;
        loop {
            if self.spent(give_up) {
                return false;
            }
            if self.path.len() == self.g.cells {
                if !closed || self.steer(Goal::Close, patience * 8, give_up) {
                    return true;
                }
                self.truncate();
                wander = true;
                continue;
            }
            let end = *self.path.last().expect("the start is on the path") as usize;
            let next = if wander { self.wander(end) } else { self.extension(end) };
            wander = false;
            if let Some(next) = next {
                self.visit(next);
            } else if !self.g.symmetric || !self.steer(Goal::Unvisited, patience, give_up) {
                // Rotations cannot reach what is left (in a bipartite graph
                // the end's colour may be the wrong one for it): back up
                // and go on another way.
                self.truncate();
                wander = true;
            }
        }
    }

    /// Takes a random number of cells (up to twice the move count) off the
    /// end of the path, never the start.
    fn truncate(&mut self) {
        let most = (self.path.len() - 1).min(2 * self.g.succ.len());
        if most == 0 {
            return;
        }
        let cut = 1 + self.rng.below(most as u64) as usize;
        for _ in 0..cut {
            let v = self.path.pop().expect("more than the start on the path") as usize;
            self.pos[v] = NONE;
            self.unvisited.push(v as u32);
            for &o in &self.g.pred {
                let u = v.wrapping_add_signed(o);
                if self.free[u] != super::graph::BORDER {
                    self.free[u] += 1;
                }
            }
        }
        self.work += cut as u64;
        self.truncations += 1;
    }

    /// A uniformly random unvisited neighbour of `end`: the step after a
    /// truncation, so the walk does not retrace what failed.
    fn wander(&mut self, end: usize) -> Option<usize> {
        let (mut pick, mut count) = (None, 0);
        for &o in &self.g.succ {
            let u = end.wrapping_add_signed(o);
            if self.g.on_board(u) && self.pos[u] == NONE {
                count += 1;
                if self.rng.below(count) == 0 {
                    pick = Some(u);
                }
            }
        }
        pick
    }

    /// An attempt from a cycle cover whose cycles would not merge: the
    /// path starts as `first` (the start's cycle, opened), and whenever its
    /// end is next to a cell of another cycle it takes that whole cycle,
    /// entering at the cell and leaving at its partner. Rotations steer the
    /// end as before; nothing is ever cut, so a cycle is taken whole or not.
    pub(super) fn attempt_from_cycles(&mut self, first: &[u32], mate: &[[u32; 2]], closed: bool, budget: u64) -> bool {
        self.reset();
        for &c in first {
            self.visit(c as usize);
        }
        let patience = 4 * self.g.succ.len() as u64 + 16;
        let give_up = self.work.saturating_add(ATTEMPT_WORK_PER_CELL * self.g.cells as u64 + 10_000).min(budget);
        loop {
            if self.spent(give_up) {
                return false;
            }
            if self.path.len() == self.g.cells {
                return !closed || self.steer(Goal::Close, patience * 8, give_up);
            }
            let end = *self.path.last().expect("the start is on the path") as usize;
            if let Some(u) = self.wander(end) {
                let (mut prev, mut cur) = (u as u32, mate[u][self.rng.below(2) as usize]);
                self.visit(u);
                while cur != u as u32 {
                    self.visit(cur as usize);
                    let [p, q] = mate[cur as usize];
                    (prev, cur) = (cur, if p != prev { p } else { q });
                }
            } else if !self.steer(Goal::Unvisited, patience, give_up) {
                return false;
            }
        }
    }

    fn reset(&mut self) {
        self.free.clone_from(&self.g.out_degree);
        for &c in &self.path {
            self.pos[c as usize] = NONE;
        }
        self.path.clear();
        self.unvisited.clear();
        self.unvisited.extend(self.g.board_cells().map(|c| c as u32));
        self.taboo = [NONE; TABOO];
    }

    /// Puts `v` at the end of the path.
    fn visit(&mut self, v: usize) {
        self.pos[v] = self.path.len() as u32;
        self.path.push(v as u32);
        self.work += 1;
        // The cells that can move onto v lose an unvisited neighbour.
        for &o in &self.g.pred {
            let u = v.wrapping_add_signed(o);
            if self.free[u] != super::graph::BORDER {
                self.free[u] -= 1;
            }
        }
    }

    /// Warnsdorff's choice from `end`: the unvisited neighbour with the
    /// fewest unvisited neighbours, ties to the cell farthest from the
    /// centre (W+'s rule, which gets stuck far less often than W's), then
    /// uniformly at random.
    fn extension(&mut self, end: usize) -> Option<usize> {
        let (mut best, mut least, mut ties) = (None, (u16::MAX, 0u32), 0);
        for &o in &self.g.succ {
            let u = end.wrapping_add_signed(o);
            if !self.g.on_board(u) || self.pos[u] != NONE {
                continue;
            }
            // A candidate of more unvisited neighbours cannot win or tie.
            if self.free[u] > least.0 {
                continue;
            }
            let f = (self.free[u], u32::MAX - self.g.centre_distance(u));
            if f < least {
                (best, least, ties) = (Some(u), f, 1);
            } else if f == least {
                ties += 1;
                if self.rng.below(ties) == 0 {
                    best = Some(u);
                }
            }
        }
        best
    }

    /// Rotates until the end meets `goal`, at most `limit` times; false
    /// when it cannot (no rotation left, the limit, or the budget).
    fn steer(&mut self, goal: Goal, limit: u64, budget: u64) -> bool {
        let target = match goal {
            Goal::Unvisited => 1,
            Goal::Close => 0,
        };
        self.measure(goal);
        for _ in 0..limit {
            let k = self.path.len() - 1;
            let end = self.path[k] as usize;
            let here = self.distance(end);
            if here == target {
                return true;
            }
            if here == FAR {
                self.measure(goal);
            }
            if self.spent(budget) {
                return false;
            }
            let Some(pivot) = self.pick_pivot(end, k) else { return false };
            self.taboo.rotate_right(1);
            self.taboo[0] = end as u32;
            self.rotate(pivot);
        }
        false
    }

    /// The path position `i` of the rotation to make from `end` (at `k`):
    /// the one whose new end `path[i + 1]` is nearest the goal, or a random
    /// one in eight times, avoiding the last few ends where it can; None
    /// when the end has no neighbour to rotate on.
    fn pick_pivot(&mut self, end: usize, k: usize) -> Option<usize> {
        // Scores are (taboo, distance): a taboo end only when nothing else.
        let (mut best, mut least, mut ties) = (None, (true, FAR), 0u64);
        let (mut any, mut any_taboo, mut count) = (None, true, 0u64);
        let explore = self.rng.below(8) == 0;
        for &o in &self.g.succ {
            let p = end.wrapping_add_signed(o);
            if !self.g.on_board(p) {
                continue;
            }
            let i = self.pos[p] as usize;
            // Unvisited (NONE) or the end's own predecessor: no rotation.
            if i + 1 >= k {
                continue;
            }
            let new_end = self.path[i + 1];
            let taboo = self.taboo.contains(&new_end);
            if !taboo && any_taboo {
                (any, any_taboo, count) = (None, false, 0);
            }
            if taboo == any_taboo {
                count += 1;
                if self.rng.below(count) == 0 {
                    any = Some(i);
                }
            }
            let score = (taboo, self.distance(new_end as usize));
            if score < least {
                (best, least, ties) = (Some(i), score, 1);
            } else if score == least {
                ties += 1;
                if self.rng.below(ties) == 0 {
                    best = Some(i);
                }
            }
        }
        if explore {
            any
        } else {
            best
        }
    }

    /// Reverses the path after position `i`: the end becomes `path[i + 1]`.
    fn rotate(&mut self, i: usize) {
        let tail = &mut self.path[i + 1..];
        tail.reverse();
        for (j, &c) in tail.iter().enumerate() {
            self.pos[c as usize] = (i + 1 + j) as u32;
        }
        self.work += tail.len() as u64;
        self.rotations += 1;
    }

    fn distance(&self, c: usize) -> u32 {
        if self.seen[c] == self.stamp {
            self.dist[c]
        } else {
            FAR
        }
    }

    /// Breadth-first distances from the goal's cells, far enough to cover
    /// every cell within two moves of the current end.
    fn measure(&mut self, goal: Goal) {
        let stamp = next_stamp(&mut self.stamp, &mut self.seen);
        self.queue.clear();
        match goal {
            Goal::Unvisited => {
                let pos = &self.pos;
                self.unvisited.retain(|&c| pos[c as usize] == NONE);
                self.queue.extend_from_slice(&self.unvisited);
            }
            Goal::Close => {
                let start = self.path[0] as usize;
                for &o in &self.g.succ {
                    let u = start.wrapping_add_signed(o);
                    if self.g.on_board(u) {
                        self.queue.push(u as u32);
                    }
                }
            }
        }
        for &c in &self.queue {
            self.seen[c as usize] = stamp;
            self.dist[c as usize] = 0;
        }
        // Seeding costs a step a cell, even where the search stops early.
        self.work += self.queue.len() as u64;
        let end = *self.path.last().expect("the start is on the path") as usize;
        let mut horizon = FAR;
        let mut head = 0;
        while let Some(&x) = self.queue.get(head) {
            head += 1;
            let x = x as usize;
            let d = self.dist[x];
            if x == end {
                horizon = d + 2;
            }
            if d >= horizon {
                break;
            }
            for &o in &self.g.succ {
                let u = x.wrapping_add_signed(o);
                if self.g.on_board(u) && self.seen[u] != stamp {
                    self.seen[u] = stamp;
                    self.dist[u] = d + 1;
                    self.queue.push(u as u32);
                }
            }
        }
        self.work += head as u64;
    }
}
