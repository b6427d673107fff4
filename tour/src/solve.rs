//! `solve`: a tour from a given start wherever one exists, for any leaper,
//! any D, open or closed, with proof where there is none.
//!
//! It combines four routes, cheapest proof or tour first:
//!
//! 1. **Proofs without search**: the colouring (every move changes colour
//!    on a board of odd cells: the start must be on the majority colour, and
//!    no cycle exists; no move changes colour: nothing exists), reachability
//!    and degrees (a cell out of reach, two dead ends, a cell a cycle cannot
//!    pass through). See `graph`.
//! 2. **Rotation-extension** (`posa`): Warnsdorff's walk, repaired by
//!    steered Posa rotations whenever it is stuck, and by cutting its tail
//!    when rotations cannot help, restarted when a repair runs long. One
//!    walk is tried first: on most boards it is the whole answer.
//! 3. **Cycle covers** (`cover`, bipartite graphs: every rule whose sum is
//!    odd): a random 2-factor (a most-constrained-first greedy completed by
//!    augmenting paths), its cycles merged by two-edge exchanges, or taken
//!    whole by the walker when they will not merge. When no 2-factor exists
//!    (with virtual cells for an open tour from the start), that is proof
//!    that no tour does. Tried right after the first walk: it is the fast
//!    route where walks keep getting stuck ((4,3) on any board) and on
//!    small boards, whose forced cells of degree 2 defeat walks.
//! 4. **Exhaustive search** on small boards, settling them both ways: on
//!    bipartite boards of up to 1,000 cells the cover-pruned search of
//!    `exact` (a node without a completion of its cover, or whose
//!    unvisited cells the completions cannot join into one walk, holds no
//!    tour; exhausted states are remembered), whose root alone is tried
//!    after the first covers, where it refutes most starts of a board
//!    without a tour; elsewhere [`crate::backtrack`] (in its closed mode
//!    for a closed tour) on up to 400 cells; with a sixty-fourth and an
//!    eighth of what is left of the budget respectively. Then, with all
//!    the rest, `sat` on symmetric boards of up to 1,000 cells: a
//!    cycle through every cell as satisfiability (two moves a cell) with a
//!    cut for every subtour a solution shows, which refutes in seconds
//!    starts that the searches over paths cannot exhaust.
//!
//! Then covers and walks take turns until the budget is spent.
//!
//! A sweep asks for tours from many starts of one board: [`Shared`] finds
//! one tour per board (of 1,000 cells or more, every move changing
//! colour) and gives each start its own from it: a closed tour cut at the
//! start on boards of even cells, a shared cover path repaired locally on
//! boards of odd cells. On small boards it does the opposite: where a
//! start would go to the exhaustive searches (on bipartite boards, before
//! the search over paths; elsewhere before the SAT route), it first asks
//! once for the whole board whether any start has a tour, and a board
//! without one is refuted for all its starts at once.
//!
//! Every tour is checked by [`crate::verify`] (or [`crate::verify_closed`])
//! before it is returned: a bug can make `solve` give up, never lie.

mod cover;
mod exact;
mod failures;
pub(crate) mod graph;
mod posa;
pub(crate) mod refute;
mod rounds;
mod sat;
mod shared;
mod symmetry;

pub use shared::{shared_memory, Shared, SHARED_MIN_CELLS};

use crate::backtrack::{self, NODE_WORK};
use crate::board::Board;
use crate::cancel::Cancel;
use crate::moves::{Colouring, Moves};
use crate::outcome::Outcome;

use cover::Cover;
pub use graph::{board_proof, BOARD_PROOF_MAX_CELLS, SOLVE_MAX_PADDED};
use graph::{layout, Graph};
use rounds::{Run, RunTask};

