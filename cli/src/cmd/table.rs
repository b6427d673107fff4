//! `ksweep table`: a sweep's accuracy or timing tables.

use std::io::Write;

use anyhow::Result;
use clap::{Args, ValueEnum};
use sweep::{render, AggregateRow, Metric, Progress, SweepStatus, TableFormat, TableLayout, TableOptions};

use crate::connect::SourceArgs;
use crate::source::Source;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum By {
    /// One table per (moves, method): rows N, columns D.
    Dims,
    /// One table per (moves, D): rows N, columns methods.
    Methods,
}

impl From<By> for TableLayout {
    fn from(by: By) -> TableLayout {
        match by {
            By::Dims => TableLayout::ByDims,
            By::Methods => TableLayout::ByMethods,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// Aligned columns under a title line per table.
    Text,
    /// A Markdown pipe table per table.
    Md,
    /// One CSV of every table, cells as numbers.
    Csv,
    /// The aggregate rows themselves.
    Json,
    /// Paper-ready: booktabs floats (longtable past 40 rows) with caption
    /// and label, the report's method names, the best method of a row in
    /// bold; needs `booktabs` and `longtable` in the preamble.
    Latex,
    /// HTML tables, their titles as captions (a fragment, no page).
    Html,
}

impl From<Format> for TableFormat {
    fn from(format: Format) -> TableFormat {
        match format {
            Format::Text => TableFormat::Text,
            Format::Md => TableFormat::Markdown,
            Format::Csv => TableFormat::Csv,
            Format::Json => TableFormat::Json,
            Format::Latex => TableFormat::Latex,
            Format::Html => TableFormat::Html,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum MetricArg {
    /// Successes in percent of every start run, as the report counts them.
    Accuracy,
    /// Successes in percent of the starts from which a tour exists: starts
    /// refuted by a proof on them (solve, bt, ...) or the board's are left
    /// out; those no method settled stay in.
    #[value(alias = "possible")]
    Exists,
    /// Mean microseconds per task.
    Time,
}

impl From<MetricArg> for Metric {
    fn from(metric: MetricArg) -> Metric {
        match metric {
            MetricArg::Accuracy => Metric::Accuracy,
            MetricArg::Exists => Metric::AccuracyPossible,
            MetricArg::Time => Metric::MeanMicros,
        }
    }
}

/// Which tables to draw and how: shared by `table` and `run`.
#[derive(Debug, Args)]
pub struct TableView {
    /// Only this move rule (as its label, e.g. 3,2).
    #[arg(long)]
    pub rule: Option<String>,
    #[arg(long, value_enum, default_value_t = By::Methods)]
    pub by: By,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// What the cells show: the report's accuracy, accuracy among starts
    /// from which a tour exists, or mean microseconds per task; every
    /// table says its denominator under it.
    #[arg(long, value_enum, default_value_t = MetricArg::Accuracy)]
    pub metric: MetricArg,
    /// Show each cell's denominator (starts counted) and, for accuracy, its
    /// 95 % Wilson interval; CSV gets them as columns of their own.
    #[arg(long)]
    pub intervals: bool,
}

impl TableView {
    /// The table options for a sweep of `status`: an unfinished one is
    /// marked in every format.
    pub fn options(&self, status: &SweepStatus) -> TableOptions {
        TableOptions {
            layout: self.by.into(),
            format: self.format.into(),
            moves: self.rule.clone(),
            metric: self.metric.into(),
            intervals: self.intervals,
            progress: Some(Progress::from(status)),
        }
    }

    /// Refuses a `--rule` no row of the sweep has ([`check_rule`]).
    pub fn check_rule(&self, rows: &[AggregateRow]) -> Result<()> {
        check_rule(self.rule.as_deref(), rows)
    }

    /// True for the formats a program, paper or page reads (CSV, JSON, LaTeX, HTML):
    /// their output must be the data alone.
    pub fn is_data(&self) -> bool {
        matches!(self.format, Format::Csv | Format::Json | Format::Latex | Format::Html)
    }
}

/// Refuses a `--rule` no row of the sweep has, naming the ones it has (a
/// table or plot of it would be empty): a rule `3,2` or a grid's label.
pub fn check_rule(rule: Option<&str>, rows: &[AggregateRow]) -> Result<()> {
    let Some(rule) = rule else { return Ok(()) };
    if rows.iter().any(|r| r.moves == rule) {
        return Ok(());
    }
    let mut known: Vec<&str> = Vec::new();
    for r in rows {
        if !known.contains(&r.moves.as_str()) {
            known.push(&r.moves);
        }
    }
    let shown: Vec<String> = known
        .iter()
        .map(|m| match m.char_indices().nth(40) {
            Some((cut, _)) => format!("{} ... (an unlabelled move list: give its grid a label)", &m[..cut]),
            None => m.to_string(),
        })
        .collect();
    anyhow::bail!("--rule {rule}: the sweep has no such moves; it has {}", shown.join("; "))
}

/// Print a sweep's accuracy (or timing) tables.
#[derive(Debug, Args)]
pub struct TableArgs {
    /// The sweep: its id, a unique prefix of it, or its name (default: the
    /// only sweep there is).
    pub id: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub view: TableView,
}

pub async fn run(args: TableArgs, out: &mut impl Write) -> Result<()> {
    let mut source = Source::open(&args.source).await?;
    let status = source.status(args.id.as_deref()).await?;
    let rows = source.table_rows(Some(&status.sweep_id)).await?;
    args.view.check_rule(&rows)?;
    write!(out, "{}", render(&rows, &args.view.options(&status)))?;
    // For people only: data formats carry the data alone.
    if let (false, Some(reuse)) = (args.view.is_data(), status.reuse.summary(status.tasks_total)) {
        writeln!(out, "\n{reuse}")?;
    }
    Ok(())
}
