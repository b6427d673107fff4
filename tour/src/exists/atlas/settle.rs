//! Settling one board of the atlas: every proof at hand, then the search
//! of [`crate::exists::search`] under a time budget, with no theorem
//! consulted; the knight's theorems are then held against the answer.

use std::time::Duration;

use super::at_hand::proofs_at_hand;
use super::entry::{Proof, Verdict};
use crate::cancel::within;
use crate::config::Configuration;
use crate::exists::{argued, is_knight, known, search, Claim, DecideError, Decision, Existence};

/// Why a board was not settled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettleError {
    /// Two methods disagree: a bug in one of them, so no answer is given.
    #[error("{board}: {found} and {proved} disagree about a {kind} tour: a bug, no answer given")]
    Contradiction {
        /// The board, `rule on shape`.
        board: String,
        /// `open` or `closed`.
        kind: &'static str,
        /// What says there is a tour.
        found: String,
        /// What says there is none.
        proved: String,
    },
    /// The search failed.
    #[error(transparent)]
    Decide(#[from] DecideError),
}

/// Settles open and closed tours of `config`, each under `budget` of
/// search: closed first, since a closed tour is an open one too.
pub fn settle_board(config: &Configuration, budget: Duration) -> Result<(Verdict, Verdict), SettleError> {
    let closed = settle(config, true, budget)?;
    let open = match closed {
        Verdict::Tour { .. } => {
            if let Claim::Impossible(why) = argued(config.board(), config.moves()).open {
                return Err(contradiction(config, false, "solve's closed tour", why));
            }
            Verdict::FromClosed
        }
        _ => settle(config, false, budget)?,
    };
    Ok((open, closed))
}

fn contradiction(config: &Configuration, closed: bool, found: &str, proved: &str) -> SettleError {
    SettleError::Contradiction {
        board: format!("({}) {}", config.moves().describe(), config.board().shape_string()),
        kind: if closed { "closed" } else { "open" },
        found: found.to_string(),
        proved: proved.to_string(),
    }
}

/// One kind of tour on `config`: no tour where two proofs agree before
/// any search (an argument, the census, the lack of a cycle cover), else
/// what the search finds within `budget`, its refutation routes joining
/// the proofs at hand.
pub fn settle(config: &Configuration, closed: bool, budget: Duration) -> Result<Verdict, SettleError> {
    let (board, moves) = (config.board(), config.moves());
    let pick = |e: Existence| if closed { e.closed } else { e.open };
    let proofs = proofs_at_hand(config, closed);
    let verdict = if proofs.len() >= 2 {
        Verdict::None([proofs[0], proofs[1]])
    } else {
        searched(config, closed, budget, proofs)?
    };
    // The theorems, never used above, must agree.
    let theorem = if is_knight(moves) { pick(known(board, moves)) } else { Claim::Unknown };
    match (&verdict, theorem) {
        (Verdict::None(p), Claim::Exists(why)) => Err(contradiction(config, closed, why, p[0].name())),
        (Verdict::Tour { .. }, Claim::Impossible(why)) => Err(contradiction(config, closed, "solve", why)),
        _ => Ok(verdict),
    }
}

/// The search under `budget`, `proofs` already at hand.
fn searched(
    config: &Configuration,
    closed: bool,
    budget: Duration,
    mut proofs: Vec<Proof>,
) -> Result<Verdict, SettleError> {
    let route = Proof::of_route;
    match within(budget, |cancel| search(config, closed, cancel))? {
        Decision::Tour { path, seed, budget } => match proofs.first() {
            Some(p) => Err(contradiction(config, closed, "solve", p.name())),
            None => Ok(Verdict::Tour { start: path.first().copied().unwrap_or(0), seed, budget }),
        },
        Decision::Refuted { routes: [a, b], .. } => Ok(Verdict::None([route(a), route(b)])),
        Decision::Unknown { starts_tried, largest_budget, refuted, starts_needed, confirmed, why } => {
            proofs.extend(confirmed.into_iter().map(route));
            if proofs.len() >= 2 {
                return Ok(Verdict::None([proofs[0], proofs[1]]));
            }
            let proved: Vec<String> = proofs.iter().map(Proof::to_string).collect();
            let mut tried = format!(
                "budget={}s solve-starts={starts_tried} work-budget={largest_budget} refuted={refuted}/{starts_needed}",
                budget.as_secs_f64()
            );
            if !proved.is_empty() {
                tried.push_str(&format!(" proved-by={}", proved.join(",")));
            }
            if let Some(why) = why {
                tried.push_str(&format!(" ({why})"));
            }
            Ok(Verdict::Unknown(tried))
        }
        // `search` consults neither theorems nor the atlas.
        d @ (Decision::Known { .. } | Decision::Atlas(_)) => Ok(Verdict::Unknown(format!("the search answered {d:?}"))),
    }
}
