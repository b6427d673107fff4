//! Deciding what no theorem or argument settles: the project's own routes
//! run on a configuration until a flag stops them (`ksweep exists
//! --budget`).
//!
//! A tour is looked for by `solve` from one start after another, more
//! starts and a doubled work budget each round, and is verified before it
//! is returned. "No tour" needs two independent proofs (docs/methods.md):
//! after the first round, on a board the refutation routes take, the
//! search route and the SAT route of `solve::refute`, which share no
//! search code, each run to their end from every start a refutation needs
//! (one for a closed tour, which passes every cell; all of them for an
//! open one). Both must prove it; should one prove it and the other find
//! a tour, that is an error, never an answer.

use super::atlas::{proofs_at_hand, Atlas, ParseError, Proof, RederiveError, Verdict};
use super::{argued, gcd, proven, Claim, Existence};
use crate::cancel::Cancel;
use crate::config::Configuration;
use crate::method::Method;
use crate::outcome::Outcome;
use crate::runner::{Runner, TaskOptions, TaskResult, Workspace, DEFAULT_BUDGET};
use crate::solve::{cycle_cover_exists, refute, NO_CYCLE_COVER};

/// Work budget of `solve`'s first round, a tenth of a task's default: most
/// boards with a tour give one at once.
const FIRST_BUDGET: u64 = DEFAULT_BUDGET / 10;

/// Starts of `solve`'s first round (open tours); each round doubles them.
const FIRST_STARTS: usize = 16;

/// Largest board searched at all: `solve`'s graph and covers take some
/// 100 bytes a cell, so this is about 400 MB.
pub const SEARCH_MAX_CELLS: u64 = 1 << 22;

/// Largest board the refutation routes are tried on: the SAT route's and
/// the exact search's limit in `solve`.
const REFUTE_MAX_CELLS: u64 = 1_000;

