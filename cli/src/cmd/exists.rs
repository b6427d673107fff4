//! `ksweep exists`: what is proven about open and closed tours of a
//! configuration, with the evidence behind each verdict. A theorem or an
//! argument answers at once; where none does, the engine's own routes run
//! under `--budget` (`tour::exists::decide`): a tour found and verified, a
//! refutation two methods agree on, or "unknown" with what was spent.
//! With `--db`, a database's results answer where the search did not.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use figures::TourPicture;
use ksweep_coordinator::store::{Facts, Store};
use tour::exists::atlas::Proof;
use tour::exists::{decide_with, Claim, DecideError, Decision, Existence};
use tour::{Board, Cancel, Configuration};

use crate::board_args::BoardArgs;

/// Longest search `--budget` may ask for.
const MAX_BUDGET: Duration = Duration::from_secs(86_400);

/// Print what is proven about open and closed tours of a configuration.
#[derive(Debug, Args)]
pub struct ExistsArgs {
    #[command(flatten)]
    pub board: BoardArgs,
    /// Where no theorem settles a kind of tour, search for one (or for a
    /// refutation) this long: `5s`, `2m`, `1h`; `0` only cites.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_budget)]
    pub budget: Duration,
    /// Write the tour the search found (closed if it found one) to this
    /// file: an SVG picture for a name ending in `.svg` (2D and 3D), else
    /// one cell a line as 0-based coordinates `x,y,..`.
    #[arg(long, value_name = "FILE")]
    pub tour: Option<PathBuf>,
    /// Search even where the shipped atlas (atlas/atlas.tsv) answers, to
    /// check it.
    #[arg(long)]
    pub no_atlas: bool,
    /// Also answer from this database's results (read only, never
    /// changed: an older file is upgraded in memory) where nothing else
    /// does: a tour a method found, or every start refuted.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

/// `--budget`: a duration of at most a day.
pub fn parse_budget(text: &str) -> Result<Duration, String> {
    let d = ksweep_worker::lifetime::parse_duration(text)?;
    if d > MAX_BUDGET {
        return Err(format!("{:?} is over the limit of 1d", text.trim()));
    }
    Ok(d)
}

pub fn run(args: ExistsArgs, out: &mut impl Write) -> Result<()> {
    let config = args.board.configuration()?;
    if let Some(path) = &args.tour {
        // Refused before the search, not after it.
        if path.extension().is_some_and(|e| e == "svg") && !matches!(config.board().dims(), 2 | 3) {
            bail!("--tour: an SVG picture draws 2D and 3D boards; this board is {}D", config.board().dims());
        }
    }
    // The database first, so that a bad --db prints nothing but its error.
    let facts = match &args.db {
        Some(db) => {
            anyhow::ensure!(db.exists(), "--db: {} does not exist", db.display());
            let store = Store::open_unchanged(db).with_context(|| format!("--db: cannot open {}", db.display()))?;
            store.facts(&sweep::board_moves(config.board().sides(), config.moves()))?
        }
        None => Facts::default(),
    };
    writeln!(
        out,
        "board   {} ({} cells), moves {}",
        config.board(),
        config.board().cells(),
        config.moves().describe()
    )?;
    let began = Instant::now();
    let (open, closed) = search(&config, args.budget, !args.no_atlas)?;
    let spent = began.elapsed();
    let claims = Existence { open: claim_of(&open), closed: claim_of(&closed) };
    let (open_fact, closed_fact) = facts.fill(claims);
    let board = config.board();
    for (kind, decision, fact) in [("open", &open, open_fact), ("closed", &closed, closed_fact)] {
        let line = match (decision, fact) {
            (Decision::Unknown { .. }, Some(f)) => format!("{}: stored results: {}", f.verdict(), f.evidence()),
            _ => describe(decision, kind, board, args.budget, spent),
        };
        writeln!(out, "{kind:<7} {line}")?;
    }
    if let Some(path) = &args.tour {
        write_tour(path, &config, &open, &closed)?;
    }
    Ok(())
}

/// [`decide_with`] for closed tours, then open ones, each under a timer that
/// raises its flag: closed tours get half of `budget`, open ones the rest.
/// A closed tour found is an open one too.
fn search(config: &Configuration, budget: Duration, atlas: bool) -> Result<(Decision, Decision)> {
    let began = Instant::now();
    let closed = within(budget / 2, |cancel| decide_with(config, true, atlas, cancel))?;
    let open = match &closed {
        Decision::Tour { path, seed, budget } => Decision::Tour { path: path.clone(), seed: *seed, budget: *budget },
        _ => within(budget.saturating_sub(began.elapsed()), |cancel| decide_with(config, false, atlas, cancel))?,
    };
    Ok((open, closed))
}

/// Runs `f` with a flag raised after `limit` ([`tour::within`]).
fn within(limit: Duration, f: impl FnOnce(Cancel) -> Result<Decision, DecideError>) -> Result<Decision> {
    tour::within(limit, f).context("exists")
}

/// The claim a decision makes, for the database's facts to fill in.
fn claim_of(d: &Decision) -> Claim {
    match d {
        Decision::Known { claim, .. } => *claim,
        Decision::Tour { .. } => Claim::Exists("a tour was found"),
        Decision::Refuted { .. } | Decision::Atlas(_) => Claim::Impossible("refuted by two routes"),
        Decision::Unknown { .. } => Claim::Unknown,
    }
}

/// One verdict line after the kind: the verdict and its evidence.
fn describe(d: &Decision, kind: &str, board: &Board, budget: Duration, spent: Duration) -> String {
    let cell = |c: u64| format!("({})", board.coords(c).iter().map(u32::to_string).collect::<Vec<_>>().join(","));
    match d {
        Decision::Known { claim: c @ Claim::Impossible(_), second } => {
            let second = match second {
                Some(p) => format!("; a second proof: {}", proof_text(*p)),
                None if budget.is_zero() => "; no second proof at hand, and --budget 0 searched for none".to_string(),
                None => format!("; no second proof at hand or found within {}", budget_text(budget)),
            };
            format!("{}: {}{second}", c.verdict(), c.because())
        }
        Decision::Known { claim: c, .. } if c.because().is_empty() => c.verdict().to_string(),
        Decision::Known { claim: c, .. } => format!("{}: {}", c.verdict(), c.because()),
        Decision::Tour { path, seed, budget } => format!(
            "exists: solve found one from {} (seed {seed}, work budget {budget}), verified by tour::verify{}",
            cell(path[0]),
            if kind == "closed" { "_closed" } else { "" }
        ),
        Decision::Refuted { starts, searched, routes: [(a, a_effort), (b, b_effort)] } => {
            let from = if *starts == 1 {
                format!("from {}, which a {kind} tour would pass", cell(0))
            } else {
                format!(
                    "from every one of the {starts} cells ({searched} searched: one of each orbit under the \
                     board's symmetries, and on a two-colour board only cells of the colour every open tour \
                     has an end on)"
                )
            };
            format!(
                "impossible: {a} ({a_effort} nodes) and {b} ({b_effort} conflicts) each proved no {kind} tour \
                 {from}"
            )
        }
        Decision::Atlas([a, b]) => format!(
            "impossible: the atlas (atlas/atlas.tsv, made by ksweep atlas): {} and {} each proved no {kind} tour",
            proof_text(*a),
            proof_text(*b)
        ),
        Decision::Unknown { starts_needed: 0, why: Some(why), .. } => format!("unknown: {why}; no search ran"),
        Decision::Unknown { .. } if budget.is_zero() => {
            "unknown: no theorem or argument settles it, and --budget 0 searched nothing; give --budget 10s to \
             search"
                .to_string()
        }
        Decision::Unknown { starts_tried, largest_budget, refuted, starts_needed, confirmed, why } => {
            let mut line = format!(
                "unknown: budget of {} spent ({:.1} s in all): solve ran from {starts_tried} start(s) with work \
                 budgets up to {largest_budget}, found no tour and refuted {refuted} of the {starts_needed} start(s) \
                 a refutation needs",
                budget_text(budget),
                spent.as_secs_f64()
            );
            if let Some(why) = why {
                line.push_str(&format!("; {why}"));
                if !confirmed.is_empty() {
                    let names: Vec<&str> = confirmed.iter().map(|(name, _)| *name).collect();
                    line.push_str(&format!(" ({} proved it)", names.join(", ")));
                }
            }
            line.push_str(&format!("; raise it with --budget (e.g. --budget {})", budget_text(budget * 10)));
            line
        }
    }
}

/// One of the atlas's proofs, in words.
fn proof_text(p: Proof) -> String {
    match p {
        Proof::Argument => "the colour, lattice and move-graph arguments".to_string(),
        Proof::Theorem => "a theorem".to_string(),
        Proof::Census => {
            "the census of the move graph (in pieces, or colour classes no tour alternates between)".to_string()
        }
        Proof::Alternation => {
            "the alternation argument (half the cells, no move among them, not a colour class)".to_string()
        }
        Proof::Cover => "the lack of a cover by cycles".to_string(),
        Proof::Search(nodes) => format!("the search route ({nodes} nodes)"),
        Proof::Sat(conflicts) => format!("the SAT route ({conflicts} conflicts)"),
    }
}

/// A duration as `--budget` reads it: `5s`, `2m`, `1h`.
fn budget_text(d: Duration) -> String {
    match d.as_secs() {
        s if s >= 3600 && s % 3600 == 0 => format!("{}h", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// Writes the closed tour found, else the open one; refuses when there is
/// none, naming what was decided instead.
fn write_tour(path: &Path, config: &Configuration, open: &Decision, closed: &Decision) -> Result<()> {
    let (tour, is_closed) = match (closed, open) {
        (Decision::Tour { path, .. }, _) => (path, true),
        (_, Decision::Tour { path, .. }) => (path, false),
        _ => bail!("--tour: the search found no tour to write (a theorem or nothing settled it)"),
    };
    let board = config.board();
    let text = if path.extension().is_some_and(|e| e == "svg") {
        let picture = TourPicture {
            title: format!(
                "({}) {} · {} tour found by solve",
                config.moves().describe(),
                board.shape_string(),
                if is_closed { "closed" } else { "open" }
            ),
            sides: board.sides().to_vec(),
            path: tour.clone(),
            closed: is_closed,
        };
        picture.svg().context("--tour")?
    } else {
        let mut text = String::with_capacity(tour.len() * 8);
        for &c in tour {
            let coords: Vec<String> = board.coords(c).iter().map(u32::to_string).collect();
            text.push_str(&coords.join(","));
            text.push('\n');
        }
        text
    };
    // Whole or not at all, should Ctrl-C stop the command mid-write.
    crate::output_file::write_whole(path, text.as_bytes()).context("--tour")
}
