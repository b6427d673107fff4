//! The head every hand-drawn SVG shares: one place for the fonts, the white
//! ground and the title, so the atlas and tour pictures look alike.

use std::fmt::Write;

use sweep::html_escape;

/// Opens an SVG of `width` x `height` with a white ground and `title` drawn
/// bold at `left`, 26 pixels down; the caller closes it with `</svg>`.
pub(crate) fn head(svg: &mut String, width: u32, height: u32, title: &str, left: u32) {
    let title = html_escape(title);
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Verdana, sans-serif">"#
    );
    let _ = writeln!(svg, "<title>{title}</title>");
    let _ = writeln!(svg, r#"<rect width="{width}" height="{height}" fill="white"/>"#);
    let _ = writeln!(svg, r#"<text x="{left}" y="26" font-size="18" font-weight="bold">{title}</text>"#);
}
