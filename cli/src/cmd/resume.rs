//! `ksweep resume`: run a cancelled or failed sweep again from where it
//! stopped.

use std::io::Write;

use anyhow::{bail, Result};
use clap::Args;
use ksweep_proto::v1 as pb;
use sweep::SweepState;

use crate::cmd::status::print_status;
use crate::connect::{status_error, ConnectArgs};
use crate::source::decode_status;

/// Resume a cancelled or failed sweep: its stored results stay, the rest
/// runs; a failed sweep's failed shards are retried from scratch (they may
/// have failed for want of a worker that has joined since).
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The sweep: its id, a unique prefix of it, or its name.
    pub id: String,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

pub async fn run(args: ResumeArgs, out: &mut impl Write) -> Result<()> {
    let mut client = args.connect.connect().await?;
    let status = crate::connect::sweep_status(&mut client, &args.id).await?;
    if status.state == SweepState::Done {
        bail!("sweep {} is {}; only a cancelled or failed sweep resumes", status.sweep_id, status.state);
    }
    // The stored spec names the same sweep; `resume` runs a cancelled or
    // failed one again.
    let reply = client
        .submit(pb::SubmitRequest { spec_toml: status.spec_toml, resume: true, no_reuse: false })
        .await
        .map_err(status_error)?;
    match reply.into_inner().status {
        Some(status) => print_status(&decode_status(status)?, out),
        None => bail!("the coordinator answered without a status"),
    }
}
