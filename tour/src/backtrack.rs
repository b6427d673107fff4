//! `bt`: exact depth-first search for an open tour from a given start.
//!
//! The search tries children in Warnsdorff order (least onward degree first,
//! ties by move order), so on most boards its first descent is the W walk
//! and a tour comes out after about one node per cell; when the walk gets
//! stuck it backtracks instead of giving up, and when the search space is
//! exhausted the result is a proof that no tour exists from the start.
//!
//! # Pruning, and why it is sound
//!
//! Let the path so far end at the current cell `c` and let `U` be the
//! unvisited cells. The branch holds a tour iff `U` can be walked as a path
//! `c = q0, q1, .., qm` (`m = |U|`) of moves. Every rule below only rejects
//! states in which no such path exists.
//!
//! Move sets closed under negation (every rule-generated set) make the move
//! graph undirected. Let `d(u)`, for `u` in `U`, count the neighbours of `u`
//! in `U ∪ {c}`. In the path, each `qi` with `0 < i < m` has two distinct
//! neighbours `q(i-1)` and `q(i+1)` in `U ∪ {c}`, and `qm` has one. Hence:
//!
//! * **isolated**: `d(u) = 0` for some `u` in `U` → dead (`u` cannot be entered);
//! * **ends**: `d(u) = 1` for two or more `u` in `U` → dead (only `qm` may
//!   have `d = 1`);
//! * **next cell**, when `m >= 2` (so `q1` is interior and is not `qm`):
//!   an interior `qi` with `i >= 2` has both path neighbours in `U`, so a
//!   neighbour `u` of `c` with `d(u) <= 2` can only be `q1` or `qm`. With
//!   `d(u) = 1` it is neither (`qm`'s one neighbour would be `c`, making
//!   `m = 1`; `q1` needs two) → dead. With `d(u) = 2`: three such → dead;
//!   two while a `d = 1` cell holds the end → dead; otherwise the first
//!   one is the only child tried, because a path that ends at a neighbour
//!   of `c` reverses into one that starts there: `c, qm, .., q1`.
//!
//! For other move sets the graph is directed. Let `in(u)` count the cells of
//! `U ∪ {c}` that can move onto `u`, and `out(u)` the cells of `U` that `u`
//! can move onto. Each `qi` with `i >= 1` is entered from `q(i-1)`, and each
//! `qi` with `i < m` leaves to `q(i+1)` in `U`. Hence:
//!
//! * **isolated**: `in(u) = 0` for some `u` in `U` → dead;
//! * **ends**: `out(u) = 0` for two or more `u` in `U` → dead (only `qm` may);
//! * **forced next**: a successor `u` of `c` with `in(u) = 1` can only be
//!   entered from `c`, so it must be `q1`: it is the only child tried, and
//!   two such successors → dead.
//!
//! For both kinds, **reachability**: every cell of `U` must be reachable
//! from `c` through `U`. It is checked in full at the start; after a step
//! `c → v` only cells whose routes all went through `c` can be cut off, and
//! if every unvisited successor of `c` is still reachable from `v`, so is
//! every cell that was reachable from `c` (its route from `c` leaves through
//! one of them). So a step is checked by a search from `v` that stops as
//! soon as it has met all of them; a miss means a cell that can never be
//! visited, whatever was checked before. These searches cost up to a board
//! each, so they start only once the search has first backtracked, with one
//! full check to re-establish the premise after any backtrack above the
//! last full check.
//!
//! All counts are kept incrementally. Stepping from `c` to `v` changes
//! `U ∪ {c}` only by dropping `c`, and `U` only by dropping `v`, so
//! `d` (and `in`) drop by one on the unvisited neighbours (successors) of
//! `c`, `out` drops on the unvisited predecessors of `v`, and backtracking
//! undoes exactly that: O(K) per node either way.
//!
//! Before any search, the colouring gives proofs for free: if every move
//! changes colour and the cell count is odd, a tour alternates colours and
//! must start on the majority (even coordinate sum) colour; if no move
//! changes colour, a board of two or more cells (which has both colours)
//! has no tour at all.

