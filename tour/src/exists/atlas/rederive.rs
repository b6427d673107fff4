//! An atlas tour, made again: `solve` from the recorded start with the
//! recorded seed and work budget on the board with sides ascending (as the
//! atlas keys it), carried to the asked board's axis order and verified
//! there.

use super::entry::Verdict;
use super::Atlas;
use crate::board::Board;
use crate::config::Configuration;
use crate::method::Method;
use crate::outcome::Outcome;
use crate::runner::{Runner, TaskOptions};
use crate::verify::{verify, verify_closed};

/// Why an atlas tour was not made again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RederiveError {
    /// `solve` did not give a verified tour from the recorded start, seed
    /// and budget: the atlas is stale (made by another engine) or wrong.
    #[error(
        "the atlas's {kind} tour of {board} (start {start}, seed {seed}, budget {budget}) was not found again: {why}"
    )]
    NotFound {
        /// `open` or `closed`.
        kind: &'static str,
        /// The board, as the atlas keys it.
        board: String,
        /// The recorded start.
        start: u64,
        /// The recorded seed.
        seed: u64,
        /// The recorded work budget.
        budget: u64,
        /// What happened instead.
        why: String,
    },
    /// The engine cannot run on the board.
    #[error(transparent)]
    Engine(#[from] crate::Error),
}

/// A tour made again, with what made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rederived {
    /// Its cells on the asked board, in order.
    pub path: Vec<u64>,
    /// The closed tour of the board (an open entry may point to it).
    pub closed: bool,
    /// The recorded seed.
    pub seed: u64,
    /// The recorded work budget.
    pub budget: u64,
}

impl Atlas {
    /// The tour the atlas records for `config` (closed or open), made
    /// again; None where it records none.
    pub fn tour(&self, config: &Configuration, closed: bool) -> Result<Option<Rederived>, RederiveError> {
        let (board, moves) = (config.board(), config.moves());
        let Some(entry) = self.get(board, moves, closed) else { return Ok(None) };
        let (verdict, closed) = match &entry.verdict {
            Verdict::FromClosed => match self.get(board, moves, true) {
                Some(c) => (&c.verdict, true),
                None => return Ok(None),
            },
            v => (v, closed),
        };
        let &Verdict::Tour { start, seed, budget } = verdict else { return Ok(None) };
        // The atlas's board: sides ascending; `order[i]` is the asked
        // board's axis of its axis i.
        let mut order: Vec<usize> = (0..board.dims()).collect();
        order.sort_by_key(|&i| board.sides()[i]);
        let sorted: Vec<u32> = order.iter().map(|&i| board.sides()[i]).collect();
        let atlas_board = Board::new(&sorted)?;
        let runner = Runner::new(Configuration::new(atlas_board.clone(), moves.clone())?)?;
        let options = TaskOptions { seed, budget, closed, record_path: true, ..TaskOptions::default() };
        let kind = if closed { "closed" } else { "open" };
        let not_found =
            |why: String| RederiveError::NotFound { kind, board: atlas_board.shape_string(), start, seed, budget, why };
        if start >= atlas_board.cells() {
            return Err(not_found("the start is off the board".into()));
        }
        let r = runner.run_task(&mut runner.workspace(), start, Method::Solve, &options);
        let path = match (r.outcome, r.path) {
            (Outcome::Tour, Some(path)) => path,
            (outcome, _) => return Err(not_found(format!("solve gave {outcome:?}"))),
        };
        let mut coords = vec![0u64; board.dims()];
        let mut carried = Vec::with_capacity(path.len());
        for c in path {
            for (i, y) in atlas_board.coords(c).into_iter().enumerate() {
                coords[order[i]] = u64::from(y);
            }
            carried.push(board.index_of(&coords)?);
        }
        let checked = if closed { verify_closed(board, moves, &carried) } else { verify(board, moves, &carried) };
        checked
            .map_err(|e| not_found(format!("the tour carried to {} fails verification: {e}", board.shape_string())))?;
        Ok(Some(Rederived { path: carried, closed, seed, budget }))
    }
}
