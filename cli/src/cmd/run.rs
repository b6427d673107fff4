//! `ksweep run`: the embedded default. A coordinator on a loopback port, a
//! worker and a SQLite file, all in this process and over the same gRPC code
//! paths as a cluster; progress bar, then the tables. Interrupt it and run
//! it again: it resumes from the database.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use ksweep_coordinator::store::Store;
use ksweep_coordinator::CoordinatorOptions;
use ksweep_standalone::Standalone;
use sweep::{render, Sweep, SweepState, SweepStatus};

use crate::cmd::coordinator::{Dashboard, HttpArg};
use crate::cmd::status::print_status;
use crate::cmd::table::TableView;
use crate::cmd::watch::follow;
use crate::connect::ConnectArgs;
use crate::shutdown::{Interrupted, Signal, Signals};
use crate::source::DbSource;

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
}

pub async fn run(args: RunArgs, out: &mut impl std::io::Write) -> Result<()> {
    // The spec first, while a signal still ends the process (a read that
    // waits on a pipe included); then a ctrl-c stops the run cleanly.
    let text = crate::spec_file::load(&args.spec)?;
    let others = unfinished_besides(&args.db, &Sweep::parse(&text)?.id())?;
    if !others.is_empty() && !args.all {
        eprintln!("{}", others_note(&others));
    }
    let mut signals = Signals::install().context("cannot install signal handlers")?;
    let (id, last) = embedded(text, &args.db, args.threads, args.http.dashboard()?, args.reuse, &mut signals).await?;
    let resume = |id: &str| format!("run the same command again to resume sweep {id} from {}", args.db.display());
    last.map_err(|signal| Interrupted { signal, message: resume(&id) })?;
    // The file's status, not the watch stream's last: it has the sweep's
    // CPU time and the workers that ran it.
    let db = DbSource::open(&args.db)?;
    let last = db.status(Some(&id))?;
    if args.view.is_data() {
        print_status(&last, &mut std::io::stderr())?;
    } else {
        print_status(&last, &mut *out)?;
        writeln!(out)?;
    }
    let rows = db.table_rows(Some(&id))?;
    args.view.check_rule(&rows)?;
    write!(out, "{}", render(&rows, &args.view.options(&last)))?;
    drop(db);
    if args.all {
        for other in others {
            let spec = DbSource::open(&args.db)?.status(Some(&other.sweep_id))?.spec_toml;
            eprintln!("resuming sweep {} ({}), stopped at {}", other.sweep_id, other.name, other.progress_text());
            let (id, last) = embedded(spec, &args.db, args.threads, None, args.reuse, &mut signals).await?;
            last.map_err(|signal| Interrupted { signal, message: resume(&id) })?;
            print_status(&DbSource::open(&args.db)?.status(Some(&id))?, &mut std::io::stderr())?;
        }
    }
    Ok(())
}

/// The sweeps of the database `db` other than `id` that a run stopped
/// before they ended (none when there is no database yet).
fn unfinished_besides(db: &Path, id: &str) -> Result<Vec<SweepStatus>> {
    if !db.exists() {
        return Ok(Vec::new());
    }
    let all = DbSource::open(db)?.list()?;
    Ok(all.into_iter().filter(|s| s.state == SweepState::Stopped && s.sweep_id != id).collect())
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

/// Runs the sweep `text` in this process (a coordinator on a loopback port, a
/// worker, the database `db`), following it with a progress bar until it
/// ends or a signal comes. Returns its id and last status, or the signal.
pub async fn embedded(
    text: String,
    db: &Path,
    threads: usize,
    http: Option<Dashboard>,
    reuse: crate::cmd::submit::ReuseArg,
    signals: &mut Signals,
) -> Result<(String, std::result::Result<SweepStatus, Signal>)> {
    // Refuse a bad spec before starting anything. The coordinator serves
    // this spec alone: what it allows itself (`[limits]`) is the cap.
    let spec_caps = *Sweep::parse(&text)?.limits();
    let store = Store::open(db).with_context(|| format!("--db: cannot open {}", db.display()))?;
    // Only this sweep runs: others the file holds stopped wait for `--all`.
    let mut options = CoordinatorOptions { spec_caps, resume_running: false, ..CoordinatorOptions::default() };
    if let Some(dashboard) = &http {
        dashboard.serve_with(&mut options);
    }
    let cluster = Standalone::start(store, options, threads).await?;
    if let Some(dashboard) = &http {
        // The run's token is random: the link that logs this browser in.
        eprintln!("dashboard: http://{}/?token={}", dashboard.addr, cluster.token());
    }

    let connect = ConnectArgs::plain(cluster.url().to_string(), cluster.token().to_string());
    let outcome = async {
        let mut client = connect.connect().await?;
        let reply =
            client.submit(reuse.request(text)).await.map_err(|s| anyhow::anyhow!("{}", s.message()))?.into_inner();
        // Beside the progress bar, on stderr: stdout may carry data.
        if reply.created {
            if let Some(line) = crate::cmd::submit::describe(&reply)?.get(1) {
                eprintln!("{line}");
            }
        }
        let id = reply.sweep_id;
        tokio::select! {
            last = follow(&mut client, &id) => last.map(|s| (id, Ok(s))),
            signal = signals.recv() => Ok((id, Err(signal))),
        }
    }
    .await;
    let stopped = cluster.stop().await;
    let (id, last) = outcome?;
    stopped.context("the in-process coordinator")?;
    Ok((id, last))
}
