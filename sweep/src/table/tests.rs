//! The tables' tests: hand-made rows, each format's exact output.

use super::latex::latex_escape;
use super::wilson;
use super::*;
use tour::Method;

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
        refuted: 0,
        unsettled: None,
        closed: false,
        mean_micros: 10.0 * f64::from(config) + 0.46,
        median_micros: 3.5,
        mean_attempts: 1.5,
        open_tour: if moves == "3,1" { "impossible" } else { "unknown" }.into(),
        closed_tour: "unknown".into(),
        precision: None,
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

const ALL_FORMATS: [TableFormat; 6] = [
    TableFormat::Text,
    TableFormat::Markdown,
    TableFormat::Csv,
    TableFormat::Json,
    TableFormat::Latex,
    TableFormat::Html,
];

fn opts(layout: TableLayout, format: TableFormat) -> TableOptions {
    TableOptions { layout, format, moves: None, metric: Metric::Accuracy, intervals: false, progress: None }
}

#[test]
fn adaptive_cells_show_their_sequential_interval_and_the_cap_mark() {
    let cell = |low, high, reached| CellPrecision { asked: 0.05, low, high, settled: true, reached };
    let mut rows = vec![row(0, "3,2", "8x8", "w", 32, 32), row(1, "3,2", "9x9", "w", 200, 100)];
    rows[0].precision = Some(cell(0.9, 1.0, true));
    rows[1].precision = Some(cell(0.4, 0.6, false));
    let o = TableOptions { intervals: true, ..opts(TableLayout::ByDims, TableFormat::Text) };
    let text = render(&rows, &o);
    assert!(text.contains("100.0 [90.0, 100.0] n=32"), "{text}");
    assert!(text.contains(&format!("50.0 [40.0, 60.0] n=200{CAP_MARK}")), "{text}");
    assert!(text.contains("half-width of 5.0 points: n from 32 to 200, the widest interval +/-10.0"), "{text}");
    assert!(text.contains(&format!("1 cells marked {CAP_MARK} stopped at the cap")), "{text}");
    for format in [TableFormat::Markdown, TableFormat::Html, TableFormat::Latex] {
        let out = render(&rows, &TableOptions { format, ..o.clone() });
        assert!(out.contains("n from 32 to 200"), "{format:?}: {out}");
        let mark = if format == TableFormat::Latex { "$^{\\ddagger}$" } else { CAP_MARK };
        assert!(out.contains(mark), "{format:?}: {out}");
    }
    let csv = render(&rows, &TableOptions { format: TableFormat::Csv, ..o.clone() });
    assert!(csv.contains("D=2 stop") && csv.contains(",reached") && csv.contains(",cap"), "{csv}");
    let json = render(&rows, &TableOptions { format: TableFormat::Json, ..o.clone() });
    assert!(json.contains("sequential clopper-pearson") && json.contains("\"reached\""), "{json}");
    // A fixed-S table says nothing of it.
    let fixed = render(&[row(0, "3,2", "8x8", "w", 32, 32)], &o);
    assert!(!fixed.contains("adapt") && !fixed.contains(CAP_MARK), "{fixed}");
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
    assert_eq!(
        text,
        format!(
            "accuracy (%) — moves 2,1, method w\nN   D=2\n4  0.0*\n5  52.0\nDenominator: all 41 starts run, as the \
             report counts them; 16 of them have no tour (proven) and count as failures.\n{NO_TOUR_LEGEND}\n"
        )
    );
    let md = render(&rows, &opts(TableLayout::ByDims, TableFormat::Markdown));
    assert!(md.contains("| 4 | 0.0\\* |") && md.contains("\\* no open tour"), "{md}");
    let csv = render(&rows, &opts(TableLayout::ByDims, TableFormat::Csv));
    assert_eq!(csv, "moves,method,N,D=2\n\"2,1\",w,4,0.0\n\"2,1\",w,5,52.0\n");
    let possible = TableOptions { metric: Metric::AccuracyPossible, ..opts(TableLayout::ByDims, TableFormat::Text) };
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
    "not_run": true,
    "tasks": 0,
    "successes": 0,
    "no_tour": 0,
    "refuted": 0,
    "unsettled": null,
    "closed": false,
    "mean_micros": null,
    "median_micros": null,
    "mean_attempts": null,
    "open_tour": "impossible",
    "closed_tour": "unknown",
    "accuracy": null,
    "accuracy_possible": null,
    "wilson_low": null,
    "wilson_high": null
  },
  {
    "config": 3,
    "moves": "3,1",
    "dims": 2,
    "shape": "4x4",
    "n": 4,
    "method": "aw+",
    "not_run": true,
    "tasks": 0,
    "successes": 0,
    "no_tour": 0,
    "refuted": 0,
    "unsettled": null,
    "closed": false,
    "mean_micros": null,
    "median_micros": null,
    "mean_attempts": null,
    "open_tour": "impossible",
    "closed_tour": "unknown",
    "accuracy": null,
    "accuracy_possible": null,
    "wilson_low": null,
    "wilson_high": null
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
Denominator: all 176 starts run, as the report counts them.

accuracy (%) — moves 3,2, method aw+
   N   D=2
   5  92.3
   6  97.0
10x8  80.0
Denominator: all 213 starts run, as the report counts them.
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
        intervals: false,
        progress: None,
    };
    let expected = "\
mean time (µs) — moves 3,2, 2D
   N     w   aw+
   5   0.5   0.5
   6        20.5
