//! `ksweep replay`: rerun the report authors' published experiments start for
//! start through the normal sweep path, and compare flags and times.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use sweep::replay::{Replay, ReplayOptions, ReplayRow, Replayed};
use sweep::Sweep;
use tour::Method;

use crate::cmd::run::Embedded;
use crate::input_file;
use crate::shutdown::{Interrupted, Signals};
use crate::source::Source;

/// Replay published experiments (data/replay/*.tsv.gz) and compare.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Replay files (`.tsv` or `.tsv.gz`, format in data/replay/README.md).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Database file to keep the runs in (rerun to resume); default: a
    /// temporary file, removed at the end.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Threads running tasks (default: all cores).
    #[arg(long, default_value_t = 0, value_parser = crate::cmd::worker::thread_count())]
    pub threads: usize,
    #[command(flatten)]
    pub reuse: crate::cmd::submit::ReuseArg,
    /// Replay only the first K distinct starts of each (N, method).
    #[arg(long, value_name = "K")]
    pub sample: Option<usize>,
    /// Sample only boards with more cells than this (default: every board).
    #[arg(long, value_name = "CELLS", default_value_t = 0, requires = "sample")]
    pub sample_above: u64,
    /// Skip boards with more cells than this.
    #[arg(long, value_name = "CELLS")]
    pub max_cells: Option<u64>,
    /// Differing starts listed per row.
    #[arg(long, default_value_t = 5)]
    pub show: usize,
}

/// Totals over every file replayed.
#[derive(Debug, Default)]
struct Totals {
    experiments: usize,
    tasks: u64,
    differing: u64,
    published_micros: u64,
    micros_timed: u64,
    micros: u64,
}

pub async fn run(args: ReplayArgs, out: &mut impl Write) -> Result<()> {
    let options = ReplayOptions { sample: args.sample, sample_above: args.sample_above, max_cells: args.max_cells };
    let temporary = args.db.is_none();
    let db = args
        .db
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("ksweep-replay-{}.db", std::process::id())));
    let mut signals = Signals::install().context("cannot install signal handlers")?;
    let result = match Embedded::start(&db, args.threads, None, args.reuse).await {
        Ok(mut embedded) => {
            let result = replay_all(&args, &options, &mut embedded, &mut signals, out).await;
            let stopped = embedded.stop().await;
            result.and_then(|totals| stopped.map(|()| totals))
        }
        Err(e) => Err(e),
    };
    if temporary {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
    }
    let totals = result?;
    writeln!(
        out,
        "\n{} experiments: {} of {} published flags reproduced, running {} tasks here in {}; on the tasks \
         the authors timed, their published time {} (their machine) against ours {} (this one): {} \
         (machines differ; `ksweep bench` compares programs on one machine)",
        totals.experiments,
        totals.tasks - totals.differing,
        totals.tasks,
        totals.tasks,
        seconds(totals.micros),
        seconds(totals.published_micros),
        seconds(totals.micros_timed),
        ratio(totals.published_micros, totals.micros_timed),
    )?;
    if totals.differing > 0 {
        bail!("{} published flags were not reproduced", totals.differing);
    }
    Ok(())
}

async fn replay_all(
    args: &ReplayArgs,
    options: &ReplayOptions,
    embedded: &mut Embedded,
    signals: &mut Signals,
    out: &mut impl Write,
) -> Result<Totals> {
    let mut totals = Totals::default();
    let mut source = embedded.source();
    for path in &args.files {
        let replay = Replay::parse(&read_text(path)?).with_context(|| format!("{}", path.display()))?;
        let mut found: HashMap<(Method, u32, Vec<u64>), Replayed> = HashMap::new();
        for (method, spec) in replay.specs(options) {
            let text = spec.to_canonical_toml();
            let sweep = Arc::new(Sweep::parse(&text)?);
            let (id, last) = embedded.run(text, sweep.clone(), signals).await?;
            last.map_err(|signal| Interrupted {
                signal,
                message: "the replay stopped; with --db, rerunning resumes it".into(),
            })?;
            collect(&mut source, &id, &sweep, method, &mut found).await?;
        }
        let rows = replay.compare(options, |m, n, start| found.get(&(m, n, start.to_vec())).copied());
        print_replay(&replay, &rows, args.show, out)?;
        totals.experiments += 1;
        for r in &rows {
            totals.tasks += r.tasks;
            totals.differing += r.differing.len() as u64;
            totals.published_micros += r.published_micros;
            totals.micros_timed += r.micros_timed;
            totals.micros += r.micros;
        }
    }
    Ok(totals)
}

