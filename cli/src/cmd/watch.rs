//! `ksweep watch`: follow a sweep with a progress bar until it ends.

use std::io::Write;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use ksweep_proto::convert::state_name;
use ksweep_proto::v1 as pb;

use crate::cmd::status::print_status;
use crate::connect::{status_error, Client, ConnectArgs};

/// Follow a sweep's progress until it ends.
#[derive(Debug, Args)]
pub struct WatchArgs {
    pub id: String,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

pub async fn run(args: WatchArgs, out: &mut impl Write) -> Result<()> {
    let mut client = args.connect.connect().await?;
    let last = follow(&mut client, &args.id).await?;
    print_status(&last, out)?;
    if last.state != pb::SweepState::Done as i32 {
        bail!("sweep {} ended {}", last.sweep_id, state_name(last.state));
    }
    Ok(())
}

/// Draws progress from a status stream until the sweep ends; returns the
/// last status.
pub async fn follow(client: &mut Client, id: &str) -> Result<pb::SweepStatus> {
    let mut stream = client.watch(pb::SweepRef { sweep_id: id.to_string() }).await.map_err(status_error)?.into_inner();
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} tasks {per_sec} eta {eta} {msg}",
        )
        .expect("valid template"),
    );
    let mut last = None;
    while let Some(status) = stream.message().await.map_err(status_error)? {
        bar.set_length(status.tasks_total);
        bar.set_position(status.tasks_done);
        bar.set_message(state_name(status.state));
        last = Some(status);
    }
    bar.finish();
    last.context("the coordinator closed the watch without a status")
}
