//! How client commands reach their data: a coordinator's address and
//! credentials (`--coordinator`, `--token`, `--tls-ca`), or a database file
//! (`--db`) for the commands that can read one offline.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use ksweep_proto::v1::sweeps_client::SweepsClient;
use ksweep_proto::BearerToken;
use tonic::codegen::InterceptedService;
use tonic::transport::Channel;

/// How to reach a coordinator.
#[derive(Debug, Clone, Args)]
pub struct ConnectArgs {
    /// Coordinator URL.
    #[arg(long, env = "KSWEEP_COORDINATOR", default_value = "http://127.0.0.1:50051")]
    pub coordinator: String,
    /// Shared-secret token, when the coordinator requires one.
    #[arg(long, env = "KSWEEP_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// CA certificate (PEM) to trust for an https:// coordinator; without
    /// it, the public web roots.
    #[arg(long, env = "KSWEEP_TLS_CA", value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
}

/// A sweeps client that presents the token on every call.
pub type Client = SweepsClient<InterceptedService<Channel, BearerToken>>;

impl ConnectArgs {
    /// The arguments of a coordinator at `url` without token or TLS (the
    /// embedded one of `ksweep run`).
    pub fn plain(url: String) -> ConnectArgs {
        ConnectArgs { coordinator: url, token: None, tls_ca: None }
    }

    /// The CA certificate of `--tls-ca`, read whole.
    pub fn tls_ca_pem(&self) -> Result<Option<Vec<u8>>> {
        self.tls_ca.as_deref().map(|p| read_pem("--tls-ca", p)).transpose()
    }

    /// A connected channel and the token interceptor.
    pub async fn channel(&self) -> Result<(Channel, BearerToken)> {
        let ca = self.tls_ca_pem()?;
        let endpoint = ksweep_proto::endpoint(&self.coordinator, ca.as_deref())
            .context("--coordinator")?
            .connect_timeout(Duration::from_secs(5));
        let channel = endpoint
            .connect()
            .await
            .with_context(|| format!("--coordinator: cannot connect to {}", self.coordinator))?;
        let token = BearerToken::new(self.token.as_deref()).context("--token: not valid header text")?;
        Ok((channel, token))
    }

    /// A sweeps client with the coordinator's message size limits.
    pub async fn connect(&self) -> Result<Client> {
        let (channel, token) = self.channel().await?;
        let max = ksweep_coordinator::CoordinatorOptions::default().max_message_bytes;
        Ok(SweepsClient::with_interceptor(channel, token).max_decoding_message_size(max).max_encoding_message_size(max))
    }
}

/// Where query commands (`status`, `table`, `export`) read from.
#[derive(Debug, Clone, Args)]
pub struct SourceArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Read this database file instead of asking a coordinator.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

/// The PEM file behind a flag, read whole.
pub fn read_pem(flag: &str, path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("{flag}: cannot read {}", path.display()))
}

/// A coordinator's refusal as an error: its message is what users need; the
/// gRPC code and metadata are noise on a terminal.
pub fn status_error(s: tonic::Status) -> anyhow::Error {
    anyhow::anyhow!("{}", s.message())
}
