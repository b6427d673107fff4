//! `ksweep tour`: one method from one start, printed as a summary, a
//! numbered board, or JSON with the path.

use std::io::Write;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;
use tour::{verify, Method, Solver};

use crate::board_args::{BoardArgs, Start};
use crate::render::numbered_board;

/// How `ksweep tour` prints its result.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TourFormat {
    /// One line per field.
    Summary,
    /// The summary and the numbered board (slices for D >= 3).
    Text,
    /// One JSON object, path included.
    Json,
}

/// Run one method from one start.
#[derive(Debug, Args)]
pub struct TourArgs {
    #[command(flatten)]
    pub board: BoardArgs,

    /// Start cell, 0-based coordinates: `46,39`.
    #[arg(long)]
    pub start: Start,

    /// Method: w, w+, aw, aw+, mw, wr, wr+.
    #[arg(long, default_value = "w")]
    pub method: Method,

    #[arg(long, value_enum, default_value_t = TourFormat::Summary)]
    pub format: TourFormat,
}

/// The JSON form of a tour result.
#[derive(Serialize)]
struct TourJson<'a> {
    moves: String,
    shape: &'a [u32],
    method: &'a str,
    start: &'a [u64],
    seed: u64,
    success: bool,
    attempts: u32,
    visited: u64,
    micros: u64,
    path: Vec<Vec<u32>>,
}

pub fn run(args: TourArgs, out: &mut impl Write) -> Result<()> {
    let config = args.board.configuration()?;
    let start = config.board().index_of(&args.start.0)?;
    let seed = config.task_seed(args.board.seed, start, args.method);
    let solver = Solver::new(config)?;
    let mut ws = solver.workspace();
    let result = solver.run(&mut ws, start, args.method, seed, true);
    let (board, moves) = (solver.config().board(), solver.config().moves());
    let path = result.path.as_deref().unwrap_or_default();
    if result.success {
        // Cheap next to the walk, and a printed tour should never be wrong.
        verify(board, moves, path).context("internal error: the engine's tour does not verify")?;
    }
    match args.format {
        TourFormat::Json => {
            let json = TourJson {
                moves: moves.describe(),
                shape: board.sides(),
                method: args.method.name(),
                start: &args.start.0,
                seed,
                success: result.success,
                attempts: result.attempts,
                visited: result.visited,
                micros: result.micros,
                path: path.iter().map(|&c| board.coords(c)).collect(),
            };
            serde_json::to_writer(&mut *out, &json)?;
            writeln!(out)?;
        }
        TourFormat::Summary | TourFormat::Text => {
            writeln!(out, "board     {board} ({} cells)", board.cells())?;
            writeln!(out, "moves     {} ({} moves)", moves.describe(), moves.len())?;
            writeln!(out, "method    {}", args.method)?;
            writeln!(out, "start     {:?}", args.start.0)?;
            writeln!(out, "success   {}", result.success)?;
            writeln!(out, "attempts  {}", result.attempts)?;
            writeln!(out, "visited   {}", result.visited)?;
            writeln!(out, "micros    {}", result.micros)?;
            if matches!(args.format, TourFormat::Text) {
                writeln!(out)?;
                write!(out, "{}", numbered_board(board, path))?;
            }
        }
    }
    Ok(())
}
