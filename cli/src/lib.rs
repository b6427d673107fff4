//! `ksweep`: the knight-sweep command line. Parses arguments, calls the
//! engine, the coordinator, the worker or a client, and prints; the work
//! lives in the library crates.
//!
//! A library as well as the binary, so the Python package runs the very
//! commands the shell does ([`invoke`]) and reads through the same
//! [`source::Source`]: a notebook's answer cannot drift from the CLI's.

mod board_args;
mod cmd;
pub mod connect;
mod error_line;
pub mod failure;
mod input_file;
mod output_file;
mod render;
mod shutdown;
pub mod source;
mod spec_file;
mod unknown_command;

use std::ffi::OsString;
use std::future::Future;
use std::io::{self, BufRead, BufWriter, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::LazyLock;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
pub use cmd::eval::Evaluator;
pub use cmd::export::ExportStream;
pub use cmd::run::Embedded;
pub use cmd::submit::ReuseArg;

/// knight-sweep: knight's tour methods on D-dimensional boards (the
/// Warnsdorff family, exact backtracking, a construction, neural networks;
/// `ksweep tour --help` lists them), from single tours to sweeps spread over
/// many machines.
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
    /// Compute the atlas of leaper tours (which boards have open and
    /// closed tours, each a verified tour or two agreeing proofs) with its
    /// README and pictures; `ksweep exists` answers from the shipped one.
    ///
    /// Example: ksweep atlas --out atlas --budget 10s
    Atlas(cmd::atlas::AtlasArgs),
    /// Measure the engine: walk throughput, speed-up over a straightforward
    /// implementation, memory per cell, eval throughput.
    Bench(cmd::bench::BenchArgs),
    /// Run a sweep spec in this process (coordinator, worker and a SQLite
    /// file) and print its tables. Rerun to resume.
    ///
    /// Example: ksweep run specs/quick.toml
    Run(cmd::run::RunArgs),
    /// Rerun the report authors' published experiments start for start
    /// through the sweep path; compare flags and times.
    ///
    /// Example: ksweep replay data/replay/*.tsv.gz
    Replay(cmd::replay::ReplayArgs),
    /// Validate a sweep spec and print what it would run.
    Check(cmd::check::CheckArgs),
    /// Serve sweeps to workers and clients over gRPC.
    Coordinator(cmd::coordinator::CoordinatorArgs),
    /// Run shards for a coordinator.
    Worker(cmd::worker::WorkerArgs),
    /// Run a sweep on a Slurm cluster: the coordinator as a job of its own,
    /// the workers as a job array, found through a shared directory.
    ///
    /// Example: ksweep slurm specs/quick.toml --workers 8 --cpus-per-worker 4 --time 2:00:00
    Slurm(cmd::slurm::SlurmArgs),
    /// Submit a sweep spec to a coordinator; prints the sweep id last.
    Submit(cmd::submit::SubmitArgs),
    /// Show a sweep's progress (or every sweep's).
    Status(cmd::status::StatusArgs),
    /// Follow a sweep with a progress bar until it ends.
    Watch(cmd::watch::WatchArgs),
    /// Cancel a running sweep.
    Cancel(cmd::cancel::CancelArgs),
    /// Ask a worker to finish the shards it holds and leave.
    Drain(cmd::drain::DrainArgs),
    /// Run a cancelled or failed sweep again from where it stopped (a
    /// failed one's failed shards retried from scratch).
    Resume(cmd::resume::ResumeArgs),
    /// Remove a sweep, and the results no other sweep has; asks first on a
    /// terminal (--yes does not ask).
    ///
    /// Example: ksweep rm 3675248c --db ksweep.db
    Rm(cmd::rm::RmArgs),
    /// Give a sweep another name; its id stays.
    ///
    /// Example: ksweep rename 3675248c quick-wide --db ksweep.db
    Rename(cmd::rename::RenameArgs),
    /// Compare two sweeps per configuration and method: accuracy of each,
    /// the difference, and the starts whose flags differ.
    ///
    /// Example: ksweep diff 8f307539 e181e54e --db ksweep.db
    Diff(cmd::diff::DiffArgs),
    /// Print a sweep's accuracy or timing tables.
    Table(cmd::table::TableArgs),
    /// Write every task result as CSV, JSON lines or Parquet (columns:
    /// docs/export.md).
    Export(cmd::export::ExportArgs),
    /// Draw a sweep's results as SVG or PNG: accuracy (with 95 % bands),
    /// time or walks against N, or a failure map of one board.
    ///
    /// Example: ksweep plot --db ksweep.db --kind accuracy -o accuracy.svg
    Plot(cmd::plot::PlotArgs),
    /// Write a sweep's report: spec, state, every table and figure, as one
    /// self-contained HTML file or as Markdown with the SVGs beside it.
    ///
    /// Example: ksweep report --db ksweep.db -o report.html
    Report(cmd::report::ReportArgs),
    /// Check that a coordinator is serving (exit 0) or not (exit 1).
    Health(cmd::health::HealthArgs),
    /// Inspect a database file's schema, or upgrade one an older release
    /// wrote.
    ///
    /// Example: ksweep db upgrade --db ksweep.db
    Db(cmd::db::DbArgs),
    /// Join databases computed apart into a new one: identical tasks are
    /// checked to agree, disagreements reported, nothing overwritten.
    ///
    /// Example: ksweep merge laptop.db cluster.db -o all.db
    Merge(cmd::merge::MergeArgs),
}

