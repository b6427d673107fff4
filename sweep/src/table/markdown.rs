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

/// Free text (a sweep's name) as Markdown shows it literally, in a heading,
/// a paragraph or a table cell: the characters of emphasis, code, links,
/// tables and closing `#`s behind a backslash, then HTML's specials as
/// entities, so renderers that pass HTML through get no tag. Table cells,
/// which this crate writes itself, need only `markdown_escape`.
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
