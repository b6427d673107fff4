//! `ksweep plot`: a sweep's results as a picture (SVG or PNG): accuracy,
//! time or walks against N, or a failure map of one board.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use figures::{Chart, ChartSpec, FailureMap, Figure, Quantity, StartResult};
use rayon::prelude::*;
use sweep::{AggregateRow, ConfigEntry, Progress, Sweep, SweepStatus};

use crate::cmd::table::By;
use crate::connect::SourceArgs;
use crate::output_file::{write_whole, Partial};
use crate::source::Source;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// Accuracy against N with 95 % Wilson bands.
    Accuracy,
    /// Mean time per task against N (log scale).
    Time,
    /// Mean walks per task against N (aw, aw+, mw).
    Attempts,
    /// One 2D board (3D: its slices), each start coloured by which methods
    /// failed from it.
    Failures,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImageFormat {
    Svg,
    Png,
}

/// Draw a sweep's results.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The sweep: its id, a unique prefix of it, or its name (default: the
    /// only sweep there is).
    pub id: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
    /// What to draw: a chart against N (accuracy, time, attempts), one
    /// panel per group of `--by`, or a failure map of one board. A chart of
    /// more than 40 N is drawn as small multiples, a panel per group and
    /// line, each N a dot under a running mean (N's parity classes apart
    /// where they split the values).
    #[arg(long, value_enum, default_value_t = Kind::Accuracy)]
    pub kind: Kind,
    /// How a chart groups its lines: `methods`, a panel per (rule, D) with a
    /// line per method; `dims`, a panel per (rule, method) with a line per D.
    #[arg(long, value_enum, default_value_t = By::Methods, hide_possible_values = true)]
    pub by: By,
    /// Only this move rule (as its label, e.g. 3,2).
    #[arg(long)]
    pub rule: Option<String>,
    /// Failure map: the board's D (2 or 3).
    #[arg(long)]
    pub dims: Option<u32>,
    /// Failure map: the board's N. Without --dims/--n/--rule the map shows
    /// the matching board with the most failures.
    #[arg(long)]
    pub n: Option<u32>,
    /// Failure map: run the sweep's methods from every square of the board
    /// now (with the sweep's seeds, budget and iterations), not only from
    /// the sweep's starts.
    #[arg(long)]
    pub all_starts: bool,
    /// Write here; the format follows the extension (.svg, .png) unless
    /// --format says otherwise. Without it, SVG goes to stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The image format, when -o's extension does not say it.
    #[arg(long, value_enum)]
    pub format: Option<ImageFormat>,
}

pub async fn run(args: PlotArgs, out: &mut impl Write) -> Result<()> {
    let format = image_format(args.format, args.output.as_deref())?;
    if format == ImageFormat::Png && args.output.is_none() {
        bail!("--format png: a PNG needs -o FILE");
    }
    let mut source = Source::open(&args.source).await?;
    let status = source.status(args.id.as_deref()).await?;
    let id = Some(status.sweep_id.as_str());
    let rows = source.table_rows(id).await?;
    super::table::check_rule(args.rule.as_deref(), &rows)?;
    let figure = match args.kind {
        Kind::Failures => Figure::Map(failure_map(&args, &status, &rows, &mut source).await?),
        kind => {
            let quantity = match kind {
                Kind::Time => Quantity::Time,
                Kind::Attempts => Quantity::Attempts,
                _ => Quantity::Accuracy,
            };
            Figure::Chart(chart(&status, &rows, quantity, args.by, args.rule.clone())?)
        }
    };
    write_figure(&figure, format, args.output.as_deref(), out)
}

/// The chart of `rows` for the sweep of `status`, titled with its name and
/// warned when it is unfinished.
pub fn chart(
    status: &SweepStatus,
    rows: &[AggregateRow],
    quantity: Quantity,
    by: By,
    rule: Option<String>,
) -> Result<Chart> {
    let spec = ChartSpec {
        quantity,
        layout: by.into(),
        moves: rule,
        title: format!("{} · sweep {}", quantity.title_of(rows), status.name),
        warning: Progress::from(status).warning(),
    };
    Ok(Chart::new(rows, &spec)?)
}