/// Logs go to stderr, in colour only when stderr is a terminal and
/// `NO_COLOR` is unset or empty (<https://no-color.org>): files and pipes
/// get plain text.
fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let ansi = io::stderr().is_terminal() && !no_color;
    // KSWEEP_LOG_SPANS: a line per span closed, with its busy and idle time.
    let spans = if std::env::var_os("KSWEEP_LOG_SPANS").is_some_and(|v| !v.is_empty()) {
        tracing_subscriber::fmt::format::FmtSpan::CLOSE
    } else {
        tracing_subscriber::fmt::format::FmtSpan::NONE
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_span_events(spans)
        .with_writer(io::stderr)
        .try_init();
}

/// Runs an async command on a fresh runtime, with logging at `log_level`
/// unless `RUST_LOG` says otherwise.
fn block_on<T>(log_level: &str, command: impl Future<Output = Result<T>>) -> Result<T> {
    init_logging(log_level);
    tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(command)
}

fn run(cli: Cli, stdin: impl BufRead, out: &mut impl Write) -> Result<()> {
    tour::check_kernel_env()?;
    let mut out = BufWriter::new(out);
    match cli.command {
        Command::Tour(args) => cmd::tour::run(args, &mut out)?,
        Command::Eval(args) => {
            cmd::eval::run(args, stdin, &mut out)?;
        }
        Command::Exists(args) => cmd::exists::run(args, &mut out)?,
        Command::Atlas(args) => cmd::atlas::run(args, &mut out)?,
        Command::Bench(args) => cmd::bench::run(args, &mut out)?,
        Command::Check(args) => cmd::check::run(args, &mut out)?,
        Command::Run(args) => block_on("warn", cmd::run::run(args, &mut out))?,
        Command::Replay(args) => block_on("warn", cmd::replay::run(args, &mut out))?,
        Command::Coordinator(args) => block_on("info", cmd::coordinator::run(args))?,
        Command::Worker(args) => block_on("info", cmd::worker::run(args))?,
        Command::Slurm(args) => cmd::slurm::run(args, &mut out)?,
        Command::Submit(args) => block_on("warn", cmd::submit::run(args, &mut out))?,
        Command::Status(args) => block_on("warn", cmd::status::run(args, &mut out))?,
        Command::Watch(args) => block_on("warn", cmd::watch::run(args, &mut out))?,
        Command::Cancel(args) => block_on("warn", cmd::cancel::run(args, &mut out))?,
        Command::Drain(args) => block_on("warn", cmd::drain::run(args, &mut out))?,
        Command::Resume(args) => block_on("warn", cmd::resume::run(args, &mut out))?,
        Command::Rm(args) => block_on("warn", cmd::rm::run(args, &mut out))?,
        Command::Rename(args) => block_on("warn", cmd::rename::run(args, &mut out))?,
        Command::Diff(args) => block_on("warn", cmd::diff::run(args, &mut out))?,
        Command::Table(args) => block_on("warn", cmd::table::run(args, &mut out))?,
        Command::Export(args) => block_on("warn", cmd::export::run(args, &mut out))?,
        Command::Plot(args) => block_on("warn", cmd::plot::run(args, &mut out))?,
        Command::Report(args) => block_on("warn", cmd::report::run(args, &mut out))?,
        Command::Health(args) => block_on("warn", cmd::health::run(args, &mut out))?,
        Command::Db(args) => {
            init_logging("info");
            cmd::db::run(args, &mut out)?
        }
        Command::Merge(args) => {
            init_logging("warn");
            cmd::merge::run(args, &mut out)?
        }
    }
    out.flush()?;
    Ok(())
}

