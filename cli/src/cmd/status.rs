//! `ksweep status`: a sweep's progress, or every sweep's.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use sweep::{format_eta, format_rate, SweepState, SweepStatus};

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

/// One line per sweep: id, name, state, done/total, rate (and ETA).
fn print_lines(statuses: &[SweepStatus], out: &mut impl Write) -> Result<()> {
    let rows: Vec<[String; 5]> = statuses
        .iter()
        .map(|s| {
            [
                s.sweep_id.clone(),
                s.name.clone(),
                s.state.name().to_string(),
                format!("{}/{}", s.tasks_done, s.tasks_total),
                speed(s),
            ]
        })
        .collect();
    let header = ["ID", "NAME", "STATE", "TASKS", "RATE"].map(String::from);
    let widths: Vec<usize> =
        (0..5).map(|i| rows.iter().chain([&header]).map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(c, &w)| format!("{c:<w$}")).collect();
        writeln!(out, "{}", cells.join("  ").trim_end())?;
    }
    Ok(())
}

/// The rate and ETA the coordinator measured, or what is known instead.
pub fn speed(s: &SweepStatus) -> String {
    match (s.rate_per_sec, s.eta) {
        (Some(rate), Some(eta)) => format!("{}, ETA {}", format_rate(rate), format_eta(eta)),
        (Some(rate), None) => format_rate(rate),
        // Not measured yet (two samples seconds apart), ended, or read offline.
        _ => "-".into(),
    }
}

/// One sweep's status, one field a line.
pub fn print_status(s: &SweepStatus, out: &mut impl Write) -> Result<()> {
    let pct = s.percent_done();
    writeln!(out, "sweep           {} ({})", s.sweep_id, s.name)?;
    writeln!(out, "state           {}", s.state)?;
    writeln!(out, "tasks           {} / {} ({pct:.1}%)", s.tasks_done, s.tasks_total)?;
    writeln!(out, "successes       {}", s.successes)?;
    if let Some(reuse) = s.reuse.summary(s.tasks_total) {
        writeln!(out, "reused          {reuse}")?;
    }
    if s.state == SweepState::Running {
        writeln!(out, "rate            {}", speed(s))?;
    }
    if let Some(waiting) = s.waiting.text() {
        writeln!(out, "waiting         {waiting}")?;
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
    Ok(())
}
