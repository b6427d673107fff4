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
mod sat;
mod shared;
mod symmetry;

pub use shared::{shared_memory, Shared, SHARED_MIN_CELLS};

use crate::backtrack::{self, NODE_WORK};
use crate::board::Board;
use crate::cancel::Cancel;
use crate::moves::{Colouring, Moves};
use crate::outcome::Outcome;
use crate::verify::{verify, verify_closed};

use cover::{Attempt, Cover};
pub use graph::{board_proof, BOARD_PROOF_MAX_CELLS, SOLVE_MAX_PADDED};
use graph::{layout, Graph};
use posa::Walker;

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
    let cells = board.cells();
    if moves.dims() != board.dims() || start >= cells {
        return SolveResult::settled(Outcome::GaveUp, Phase::Budget, None);
    }
    if cells == 1 {
        let mut r = SolveResult::settled(Outcome::Tour, Phase::Proof, None);
        r.path = Some(vec![start]);
        return r;
    }
    if cells == 2 {
        // A closed tour of two cells goes there and back, which no cycle
        // cover (two distinct partners a cell) describes: the search decides.
        let r = backtrack::search_within(board, moves, start, closed, budget, cancel);
        let phase = if r.outcome == Outcome::GaveUp { Phase::Budget } else { Phase::Search };
        return SolveResult { outcome: r.outcome, path: r.path, phase, repairs: r.nodes, work: r.nodes, proof: None };
    }
    if let Some(proof) = colour_proof(board, moves, start, closed) {
        return SolveResult::settled(Outcome::NoTour, Phase::Proof, Some(proof));
    }
    let Some(layout) = layout(board, moves) else {
        return SolveResult::settled(Outcome::GaveUp, Phase::Budget, None);
    };
    let g = Graph::new(layout, moves.closed_under_negation());
    let layout = &g.layout;
    let padded_start = layout.padded(start);
    if let Some(proof) = g.impossible(padded_start, closed) {
        return SolveResult::settled(Outcome::NoTour, Phase::Proof, Some(proof));
    }

    let check = |path: &[u64]| if closed { verify_closed(board, moves, path) } else { verify(board, moves, path) };
    let unpad = |cells: &[u32]| cells.iter().map(|&c| layout.unpadded(c as usize)).collect::<Vec<u64>>();
    // The cycle-cover route needs a bipartite graph: every move changes colour.
    let bipartite = g.symmetric && moves.colouring() == Colouring::AlwaysChanges;
    let mut run = Run {
        walker: Walker::new(&g, seed, cancel),
        cover: None,
        cancel,
        bipartite,
        graph: &g,
        open_start: (!closed).then_some(padded_start),
        nodes: 0,
        search_work: 0,
    };
    // The budget counts `bt` nodes' worth of work, so that one budget means
    // about the same time for both; `work` counts steps of a walk.
    let budget = budget.saturating_mul(NODE_WORK);
    let share = ROTATION_WORK_PER_CELL.saturating_mul(cells).max(MIN_ROTATION_WORK).min(budget / 4 + 1);
    let mut found = None;
    // First one walk with a few repairs: on most boards it is the whole
    // answer, for the price of a walk. Then covers, whose proofs are cheap
    // and whose forced cells of degree 2 are what walks get wrong (they
    // are the fast route where walks keep getting stuck, as with (4,3)).
    let first_walk = FIRST_WALK_WORK_PER_CELL.saturating_mul(cells).min(budget);
    if rotate_extend(&mut run.walker, padded_start, closed, first_walk) {
        found = Some((Phase::Rotation, unpad(&run.walker.path)));
    }
    for round in 0.. {
        if found.is_some() {
            break;
        }
        let used = run.spent();
        if used >= budget || cancel.is_raised() {
            break;
        }
        let share = share.min(budget - used);
        match run.covers(padded_start, closed, if round == 0 { COVER_ATTEMPTS } else { u32::MAX }, share) {
            Some(Attempt::Tour(path)) => {
                found = Some((Phase::Cover, unpad(&path)));
                break;
            }
            Some(Attempt::NoCover) => {
                return run.no_tour(Phase::Proof, Some(NO_COVER));
            }
            _ => {}
        }
        if round == 0 && bipartite && cells <= EXACT_CELLS {
            // The exact search's root alone (a cover that its completions
            // join into one walk) refutes most starts of a small board
            // without a tour, for the price of a node, before a round of
            // walks is spent on them: on (4,3) 24x24, 86 starts of 100 in
            // 0.4 ms instead of 4.5 ms.
            let root = exact::search(&g, padded_start, closed, 1, cancel);
            run.search(root.nodes, exact_node_work(cells));
            if root.outcome == Outcome::NoTour {
                return run.no_tour(Phase::Search, None);
            }
        }
        let until = run.walker.work + share;
        if rotate_extend(&mut run.walker, padded_start, closed, until) {
            found = Some((Phase::Rotation, unpad(&run.walker.path)));
            break;
        }
        if round == 0 {
            // The exhaustive searches, on boards small enough for them to
            // settle things: first the search over paths (pruned by covers
            // where the graph is bipartite, bt's degree rules elsewhere)
            // with a share of what is left, which is the quick answer on
            // most; then the SAT route with all the rest, whose cuts refute
            // what a search over paths can only exhaust.
            // A bipartite board without a tour from any start is refuted
            // once for all of them before any start searches on its own:
            // on (4,3) 24x24 the starts the root leaves spent 33 ms each in
            // a search over paths that settles none of them.
            let refuted = (bipartite && g.symmetric && cells <= EXACT_CELLS.min(SAT_CELLS))
                .then(|| shared.and_then(|s| s.refuted(&g, moves, closed, bipartite, budget, cancel)))
                .flatten();
            let searched = if let Some((repairs, work)) = refuted {
                run.charge(repairs, work);
                Some((Outcome::NoTour, None))
            } else if bipartite && cells <= EXACT_CELLS {
                let node_work = exact_node_work(cells);
                let left = budget.saturating_sub(run.spent());
                let found = exact::search(&g, padded_start, closed, left / EXACT_SHARE / node_work, cancel);
                run.search(found.nodes, node_work);
                Some((found.outcome, found.path.map(|p| unpad(&p))))
            } else if !bipartite && cells <= SEARCH_CELLS {
                let left = budget.saturating_sub(run.spent());
                let search = backtrack::search_within(board, moves, start, closed, left / 8 / NODE_WORK, cancel);
                run.search(search.nodes, NODE_WORK);
                Some((search.outcome, search.path))
            } else {
                None
            };
            let searched = match searched {
                Some((Outcome::GaveUp, _)) | None if g.symmetric && cells <= SAT_CELLS => {
                    // A board without a tour from any start is refuted once
                    // for all of them; each start reports what that cost.
                    let refuted = shared.and_then(|s| s.refuted(&g, moves, closed, bipartite, budget, cancel));
                    if let Some((repairs, work)) = refuted {
                        run.charge(repairs, work);
                        Some((Outcome::NoTour, None))
                    } else {
                        let conflict_work = sat_conflict_work(cells);
                        let left = budget.saturating_sub(run.spent());
                        let found = sat::search(&g, padded_start, closed, bipartite, left / conflict_work, cancel);
                        run.search(found.conflicts, conflict_work);
                        Some((found.outcome, found.path.map(|p| unpad(&p))))
                    }
                }
                searched => searched,
            };
            match searched {
                Some((Outcome::Tour, path)) => {
                    found = path.map(|p| (Phase::Search, p));
                    break;
                }
                Some((Outcome::NoTour, _)) => {
                    return run.no_tour(Phase::Search, None);
                }
                _ => {}
            }
        }
    }
    // Every tour is verified here, whichever route built it.
    let path = found.filter(|(_, p)| {
        let ok = check(p);
        debug_assert!(ok.is_ok(), "solve built a path that is not a tour: {ok:?}");
        ok.is_ok()
    });
    let (outcome, phase, path) = match path {
        Some((phase, p)) => (Outcome::Tour, phase, Some(p)),
        None => (Outcome::GaveUp, Phase::Budget, None),
    };
    SolveResult { outcome, path, phase, repairs: run.repairs(), work: run.spent(), proof: None }
}

