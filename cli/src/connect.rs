//! How client commands reach their data: a coordinator's address and
//! credentials (`--coordinator`, `--token`, `--tls-ca`), or a database file
//! (`--db`) for the commands that can read one offline.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use ksweep_proto::cluster_dir::{ClusterDir, Located};
use ksweep_proto::v1 as pb;
use ksweep_proto::v1::sweeps_client::SweepsClient;
use ksweep_proto::BearerToken;
use tonic::codegen::InterceptedService;
use tonic::transport::Channel;

use crate::input_file;

/// How to reach a coordinator.
#[derive(Debug, Clone, Args)]
pub struct ConnectArgs {
    /// Coordinator URL.
    #[arg(long, env = "KSWEEP_COORDINATOR", default_value = "http://127.0.0.1:50051")]
    pub coordinator: String,
    #[command(flatten)]
    pub token: TokenArgs,
    /// CA certificate (PEM) to trust for an https:// coordinator; without
    /// it, the public web roots.
    #[arg(long, env = "KSWEEP_TLS_CA", value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// A cluster directory (`ksweep slurm --dir`): the coordinator's
    /// address and the token are read from the files its jobs write there.
    #[arg(long, env = "KSWEEP_DIR", value_name = "DIR", conflicts_with = "coordinator")]
    pub dir: Option<PathBuf>,
}

/// A sweeps client that presents the token on every call.
pub type Client = SweepsClient<InterceptedService<Channel, BearerToken>>;

impl ConnectArgs {
    /// The arguments of a coordinator at `url` with `token` and no TLS (the
    /// embedded one of `ksweep run`).
    pub fn plain(url: String, token: String) -> ConnectArgs {
        ConnectArgs { coordinator: url, token: TokenArgs::new(token), tls_ca: None, dir: None }
    }

    /// The `--dir` cluster directory, if any.
    pub fn cluster_dir(&self) -> Option<ClusterDir> {
        self.dir.as_ref().map(ClusterDir::new)
    }

    /// The token: as given, or else the cluster directory's.
    pub fn token(&self) -> Result<Option<String>> {
        self.token.resolve_in(self.cluster_dir().as_ref())
    }

    /// The coordinator's URL: as given, or as the cluster directory says.
    pub fn url(&self) -> Result<String> {
        let Some(dir) = self.cluster_dir() else { return Ok(self.coordinator.clone()) };
        match dir.locate().context("--dir")? {
            Located::At(url) => Ok(url),
            Located::NotYet => anyhow::bail!(
                "--dir: no coordinator has announced itself in {} yet (is its job still pending? squeue --me)",
                dir.path().display()
            ),
            Located::Finished(state) => anyhow::bail!(
                "--dir: the coordinator of {} has finished ({state}); its results stay in {}",
                dir.path().display(),
                dir.database().display()
            ),
        }
    }

    /// The CA certificate of `--tls-ca`, read whole.
    pub fn tls_ca_pem(&self) -> Result<Option<Vec<u8>>> {
        self.tls_ca.as_deref().map(|p| read_pem("--tls-ca", p)).transpose()
    }

    /// A connected channel and the token interceptor.
    pub async fn channel(&self) -> Result<(Channel, BearerToken)> {
        // The files first: a bad token or CA is said even with no coordinator up.
        // resolve() checked it; kept for a token given in code.
        let token = BearerToken::new(self.token()?.as_deref()).context("--token")?;
        let ca = self.tls_ca_pem()?;
        let url = self.url()?;
        let endpoint = ksweep_proto::endpoint(&url, ca.as_deref())
            .context("--coordinator")?
            .connect_timeout(Duration::from_secs(5));
        let channel = endpoint.connect().await.map_err(|e| {
            // rustls meeting a plain HTTP/2 server reads its first frame as a
            // TLS record of an unknown type.
            let plain = url.starts_with("https://") && format!("{e:?}").contains("InvalidContentType");
            let hint = if plain {
                format!(": the coordinator does not speak TLS; use {}", url.replacen("https://", "http://", 1))
            } else {
                String::new()
            };
            anyhow::Error::new(e).context(format!("--coordinator: cannot connect to {url}{hint}"))
        })?;
        Ok((channel, token))
    }

    /// A sweeps client with the coordinator's message size limits.
    pub async fn connect(&self) -> Result<Client> {
        let (channel, token) = self.channel().await?;
        let max = ksweep_coordinator::CoordinatorOptions::default().max_message_bytes;
        Ok(SweepsClient::with_interceptor(channel, token).max_decoding_message_size(max).max_encoding_message_size(max))
    }
}

