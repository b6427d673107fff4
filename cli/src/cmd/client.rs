//! The client commands: `submit`, `status`, `watch`, `cancel`, `table`,
//! `export`. `status`, `table` and `export` read either a coordinator or,
//! with `--db`, a database file directly: the same rows either way.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use ksweep_coordinator::store::Store;
use ksweep_proto::v1 as pb;
use ksweep_proto::v1::sweeps_client::SweepsClient;
use ksweep_proto::BearerToken;
use sweep::{render, AggregateRow, Metric, Sweep, TableFormat, TableLayout, TableOptions};
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

pub type Client = SweepsClient<InterceptedService<Channel, BearerToken>>;

impl ConnectArgs {
    /// A connected channel and the token interceptor.
    pub async fn channel(&self) -> Result<(Channel, BearerToken)> {
        let ca = self.tls_ca.as_deref().map(|p| read_pem("--tls-ca", p)).transpose()?;
        let endpoint = ksweep_proto::endpoint(&self.coordinator, ca.as_deref())
            .context("--coordinator")?
            .connect_timeout(Duration::from_secs(5));
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| anyhow::anyhow!("{}", ksweep_proto::error_chain(&e)))
            .with_context(|| format!("--coordinator: cannot connect to {}", self.coordinator))?;
        let token = BearerToken::new(self.token.as_deref()).context("--token: not valid header text")?;
        Ok((channel, token))
    }

    pub async fn connect(&self) -> Result<Client> {
        let (channel, token) = self.channel().await?;
        let max = ksweep_coordinator::CoordinatorOptions::default().max_message_bytes;
        Ok(SweepsClient::with_interceptor(channel, token).max_decoding_message_size(max).max_encoding_message_size(max))
    }
}

/// The PEM file behind a flag, read whole.
pub fn read_pem(flag: &str, path: &std::path::Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("{flag}: cannot read {}", path.display()))
}

/// Where query commands read from.
#[derive(Debug, Clone, Args)]
pub struct SourceArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Read this database file instead of asking a coordinator.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

fn status_error(s: tonic::Status) -> anyhow::Error {
    anyhow::anyhow!("{}", s.message())
}

/// Submit a sweep spec; prints its id on the last line.
#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The sweep spec (TOML).
    pub spec: PathBuf,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

pub async fn submit(args: SubmitArgs, out: &mut impl Write) -> Result<()> {
    let text =
        std::fs::read_to_string(&args.spec).with_context(|| format!("spec: cannot read {}", args.spec.display()))?;
    let mut client = args.connect.connect().await?;
    let reply = client.submit(pb::SubmitRequest { spec_toml: text }).await.map_err(status_error)?.into_inner();
    if let Some(status) = &reply.status {
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

/// Show a sweep's status (all sweeps when no id is given).
#[derive(Debug, Args)]
pub struct StatusArgs {
    pub id: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
}

fn state_name(state: i32) -> &'static str {
    match pb::SweepState::try_from(state).unwrap_or(pb::SweepState::Unspecified) {
        pb::SweepState::Running => "running",
        pb::SweepState::Done => "done",
        pb::SweepState::Cancelled => "cancelled",
        pb::SweepState::Failed => "failed",
        pb::SweepState::Unspecified => "unknown",
    }
}

pub fn print_status(s: &pb::SweepStatus, out: &mut impl Write) -> Result<()> {
    let pct = if s.tasks_total > 0 { 100.0 * s.tasks_done as f64 / s.tasks_total as f64 } else { 100.0 };
    writeln!(out, "sweep           {} ({})", s.sweep_id, s.name)?;
    writeln!(out, "state           {}", state_name(s.state))?;
    writeln!(out, "tasks           {} / {} ({pct:.1}%)", s.tasks_done, s.tasks_total)?;
    writeln!(out, "successes       {}", s.successes)?;
    writeln!(out, "configurations  {} ({} impossible)", s.configurations, s.impossible_configurations)?;
    writeln!(out, "shards failed   {}", s.shards_failed)?;
    if !s.error.is_empty() {
        writeln!(out, "error           {}", s.error)?;
    }
    Ok(())
}

pub async fn status(args: StatusArgs, out: &mut impl Write) -> Result<()> {
    let statuses = match &args.source.db {
        Some(path) => {
            let store = open_db(path)?;
            match &args.id {
                Some(id) => vec![ksweep_coordinator::status_of(&store.resolve(Some(id))?)],
                None => store.sweeps()?.iter().map(ksweep_coordinator::status_of).collect(),
            }
        }
        None => {
            let mut client = args.source.connect.connect().await?;
            match &args.id {
                Some(id) => {
                    vec![client.status(pb::SweepRef { sweep_id: id.clone() }).await.map_err(status_error)?.into_inner()]
                }
                None => client.list(pb::ListRequest {}).await.map_err(status_error)?.into_inner().sweeps,
            }
        }
    };
    if statuses.is_empty() {
        writeln!(out, "no sweeps")?;
    }
    for (i, s) in statuses.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        print_status(s, out)?;
    }
    Ok(())
}