/// The routes' state and the effort spent, across rounds.
struct Run<'g> {
    walker: Walker<'g>,
    /// Built on first use: large boards seldom need it.
    cover: Option<Cover<'g>>,
    cancel: Cancel<'g>,
    bipartite: bool,
    graph: &'g Graph,
    open_start: Option<usize>,
    /// Exhaustive search nodes, and the work they count for.
    nodes: u64,
    search_work: u64,
}

impl Run<'_> {
    fn spent(&self) -> u64 {
        self.walker.work + self.cover.as_ref().map_or(0, |c| c.work) + self.search_work
    }

    /// Counts a search's `nodes`, each worth `node_work`.
    fn search(&mut self, nodes: u64, node_work: u64) {
        self.charge(nodes, nodes.saturating_mul(node_work));
    }

    /// Counts search effort: `nodes` repairs costing `work`.
    fn charge(&mut self, nodes: u64, work: u64) {
        self.nodes += nodes;
        self.search_work = self.search_work.saturating_add(work);
    }

    fn repairs(&self) -> u64 {
        self.walker.rotations + self.walker.truncations + self.nodes
    }

    /// The proof that no tour exists, with the effort it took.
    fn no_tour(&self, phase: Phase, proof: Option<&'static str>) -> SolveResult {
        let mut r = SolveResult::settled(Outcome::NoTour, phase, proof);
        (r.repairs, r.work) = (self.repairs(), self.spent());
        r
    }

    /// Up to `most` cover attempts within `share` work (see [`cover_attempts`]).
    fn covers(&mut self, start: usize, closed: bool, most: u32, share: u64) -> Option<Attempt> {
        if !self.bipartite {
            return None;
        }
        let (graph, open_start, cancel) = (self.graph, self.open_start, self.cancel);
        let cover = self.cover.get_or_insert_with(|| Cover::new(graph, open_start).cancelled_by(cancel));
        let until = cover.work + share;
        cover_attempts(cover, &mut self.walker, start, closed, most, until)
    }
}

