//! `ksweep`: the knight-sweep command line. Parses arguments, calls the
//! engine, the coordinator, the worker or a client, and prints; the work
//! lives in the library crates.

mod board_args;
mod cmd;
mod render;
mod shutdown;

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// knight-sweep: Warnsdorff-rule knight's tour heuristics on D-dimensional
/// boards (W, W+, AW, AW+, MW, WR, WR+), from single tours to sweeps spread
/// over many machines.
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
    /// Print what is proven about open and closed tours of a configuration.
    ///
    /// Example: ksweep exists --rule 2,1 --shape 8x8
    Exists(cmd::exists::ExistsArgs),
    /// Measure the engine: walk throughput, speed-up over a straightforward
    /// implementation, memory per cell, eval throughput.
    Bench(cmd::bench::BenchArgs),
    /// Run a sweep spec in this process (coordinator, worker and a SQLite
    /// file) and print its tables. Rerun to resume.
    ///
    /// Example: ksweep run specs/quick.toml
    Run(cmd::run::RunArgs),
    /// Validate a sweep spec and print what it would run.
    Check(cmd::check::CheckArgs),
    /// Serve sweeps to workers and clients over gRPC.
    Coordinator(cmd::serve::CoordinatorArgs),
    /// Run shards for a coordinator.
    Worker(cmd::serve::WorkerArgs),
    /// Submit a sweep spec to a coordinator; prints the sweep id last.
    Submit(cmd::client::SubmitArgs),
    /// Show a sweep's progress (or every sweep's).
    Status(cmd::client::StatusArgs),
    /// Follow a sweep with a progress bar until it ends.
    Watch(cmd::client::WatchArgs),
    /// Cancel a running sweep.
    Cancel(cmd::client::CancelArgs),
    /// Print a sweep's accuracy or timing tables.
    Table(cmd::client::TableArgs),
    /// Write every task result as CSV or JSON lines.
    Export(cmd::client::ExportArgs),
    /// Check that a coordinator is serving (exit 0) or not (exit 1).
    Health(cmd::health::HealthArgs),
}

fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(io::stderr).try_init();
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
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
        Command::Check(args) => cmd::check::run(args, &mut out)?,
        Command::Exists(args) => cmd::exists::run(args, &mut out)?,
        Command::Coordinator(args) => {
            init_logging("info");
            runtime()?.block_on(cmd::serve::coordinator(args))?
        }
        Command::Worker(args) => {
            init_logging("info");
            runtime()?.block_on(cmd::serve::worker(args))?
        }
        command => {
            init_logging("warn");
            let rt = runtime()?;
            match command {
                Command::Run(args) => rt.block_on(cmd::run::run(args, &mut out))?,
                Command::Submit(args) => rt.block_on(cmd::client::submit(args, &mut out))?,
                Command::Status(args) => rt.block_on(cmd::client::status(args, &mut out))?,
                Command::Watch(args) => rt.block_on(cmd::client::watch(args, &mut out))?,
                Command::Cancel(args) => rt.block_on(cmd::client::cancel(args, &mut out))?,
                Command::Table(args) => rt.block_on(cmd::client::table(args, &mut out))?,
                Command::Export(args) => rt.block_on(cmd::client::export(args, &mut out))?,
                Command::Health(args) => rt.block_on(cmd::health::health(args))?,
                _ => unreachable!("handled above"),
            }
        }
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
