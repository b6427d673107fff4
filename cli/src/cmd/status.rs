//! `ksweep status`: a sweep's progress, or every sweep's.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use ksweep_proto::convert::state_name;
use ksweep_proto::v1 as pb;

use crate::connect::SourceArgs;
use crate::source::Source;

/// Show a sweep's status (all sweeps when no id is given).
#[derive(Debug, Args)]
pub struct StatusArgs {
    pub id: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
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
    for (i, s) in statuses.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        print_status(s, out)?;
    }
    Ok(())
}

/// One sweep's status, one field a line.
pub fn print_status(s: &pb::SweepStatus, out: &mut impl Write) -> Result<()> {
    let pct = if s.tasks_total > 0 { 100.0 * s.tasks_done as f64 / s.tasks_total as f64 } else { 100.0 };
    writeln!(out, "sweep           {} ({})", s.sweep_id, s.name)?;
    writeln!(out, "state           {}", state_name(s.state))?;
    writeln!(out, "tasks           {} / {} ({pct:.1}%)", s.tasks_done, s.tasks_total)?;
    writeln!(out, "successes       {}", s.successes)?;
    writeln!(out, "configurations  {} ({} impossible)", s.configurations, s.impossible_configurations)?;
    writeln!(out, "shards failed   {}", s.shards_failed)?;
    if !s.error.is_empty() {
        writeln!(out, "error           {}", s.error)?;
    }
    Ok(())
}
