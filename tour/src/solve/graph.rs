//! The move graph on the padded layout `solve` works on, and the facts
//! about it that prove a tour impossible before any search: a cell that
//! cannot be reached, a cell that cannot be entered or left often enough.

use crate::board::{Board, MAX_DIMS};
use crate::layout::Layout;
use crate::moves::Moves;

/// Largest padded layout `solve` takes: it numbers cells with 32 bits.
pub const SOLVE_MAX_PADDED: u64 = u32::MAX as u64 - 1;

/// The padded layout `solve` works on, None where it is too large for it.
pub(super) fn layout(board: &Board, moves: &Moves) -> Option<Layout> {
    Layout::new(board, moves).ok().filter(|l| (l.len() as u64) < SOLVE_MAX_PADDED)
}

/// Largest board [`board_proof`] builds the move graph of: a cell without
/// moves, or a graph in pieces, comes of sides short against the moves, so
/// larger boards are left to the theorems.
pub const BOARD_PROOF_MAX_CELLS: u64 = 1 << 16;

/// Why no start of `board` has a tour (closed when `closed`), from the
/// move graph's degrees and reachability alone: a cell no move reaches, no
/// move that fits on the board at all, more dead ends than a path has
/// ends. None when these do not settle it, and on boards of more than
/// [`BOARD_PROOF_MAX_CELLS`] cells.
pub fn board_proof(board: &Board, moves: &Moves, closed: bool) -> Option<&'static str> {
    if moves.dims() != board.dims() || board.cells() > BOARD_PROOF_MAX_CELLS || board.cells() < 2 {
        return None;
    }
    let g = Graph::new(layout(board, moves)?, moves.closed_under_negation());
    g.impossible_from_every_start(closed)
}

/// A border slot's degree: never a count (K <= MAX_MOVES < u16::MAX).
pub(super) const BORDER: u16 = u16::MAX;

/// The leaper graph of one (board, moves) pair: a neighbour of padded cell
/// `c` is `c + offset` whenever its degree slot is not [`BORDER`].
pub(super) struct Graph {
    pub(super) layout: Layout,
    /// Offsets of the cells a cell can move onto.
    pub(super) succ: Vec<isize>,
    /// Offsets of the cells that can move onto a cell (= `succ` when the
    /// move set is closed under negation).
    pub(super) pred: Vec<isize>,
    /// Undirected: every move's negation is a move too.
    pub(super) symmetric: bool,
    /// Out-degree of every board cell on the empty board, BORDER elsewhere.
    pub(super) out_degree: Vec<u16>,
    /// In-degree likewise.
    pub(super) in_degree: Vec<u16>,
    /// Board cells.
    pub(super) cells: usize,
    /// [`Graph::centre_distance`] of every padded cell.
    centre: Vec<u32>,
}

/// Why the graph alone rules a tour out.
pub(super) type Proof = &'static str;

pub(super) const UNREACHABLE: Proof = "some cell cannot be reached from the start";
pub(super) const DEAD_ENDS: Proof =
    "two or more cells other than the start have one neighbour (or can never be left), \
                                      and only a tour's last cell may";
pub(super) const NO_WAY_IN: Proof = "a cell other than the start cannot be entered";
pub(super) const CLOSED_DEGREE: Proof = "a cell has fewer than two neighbours, so no cycle passes through it";
pub(super) const ISOLATED: Proof =
    "a cell has no move on this board (every move from it leaves the board), so no walk reaches or leaves it";
pub(super) const TWO_UNENTERED: Proof = "two or more cells cannot be entered, and only a tour's start may be one";
pub(super) const DISCONNECTED: Proof = "the cells fall apart into parts no move joins (a cell no move reaches, or \
                                        no move that fits on the board), so no walk visits them all";
pub(super) const THREE_ENDS: Proof = "three or more cells have one neighbour each, and a path has only two ends";

impl Graph {
    pub(super) fn new(layout: Layout, symmetric: bool) -> Graph {
        let succ = layout.offsets().to_vec();
        let pred: Vec<isize> = succ.iter().map(|&o| -o).collect();
        let out_degree = layout.initial_degrees::<u16>();
        let in_degree = if symmetric { out_degree.clone() } else { count_in(&layout, &out_degree, &pred) };
        let cells = layout.sides().iter().product();
        let centre = centre_distances(&layout);
        Graph { layout, succ, pred, symmetric, out_degree, in_degree, cells, centre }
    }

    /// Squared distance of `c` from the board's centre, in doubled
    /// coordinates (so it stays an integer; saturated past u32): W+'s
    /// tiebreak, looked up rather than computed with a division per axis
    /// at every candidate of every step.
    #[inline]
    pub(super) fn centre_distance(&self, c: usize) -> u32 {
        self.centre[c]
    }
    /// True when `c` is a board cell (not border).
    #[inline]
    pub(super) fn on_board(&self, c: usize) -> bool {
        self.out_degree[c] != BORDER
    }

    /// True when board cell `c` (padded) has an even coordinate sum: its
    /// colour, on boards where every move changes colour.
    pub(super) fn is_even(&self, c: usize) -> bool {
        let mut coords = [0i64; MAX_DIMS];
        let coords = &mut coords[..self.layout.sides().len()];
        self.layout.coords(c, coords);
        coords.iter().sum::<i64>() % 2 == 0
    }