10x8  40.5  40.5
Mean over all 326 starts run.

mean time (µs) — moves 3,2, 3D
N     w
5  10.5
Mean over all 63 starts run.

mean time (µs) — moves 3,1, 2D
N    w  aw+
4  n/a  n/a
";
    assert_eq!(render(&rows(), &o), expected);
}

/// `not_run` says the colour rule kept every start from running; a board
/// proven to have no open tour runs its starts, so its rows say `false`
/// beside `"open_tour": "impossible"`. Rows written as `impossible` read back.
#[test]
fn json_rows_say_not_run_only_for_the_colour_rule() {
    let mut proven = row(5, "2,1", "4x4", "w", 16, 0);
    proven.open_tour = "impossible".into();
    let colour = row(3, "3,1", "4x4", "w", 0, 0);
    let json = render(&[proven, colour], &opts(TableLayout::ByMethods, TableFormat::Json));
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    let keys = |r: &serde_json::Value| (r["not_run"].clone(), r["open_tour"].clone(), r.get("impossible").cloned());
    // Config order: the colour rule's 3 first.
    assert_eq!(keys(&rows[0]), (true.into(), "impossible".into(), None), "{json}");
    assert_eq!(keys(&rows[1]), (false.into(), "impossible".into(), None), "{json}");
    let old = json.replace("\"not_run\"", "\"impossible\"");
    let back: Vec<AggregateRow> = serde_json::from_str(&old).unwrap();
    assert_eq!(back.iter().map(|r| r.impossible).collect::<Vec<_>>(), [true, false]);
}