/// Which phase settled a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// The colouring, reachability, degrees or the lack of a cycle cover
    /// proved no tour exists.
    Proof,
    /// Rotation-extension found the tour.
    Rotation,
    /// A merged cycle cover gave the tour.
    Cover,
    /// The board's shared tour, found once for all its starts: a closed
    /// tour cut at the start, or a path repaired to begin there (see
    /// [`Shared`]).
    Shared,
    /// The exhaustive search found the tour or proved there is none.
    Search,
    /// Nothing settled it within the budget.
    Budget,
}

/// What `solve` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SolveResult {
    /// Tour (verified, with `path`), NoTour (proven) or GaveUp (budget).
    pub outcome: Outcome,
    /// The tour as cell indices from the start.
    pub path: Option<Vec<u64>>,
    /// Which phase settled it.
    pub phase: Phase,
    /// Rotations made plus search nodes expanded: the repair effort.
    pub repairs: u64,
    /// Work spent, in the budget's units: walk steps, cells reversed and
    /// searched, search nodes.
    pub work: u64,
    /// Why no tour exists, when a proof without search says so.
    pub proof: Option<&'static str>,
}

impl SolveResult {
    fn settled(outcome: Outcome, phase: Phase, proof: Option<&'static str>) -> SolveResult {
        SolveResult { outcome, path: None, phase, repairs: 0, work: 0, proof }
    }
}

const COLOUR_OPEN: &str = "every move changes colour and the board has odd cells, so a tour starts on the majority \
                           colour";
const COLOUR_CLOSED: &str = "every move changes colour and the board has odd cells, so no cycle covers it";
const COLOUR_NEVER: &str = "no move changes colour, so a walk never leaves its start's colour";

/// Bytes a thread's `solve` may hold beyond its walks and covers: the
/// exhaustive search's state on boards small enough for it (a cell's
/// worth of arrays per padded cell, and its table of exhausted states).
pub fn search_memory(cells: u64, padded: u64) -> u64 {
    if cells <= EXACT_CELLS.max(SAT_CELLS) {
        padded.saturating_mul(96).saturating_add(failures::MAX_BYTES as u64).saturating_add(sat::MEMORY)
    } else {
        0
    }
}

/// Searches for a tour of `board` from cell `start` with `moves` (a closed
/// one when `closed`), deterministically for a given `seed`, spending at
/// most about `budget` nodes of [`crate::backtrack`]'s worth of work (a node
/// counts as NODE_WORK = 8 steps of a walk, the unit of [`SolveResult::work`]).
pub fn solve(board: &Board, moves: &Moves, start: u64, closed: bool, seed: u64, budget: u64) -> SolveResult {
    solve_in(board, moves, start, closed, seed, budget, None, Cancel::NEVER)
}

/// [`solve`], asking `shared` (where given) whether the board has no tour
/// from any start before proving it for this one; every route gives up
/// early once `cancel` is raised (the caller then reports no result).
#[allow(clippy::too_many_arguments)]
fn solve_in(
    board: &Board,
    moves: &Moves,
    start: u64,
    closed: bool,
    seed: u64,
    budget: u64,
    shared: Option<&Shared>,
    cancel: Cancel,
) -> SolveResult {
    if let Some(settled) = settle_tiny(board, moves, start, closed, budget, cancel) {
        return settled;
    }
    if let Some(proof) = colour_proof(board, moves, start, closed) {
        return SolveResult::settled(Outcome::NoTour, Phase::Proof, Some(proof));
    }
    let Some(layout) = layout(board, moves) else {
        return SolveResult::settled(Outcome::GaveUp, Phase::Budget, None);
    };
    let g = Graph::new(layout, moves.closed_under_negation());
    let padded_start = g.layout.padded(start);
    if let Some(proof) = g.impossible(padded_start, closed) {
        return SolveResult::settled(Outcome::NoTour, Phase::Proof, Some(proof));
    }
    let task = RunTask { board, moves, start, padded_start, closed, shared };
    // The budget counts `bt` nodes' worth of work, so that one budget means
    // about the same time for both; `work` counts steps of a walk.
    let budget = budget.saturating_mul(NODE_WORK);
    Run::new(&g, task, seed, cancel).solve(budget)
}

