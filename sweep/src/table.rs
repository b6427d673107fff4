//! The report's tables: per-configuration, per-method aggregates laid out
//! as the research report lays them (N down, D or methods across) in text,
//! Markdown, CSV, JSON or LaTeX.
//!
//! A cell holds the accuracy in percent with one decimal (`97.0`), or the
//! accuracy among starts not proven impossible, or mean time in microseconds (see [`Metric`]); `n/a` marks an impossible
//! configuration (no tour exists, nothing was run) and an empty cell a
//! result not in the rows (yet). A cell of a board on which a theorem rules
//! out every open tour ([`tour::exists`]) carries [`NO_TOUR_MARK`] and a
//! legend line, so a 0.0 there is read as the board's fault, not the method's.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;

use serde::{Deserialize, Serialize};
use tour::exists::Claim;
use tour::{Eligibility, Method};

use crate::sweep::ConfigEntry;

/// Marker for an impossible configuration, in every format but JSON.
pub const IMPOSSIBLE: &str = "n/a";

/// Suffix of a cell whose board has no open tour, by [`tour::exists`].
pub const NO_TOUR_MARK: &str = "*";

/// The legend under tables holding a [`NO_TOUR_MARK`].
const NO_TOUR_LEGEND: &str = "* no open tour exists on this board (proven; see `ksweep exists`)";

/// One (configuration, method) aggregate over its starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AggregateRow {
    pub config: u32,
    pub moves: String,
    pub dims: u32,
    pub shape: String,
    /// Some(N) for a regular N^D board.
    pub n: Option<u32>,
    pub method: String,
    pub impossible: bool,
    pub tasks: u64,
    pub successes: u64,
    /// Tasks proven to have no tour from their start (colour rule,
    /// exhaustive search, construction).
    #[serde(default)]
    pub no_tour: u64,
    pub mean_micros: f64,
    pub median_micros: f64,
    pub mean_attempts: f64,
    /// What is proven about open tours on the board: `exists`,
    /// `impossible` or `unknown` ([`tour::exists::known`]).
    #[serde(default)]
    pub open_tour: String,
    /// The same for closed tours.
    #[serde(default)]
    pub closed_tour: String,
}

impl AggregateRow {
    /// A row for `entry` and `method` with no results yet.
    pub fn new(entry: &ConfigEntry, method: Method) -> AggregateRow {
        let known = entry.existence();
        AggregateRow {
            config: entry.index,
            moves: entry.moves_label(),
            dims: entry.dims() as u32,
            shape: entry.shape_label(),
            n: entry.n(),
            method: method.name().to_string(),
            impossible: entry.eligibility() == Eligibility::Impossible,
            tasks: 0,
            successes: 0,
            no_tour: 0,
            mean_micros: 0.0,
            median_micros: 0.0,
            mean_attempts: 0.0,
            open_tour: known.open.verdict().to_string(),
            closed_tour: known.closed.verdict().to_string(),
        }
    }

    /// True when a theorem (or the colour rule) rules out every open tour
    /// on the board, so no start can succeed.
    pub fn no_open_tour(&self) -> bool {
        self.open_tour == Claim::Impossible("").verdict()
    }

    /// Successes in percent of tasks; None when there are no tasks.
    pub fn accuracy(&self) -> Option<f64> {
        (self.tasks > 0).then(|| 100.0 * self.successes as f64 / self.tasks as f64)
    }

    /// Successes in percent of the tasks not proven impossible; None when
    /// every task was (or there are none), the board's theorems included.
    pub fn accuracy_possible(&self) -> Option<f64> {
        if self.no_open_tour() {
            return None;
        }
        let possible = self.tasks.saturating_sub(self.no_tour);
        (possible > 0).then(|| 100.0 * self.successes as f64 / possible as f64)
    }
}

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
}

