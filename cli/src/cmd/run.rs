//! `ksweep run`: the embedded default. A coordinator on a loopback port, a
//! worker and a SQLite file, all in this process and over the same gRPC code
//! paths as a cluster; progress bar, then the tables. Interrupt it and run
//! it again: it resumes from the database.

//!
//! The spec is parsed once (the coordinator takes that parse, offered in
//! process, instead of parsing the submitted text again) and the database
//! opened once: the statuses and tables at the end come from the same
//! coordinator.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use ksweep_coordinator::store::{ParsedSweeps, Store};
use ksweep_coordinator::CoordinatorOptions;
use ksweep_standalone::Standalone;
use sweep::{render, Sweep, SweepState, SweepStatus};

use crate::cmd::coordinator::{Dashboard, HttpArg};
use crate::cmd::status::print_status;
use crate::cmd::submit::ReuseArg;
use crate::cmd::table::TableView;
use crate::cmd::watch::follow;
use crate::connect::{Client, ConnectArgs};
use crate::shutdown::{Interrupted, Signal, Signals};
use crate::source::{unserved_status, Source};

/// Run a sweep in this process and print its tables.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The sweep spec (TOML).
    pub spec: PathBuf,
    /// Database file; rerunning with the same file resumes.
    #[arg(long, default_value = "ksweep.db")]
    pub db: PathBuf,
    /// Threads running tasks (default: all cores).
    #[arg(long, default_value_t = 0, value_parser = crate::cmd::worker::thread_count())]
    pub threads: usize,
    /// The tables printed at the end, as `ksweep table` draws them. With
    /// csv, json or latex, stdout carries the data alone and the status goes
    /// to stderr.
    #[command(flatten)]
    pub view: TableView,
    #[command(flatten)]
    pub http: HttpArg,
    #[command(flatten)]
    pub reuse: crate::cmd::submit::ReuseArg,
    /// Then run every other sweep the database holds unfinished (stopped
    /// with its run), one after another. Without it only SPEC's sweep runs,
    /// and the others are named.
    #[arg(long)]
    pub all: bool,
    /// With --http: keep the dashboard serving after the sweep ends, until
    /// Ctrl-C (without it the dashboard stops with the run).
    #[arg(long, requires = "http")]
    pub stay: bool,
}

pub async fn run(args: RunArgs, out: &mut impl std::io::Write) -> Result<()> {
    // The spec first, while a signal still ends the process (a read that
    // waits on a pipe included), and checked before the database is
    // created; then a ctrl-c stops the run cleanly.
    let text = crate::spec_file::load(&args.spec)?;
    let sweep = Arc::new(Sweep::parse(&text)?);
    let mut signals = Signals::install().context("cannot install signal handlers")?;
    let dashboard = args.http.dashboard()?;
    let mut embedded = Embedded::start(&args.db, args.threads, dashboard.clone(), args.reuse).await?;
    let outcome = run_all(&args, &mut embedded, text, sweep, &mut signals, out).await;
    if let (Ok(()), Some(dashboard)) = (&outcome, &dashboard) {
        if args.stay {
            eprintln!("the dashboard at http://{} keeps serving the results; Ctrl-C stops it", dashboard.addr);
            signals.recv().await;
        } else {
            eprintln!("the dashboard at http://{} stops with this run (--stay keeps it until Ctrl-C)", dashboard.addr);
        }
    }
    let stopped = embedded.stop().await;
    outcome?;
    stopped
}

/// `ksweep run` on its started cluster: SPEC's sweep, its status and
/// tables, then (with `--all`) the other unfinished sweeps.
async fn run_all(
    args: &RunArgs,
    embedded: &mut Embedded,
    text: String,
    sweep: Arc<Sweep>,
    signals: &mut Signals,
    out: &mut impl std::io::Write,
) -> Result<()> {
    let others = embedded.unfinished_besides(&sweep.id()).await?;
    if !others.is_empty() && !args.all {
        eprintln!("{}", others_note(&others));
    }
    let resume = |id: &str| format!("run the same command again to resume sweep {id} from {}", args.db.display());
    let (id, last) = embedded.run(text, sweep, signals).await?;
    last.map_err(|signal| Interrupted { signal, message: resume(&id) })?;
    // The coordinator's status, not the watch stream's last: it has the
    // sweep's CPU time and the workers that ran it.
    let mut source = embedded.source();
    let last = source.status(Some(&id)).await?;
    if args.view.is_data() {
        print_status(&last, &mut std::io::stderr())?;
    } else {
        print_status(&last, &mut *out)?;
        writeln!(out)?;
    }
    let rows = source.table_rows(Some(&id)).await?;
    args.view.check_rule(&rows)?;
    write!(out, "{}", render(&rows, &args.view.options(&last)))?;
    if args.all {
        for other in others {
            eprintln!("resuming sweep {} ({}), stopped at {}", other.sweep_id, other.name, other.progress_text());
            // Lists leave the spec out; a sweep's own status carries it.
            let spec = source.status(Some(&other.sweep_id)).await?.spec_toml;
            let sweep = Arc::new(Sweep::parse(&spec).context("the sweep's stored spec")?);
            let (id, last) = embedded.run(spec, sweep, signals).await?;
            last.map_err(|signal| Interrupted { signal, message: resume(&id) })?;
            print_status(&source.status(Some(&id)).await?, &mut std::io::stderr())?;
        }
    }
    Ok(())
}

