//! `ksweep coordinator` and `ksweep worker`: the two services.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use crate::cmd::client::{read_pem, ConnectArgs};
use ksweep_coordinator::{CoordinatorOptions, TlsIdentity};
use ksweep_worker::WorkerOptions;

/// Start a coordinator.
#[derive(Debug, Args)]
pub struct CoordinatorArgs {
    /// Address to listen on (use 0.0.0.0:50051 inside a container).
    #[arg(long, default_value = "127.0.0.1:50051")]
    pub listen: String,
    /// SQLite database file (created if missing; running sweeps resume).
    #[arg(long, default_value = "sweeps.db")]
    pub db: PathBuf,
    /// Shared secret every client and worker must present.
    #[arg(long, env = "KSWEEP_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Lease of a shard, in seconds: unheartbeated shards return to the queue after it.
    #[arg(long, default_value_t = 10.0)]
    pub lease_secs: f64,
    /// Target wall time of one shard on one thread, in seconds.
    #[arg(long, default_value_t = 1.0)]
    pub shard_secs: f64,
    /// A shard that fails this many times is marked failed.
    #[arg(long, default_value_t = 3)]
    pub max_shard_failures: u32,
    /// Serve TLS with this certificate chain (PEM); needs --tls-key.
    #[arg(long, env = "KSWEEP_TLS_CERT", value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, env = "KSWEEP_TLS_KEY", value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

impl CoordinatorArgs {
    pub fn options(&self) -> Result<CoordinatorOptions> {
        // An empty token (e.g. an unset variable passed through compose) means none.
        let token = self.token.clone().filter(|t| !t.is_empty());
        let mut o = CoordinatorOptions { token, ..Default::default() };
        o.scheduler.lease = positive_secs("--lease-secs", self.lease_secs)?;
        o.scheduler.target_shard = positive_secs("--shard-secs", self.shard_secs)?;
        o.scheduler.max_shard_failures = self.max_shard_failures.max(1);
        o.poll_interval = o.scheduler.lease / 4;
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            o.tls = Some(TlsIdentity { cert_pem: read_pem("--tls-cert", cert)?, key_pem: read_pem("--tls-key", key)? });
        }
        Ok(o)
    }
}

fn positive_secs(field: &str, v: f64) -> Result<Duration> {
    if !(v.is_finite() && v > 0.0 && v < 1e6) {
        anyhow::bail!("{field}: must be a positive number of seconds below 1e6, got {v}");
    }
    Ok(Duration::from_secs_f64(v))
}

pub async fn coordinator(args: CoordinatorArgs) -> Result<()> {
    let options = args.options()?;
    let store = ksweep_coordinator::store::Store::open(&args.db)
        .with_context(|| format!("--db: cannot open {}", args.db.display()))?;
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("--listen: cannot listen on {}", args.listen))?;
    ksweep_coordinator::serve(listener, store, options, crate::shutdown::signal()).await?;
    Ok(())
}

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
            token: connect.token.clone(),
            tls_ca: connect.tls_ca.as_deref().map(|p| read_pem("--tls-ca", p)).transpose()?,
            max_message_bytes: CoordinatorOptions::default().max_message_bytes,
        })
    }
}

pub async fn worker(args: WorkerArgs) -> Result<()> {
    ksweep_worker::run(args.options()?, crate::shutdown::signal()).await?;
    Ok(())
}
