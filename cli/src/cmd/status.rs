//! `ksweep status`: a sweep's progress, or every sweep's.

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use clap::Args;
use sweep::{format_duration, format_eta, format_rate, format_utc_minutes, Contributor, SweepState, SweepStatus};

use crate::connect::SourceArgs;
use crate::source::Source;

/// Show a sweep's status (all sweeps when no id is given).
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The sweep: its id, a unique prefix of it, or its name. Without it,
    /// one line per sweep.
    pub id: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Without an id: every sweep's whole status, not a line each.
    #[arg(long, short)]
    pub long: bool,
}

pub async fn run(args: StatusArgs, out: &mut impl Write) -> Result<()> {
    let mut source = Source::open(&args.source).await?;
    let statuses = match &args.id {
        Some(id) => vec![source.status(Some(id)).await?],
        None => source.list().await?,
    };
    if statuses.is_empty() {
        writeln!(out, "no sweeps")?;
        return Ok(());
    }
    if args.id.is_none() && !args.long {
        return print_lines(&statuses, out);
    }
    for (i, s) in statuses.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        print_status(s, out)?;
    }
    Ok(())
}

/// One line per sweep: id, name, seed, when it was submitted, state,
/// done/total, rate (and ETA); the seed and the time tell apart sweeps
/// submitted under one name.
fn print_lines(statuses: &[SweepStatus], out: &mut impl Write) -> Result<()> {
    let rows: Vec<[String; 7]> = statuses
        .iter()
        .map(|s| {
            [
                s.sweep_id.clone(),
                s.name.clone(),
                s.seed.map_or_else(|| "-".into(), |seed| seed.to_string()),
                match s.created_unix_ms {
                    0 => "-".into(),
                    ms => format_utc_minutes(ms),
                },
                match s.waiting.short() {
                    Some(why) => format!("{} ({why})", s.state),
                    None => s.state.name().to_string(),
                },
                match s.unfinished_work() {
                    Some(work) => format!("{}/{} ({:.1} % of work)", s.tasks_done, s.tasks_total, work.percent()),
                    None => format!("{}/{}", s.tasks_done, s.tasks_total),
                },
                speed(s).unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let header = ["ID", "NAME", "SEED", "SUBMITTED (UTC)", "STATE", "TASKS", "RATE"].map(String::from);
    let widths: Vec<usize> =
        (0..7).map(|i| rows.iter().chain([&header]).map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(c, &w)| format!("{c:<w$}")).collect();
        writeln!(out, "{}", cells.join("  ").trim_end())?;
    }
    Ok(())
}

/// The rate and ETA the coordinator measured, or what is known instead.
/// None when there is none: not measured yet (two samples seconds apart),
/// ended, or read offline.
pub fn speed(s: &SweepStatus) -> Option<String> {
    match (s.rate_per_sec, s.eta) {
        (Some(rate), Some(eta)) => Some(format!("{}, ETA {}", format_rate(rate), format_eta(eta))),
        (Some(rate), None) => Some(format_rate(rate)),
        _ => None,
    }
}

/// Progress in estimated CPU time: `12.4 % of the estimated CPU time (1 h
/// 2 min of 8 h 20 min)`; the estimate is refitted as results come in.
fn work_text(work: &sweep::Work) -> String {
    let cpu = |micros: f64| format_duration(Duration::from_secs_f64(micros / 1e6));
    let mut text = format!(
        "{:.1} % of the estimated CPU time ({} of {})",
        work.percent(),
        cpu(work.done_micros),
        cpu(work.total_micros)
    );
    if let Some(cells) = work.adaptive {
        text.push_str(&format!(
            "; the total is where each cell's share so far says it stops (a cell not looked at yet counts as one \
             near 50 %), at most {} were every cell to reach its cap",
            cpu(cells.most_micros)
        ));
    }
    text
}

/// One sweep's status, one field a line.
pub fn print_status(s: &SweepStatus, out: &mut impl Write) -> Result<()> {
    let pct = s.percent_done();
    writeln!(out, "sweep           {} ({})", s.sweep_id, s.name)?;
    if let Some(seed) = s.seed {
        writeln!(out, "seed            {seed}")?;
    }
    writeln!(out, "state           {}", s.state)?;
    match s.work.and_then(|w| w.adaptive) {
        Some(cells) => {
            writeln!(out, "tasks           {} (at most {}: every cell at its cap)", s.tasks_done, s.tasks_total)?;
            writeln!(
                out,
                "cells           {} / {} stopped by their looks (adaptive precision)",
                cells.settled, cells.cells
            )?;
        }
        None => writeln!(out, "tasks           {} / {} ({pct:.1}%)", s.tasks_done, s.tasks_total)?,
    }
    if let Some(work) = s.unfinished_work() {
        writeln!(out, "work            {}", work_text(&work))?;
    }
    writeln!(out, "successes       {}", s.successes)?;
    if s.state == SweepState::Running {
        let rate = speed(s).unwrap_or_else(|| "not measured yet".into());
        writeln!(out, "rate            {rate}")?;
    }
    if let Some(waiting) = s.waiting.text() {
        writeln!(out, "waiting         {waiting}")?;
    }
    let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    for (label, text) in s.time_lines(now_ms) {
        writeln!(out, "{label:<16}{text}")?;
    }
    writeln!(out, "configurations  {} ({} impossible)", s.configurations, s.impossible_configurations)?;
    writeln!(out, "shards failed   {}", s.shards_failed)?;
    if let Some(error) = &s.error {
        writeln!(out, "error           {error}")?;
    }
    for f in &s.failed_shards {
        writeln!(out, "  shard {} ({} {}, {}): {}", f.shard_id, f.moves, f.board, f.starts_text(), f.error)?;
    }
    let unlisted = s.unlisted_failed_shards();
    if unlisted > 0 && !s.failed_shards.is_empty() {
        writeln!(out, "  ... and {unlisted} more")?;
    }
    for c in s.contributors.iter().take(MAX_WORKER_LINES) {
        writeln!(out, "worker          {}", contributor_line(c))?;
    }
    if let Some(more) = s.contributors.len().checked_sub(MAX_WORKER_LINES).filter(|&n| n > 0) {
        writeln!(out, "  ... and {more} more workers (`ksweep report` lists them all)")?;
    }
    Ok(())
}

/// Workers a status lists, those with the most tasks; a cluster's fifty
/// would bury the rest.
const MAX_WORKER_LINES: usize = 8;

/// A worker whose results the sweep holds, on one line: `node-1: 1200
/// tasks, 2 min 13 s CPU; ksweep 0.1.0 (abc123) on node-1 (AMD EPYC 7B13;
/// sse4.1 ssse3)`.
fn contributor_line(c: &Contributor) -> String {
    let cpu = format_duration(Duration::from_micros(c.cpu_micros));
    let mut line = format!("{}: {} tasks, {cpu} CPU", c.name, c.tasks);
    let build = c.build_label();
    if build.is_empty() {
        line.push_str("; build and machine not recorded");
        return line;
    }
    let features = if c.features.is_empty() { "scalar".to_string() } else { c.features.join(" ") };
    line.push_str(&format!("; ksweep {build} on {} ({}; {features})", c.host, c.cpu));
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(name: &str, tasks: u64) -> Contributor {
        Contributor {
            name: name.into(),
            version: "0.1.0".into(),
            build: "abc123".into(),
            host: "node-1".into(),
            cpu: "AMD EPYC 7B13".into(),
            features: vec!["sse4.1".into(), "ssse3".into()],
            tasks,
            cpu_micros: 133_000_000,
        }
    }

    #[test]
    fn a_worker_line_names_its_build_and_machine_or_says_they_were_not_recorded() {
        assert_eq!(
            contributor_line(&worker("node-1", 1200)),
            "node-1: 1200 tasks, 2 min 13 s CPU; ksweep 0.1.0 (abc123) on node-1 (AMD EPYC 7B13; sse4.1 ssse3)"
        );
        let scalar = Contributor { features: Vec::new(), ..worker("node-1", 1) };
        assert!(contributor_line(&scalar).ends_with("(AMD EPYC 7B13; scalar)"));
        let old = Contributor { version: String::new(), build: String::new(), ..worker("embedded-1", 5) };
        assert_eq!(contributor_line(&old), "embedded-1: 5 tasks, 2 min 13 s CPU; build and machine not recorded");
    }

    #[test]
    fn a_status_lists_the_busiest_workers_and_counts_the_rest() {
        let status = SweepStatus {
            sweep_id: "abc".into(),
            name: "s".into(),
            state: SweepState::Done,
            tasks_total: 12,
            tasks_done: 12,
            successes: 12,
            configurations: 1,
            impossible_configurations: 0,
            shards_failed: 0,
            created_unix_ms: 1_740_837_600_000,
            seed: Some(7),
            started_unix_ms: None,
            finished_unix_ms: None,
            runs: sweep::RunTimes::default(),
            cpu_micros: Some(1_000),
            reused_cpu_micros: None,
            contributors: (0..12).map(|i| worker(&format!("w{i}"), 1)).collect(),
            error: None,
            spec_toml: String::new(),
            rate_per_sec: None,
            eta: None,
            failed_shards: Vec::new(),
            waiting: sweep::Waiting::default(),
            reuse: sweep::Reuse::default(),
            work: None,
        };
        let mut out = Vec::new();
        print_status(&status, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("sweep           abc (s)\nseed            7\n"), "{text}");
        assert!(text.contains("\nsubmitted       2025-03-01 14:00:00 UTC\n"), "{text}");
        assert!(text.contains("\nfinished        not recorded\n"), "{text}");
        assert!(text.contains("\nCPU time        1 ms\n"), "{text}");
        assert_eq!(text.matches("\nworker  ").count(), MAX_WORKER_LINES);
        assert!(text.ends_with("  ... and 4 more workers (`ksweep report` lists them all)\n"), "{text}");
    }
}
