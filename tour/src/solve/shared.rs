//! What `solve` keeps of a board across its tasks, found once: a closed
//! tour where the board has an even number of cells, a path between two
//! majority cells where it has an odd number.
//!
//! A sweep asks for tours from many starts of one board. A closed tour is
//! a path from every one of its cells, so on an even board every start's
//! tour (open or closed) is that cycle read from the start. On an odd
//! board of a bipartite leaper no cycle exists, and an open tour runs
//! between two cells of the majority colour: the shared path is the single
//! cycle of a cover through a virtual cell `v` next to every majority
//! cell, and a start's tour moves `v`'s edge from one end to the start and
//! repairs the cover locally ([`Cover::with_cycle`]). Either way a task
//! costs a copy, a local repair and a verification instead of a search of
//! the whole board: (4,3) 198x198 goes from some 10 ms a task to 0.2 ms.
//!
//! Small boards share the opposite answer: where a start's searches over
//! paths give up, the board is first asked whether it has a tour from
//! any start at all, as one satisfiability problem (an open tour from any
//! cell that the exact search's root does not refute, to any other). A
//! board without one, such as (4,3) 24x24, is then refuted once instead
//! of start by start: 0.4 s for the whole board (its symmetries cut the
//! ends to look at), where each of its hardest starts took 0.01 to 2 s on
//! its own.
//!
//! What is shared depends on the board, the moves and the budget only (a
//! fixed seed and start), never on which task asked first: every task gets
//! the same figures whatever the order or the number of threads. Where
//! nothing is found within its share of the budget, or a repair fails,
//! the task runs [`super::solve`] as before.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::cover::{Attempt, Cover, Parts};
use super::graph::Graph;
use super::symmetry::{keeping_colours, least_of_orbit, Symmetry};
use super::{
    exact, exact_node_work, layout, sat, sat_conflict_work, solve_in, Phase, SolveResult, EXACT_CELLS, NODE_WORK,
};
use crate::board::Board;
use crate::cancel::Cancel;
use crate::exists::{known, Claim};
use crate::layout::Layout;
use crate::moves::{Colouring, Moves};
use crate::outcome::Outcome;
use crate::seed::Rng;
use crate::verify::{verify, verify_closed};

/// Boards below this many cells solve each start on its own: it takes
/// well under a millisecond there, and small boards are where closed tours
/// are often missing.
pub const SHARED_MIN_CELLS: u64 = 1_000;

/// Budget of the search for what is shared, in search nodes a cell (about
/// 256 walk steps): a closed tour of (4,3) 198x198 takes some 16 steps a
/// cell, so this is room for many cover attempts, and a board without a
/// tour wastes a bounded, one-off share.
const NODES_PER_CELL: u64 = 32;

/// Cover attempts for the shared path of an odd board.
const PATH_ATTEMPTS: u32 = 16;

/// The seed of the shared search: fixed, so what is found is a function
/// of the board alone.
const SEED: u64 = 0x5eed_c1c1e;

/// One board's shared tours, keyed by the budget that bounds their search
/// (a sweep has one). Cheap to share across threads.
#[derive(Debug, Default)]
pub struct Shared {
    found: Mutex<HashMap<u64, Arc<Slot>>>,
    /// Whether the board has no tour from any start, keyed by (closed,
    /// budget).
    refuted: Mutex<HashMap<(bool, u64), Arc<RefutationSlot>>>,
}

/// A board's shared tour for one budget: searched for once, None if not found.
type Slot = Memo<Option<Arc<Found>>>;

/// A board's refutation for one budget, searched for once.
type RefutationSlot = Memo<Refutation>;

/// A value searched for once, by the first task that asks (the others wait
/// for it); what a cancelled task's search found is not kept, since it may
/// have stopped early.
#[derive(Debug)]
struct Memo<T>(Mutex<Option<T>>);

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo(Mutex::new(None))
    }
}

