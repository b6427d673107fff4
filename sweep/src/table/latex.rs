//! LaTeX: one `tabular` per table, its title as a comment.

use super::layout::Table;
use super::NO_TOUR_LEGEND;

/// The tables as `tabular` environments, numbers right-aligned.
pub(super) fn latex(tables: &[Table]) -> String {
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