/// What [`render`] draws; the default is accuracy, by D, as text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableOptions {
    pub layout: TableLayout,
    pub format: TableFormat,
    /// Only rows with this moves label (`"3,2"`).
    pub moves: Option<String>,
    /// What the cells show.
    pub metric: Metric,
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
    let method_rank = first_appearances(rows.iter().map(|r| r.method.as_str()));
    let rows = sorted_rows(rows, opts.moves.as_deref(), &method_rank);
    match opts.format {
        TableFormat::Json => {
            let mut out = serde_json::to_string_pretty(&rows).expect("rows serialise to JSON");
            out.push('\n');
            out
        }
        TableFormat::Text => text(&tables(&rows, opts, &method_rank, true)),
        TableFormat::Markdown => markdown(&tables(&rows, opts, &method_rank, true)),
        // CSV cells stay numbers; the rows' JSON carries the claims.
        TableFormat::Csv => csv(&tables(&rows, opts, &method_rank, false), opts.layout),
        TableFormat::Latex => latex(&tables(&rows, opts, &method_rank, true)),
    }
}

/// The rows kept by the moves filter, by config index then method rank.
fn sorted_rows<'r>(
    rows: &'r [AggregateRow],
    moves: Option<&str>,
    method_rank: &HashMap<&str, usize>,
) -> Vec<&'r AggregateRow> {
    let mut kept: Vec<&AggregateRow> = rows.iter().filter(|r| moves.is_none_or(|m| r.moves == m)).collect();
    kept.sort_by_cached_key(|r| (r.config, method_rank[r.method.as_str()]));
    kept
}