impl<T: Clone> Memo<T> {
    fn get_or_search(&self, cancel: Cancel, search: impl FnOnce() -> T) -> T {
        // A panic while searching leaves the slot empty.
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(kept) = &*slot {
            return kept.clone();
        }
        let found = search();
        if !cancel.is_raised() {
            *slot = Some(found.clone());
        }
        found
    }
}

/// Budget of the refutation of a whole board, in tasks' budgets: it
/// serves every start of the board, and is spent once.
const REFUTATION_TASKS: u64 = 4;

/// The answer for the whole board, and what it cost.
#[derive(Debug, Clone, Copy)]
struct Refutation {
    /// Proven: no start has a tour.
    none: bool,
    /// Search nodes and conflicts spent, and their work.
    repairs: u64,
    work: u64,
}

/// What was found, and what finding it cost (every task reports it,
/// whichever task found it).
struct Found {
    tour: Tour,
    repairs: u64,
    work: u64,
}

impl std::fmt::Debug for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.tour {
            Tour::Cycle { .. } => "cycle",
            Tour::Path { .. } => "path",
        };
        f.debug_struct("Found").field("tour", &kind).field("repairs", &self.repairs).finish()
    }
}

enum Tour {
    /// A closed tour from cell 0 (cell indices), and where each cell is in it.
    Cycle { cells: Vec<u64>, at: Vec<u32> },
    /// An odd board's graph, its cover builder's shared side, and the
    /// partners of every cell in the single cycle through `v`.
    Path { graph: Box<Graph>, parts: Arc<Parts>, cycle: Vec<[u32; 2]>, index: Vec<u32> },
}

/// Which tour a board can share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Cycle,
    Path,
}

impl Shared {
    /// [`super::solve`], reading the board's shared tour from `start` where
    /// the board has one (see the module docs). Same arguments.
    pub fn solve(&self, board: &Board, moves: &Moves, start: u64, closed: bool, seed: u64, budget: u64) -> SolveResult {
        self.solve_within(board, moves, start, closed, seed, budget, Cancel::NEVER)
    }

    /// [`Shared::solve`], giving up early once `cancel` is raised (the
    /// caller then reports no result).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn solve_within(
        &self,
        board: &Board,
        moves: &Moves,
        start: u64,
        closed: bool,
        seed: u64,
        budget: u64,
        cancel: Cancel,
    ) -> SolveResult {
        if start < board.cells() {
            let found = self.found(board, moves, budget, cancel);
            if let Some(r) = found.and_then(|f| f.from(board, moves, start, closed, seed)) {
                return r;
            }
        }
        solve_in(board, moves, start, closed, seed, budget, Some(self), cancel)
    }

    /// Where no start of the board has a tour (closed when `closed`), what
    /// proving it cost (repairs, work), proven once by the first task
    /// that asks (the others wait for it); None where one does or nothing
    /// was proven within `budget` (in work units, a task's) or before
    /// `cancel` was raised. `g` is the board's graph, symmetric and of at
    /// most SAT_CELLS cells.
    pub(super) fn refuted(
        &self,
        g: &Graph,
        moves: &Moves,
        closed: bool,
        bipartite: bool,
        budget: u64,
        cancel: Cancel,
    ) -> Option<(u64, u64)> {
        let slot = {
            let mut refuted = self.refuted.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(refuted.entry((closed, budget)).or_default())
        };
        let budget = budget.saturating_mul(REFUTATION_TASKS);
        let r = slot.get_or_search(cancel, || Refutation::search(g, moves, closed, bipartite, budget, cancel));
        r.none.then_some((r.repairs, r.work))
    }

    /// The board's shared tour within `budget`, searched for by the first
    /// task that asks (the others wait for it).
    fn found(&self, board: &Board, moves: &Moves, budget: u64, cancel: Cancel) -> Option<Arc<Found>> {
        let kind = shareable(board, moves)?;
        let budget = budget.min(NODES_PER_CELL.saturating_mul(board.cells()));
        let slot = {
            // A panic while holding this lock leaves the map whole.
            let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(found.entry(budget).or_default())
        };
        slot.get_or_search(cancel, || Found::search(board, moves, kind, budget, cancel).map(Arc::new))
    }
}

