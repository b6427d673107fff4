//! `ksweep coordinator`: serve sweeps to workers and clients over gRPC.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use ksweep_coordinator::{CoordinatorOptions, TlsIdentity};

use ksweep_proto::cluster_dir::ClusterDir;
use ksweep_proto::v1 as pb;

use crate::connect::{read_pem, ConnectArgs, TokenArgs};
use crate::shutdown::Signals;

/// Start a coordinator.
#[derive(Debug, Args)]
pub struct CoordinatorArgs {
    /// Address to listen on (use 0.0.0.0:50051 inside a container).
    #[arg(long, default_value = "127.0.0.1:50051")]
    pub listen: String,
    /// SQLite database file (created if missing; running sweeps resume).
    /// Default: sweeps.db, or the cluster directory's.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// A cluster directory (`ksweep slurm` makes one): the database and
    /// token are its own, and once listening the coordinator announces its
    /// address there (`coordinator.url`) for workers and clients to find.
    #[arg(long, env = "KSWEEP_DIR", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The host name announced in --dir (default: this machine's name).
    #[arg(long, value_name = "HOST", requires = "dir")]
    pub announce_host: Option<String>,
    /// Submit this spec once serving (resuming it if the database holds it).
    #[arg(long, value_name = "SPEC")]
    pub submit: Option<PathBuf>,
    /// Once the submitted sweep has ended, drain every worker, say so in
    /// --dir (`finished`) and exit: 0 if it is done. A batch job's
    /// coordinator, whose job should end with its sweep.
    #[arg(long, requires = "submit")]
    pub until_done: bool,
    /// Shared secret every client and worker must present.
    #[command(flatten)]
    pub token: TokenArgs,
    /// Serve without a token on an address other than loopback: anyone who
    /// reaches the port can submit sweeps, report results and read the
    /// dashboard. Without a token and without this, only loopback
    /// addresses are served.
    #[arg(long, conflicts_with_all = ["token", "token_file"])]
    pub insecure_no_token: bool,
    /// Lease of a shard, in seconds: unheartbeated shards return to the queue after it.
    #[arg(long, default_value_t = 10.0)]
    pub lease_secs: f64,
    /// Target wall time of one shard on one thread, in seconds.
    #[arg(long, default_value_t = 1.0)]
    pub shard_secs: f64,
    /// A shard that fails this many times is marked failed (a lost lease or
    /// a stall counts once per worker, a reported error every time).
    #[arg(long, default_value_t = 3)]
    pub max_shard_failures: u32,
    /// Most cells of one board any spec may ask for (a spec's own `[limits]` are held to it).
    #[arg(long, default_value_t = sweep::Limits::default().max_cells)]
    pub max_cells: u64,
    /// Most tasks (starts x methods) of one sweep any spec may ask for.
    #[arg(long, default_value_t = sweep::Limits::default().max_tasks)]
    pub max_tasks: u64,
    /// Most configurations (move set, board) of one sweep any spec may ask for.
    #[arg(long, default_value_t = ksweep_coordinator::SERVED_MAX_CONFIGURATIONS)]
    pub max_configurations: u64,
    /// Most `budget` (bt nodes, solve work) one task of any spec may ask
    /// for: such a task holds a worker's thread until its budget is spent.
    #[arg(long, default_value_t = sweep::Limits::default().max_budget)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..))]
    pub max_budget: u64,
    /// Most `iterations` one nn task of any spec may ask for.
    #[arg(long, default_value_t = sweep::Limits::default().max_iterations)]
    #[arg(value_parser = clap::value_parser!(u32).range(1..))]
    pub max_iterations: u32,
    /// Connections served at once; silent ones are closed (10 s before the
    /// handshake, 120 s after), and at the limit a new one takes the slot of
    /// the oldest that has made no call with the token, so idle or hostile
    /// sockets cannot starve clients.
    #[arg(long, default_value_t = ksweep_coordinator::ConnectionLimits::default().max)]
    #[arg(value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_connections: usize,
    /// Serve TLS with this certificate chain (PEM); needs --tls-key.
    #[arg(long, env = "KSWEEP_TLS_CERT", value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, env = "KSWEEP_TLS_KEY", value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    #[command(flatten)]
    pub http: HttpArg,
}