/// What a run says of a sweep the database holds already: it goes on from
/// its stored results, or has nothing left to run.
fn resuming_line(status: &SweepStatus) -> String {
    let what = format!("sweep {} ({})", sweep::short_id(&status.sweep_id), status.name);
    if status.tasks_done >= status.tasks_total && status.state.is_terminal() {
        format!("{what} is already in the database, {}: nothing to run", status.state)
    } else {
        format!("resuming {what} from its stored results: {}", status.progress_text())
    }
}

/// What a run says of the unfinished sweeps it leaves alone.
fn others_note(others: &[SweepStatus]) -> String {
    let mut note = match others.len() {
        1 => "the database also holds an unfinished sweep, not run now:".to_string(),
        n => format!("the database also holds {n} unfinished sweeps, not run now:"),
    };
    for s in others {
        note.push_str(&format!("\n  {} ({}): {}", sweep::short_id(&s.sweep_id), s.name, s.progress_text()));
    }
    note.push_str("\nadd --all to run them after this one, or run their specs");
    note
}

/// A coordinator on a loopback port, a worker and a database file in this
/// process, with a client connected to them: `ksweep run` and `ksweep
/// replay` run their sweeps on one, one after another.
pub struct Embedded {
    cluster: Standalone,
    client: Client,
    /// The coordinator's parsed specs, where a sweep's own parse is offered.
    parsed: Arc<ParsedSweeps>,
    reuse: ReuseArg,
}

impl Embedded {
    /// Opens (or creates) the database `db` and starts the coordinator and
    /// a worker of `threads` threads (0: all cores) on it, with the
    /// dashboard on `http` if given. No sweep runs until [`Embedded::run`]
    /// submits one: the sweeps the file holds unfinished wait.
    pub async fn start(db: &Path, threads: usize, http: Option<Dashboard>, reuse: ReuseArg) -> Result<Embedded> {
        let store = Store::open(db).with_context(|| format!("--db: cannot open {}", db.display()))?;
        let parsed = store.parsed().clone();
        // The coordinator serves this user's specs alone, each held to its
        // own `[limits]`.
        let mut options =
            CoordinatorOptions { spec_caps: sweep::Limits::UNCAPPED, resume_running: false, ..Default::default() };
        if let Some(dashboard) = &http {
            dashboard.serve_with(&mut options);
        }
        let cluster = Standalone::start(store, options, threads).await?;
        if let Some(dashboard) = &http {
            // The run's token is random: the link that logs this browser in.
            eprintln!("dashboard: http://{}/?token={}", dashboard.addr, cluster.token());
        }
        let connect = ConnectArgs::plain(cluster.url().to_string(), cluster.token().to_string());
        match connect.connect().await {
            Ok(client) => Ok(Embedded { cluster, client, parsed, reuse }),
            Err(e) => {
                let _ = cluster.stop().await;
                Err(e)
            }
        }
    }

    /// The sweeps of the database other than `id` that a run stopped
    /// before they ended. Asked before any sweep runs here, so every sweep
    /// stored as running is one a run left (as the file reads unserved).
    pub async fn unfinished_besides(&self, id: &str) -> Result<Vec<SweepStatus>> {
        let all = self.source().list().await?.into_iter().map(unserved_status);
        Ok(all.filter(|s| s.state == SweepState::Stopped && s.sweep_id != id).collect())
    }

    /// Runs the sweep `text` (`sweep` its parse under its own limits),
    /// following it with a progress bar until it ends or a signal comes.
    /// Returns its id and last status, or the signal.
    pub async fn run(
        &mut self,
        text: String,
        sweep: Arc<Sweep>,
        signals: &mut Signals,
    ) -> Result<(String, std::result::Result<SweepStatus, Signal>)> {
        self.parsed.offer(&text, sweep);
        let reply =
            self.client.submit(self.reuse.request(text)).await.map_err(|s| anyhow::anyhow!("{}", s.message()))?;
        let reply = reply.into_inner();
        // Beside the progress bar, on stderr: stdout may carry data.
        if reply.created {
            if let Some(line) = crate::cmd::submit::describe(&reply)?.get(1) {
                eprintln!("{line}");
            }
        } else if let Some(status) = reply.status.clone().map(crate::source::decode_status).transpose()? {
            eprintln!("{}", resuming_line(&status));
        }
        let id = reply.sweep_id;
        tokio::select! {
            last = follow(&mut self.client, &id) => last.map(|s| (id, Ok(s))),
            signal = signals.recv() => Ok((id, Err(signal))),
        }
    }

    /// The coordinator's URL (loopback) and the token it requires, for
    /// clients of other kinds (the Python package's handle).
    pub fn address(&self) -> (&str, &str) {
        (self.cluster.url(), self.cluster.token())
    }

    /// The coordinator as a source of statuses, tables and exports.
    pub fn source(&self) -> Source {
        Source::Coordinator(self.client.clone())
    }

    /// Stops the worker (it delivers what it finished), then the
    /// coordinator.
    pub async fn stop(self) -> Result<()> {
        self.cluster.stop().await.context("the in-process coordinator")
    }
}
