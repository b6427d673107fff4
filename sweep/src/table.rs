//! The report's tables: per-configuration, per-method aggregates laid out
//! as the research report lays them (N down, D or methods across) in text,
//! Markdown, CSV, JSON or LaTeX.
//!
//! A cell holds the accuracy in percent with one decimal (`97.0`), or the
//! accuracy among starts not proven impossible, or mean time in
//! microseconds (see [`Metric`]); `n/a` marks an impossible configuration
//! (no tour exists, nothing was run) and an empty cell a result not in the
//! rows (yet). A cell of a board on which a theorem rules out every open
//! tour ([`tour::exists`]) carries [`NO_TOUR_MARK`] and a legend line, so a
//! 0.0 there is read as the board's fault, not the method's.
//!
//! The module splits by concern: the row model ([`AggregateRow`]), `layout`
//! groups rows into format-free tables, and one module per format draws
//! them (JSON is the rows themselves).

pub mod csv;
mod html;
mod latex;
mod layout;
mod markdown;
mod row;
mod text;

pub use html::escape as html_escape;
pub use layout::first_appearances;
use layout::tables;
pub use markdown::text as markdown_text;

use crate::Progress;
pub use row::{wilson, AggregateRow, CellPrecision};

/// Marker for an impossible configuration, in every format but JSON.
pub const IMPOSSIBLE: &str = "n/a";

/// Suffix of a cell whose board has no open tour, by [`tour::exists`].
pub const NO_TOUR_MARK: &str = "*";

/// The mark of a cell that adaptive precision stopped at the cap short of
/// the precision asked (a double dagger: the dagger marks explicit move
/// lists).
pub const CAP_MARK: &str = "\u{2021}";

/// The legend under tables holding a [`NO_TOUR_MARK`].
const NO_TOUR_LEGEND: &str = "* no open tour exists on this board (proven; see `ksweep exists`)";

/// How rows become tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TableLayout {
    /// One table per (moves, method): rows N (then non-regular shapes), columns D.
    #[default]
    ByDims,
    /// One table per (moves, D): rows N (then shapes), columns methods.
    ByMethods,
}

/// The output format of [`render`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TableFormat {
    /// Aligned columns under a title line per table.
    #[default]
    Text,
    /// A `###` title and a pipe table per table.
    Markdown,
    /// One CSV for all tables: the table's keys, then N, then the columns.
    Csv,
    /// The rows themselves, sorted by config then method: stable and lossless.
    Json,
    /// One `tabular` per table, its title as a comment.
    Latex,
    /// A `<table>` per table with its title as caption, for a report page.
    Html,
}

/// What [`render`] draws; the default is accuracy, by D, as text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableOptions {
    /// Which keys make the tables, rows and columns.
    pub layout: TableLayout,
    /// How the tables are written.
    pub format: TableFormat,
    /// Only rows with this moves label (`"3,2"`).
    pub moves: Option<String>,
    /// What the cells show.
    pub metric: Metric,
    /// Show each cell's denominator and, for accuracy, its 95 % Wilson
    /// interval (in the text, or as columns of their own in CSV).
    pub intervals: bool,
    /// Where the sweep stands. When given, an unfinished sweep says so in
    /// every format: a warning line (text, Markdown), the caption (LaTeX),
    /// and a `sweep_state` column (CSV) or field (JSON) in every row.
    pub progress: Option<Progress>,
}

/// The number in each cell of a table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// Successes in percent of tasks, as the report counts them: a failure
    /// counts even where no tour exists from the start.
    #[default]
    Accuracy,
    /// Successes in percent of the tasks not proven impossible: only the
    /// failures that are the method's fault.
    AccuracyPossible,
    /// Mean wall time per task in microseconds.
    MeanMicros,
}

/// Renders `rows` as `opts` asks.
pub fn render(rows: &[AggregateRow], opts: &TableOptions) -> String {
    // Methods rank by first appearance in the input, for rows and columns alike.
    let method_rank = layout::first_appearances(rows.iter().map(|r| r.method.as_str()));
    let rows = layout::sorted_rows(rows, opts.moves.as_deref(), &method_rank);
    let warning = opts.progress.as_ref().and_then(Progress::warning);
    let state = opts.progress.as_ref().map(Progress::state_label);
    match opts.format {
        TableFormat::Json => {
            let rows: Vec<serde_json::Value> = rows.iter().map(|r| json_row(r, state)).collect();
            let mut out = serde_json::to_string_pretty(&rows).expect("rows serialise to JSON");
            out.push('\n');
            out
        }
        TableFormat::Text => {
            let warning = warning.map(|w| format!("{w}\n\n")).unwrap_or_default();
            warning + &text::text(&tables(&rows, opts, &method_rank, true))
        }
        TableFormat::Markdown => {
            let warning = warning.map(|w| format!("> **{w}**\n\n")).unwrap_or_default();
            warning + &markdown::markdown(&tables(&rows, opts, &method_rank, true))
        }
        // CSV cells stay numbers; the rows' JSON carries the claims.
        TableFormat::Csv => csv::csv(&tables(&rows, opts, &method_rank, false), opts.layout, opts.intervals, state),
        TableFormat::Latex => latex::latex(&tables(&rows, opts, &method_rank, true), warning.as_deref()),
        TableFormat::Html => html::html(&tables(&rows, opts, &method_rank, true), warning.as_deref()),
    }
}

/// A row as JSON: its fields, with null (not 0) for the figures of a cell
/// without results, and the derived accuracy, possible-starts accuracy and
/// the bounds of the accuracy's 95 % Wilson interval (null where none);
/// with `state`, the sweep's state.
fn json_row(row: &AggregateRow, state: Option<&str>) -> serde_json::Value {
    let mut value = serde_json::to_value(row).expect("a row serialises to JSON");
    let object = value.as_object_mut().expect("a row is a JSON object");
    if row.tasks == 0 {
        for field in ["mean_micros", "median_micros", "mean_attempts"] {
            object.insert(field.into(), serde_json::Value::Null);
        }
    }
    let interval = row.interval(Metric::Accuracy);
    object.insert("accuracy".into(), row.accuracy().into());
    object.insert("accuracy_possible".into(), row.accuracy_possible().into());
    object.insert("wilson_low".into(), interval.map(|i| i.0).into());
    object.insert("wilson_high".into(), interval.map(|i| i.1).into());
    if row.precision.is_some() {
        // The bounds above are then the sequential interval's.
        object.insert("interval".into(), "sequential clopper-pearson".into());
    }
    if let Some(state) = state {
        object.insert("sweep_state".into(), state.into());
    }
    value
}

#[cfg(test)]
mod tests;
