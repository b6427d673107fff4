//! LaTeX for a paper: each table a booktabs `table` float, or a `longtable`
//! past [`LONG_ROWS`] rows so a 195-row range breaks across pages. The title
//! and every legend are in the caption. Methods are named as the report
//! names them (W, W+, AW, AW+, MW), shapes are written as products, and a
//! row's unique best figure is in bold. Every table fits an `article` page
//! (a test compiles them and fails on an overfull box): intervals go in small
//! type under their figure, a table too wide gets a tighter column gap, and
//! one still too wide is split by columns.
//! The preamble needs `booktabs` and `longtable`.

use tour::Method;

use crate::MovesKind;

use super::layout::{figure, Stats, Table, ROW_HEADER};
use super::{Metric, TableLayout, IMPOSSIBLE, NO_TOUR_MARK};

/// Tables longer than this many rows become `longtable`s.
pub(super) const LONG_ROWS: usize = 40;

/// The text width a table must fit, in pt: `article` at 10 pt (345 pt on
/// letter and A4 paper), the narrowest page a paper sets tables on.
const TEXT_WIDTH_PT: f64 = 345.0;

/// Space LaTeX puts either side of a column (`\tabcolsep`), in pt.
const COLUMN_PADDING_PT: f64 = 6.0;

/// The column gap a table too wide for [`COLUMN_PADDING_PT`] gets before it
/// is split: half LaTeX's, still clear between right-aligned figures.
const TIGHT_PADDING_PT: f64 = 3.0;

/// The tables, one float (or longtable) each, split by columns into parts
/// that fit the page; `warning` (an unfinished sweep) opens every caption
/// in bold.
pub(super) fn latex(tables: &[Table], warning: Option<&str>) -> String {
    let mut out = String::from("% ksweep tables; preamble: \\usepackage{booktabs} \\usepackage{longtable}\n");
    for t in tables {
        let cells: Vec<Vec<String>> = (0..t.rows.len()).map(|i| row_cells(t, i)).collect();
        let fit = column_parts(t);
        for (part, columns) in fit.parts.iter().enumerate() {
            out.push('\n');
            out.push_str(&table(t, &cells, columns, (part, fit.parts.len()), fit.padding, warning));
        }
    }
    out
}

/// One float (or longtable) of the columns `columns` of `t`, `padding` pt
/// either side of a column; `part` is (index, count) of the parts `t` is
/// split into.
fn table(
    t: &Table,
    cells: &[Vec<String>],
    columns: &[usize],
    part: (usize, usize),
    padding: f64,
    warning: Option<&str>,
) -> String {
    let spec = format!("r{}", "r".repeat(columns.len()));
    let header = std::iter::once(format!("${ROW_HEADER}$"))
        .chain(columns.iter().map(|&c| column_label(t.layout, &t.columns[c].1)))
        .collect::<Vec<_>>()
        .join(" & ");
    let body: String = t
        .rows
        .iter()
        .zip(cells)
        .map(|((label, _), cells)| {
            let line: Vec<String> =
                std::iter::once(row_label(label)).chain(columns.iter().map(|&c| cells[c].clone())).collect();
            format!("{} \\\\\n", line.join(" & "))
        })
        .collect();
    let warning = warning.map(|w| format!("\\textbf{{{}.}} ", latex_escape(w))).unwrap_or_default();
    let (index, count) = part;
    let mut caption = caption(t);
    let mut label = label(t);
    if count > 1 {
        let names: Vec<String> = columns.iter().map(|&c| column_label(t.layout, &t.columns[c].1)).collect();
        caption.push_str(&format!(" Part {} of {count}: {}.", index + 1, names.join(", ")));
        // The first part keeps the table's label, so a reference finds its start.
        if index > 0 {
            label.push_str(&format!("-{}", index + 1));
        }
    }
    let caption = format!("\\caption{{{warning}{caption}}}\\label{{{label}}}");
    // A tighter gap is set in a group of its own: the float's, or one
    // around the longtable.
    let gap = match padding == COLUMN_PADDING_PT {
        true => String::new(),
        false => format!("\\setlength{{\\tabcolsep}}{{{padding}pt}}\n"),
    };
    if t.rows.len() > LONG_ROWS {
        let (open, close) = if gap.is_empty() { ("", "") } else { ("\\begingroup\n", "\\endgroup\n") };
        format!(
            "{open}{gap}\\begin{{longtable}}{{{spec}}}\n{caption}\\\\\n\\toprule\n{header} \\\\\n\\midrule\n\\endfirsthead\n\
             \\multicolumn{{{}}}{{l}}{{\\small\\itshape continued}}\\\\\n\\toprule\n{header} \\\\\n\\midrule\n\\endhead\n\
             \\bottomrule\n\\endlastfoot\n{body}\\end{{longtable}}\n{close}",
            columns.len() + 1
        )
    } else {
        format!(
            "\\begin{{table}}[htbp]\n\\centering\n{gap}{caption}\n\\begin{{tabular}}{{{spec}}}\n\\toprule\n{header} \\\\\n\
             \\midrule\n{body}\\bottomrule\n\\end{{tabular}}\n\\end{{table}}\n"
        )
    }
}