/// The web dashboard's address (`ksweep coordinator` and `ksweep run`).
#[derive(Debug, Clone, clap::Args)]
pub struct HttpArg {
    /// Serve the read-only web dashboard here; `--http` alone means
    /// 127.0.0.1:8080. With a token, the dashboard asks for it.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8080")]
    pub http: Option<String>,
    /// A host name the dashboard answers to besides its address (and
    /// localhost): the name a reverse proxy or DNS gives it. Repeatable;
    /// `*` for any. Requests naming other hosts get 421.
    #[arg(long, value_name = "NAME", requires = "http")]
    pub http_host: Vec<String>,
}

/// The dashboard asked for: its address and the names it answers to.
#[derive(Debug, Clone)]
pub struct Dashboard {
    pub addr: SocketAddr,
    pub hosts: Vec<String>,
}

impl Dashboard {
    /// Serves this dashboard with the coordinator of `options`.
    pub fn serve_with(&self, options: &mut CoordinatorOptions) {
        options.http = Some(self.addr);
        options.dashboard.hosts = self.hosts.clone();
    }
}

impl HttpArg {
    pub fn addr(&self) -> Result<Option<std::net::SocketAddr>> {
        self.http
            .as_deref()
            .map(|a| a.parse().with_context(|| format!("--http: {a:?} is not an address like 127.0.0.1:8080")))
            .transpose()
    }

    /// The dashboard asked for, its `--http-host` names checked.
    pub fn dashboard(&self) -> Result<Option<Dashboard>> {
        let Some(addr) = self.addr()? else { return Ok(None) };
        for name in &self.http_host {
            let plain =
                !name.is_empty() && !name.contains(|c: char| c.is_whitespace() || c.is_control() || "/@".contains(c));
            anyhow::ensure!(plain, "--http-host: {name:?} is not a host name (like dash.example.org, or * for any)");
        }
        Ok(Some(Dashboard { addr, hosts: self.http_host.clone() }))
    }
}

impl CoordinatorArgs {
    /// The database file: --db, the cluster directory's, or sweeps.db.
    pub fn database(&self) -> PathBuf {
        match (&self.db, self.cluster_dir()) {
            (Some(db), _) => db.clone(),
            (None, Some(dir)) => dir.database(),
            (None, None) => PathBuf::from("sweeps.db"),
        }
    }

    fn cluster_dir(&self) -> Option<ClusterDir> {
        self.dir.as_ref().map(ClusterDir::new)
    }

    pub fn options(&self) -> Result<CoordinatorOptions> {
        let token = self.token.resolve_in(self.cluster_dir().as_ref())?;
        let http = self.http.addr()?;
        if token.is_none() {
            self.refuse_exposed_without_token(http)?;
            tracing::warn!("no token: anyone who reaches the port can submit sweeps and report results");
        }
        let mut o = CoordinatorOptions { token, ..Default::default() };
        o.scheduler.lease = positive_secs("--lease-secs", self.lease_secs)?;
        o.scheduler.target_shard = positive_secs("--shard-secs", self.shard_secs)?;
        o.scheduler.max_shard_failures = self.max_shard_failures.max(1);
        o.poll_interval = o.scheduler.lease / 4;
        o.connections.max = self.max_connections;
        o.spec_caps = sweep::Limits {
            max_cells: self.max_cells,
            max_tasks: self.max_tasks,
            max_configurations: self.max_configurations,
            max_budget: self.max_budget,
            max_iterations: self.max_iterations,
        };
        if let Some(dashboard) = self.http.dashboard()? {
            dashboard.serve_with(&mut o);
        }
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            o.tls = Some(TlsIdentity { cert_pem: read_pem("--tls-cert", cert)?, key_pem: read_pem("--tls-key", key)? });
        }
        Ok(o)
    }
}