/// A mean time under 0.05 µs keeps two significant digits in every
/// format instead of reading 0.0; larger ones keep one decimal.
#[test]
fn tiny_mean_times_keep_two_significant_digits() {
    let mut rows = vec![row(0, "3,2", "5x5", "w", 10, 10), row(0, "3,2", "5x5", "aw+", 10, 10)];
    rows[0].mean_micros = 0.034;
    rows[1].mean_micros = 0.0051;
    let mut o = TableOptions { metric: Metric::MeanMicros, ..opts(TableLayout::ByMethods, TableFormat::Text) };
    let text = render(&rows, &o);
    assert!(text.contains("\n5  0.034  0.0051\n"), "{text}");
    o.format = TableFormat::Latex;
    let latex = render(&rows, &o);
    assert!(latex.contains("5 & 0.034 & \\textbf{0.0051} \\\\"), "{latex}");
    o.format = TableFormat::Csv;
    assert!(render(&rows, &o).ends_with(",5,0.034,0.0051\n"));
    assert_eq!(layout::figure(Metric::MeanMicros, 0.05), "0.1", "0.05 rounds as before");
    assert_eq!(layout::figure(Metric::MeanMicros, 0.0), "0.0");
    assert_eq!(layout::figure(Metric::Accuracy, 0.034), "0.0", "accuracy keeps one decimal");
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
% ksweep tables; preamble: \\usepackage{booktabs} \\usepackage{longtable}

\\begin{table}[htbp]
\\centering
\\caption{Accuracy (\\%, tours per start) by method with the $(3,1)$ leaper on 2-dimensional boards, by side $N$; \
a row's best method in bold where it alone is best. n/a: no tour can exist on the board, nothing was run.}\\label{tab:3-1-2-accuracy}
\\begin{tabular}{rrr}
\\toprule
$N$ & W & AW+ \\\\
\\midrule
4 & n/a & n/a \\\\
\\bottomrule
\\end{tabular}
\\end{table}
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
    let r = AggregateRow::new(even, Method::Aw, false);
    assert_eq!((r.moves.as_str(), r.shape.as_str(), r.n, r.method.as_str()), ("3,1", "4x4", Some(4), "aw"));
    assert!(r.impossible);
    let r = AggregateRow::new(wide, Method::W, false);
    assert_eq!((r.config, r.dims, r.n, r.impossible), (1, 2, None, false));
}

/// Every format, layout and metric on the sample rows (plus a board
/// without an open tour and a non-regular shape in two move sets),
/// pinned byte for byte in `table/golden.txt`. Rerun with
/// `SWEEP_BLESS_GOLDEN=1` to rewrite the file after a deliberate change.
#[test]
fn every_format_matches_the_golden_file() {
    let mut rows = rows();
    let mut marked = row(5, "2,1", "4x4", "w", 16, 0);
    marked.open_tour = "impossible".into();
    rows.push(marked);
    let mut half = row(6, "2,1", "3x7", "aw+", 20, 9);
    half.no_tour = 4;
    rows.push(half);
    let mut out = String::new();
    for format in ALL_FORMATS {
        for layout in [TableLayout::ByDims, TableLayout::ByMethods] {
            for metric in [Metric::Accuracy, Metric::AccuracyPossible, Metric::MeanMicros] {
                for moves in [None, Some("2,1")] {
                    let o = TableOptions {
                        layout,
                        format,
                        moves: moves.map(String::from),
                        metric,
                        intervals: false,
                        progress: None,
                    };
                    out.push_str(&format!("==== {format:?} {layout:?} {metric:?} {moves:?}\n"));
                    out.push_str(&render(&rows, &o));
                }
            }
        }
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/table/golden.txt");
    if std::env::var_os("SWEEP_BLESS_GOLDEN").is_some() {
        std::fs::write(path, &out).unwrap();
    }
    let golden = std::fs::read_to_string(path).unwrap();
    assert!(out == golden, "render differs from {path}; diff it with SWEEP_BLESS_GOLDEN=1 and git diff");
}

/// Rows of one method pair over many N, for the paper-table checks.
fn long_rows(count: u32) -> Vec<AggregateRow> {
    let mut rows = Vec::new();
    for n in 5..5 + count {
        rows.push(row(n - 5, "3,2", &format!("{n}x{n}"), "aw+", 20, 10 + (n % 7) as u64));
        rows.push(row(n - 5, "3,2", &format!("{n}x{n}"), "mw", 20, 10 + (n % 5) as u64));
    }
    rows
}

/// Rows as the report has them: the five methods on N = 1..9 for D = 2..9,
/// up to 10,000 starts a cell, slow cells of seconds, some ties.
fn report_rows() -> Vec<AggregateRow> {
    let mut rows = Vec::new();
    let mut config = 0;
    for dims in 2..=9u32 {
        for n in 1..=9u32 {
            let shape = vec![n.to_string(); dims as usize].join("x");
            for (m, method) in ["w", "w+", "aw", "aw+", "mw"].into_iter().enumerate() {
                let tasks = [20, 100, 10_000][(n % 3) as usize];
                let successes = (tasks * (n as u64 + m as u64)) / 14;
                let mut r = row(config, "3,2", &shape, method, tasks, successes.min(tasks));
                r.mean_micros = 1_234_567.8 * f64::from(n);
                r.no_tour = u64::from(n == 4);
                if n == 2 {
                    r.open_tour = "impossible".into();
                }
                rows.push(r);
            }
            config += 1;
        }
    }
    rows
}

/// Six methods in 3D over the sides `ns`, with 10,000 starts a cell, rows
/// as wide as rows get: every method 9,996 successes (`[99.9, 100.0]`: a
/// page of six such columns with two-digit N was 0.5 pt too wide), or one
/// method all of them (`[100.0, 100.0]`, in bold), with the `*` of a board
/// without an open tour and the `‡` of a capped cell.
fn six_method_rows(ns: std::ops::Range<u32>) -> Vec<AggregateRow> {
    let mut rows = Vec::new();
    for n in ns {
        let shape = format!("{n}x{n}x{n}");
        for (m, method) in ["w", "w+", "aw", "aw+", "mw", "wr"].into_iter().enumerate() {
            let tasks = 10_000;
            let successes = match (n % 2, m) {
                (0, _) => 9_996,
                (_, 0) => tasks,
                _ => tasks - 1 - (37 * m as u64 * u64::from(n)) % 999,
            };
            let mut r = row(n, "3,2", &shape, method, tasks, successes);
            r.mean_micros = 12_345.67 * f64::from(n);
            if n % 3 == 0 {
                r.open_tour = "impossible".into();
            }
            if n % 5 == 0 {
                let share = successes as f64 / tasks as f64;
                r.precision =
                    Some(CellPrecision { asked: 0.001, low: share - 0.0004, high: 1.0, settled: true, reached: false });
            }
            rows.push(r);
        }
    }
    rows
}

#[test]
fn latex_bolds_a_unique_best_figure_only() {
    let o = TableOptions { intervals: true, ..opts(TableLayout::ByMethods, TableFormat::Latex) };
    // N=5: 75.0 beats 50.0; N=6: both 0.0; N=7: both 60.0.
    let rows = vec![
        row(0, "3,2", "5x5", "aw+", 20, 15),
        row(0, "3,2", "5x5", "mw", 20, 10),
        row(1, "3,2", "6x6", "aw+", 20, 0),
        row(1, "3,2", "6x6", "mw", 20, 0),
        row(2, "3,2", "7x7", "aw+", 20, 12),
        row(2, "3,2", "7x7", "mw", 20, 12),
    ];
    let out = render(&rows, &o);
    assert_eq!(out.matches("\\textbf{").count(), 1, "{out}");
    // The figure only: its interval and denominator are small lines under it.
    assert!(
        out.contains(
            "5 & \\begin{tabular}[t]{@{}r@{}}\\textbf{75.0}\\\\{\\scriptsize [53.1, 88.8]}\\\\{\\scriptsize n=20}\\end{tabular} & "
        ),
        "{out}"
    );
    assert!(out.contains("\\begin{tabular}[t]{@{}r@{}}0.0\\\\"), "{out}");
    // Time: the least is best, unique too.
    let time = render(&rows, &TableOptions { metric: Metric::MeanMicros, ..o });
    assert_eq!(time.matches("\\textbf{").count(), 0, "every row's times tie: {time}");
}

#[test]
fn latex_splits_tables_wider_than_the_page() {
    let o = TableOptions { intervals: true, ..opts(TableLayout::ByDims, TableFormat::Latex) };
    let out = render(&report_rows(), &o);
    // Eight D columns with intervals do not fit one page width: two parts a method.
    assert!(out.contains("Part 1 of 2: $D=2$, $D=3$, $D=4$, $D=5$.") && out.contains("Part 2 of 2: $D=6$"), "{out}");
    assert!(out.contains("\\label{tab:3-2-w-accuracy}") && out.contains("\\label{tab:3-2-w-accuracy-2}"), "{out}");
    // Five methods with intervals fit whole.
    let by_methods = render(&report_rows(), &TableOptions { layout: TableLayout::ByMethods, ..o.clone() });
    assert!(!by_methods.contains("Part 1"), "{by_methods}");
    assert!(by_methods.contains("$N$ & W & W+ & AW & AW+ & MW \\\\"), "{by_methods}");
    assert!(!by_methods.contains("tabcolsep"), "with LaTeX's own column gap: {by_methods}");
    // Six fit whole with half the gap, in a group of their own.
    let six = render(&six_method_rows(5..55), &TableOptions { layout: TableLayout::ByMethods, ..o });
    assert!(
        six.contains("\\begingroup\n\\setlength{\\tabcolsep}{3pt}\n\\begin{longtable}{rrrrrrr}")
            && six.contains("\\end{longtable}\n\\endgroup\n")
            && !six.contains("Part 1"),
        "{six}"
    );
}

#[test]
fn latex_is_paper_ready() {
    let mut o = opts(TableLayout::ByMethods, TableFormat::Latex);
    let short = render(&long_rows(3), &o);
    // One float, booktabs rules, caption and label, report names, the best
    // of each row in bold.
    assert!(short.contains("\\begin{table}[htbp]") && short.contains("\\toprule") && short.contains("\\bottomrule"));
    assert!(short.contains("\\caption{Accuracy") && short.contains("\\label{tab:3-2-2-accuracy}"), "{short}");
    assert!(short.contains("$N$ & AW+ & MW \\\\"), "{short}");
    // N=5: aw+ 15/20 = 75.0, mw 10/20 = 50.0; N=7: 10/20 and 12/20.
    assert!(short.contains("5 & \\textbf{75.0} & 50.0 \\\\"), "{short}");
    assert!(short.contains("7 & 50.0 & \\textbf{60.0} \\\\"), "{short}");
    // Time: the least is best.
    o.metric = Metric::MeanMicros;
    let mut slower = long_rows(3);
    slower.iter_mut().filter(|r| r.method == "mw").for_each(|r| r.mean_micros += 5.0);
    let time = render(&slower, &o);
    assert!(time.contains("Mean time per task ($\\mu$s)") && time.contains("5 & \\textbf{0.5} & 5.5 \\\\"), "{time}");
    // Equal times tie: nothing is bold.
    assert!(!render(&long_rows(3), &o).contains("\\textbf{"));

    // A long range breaks across pages with its header repeated; one row per N.
    o.metric = Metric::Accuracy;
    let long = render(&long_rows(195), &o);
    assert!(long.contains("\\begin{longtable}{rrr}") && long.contains("\\endhead"), "{}", &long[..400]);
    assert_eq!(long.matches(" \\\\\n").count(), 195 + 2, "195 rows and the header twice");
    assert!(!long.contains("\\begin{table}"));

    // Non-regular shapes are products, methods in ByDims captions are named
    // as the report names them.
    let mut odd = vec![row(0, "2,1", "3x4", "w+", 10, 5)];
    odd[0].n = None;
    let by_dims = render(&odd, &opts(TableLayout::ByDims, TableFormat::Latex));
    assert!(by_dims.contains("$3\\times 4$ & 50.0"), "{by_dims}");
    assert!(by_dims.contains("Accuracy (\\%, tours per start) of W+ with the $(2,1)$ leaper"), "{by_dims}");
}

/// Every LaTeX table of the golden set, and a 195-row longtable, compile
/// with pdflatex where it is installed (CI installs it).
#[test]
fn latex_compiles_with_pdflatex() {
    let Ok(status) = std::process::Command::new("pdflatex").arg("--version").output() else {
        eprintln!("skipped: pdflatex is not installed (apt-get install texlive-latex-recommended)");
        return;
    };
    assert!(status.status.success());
    let mut tables = render(&long_rows(195), &opts(TableLayout::ByMethods, TableFormat::Latex));
    // The report's shape: five methods, D = 2..9, intervals, wide figures.
    for layout in [TableLayout::ByDims, TableLayout::ByMethods] {
        for metric in [Metric::Accuracy, Metric::AccuracyPossible, Metric::MeanMicros] {
            let o = TableOptions { metric, intervals: true, ..opts(layout, TableFormat::Latex) };
            tables.push_str(&render(&report_rows(), &o));
            tables.push_str("\\clearpage\n");
        }
    }
    // Six methods with intervals in 3D, the widest rows, in a float and a
    // longtable: whole, with a tighter column gap (widths estimated short
    // of the truth once put them on one page, 4 pt too wide).
    for ns in [3..10, 5..55] {
        for metric in [Metric::Accuracy, Metric::AccuracyPossible, Metric::MeanMicros] {
            let o = TableOptions { metric, intervals: true, ..opts(TableLayout::ByMethods, TableFormat::Latex) };
            let six = render(&six_method_rows(ns.clone()), &o);
            // Times of 666666.2 µs in bold with two marks are wider: they split.
            let whole = six.contains("{rrrrrrr}") && !six.contains("Part 1");
            assert!(whole || metric == Metric::MeanMicros, "{six}");
            tables.push_str(&six);
            tables.push_str("\\clearpage\n");
        }
    }
    for layout in [TableLayout::ByDims, TableLayout::ByMethods] {
        for metric in [Metric::Accuracy, Metric::AccuracyPossible, Metric::MeanMicros] {
            let mut rows = rows();
            let mut marked = row(5, "2,1", "4x4", "w", 16, 0);
            marked.open_tour = "impossible".into();
            rows.push(marked);
            for intervals in [false, true] {
                // With intervals, an unfinished sweep: its warning opens every caption.
                let progress = intervals.then(|| crate::Progress {
                    state: "cancelled".into(),
                    tasks_done: 7,
                    tasks_total: 40,
                    shards_failed: 1,
                });
                let o = TableOptions { layout, format: TableFormat::Latex, moves: None, metric, intervals, progress };
                tables.push_str(&render(&rows, &o));
                // As a paper would, let the floats out now and then.
                tables.push_str("\\clearpage\n");
            }
        }
    }
    let dir = std::env::temp_dir().join(format!("ksweep-latex-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let doc = format!(
        "\\documentclass{{article}}\n\\usepackage[T1]{{fontenc}}\n\\usepackage{{booktabs}}\n\\usepackage{{longtable}}\n\
         \\begin{{document}}\n{tables}\\end{{document}}\n"
    );
    std::fs::write(dir.join("tables.tex"), doc).unwrap();
    let out = std::process::Command::new("pdflatex")
        .args(["-interaction=nonstopmode", "-halt-on-error", "tables.tex"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "pdflatex failed:\n{log}");
    assert!(!log.contains("Warning: Reference") && dir.join("tables.pdf").exists(), "{log}");
    // Every table fits the page: no column is cut off.
    let tex_log = std::fs::read_to_string(dir.join("tables.log")).unwrap();
    assert!(!tex_log.contains("Overfull \\hbox"), "a table is wider than the page:\n{tex_log}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn wilson_intervals_match_known_values() {
    // 15 of 20: the textbook Wilson 95 % interval is [53.1, 88.8].
    let (low, high) = wilson(15, 20).unwrap();
    assert!((low - 53.13).abs() < 0.01 && (high - 88.81).abs() < 0.01, "{low} {high}");
    // 0 and all successes stay inside [0, 100] and are not empty.
    let (low, high) = wilson(0, 20).unwrap();
    assert!(low == 0.0 && (high - 16.11).abs() < 0.01, "{low} {high}");
    let (low, high) = wilson(20, 20).unwrap();
    assert!((low - 83.89).abs() < 0.01 && high == 100.0, "{low} {high}");
    assert_eq!(wilson(0, 0), None);
}

#[test]
fn intervals_and_denominators_show_in_every_format() {
    let mut o = opts(TableLayout::ByMethods, TableFormat::Text);
    o.intervals = true;
    let text = render(&long_rows(1), &o);
    // N=5: aw+ 15/20, mw 10/20.
    assert!(text.contains("75.0 [53.1, 88.8] n=20") && text.contains("50.0 [29.9, 70.1] n=20"), "{text}");
    o.format = TableFormat::Csv;
    let csv = render(&long_rows(1), &o);
    assert_eq!(
        csv,
        "moves,dims,N,aw+,aw+ n,aw+ low,aw+ high,mw,mw n,mw low,mw high\n3,2,5,75.0,20,53.1,88.8,50.0,20,29.9,70.1\n"
            .replace("3,2,5", "\"3,2\",2,5")
    );
    o.format = TableFormat::Latex;
    let latex = render(&long_rows(1), &o);
    assert!(
        latex
            .contains("{@{}r@{}}\\textbf{75.0}\\\\{\\scriptsize [53.1, 88.8]}\\\\{\\scriptsize n=20}\\end{tabular} & ")
            && latex.contains("{@{}r@{}}50.0\\\\{\\scriptsize [29.9, 70.1]}\\\\{\\scriptsize n=20}"),
        "{latex}"
    );
    // Time cells carry the denominator, no interval.
    o.format = TableFormat::Text;
    o.metric = Metric::MeanMicros;
    let time = render(&long_rows(1), &o);
    assert!(time.contains(" n=20") && !time.contains('['), "{time}");
}

#[test]
fn an_unfinished_sweep_says_so_in_every_format() {
    let progress = crate::Progress { state: "cancelled".into(), tasks_done: 7, tasks_total: 40, shards_failed: 1 };
    let warning = progress.warning().unwrap();
    for format in ALL_FORMATS {
        let o = TableOptions { progress: Some(progress.clone()), ..opts(TableLayout::ByMethods, format) };
        let out = render(&rows(), &o);
        match format {
            TableFormat::Text => assert!(out.starts_with(&format!("{warning}\n\n")), "{out}"),
            TableFormat::Markdown => assert!(out.starts_with(&format!("> **{warning}**\n\n")), "{out}"),
            TableFormat::Html => assert!(out.starts_with("<p class=\"warning\">UNFINISHED sweep (cancelled)"), "{out}"),
            TableFormat::Latex => {
                let captions = out.matches("\\caption{\\textbf{UNFINISHED sweep (cancelled): 7 of 40 tasks").count();
                assert_eq!(captions, out.matches("\\caption{").count(), "{out}");
                assert!(captions > 0);
            }
            TableFormat::Csv => {
                let mut lines = out.lines();
                assert!(lines.next().unwrap().ends_with(",sweep_state"), "{out}");
                assert!(lines.all(|l| l.ends_with(",cancelled")), "{out}");
            }
            TableFormat::Json => {
                let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
                assert!(rows.iter().all(|r| r["sweep_state"] == "cancelled"), "{out}");
            }
        }
        // A finished sweep adds nothing a reader must skip but the state.
        let done = crate::Progress { state: "done".into(), tasks_done: 40, tasks_total: 40, shards_failed: 0 };
        let o = TableOptions { progress: Some(done), ..opts(TableLayout::ByMethods, format) };
        assert!(!render(&rows(), &o).contains("UNFINISHED"));
    }
}

/// Labels a spec's author chose, meant to hurt: a spreadsheet formula,
/// markup, and the specials of Markdown, HTML and LaTeX.
const HOSTILE_LABELS: [&str; 3] = [
    "=HYPERLINK(\"http://e/\") <img src=x onerror=alert(1)>",
    "-2+3+cmd|' /C calc'!A0 *b* _i_ [l](javascript:x) #",
    "@SUM(A1) \\input{/etc/passwd} $x$ %c &a ~t ^h {b} <script>",
];

/// The fields of a CSV text, quotes undone (RFC 4180).
fn csv_fields(csv: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted, mut chars) = (Vec::new(), String::new(), false, csv.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',' | '\n', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields
}

/// The same hostile labels through every format of the tables: each
/// comes out as text through its format's one escaping function, never as
/// a formula, a tag, emphasis or a LaTeX command.
#[test]
fn hostile_labels_are_inert_in_every_format() {
    let rows: Vec<AggregateRow> =
        HOSTILE_LABELS.iter().enumerate().map(|(i, label)| row(i as u32, label, "5x5", "w", 4, 2)).collect();
    for layout in [TableLayout::ByDims, TableLayout::ByMethods] {
        let out = |format| render(&rows, &opts(layout, format));
        let fields = csv_fields(&out(TableFormat::Csv));
        for label in HOSTILE_LABELS {
            assert!(fields.iter().any(|f| *f == format!("'{label}")), "{label:?} as text in {fields:?}");
        }
        for f in &fields {
            let data = f.chars().all(|c| c.is_ascii_digit() || " ,.+-[]".contains(c));
            assert!(!f.starts_with(['=', '+', '-', '@']) || data, "a formula in a CSV field: {f:?}");
        }
        let md = out(TableFormat::Markdown);
        let html = out(TableFormat::Html);
        let tex = out(TableFormat::Latex);
        for doc in [&md, &html] {
            assert!(!doc.contains("<img") && !doc.contains("<script"), "a tag in\n{doc}");
        }
        for label in HOSTILE_LABELS {
            assert!(md.contains(&markdown_text(label)), "{label:?} unescaped in\n{md}");
            assert!(html.contains(&html_escape(label)), "{label:?} unescaped in\n{html}");
            let escaped = latex_escape(label);
            assert!(tex.contains(&escaped), "{label:?} unescaped in\n{tex}");
            assert!(escaped == label || !tex.contains(label), "{label:?} also raw in\n{tex}");
        }
    }
}