fn open_db(path: &std::path::Path) -> Result<Store> {
    if !path.exists() {
        bail!("--db: {} does not exist", path.display());
    }
    Store::open_read_only(path).with_context(|| format!("--db: cannot open {}", path.display()))
}

/// Follow a sweep's progress until it ends.
#[derive(Debug, Args)]
pub struct WatchArgs {
    pub id: String,
    #[command(flatten)]
    pub connect: ConnectArgs,
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

pub async fn watch(args: WatchArgs, out: &mut impl Write) -> Result<()> {
    let mut client = args.connect.connect().await?;
    let last = follow(&mut client, &args.id).await?;
    print_status(&last, out)?;
    if last.state != pb::SweepState::Done as i32 {
        bail!("sweep {} ended {}", last.sweep_id, state_name(last.state));
    }
    Ok(())
}

/// Cancel a running sweep.
#[derive(Debug, Args)]
pub struct CancelArgs {
    pub id: String,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

pub async fn cancel(args: CancelArgs, out: &mut impl Write) -> Result<()> {
    let mut client = args.connect.connect().await?;
    let status = client.cancel(pb::SweepRef { sweep_id: args.id }).await.map_err(status_error)?.into_inner();
    print_status(&status, out)
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum By {
    /// One table per (moves, method): rows N, columns D.
    Dims,
    /// One table per (moves, D): rows N, columns methods.
    Methods,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Md,
    Csv,
    Json,
    Latex,
}

/// Print a sweep's accuracy (or timing) tables.
#[derive(Debug, Args)]
pub struct TableArgs {
    pub id: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Only this move rule (as its label, e.g. 3,2).
    #[arg(long)]
    pub rule: Option<String>,
    #[arg(long, value_enum, default_value_t = By::Methods)]
    pub by: By,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// What the cells show: the report's accuracy, accuracy among starts
    /// not proven impossible, or mean microseconds per task.
    #[arg(long, value_enum, default_value_t = MetricArg::Accuracy)]
    pub metric: MetricArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum MetricArg {
    Accuracy,
    Possible,
    Time,
}

impl TableArgs {
    pub fn options(&self) -> TableOptions {
        TableOptions {
            layout: match self.by {
                By::Dims => TableLayout::ByDims,
                By::Methods => TableLayout::ByMethods,
            },
            format: match self.format {
                Format::Text => TableFormat::Text,
                Format::Md => TableFormat::Markdown,
                Format::Csv => TableFormat::Csv,
                Format::Json => TableFormat::Json,
                Format::Latex => TableFormat::Latex,
            },
            moves: self.rule.clone(),
            metric: match self.metric {
                MetricArg::Accuracy => Metric::Accuracy,
                MetricArg::Possible => Metric::AccuracyPossible,
                MetricArg::Time => Metric::MeanMicros,
            },
        }
    }
}

fn aggregate_of(r: pb::AggregateRow) -> AggregateRow {
    AggregateRow {
        config: r.config,
        moves: r.moves,
        dims: r.dims,
        shape: r.shape,
        n: r.n,
        method: r.method,
        impossible: r.impossible,
        tasks: r.tasks,
        successes: r.successes,
        no_tour: r.no_tour,
        mean_micros: r.mean_micros,
        median_micros: r.median_micros,
        mean_attempts: r.mean_attempts,
        open_tour: r.open_tour,
        closed_tour: r.closed_tour,
    }
}

/// The aggregate rows of a sweep, from a coordinator or a database file.
pub async fn table_rows(id: Option<String>, source: &SourceArgs) -> Result<Vec<AggregateRow>> {
    match &source.db {
        Some(path) => {
            let store = open_db(path)?;
            let record = store.resolve(id.as_deref())?;
            let sweep = Sweep::parse(&record.spec)?;
            Ok(store.aggregates(&record, &sweep)?)
        }
        None => {
            let mut client = source.connect.connect().await?;
            let reply = client.table(pb::SweepRef { sweep_id: id.unwrap_or_default() }).await.map_err(status_error)?;
            Ok(reply.into_inner().rows.into_iter().map(aggregate_of).collect())
        }
    }
}

pub async fn table(args: TableArgs, out: &mut impl Write) -> Result<()> {
    let rows = table_rows(args.id.clone(), &args.source).await?;
    write!(out, "{}", render(&rows, &args.options()))?;
    Ok(())
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    Csv,
    Jsonl,
}

/// Write every task result, sorted by (configuration, start, method).
#[derive(Debug, Args)]
pub struct ExportArgs {
    pub id: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
    #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
    pub format: ExportFormat,
}

const CSV_HEADER: &str = "rule,dims,shape,method,start,success,outcome,attempts,visited,micros";

fn outcome_name(code: i32) -> &'static str {
    match pb::Outcome::try_from(code).unwrap_or(pb::Outcome::Unspecified) {
        pb::Outcome::Tour => "tour",
        pb::Outcome::NoTour => "no-tour",
        pb::Outcome::GaveUp => "gave-up",
        pb::Outcome::Unspecified => "",
    }
}

fn write_row(r: &pb::ResultRow, format: ExportFormat, out: &mut impl Write) -> Result<()> {
    let start = r.start.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    match format {
        ExportFormat::Csv => writeln!(
            out,
            "\"{}\",{},{},{},\"{}\",{},{},{},{},{}",
            r.moves,
            r.dims,
            r.shape,
            r.method,
            start,
            r.success as u8,
            outcome_name(r.outcome),
            r.attempts,
            r.visited,
            r.micros
        )?,
        ExportFormat::Jsonl => {
            let v = serde_json::json!({
                "rule": r.moves, "dims": r.dims, "shape": r.shape, "method": r.method, "start": r.start,
                "success": r.success, "outcome": outcome_name(r.outcome), "attempts": r.attempts,
                "visited": r.visited, "micros": r.micros,
            });
            writeln!(out, "{v}")?;
        }
    }
    Ok(())
}

pub async fn export(args: ExportArgs, out: &mut impl Write) -> Result<()> {
    if matches!(args.format, ExportFormat::Csv) {
        writeln!(out, "{CSV_HEADER}")?;
    }
    match &args.source.db {
        Some(path) => {
            let store = open_db(path)?;
            let record = store.resolve(args.id.as_deref())?;
            let sweep = Sweep::parse(&record.spec)?;
            let names = store.worker_names()?;
            let mut after = None;
            loop {
                let page = store.results_page(record.key, after, 8192)?;
                let Some(last) = page.last() else { break };
                after = Some((last.config, last.start_index, last.method));
                for r in &page {
                    write_row(&ksweep_coordinator::export::result_row(&sweep, r, &names), args.format, out)?;
                }
            }
        }
        None => {
            let mut client = args.source.connect.connect().await?;
            let mut stream = client
                .export(pb::SweepRef { sweep_id: args.id.unwrap_or_default() })
                .await
                .map_err(status_error)?
                .into_inner();
            while let Some(batch) = stream.message().await.map_err(status_error)? {
                for r in &batch.rows {
                    write_row(r, args.format, out)?;
                }
            }
        }
    }
    Ok(())
}
