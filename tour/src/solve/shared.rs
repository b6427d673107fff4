//! What `solve` keeps of a board across its tasks: one closed tour, found
//! once and cut at each task's start.
//!
//! A closed tour is a path from every one of its cells, so on a board that
//! has one, every start's open tour (and closed tour) is that cycle read
//! from the start. A sweep asks for tours from many starts of one board;
//! finding the cycle once instead of a tour per start takes (4,3) 198x198
//! from some 10 ms a task to the cost of copying and verifying a path.
//!
//! The cycle depends on the board, the moves and the budget only (a fixed
//! seed and start), never on which task asked first: every task gets the
//! same figures whatever the order or the number of threads. Where the
//! cycle is not found within its share of the budget (or cannot exist),
//! each task runs [`super::solve`] as before.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::{solve, Phase, SolveResult};
use crate::board::Board;
use crate::exists::{known, Claim};
use crate::moves::{Colouring, Moves};
use crate::outcome::Outcome;
use crate::verify::{verify, verify_closed};

/// Boards below this many cells solve each start on its own: it takes
/// well under a millisecond there, and small boards are where closed tours
/// are often missing.
pub const SHARED_MIN_CELLS: u64 = 1_000;

/// Budget of the search for the shared cycle, in search nodes a cell
/// (about 256 walk steps): a closed tour of (4,3) 198x198 takes some 16
/// steps a cell, so this is room for many cover attempts, and a board
/// without a cycle wastes a bounded, one-off share.
const NODES_PER_CELL: u64 = 32;

/// The seed of the shared cycle's search: fixed, so the cycle is a
/// function of the board alone.
const SEED: u64 = 0x5eed_c1c1e;

/// One board's closed tours across tasks, keyed by the budget that bounds
/// their search (a sweep has one). Cheap to share across threads.
#[derive(Debug, Default)]
pub struct Shared {
    cycles: Mutex<HashMap<u64, Arc<Slot>>>,
}

/// A board's cycle for one budget: searched for once, None if not found.
type Slot = OnceLock<Option<Arc<Cycle>>>;

/// A closed tour and what finding it cost.
#[derive(Debug)]
struct Cycle {
    /// The tour from cell 0, as cell indices.
    cells: Vec<u64>,
    /// Where each cell is in `cells`.
    at: Vec<u32>,
    repairs: u64,
    work: u64,
}

impl Shared {
    /// [`super::solve`], cutting the board's shared closed tour at `start`
    /// where the board has one (see the module docs). Same arguments.
    pub fn solve(&self, board: &Board, moves: &Moves, start: u64, closed: bool, seed: u64, budget: u64) -> SolveResult {
        if start < board.cells() {
            if let Some(r) = self.cycle(board, moves, budget).and_then(|c| c.cut(board, moves, start, closed)) {
                return r;
            }
        }
        solve(board, moves, start, closed, seed, budget)
    }

    /// The board's closed tour within `budget`, searched for by the first
    /// task that asks (the others wait for it).
    fn cycle(&self, board: &Board, moves: &Moves, budget: u64) -> Option<Arc<Cycle>> {
        if !worth_sharing(board, moves) {
            return None;
        }
        let budget = budget.min(NODES_PER_CELL.saturating_mul(board.cells()));
        let slot = {
            // A panic while holding this lock leaves the map whole.
            let mut cycles = self.cycles.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(cycles.entry(budget).or_default())
        };
        slot.get_or_init(|| Cycle::find(board, moves, budget)).clone()
    }
}

/// Bytes [`Shared`] holds for a board, at most: the cycle (8 bytes a cell)
/// and its index (4).
pub fn shared_memory(board: &Board, moves: &Moves) -> u64 {
    if worth_sharing(board, moves) {
        board.cells().saturating_mul(12)
    } else {
        0
    }
}

/// Boards large enough to gain, where the cycle route (covers) applies and
/// nothing rules a closed tour out: bipartite leapers with an even number
/// of cells (with odd cells no cycle alternates colours).
fn worth_sharing(board: &Board, moves: &Moves) -> bool {
    board.cells() >= SHARED_MIN_CELLS
        && board.cells().is_multiple_of(2)
        && board.cells() <= u32::MAX as u64
        && moves.dims() == board.dims()
        && moves.closed_under_negation()
        && moves.colouring() == Colouring::AlwaysChanges
        && !matches!(known(board, moves).closed, Claim::Impossible(_))
}

impl Cycle {
    fn find(board: &Board, moves: &Moves, budget: u64) -> Option<Arc<Cycle>> {
        let r = solve(board, moves, 0, true, SEED, budget);
        let cells = r.path.filter(|_| r.outcome == Outcome::Tour)?;
        let mut at = vec![0u32; cells.len()];
        for (i, &c) in cells.iter().enumerate() {
            at[c as usize] = i as u32;
        }
        Some(Arc::new(Cycle { cells, at, repairs: r.repairs, work: r.work }))
    }

    /// The tour read from `start`, verified; None if it does not verify
    /// (a bug: the task then searches on its own).
    fn cut(&self, board: &Board, moves: &Moves, start: u64, closed: bool) -> Option<SolveResult> {
        let at = self.at[start as usize] as usize;
        let mut path = Vec::with_capacity(self.cells.len());
        path.extend_from_slice(&self.cells[at..]);
        path.extend_from_slice(&self.cells[..at]);
        let checked = if closed { verify_closed(board, moves, &path) } else { verify(board, moves, &path) };
        debug_assert!(checked.is_ok(), "the shared cycle is not a tour: {checked:?}");
        checked.ok()?;
        // Every task reports what the cycle cost, whichever task found it.
        let (repairs, work) = (self.repairs, self.work);
        Some(SolveResult { outcome: Outcome::Tour, path: Some(path), phase: Phase::Shared, repairs, work, proof: None })
    }
}