impl CoordinatorArgs {
    /// Without a token, serving beyond this machine must be asked for
    /// (--insecure-no-token): an unset or forgotten variable must not open
    /// the coordinator to the network.
    fn refuse_exposed_without_token(&self, http: Option<SocketAddr>) -> Result<()> {
        if self.insecure_no_token {
            return Ok(());
        }
        let exposed = std::iter::once(("--listen", self.listen.clone()))
            .chain(http.map(|a| ("--http", a.to_string())))
            .find(|(_, addr)| !loopback_only(addr));
        if let Some((flag, addr)) = exposed {
            anyhow::bail!(
                "{flag}: {addr} is not a loopback address and no token is set: give --token-file (KSWEEP_TOKEN_FILE) \
                 or --token (KSWEEP_TOKEN), or --insecure-no-token to let anyone who reaches it submit sweeps and \
                 report results"
            );
        }
        Ok(())
    }
}

/// Whether every address `addr` resolves to is a loopback one (false when
/// it resolves to none).
fn loopback_only(addr: &str) -> bool {
    let Ok(addrs) = addr.to_socket_addrs() else { return false };
    let ips: Vec<_> = addrs.map(|a| a.ip()).collect();
    !ips.is_empty() && ips.iter().all(|ip| ip.is_loopback())
}

fn positive_secs(field: &str, v: f64) -> Result<Duration> {
    if !(v.is_finite() && v > 0.0 && v < 1e6) {
        anyhow::bail!("{field}: must be a positive number of seconds below 1e6, got {v}");
    }
    Ok(Duration::from_secs_f64(v))
}

pub async fn run(args: CoordinatorArgs) -> Result<()> {
    let options = args.options()?;
    // The spec first: a bad one is said before anything starts.
    let submit = args.submit.as_deref().map(crate::spec_file::load).transpose().context("--submit")?;
    anyhow::ensure!(
        submit.is_none() || args.tls_cert.is_none(),
        "--submit: not with --tls-cert (submit with ksweep submit)"
    );
    let mut signals = Signals::install().context("cannot install signal handlers")?;
    let db = args.database();
    if let (None, Some(dir)) = (&args.db, args.cluster_dir()) {
        dir.check_database().context("--dir")?;
    }
    let store =
        ksweep_coordinator::store::Store::open(&db).with_context(|| format!("--db: cannot open {}", db.display()))?;
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("--listen: cannot listen on {}", args.listen))?;
    let local = listener.local_addr().context("--listen: no local address")?;
    // On stdout, for scripts and tests that listen on port 0.
    println!("listening on {local}");
    let token = options.token.clone();
    let Some(spec) = submit else {
        if let Some(dir) = args.cluster_dir() {
            announce(&dir, args.announce_host.as_deref(), local)?;
        }
        ksweep_coordinator::serve(listener, store, options, signals.shutdown()).await?;
        return Ok(());
    };

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(ksweep_coordinator::serve(listener, store, options, async {
        let _ = stopped.await;
    }));
    let own = format!("http://{}", SocketAddr::new(reachable_ip(local.ip()), local.port()));
    let dir = args.cluster_dir();
    let driven = async {
        let own =
            ConnectArgs { coordinator: own, token: TokenArgs { token, token_file: None }, tls_ca: None, dir: None };
        let mut client = own.connect().await?;
        if let Some(dir) = &dir {
            announce(dir, args.announce_host.as_deref(), local)?;
        }
        let reply = client
            .submit(pb::SubmitRequest { spec_toml: spec, resume: true, no_reuse: false })
            .await
            .map_err(crate::connect::status_error)?
            .into_inner();
        tracing::info!(sweep = %reply.sweep_id, "serving the submitted sweep");
        if !args.until_done {
            // Serve on until a signal.
            std::future::pending::<()>().await;
        }
        let last = crate::cmd::watch::follow(&mut client, &reply.sweep_id).await?;
        drain_everyone(&mut client).await?;
        Ok::<_, anyhow::Error>(Some(last))
    };
    // A signal stops it whatever it was doing; the sweep resumes when it
    // starts again.
    let outcome = tokio::select! {
        outcome = driven => outcome,
        _ = signals.recv() => Ok(None),
    };
    let _ = stop.send(());
    server.await.context("coordinator task")??;
    let Some(last) = outcome? else { return Ok(()) };
    let state = last.state.name();
    if let Some(dir) = &dir {
        dir.finish(state).with_context(|| format!("--dir: cannot write to {}", dir.path().display()))?;
    }
    anyhow::ensure!(last.state == sweep::SweepState::Done, "sweep {} ended {state}", last.sweep_id);
    tracing::info!(sweep = %last.sweep_id, "the sweep is done; leaving");
    Ok(())
}