/// The shared secret every call presents (and a coordinator requires).
#[derive(Debug, Clone, Default, Args)]
pub struct TokenArgs {
    /// Shared-secret token. Prefer --token-file: a flag shows in the process list.
    #[arg(long, env = "KSWEEP_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// File holding the token (one line; surrounding whitespace ignored).
    #[arg(long, env = "KSWEEP_TOKEN_FILE", value_name = "FILE", conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
}

impl TokenArgs {
    /// A token given directly.
    pub fn new(token: String) -> TokenArgs {
        TokenArgs { token: Some(token), token_file: None }
    }

    /// The token as given, or else the cluster directory's (`--dir`),
    /// which must be there and trusted (`ClusterDir::token`).
    pub fn resolve_in(&self, dir: Option<&ClusterDir>) -> Result<Option<String>> {
        match dir {
            Some(dir) if self.token.is_none() && self.token_file.is_none() => match dir.token().context("--dir")? {
                Some(token) => Ok(Some(token)),
                None => anyhow::bail!(
                    "--dir: no token in {}: `ksweep slurm` writes one; or give --token-file",
                    dir.path().display()
                ),
            },
            _ => self.resolve(),
        }
    }

    /// The token, if any. One [`ksweep_proto::check_token`] refuses (empty
    /// or blank, which would silently mean "no authentication") is refused
    /// wherever it comes from (--token, KSWEEP_TOKEN, --token-file, whose
    /// surrounding whitespace is not the token's). To go without, give no
    /// token at all.
    pub fn resolve(&self) -> Result<Option<String>> {
        if let Some(path) = &self.token_file {
            let text = input_file::read_text(path, input_file::TOKEN_FILE).context("--token-file")?;
            let token = text.trim();
            ksweep_proto::check_token(token).with_context(|| format!("--token-file: {}", path.display()))?;
            return Ok(Some(token.to_string()));
        }
        let Some(token) = self.token.as_deref() else { return Ok(None) };
        if let Err(e) = ksweep_proto::check_token(token) {
            // clap fills --token from KSWEEP_TOKEN: name where it came from.
            let source =
                if std::env::var("KSWEEP_TOKEN").is_ok_and(|v| v == token) { "KSWEEP_TOKEN" } else { "--token" };
            anyhow::bail!("{source}: {e}")
        }
        Ok(Some(token.to_string()))
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

impl SourceArgs {
    /// The database to read offline: `--db`, or a cluster directory's
    /// whose coordinator has finished (or never started: its results, if
    /// any, are all in the file); its files must be trusted.
    pub fn offline_db(&self) -> Result<Option<PathBuf>> {
        if self.db.is_some() {
            return Ok(self.db.clone());
        }
        let Some(dir) = self.connect.cluster_dir() else { return Ok(None) };
        match dir.locate().context("--dir")? {
            Located::At(_) => Ok(None),
            Located::Finished(_) | Located::NotYet => {
                dir.check_database().context("--dir")?;
                Ok(Some(dir.database()).filter(|db| db.exists()))
            }
        }
    }
}

/// The PEM file behind a flag, read whole (within its limit).
pub fn read_pem(flag: &str, path: &Path) -> Result<Vec<u8>> {
    input_file::read(path, input_file::PEM).context(flag.to_string())
}

/// A sweep's status from a coordinator, by id, unique prefix or name (empty:
/// the only one): the look-up `status`, `resume`, `rm` and `rename` make.
pub async fn sweep_status(client: &mut Client, id: &str) -> Result<sweep::SweepStatus> {
    answered(client.status(pb::SweepRef { sweep_id: id.to_string() }).await)
}

/// A coordinator's answer that is a sweep's status (`Status`, `Cancel`,
/// `Rename`), decoded, or its refusal as an error.
pub fn answered(reply: Result<tonic::Response<pb::SweepStatus>, tonic::Status>) -> Result<sweep::SweepStatus> {
    Ok(sweep::SweepStatus::try_from(reply.map_err(status_error)?.into_inner())?)
}

/// A coordinator's refusal as an error: its message is what users need; the
/// gRPC code and metadata are noise on a terminal.
pub fn status_error(s: tonic::Status) -> anyhow::Error {
    let message = match s.code() {
        tonic::Code::Unauthenticated => format!(
            "{}; give the coordinator's token with --token-file FILE (or KSWEEP_TOKEN_FILE), --token or KSWEEP_TOKEN",
            s.message()
        ),
        _ => s.message().to_string(),
    };
    crate::failure::Refused { code: s.code(), message }.into()
}