mod reach;
mod step;

use crate::board::Board;
use crate::cancel::{Cancel, Poll};
use crate::layout::Layout;
use crate::moves::{Colouring, Moves};
use crate::outcome::Outcome;

/// Work units a search node counts for: a node costs about as much as
/// that many walk steps (its pruning looks at every neighbour's neighbours).
/// Defined here, where nodes are counted, so that `solve`, which budgets
/// its searches in these units, depends on this module and not both ways.
pub(crate) const NODE_WORK: u64 = 8;

/// The result of an exhaustive search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    /// Tour (with `path`), NoTour (search space exhausted) or GaveUp (budget).
    pub outcome: Outcome,
    /// The tour, as cell indices from the start, when one was found.
    pub path: Option<Vec<u64>>,
    /// Search nodes expanded (cells placed on the path, backtracked ones included).
    pub nodes: u64,
}

impl SearchResult {
    fn without_path(outcome: Outcome, nodes: u64) -> SearchResult {
        SearchResult { outcome, path: None, nodes }
    }
}

/// Searches for an open tour of `board` from cell `start` with `moves`,
/// expanding at most `budget` nodes.
///
/// Placing a cell on the path (the start included) costs one node. Colour
/// proofs cost none. Inputs the engine would refuse (a start off the board,
/// moves of another dimension, a padded layout over [`crate::MAX_PADDED_CELLS`])
/// give `GaveUp` with no nodes: nothing was learnt about them.
pub fn search(board: &Board, moves: &Moves, start: u64, budget: u64) -> SearchResult {
    search_closed(board, moves, start, false, budget)
}

/// [`search`], or with `closed` a search for a closed tour through `start`:
/// the same pruning (a closed tour is an open one whose last cell is next to
/// the start, so every rule stays sound) except the symmetric "next cell"
/// rule's choice of one child, which leans on reversing the rest of the path
/// and so may drop the only closed ones; a full path counts only when it
/// closes.
pub fn search_closed(board: &Board, moves: &Moves, start: u64, closed: bool, budget: u64) -> SearchResult {
    search_within(board, moves, start, closed, budget, Cancel::NEVER)
}

/// [`search_closed`], which gives up early once `cancel` is raised (the
/// caller then reports no result).
pub(crate) fn search_within(
    board: &Board,
    moves: &Moves,
    start: u64,
    closed: bool,
    budget: u64,
    cancel: Cancel,
) -> SearchResult {
    let cells = board.cells();
    if moves.dims() != board.dims() || start >= cells {
        return SearchResult::without_path(Outcome::GaveUp, 0);
    }
    if colour_forbids(board, moves, start)
        || closed && cells > 1 && cells % 2 == 1 && moves.colouring() == Colouring::AlwaysChanges
    {
        return SearchResult::without_path(Outcome::NoTour, 0);
    }
    if budget == 0 {
        return SearchResult::without_path(Outcome::GaveUp, 0);
    }
    if cells == 1 {
        return SearchResult { outcome: Outcome::Tour, path: Some(vec![start]), nodes: 1 };
    }
    // The walks' padded geometry: a neighbour is `cell + offset`, and
    // off-board neighbours are border slots the search marks BLOCKED.
    let Ok(grid) = Layout::new(board, moves) else {
        return SearchResult::without_path(Outcome::GaveUp, 0);
    };
    if moves.closed_under_negation() {
        Search::<true>::new(&grid, closed, cancel).run(start, cells, budget)
    } else {
        Search::<false>::new(&grid, closed, cancel).run(start, cells, budget)
    }
}

