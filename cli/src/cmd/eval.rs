//! `ksweep eval`: many starts from stdin, one JSON line per (start, method)
//! on stdout, in input order whatever the thread count.

use std::io::{BufRead, Read, Write};

use anyhow::{bail, Context, Result};
use clap::Args;
use rayon::prelude::*;
use serde::Serialize;
use tour::{Method, Runner, Task, TaskResult};

use crate::board_args::{BoardArgs, RunnerArgs};

/// Lines read and run per parallel batch: large enough to keep every thread
/// busy, small enough that output streams while input is still coming.
const BATCH_LINES: usize = 8192;

/// Longest line read: a start of every axis the engine allows, with room
/// for spacing and a comment. A line of `/dev/zero` must not fill memory.
const MAX_LINE_BYTES: usize = 4096;

/// Run methods from every start read on stdin.
#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(flatten)]
    pub board: BoardArgs,

    #[arg(
        long,
        value_delimiter = ',',
        default_value = "w",
        help = format!("Methods, comma-separated (`w,aw+,mw`); several add a \"method\" field. Any of: {}", Method::names())
    )]
    pub method: Vec<Method>,

    #[command(flatten)]
    pub runner: RunnerArgs,

    /// Worker threads (default: all cores).
    #[arg(long, value_parser = crate::cmd::worker::thread_count())]
    pub threads: Option<usize>,
}

/// One output line.
#[derive(Serialize)]
struct EvalLine<'a> {
    start: &'a [u64],
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'static str>,
    success: bool,
    outcome: &'static str,
    attempts: u32,
    visited: u64,
    micros: u64,
}

/// Counts of what an evaluation did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct EvalCounts {
    pub starts: u64,
    pub tasks: u64,
    pub successes: u64,
}

pub fn run(args: EvalArgs, input: impl BufRead, out: &mut impl Write) -> Result<EvalCounts> {
    Evaluator::new(args)?.evaluate(input, out)
}

/// An `eval` command ready to run starts: its board's runner, methods,
/// limits and thread pool, built once. The CLI feeds it stdin; the Python
/// package feeds it arrays, so both run the very same tasks.
pub struct Evaluator {
    runner: Runner,
    methods: Vec<Method>,
    seed: u64,
    limits: RunnerArgs,
    pool: rayon::ThreadPool,
}

impl Evaluator {
    /// Checks the methods against the board and starts the thread pool.
    pub fn new(args: EvalArgs) -> Result<Evaluator> {
        if args.method.is_empty() {
            bail!("--method: give at least one method");
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(args.threads.unwrap_or(0))
            .build()
            .context("--threads: could not start the thread pool")?;
        let runner = args.board.runner(&args.method, pool.current_num_threads(), false)?;
        for &m in &args.method {
            runner.supports(m)?;
            args.runner.check(m)?;
        }
        Ok(Evaluator { runner, methods: args.method, seed: args.board.seed, limits: args.runner, pool })
    }

    /// The evaluator of `ksweep eval ARGS` (without `eval` itself): the
    /// shell's flags, defaults and errors.
    pub fn parse<I, T>(args: I) -> Result<Evaluator>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Evaluator::new(crate::parse_flags(args)?)
    }

    /// The board the starts are on.
    pub fn board(&self) -> &tour::Board {
        self.runner.config().board()
    }

    /// The threads the walks run on.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// The methods, in the order results come per start.
    pub fn methods(&self) -> &[Method] {
        &self.methods
    }

    /// Runs every method from each start cell, in parallel: the results
    /// start by start, methods in [`Evaluator::methods`] order.
    pub fn run_cells(&self, cells: &[u64]) -> Vec<TaskResult> {
        let config = self.runner.config();
        let tasks: Vec<Task> = cells
            .iter()
            .flat_map(|&start| self.methods.iter().map(move |&method| (start, method)))
            .map(|(start, method)| Task {
                start,
                method,
                options: self.limits.options(config.task_seed(self.seed, start, method), false),
            })
            .collect();
        // A few tasks at a time, so that their W+ walks pair up (`Runner::run_tasks`).
        let at_once = Runner::tasks_at_once(tasks.len(), self.pool.current_num_threads());
        self.pool.install(|| {
            tasks
                .par_chunks(at_once)
                .map_init(|| self.runner.workspace(), |ws, chunk| self.runner.run_tasks(ws, chunk))
                .flatten_iter()
                .collect()
        })
    }