/// SVG unless asked otherwise or the output file ends in .png.
fn image_format(format: Option<ImageFormat>, output: Option<&Path>) -> Result<ImageFormat> {
    if let Some(format) = format {
        return Ok(format);
    }
    let ext = output.and_then(|p| p.extension()).map(|e| e.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref() {
        None | Some("svg") => Ok(ImageFormat::Svg),
        Some("png") => Ok(ImageFormat::Png),
        Some(other) => bail!("-o: cannot tell the format from .{other}; name the file .svg or .png, or pass --format"),
    }
}

fn write_figure(figure: &Figure, format: ImageFormat, output: Option<&Path>, out: &mut impl Write) -> Result<()> {
    match (format, output) {
        (ImageFormat::Svg, None) => out.write_all(figure.svg()?.as_bytes())?,
        (ImageFormat::Svg, Some(path)) => write_whole(path, figure.svg()?.as_bytes())?,
        (ImageFormat::Png, Some(path)) => {
            let partial = Partial::create(path)?;
            figure.png(partial.temp_path()).with_context(|| format!("-o: {}", path.display()))?;
            partial.commit()?;
        }
        (ImageFormat::Png, None) => bail!("--format png: a PNG needs -o FILE"),
    }
    if let Some(path) = output {
        let (w, h) = figure.size();
        eprintln!("wrote {} ({w}x{h})", path.display());
    }
    Ok(())
}

/// The failure map the flags pick: the sweep's starts, or every square.
pub async fn failure_map(
    args: &PlotArgs,
    status: &SweepStatus,
    rows: &[AggregateRow],
    source: &mut Source,
) -> Result<FailureMap> {
    let sweep = source.sweep(status)?;
    let entry = pick_board(&sweep, rows, args)?;
    if args.all_starts {
        let title = map_title(entry, "every square, run now", &status.name);
        // Run on the spot, every square has its result: the map is complete
        // whatever the sweep's state.
        return Ok(FailureMap::new(title, None, &entry.sides, every_start(&sweep, entry)?)?);
    }
    let mut results = start_results(source, &status.sweep_id, &[entry.index]).await?;
    sweep_map(entry, status, results.pop().unwrap_or_default())
}

/// The map of `entry` from the sweep's own results.
pub fn sweep_map(entry: &ConfigEntry, status: &SweepStatus, results: Vec<StartResult>) -> Result<FailureMap> {
    let title = map_title(entry, "the sweep's starts", &status.name);
    Ok(FailureMap::new(title, Progress::from(status).warning(), &entry.sides, results)?)
}

fn map_title(entry: &ConfigEntry, starts: &str, sweep: &str) -> String {
    format!(
        "Failures on {} {} from {starts} · sweep {sweep}",
        figures::rule_name(&entry.moves_label()),
        entry.shape_label()
    )
}

/// The task results of the configurations `configs` (by index), one list
/// each in that order, read in one pass over the sweep's export.
pub async fn start_results(source: &mut Source, sweep_id: &str, configs: &[u32]) -> Result<Vec<Vec<StartResult>>> {
    let mut results = vec![Vec::new(); configs.len()];
    let mut pages = source.export(Some(sweep_id)).await?;
    while let Some(page) = pages.next_page().await? {
        for r in page {
            if let Some(i) = configs.iter().position(|&c| c == r.config) {
                let no_tour = r.outcome == Some(tour::Outcome::NoTour);
                results[i].push(StartResult { start: r.start, method: r.method, success: r.success, no_tour });
            }
        }
    }
    Ok(results)
}

/// Some method found a tour on the configuration: a board where methods
/// fail from some starts only, the kind a failure map tells most about.
pub fn found_some(rows: &[AggregateRow], config: u32) -> bool {
    rows.iter().any(|r| r.config == config && r.successes > 0)
}

/// The methods' failures on a configuration, by index: tasks neither a
/// tour nor proven impossible from their start; none on a board where no
/// tour exists at all (every start fails there, and says nothing).
pub fn failures(rows: &[AggregateRow], config: u32) -> u64 {
    rows.iter()
        .filter(|r| r.config == config && !r.no_open_tour())
        .map(|r| r.tasks.saturating_sub(r.successes).saturating_sub(r.no_tour))
        .sum()
}

/// The 2D or 3D board the flags name; of several, the one with the most
/// failures among those where some start found a tour.
fn pick_board<'s>(sweep: &'s Sweep, rows: &[AggregateRow], args: &PlotArgs) -> Result<&'s ConfigEntry> {
    let candidates: Vec<&ConfigEntry> = sweep
        .configurations()
        .iter()
        .filter(|e| (2..=3).contains(&e.dims()))
        .filter(|e| args.dims.is_none_or(|d| e.dims() == d as usize))
        .filter(|e| args.n.is_none_or(|n| e.n() == Some(n)))
        .filter(|e| args.rule.as_ref().is_none_or(|r| *r == e.moves_label()))
        .collect();
    let Some(best) = candidates
        .iter()
        .copied()
        .max_by_key(|e| (found_some(rows, e.index), failures(rows, e.index), std::cmp::Reverse(e.index)))
    else {
        bail!("--kind failures: no 2D or 3D board of the sweep matches --rule/--dims/--n");
    };
    if candidates.len() > 1 {
        eprintln!(
            "{} boards match; drawing {} {} (most failures); narrow with --rule, --dims, --n",
            candidates.len(),
            figures::rule_name(&best.moves_label()),
            best.shape_label()
        );
    }
    Ok(best)
}

/// Every square of the board, every method of the sweep, run here with the
/// seeds, budget and iterations a worker would use.
fn every_start(sweep: &Sweep, entry: &ConfigEntry) -> Result<Vec<StartResult>> {
    const MAX_CELLS: u64 = 1 << 20;
    if entry.cells() > MAX_CELLS {
        bail!("--all-starts: {} has {} squares; the limit is {MAX_CELLS}", entry.shape_label(), entry.cells());
    }
    let runner = tour::Runner::new(entry.configuration())?;
    let methods: Vec<tour::Method> = sweep.methods().iter().copied().filter(|&m| runner.supports(m).is_ok()).collect();
    let board = runner.config().board();
    eprintln!("running {} methods from each of {} squares...", methods.len(), board.cells());
    let results = (0..board.cells())
        .into_par_iter()
        .map_init(
            || runner.workspace(),
            |ws, cell| {
                methods
                    .iter()
                    .map(|&m| {
                        let r = runner.run_task(ws, cell, m, &sweep.task_options(runner.config(), cell, m));
                        StartResult {
                            start: board.coords(cell),
                            method: m.name().to_string(),
                            success: r.success,
                            no_tour: r.outcome == tour::Outcome::NoTour,
                        }
                    })
                    .collect::<Vec<_>>()
            },
        )
        .flatten()
        .collect();
    Ok(results)
}
