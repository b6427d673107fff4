//! The chart model: a quantity against N, one panel per (rule, D) with a
//! series per method, or per (rule, method) with a series per D; built from
//! the aggregate rows the tables read, so a plot and a table never
//! disagree.

use sweep::{first_appearances, AggregateRow, Metric, MovesKind, TableLayout};
use tour::Method;

use crate::FigureError;

/// What a chart's y axis shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Successes in percent of starts, with the 95 % Wilson interval.
    Accuracy,
    /// Successes in percent of the starts from which a tour exists
    /// ([`Metric::AccuracyPossible`]), with its 95 % Wilson interval.
    AccuracyExists,
    /// Mean wall time per task, on a log scale.
    Time,
    /// Mean walks per task, for the methods that retry (AW, AW+, MW).
    Attempts,
}

impl Quantity {
    /// The y axis label.
    pub fn axis_label(self) -> &'static str {
        match self {
            Quantity::Accuracy => "accuracy (%)",
            Quantity::AccuracyExists => "accuracy where a tour exists (%)",
            Quantity::Time => "mean time per task (log)",
            Quantity::Attempts => "mean walks per task",
        }
    }

    /// The words a title of `rows` uses: with adaptive precision the bands
    /// are the sequential intervals ([`sweep::CellPrecision`]).
    pub fn title_of(self, rows: &[AggregateRow]) -> &'static str {
        match self {
            Quantity::Accuracy if rows.iter().any(|r| r.precision.is_some()) => {
                "Accuracy against N (bands: 95 % sequential Clopper-Pearson intervals)"
            }
            _ => self.title(),
        }
    }

    /// The words a title uses.
    pub fn title(self) -> &'static str {
        match self {
            Quantity::Accuracy => "Accuracy against N (bands: 95 % Wilson intervals)",
            Quantity::AccuracyExists => "Accuracy where a tour exists, against N (bands: 95 % Wilson)",
            Quantity::Time => "Mean time per task against N",
            Quantity::Attempts => "Mean walks per task against N",
        }
    }
}

/// What to chart.
#[derive(Clone, Debug)]
pub struct ChartSpec {
    /// The y quantity.
    pub quantity: Quantity,
    /// `ByMethods`: a panel per (rule, D), a line per method; `ByDims`: a
    /// panel per (rule, method), a line per D.
    pub layout: TableLayout,
    /// Only this rule (its label, `"3,2"`).
    pub moves: Option<String>,
    /// The figure's title line (the sweep's name, say).
    pub title: String,
    /// Said under the title in red: the sweep is unfinished, say.
    pub warning: Option<String>,
}

/// One point of a series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// The board side N.
    pub n: u32,
    /// The quantity.
    pub y: f64,
    /// The 95 % interval (accuracy only).
    pub band: Option<(f64, f64)>,
    /// Starts behind the point.
    pub starts: u64,
    /// Adaptive precision stopped the cell at its cap short of the
    /// precision: the plot rings it.
    pub capped: bool,
}

/// A line: one method's (or one D's) points, by N.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend text (`AW+`, or `3D`).
    pub label: String,
    /// The key its colour comes from (the method's name, or the D).
    pub key: String,
    pub points: Vec<Point>,
}

/// One panel: its title and lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    pub title: String,
    pub series: Vec<Series>,
}

/// A figure of panels sharing one quantity.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub title: String,
    pub warning: Option<String>,
    pub quantity: Quantity,
    pub panels: Vec<Panel>,
}

