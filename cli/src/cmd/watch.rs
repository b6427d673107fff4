//! `ksweep watch`: follow a sweep with a progress bar until it ends.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use ksweep_proto::cluster_dir::Located;
use ksweep_proto::v1 as pb;
use sweep::{SweepState, SweepStatus};

use crate::cmd::status::{print_status, speed};
use crate::connect::{status_error, Client, ConnectArgs};
use crate::source::{decode_status, DbSource};

/// How long `watch` keeps reconnecting to a coordinator that went away.
const RECONNECT_FOR: Duration = Duration::from_secs(300);
/// How long it tries a coordinator it never reached: a wrong address is
/// not a restart, and says so soon.
const FIRST_CONTACT_FOR: Duration = Duration::from_secs(10);
/// A progress line this often where stderr is not a terminal (nohup, Slurm).
const LOG_EVERY: Duration = Duration::from_secs(10);

/// Follow a sweep's progress until it ends.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The sweep: its id, a unique prefix of it, or its name (default:
    /// the coordinator's only sweep).
    pub id: Option<String>,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// Follows the sweep; when the coordinator goes away (a restart), connects
/// again, as workers do, for up to RECONNECT_FOR.
pub async fn run(args: WatchArgs, out: &mut impl Write) -> Result<()> {
    let mut progress = Progress::new();
    let mut lost_since: Option<Instant> = None;
    let mut last_note = String::new();
    let mut reached = false;
    let id = args.id.as_deref().unwrap_or_default();
    let last = loop {
        // A cluster directory's coordinator that has finished (or moved
        // and finished since) is not coming back: its database answers.
        if let Some(dir) = args.connect.cluster_dir() {
            if let Located::Finished(_) = dir.locate().context("--dir")? {
                progress.finish();
                dir.check_database().context("--dir")?;
                break DbSource::open(&dir.database())?.status(args.id.as_deref())?;
            }
        }
        let attempt = async {
            let mut client = args.connect.connect().await?;
            reached = true;
            follow_with(&mut client, id, &mut progress).await
        };
        match attempt.await {
            Ok(last) => break last,
            // A coordinator moving (a requeued job) is a restart too.
            // A coordinator whose batch job has not started yet (pending in
            // the queue, maybe for hours) is waited for without a limit.
            Err(e) if is_moving(&args.connect) => {
                lost_since = None;
                note_once(&progress, &mut last_note, format!("waiting for the coordinator: {e:#}"));
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
            Err(e) if is_unreachable(&e) => {
                let since = *lost_since.get_or_insert_with(Instant::now);
                // (A cluster directory's coordinator may be starting: waited for.)
                let direct = args.connect.cluster_dir().is_none();
                if direct && !reached && since.elapsed() > FIRST_CONTACT_FOR {
                    return Err(e.context(format!(
                        "cannot reach the coordinator at {} (tried for {} s)",
                        args.connect.coordinator,
                        FIRST_CONTACT_FOR.as_secs()
                    )));
                }
                if since.elapsed() > RECONNECT_FOR {
                    return Err(
                        e.context(format!("gave up after {} s without the coordinator", RECONNECT_FOR.as_secs()))
                    );
                }
                note_once(&progress, &mut last_note, format!("coordinator unreachable ({e:#}); connecting again"));
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => return Err(e),
        }
    };
    progress.finish();
    print_status(&last, out)?;
    if last.state != SweepState::Done {
        bail!("sweep {} ended {}", last.sweep_id, last.state);
    }
    Ok(())
}

/// A lost connection or a coordinator shutting down, as opposed to an
/// answer (a sweep not found, a bad token).
/// Says `text` unless it was the last thing said: a coordinator away for
/// minutes is one line, not one a second.
fn note_once(progress: &Progress, last: &mut String, text: String) {
    if *last != text {
        progress.note(&text);
        *last = text;
    }
}

/// Whether a cluster directory says its coordinator is between jobs (a
/// requeued one not started yet).
fn is_moving(connect: &ConnectArgs) -> bool {
    connect.cluster_dir().is_some_and(|d| matches!(d.locate(), Ok(Located::NotYet)))
}

fn is_unreachable(e: &anyhow::Error) -> bool {
    let text = format!("{e:#}");
    ["cannot connect", "shutting down", "transport error", "connection", "unavailable", "broken pipe"]
        .iter()
        .any(|needle| text.to_lowercase().contains(needle))
}

/// Draws progress from a status stream until the sweep ends; returns the
/// last status.
pub async fn follow(client: &mut Client, id: &str) -> Result<SweepStatus> {
    let mut progress = Progress::new();
    let last = follow_with(client, id, &mut progress).await;
    progress.finish();
    last
}

async fn follow_with(client: &mut Client, id: &str, progress: &mut Progress) -> Result<SweepStatus> {
    let request = pb::SweepRef { sweep_id: id.to_string() };
    let mut stream = client.watch(request).await.map_err(watch_error)?.into_inner();
    let mut last = None;
    while let Some(status) = stream.message().await.map_err(watch_error)? {
        let status = decode_status(status)?;
        progress.show(&status);
        last = Some(status);
    }
    let last = last.context("the coordinator closed the watch without a status")?;
    // The coordinator ends a stream only once the sweep has ended, or when
    // it stops (whose notice a slow reader may miss): a running sweep's
    // stream that ends is a lost connection, not an answer.
    if last.state == SweepState::Running {
        bail!("unavailable: the watch stream ended while sweep {} was running", last.sweep_id);
    }
    Ok(last)
}

/// A stream error; "unavailable" kept in the text so a restart is told
/// apart from an answer.
fn watch_error(s: tonic::Status) -> anyhow::Error {
    if s.code() == tonic::Code::Unavailable {
        anyhow::anyhow!("unavailable: {}", s.message())
    } else {
        status_error(s)
    }
}

/// Progress as a bar on a terminal, or a line every LOG_EVERY elsewhere;
/// the rate and ETA are the coordinator's (over the last minute), not
/// this process's guess from when it attached.
struct Progress {
    bar: Option<ProgressBar>,
    logged: Option<Instant>,
    /// The highest share of the work shown, in tenths of a percent: when
    /// the bar goes back, a line says why.
    shown: u64,
}

impl Progress {
    fn new() -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(0);
            let style =
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {msg}").expect("valid template");
            bar.set_style(style);
            bar
        });
        Progress { bar, logged: None, shown: 0 }
    }

    /// The bar fills by estimated work (in tenths of a percent), and says
    /// how many tasks that is beside it. It never goes back: the
    /// coordinator holds the share it shows, and a status without an
    /// estimate (the last of a sweep ending, whose count of tasks is no
    /// measure of its work) leaves the bar where it was.
    fn show(&mut self, s: &SweepStatus) {
        let position = match s.state {
            SweepState::Done => 1000,
            _ => (s.percent_of_work() * 10.0).round() as u64,
        };
        // Only a coordinator that restarted (and forgot what it showed) can
        // send a smaller share of an estimate: say why the bar holds.
        if position + 5 < self.shown && s.work.is_some() && !s.state.is_terminal() {
            // Only an estimate of the total can shrink the share done.
            let why = match s.work.and_then(|w| w.adaptive) {
                Some(_) => "cells turned out nearer 50 % than their first looks said and need more starts",
                None => "the measured time per task came out above the estimate",
            };
            self.note(&format!(
                "the estimate of the work grew ({why}): {:.1} % done by the new one; the bar holds at {:.1} % \
                 until the work catches up",
                position as f64 / 10.0,
                self.shown as f64 / 10.0
            ));
        }
        self.shown = self.shown.max(position);
        let position = self.shown;
        let mut message = format!("{} · {}", s.progress_text(), s.state);
        if let Some(speed) = speed(s) {
            message.push_str(&format!(" · {speed}"));
        }
        if let Some(waiting) = s.waiting.text() {
            message.push_str(&format!(" · {waiting}"));
        }
        match &self.bar {
            Some(bar) => {
                bar.set_length(1000);
                bar.set_position(position);
                bar.set_message(message);
            }
            None => {
                let due = self.logged.is_none_or(|t| t.elapsed() >= LOG_EVERY);
                let ended = s.state.is_terminal();
                if due || ended {
                    eprintln!("sweep {}: {message}", s.sweep_id);
                    self.logged = Some(Instant::now());
                }
            }
        }
    }

    fn note(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}