/// Cover attempts until one gives a tour or proves there is none, `most`
/// of them or until the cover's work passes `until`. A cover whose cycles
/// do not merge is handed to the walker, which takes its cycles whole.
fn cover_attempts(
    cover: &mut Cover,
    walker: &mut Walker,
    start: usize,
    closed: bool,
    most: u32,
    until: u64,
) -> Option<Attempt> {
    let mut last = None;
    for _ in 0..most {
        if cover.work >= until || cover.stopped() {
            break;
        }
        match cover.attempt(start, &mut walker.rng) {
            Attempt::Stuck(first) => {
                let budget = walker.work + ROTATION_WORK_PER_CELL * cover.mates().len() as u64;
                if walker.attempt_from_cycles(&first, cover.mates(), closed, budget) {
                    return Some(Attempt::Tour(walker.path.clone()));
                }
                last = Some(Attempt::Stuck(first));
            }
            settled => return Some(settled),
        }
    }
    last
}

/// Work of the first walk on small boards, per cell: the walk and a few
/// rotations.
const FIRST_WALK_WORK_PER_CELL: u64 = 4;
/// Cover attempts in the first round.
const COVER_ATTEMPTS: u32 = 8;
const NO_COVER: &str = "no cover of the board by cycles exists (a maximum degree-2 matching of the bipartite move \
                        graph leaves a cell short), so no tour does";

/// Rotation-extension work per board cell in a round.
const ROTATION_WORK_PER_CELL: u64 = 2_000;
/// ... and at least this much, whatever the board.
const MIN_ROTATION_WORK: u64 = 200_000;
/// Boards up to this size get the exhaustive search.
const SEARCH_CELLS: u64 = 400;
/// Bipartite boards up to this size get the cover-pruned search.
const EXACT_CELLS: u64 = 1_000;
/// ... with this fraction (1/EXACT_SHARE) of what is left of the budget.
/// It settles quickly or not at all: on the boards of up to 1,000
/// cells (100 starts each) every start it settled took at most 4,400
/// nodes, on boards of 64 cells where a 64th of the budget is 24,000; on
/// (4,3) 24x24 it settled none of the starts that reached it, whatever its
/// share (a 64th, 2,700 nodes, cost each some 33 ms), which is why a board
/// without any tour is now refuted before it runs.
const EXACT_SHARE: u64 = 64;

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

/// Attempts until one succeeds, the walker's work passes `until` or it is
/// cancelled.
fn rotate_extend(walker: &mut Walker, start: usize, closed: bool, until: u64) -> bool {
    while walker.work < until && !walker.stopped() {
        if walker.attempt(start, closed, until) {
            return true;
        }
    }
    false
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