impl Chart {
    /// The chart of `rows` as `spec` asks. Rows of non-regular boards (no
    /// N), impossible configurations and cells without results have no
    /// point; a chart with no point at all is an error.
    pub fn new(rows: &[AggregateRow], spec: &ChartSpec) -> Result<Chart, FigureError> {
        let method_rank = first_appearances(rows.iter().map(|r| r.method.as_str()));
        let mut panels: Vec<(PanelKey, Panel)> = Vec::new();
        for row in rows {
            if spec.moves.as_ref().is_some_and(|m| *m != row.moves) {
                continue;
            }
            let Some(point) = point(row, spec.quantity) else { continue };
            let (key, title, series_key, label) = match spec.layout {
                TableLayout::ByMethods => (
                    PanelKey { moves: row.moves.clone(), dims: row.dims, method: String::new() },
                    format!("{} {}D", rule_name(&row.moves), row.dims),
                    row.method.clone(),
                    report_name(&row.method),
                ),
                TableLayout::ByDims => (
                    PanelKey { moves: row.moves.clone(), dims: 0, method: row.method.clone() },
                    format!("{} {}", rule_name(&row.moves), report_name(&row.method)),
                    row.dims.to_string(),
                    format!("{}D", row.dims),
                ),
            };
            let panel = match panels.iter().position(|(k, _)| *k == key) {
                Some(i) => &mut panels[i].1,
                None => {
                    panels.push((key, Panel { title, series: Vec::new() }));
                    &mut panels.last_mut().expect("just pushed").1
                }
            };
            match panel.series.iter_mut().find(|s| s.key == series_key) {
                Some(series) => series.points.push(point),
                None => panel.series.push(Series { label, key: series_key, points: vec![point] }),
            }
        }
        if panels.is_empty() {
            let filter = spec.moves.as_ref().map(|m| format!(" of rule {m}")).unwrap_or_default();
            let what = match spec.quantity {
                Quantity::Attempts => "no results of a retrying method (aw, aw+, mw) on an N^D board",
                _ => "no results on an N^D board",
            };
            return Err(FigureError::Empty(format!("{what}{filter} yet")));
        }
        let mut panels: Vec<Panel> = panels.into_iter().map(|(_, p)| p).collect();
        for panel in &mut panels {
            match spec.layout {
                TableLayout::ByMethods => panel.series.sort_by_key(|s| method_rank[s.key.as_str()]),
                TableLayout::ByDims => panel.series.sort_by_key(|s| s.key.parse::<u32>().unwrap_or(u32::MAX)),
            }
            for series in &mut panel.series {
                series.points.sort_by_key(|p| p.n);
            }
        }
        Ok(Chart { title: spec.title.clone(), warning: spec.warning.clone(), quantity: spec.quantity, panels })
    }
}

/// What tells panels apart.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PanelKey {
    moves: String,
    dims: u32,
    method: String,
}

/// A row's point, if it has one for `quantity`.
fn point(row: &AggregateRow, quantity: Quantity) -> Option<Point> {
    let n = row.n?;
    if row.impossible || row.tasks == 0 {
        return None;
    }
    let (y, band) = match quantity {
        Quantity::Accuracy => (row.accuracy()?, row.interval(Metric::Accuracy)),
        Quantity::AccuracyExists => (row.accuracy_possible()?, row.interval(Metric::AccuracyPossible)),
        Quantity::Time => (row.mean_micros, None),
        Quantity::Attempts => {
            let retries = row.method.parse::<Method>().is_ok_and(|m| m.max_attempts(2) > 1);
            (retries.then_some(row.mean_attempts)?, None)
        }
    };
    let starts =
        if quantity == Quantity::AccuracyExists { row.denominator(Metric::AccuracyPossible) } else { row.tasks };
    let capped = row.precision.is_some_and(|p| p.capped());
    Some(Point { n, y, band, starts, capped })
}

/// The mark of a move set given as an unlabelled list of one leaper's
/// moves: the leaper in its own move order. Not `*`, which the tables keep
/// for boards without an open tour.
pub const LIST_MARK: char = '\u{2020}';

/// A move set as a panel title names it: a rule `(3,2)`; a grid's label as
/// given; an unlabelled list of one leaper's moves (the authors' move orders)
/// as that leaper with [`LIST_MARK`], `(3,2)†`; any other list by its size.
pub fn rule_name(moves: &str) -> String {
    let list = match MovesKind::of(moves) {
        MovesKind::Rule(_) => return format!("({moves})"),
        MovesKind::Named => return moves.to_string(),
        MovesKind::List(list) => list,
    };
    let leaper = |m: &Vec<i64>| -> Vec<u64> {
        let mut v: Vec<u64> = m.iter().map(|c| c.unsigned_abs()).filter(|&c| c != 0).collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v
    };
    let shapes: Vec<Vec<u64>> = list.iter().map(leaper).collect();
    if shapes.windows(2).all(|w| w[0] == w[1]) {
        let rule: Vec<String> = shapes[0].iter().map(u64::to_string).collect();
        format!("({}){LIST_MARK}", rule.join(","))
    } else {
        format!("{} moves", list.len())
    }
}

/// The legend line explaining [`LIST_MARK`], when a title carries it.
pub fn list_mark_note<'t>(titles: impl IntoIterator<Item = &'t str>) -> Option<String> {
    titles.into_iter().any(|t| t.contains(LIST_MARK)).then(|| {
        format!("{LIST_MARK} the leaper's moves as an explicit list, in the spec's order (set a grid label to name it)")
    })
}

/// A method as the report names it (W, AW+), or the name as given.
fn report_name(method: &str) -> String {
    method.parse::<Method>().map_or_else(|_| method.to_string(), |m| m.report_name().to_string())
}