/// Bytes [`Shared`] holds for a board, at most: the cycle (8 bytes a cell)
/// and its index (4); or the odd board's graph, cover lists, cycle and
/// cell index (about 28 bytes a padded cell and 8 plus 4 a move a board
/// cell).
pub fn shared_memory(board: &Board, moves: &Moves) -> u64 {
    match shareable(board, moves) {
        Some(Kind::Cycle) => board.cells().saturating_mul(12),
        Some(Kind::Path) => {
            let padded = Layout::new(board, moves).map_or(u64::MAX, |l| l.len() as u64);
            let per_cell = 8 + 4 * moves.len() as u64;
            padded.saturating_mul(28).saturating_add(board.cells().saturating_mul(per_cell))
        }
        None => 0,
    }
}

/// Boards large enough to gain, where the cover route applies (bipartite
/// leapers) and nothing rules the tour out: a closed tour on boards of
/// even cells, a path between majority cells on boards of odd cells.
fn shareable(board: &Board, moves: &Moves) -> Option<Kind> {
    let fits = board.cells() >= SHARED_MIN_CELLS
        && board.cells() <= u32::MAX as u64
        && moves.dims() == board.dims()
        && moves.closed_under_negation()
        && moves.colouring() == Colouring::AlwaysChanges;
    if !fits {
        return None;
    }
    let proven = known(board, moves);
    if board.cells().is_multiple_of(2) {
        (!matches!(proven.closed, Claim::Impossible(_))).then_some(Kind::Cycle)
    } else {
        (!matches!(proven.open, Claim::Impossible(_))).then_some(Kind::Path)
    }
}

impl Refutation {
    /// Whether `g` has a tour from any start, within `budget` work: a
    /// closed tour is a cycle whatever its start; an open one runs between
    /// two cells the exact search's root does not refute (reversed, a path
    /// from `s` to `t` is one from `t`), which on (4,3) 24x24 leaves 80 of
    /// 576. On a bipartite board of even cells, whose tours join an even
    /// end to an odd one, the even end need only be the least of its orbit
    /// under the symmetries that keep colours: one of them carries any
    /// tour to such a one. On (4,3) 24x24 that leaves 12 even ends of 40,
    /// and the refutation takes 4,600 to 16,000 conflicts where it took
    /// 34,000 to 66,000 (five runner seeds).
    fn search(g: &Graph, moves: &Moves, closed: bool, bipartite: bool, budget: u64, cancel: Cancel) -> Refutation {
        let cells = g.cells as u64;
        let (mut repairs, mut work) = (0u64, 0u64);
        let first = g.board_cells().next().unwrap_or(0);
        let conflicts = |work: u64| budget.saturating_sub(work) / sat_conflict_work(cells);
        let found = if closed {
            sat::search(g, first, true, bipartite, conflicts(0), cancel)
        } else {
            let sides = g.layout.sides();
            let even_cells = cells.is_multiple_of(2);
            let keep_colours: Vec<Symmetry> =
                if bipartite && even_cells { keeping_colours(sides, moves) } else { Vec::new() };
            let mut ends = Vec::new();
            for c in g.board_cells() {
                if cancel.is_raised() {
                    break;
                }
                // On a board of odd cells an open tour runs between
                // majority cells, the even ones.
                let fits = match (bipartite, even_cells, g.is_even(c)) {
                    (false, _, _) | (true, true, false) => true,
                    (true, true, true) => least_of_orbit(g, &keep_colours, c),
                    (true, false, even) => even,
                };
                if fits && bipartite && cells <= EXACT_CELLS {
                    let root = exact::search(g, c, false, 1, cancel);
                    repairs += root.nodes;
                    work = work.saturating_add(root.nodes.saturating_mul(exact_node_work(cells)));
                    if root.outcome != Outcome::NoTour {
                        ends.push(c);
                    }
                } else if fits {
                    ends.push(c);
                }
            }
            sat::search_anywhere(g, &ends, bipartite, conflicts(work), cancel)
        };
        repairs += found.conflicts;
        work = work.saturating_add(found.conflicts.saturating_mul(sat_conflict_work(cells)));
        Refutation { none: found.outcome == Outcome::NoTour, repairs, work }
    }
}

