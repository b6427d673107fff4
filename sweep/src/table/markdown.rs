//! Markdown: a `###` title and a pipe table per table.

use super::layout::Table;
use super::NO_TOUR_LEGEND;

/// The tables as GitHub-flavoured Markdown, numbers right-aligned; every
/// title and cell through [`text`] (a title names a grid's label, which
/// its author chose).
pub(super) fn markdown(tables: &[Table]) -> String {
    let row = |cells: Vec<&str>| {
        let escaped: Vec<String> = cells.iter().map(|c| text(c)).collect();
        format!("| {} |\n", escaped.join(" | "))
    };
    let blocks: Vec<String> = tables
        .iter()
        .map(|t| {
            let mut out = format!("### {}\n\n", text(&t.title));
            out.push_str(&row(t.header()));
            out.push_str(&format!("|{}\n", "---:|".repeat(t.columns.len() + 1)));
            for line in t.body() {
                out.push_str(&row(line));
            }
            if let Some(d) = &t.denominator {
                out.push_str(&format!("\n{}\n", text(d)));
            }
            if t.marked {
                // Our own words, its command as code: only the mark escaped.
                out.push_str(&format!("\n{}\n", NO_TOUR_LEGEND.replacen('*', "\\*", 1)));
            }
            out
        })
        .collect();
    blocks.join("\n")
}

/// Text as Markdown shows it literally, in a heading, a paragraph or a
/// table cell: the one escaping of every name, label and cell this crate
/// writes as Markdown. The characters of emphasis, code, links, tables
/// and closing `#`s go behind a backslash, then HTML's specials become
/// entities, so renderers that pass HTML through get no tag.
pub fn text(text: &str) -> String {
    let mut marked = String::with_capacity(text.len());
    for ch in text.chars() {
        if matches!(ch, '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#') {
            marked.push('\\');
        }
        marked.push(ch);
    }
    super::html::escape(&marked)
}

#[cfg(test)]
mod tests {
    use super::text;

    #[test]
    fn free_text_has_no_markup_left() {
        assert_eq!(text("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
        assert_eq!(text("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
        assert_eq!(
            text("[x](javascript:alert(1)) *b* _i_ `c` a|b ~~s~~ #"),
            "\\[x\\](javascript:alert(1)) \\*b\\* \\_i\\_ \\`c\\` a\\|b \\~\\~s\\~\\~ \\#"
        );
        assert_eq!(text("a \\ b & c"), "a \\\\ b &amp; c");
        assert_eq!(text("report-3-2 (N = 5..60)"), "report-3-2 (N = 5..60)", "plain names stay readable");
        assert_eq!(text("\"it's\""), "&quot;it&#39;s&quot;");
    }
}