/// The answers that need no graph: a task that does not fit its board, and
/// boards of one or two cells.
fn settle_tiny(
    board: &Board,
    moves: &Moves,
    start: u64,
    closed: bool,
    budget: u64,
    cancel: Cancel,
) -> Option<SolveResult> {
    let cells = board.cells();
    if moves.dims() != board.dims() || start >= cells {
        return Some(SolveResult::settled(Outcome::GaveUp, Phase::Budget, None));
    }
    if cells == 1 {
        let mut r = SolveResult::settled(Outcome::Tour, Phase::Proof, None);
        r.path = Some(vec![start]);
        return Some(r);
    }
    if cells == 2 {
        // A closed tour of two cells goes there and back, which no cycle
        // cover (two distinct partners a cell) describes: the search decides.
        let r = backtrack::search_within(board, moves, start, closed, budget, cancel);
        let phase = if r.outcome == Outcome::GaveUp { Phase::Budget } else { Phase::Search };
        return Some(SolveResult {
            outcome: r.outcome,
            path: r.path,
            phase,
            repairs: r.nodes,
            work: r.nodes,
            proof: None,
        });
    }
    None
}

const NO_COVER: &str = "no cover of the board by cycles exists (a maximum degree-2 matching of the bipartite move \
                        graph leaves a cell short), so no tour does";

/// Bipartite boards up to this size get the cover-pruned search.
const EXACT_CELLS: u64 = 1_000;

/// Work units a node of the cover-pruned search counts for: it repairs
/// the cover, then searches the whole residual graph twice (components,
/// then cut cells). Measured: about 32 us a node on (4,3) 24x24 (576
/// cells), where a walk step takes about 3 ns, so some 16 steps a cell.
fn exact_node_work(cells: u64) -> u64 {
    NODE_WORK + 16 * cells
}
/// Boards up to this size get the SAT route (symmetric move sets).
const SAT_CELLS: u64 = 1_000;

/// Work units a conflict of the SAT route counts for: measured, 27 to
/// 135 us a conflict on (4,3) 24x24 (576 cells), where a unit of work
/// takes about 1.5 ns. 48 units a cell is the common case (about 40 us);
/// the hardest refutations (30,000 to 40,000 conflicts, 4 to 5 s) run up to
/// three times longer than their share of the budget says.
fn sat_conflict_work(cells: u64) -> u64 {
    NODE_WORK + 48 * cells
}

/// Whether the board has a cover by cycles (a 2-factor), which a closed
/// tour is one of: `Some(false)` proves no closed tour exists. None where
/// the check does not apply (a move set that is not bipartite and
/// undirected, or a layout too large for solve).
pub fn cycle_cover_exists(board: &Board, moves: &Moves) -> Option<bool> {
    if moves.dims() != board.dims() || moves.colouring() != Colouring::AlwaysChanges || !moves.closed_under_negation() {
        return None;
    }
    let g = Graph::new(layout(board, moves)?, true);
    Some(Cover::new(&g, None).exists())
}

/// Why [`cycle_cover_exists`] answering false proves no closed tour.
pub const NO_CYCLE_COVER: &str = NO_COVER;

/// A proof from the colouring that no tour exists from `start`.
fn colour_proof(board: &Board, moves: &Moves, start: u64, closed: bool) -> Option<&'static str> {
    match moves.colouring() {
        Colouring::NeverChanges => Some(COLOUR_NEVER),
        Colouring::AlwaysChanges if board.cells() % 2 == 1 => {
            if closed {
                Some(COLOUR_CLOSED)
            } else {
                let odd_start = board.coords(start).iter().map(|&x| x as u64).sum::<u64>() % 2 == 1;
                odd_start.then_some(COLOUR_OPEN)
            }
        }
        _ => None,
    }
}
