//! `ksweep worker`: run shards for a coordinator.

use anyhow::{Context, Result};
use clap::Args;
use ksweep_worker::WorkerOptions;

use crate::connect::ConnectArgs;
use crate::shutdown::Signals;

/// Start a worker.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Coordinator URL, token and CA: the same as every client command's.
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Threads running tasks (default: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Name in the coordinator's logs (default: host name and process id).
    #[arg(long)]
    pub name: Option<String>,
}

impl WorkerArgs {
    pub fn options(&self) -> Result<WorkerOptions> {
        let host = std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
        let name = self
            .name
            .clone()
            .unwrap_or_else(|| format!("{}-{}", if host.is_empty() { "worker" } else { &host }, std::process::id()));
        let connect = &self.connect;
        Ok(WorkerOptions {
            coordinator: connect.coordinator.clone(),
            threads: self.threads,
            name,
            token: connect.token.resolve()?,
            tls_ca: connect.tls_ca_pem()?,
            max_message_bytes: ksweep_proto::MAX_MESSAGE_BYTES,
        })
    }
}

pub async fn run(args: WorkerArgs) -> Result<()> {
    let options = args.options()?;
    let signals = Signals::install().context("cannot install signal handlers")?;
    ksweep_worker::run(options, signals.shutdown()).await?;
    Ok(())
}
