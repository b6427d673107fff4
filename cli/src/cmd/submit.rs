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
}

pub async fn run(args: SubmitArgs, out: &mut impl Write) -> Result<()> {
    let text = crate::spec_file::load(&args.spec)?;
    let mut client = args.connect.connect().await?;
    let reply =
        client.submit(pb::SubmitRequest { spec_toml: text, resume: false }).await.map_err(status_error)?.into_inner();
    if let Some(status) = reply.status.map(decode_status).transpose()? {
        let verb = if reply.created { "submitted" } else { "already known:" };
        writeln!(
            out,
            "{verb} sweep {:?}: {} tasks in {} configurations",
            status.name, status.tasks_total, status.configurations
        )?;
    }
    writeln!(out, "{}", reply.sweep_id)?;
    Ok(())
}