    /// Board cells, as padded indices, in index order.
    pub(super) fn board_cells(&self) -> impl Iterator<Item = usize> + '_ {
        self.layout.board_cells()
    }

    /// A proof that no tour (open from `start`, or closed) exists, from the
    /// degrees and reachability alone; None when these do not settle it.
    pub(super) fn impossible(&self, start: usize, closed: bool) -> Option<Proof> {
        let mut dead_ends = 0;
        for c in self.board_cells() {
            let (out, inn) = (self.out_degree[c], self.in_degree[c]);
            // A cycle enters and leaves every cell once; with symmetric
            // moves those are two distinct neighbours.
            let least = if self.symmetric { 2 } else { 1 };
            if closed && out.min(inn) < least {
                return Some(CLOSED_DEGREE);
            }
            if c != start && inn == 0 {
                return Some(NO_WAY_IN);
            }
            // Every cell but the last leaves once and, but the start, is
            // entered once: with symmetric moves a cell of one neighbour is
            // an end (start or last), otherwise a cell with no way out is last.
            let end = if self.symmetric { out == 1 && c != start } else { out == 0 };
            dead_ends += end as u32;
        }
        if dead_ends > 1 {
            return Some(DEAD_ENDS);
        }
        if self.reached(start, &self.succ) < self.cells || closed && self.reached(start, &self.pred) < self.cells {
            return Some(UNREACHABLE);
        }
        None
    }

    /// A proof that no start has a tour (open, or closed), from the
    /// degrees and reachability alone: [`Graph::impossible`] for every
    /// start at once. None when these do not settle every start.
    pub(super) fn impossible_from_every_start(&self, closed: bool) -> Option<Proof> {
        let first = self.board_cells().next()?;
        if self.cells < 2 {
            return None;
        }
        if closed {
            // Nothing in a closed tour's proof depends on where it starts.
            return self.impossible(first, true);
        }
        if self.board_cells().any(|c| self.in_degree[c] == 0 && self.out_degree[c] == 0) {
            return Some(ISOLATED);
        }
        let mut no_way_in = self.board_cells().filter(|&c| self.in_degree[c] == 0);
        match (no_way_in.next(), no_way_in.next()) {
            // Only one cell may go unentered, the start.
            (Some(_), Some(_)) => return Some(TWO_UNENTERED),
            // Only a tour from it could exist.
            (Some(only), None) => return self.impossible(only, false),
            (None, _) => {}
        }
        if !self.symmetric {
            return None;
        }
        // Undirected: the same cells are reached from every start, and a
        // cell of one neighbour is an end wherever the tour starts.
        if self.reached(first, &self.succ) < self.cells {
            return Some(DISCONNECTED);
        }
        let ends = self.board_cells().filter(|&c| self.out_degree[c] == 1).count();
        (ends > 2).then_some(THREE_ENDS)
    }

    /// Cells reachable from `from` along `offsets` (itself included).
    fn reached(&self, from: usize, offsets: &[isize]) -> usize {
        let mut seen = vec![false; self.out_degree.len()];
        let mut queue = vec![from];
        seen[from] = true;
        let mut head = 0;
        while let Some(&x) = queue.get(head) {
            head += 1;
            for &o in offsets {
                let u = x.wrapping_add_signed(o);
                if self.on_board(u) && !seen[u] {
                    seen[u] = true;
                    queue.push(u);
                }
            }
        }
        queue.len()
    }
}

/// Starts a new search over cells marked by stamps (a cell is seen when
/// its entry holds the current stamp, so a search clears nothing): the
/// next stamp, with every entry reset once in 2^32 searches.
pub(super) fn next_stamp(stamp: &mut u32, seen: &mut [u32]) -> u32 {
    *stamp = stamp.wrapping_add(1);
    if *stamp == 0 {
        seen.fill(0);
        *stamp = 1;
    }
    *stamp
}

/// Squared doubled distance from the board's centre of every padded cell
/// (border cells too: they are never asked).
fn centre_distances(layout: &Layout) -> Vec<u32> {
    let sides = layout.sides();
    let mut coords = [0i64; MAX_DIMS];
    let coords = &mut coords[..sides.len()];
    let mut out = vec![0u32; layout.len()];
    for (c, slot) in out.iter_mut().enumerate() {
        layout.coords(c, coords);
        let sum = coords.iter().zip(sides).fold(0u64, |sum, (&x, &n)| {
            let d = (2 * x - (n as i64 - 1)).unsigned_abs();
            sum.saturating_add(d.saturating_mul(d))
        });
        *slot = u32::try_from(sum).unwrap_or(u32::MAX);
    }
    out
}

/// In-degrees of a directed move graph: for each board cell, the board
/// cells that move onto it (found along the negated offsets).
fn count_in(layout: &Layout, out_degree: &[u16], pred: &[isize]) -> Vec<u16> {
    let mut in_degree = vec![BORDER; out_degree.len()];
    for c in layout.board_cells() {
        in_degree[c] = pred.iter().filter(|&&o| out_degree[c.wrapping_add_signed(o)] != BORDER).count() as u16;
    }
    in_degree
}