/// A replay file's text, gunzipped when it ends in `.gz`, within its limit
/// unpacked (a small .gz may unpack to gigabytes).
fn read_text(path: &Path) -> Result<String> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let text = if path.extension().is_some_and(|e| e == "gz") {
        input_file::read_text_from(flate2::read::GzDecoder::new(file), path, input_file::REPLAY)
    } else {
        input_file::read_text_from(file, path, input_file::REPLAY)
    };
    Ok(text?)
}

/// Every result of sweep `id`, keyed by (method, N, start coordinates).
async fn collect(
    source: &mut Source,
    id: &str,
    sweep: &Sweep,
    method: Method,
    found: &mut HashMap<(Method, u32, Vec<u64>), Replayed>,
) -> Result<()> {
    let mut pages = source.export(Some(id)).await?;
    while let Some(page) = pages.next_page().await? {
        for r in page {
            let entry =
                sweep.configurations().get(r.config as usize).context("a result of an unknown configuration")?;
            let n = entry.n().context("replayed boards are regular")?;
            let start = r.start.iter().map(|&x| u64::from(x)).collect();
            found.insert((method, n, start), Replayed { success: r.success, micros: r.micros });
        }
    }
    Ok(())
}

fn print_replay(replay: &Replay, rows: &[ReplayRow], show: usize, out: &mut impl Write) -> Result<()> {
    let rule: Vec<String> = replay.rule.iter().map(u32::to_string).collect();
    let order = if replay.moves.is_some() { "the program's own move order" } else { "the canonical move order" };
    writeln!(out, "\n{}: ({}) in {}D, {order}", replay.experiment, rule.join(","), replay.dims)?;
    writeln!(out, "  from {} ({})", replay.source, replay.program)?;
    writeln!(out, "  their time as published, from their machine; ours measured here")?;
    writeln!(
        out,
        "  {:>5}  {:<6} {:>6}  {:>9}  {:>9}  {:>6}  {:>11}  {:>11}  {:>11}",
        "N", "method", "tasks", "published", "ksweep", "differ", "their time", "our time", "theirs/ours"
    )?;
    for r in rows {
        let accuracy = |s: u64| format!("{:.1}%", 100.0 * s as f64 / r.tasks as f64);
        writeln!(
            out,
            "  {:>5}  {:<6} {:>6}  {:>9}  {:>9}  {:>6}  {:>11}  {:>11}  {:>11}",
            r.n,
            r.method.name(),
            r.tasks,
            accuracy(r.published_successes),
            accuracy(r.successes),
            r.differing.len(),
            if r.timed_tasks > 0 { seconds(r.published_micros) } else { "-".into() },
            seconds(r.micros),
            ratio(r.published_micros, r.micros_timed),
        )?;
        if r.ineligible > 0 {
            writeln!(
                out,
                "         {} published starts are ineligible (no tour can start there): not run",
                r.ineligible
            )?;
        }
        for (start, published) in r.differing.iter().take(show) {
            let coords: Vec<String> = start.iter().map(u64::to_string).collect();
            writeln!(out, "         differs at {}: published {}", coords.join(","), u8::from(*published))?;
        }
    }
    Ok(())
}

fn seconds(micros: u64) -> String {
    format!("{:.3} s", micros as f64 / 1e6)
}

/// "12.3x" (their time over ours), "-" without both.
fn ratio(theirs: u64, ours: u64) -> String {
    if theirs == 0 || ours == 0 {
        return "-".into();
    }
    format!("{:.1}x", theirs as f64 / ours as f64)
}