/// True when the colouring alone proves there is no tour from `start`.
fn colour_forbids(board: &Board, moves: &Moves, start: u64) -> bool {
    match moves.colouring() {
        Colouring::NeverChanges => board.cells() > 1,
        Colouring::AlwaysChanges => {
            let odd_start = board.coords(start).iter().map(|&x| x as u64).sum::<u64>() % 2 == 1;
            board.cells() % 2 == 1 && odd_start
        }
        Colouring::Mixed => false,
    }
}

/// A degree slot of a visited (or current) cell or of the border.
const BLOCKED: u16 = u16::MAX;

/// One cell on the path, with what backtracking needs to restore it.
struct Frame {
    /// Padded index of the cell.
    cell: usize,
    /// Its degree slots before it was visited.
    saved: Saved,
    /// Its children, in `children[first..]` while it is the top frame.
    first: usize,
    /// The next child to try.
    next: usize,
}

#[derive(Clone, Copy)]
struct Saved {
    deg: u16,
    indeg: u16,
}

/// Search state. With `SYM` (move set closed under negation) `deg` holds
/// `d(u)`; otherwise `deg` holds `out(u)` and `indeg` holds `in(u)` (see the
/// module doc). `deg` is [`BLOCKED`] on visited and border cells, which is
/// how the search tells them apart from `U`.
struct Search<'g, const SYM: bool> {
    grid: &'g Layout,
    /// Polled from the work done: nodes, and cells the reachability
    /// searches visit (on large boards most of a node's cost).
    poll: Poll<'g>,
    searched: u64,
    /// Offsets of the cells that can move onto a cell (directed only).
    predecessors: Vec<isize>,
    deg: Vec<u16>,
    indeg: Vec<u16>,
    /// Cells of `U` that cannot be entered: `d = 0` / `in = 0`. Must be 0.
    isolated: u64,
    /// Cells of `U` that can only be the last cell: `d = 1` / `out = 0`.
    /// Must be at most 1.
    ends: u64,
    /// Reachability search scratch: per-cell stamps (allocated on first
    /// use) and a queue.
    mark: Vec<u32>,
    stamp: u32,
    queue: Vec<usize>,
    /// A full path counts only when its last cell is one move from the start.
    closed: bool,
}

impl<'g, const SYM: bool> Search<'g, SYM> {
    /// Degrees of the whole board with nothing visited yet.
    fn new(grid: &'g Layout, closed: bool, cancel: Cancel<'g>) -> Self {
        let cells: u64 = grid.sides().iter().map(|&n| n as u64).product();
        // Board cells get a count, border slots stay BLOCKED. A count is
        // never BLOCKED, so counting in place sees the same board throughout.
        let mut deg = vec![BLOCKED; grid.len()];
        for i in 0..cells {
            deg[grid.padded(i)] = 0;
        }
        let count = |deg: &[u16], cell: usize, offsets: &[isize]| {
            offsets.iter().filter(|&&o| deg[cell.wrapping_add_signed(o)] != BLOCKED).count() as u16
        };
        let predecessors: Vec<isize> = if SYM { Vec::new() } else { grid.offsets().iter().map(|&o| -o).collect() };
        let mut indeg = Vec::new();
        if !SYM {
            indeg = vec![0u16; grid.len()];
            for i in 0..cells {
                let p = grid.padded(i);
                indeg[p] = count(&deg, p, &predecessors);
            }
        }
        for i in 0..cells {
            let p = grid.padded(i);
            deg[p] = count(&deg, p, grid.offsets());
        }
        let (mark, queue) = (Vec::new(), Vec::new());
        let poll = Poll::new(cancel);
        Search {
            grid,
            poll,
            searched: 0,
            predecessors,
            deg,
            indeg,
            isolated: 0,
            ends: 0,
            mark,
            stamp: 0,
            queue,
            closed,
        }
    }

    fn dead(&self) -> bool {
        self.isolated > 0 || self.ends > 1
    }

