//! `ksweep tour`: one method from one start, printed as a summary, a
//! numbered board, or JSON with the path.

use std::io::Write;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use figures::TourPicture;
use serde::Serialize;
use tour::{verify, verify_closed, Method, Outcome};

use crate::board_args::{BoardArgs, RunnerArgs, Start};
use crate::render::{lines, numbered_board};

/// How `ksweep tour` prints its result.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TourFormat {
    /// One line per field.
    Summary,
    /// The summary and the numbered board (slices for D >= 3).
    Text,
    /// One JSON object, path included.
    Json,
    /// An SVG picture titled with rule, board, method, start and outcome:
    /// steps numbered on small boards, the path coloured by step on large
    /// ones, cells a failed walk never reached shaded; 3D as slices.
    Svg,
    /// One "row col" line per cell, 1-based, or "-1 -1" when no tour was
    /// found (seed 001's output).
    Lines,
}

/// Run one method from one start.
#[derive(Debug, Args)]
pub struct TourArgs {
    #[command(flatten)]
    pub board: BoardArgs,

    /// Start cell, 0-based coordinates: `46,39`.
    // Hyphen values reach the parser, which names the field, rather than
    // clap, which would take `-1,0` for a flag.
    #[arg(long, allow_hyphen_values = true)]
    pub start: Start,

    #[arg(long, default_value = "w", help = format!("Method: {}", Method::names()))]
    pub method: Method,

    #[arg(long, value_enum, default_value_t = TourFormat::Summary)]
    pub format: TourFormat,

    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub runner: RunnerArgs,
}

/// The JSON form of a tour result.
#[derive(Serialize)]
struct TourJson<'a> {
    moves: String,
    shape: &'a [u32],
    method: &'a str,
    start: &'a [u64],
    seed: u64,
    /// A closed tour was looked for (nn always; solve and bt with --closed).
    closed: bool,
    success: bool,
    outcome: &'static str,
    attempts: u32,
    visited: u64,
    micros: u64,
    path: Coordinates<'a>,
}

/// A path serialised as coordinate lists one cell at a time, so a tour of a
/// huge board streams to the writer instead of being built as JSON first.
struct Coordinates<'a> {
    board: &'a tour::Board,
    path: &'a [u64],
}

impl Serialize for Coordinates<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_seq(self.path.iter().map(|&c| self.board.coords(c)))
    }
}

pub fn run(args: TourArgs, stdout: &mut impl Write) -> Result<()> {
    let mut file = match &args.output {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("--output: cannot create {}", path.display()))?,
        )),
        None => None,
    };
    let out: &mut dyn Write = match file.as_mut() {
        Some(f) => f,
        None => stdout,
    };
    let runner = args.board.runner(&[args.method], 1, true)?;
    let config = runner.config();
    let start = config.board().index_of(&args.start.0)?;
    let seed = config.task_seed(args.board.seed, start, args.method);
    runner.supports(args.method)?;
    args.runner.check(args.method)?;
    let mut ws = runner.workspace();
    let result = runner.run_task(&mut ws, start, args.method, &args.runner.options(seed, true));
    let (board, moves) = (runner.config().board(), runner.config().moves());
    let path = result.path.as_deref().unwrap_or_default();
    // The nn methods find closed tours, solve and bt when asked; the others open ones.
    let closed = args.method.seeks_closed(args.runner.closed);
    if result.success {
        // Cheap next to the search, and a printed tour should never be wrong.
        let checked = if closed { verify_closed(board, moves, path) } else { verify(board, moves, path) };
        checked.context("internal error: the engine's tour does not verify")?;
    }
    match args.format {
        TourFormat::Json => {
            let json = TourJson {
                moves: moves.describe(),
                shape: board.sides(),
                method: args.method.name(),
                start: &args.start.0,
                seed,
                closed,
                success: result.success,
                outcome: result.outcome.name(),
                attempts: result.attempts,
                visited: result.visited,
                micros: result.micros,
                path: Coordinates { board, path },
            };
            serde_json::to_writer(&mut *out, &json)?;
            writeln!(out)?;
        }
        TourFormat::Svg => {
            let picture = picture(&args, board, moves, &result, path, closed);
            let svg = picture.svg().context("--format svg")?;
            out.write_all(svg.as_bytes())?;
        }
        TourFormat::Lines => {
            if result.success {
                out.write_all(lines(board, path).as_bytes())?;
            } else {
                writeln!(out, "-1 -1")?;
                if result.outcome == Outcome::GaveUp {
                    eprintln!(
                        "warning: {} gave up; no tour is known from this start, none is proven impossible",
                        args.method
                    );
                }
            }
        }
        TourFormat::Summary | TourFormat::Text => {
            summary(out, &args, board, moves, &result, path, closed)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The SVG picture of the path: its title names the moves, the board, the
/// method, the start and the outcome.
fn picture(
    args: &TourArgs,
    board: &tour::Board,
    moves: &tour::Moves,
    result: &tour::TaskResult,
    path: &[u64],
    closed: bool,
) -> TourPicture {
    let rule = match moves.describe() {
        d if d.contains(' ') => format!("{} moves", moves.len()),
        d => format!("({d})"),
    };
    let start: Vec<String> = args.start.0.iter().map(u64::to_string).collect();
    let outcome = match result.outcome {
        Outcome::Tour => "tour".to_string(),
        Outcome::NoTour => "no tour (proven)".to_string(),
        Outcome::GaveUp => format!("gave up after {} walk(s)", result.attempts),
    };
    TourPicture {
        title: format!(
            "{rule} {} · {} from ({}) · {outcome}",
            board.shape_string(),
            args.method.report_name(),
            start.join(",")
        ),
        sides: board.sides().to_vec(),
        path: path.to_vec(),
        closed: closed && result.success,
    }
}

/// The summary, one line per field; with `--format text`, the numbered
/// board after it.
fn summary(
    out: &mut dyn Write,
    args: &TourArgs,
    board: &tour::Board,
    moves: &tour::Moves,
    result: &tour::TaskResult,
    path: &[u64],
    closed: bool,
) -> Result<()> {
    writeln!(out, "board     {board} ({} cells)", board.cells())?;
    writeln!(out, "moves     {} ({} moves)", moves.describe(), moves.len())?;
    writeln!(out, "method    {}", args.method)?;
    writeln!(out, "kind      {}", if closed { "closed" } else { "open" })?;
    writeln!(out, "start     {:?}", args.start.0)?;
    writeln!(out, "success   {}", result.success)?;
    writeln!(out, "outcome   {}", result.outcome)?;
    writeln!(out, "attempts  {}", result.attempts)?;
    writeln!(out, "visited   {}", result.visited)?;
    writeln!(out, "micros    {}", result.micros)?;
    if matches!(args.format, TourFormat::Text) {
        writeln!(out)?;
        write!(out, "{}", numbered_board(board, path))?;
    }
    Ok(())
}
