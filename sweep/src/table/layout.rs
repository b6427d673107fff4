//! Layout: which rows go in which table, in what order, and the text of
//! each cell; format-free, so every format draws the same tables.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;

use super::{AggregateRow, CellPrecision, Metric, TableLayout, TableOptions, CAP_MARK, IMPOSSIBLE, NO_TOUR_MARK};

/// The corner header of every table: rows are board sizes.
pub(super) const ROW_HEADER: &str = "N";

/// The rows kept by the moves filter, by config index then method rank.
pub(super) fn sorted_rows<'r>(
    rows: &'r [AggregateRow],
    moves: Option<&str>,
    method_rank: &HashMap<&str, usize>,
) -> Vec<&'r AggregateRow> {
    let mut kept: Vec<&AggregateRow> = rows.iter().filter(|r| moves.is_none_or(|m| r.moves == m)).collect();
    kept.sort_by_cached_key(|r| (r.config, method_rank[r.method.as_str()]));
    kept
}

/// Each distinct item's rank in order of first appearance: how tables (and
/// plots) order methods, so every output lists them as the spec does.
pub fn first_appearances<T: Hash + Eq>(items: impl Iterator<Item = T>) -> HashMap<T, usize> {
    let mut ranks = HashMap::new();
    for item in items {
        let next = ranks.len();
        ranks.entry(item).or_insert(next);
    }
    ranks
}

/// A row label: regular boards by N ascending, then other shapes in the
/// order they first appear.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum RowKey {
    N(u32),
    Shape(usize, String),
}

impl RowKey {
    fn label(&self) -> String {
        match self {
            RowKey::N(n) => n.to_string(),
            RowKey::Shape(_, shape) => shape.clone(),
        }
    }
}

/// One table, format-free.
pub(super) struct Table {
    pub(super) title: String,
    /// What the table is of, for CSV: (moves, method) or (moves, D).
    pub(super) keys: [String; 2],
    /// Column headers with their sort rank (D, or the method's first appearance).
    pub(super) columns: Vec<(usize, String)>,
    /// Each row's label and cells, one per column.
    pub(super) rows: Vec<(String, Vec<String>)>,
    /// Some cell carries [`NO_TOUR_MARK`]: the table needs the legend.
    pub(super) marked: bool,
    /// What its cells count, with the table's totals: every format prints
    /// it, so no figure is read against the wrong denominator (None when
    /// nothing ran).
    pub(super) denominator: Option<String>,
    /// What the columns are (D, or methods) and what the cells show.
    pub(super) layout: TableLayout,
    pub(super) metric: Metric,
    /// The cells' texts carry their intervals and denominators.
    pub(super) intervals: bool,
    /// Some row has adaptive precision: CSV adds how each cell stopped.
    pub(super) adaptive: bool,
    /// Each cell's number, denominator and interval, beside its text (None
    /// where the cell has no row).
    pub(super) stats: Vec<Vec<Option<Stats>>>,
}

/// A cell's figures, for the formats that need more than its text.
#[derive(Clone, Copy, Debug)]
pub(super) struct Stats {
    pub(super) value: Option<f64>,
    pub(super) n: u64,
    pub(super) interval: Option<(f64, f64)>,
    /// Adaptive precision stopped it at the cap short of the precision.
    pub(super) capped: bool,
    /// With adaptive precision, how it stands: `reached`, `cap` or `going`.
    pub(super) stop: Option<&'static str>,
}

impl Table {
    /// The header line: the row header, then the column labels.
    pub(super) fn header(&self) -> Vec<&str> {
        std::iter::once(ROW_HEADER).chain(self.columns.iter().map(|(_, label)| label.as_str())).collect()
    }

    /// The body lines: each row's label, then its cells.
    pub(super) fn body(&self) -> impl Iterator<Item = Vec<&str>> {
        self.rows
            .iter()
            .map(|(label, cells)| std::iter::once(label.as_str()).chain(cells.iter().map(String::as_str)).collect())
    }
}

/// The rows of one table, before layout.
struct Group<'r> {
    /// (moves, method) or (moves, D).
    key: (String, String),
    members: Vec<&'r AggregateRow>,
}