/// `0.1.0 (abc123def456)`: the release and the commit, as `status` and
/// exports name a worker's build.
static VERSION: LazyLock<String> = LazyLock::new(|| ksweep_proto::build::Build::current().to_string());

/// The parser, its version naming the commit.
fn command() -> clap::Command {
    Cli::command().version(VERSION.as_str())
}

/// The arguments, or exit with clap's error (and a tip where a method was
/// typed as a command).
fn parse_args() -> Cli {
    let mut command = command();
    let matches =
        command.try_get_matches_from_mut(std::env::args_os()).unwrap_or_else(|e| unknown_command::with_tip(e).exit());
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut command).exit())
}

/// Runs one command line (`argv[0]` is the program's name) as the shell
/// would, reading `stdin` and writing what it prints to `out`; `--help`
/// and `--version` write their text. A usage error is an error carrying
/// clap's message ([`failure::Usage`]), never an exit.
pub fn invoke<I, T>(argv: I, stdin: impl BufRead, out: &mut impl Write) -> Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut command = command();
    let parsed = command
        .try_get_matches_from_mut(argv)
        .map_err(unknown_command::with_tip)
        .and_then(|matches| Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command)));
    match parsed {
        Ok(cli) => run(cli, stdin, out),
        Err(e) if !e.use_stderr() => Ok(write!(out, "{}", e.render())?),
        Err(e) => Err(failure::Usage::from(e).into()),
    }
}

/// Flags of one kind (`SourceArgs`, `EvalArgs`, ...) parsed from words as
/// the shell's would be, env fallbacks and defaults included; clap's
/// refusal is a [`failure::Usage`].
pub fn parse_flags<A, I, T>(words: I) -> Result<A>
where
    A: clap::Args + FromArgMatches,
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut command = A::augment_args(clap::Command::new("ksweep").no_binary_name(true));
    command
        .try_get_matches_from_mut(words)
        .and_then(|matches| A::from_arg_matches(&matches))
        .map_err(|e| failure::Usage::from(e).into())
}

/// The error as the CLI prints it: one line, each cause said once.
pub fn error_text(e: &anyhow::Error) -> String {
    error_line::cause_chain(e)
}

/// The `ksweep` binary: the process's arguments and standard streams.
pub fn main() -> ExitCode {
    let stdout = io::stdout();
    match run(parse_args(), io::stdin().lock(), &mut stdout.lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A closed pipe (`ksweep eval ... | head`) is not an error worth a message.
            if e.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {}", error_line::cause_chain(&e));
            match e.downcast_ref::<shutdown::Interrupted>() {
                Some(interrupted) => ExitCode::from(interrupted.signal.exit_code()),
                None => ExitCode::FAILURE,
            }
        }
    }
}
