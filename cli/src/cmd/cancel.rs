//! `ksweep cancel`: stop a running sweep.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use ksweep_proto::v1 as pb;
use sweep::SweepState;

use crate::cmd::status::print_status;
use crate::connect::ConnectArgs;

/// Cancel a running sweep.
#[derive(Debug, Args)]
pub struct CancelArgs {
    pub id: String,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

pub async fn run(args: CancelArgs, out: &mut impl Write) -> Result<()> {
    let mut client = args.connect.connect().await?;
    let status = crate::connect::answered(client.cancel(pb::SweepRef { sweep_id: args.id }).await)?;
    match status.state {
        SweepState::Cancelled => writeln!(
            out,
            "cancelled sweep {} ({}): {} of {} tasks done; `ksweep resume {}` runs the rest",
            status.sweep_id, status.name, status.tasks_done, status.tasks_total, status.sweep_id
        )?,
        // Only a running sweep is cancelled: one that ended stays as it was.
        state => writeln!(out, "sweep {} ({}) is {state}: nothing to cancel", status.sweep_id, status.name)?,
    }
    writeln!(out)?;
    print_status(&status, out)
}