    /// Reads starts, runs every method on each in parallel, writes JSON
    /// lines in input order. Used by `eval` and by `bench`.
    pub fn evaluate(&self, input: impl BufRead, out: &mut impl Write) -> Result<EvalCounts> {
        let board = self.board();
        let tag_method = self.methods.len() > 1;
        let mut counts = EvalCounts::default();
        let mut coords: Vec<Vec<u64>> = Vec::with_capacity(BATCH_LINES);
        let mut cells: Vec<u64> = Vec::with_capacity(BATCH_LINES);
        let mut lines = bounded_lines(input).enumerate();
        loop {
            coords.clear();
            cells.clear();
            for (number, line) in lines.by_ref() {
                let line = line.with_context(|| format!("stdin line {}", number + 1))?;
                let parsed = sweep::parse_start_line(&line)
                    .map_err(|e| anyhow::anyhow!("stdin line {}: start: {e}", number + 1))?;
                let Some(start) = parsed else { continue };
                cells.push(board.index_of(&start).with_context(|| format!("stdin line {}", number + 1))?);
                coords.push(start);
                if cells.len() == BATCH_LINES {
                    break;
                }
            }
            if cells.is_empty() {
                break;
            }
            let results = self.run_cells(&cells);
            for (start, per_start) in coords.iter().zip(results.chunks(self.methods.len())) {
                for (&method, r) in self.methods.iter().zip(per_start) {
                    let line = EvalLine {
                        start,
                        method: tag_method.then_some(method.name()),
                        success: r.success,
                        outcome: r.outcome.name(),
                        attempts: r.attempts,
                        visited: r.visited,
                        micros: r.micros,
                    };
                    serde_json::to_writer(&mut *out, &line)?;
                    out.write_all(b"\n")?;
                    counts.tasks += 1;
                    counts.successes += r.success as u64;
                }
            }
            counts.starts += cells.len() as u64;
            out.flush()?;
        }
        Ok(counts)
    }
}

/// The lines of `input` without their line ends, each read only up to
/// [`MAX_LINE_BYTES`]: a longer one is an error, not an allocation.
fn bounded_lines(mut input: impl BufRead) -> impl Iterator<Item = Result<String>> {
    std::iter::from_fn(move || {
        let mut line = Vec::new();
        match (&mut input).take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) => None,
            Ok(_) if line.last() != Some(&b'\n') && line.len() > MAX_LINE_BYTES => {
                Some(Err(anyhow::anyhow!("longer than {MAX_LINE_BYTES} bytes (the limit of a line)")))
            }
            Ok(_) => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                }
                Some(String::from_utf8(line).context("not UTF-8 text"))
            }
            Err(e) => Some(Err(anyhow::Error::new(e).context("could not read"))),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{bounded_lines, MAX_LINE_BYTES};

    #[test]
    fn lines_end_at_their_limit() {
        let fits = "7".repeat(MAX_LINE_BYTES);
        let text = format!("0,0\r\n{fits}\n{fits}8\n1 2");
        let lines: Vec<_> = bounded_lines(text.as_bytes()).map(|l| l.map_err(|e| e.to_string())).collect();
        assert_eq!(lines[0], Ok("0,0".to_string()));
        assert_eq!(lines[1], Ok(fits.clone()), "a line may fill the limit");
        assert_eq!(lines[2], Err("longer than 4096 bytes (the limit of a line)".to_string()));
        assert!(bounded_lines(&[0xffu8, b'\n'][..]).next().unwrap().is_err(), "not UTF-8");
    }
}