/// How a table is set: its columns split into parts, and the space either
/// side of a column.
struct Fit {
    parts: Vec<Vec<usize>>,
    /// `\tabcolsep`, in pt: LaTeX's 6, or [`TIGHT_PADDING_PT`] where only
    /// that keeps a table whole.
    padding: f64,
}

/// The columns of `t` split into as few parts as fit the page, of sizes
/// as even as can be, each with LaTeX's column gap or, where that alone
/// keeps it whole, a tighter one: a table of six methods with intervals
/// fits whole, one of eight D columns splits in two.
fn column_parts(t: &Table) -> Fit {
    let label_width = t
        .rows
        .iter()
        .map(|(label, _)| text_width(label, Font::Math))
        .fold(text_width(ROW_HEADER, Font::Math), f64::max);
    let widths: Vec<f64> = (0..t.columns.len())
        .map(|c| {
            let header = header_width(t.layout, &t.columns[c].1);
            t.stats.iter().map(|stats| cell_width(t, stats[c])).fold(header, f64::max)
        })
        .collect();
    let all: Vec<usize> = (0..t.columns.len()).collect();
    for count in 1..=all.len().max(1) {
        let size = all.len().div_ceil(count).max(1);
        let parts: Vec<Vec<usize>> = all.chunks(size).map(<[usize]>::to_vec).collect();
        for padding in [COLUMN_PADDING_PT, TIGHT_PADDING_PT] {
            // Each column, the row labels' too, has the gap on both sides.
            let fits = |part: &Vec<usize>| {
                let columns = part.len() as f64 + 1.0;
                label_width + part.iter().map(|&c| widths[c]).sum::<f64>() + 2.0 * padding * columns <= TEXT_WIDTH_PT
            };
            if parts.iter().all(fits) {
                return Fit { parts, padding };
            }
        }
    }
    Fit { parts: all.into_iter().map(|c| vec![c]).collect(), padding: TIGHT_PADDING_PT }
}

/// A column header's width in pt: `$D=2$` (math, spaced about the `=`),
/// or a method as the report names it.
fn header_width(layout: TableLayout, label: &str) -> f64 {
    match layout {
        TableLayout::ByDims => text_width(label, Font::Math),
        TableLayout::ByMethods => {
            let name = label.parse::<Method>().map_or(label, |m| m.report_name());
            text_width(name, Font::Normal)
        }
    }
}

/// A cell's width in pt, as [`row_cells`] writes it: the figure, in bold
/// (a row's best may be) with its marks (`*`, and `‡` where the cap
/// stopped it), and with intervals the small lines under it.
fn cell_width(t: &Table, stats: Option<Stats>) -> f64 {
    let Some(stats) = stats else { return 0.0 };
    let mut width = match stats.value {
        Some(v) => text_width(&figure(t.metric, v), Font::Bold) + MARK_PT * (1.0 + f64::from(u8::from(stats.capped))),
        None => text_width(IMPOSSIBLE, Font::Normal),
    };
    if t.intervals {
        for line in detail_lines(&stats) {
            width = width.max(text_width(&line, Font::Small));
        }
    }
    width
}

/// The fonts a table's texts are set in.
#[derive(Clone, Copy)]
enum Font {
    /// 10 pt roman.
    Normal,
    /// 10 pt bold: a row's best figure.
    Bold,
    /// `\scriptsize` (7 pt): the interval lines under a figure.
    Small,
    /// 10 pt math: `$D=2$`, `$N$`, `$3\times 4$` (or a plain N).
    Math,
}

/// Width of a superscript mark (`$^{*}$`, `$^{\ddagger}$`), in pt.
const MARK_PT: f64 = 4.6;

/// A width in pt of `text` in Computer Modern (T1), from its glyphs'
/// widths ([`glyph_em`]); an estimate a little over the truth, so a table
/// said to fit does.
fn text_width(text: &str, font: Font) -> f64 {
    let em: f64 = text.chars().map(|c| glyph_em(c, font)).sum();
    let count = |f: fn(&char) -> bool| text.chars().filter(f).count() as f64;
    let (size, extra) = match font {
        Font::Small => (7.0, 0.0),
        // A relation gets a thick space (5/18 em) on either side, a shape's
        // `\times` (its `x`) a medium one, and italic capitals are wider
        // than upright ones.
        Font::Math => {
            (10.0, 0.556 * count(|&c| c == '=') + 0.67 * count(|&c| c == 'x') + 0.16 * count(char::is_ascii_uppercase))
        }
        Font::Normal | Font::Bold => (10.0, 0.0),
    };
    (em + extra) * size * 1.02
}

