//! The rounds in which `solve`'s routes take turns on one task, and the
//! effort they spend: kept apart from the entry points and the proofs
//! without search in [`super`], which decide whether rounds are needed.

use super::cover::{Attempt, Cover};
use super::graph::Graph;
use super::posa::Walker;
use super::shared::Shared;
use super::{exact, exact_node_work, sat, sat_conflict_work, Phase, SolveResult, EXACT_CELLS, NO_COVER, SAT_CELLS};
use crate::backtrack::{self, NODE_WORK};
use crate::board::Board;
use crate::cancel::Cancel;
use crate::moves::{Colouring, Moves};
use crate::outcome::Outcome;
use crate::verify::{verify, verify_closed};

/// What one `solve` is asked, as the rounds need it.
#[derive(Clone, Copy)]
pub(super) struct RunTask<'a> {
    pub board: &'a Board,
    pub moves: &'a Moves,
    /// The start, as a board cell and as a cell of the graph's layout.
    pub start: u64,
    pub padded_start: usize,
    pub closed: bool,
    /// The board's shared answers, where a sweep keeps them.
    pub shared: Option<&'a Shared>,
}

/// The routes' state and the effort spent, across rounds.
pub(super) struct Run<'g> {
    task: RunTask<'g>,
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

/// A tour found, and the phase that found it.
type Found = (Phase, Vec<u64>);