/// Each distinct item's rank in order of first appearance.
fn first_appearances<T: Hash + Eq>(items: impl Iterator<Item = T>) -> HashMap<T, usize> {
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
struct Table {
    title: String,
    /// What the table is of, for CSV: (moves, method) or (moves, D).
    keys: [String; 2],
    /// Column headers with their sort rank (D, or the method's first appearance).
    columns: Vec<(usize, String)>,
    rows: Vec<(String, Vec<String>)>,
    /// Some cell carries [`NO_TOUR_MARK`]: the table needs the legend.
    marked: bool,
}

impl Table {
    /// The header line: the row header, then the column labels.
    fn header(&self) -> Vec<&str> {
        std::iter::once(ROW_HEADER).chain(self.columns.iter().map(|(_, label)| label.as_str())).collect()
    }

    /// The body lines: each row's label, then its cells.
    fn body(&self) -> impl Iterator<Item = Vec<&str>> {
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

/// `marks`: suffix [`NO_TOUR_MARK`] to the cells of boards without an open tour.
fn tables(rows: &[&AggregateRow], opts: &TableOptions, method_rank: &HashMap<&str, usize>, marks: bool) -> Vec<Table> {
    let metric = match opts.metric {
        Metric::Accuracy => "accuracy (%)",
        Metric::AccuracyPossible => "accuracy among starts not proven impossible (%)",
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

    // Tables in the order their first row appears.
    let mut groups: Vec<Group> = Vec::new();
    let mut group_index: HashMap<(String, String), usize> = HashMap::new();
    for &r in rows {
        let key = match opts.layout {
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
            let body = grid
                .into_iter()
                .map(|(row, found)| {
                    let texts = found
                        .into_iter()
                        .map(|r| {
                            r.map_or_else(String::new, |r| {
                                let mut text = cell(r, opts.metric);
                                if marks && r.no_open_tour() && !text.is_empty() && text != IMPOSSIBLE {
                                    text.push_str(NO_TOUR_MARK);
                                    marked = true;
                                }
                                text
                            })
                        })
                        .collect();
                    (row.label(), texts)
                })
                .collect();
            let (moves, second) = key;
            let title = match opts.layout {
                TableLayout::ByDims => format!("{metric} — moves {moves}, method {second}"),
                TableLayout::ByMethods => format!("{metric} — moves {moves}, {second}D"),
            };
            Table { title, keys: [moves, second], columns, rows: body, marked }
        })
        .collect()
}

/// A D column's header.
fn dims_label(dims: u32) -> String {
    format!("D={dims}")
}

/// A cell's text: accuracy or mean time with one decimal, `n/a` when
/// impossible, empty when there are no results.
fn cell(row: &AggregateRow, metric: Metric) -> String {
    if row.impossible {
        return IMPOSSIBLE.to_string();
    }
    if row.tasks == 0 {
        return String::new();
    }
    let value = match metric {
        Metric::Accuracy => row.accuracy(),
        Metric::AccuracyPossible => row.accuracy_possible(),
        Metric::MeanMicros => Some(row.mean_micros),
    };
    // None with tasks: every start was proven impossible.
    value.map_or_else(|| IMPOSSIBLE.to_string(), |v| format!("{v:.1}"))
}

/// The corner header of every table: rows are board sizes.
const ROW_HEADER: &str = "N";

fn text(tables: &[Table]) -> String {
    let blocks: Vec<String> = tables
        .iter()
        .map(|t| {
            let lines: Vec<Vec<&str>> = std::iter::once(t.header()).chain(t.body()).collect();
            let widths: Vec<usize> =
                (0..=t.columns.len()).map(|i| lines.iter().map(|l| l[i].chars().count()).max().unwrap_or(0)).collect();
            let mut out = format!("{}\n", t.title);
            for line in &lines {
                let padded: Vec<String> = line.iter().zip(&widths).map(|(s, &w)| format!("{s:>w$}")).collect();
                out.push_str(padded.join("  ").trim_end());
                out.push('\n');
            }
            if t.marked {
                out.push_str(NO_TOUR_LEGEND);
                out.push('\n');
            }
            out
        })
        .collect();
    blocks.join("\n")
}

fn markdown(tables: &[Table]) -> String {
    let row = |cells: Vec<&str>| {
        let escaped: Vec<String> = cells.iter().map(|c| markdown_escape(c)).collect();
        format!("| {} |\n", escaped.join(" | "))
    };
    let blocks: Vec<String> = tables
        .iter()
        .map(|t| {
            let mut out = format!("### {}\n\n", t.title);
            out.push_str(&row(t.header()));
            out.push_str(&format!("|{}\n", "---:|".repeat(t.columns.len() + 1)));
            for line in t.body() {
                out.push_str(&row(line));
            }
            if t.marked {
                out.push_str(&format!("\n{}\n", markdown_escape(NO_TOUR_LEGEND)));
            }
            out
        })
        .collect();
    blocks.join("\n")
}

/// Escapes what Markdown would read as table syntax or emphasis.
fn markdown_escape(text: &str) -> String {
    text.replace('|', "\\|").replace('*', "\\*")
}

/// One CSV: the group keys, N, then the union of every table's columns.
fn csv(tables: &[Table], layout: TableLayout) -> String {
    let mut columns: Vec<&(usize, String)> = tables.iter().flat_map(|t| &t.columns).collect();
    columns.sort();
    columns.dedup();
    let second = match layout {
        TableLayout::ByDims => "method",
        TableLayout::ByMethods => "dims",
    };
    let line = |fields: Vec<&str>| {
        let quoted: Vec<String> = fields.into_iter().map(csv_field).collect();
        format!("{}\n", quoted.join(","))
    };
    let mut out = line(
        ["moves", second, ROW_HEADER].into_iter().chain(columns.iter().map(|(_, label)| label.as_str())).collect(),
    );
    for t in tables {
        for (label, cells) in &t.rows {
            let value =
                |c: &&(usize, String)| t.columns.iter().position(|tc| tc == *c).map_or("", |i| cells[i].as_str());
            out.push_str(&line(
                [t.keys[0].as_str(), t.keys[1].as_str(), label.as_str()]
                    .into_iter()
                    .chain(columns.iter().map(value))
                    .collect(),
            ));
        }
    }
    out
}

/// RFC 4180 quoting: only fields with a comma, quote or line break.
fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

fn latex(tables: &[Table]) -> String {
    let row = |cells: Vec<&str>| {
        let escaped: Vec<String> = cells.into_iter().map(latex_escape).collect();
        format!("{} \\\\\n", escaped.join(" & "))
    };
    let blocks: Vec<String> = tables
        .iter()
        .map(|t| {
            let mut out = format!("% {}\n", t.title);
            out.push_str(&format!("\\begin{{tabular}}{{r|{}}}\n\\hline\n", "r".repeat(t.columns.len())));
            out.push_str(&row(t.header()));
            out.push_str("\\hline\n");
            for line in t.body() {
                out.push_str(&row(line));
            }
            out.push_str("\\hline\n\\end{tabular}\n");
            if t.marked {
                out.push_str(&format!("% {NO_TOUR_LEGEND}\n"));
            }
            out
        })
        .collect();
    blocks.join("\n")
}

fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(ch);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '\\' => out.push_str("\\textbackslash{}"),
            _ => out.push(ch),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::too_many_arguments)]
    fn row(config: u32, moves: &str, shape: &str, method: &str, tasks: u64, successes: u64) -> AggregateRow {
        let sides: Vec<u32> = shape.split('x').map(|s| s.parse().unwrap()).collect();
        AggregateRow {
            config,
            moves: moves.into(),
            dims: sides.len() as u32,
            shape: shape.into(),
            n: sides.iter().all(|&s| s == sides[0]).then_some(sides[0]),
            method: method.into(),
            impossible: moves == "3,1",
            tasks,
            successes,
            no_tour: 0,
            mean_micros: 10.0 * f64::from(config) + 0.46,
            median_micros: 3.5,
            mean_attempts: 1.5,
            open_tour: if moves == "3,1" { "impossible" } else { "unknown" }.into(),
            closed_tour: "unknown".into(),
        }
    }

    /// A small hand-made result set, deliberately out of order: w appears
    /// before aw+; config 1 has no aw+ row; config 2's w has no results yet.
    fn rows() -> Vec<AggregateRow> {
        vec![
            row(0, "3,2", "5x5", "w", 13, 13),
            row(2, "3,2", "6x6", "aw+", 100, 97),
            row(0, "3,2", "5x5", "aw+", 13, 12),
            row(1, "3,2", "5x5x5", "w", 63, 60),
            row(2, "3,2", "6x6", "w", 0, 0),
            row(4, "3,2", "10x8", "aw+", 100, 80),
            row(4, "3,2", "10x8", "w", 100, 50),
            row(3, "3,1", "4x4", "aw+", 0, 0),
            row(3, "3,1", "4x4", "w", 0, 0),
        ]
    }

    fn opts(layout: TableLayout, format: TableFormat) -> TableOptions {
        TableOptions { layout, format, moves: None, metric: Metric::Accuracy }
    }

    #[test]
    fn accuracy_is_a_percentage() {
        let r = row(0, "3,2", "5x5", "w", 200, 193);
        assert_eq!(r.accuracy(), Some(96.5));
        assert_eq!(row(0, "3,2", "5x5", "w", 0, 0).accuracy(), None);
        let mut odd = row(0, "2,1", "5x5", "w", 10, 6);
        odd.no_tour = 4;
        assert_eq!(odd.accuracy(), Some(60.0));
        assert_eq!(odd.accuracy_possible(), Some(100.0), "the 4 failures were impossible starts");
        odd.no_tour = 10;
        assert_eq!(odd.accuracy_possible(), None);
    }

    /// 4x4 has no open knight's tour (Conrad et al.): its failures are the
    /// board's, and the tables say so.
    #[test]
    fn boards_without_an_open_tour_are_marked() {
        let mut rows = vec![row(0, "2,1", "4x4", "w", 16, 0), row(1, "2,1", "5x5", "w", 25, 13)];
        rows[0].open_tour = "impossible".into();
        rows[1].open_tour = "exists".into();
        assert!(rows[0].no_open_tour() && !rows[1].no_open_tour());
        assert_eq!(rows[0].accuracy(), Some(0.0), "the report's accuracy still counts them");
        assert_eq!(rows[0].accuracy_possible(), None, "no start of 4x4 can succeed");

        let text = render(&rows, &opts(TableLayout::ByDims, TableFormat::Text));
        assert_eq!(text, format!("accuracy (%) — moves 2,1, method w\nN   D=2\n4  0.0*\n5  52.0\n{NO_TOUR_LEGEND}\n"));
        let md = render(&rows, &opts(TableLayout::ByDims, TableFormat::Markdown));
        assert!(md.contains("| 4 | 0.0\\* |") && md.contains("\\* no open tour"), "{md}");
        let csv = render(&rows, &opts(TableLayout::ByDims, TableFormat::Csv));
        assert_eq!(csv, "moves,method,N,D=2\n\"2,1\",w,4,0.0\n\"2,1\",w,5,52.0\n");
        let possible =
            TableOptions { metric: Metric::AccuracyPossible, ..opts(TableLayout::ByDims, TableFormat::Text) };
        let text = render(&rows, &possible);
        assert!(text.contains("4   n/a\n") && !text.contains(NO_TOUR_LEGEND), "{text}");

        // Unmarked tables carry no legend.
        let text = render(&rows[1..], &opts(TableLayout::ByDims, TableFormat::Text));
        assert!(!text.contains(NO_TOUR_MARK), "{text}");
    }

    #[test]
    fn csv_by_dims() {
        let out = render(&rows(), &opts(TableLayout::ByDims, TableFormat::Csv));
        let expected = "\
moves,method,N,D=2,D=3
\"3,2\",w,5,100.0,95.2
\"3,2\",w,6,,
\"3,2\",w,10x8,50.0,
\"3,2\",aw+,5,92.3,
\"3,2\",aw+,6,97.0,
\"3,2\",aw+,10x8,80.0,
\"3,1\",w,4,n/a,
\"3,1\",aw+,4,n/a,
";
        assert_eq!(out, expected);
    }

    #[test]
    fn csv_by_methods() {
        let out = render(&rows(), &opts(TableLayout::ByMethods, TableFormat::Csv));
        let expected = "\
moves,dims,N,w,aw+
\"3,2\",2,5,100.0,92.3
\"3,2\",2,6,,97.0
\"3,2\",2,10x8,50.0,80.0
\"3,2\",3,5,95.2,
\"3,1\",2,4,n/a,n/a
";
        assert_eq!(out, expected);
    }

    #[test]
    fn csv_columns_follow_method_order_across_tables() {
        // w appears first in the input, but the first table only has aw+.
        let rows = [row(1, "3,2", "5x5x5", "w", 10, 5), row(0, "3,2", "5x5", "aw+", 10, 10)];
        let out = render(&rows, &opts(TableLayout::ByMethods, TableFormat::Csv));
        assert_eq!(out, "moves,dims,N,w,aw+\n\"3,2\",2,5,,100.0\n\"3,2\",3,5,50.0,\n");
    }

    #[test]
    fn json_is_the_sorted_rows() {
        let mut o = opts(TableLayout::ByDims, TableFormat::Json);
        o.moves = Some("3,1".into());
        let expected = r#"[
  {
    "config": 3,
    "moves": "3,1",
    "dims": 2,
    "shape": "4x4",
    "n": 4,
    "method": "w",
    "impossible": true,
    "tasks": 0,
    "successes": 0,
    "no_tour": 0,
    "mean_micros": 30.46,
    "median_micros": 3.5,
    "mean_attempts": 1.5,
    "open_tour": "impossible",
    "closed_tour": "unknown"
  },
  {
    "config": 3,
    "moves": "3,1",
    "dims": 2,
    "shape": "4x4",
    "n": 4,
    "method": "aw+",
    "impossible": true,
    "tasks": 0,
    "successes": 0,
    "no_tour": 0,
    "mean_micros": 30.46,
    "median_micros": 3.5,
    "mean_attempts": 1.5,
    "open_tour": "impossible",
    "closed_tour": "unknown"
  }
]
"#;
        assert_eq!(render(&rows(), &o), expected);

        // All rows: config order, then w before aw+; the layout does not matter.
        let all = render(&rows(), &opts(TableLayout::ByMethods, TableFormat::Json));
        let back: Vec<AggregateRow> = serde_json::from_str(&all).unwrap();
        let order: Vec<(u32, &str)> = back.iter().map(|r| (r.config, r.method.as_str())).collect();
        assert_eq!(
            order,
            [(0, "w"), (0, "aw+"), (1, "w"), (2, "w"), (2, "aw+"), (3, "w"), (3, "aw+"), (4, "w"), (4, "aw+")]
        );
        let mut shuffled = rows();
        shuffled.reverse();
        shuffled.sort_by_key(|r| r.method != "w"); // w still appears first
        assert_eq!(render(&shuffled, &opts(TableLayout::ByDims, TableFormat::Json)), all);
    }

    #[test]
    fn text_by_dims() {
        let mut o = opts(TableLayout::ByDims, TableFormat::Text);
        o.moves = Some("3,2".into());
        let expected = "\
accuracy (%) — moves 3,2, method w
   N    D=2   D=3
   5  100.0  95.2
   6
10x8   50.0

accuracy (%) — moves 3,2, method aw+
   N   D=2
   5  92.3
   6  97.0
10x8  80.0
";
        assert_eq!(render(&rows(), &o), expected);
    }

    #[test]
    fn text_by_methods_with_timing() {
        let o = TableOptions {
            layout: TableLayout::ByMethods,
            format: TableFormat::Text,
            moves: None,
            metric: Metric::MeanMicros,
        };
        let expected = "\
mean time (µs) — moves 3,2, 2D
   N     w   aw+
   5   0.5   0.5
   6        20.5
10x8  40.5  40.5

mean time (µs) — moves 3,2, 3D
N     w
5  10.5

mean time (µs) — moves 3,1, 2D
N    w  aw+
4  n/a  n/a
";
        assert_eq!(render(&rows(), &o), expected);
    }

    #[test]
    fn markdown_and_latex() {
        let mut o = opts(TableLayout::ByMethods, TableFormat::Markdown);
        o.moves = Some("3,2".into());
        let md = render(&rows(), &o);
        assert!(md.starts_with(
            "### accuracy (%) — moves 3,2, 2D\n\n| N | w | aw+ |\n|---:|---:|---:|\n| 5 | 100.0 | 92.3 |\n| 6 |  | 97.0 |\n"
        ), "{md}");
        assert!(md.contains("\n\n### accuracy (%) — moves 3,2, 3D\n\n| N | w |\n|---:|---:|\n| 5 | 95.2 |\n"), "{md}");

        o.format = TableFormat::Latex;
        o.moves = Some("3,1".into());
        let expected = "\
% accuracy (%) — moves 3,1, 2D
\\begin{tabular}{r|rr}
\\hline
N & w & aw+ \\\\
\\hline
4 & n/a & n/a \\\\
\\hline
\\end{tabular}
";
        assert_eq!(render(&rows(), &o), expected);
        assert_eq!(latex_escape("a_b & 50%"), "a\\_b \\& 50\\%");
    }

    #[test]
    fn filters_and_empty_input() {
        let mut o = opts(TableLayout::ByDims, TableFormat::Csv);
        o.moves = Some("4,3".into());
        assert_eq!(render(&rows(), &o), "moves,method,N\n");
        o.format = TableFormat::Json;
        assert_eq!(render(&[], &o), "[]\n");
        o.format = TableFormat::Text;
        assert_eq!(render(&[], &o), "");
    }

    #[test]
    fn rows_from_configurations() {
        let sweep = crate::Sweep::parse(
            "name = \"r\"\nseed = 1\nmethods = [\"w\"]\n[[grid]]\nrule = [3, 1]\ndims = [2]\nn = [4]\n[[grid]]\nrule = [2, 1]\nshapes = [[10, 8]]",
        )
        .unwrap();
        let [even, wide] = sweep.configurations() else { panic!("two configurations") };
        let r = AggregateRow::new(even, Method::Aw);
        assert_eq!((r.moves.as_str(), r.shape.as_str(), r.n, r.method.as_str()), ("3,1", "4x4", Some(4), "aw"));
        assert!(r.impossible);
        let r = AggregateRow::new(wide, Method::W);
        assert_eq!((r.config, r.dims, r.n, r.impossible), (1, 2, None, false));
    }
}
