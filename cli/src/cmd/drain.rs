//! `ksweep drain`: ask a worker to finish what it holds and leave.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use ksweep_proto::v1 as pb;

use crate::connect::{status_error, ConnectArgs};

/// Ask a worker to finish the shards it holds and leave (maintenance, a
/// node to free): it takes nothing more, delivers, says goodbye and exits 0.
#[derive(Debug, Args)]
pub struct DrainArgs {
    /// The worker: its id (the dashboard's workers page lists them) or its
    /// name (--name), if only one worker has it.
    pub worker: String,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

pub async fn run(args: DrainArgs, out: &mut impl Write) -> Result<()> {
    let mut client = args.connect.connect().await?;
    let reply = client.drain(pb::DrainRequest { worker: args.worker }).await.map_err(status_error)?.into_inner();
    let held = match reply.shards_held {
        0 => "it holds no shard and leaves at its next poll".to_string(),
        1 => "it finishes the shard it holds, then leaves".to_string(),
        n => format!("it finishes the {n} shards it holds, then leaves"),
    };
    writeln!(out, "worker {} ({}) is draining: {held}", reply.worker_id, reply.name)?;
    Ok(())
}
