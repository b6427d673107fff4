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
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub worker: Option<String>,
    /// Every registered worker.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

pub async fn run(args: DrainArgs, out: &mut impl Write) -> Result<()> {
    let mut client = args.connect.connect().await?;
    let request = pb::DrainRequest { worker: args.worker.unwrap_or_default(), all: args.all };
    let reply = client.drain(request).await.map_err(status_error)?.into_inner();
    if args.all {
        let n = reply.workers;
        let workers = if n == 1 { "1 worker is".to_string() } else { format!("{n} workers are") };
        writeln!(out, "{workers} draining, holding {} shards between them", reply.shards_held)?;
        return Ok(());
    }
    let held = match reply.shards_held {
        0 => "it holds no shard and leaves at its next poll".to_string(),
        1 => "it finishes the shard it holds, then leaves".to_string(),
        n => format!("it finishes the {n} shards it holds, then leaves"),
    };
    writeln!(out, "worker {} ({}) is draining: {held}", reply.worker_id, reply.name)?;
    Ok(())
}