/// A proof that no tour exists: the phase that settled it, and why where
/// a proof without search says so.
struct NoTour(Phase, Option<&'static str>);

/// What a round leaves the rounds to do.
enum Round {
    /// Go on with another round.
    Continue,
    /// Stop with this tour (`None`: a search said tour without giving one).
    Stop(Option<Found>),
}

/// What an exhaustive search settled, with its tour (as board cells).
type Searched = Option<(Outcome, Option<Vec<u64>>)>;

impl<'g> Run<'g> {
    pub(super) fn new(graph: &'g Graph, task: RunTask<'g>, seed: u64, cancel: Cancel<'g>) -> Run<'g> {
        // The cycle-cover route needs a bipartite graph: every move changes colour.
        let bipartite = graph.symmetric && task.moves.colouring() == Colouring::AlwaysChanges;
        Run {
            walker: Walker::new(graph, seed, cancel),
            cover: None,
            cancel,
            bipartite,
            graph,
            open_start: (!task.closed).then_some(task.padded_start),
            nodes: 0,
            search_work: 0,
            task,
        }
    }

    /// Runs the rounds within `budget` work and says what they found.
    pub(super) fn solve(mut self, budget: u64) -> SolveResult {
        match self.rounds(budget) {
            Ok(found) => self.verified(found),
            Err(NoTour(phase, proof)) => self.no_tour(phase, proof),
        }
    }

    /// The routes in turn until one settles the task or the budget is spent.
    fn rounds(&mut self, budget: u64) -> Result<Option<Found>, NoTour> {
        let cells = self.task.board.cells();
        let (start, closed) = (self.task.padded_start, self.task.closed);
        let share = ROTATION_WORK_PER_CELL.saturating_mul(cells).max(MIN_ROTATION_WORK).min(budget / 4 + 1);
        // First one walk with a few repairs: on most boards it is the whole
        // answer, for the price of a walk. Then covers, whose proofs are cheap
        // and whose forced cells of degree 2 are what walks get wrong (they
        // are the fast route where walks keep getting stuck, as with (4,3)).
        let first_walk = FIRST_WALK_WORK_PER_CELL.saturating_mul(cells).min(budget);
        if rotate_extend(&mut self.walker, start, closed, first_walk) {
            return Ok(Some((Phase::Rotation, self.unpad(&self.walker.path))));
        }
        for round in 0.. {
            let used = self.spent();
            if used >= budget || self.cancel.is_raised() {
                break;
            }
            let share = share.min(budget - used);
            if let Round::Stop(found) = self.round(round == 0, share, budget)? {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// One round: covers, a walk's `share` of rotation-extension, and in
    /// the `first` round the exhaustive searches.
    fn round(&mut self, first: bool, share: u64, budget: u64) -> Result<Round, NoTour> {
        let cells = self.task.board.cells();
        let (start, closed) = (self.task.padded_start, self.task.closed);
        match self.covers(start, closed, if first { COVER_ATTEMPTS } else { u32::MAX }, share) {
            Some(Attempt::Tour(path)) => return Ok(Round::Stop(Some((Phase::Cover, self.unpad(&path))))),
            Some(Attempt::NoCover) => return Err(NoTour(Phase::Proof, Some(NO_COVER))),
            _ => {}
        }
        if first && self.bipartite && cells <= EXACT_CELLS {
            self.exact_root()?;
        }
        let until = self.walker.work + share;
        if rotate_extend(&mut self.walker, start, closed, until) {
            return Ok(Round::Stop(Some((Phase::Rotation, self.unpad(&self.walker.path)))));
        }
        if !first {
            return Ok(Round::Continue);
        }
        // The exhaustive searches, on boards small enough for them to
        // settle things: first the search over paths (pruned by covers
        // where the graph is bipartite, bt's degree rules elsewhere)
        // with a share of what is left, which is the quick answer on
        // most; then the SAT route with all the rest, whose cuts refute
        // what a search over paths can only exhaust.
        let searched = match self.search_paths(budget) {
            Some((Outcome::GaveUp, _)) | None if self.graph.symmetric && cells <= SAT_CELLS => self.search_sat(budget),
            searched => searched,
        };
        match searched {
            Some((Outcome::Tour, path)) => Ok(Round::Stop(path.map(|p| (Phase::Search, p)))),
            Some((Outcome::NoTour, _)) => Err(NoTour(Phase::Search, None)),
            _ => Ok(Round::Continue),
        }
    }

    /// The exact search's root alone (a cover that its completions join
    /// into one walk) refutes most starts of a small board without a tour,
    /// for the price of a node, before a round of walks is spent on them:
    /// on (4,3) 24x24, 86 starts of 100 in 0.4 ms instead of 4.5 ms.
    fn exact_root(&mut self) -> Result<(), NoTour> {
        let root = exact::search(self.graph, self.task.padded_start, self.task.closed, 1, self.cancel);
        self.search(root.nodes, exact_node_work(self.task.board.cells()));
        if root.outcome == Outcome::NoTour {
            return Err(NoTour(Phase::Search, None));
        }
        Ok(())
    }

    /// The search over paths: cover-pruned on bipartite boards, `bt`
    /// elsewhere, each on boards small enough for it.
    fn search_paths(&mut self, budget: u64) -> Searched {
        let cells = self.task.board.cells();
        let task = self.task;
        // A bipartite board without a tour from any start is refuted
        // once for all of them before any start searches on its own:
        // on (4,3) 24x24 the starts the root leaves spent 33 ms each in
        // a search over paths that settles none of them.
        let refuted = (self.bipartite && self.graph.symmetric && cells <= EXACT_CELLS.min(SAT_CELLS))
            .then(|| self.refuted(budget))
            .flatten();
        if let Some((repairs, work)) = refuted {
            self.charge(repairs, work);
            Some((Outcome::NoTour, None))
        } else if self.bipartite && cells <= EXACT_CELLS {
            let node_work = exact_node_work(cells);
            let left = budget.saturating_sub(self.spent());
            let found =
                exact::search(self.graph, task.padded_start, task.closed, left / EXACT_SHARE / node_work, self.cancel);
            self.search(found.nodes, node_work);
            Some((found.outcome, found.path.map(|p| self.unpad(&p))))
        } else if !self.bipartite && cells <= SEARCH_CELLS {
            let left = budget.saturating_sub(self.spent());
            let (board, moves, start, closed) = (task.board, task.moves, task.start, task.closed);
            let search = backtrack::search_within(board, moves, start, closed, left / 8 / NODE_WORK, self.cancel);
            self.search(search.nodes, NODE_WORK);
            Some((search.outcome, search.path))
        } else {
            None
        }
    }

    /// The SAT route, with all that is left of the budget.
    fn search_sat(&mut self, budget: u64) -> Searched {
        // A board without a tour from any start is refuted once
        // for all of them; each start reports what that cost.
        if let Some((repairs, work)) = self.refuted(budget) {
            self.charge(repairs, work);
            return Some((Outcome::NoTour, None));
        }
        let conflict_work = sat_conflict_work(self.task.board.cells());
        let left = budget.saturating_sub(self.spent());
        let (start, closed) = (self.task.padded_start, self.task.closed);
        let found = sat::search(self.graph, start, closed, self.bipartite, left / conflict_work, self.cancel);
        self.search(found.conflicts, conflict_work);
        Some((found.outcome, found.path.map(|p| self.unpad(&p))))
    }

    /// The repairs and work of refuting the whole board, where the shared
    /// answers have (or find) a refutation.
    fn refuted(&self, budget: u64) -> Option<(u64, u64)> {
        let (moves, closed) = (self.task.moves, self.task.closed);
        self.task.shared.and_then(|s| s.refuted(self.graph, moves, closed, self.bipartite, budget, self.cancel))
    }

    /// The tour found, as `solve` answers it: verified here, whichever
    /// route built it.
    fn verified(&self, found: Option<Found>) -> SolveResult {
        let (board, moves) = (self.task.board, self.task.moves);
        let path = found.filter(|(_, p)| {
            let ok = if self.task.closed { verify_closed(board, moves, p) } else { verify(board, moves, p) };
            debug_assert!(ok.is_ok(), "solve built a path that is not a tour: {ok:?}");
            ok.is_ok()
        });
        let (outcome, phase, path) = match path {
            Some((phase, p)) => (Outcome::Tour, phase, Some(p)),
            None => (Outcome::GaveUp, Phase::Budget, None),
        };
        SolveResult { outcome, path, phase, repairs: self.repairs(), work: self.spent(), proof: None }
    }

    /// Padded cells as board cells.
    fn unpad(&self, cells: &[u32]) -> Vec<u64> {
        cells.iter().map(|&c| self.graph.layout.unpadded(c as usize)).collect()
    }

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
/// Rotation-extension work per board cell in a round.
const ROTATION_WORK_PER_CELL: u64 = 2_000;
/// ... and at least this much, whatever the board.
const MIN_ROTATION_WORK: u64 = 200_000;
/// Boards up to this size get the exhaustive search.
const SEARCH_CELLS: u64 = 400;
/// The cover-pruned search gets this fraction (1/EXACT_SHARE) of what is
/// left of the budget.
/// It settles quickly or not at all: on the boards of up to 1,000
/// cells (100 starts each) every start it settled took at most 4,400
/// nodes, on boards of 64 cells where a 64th of the budget is 24,000; on
/// (4,3) 24x24 it settled none of the starts that reached it, whatever its
/// share (a 64th, 2,700 nodes, cost each some 33 ms), which is why a board
/// without any tour is now refuted before it runs.
const EXACT_SHARE: u64 = 64;

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
