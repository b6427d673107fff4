//! Plain text: aligned columns under a title line per table.

use super::layout::Table;
use super::NO_TOUR_LEGEND;

/// The tables, right-aligned, two spaces between columns, one blank line
/// between tables.
pub(super) fn text(tables: &[Table]) -> String {
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
            if let Some(d) = &t.denominator {
                out.push_str(d);
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
