//! LaTeX for a paper: each table a booktabs `table` float, or a `longtable`
//! past [`LONG_ROWS`] rows so a 195-row range breaks across pages. The title
//! and every legend are in the caption. Methods are named as the report
//! names them (W, W+, AW, AW+, MW), shapes are written as products, and the
//! best method of each row is in bold. The preamble needs `booktabs` and
//! `longtable`.

use tour::Method;

use super::layout::{Table, ROW_HEADER};
use super::{Metric, TableLayout, IMPOSSIBLE, NO_TOUR_MARK};

/// Tables longer than this many rows become `longtable`s.
pub(super) const LONG_ROWS: usize = 40;

/// The tables, one float (or longtable) each; `warning` (an unfinished
/// sweep) opens every caption in bold.
pub(super) fn latex(tables: &[Table], warning: Option<&str>) -> String {
    let mut out = String::from("% ksweep tables; preamble: \\usepackage{booktabs} \\usepackage{longtable}\n");
    for t in tables {
        out.push('\n');
        out.push_str(&table(t, warning));
    }
    out
}

fn table(t: &Table, warning: Option<&str>) -> String {
    let columns = t.columns.len();
    let spec = format!("r{}", "r".repeat(columns));
    let header = std::iter::once(format!("${ROW_HEADER}$"))
        .chain(t.columns.iter().map(|(_, label)| column_label(t.layout, label)))
        .collect::<Vec<_>>()
        .join(" & ");
    let body: String = t.rows.iter().enumerate().map(|(i, (label, cells))| row(t, i, label, cells)).collect();
    let warning = warning.map(|w| format!("\\textbf{{{}.}} ", latex_escape(w))).unwrap_or_default();
    let caption = format!("\\caption{{{warning}{}}}\\label{{{}}}", caption(t), label(t));
    if t.rows.len() > LONG_ROWS {
        format!(
            "\\begin{{longtable}}{{{spec}}}\n{caption}\\\\\n\\toprule\n{header} \\\\\n\\midrule\n\\endfirsthead\n\
             \\multicolumn{{{}}}{{l}}{{\\small\\itshape continued}}\\\\\n\\toprule\n{header} \\\\\n\\midrule\n\\endhead\n\
             \\bottomrule\n\\endlastfoot\n{body}\\end{{longtable}}\n",
            columns + 1
        )
    } else {
        format!(
            "\\begin{{table}}[htbp]\n\\centering\n{caption}\n\\begin{{tabular}}{{{spec}}}\n\\toprule\n{header} \\\\\n\
             \\midrule\n{body}\\bottomrule\n\\end{{tabular}}\n\\end{{table}}\n"
        )
    }
}

/// One body line: the row label, then the cells, the best in bold.
fn row(t: &Table, index: usize, label: &str, cells: &[String]) -> String {
    let values: Vec<Option<f64>> = t.stats[index].iter().map(|s| s.and_then(|s| s.value)).collect();
    // Only a row of methods has a best method.
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    let best = (t.layout == TableLayout::ByMethods && present.len() > 1).then(|| match t.metric {
        Metric::MeanMicros => present.iter().copied().fold(f64::INFINITY, f64::min),
        _ => present.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    });
    let cells = cells.iter().zip(&values).map(|(c, &value)| {
        let marked = c.ends_with(NO_TOUR_MARK);
        let mut text = latex_escape(c.trim_end_matches(NO_TOUR_MARK));
        // Compared as printed, so two cells that read the same are both bold.
        let printed = |v: f64| format!("{v:.1}");
        if let (Some(best), Some(value)) = (best, value) {
            if printed(best) == printed(value) {
                text = format!("\\textbf{{{text}}}");
            }
        }
        if marked {
            text.push_str("$^{*}$");
        }
        text
    });
    let line: Vec<String> = std::iter::once(row_label(label)).chain(cells).collect();
    format!("{} \\\\\n", line.join(" & "))
}

/// A regular board's N as is; another shape `3x4` as $3\times4$.
fn row_label(label: &str) -> String {
    if label.chars().all(|c| c.is_ascii_digit()) {
        label.to_string()
    } else if label.split('x').all(|side| !side.is_empty() && side.chars().all(|c| c.is_ascii_digit())) {
        format!("${}$", label.replace('x', "\\times "))
    } else {
        latex_escape(label)
    }
}

/// A column header: `$D=3$`, or a method as the report names it.
fn column_label(layout: TableLayout, label: &str) -> String {
    match layout {
        TableLayout::ByDims => format!("${}$", label),
        TableLayout::ByMethods => method(label),
    }
}

/// A method as the report names it (W, AW+), or as given when unknown.
fn method(name: &str) -> String {
    name.parse::<Method>().map_or_else(|_| latex_escape(name), |m| latex_escape(m.report_name()))
}

/// The moves as a leaper `(3,2)` or an explicit list.
fn moves(label: &str) -> String {
    if label.split(',').all(|c| !c.is_empty() && c.chars().all(|c| c.is_ascii_digit())) {
        format!("the $({label})$ leaper")
    } else {
        format!("moves \\texttt{{{}}}", latex_escape(label))
    }
}

/// The caption: what the table shows, then each legend it needs.
fn caption(t: &Table) -> String {
    let metric = match t.metric {
        Metric::Accuracy => "Accuracy (\\%, tours per start)",
        Metric::AccuracyPossible => "Accuracy among starts not proven impossible (\\%)",
        Metric::MeanMicros => "Mean time per task ($\\mu$s)",
    };
    let [moves_label, second] = &t.keys;
    let mut text = match t.layout {
        TableLayout::ByDims => format!(
            "{metric} of {} with {} on $N^D$ boards, by side $N$ and dimension $D$.",
            method(second),
            moves(moves_label)
        ),
        TableLayout::ByMethods => format!(
            "{metric} by method with {} on {second}-dimensional boards, by side $N${}.",
            moves(moves_label),
            if t.columns.len() > 1 { "; the best method of each row in bold" } else { "" }
        ),
    };
    let cells = || t.rows.iter().flat_map(|(_, cells)| cells.iter());
    if cells().any(|c| c == IMPOSSIBLE) {
        text.push_str(" n/a: no tour can exist on the board, nothing was run.");
    }
    if t.marked {
        text.push_str(" $^{*}$No open tour exists on this board (proven).");
    }
    if cells().any(String::is_empty) {
        text.push_str(" An empty cell has no results.");
    }
    text
}

/// A label unique among one render's tables: `tab:3-2-aw+-accuracy` made
/// of letters, digits and dashes.
fn label(t: &Table) -> String {
    let metric = match t.metric {
        Metric::Accuracy => "accuracy",
        Metric::AccuracyPossible => "accuracy-possible",
        Metric::MeanMicros => "time",
    };
    let slug = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else if c == '+' {
                    'p'
                } else {
                    '-'
                }
            })
            .collect()
    };
    format!("tab:{}-{}-{metric}", slug(&t.keys[0]), slug(&t.keys[1]))
}

/// Escapes the characters LaTeX gives a meaning to.
pub(super) fn latex_escape(s: &str) -> String {
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
