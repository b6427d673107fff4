//! `ksweep submit`: send a sweep spec to a coordinator.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use ksweep_proto::v1 as pb;

use crate::connect::{status_error, ConnectArgs};
use crate::source::decode_status;

/// Submit a sweep spec; prints its id on the last line.
#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The sweep spec (TOML).
    pub spec: PathBuf,
    #[command(flatten)]
    pub connect: ConnectArgs,
    #[command(flatten)]
    pub reuse: ReuseArg,
}

/// Whether a new sweep takes the results its database already holds.
#[derive(Debug, Clone, Copy, Args)]
pub struct ReuseArg {
    /// Run every task, even those whose result the database holds
    /// (docs/identity.md); a rerun that disagrees with a stored result is
    /// reported as a conflict.
    #[arg(long)]
    pub no_reuse: bool,
}

impl ReuseArg {
    /// The request that submits `spec` (not resuming a stopped sweep).
    pub fn request(self, spec: String) -> pb::SubmitRequest {
        pb::SubmitRequest { spec_toml: spec, resume: false, no_reuse: self.no_reuse }
    }
}

pub async fn run(args: SubmitArgs, out: &mut impl Write) -> Result<()> {
    let text = crate::spec_file::load(&args.spec)?;
    let mut client = args.connect.connect().await?;
    let reply = client.submit(args.reuse.request(text)).await.map_err(status_error)?.into_inner();
    for line in describe(&reply)? {
        writeln!(out, "{line}")?;
    }
    writeln!(out, "{}", reply.sweep_id)?;
    Ok(())
}

/// What a submit did, for people: the sweep, and for a new one what it took
/// from stored results and what is left to run.
pub fn describe(reply: &pb::SubmitReply) -> Result<Vec<String>> {
    let Some(status) = reply.status.clone().map(decode_status).transpose()? else { return Ok(Vec::new()) };
    let verb = if reply.created { "submitted" } else { "already known:" };
    let mut lines = vec![format!(
        "{verb} sweep {:?}: {} tasks in {} configurations",
        status.name, status.tasks_total, status.configurations
    )];
    if reply.created {
        lines.push(plan_line(status.tasks_total, status.reuse.tasks, reply.estimated_cpu_secs));
    }
    Ok(lines)
}

/// `1892 of 3000 tasks already known, 1108 to run (about 12 s of CPU)`.
pub fn plan_line(total: u64, known: u64, cpu_secs: Option<f64>) -> String {
    let left = total.saturating_sub(known);
    let time = match cpu_secs {
        _ if left == 0 => String::new(),
        Some(secs) if secs.is_finite() && secs >= 0.0 => {
            format!(" (about {} of CPU)", sweep::format_eta(std::time::Duration::from_secs_f64(secs.max(1.0))))
        }
        // A coordinator before the priors sent no estimate on a fresh file.
        _ => " (time unknown)".to_string(),
    };
    format!("{known} of {total} tasks already known, {left} to run{time}")
}
