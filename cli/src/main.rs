//! `ksweep`: the knight-sweep command line. Parses arguments, calls the
//! engine, prints; the work lives in the `tour` crate.

mod board_args;
mod cmd;
mod render;

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// knight-sweep: Warnsdorff-rule knight's tour heuristics on D-dimensional
/// boards (W, W+, AW, AW+, MW, WR, WR+), for single tours, batches and
/// benchmarks.
#[derive(Debug, Parser)]
#[command(name = "ksweep", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one method from one start and print the result.
    ///
    /// Example: ksweep tour --rule 3,2 --dims 2 --n 100 --start 46,39 --method aw+
    Tour(cmd::tour::TourArgs),
    /// Read starts from stdin (one per line, `x,y` or `x y`), write one JSON
    /// line per start and method, in input order.
    ///
    /// Example: printf '0,0\n3,4\n' | ksweep eval --rule 2,1 --dims 2 --n 8 --method w,aw+
    Eval(cmd::eval::EvalArgs),
    /// Measure the engine: walk throughput, speed-up over a straightforward
    /// implementation, memory per cell, eval throughput.
    Bench(cmd::bench::BenchArgs),
}

fn run(cli: Cli) -> Result<()> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match cli.command {
        Command::Tour(args) => cmd::tour::run(args, &mut out)?,
        Command::Eval(args) => {
            cmd::eval::run(args, io::stdin().lock(), &mut out)?;
        }
        Command::Bench(args) => cmd::bench::run(args, &mut out)?,
    }
    out.flush()?;
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A closed pipe (`ksweep eval ... | head`) is not an error worth a message.
            if e.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