/// `readable`: cells are for a reader, not a program. Cells of boards
/// without an open tour get [`NO_TOUR_MARK`], and when `opts.intervals`
/// asks, each cell's interval and denominator go into its text (CSV keeps
/// its cells numbers and them in columns of their own).
pub(super) fn tables(
    rows: &[&AggregateRow],
    opts: &TableOptions,
    method_rank: &HashMap<&str, usize>,
    readable: bool,
) -> Vec<Table> {
    let metric = match opts.metric {
        Metric::Accuracy => "accuracy (%)",
        Metric::AccuracyPossible => "accuracy among starts from which a tour exists (%)",
        Metric::MeanMicros => "mean time (µs)",
    };
    let shape_rank = first_appearances(rows.iter().filter(|r| r.n.is_none()).map(|r| r.shape.as_str()));
    let row_key = |r: &AggregateRow| match r.n {
        Some(n) => RowKey::N(n),
        None => RowKey::Shape(shape_rank[r.shape.as_str()], r.shape.clone()),
    };
    let column_key = |r: &AggregateRow| match opts.layout {
        TableLayout::ByDims => (r.dims as usize, dims_label(r.dims)),
        TableLayout::ByMethods => (method_rank[r.method.as_str()], r.method.clone()),
    };

    groups(rows, opts.layout)
        .into_iter()
        .map(|Group { key, members }| {
            let columns: Vec<(usize, String)> =
                members.iter().map(|r| column_key(r)).collect::<BTreeSet<_>>().into_iter().collect();
            let column_of: HashMap<usize, usize> =
                columns.iter().enumerate().map(|(i, (rank, _))| (*rank, i)).collect();
            // Rows sorted by key; the first result for a cell wins.
            let mut grid: BTreeMap<RowKey, Vec<Option<&AggregateRow>>> = BTreeMap::new();
            for &r in &members {
                let slot = &mut grid.entry(row_key(r)).or_insert_with(|| vec![None; columns.len()])
                    [column_of[&column_key(r).0]];
                slot.get_or_insert(r);
            }
            let mut marked = false;
            let mut stats = Vec::new();
            let body = grid
                .into_iter()
                .map(|(row, found)| {
                    let (figures, texts) = row_cells(&found, opts, readable, &mut marked);
                    stats.push(figures);
                    (row.label(), texts)
                })
                .collect();
            let denominator = denominator(opts.metric, &members);
            let (moves, second) = key;
            let title = match opts.layout {
                TableLayout::ByDims => format!("{metric} — moves {moves}, method {second}"),
                TableLayout::ByMethods => format!("{metric} — moves {moves}, {second}D"),
            };
            Table {
                title,
                keys: [moves, second],
                columns,
                rows: body,
                marked,
                denominator,
                layout: opts.layout,
                metric: opts.metric,
                intervals: readable && opts.intervals,
                adaptive: members.iter().any(|r| r.precision.is_some()),
                stats,
            }
        })
        .collect()
}

/// The sentence saying what a table's cells divide by, with its totals
/// over the rows that ran; None when none did.
fn denominator(metric: Metric, rows: &[&AggregateRow]) -> Option<String> {
    let ran = rows.iter().filter(|r| !r.impossible);
    let (tasks, refuted, unsettled) = ran.fold((0, 0, Some(0)), |(t, r, u), row| {
        (t + row.tasks, r + row.starts_refuted(), u.zip(row.unsettled).map(|(a, b)| a + b))
    });
    if tasks == 0 {
        return None;
    }
    Some(
        match metric {
            Metric::Accuracy if refuted > 0 => format!(
            "Denominator: all {tasks} starts run, as the report counts them; {refuted} of them have no tour (proven) \
             and count as failures."
        ),
            Metric::Accuracy => format!("Denominator: all {tasks} starts run, as the report counts them."),
            Metric::AccuracyPossible => {
                let rest = match unsettled {
                    Some(0) => "every other start has a tour found from it, so the figures are exact".to_string(),
                    Some(u) => format!(
                        "the {u} no method settled stay in, so a figure is a lower bound (solve on the same starts \
                     settles them)"
                    ),
                    None => "starts no method settled stay in".to_string(),
                };
                format!(
                "Denominator: starts from which a tour exists: {tasks} run, less {refuted} refuted (a proof on the \
                 start by solve, bt, construct or the colour rule, or the board's); {rest}."
            )
            }
            Metric::MeanMicros => format!("Mean over all {tasks} starts run."),
        } + &adaptive_note(rows),
    )
}

