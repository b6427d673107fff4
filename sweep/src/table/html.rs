//! HTML: a `<table>` per table, its title as the caption and its legend
//! under it; classes (`ksweep-table`, `legend`, `warning`) for a page's
//! stylesheet to use.

use super::layout::Table;
use super::NO_TOUR_LEGEND;

/// The tables as HTML fragments, numbers right-aligned by class `num`.
pub(super) fn html(tables: &[Table], warning: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(w) = warning {
        out.push_str(&format!("<p class=\"warning\">{}</p>\n", escape(w)));
    }
    for t in tables {
        out.push_str(&format!("<table class=\"ksweep-table\">\n<caption>{}</caption>\n<thead><tr>", escape(&t.title)));
        for h in t.header() {
            out.push_str(&format!("<th>{}</th>", escape(h)));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for line in t.body() {
            let mut cells = line.into_iter();
            let label = cells.next().unwrap_or_default();
            out.push_str(&format!("<tr><th>{}</th>", escape(label)));
            for c in cells {
                out.push_str(&format!("<td class=\"num\">{}</td>", escape(c)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        if let Some(d) = &t.denominator {
            out.push_str(&format!("<p class=\"legend\">{}</p>\n", escape(d)));
        }
        if t.marked {
            out.push_str(&format!("<p class=\"legend\">{}</p>\n", escape(NO_TOUR_LEGEND)));
        }
    }
    out
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}