/// How long a coordinator ending with its sweep waits for its workers to
/// leave: drained ones leave at their next poll.
const WORKERS_LEAVE_WITHIN: Duration = Duration::from_secs(60);

/// Asks every worker to leave, until none is left (or a minute passed:
/// one that vanished is not waited for longer than its lease).
async fn drain_everyone(client: &mut crate::connect::Client) -> Result<()> {
    let began = std::time::Instant::now();
    loop {
        let request = pb::DrainRequest { worker: String::new(), all: true };
        let left = client.drain(request).await.map_err(crate::connect::status_error)?.into_inner().workers;
        if left == 0 || began.elapsed() > WORKERS_LEAVE_WITHIN {
            if left > 0 {
                tracing::warn!(workers = left, "workers still registered; leaving without them");
            }
            return Ok(());
        }
        tracing::info!(workers = left, "waiting for the workers to leave");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Writes this coordinator's address into the cluster directory.
fn announce(dir: &ClusterDir, host: Option<&str>, local: SocketAddr) -> Result<()> {
    let host = match host {
        Some(h) => h.to_string(),
        // Listening on every address: others reach it by this machine's name.
        None if local.ip().is_unspecified() => host_name()?,
        None => local.ip().to_string(),
    };
    let host = if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host };
    let url = format!("http://{host}:{}", local.port());
    dir.announce(&url).with_context(|| format!("--dir: cannot write to {}", dir.path().display()))?;
    tracing::info!(%url, dir = %dir.path().display(), "announced");
    Ok(())
}

/// This machine's host name (the kernel's).
fn host_name() -> Result<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .context("cannot read this machine's host name; give --announce-host")?;
    let name = name.trim();
    anyhow::ensure!(!name.is_empty(), "this machine has no host name; give --announce-host");
    Ok(name.to_string())
}

/// An address this process can reach its own listener at.
fn reachable_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::{loopback_only, HttpArg};
    use clap::Parser;

    #[derive(Parser)]
    struct Args {
        #[command(flatten)]
        http: HttpArg,
    }

    fn parse(args: &[&str]) -> Result<HttpArg, clap::Error> {
        Args::try_parse_from(std::iter::once("ksweep").chain(args.iter().copied())).map(|a| a.http)
    }

    /// `--http-host` names are the dashboard's, checked, and need `--http`.
    #[test]
    fn http_hosts_go_with_the_dashboard() {
        let d = parse(&["--http", "0.0.0.0:8080", "--http-host", "dash.example", "--http-host", "*"]).unwrap();
        let d = d.dashboard().unwrap().unwrap();
        assert_eq!((d.addr.port(), d.hosts), (8080, vec!["dash.example".to_string(), "*".to_string()]));
        let mut options = ksweep_coordinator::CoordinatorOptions::default();
        parse(&["--http", "--http-host", "x.example"]).unwrap().dashboard().unwrap().unwrap().serve_with(&mut options);
        assert_eq!(options.http.map(|a| a.to_string()).as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(options.dashboard.hosts, ["x.example"]);
        assert!(parse(&["--http-host", "dash.example"]).is_err(), "without --http");
        for bad in ["", "a b", "http://x", "user@x"] {
            let e = parse(&["--http", "--http-host", bad]).unwrap().dashboard().unwrap_err().to_string();
            assert!(e.starts_with("--http-host: "), "{e}");
        }
        assert!(parse(&[]).unwrap().dashboard().unwrap().is_none());
    }

    #[test]
    fn only_addresses_all_on_loopback_count() {
        for addr in ["127.0.0.1:50051", "127.1.2.3:0", "[::1]:8080"] {
            assert!(loopback_only(addr), "{addr}");
        }
        for addr in ["0.0.0.0:50051", "[::]:50051", "10.0.0.7:1", "not an address"] {
            assert!(!loopback_only(addr), "{addr}");
        }
    }
}