/// What a table of a sweep with adaptive precision adds to its
/// denominator: the precision, the range of starts the cells took, and
/// how many stopped at the cap or still run; empty for a fixed S.
fn adaptive_note(rows: &[&AggregateRow]) -> String {
    let cells: Vec<(&AggregateRow, CellPrecision)> =
        rows.iter().filter(|r| !r.impossible).filter_map(|r| Some((*r, r.precision?))).collect();
    let Some((_, first)) = cells.first() else { return String::new() };
    let least = cells.iter().map(|(r, _)| r.tasks).min().unwrap_or(0);
    let most = cells.iter().map(|(r, _)| r.tasks).max().unwrap_or(0);
    let widest = cells.iter().map(|(_, p)| p.half_width()).fold(0.0, f64::max);
    let capped = cells.iter().filter(|(_, p)| p.capped()).count();
    let going = cells.iter().filter(|(_, p)| !p.settled).count();
    let mut note = format!(
        " Starts per cell adapt to a half-width of {:.1} points: n from {least} to {most}, the widest interval \
         +/-{:.1} (sequential Clopper-Pearson, its confidence kept over the looks)",
        100.0 * first.asked,
        100.0 * widest
    );
    if capped > 0 {
        note.push_str(&format!("; {capped} cells marked {CAP_MARK} stopped at the cap short of it"));
    }
    if going > 0 {
        note.push_str(&format!("; {going} cells still run"));
    }
    note.push('.');
    note
}

/// Tables in the order their first row appears: rows grouped by moves and
/// method (`ByDims`) or by moves and D (`ByMethods`).
fn groups<'r>(rows: &[&'r AggregateRow], layout: TableLayout) -> Vec<Group<'r>> {
    let mut groups: Vec<Group> = Vec::new();
    let mut group_index: HashMap<(String, String), usize> = HashMap::new();
    for &r in rows {
        let key = match layout {
            TableLayout::ByDims => (r.moves.clone(), r.method.clone()),
            TableLayout::ByMethods => (r.moves.clone(), r.dims.to_string()),
        };
        let i = *group_index.entry(key.clone()).or_insert_with(|| {
            groups.push(Group { key, members: Vec::new() });
            groups.len() - 1
        });
        groups[i].members.push(r);
    }
    groups
}

/// One table row's figures and cell texts, from the result found for each
/// column (if any); sets `marked` when a cell gets [`NO_TOUR_MARK`].
fn row_cells(
    found: &[Option<&AggregateRow>],
    opts: &TableOptions,
    readable: bool,
    marked: &mut bool,
) -> (Vec<Option<Stats>>, Vec<String>) {
    let figures: Vec<Option<Stats>> = found
        .iter()
        .map(|r| {
            r.map(|r| Stats {
                value: r.value(opts.metric),
                n: r.denominator(opts.metric),
                interval: r.interval(opts.metric),
                capped: r.precision.is_some_and(|p| p.capped()),
                stop: r.precision.map(|p| match (p.settled, p.reached) {
                    (true, true) => "reached",
                    (true, false) => "cap",
                    (false, _) => "going",
                }),
            })
        })
        .collect();
    let texts = found
        .iter()
        .zip(&figures)
        .map(|(r, figures)| match (r, figures) {
            (Some(r), Some(figures)) => {
                let mut text = cell(r, figures, opts.metric, readable && opts.intervals);
                if readable && r.no_open_tour() && !text.is_empty() && text != IMPOSSIBLE {
                    text.push_str(NO_TOUR_MARK);
                    *marked = true;
                }
                if readable && figures.capped && !text.is_empty() {
                    text.push_str(CAP_MARK);
                }
                text
            }
            _ => String::new(),
        })
        .collect();
    (figures, texts)
}

/// A D column's header.
fn dims_label(dims: u32) -> String {
    format!("D={dims}")
}

/// A cell's text from its row and figures: the figure as [`figure`] writes it, `n/a` when impossible, empty when there are no results; with
/// `detail`, the 95 % Wilson interval and the denominator follow:
/// `75.0 [53.1, 88.8] n=20`.
fn cell(row: &AggregateRow, figures: &Stats, metric: Metric, detail: bool) -> String {
    if row.impossible {
        return IMPOSSIBLE.to_string();
    }
    if row.tasks == 0 {
        return String::new();
    }
    // None with tasks: every start was proven impossible.
    let Some(value) = figures.value else {
        return IMPOSSIBLE.to_string();
    };
    let mut text = figure(metric, value);
    if detail {
        if let Some((low, high)) = figures.interval {
            text.push_str(&format!(" [{low:.1}, {high:.1}]"));
        }
        text.push_str(&format!(" n={}", figures.n));
    }
    text
}

/// A cell's figure as every format prints it: one decimal, except a mean
/// time under 0.05 µs (a fast method on a small board), which gets two
/// significant digits so it does not read `0.0`.
pub(super) fn figure(metric: Metric, value: f64) -> String {
    if metric == Metric::MeanMicros && value > 0.0 && value < 0.05 {
        // Digits after the point for two significant ones: 0.034, 0.0051.
        let decimals = (1.0 - value.log10().floor()).min(9.0) as usize;
        return format!("{value:.decimals$}");
    }
    format!("{value:.1}")
}