    /// Makes `start` the current cell with every other cell unvisited and
    /// counts the isolated and end cells of `U`.
    fn place_start(&mut self, start: usize) {
        self.deg[start] = BLOCKED;
        if !SYM {
            // `start` left U: its predecessors lose a successor in U.
            for &o in &self.predecessors {
                let p = start.wrapping_add_signed(o);
                if self.deg[p] != BLOCKED {
                    self.deg[p] -= 1;
                }
            }
        }
        for (u, &d) in self.deg.iter().enumerate() {
            if d == BLOCKED {
                continue;
            }
            if SYM {
                self.isolated += (d == 0) as u64;
                self.ends += (d == 1) as u64;
            } else {
                self.isolated += (self.indeg[u] == 0) as u64;
                self.ends += (d == 0) as u64;
            }
        }
    }

    fn run(mut self, start: u64, cells: u64, budget: u64) -> SearchResult {
        let grid = self.grid;
        let s = grid.padded(start);
        self.place_start(s);
        let mut nodes = 1u64;
        let mut children: Vec<u32> = Vec::new();
        if self.dead() || self.unreached(s, cells - 1) || !self.expand(s, cells - 1, &mut children) {
            return SearchResult::without_path(Outcome::NoTour, nodes);
        }
        // Reachability is checked at every node once the search has first
        // backtracked (a first descent that succeeds never needs it, and on
        // large boards it is the dearest test). `reach_from` is the path
        // length of a node whose unvisited cells were all reachable, with
        // every step below it checked by `cut_off` since: the premise that
        // lets `cut_off` look only at the cells around the step.
        let mut checking = false;
        let mut reach_from: Option<usize> = None;
        // The start is never taken back, so its saved slots are never read.
        let mut frames = vec![Frame { cell: s, saved: Saved { deg: 0, indeg: 0 }, first: 0, next: 0 }];
        while let Some(top) = frames.last_mut() {
            if top.next == children.len() {
                // Every child failed: take the top cell off the path.
                let (cell, saved, first) = (top.cell, top.saved, top.first);
                if reach_from.is_some_and(|len| len >= frames.len()) {
                    reach_from = None;
                }
                checking = true;
                frames.pop();
                children.truncate(first);
                if let Some(parent) = frames.last() {
                    self.retreat(parent.cell, cell, saved);
                }
                continue;
            }
            let (c, k) = (top.cell, (children[top.next] & 0xffff) as usize);
            top.next += 1;
            if nodes == budget || self.poll.stop(nodes.saturating_mul(NODE_WORK).saturating_add(self.searched)) {
                return SearchResult::without_path(Outcome::GaveUp, nodes);
            }
            nodes += 1;
            let v = c.wrapping_add_signed(grid.offsets()[k]);
            let saved = self.advance(c, v);
            let len = frames.len() + 1;
            let remaining = cells - len as u64;
            if remaining == 0 && self.closed && !grid.offsets().iter().any(|&o| v.wrapping_add_signed(o) == s) {
                self.retreat(c, v, saved);
                continue;
            }
            if remaining == 0 {
                let path = frames.iter().map(|f| f.cell).chain([v]).map(|p| grid.unpadded(p)).collect();
                return SearchResult { outcome: Outcome::Tour, path: Some(path), nodes };
            }
            let first = children.len();
            let mut alive = !self.dead() && self.expand(v, remaining, &mut children);
            if alive && checking {
                alive = if reach_from.is_some() {
                    !self.cut_off(c, v)
                } else {
                    let ok = !self.unreached(v, remaining);
                    reach_from = ok.then_some(len);
                    ok
                };
                // Either search leaves the cells it met in the queue.
                self.searched += self.queue.len() as u64;
            }
            if !alive {
                children.truncate(first);
                self.retreat(c, v, saved);
                continue;
            }
            frames.push(Frame { cell: v, saved, first, next: first });
        }
        // Every child of the start failed.
        SearchResult::without_path(Outcome::NoTour, nodes)
    }
}