impl Found {
    fn search(board: &Board, moves: &Moves, kind: Kind, budget: u64, cancel: Cancel) -> Option<Found> {
        match kind {
            Kind::Cycle => {
                let r = solve_in(board, moves, 0, true, SEED, budget, None, cancel);
                let cells = r.path.filter(|_| r.outcome == Outcome::Tour)?;
                let mut at = vec![0u32; cells.len()];
                for (i, &c) in cells.iter().enumerate() {
                    at[c as usize] = i as u32;
                }
                Some(Found { tour: Tour::Cycle { cells, at }, repairs: r.repairs, work: r.work })
            }
            Kind::Path => {
                let graph = Graph::new(layout(board, moves)?, true);
                let limit = budget.saturating_mul(NODE_WORK);
                let (parts, cycle, attempts, work) = {
                    let mut cover = Cover::anywhere(&graph).cancelled_by(cancel);
                    let mut rng = Rng::new(SEED);
                    let mut attempts = 0;
                    loop {
                        if attempts == PATH_ATTEMPTS || cover.work >= limit || cover.stopped() {
                            return None;
                        }
                        attempts += 1;
                        if cover.single_cycle(&mut rng) {
                            break;
                        }
                    }
                    (cover.parts(), cover.mates().to_vec(), attempts, cover.work)
                };
                // Each padded cell's index on the board, looked up rather
                // than divided out for every cell of every start's tour.
                let mut index = vec![u32::MAX; graph.layout.len()];
                for i in 0..board.cells() {
                    index[graph.layout.padded(i)] = i as u32;
                }
                let graph = Box::new(graph);
                let tour = Tour::Path { graph, parts, cycle, index };
                Some(Found { tour, repairs: u64::from(attempts), work })
            }
        }
    }

    /// The tour from `start`, verified; None where this board's shared tour
    /// does not give one (the task then searches on its own).
    fn from(&self, board: &Board, moves: &Moves, start: u64, closed: bool, seed: u64) -> Option<SolveResult> {
        let path = match &self.tour {
            Tour::Cycle { cells, at } => {
                let at = at[start as usize] as usize;
                let mut path = Vec::with_capacity(cells.len());
                path.extend_from_slice(&cells[at..]);
                path.extend_from_slice(&cells[..at]);
                path
            }
            Tour::Path { graph, parts, cycle, index } => {
                let padded = graph.layout.padded(start);
                // No closed tour on an odd board, and no tour from the
                // minority colour: `solve` proves both.
                if closed || !graph.is_even(padded) {
                    return None;
                }
                let mut rng = Rng::new(seed);
                match Cover::with_cycle(graph, Arc::clone(parts), cycle, padded, &mut rng) {
                    Attempt::Tour(p) => p.iter().map(|&c| u64::from(index[c as usize])).collect(),
                    _ => return None,
                }
            }
        };
        let checked = if closed { verify_closed(board, moves, &path) } else { verify(board, moves, &path) };
        debug_assert!(checked.is_ok(), "a shared tour is not a tour: {checked:?}");
        checked.ok()?;
        let (repairs, work) = (self.repairs, self.work);
        Some(SolveResult { outcome: Outcome::Tour, path: Some(path), phase: Phase::Shared, repairs, work, proof: None })
    }
}

#[cfg(test)]
mod tests;