/// A glyph's width in em, as pdflatex sets it: bold is 15 % wider, and
/// `\scriptsize` (7 pt) about 14 % (its design size), its digits and
/// punctuation as measured.
fn glyph_em(c: char, font: Font) -> f64 {
    let normal = match c {
        '0'..='9' | '*' | 'o' => 0.5,
        '.' | ',' | '[' | ']' | '(' | ')' | 'i' | 'l' | '/' => 0.278,
        ' ' => 0.334,
        't' | 'r' | 's' => 0.395,
        'c' | 'e' => 0.445,
        '=' | '+' => 0.778,
        'W' => 1.028,
        'M' => 0.917,
        'D' => 0.764,
        'A'..='Z' => 0.75,
        _ => 0.556,
    };
    match (font, c) {
        (Font::Bold, _) => normal * 1.15,
        (Font::Small, '0'..='9') => 0.570,
        (Font::Small, '.' | ',' | '[' | ']') => 0.324,
        (Font::Small, ' ') => 0.385,
        (Font::Small, _) => normal * 1.14,
        (Font::Normal | Font::Math, _) => normal,
    }
}

/// The small lines a cell's figure carries with intervals: its 95 % Wilson
/// interval (accuracy only), then its denominator.
fn detail_lines(stats: &Stats) -> Vec<String> {
    let interval = stats.interval.map(|(low, high)| format!("[{low:.1}, {high:.1}]"));
    interval.into_iter().chain(std::iter::once(format!("n={}", stats.n))).collect()
}

/// A row's cells: the figure, in bold when it is the row's unique best,
/// its mark, and with intervals the interval and denominator in small type
/// on lines of their own, so a column stays as narrow as its figure.
fn row_cells(t: &Table, index: usize) -> Vec<String> {
    let stats = &t.stats[index];
    let best = unique_best(t, stats);
    t.rows[index]
        .1
        .iter()
        .zip(stats)
        .enumerate()
        .map(|(column, (text, stats))| {
            let (Some(stats), Some(value)) = (stats, stats.and_then(|s| s.value)) else {
                return latex_escape(text);
            };
            if text.is_empty() || text == IMPOSSIBLE {
                return latex_escape(text);
            }
            let mut figure = figure(t.metric, value);
            if best == Some(column) {
                figure = format!("\\textbf{{{figure}}}");
            }
            if text.contains(NO_TOUR_MARK) {
                figure.push_str("$^{*}$");
            }
            if stats.capped {
                figure.push_str("$^{\\ddagger}$");
            }
            if !t.intervals {
                return figure;
            }
            let lines: Vec<String> =
                detail_lines(stats).iter().map(|l| format!("{{\\scriptsize {}}}", latex_escape(l))).collect();
            format!("\\begin{{tabular}}[t]{{@{{}}r@{{}}}}{figure}\\\\{}\\end{{tabular}}", lines.join("\\\\"))
        })
        .collect()
}

/// The column of a row's best figure (the most accurate, or the fastest)
/// when one method alone has it as printed; None for a tie (all 0.0
/// included) or a row of one figure, and in tables whose columns are not
/// methods.
fn unique_best(t: &Table, stats: &[Option<Stats>]) -> Option<usize> {
    if t.layout != TableLayout::ByMethods {
        return None;
    }
    // Compared as printed: two cells that read the same tie.
    let printed: Vec<(usize, f64)> = stats
        .iter()
        .enumerate()
        .filter_map(|(c, s)| s.and_then(|s| s.value).map(|v| (c, figure(t.metric, v).parse::<f64>().unwrap_or(v))))
        .collect();
    if printed.len() < 2 {
        return None;
    }
    let better = |a: f64, b: f64| if t.metric == Metric::MeanMicros { a < b } else { a > b };
    let (best_column, best) = printed.iter().copied().reduce(|a, b| if better(b.1, a.1) { b } else { a })?;
    (printed.iter().filter(|(_, v)| *v == best).count() == 1).then_some(best_column)
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

/// The moves as a leaper `(3,2)`, a grid's label, or an explicit list
/// (which may break after any move, so a long one fits the caption).
fn moves(label: &str) -> String {
    match MovesKind::of(label) {
        MovesKind::Rule(_) => format!("the $({label})$ leaper"),
        MovesKind::Named => format!("the moves {}", latex_escape(label)),
        MovesKind::List(_) => format!("moves \\texttt{{{}}}", latex_escape(label).replace(' ', " \\allowbreak{}")),
    }
}

/// The caption: what the table shows, then each legend it needs.
fn caption(t: &Table) -> String {
    let metric = match t.metric {
        Metric::Accuracy => "Accuracy (\\%, tours per start)",
        Metric::AccuracyPossible => "Accuracy among starts from which a tour exists (\\%)",
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
            if t.columns.len() > 1 { "; a row's best method in bold where it alone is best" } else { "" }
        ),
    };
    let cells = || t.rows.iter().flat_map(|(_, cells)| cells.iter());
    if cells().any(|c| c == IMPOSSIBLE) {
        text.push_str(" n/a: no tour can exist on the board, nothing was run.");
    }
    if let Some(d) = &t.denominator {
        text.push(' ');
        text.push_str(&latex_escape(d));
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
        Metric::AccuracyPossible => "accuracy-exists",
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
            '\u{2021}' => out.push_str("$^{\\ddagger}$"),
            _ => out.push(ch),
        }
    }
    out
}
