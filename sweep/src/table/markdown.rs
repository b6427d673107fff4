//! Markdown: a `###` title and a pipe table per table.

use super::layout::Table;
use super::NO_TOUR_LEGEND;

/// The tables as GitHub-flavoured Markdown, numbers right-aligned.
pub(super) fn markdown(tables: &[Table]) -> String {
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
