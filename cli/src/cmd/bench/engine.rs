//! The engine's own figures: walk throughput, memory per cell, the exact
//! and constructive solvers, and `ksweep eval`'s rate; each a section of
//! `ksweep bench`'s report.

use std::io::{BufReader, Write};
use std::time::{Duration, Instant};

use anyhow::Result;
use tour::{Method, Outcome, Runner, Task};

use super::configuration;
use crate::cmd::eval::Evaluator;

/// Resident set size of this process in bytes (Linux), 0 where unknown.
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// Steps per second of method W on 2D, 3D and 5D boards, one walk at a
/// time and as a sweep advances them together.
pub(super) fn walk_throughput(budget: Duration, out: &mut impl Write) -> Result<()> {
    writeln!(out, "\n## Walk throughput, method w, 8 fixed starts (target: 2D >= 150 M/s, 3D >= 50 M/s)")?;
    writeln!(
        out,
        "(2D and 3D also as a sweep runs the walks: batches of 8 tasks, up to 6 or 2 walks advancing together)"
    )?;
    writeln!(out, "{:<26} {:>6} {:>12} {:>10} {:>9}", "configuration", "moves", "steps/s", "ns/step", "tours")?;
    for (label, rule, dims, n) in
        [("2D (2,1) N=1000", &[2, 1], 2, 1000), ("3D (2,1) N=100", &[2, 1], 3, 100), ("5D (2,1) N=8", &[2, 1], 5, 8)]
    {
        let config = configuration(rule, dims, n)?;
        let tasks: Vec<Task> = config
            .starts(8, 1)?
            .cells
            .iter()
            .map(|&start| Task { start, method: Method::W, options: Default::default() })
            .collect();
        let runner = Runner::new(config)?;
        let mut ws = runner.workspace();
        // Rule-W walks advance up to six at a time (as many as time fastest
        // on this CPU) on 2D leapers' boards and two at a time on 3D boards
        // of 24 moves (docs/engine.md).
        let ways: &[(&str, usize)] = match dims {
            2 => &[("", 1), (", together", 8)],
            3 => &[("", 1), (", pairs", 8)],
            _ => &[("", 1)],
        };
        for &(how, at_once) in ways {
            let (mut steps, mut tours, mut runs) = (0u64, 0u64, 0u64);
            let began = Instant::now();
            while began.elapsed() < budget || runs < tasks.len() as u64 {
                for chunk in tasks.chunks(at_once) {
                    for r in runner.run_tasks(&mut ws, chunk) {
                        steps += r.visited;
                        tours += r.success as u64;
                        runs += 1;
                    }
                }
            }
            let secs = began.elapsed().as_secs_f64();
            writeln!(
                out,
                "{:<26} {:>6} {:>10.1} M {:>10.2} {:>5}/{:<3}",
                format!("{label}{how}"),
                runner.config().moves().len(),
                steps as f64 / secs / 1e6,
                secs * 1e9 / steps as f64,
                tours,
                runs
            )?;
        }
    }
    Ok(())
}

/// Bytes per cell the engine holds while sweeping, and the RSS growth.
pub(super) fn memory(out: &mut impl Write) -> Result<()> {
    writeln!(out, "\n## Memory while sweeping, no path (target: <= 2 bytes per cell plus padding)")?;
    writeln!(
        out,
        "{:<26} {:>12} {:>12} {:>12} {:>10} {:>12}",
        "configuration", "cells", "padded", "engine B", "B/cell", "RSS delta B"
    )?;
    for (label, dims, n) in [("2D (2,1) N=2000", 2, 2000), ("3D (2,1) N=140", 3, 140)] {
        let config = configuration(&[2, 1], dims, n)?;
        let cells = config.board().cells();
        let start = config.starts(1, 1)?.cells[0];
        let rss_before = rss_bytes();
        let runner = Runner::new(config)?;
        let mut ws = runner.workspace();
        runner.run(&mut ws, start, Method::W, 0, false);
        let rss_delta = rss_bytes().saturating_sub(rss_before);
        let engine = runner.board_bytes() + ws.board_bytes();
        writeln!(
            out,
            "{label:<26} {cells:>12} {:>12} {engine:>12} {:>10.3} {rss_delta:>12}",
            runner.board_bytes(),
            engine as f64 / cells as f64
        )?;
    }
    Ok(())
}

/// The exact search on every start of a small 3D board, and the
/// construction on 2D boards up to 666.
pub(super) fn exact_and_constructive(out: &mut impl Write) -> Result<()> {
    writeln!(out, "\n## Exact and constructive solvers")?;
    let config = configuration(&[2, 1], 3, 4)?;
    let (board, moves) = (config.board(), config.moves());
    let began = Instant::now();
    let (mut tours, mut none, mut gave_up, mut nodes) = (0, 0, 0, 0u64);
    for start in 0..board.cells() {
        let r = tour::backtrack::search(board, moves, start, tour::DEFAULT_BUDGET);
        nodes += r.nodes;
        match r.outcome {
            Outcome::Tour => tours += 1,
            Outcome::NoTour => none += 1,
            Outcome::GaveUp => gave_up += 1,
        }
    }
    writeln!(
        out,
        "bt, 4x4x4 (2,1,0), all 64 starts: {tours} tour, {none} no-tour, {gave_up} gave up; {nodes} nodes in {:.3} s (target < 1 s)",
        began.elapsed().as_secs_f64()
    )?;
    for n in [8u32, 100, 666] {
        let config = configuration(&[2, 1], 2, n)?;
        let (board, moves) = (config.board(), config.moves());
        let start = board.cells() / 2;
        let began = Instant::now();
        match tour::construct::construct(board, moves, start) {
            Ok(c) => writeln!(
                out,
                "construct, {n}x{n} from the centre: {} in {:.2} ms (target for 666: < 20 ms)",
                c.outcome,
                began.elapsed().as_secs_f64() * 1e3
            )?,
            Err(e) => writeln!(out, "construct, {n}x{n}: {e}")?,
        }
    }
    Ok(())
}

/// `ksweep eval`'s starts per second, on one thread and on all.
pub(super) fn eval_throughput(budget: Duration, out: &mut impl Write) -> Result<()> {
    writeln!(out, "\n## ksweep eval: 10,000 starts of 2D (2,1) N=8, method w, output to a sink")?;
    let input: String = (0..10_000).map(|i| format!("{},{}\n", i % 8, (i / 8) % 8)).collect();
    let board = ["--rule", "2,1", "--dims", "2", "--n", "8", "--method", "w"];
    for threads in [&["--threads", "1"][..], &[]] {
        let evaluator = Evaluator::parse(board.iter().chain(threads))?;
        let (mut starts, mut runs) = (0u64, 0u32);
        let began = Instant::now();
        while began.elapsed() < budget || runs == 0 {
            let counts = evaluator.evaluate(BufReader::new(input.as_bytes()), &mut std::io::sink())?;
            starts += counts.starts;
            runs += 1;
        }
        let rate = starts as f64 / began.elapsed().as_secs_f64();
        writeln!(out, "{:<26} {:>10.0} starts/s", format!("{} thread(s)", evaluator.threads()), rate)?;
    }
    Ok(())
}