/// How one kind of tour (open or closed) was decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Settled by a theorem or an argument ([`proven`]), or for a closed
    /// tour by the lack of a cycle cover. A "no tour" comes with the second,
    /// independent proof found for it: one that needs no search
    /// ([`Proof::Argument`], [`Proof::Census`], [`Proof::Cover`]), else a
    /// refutation route of the search within the budget; None when neither
    /// proved it, and the first proof stands alone.
    Known {
        /// The claim and its first proof.
        claim: Claim,
        /// The second proof of a "no tour".
        second: Option<Proof>,
    },
    /// A tour, verified.
    Tour {
        /// Its cells in order from its first.
        path: Vec<u64>,
        /// The seed `solve` found it with.
        seed: u64,
        /// The work budget of that `solve` task.
        budget: u64,
    },
    /// No tour, proven by two routes that share no search code, each from
    /// every one of `starts` starts.
    Refuted {
        /// Starts a refutation takes: 1 for a closed tour, every cell for
        /// an open one.
        starts: u64,
        /// Of those, the ones the search route searched: one of each orbit
        /// under the board's symmetries.
        searched: u64,
        /// The two routes, by name, and the effort of each (search nodes,
        /// SAT conflicts).
        routes: [(&'static str, u64); 2],
    },
    /// No tour, by the shipped atlas's two proofs (`ksweep atlas`).
    Atlas([Proof; 2]),
    /// Neither before the flag was raised: what was spent.
    Unknown {
        /// Starts `solve` ran from.
        starts_tried: u64,
        /// The largest work budget a `solve` task had.
        largest_budget: u64,
        /// Starts `solve` refuted.
        refuted: u64,
        /// Starts a refutation takes.
        starts_needed: u64,
        /// Refutation routes that proved there is no tour before the flag
        /// was raised (both would have made it [`Decision::Refuted`]),
        /// with their effort.
        confirmed: Vec<(&'static str, u64)>,
        /// Why nothing was searched, or why the refutation routes did not
        /// run or finish.
        why: Option<String>,
    },
}

/// Why no decision was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecideError {
    /// A route found a tour from a start the other proved has none: a
    /// bug in one of them, so no answer is given.
    #[error(
        "{route} found a {kind} tour from cell {start} that {refuted_by} proved impossible: a bug, no answer given"
    )]
    Disagreement {
        /// The route that found it.
        route: &'static str,
        /// The route that proved there is none.
        refuted_by: &'static str,
        /// `open` or `closed`.
        kind: &'static str,
        /// The start, as a cell index.
        start: u64,
    },
    /// The engine cannot run on the configuration.
    #[error(transparent)]
    Engine(#[from] crate::Error),
    /// The shipped atlas does not read: a bug in the build.
    #[error("the shipped atlas: {0}")]
    Atlas(#[from] ParseError),
    /// The atlas's tour was not made again.
    #[error(transparent)]
    Rederive(#[from] RederiveError),
}

/// What is decided about open (or with `closed`, closed) tours of
/// `config`: [`proven`] where it speaks, then the shipped atlas (its tour
/// made again, or its two proofs), then for closed tours the lack of a
/// cover by cycles ([`cycle_cover_exists`]), else the search above, until
/// `cancel` is raised.
pub fn decide(config: &Configuration, closed: bool, cancel: Cancel) -> Result<Decision, DecideError> {
    decide_with(config, closed, true, cancel)
}

/// [`decide`]; with `atlas` false it searches where the shipped atlas
/// would answer (`ksweep exists --no-atlas`, to check the atlas).
pub fn decide_with(config: &Configuration, closed: bool, atlas: bool, cancel: Cancel) -> Result<Decision, DecideError> {
    let (board, moves) = (config.board(), config.moves());
    let pick = |e: Existence| if closed { e.closed } else { e.open };
    match pick(proven(board, moves)) {
        Claim::Unknown => {}
        claim @ Claim::Exists(_) => return Ok(Decision::Known { claim, second: None }),
        claim @ Claim::Impossible(_) => {
            let first = if pick(argued(board, moves)) == Claim::Unknown { Proof::Theorem } else { Proof::Argument };
            let second = second_proof(config, closed, first, cancel)?;
            return Ok(Decision::Known { claim, second });
        }
    }
    if atlas {
        if let Some(d) = from_atlas(config, closed)? {
            return Ok(d);
        }
    }
    let cells = board.cells();
    if cells > SEARCH_MAX_CELLS {
        let why = format!("the board's {cells} cells are over the search's limit of {SEARCH_MAX_CELLS}");
        let t = Tally { needed: Vec::new(), refuted: Vec::new(), tried: 0, budget: 0 };
        return Ok(t.unknown(Vec::new(), Some(why)));
    }
    // A maximum degree-2 matching (what solve's cycle covers start from)
    // may prove there is no closed tour at once.
    if closed && cycle_cover_exists(board, moves) == Some(false) {
        let second = second_proof(config, closed, Proof::Cover, cancel)?;
        return Ok(Decision::Known { claim: Claim::Impossible(NO_CYCLE_COVER), second });
    }
    search(config, closed, cancel)
}

/// A proof of no tour other than `first`: one at hand without search, else
/// a refutation route of [`search`] on a board the routes take, until
/// `cancel`. A tour found instead is an error, never an answer.
fn second_proof(
    config: &Configuration,
    closed: bool,
    first: Proof,
    cancel: Cancel,
) -> Result<Option<Proof>, DecideError> {
    if let Some(p) = proofs_at_hand(config, closed).into_iter().find(|&p| p != first) {
        return Ok(Some(p));
    }
    let cells = config.board().cells();
    if cells <= 1 || cells > REFUTE_MAX_CELLS {
        return Ok(None);
    }
    Ok(match search(config, closed, cancel)? {
        Decision::Refuted { routes: [a, _], .. } => Some(Proof::of_route(a)),
        Decision::Unknown { confirmed, .. } => confirmed.first().copied().map(Proof::of_route),
        Decision::Tour { path, .. } => {
            return Err(DecideError::Disagreement {
                route: "solve",
                refuted_by: first.name(),
                kind: if closed { "closed" } else { "open" },
                start: path.first().copied().unwrap_or(0),
            })
        }
        Decision::Known { .. } | Decision::Atlas(_) => None,
    })
}

/// What the shipped atlas decides, its tour made again; None where it has
/// no entry or says unknown.
fn from_atlas(config: &Configuration, closed: bool) -> Result<Option<Decision>, DecideError> {
    let atlas = Atlas::embedded().map_err(|e| e.clone())?;
    if let Some(t) = atlas.tour(config, closed)? {
        return Ok(Some(Decision::Tour { path: t.path, seed: t.seed, budget: t.budget }));
    }
    Ok(match atlas.get(config.board(), config.moves(), closed).map(|e| &e.verdict) {
        Some(Verdict::None(proofs)) => Some(Decision::Atlas(*proofs)),
        _ => None,
    })
}

/// The search of [`decide`] alone, no theorem or argument consulted
/// first (the atlas holds them against it).
pub fn search(config: &Configuration, closed: bool, cancel: Cancel) -> Result<Decision, DecideError> {
    let runner = Runner::new(config.clone())?;
    let mut search = Search { runner: &runner, ws: runner.workspace(), cancel, closed };
    search.decide()
}

struct Search<'a> {
    runner: &'a Runner,
    ws: Workspace,
    cancel: Cancel<'a>,
    closed: bool,
}

/// Every cell of a board of `cells`, in an order that spreads the first
/// ones over the board (a stride coprime to the count), so that a round
/// of a few starts does not try only one corner.
fn spread(cells: u64) -> Vec<u64> {
    let mut stride = (cells as f64 * 0.618_034) as u64 | 1;
    while stride > 1 && gcd(stride, cells) != 1 {
        stride += 2;
    }
    (0..cells).map(|i| (i as u128 * stride as u128 % cells.max(1) as u128) as u64).collect()
}

/// Where `solve` stands.
struct Tally {
    needed: Vec<u64>,
    refuted: Vec<bool>,
    tried: u64,
    budget: u64,
}

impl Tally {
    fn unknown(&self, confirmed: Vec<(&'static str, u64)>, why: Option<String>) -> Decision {
        Decision::Unknown {
            starts_tried: self.tried,
            largest_budget: self.budget,
            refuted: self.refuted.iter().filter(|&&r| r).count() as u64,
            starts_needed: self.needed.len() as u64,
            confirmed,
            why,
        }
    }
}

impl Search<'_> {
    fn decide(&mut self) -> Result<Decision, DecideError> {
        let cells = self.runner.config().board().cells();
        let needed: Vec<u64> = if self.closed { vec![0] } else { spread(cells) };
        let mut t = Tally { refuted: vec![false; needed.len()], needed, tried: 0, budget: FIRST_BUDGET };
        let mut refutable = cells <= REFUTE_MAX_CELLS;
        for round in 0u32.. {
            let starts = FIRST_STARTS.saturating_mul(1 << round.min(40)).min(t.needed.len());
            for i in 0..starts {
                if t.refuted[i] {
                    continue;
                }
                let start = t.needed[i];
                let seed = u64::from(round).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ start;
                let Some(r) = self.solve(start, seed, t.budget) else {
                    return Ok(t.unknown(Vec::new(), self.why_not_refuted(cells)));
                };
                t.tried = t.tried.max(i as u64 + 1);
                match r.outcome {
                    Outcome::Tour => {
                        return Ok(Decision::Tour { path: r.path.unwrap_or_default(), seed, budget: t.budget })
                    }
                    Outcome::NoTour => t.refuted[i] = true,
                    Outcome::GaveUp => {}
                }
            }
            if refutable {
                // Once: a route that finds a tour (the other giving up)
                // leaves the finding of it to more rounds of solve.
                refutable = false;
                if let Some(d) = self.confirm(&t)? {
                    return Ok(d);
                }
            }
            t.budget = t.budget.saturating_mul(2);
        }
        unreachable!("the rounds end by returning")
    }

    /// Why no refutation was tried on a board of `cells` cells, if none was.
    fn why_not_refuted(&self, cells: u64) -> Option<String> {
        if cells > REFUTE_MAX_CELLS {
            return Some("the refutation routes take boards of at most 1,000 cells".to_string());
        }
        let config = self.runner.config();
        refute::unsupported(config.board(), config.moves()).map(str::to_string)
    }

    /// The two refutation routes, each to its end: the decision if they
    /// agree there is no tour or the flag was raised, None if a route
    /// found a tour.
    fn confirm(&mut self, t: &Tally) -> Result<Option<Decision>, DecideError> {
        let (board, moves) = (self.runner.config().board(), self.runner.config().moves());
        if let Some(why) = refute::unsupported(board, moves) {
            return Ok(Some(t.unknown(Vec::new(), Some(why.to_string()))).filter(|_| self.cancel.is_raised()));
        }
        let kind = if self.closed { "closed" } else { "open" };
        // The SAT route first: it is the quicker on most boards.
        let sat = (refute::SAT_ROUTE, refute::by_sat(board, moves, self.closed, self.cancel));
        let search =
            (refute::search_route(moves), refute::by_search(board, moves, &t.needed, self.closed, self.cancel));
        let proved: Vec<(&'static str, u64)> =
            [search, sat].iter().filter(|(_, s)| s.outcome == Outcome::NoTour).map(|(n, s)| (*n, s.effort)).collect();
        for (route, settled) in [search, sat] {
            if let (Outcome::Tour, Some(&(refuted_by, _))) = (settled.outcome, proved.first()) {
                return Err(DecideError::Disagreement { route, refuted_by, kind, start: settled.start });
            }
        }
        if proved.len() == 2 {
            let routes = [(search.0, search.1.effort), (sat.0, sat.1.effort)];
            let (starts, searched) = (t.needed.len() as u64, search.1.searched);
            return Ok(Some(Decision::Refuted { starts, searched, routes }));
        }
        if [search, sat].iter().any(|(_, s)| s.outcome == Outcome::Tour) {
            return Ok(None);
        }
        let why = "the budget ran out before both refutation routes ended".to_string();
        Ok(Some(t.unknown(proved, Some(why))))
    }

    /// One `solve` task; None once the flag is raised. A tour it returns
    /// has passed `verify` (`verify_closed`): `solve` gives up rather than
    /// return one that does not.
    fn solve(&mut self, start: u64, seed: u64, budget: u64) -> Option<TaskResult> {
        let options = TaskOptions { seed, record_path: true, budget, closed: self.closed, ..TaskOptions::default() };
        self.runner.run_task_cancellable(&mut self.ws, start, Method::Solve, &options, self.cancel).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Board;
    use crate::moves::Moves;

    /// The search alone, no theorem consulted.
    fn searched(rule: &[u32], sides: &[u32], closed: bool) -> Decision {
        let board = Board::new(sides).unwrap();
        let moves = Moves::from_rule(rule, sides.len()).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        search(&Configuration::new(board, moves).unwrap(), closed, Cancel::new(&stop)).unwrap()
    }

    /// Where the knight's theorems (Schwenk; Conrad et al.) speak, the
    /// search, run without them, says the same: a tour where they promise
    /// one, two routes' refutation where they forbid it. Sides up to 6 by
    /// 8 hold every exception the theorems list (3x4 to 3x8, 4xn, 4x4);
    /// 7x7 closed takes the routes a minute (the colour argument settles
    /// it before any search in [`decide`]).
    #[test]
    fn the_search_agrees_with_the_knight_theorems() {
        for m in 3..=6u32 {
            for n in m..=8u32 {
                let e = proven(&Board::new(&[m, n]).unwrap(), &Moves::from_rule(&[2, 1], 2).unwrap());
                for (closed, claim) in [(false, e.open), (true, e.closed)] {
                    let d = searched(&[2, 1], &[m, n], closed);
                    let agrees = match claim {
                        Claim::Exists(_) => matches!(d, Decision::Tour { .. }),
                        Claim::Impossible(_) => matches!(d, Decision::Refuted { .. }),
                        Claim::Unknown => true,
                    };
                    assert!(agrees, "{m}x{n} closed {closed}: theorem {claim:?}, search {d:?}");
                }
            }
        }
    }
}
