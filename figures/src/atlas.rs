//! The picture of one leaper's atlas (`ksweep atlas`): each m x n board a
//! square coloured by what is decided (open and closed tours, open only,
//! none, unknown), m down and n across, drawn on both sides of the
//! diagonal since m x n and n x m are one board. A 3D leaper draws one
//! such grid per shortest side l. Hand-written SVG, like the tour
//! pictures.

use std::fmt::Write;

use crate::FigureError;

const CELL: u32 = 22;
const GAP: u32 = 18;
const AXIS: u32 = 26;

/// What is decided about one board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtlasClass {
    /// Open and closed tours exist.
    OpenAndClosed,
    /// An open tour exists, no closed one.
    OpenOnly,
    /// An open tour exists; closed ones are undecided.
    OpenClosedUnknown,
    /// No tour of either kind.
    None,
    /// Open tours are undecided.
    Unknown,
}

impl AtlasClass {
    const ALL: [AtlasClass; 5] = [
        AtlasClass::OpenAndClosed,
        AtlasClass::OpenOnly,
        AtlasClass::OpenClosedUnknown,
        AtlasClass::None,
        AtlasClass::Unknown,
    ];

    fn colour(self) -> &'static str {
        match self {
            AtlasClass::OpenAndClosed => "#1a7f37",
            AtlasClass::OpenOnly => "#8fd19e",
            AtlasClass::OpenClosedUnknown => "#d4e157",
            AtlasClass::None => "#e6e6e6",
            AtlasClass::Unknown => "#f0883e",
        }
    }

    fn label(self) -> &'static str {
        match self {
            AtlasClass::OpenAndClosed => "open and closed tours",
            AtlasClass::OpenOnly => "open tours only",
            AtlasClass::OpenClosedUnknown => "open tours; closed unknown",
            AtlasClass::None => "no tour",
            AtlasClass::Unknown => "unknown",
        }
    }
}

/// One board of the picture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtlasCell {
    /// Sides ascending (2 or 3).
    pub sides: Vec<u32>,
    /// What is decided.
    pub class: AtlasClass,
}

/// One leaper's atlas to draw.
#[derive(Debug, Clone)]
pub struct AtlasPicture {
    /// The title line.
    pub title: String,
    /// 2 or 3.
    pub dims: usize,
    /// Its boards.
    pub cells: Vec<AtlasCell>,
}

impl AtlasPicture {
    /// The picture as an SVG document.
    pub fn svg(&self) -> Result<String, FigureError> {
        if !matches!(self.dims, 2 | 3) || self.cells.iter().any(|c| c.sides.len() != self.dims) {
            return Err(FigureError::Unsupported(format!(
                "an atlas picture draws 2D and 3D boards, not {}D",
                self.dims
            )));
        }
        let longest = self.cells.iter().flat_map(|c| c.sides.iter().copied()).max().unwrap_or(1);
        // 2D: one grid; 3D: one per shortest side.
        let panels: Vec<u32> = if self.dims == 2 { vec![0] } else { (1..=longest).collect() };
        let grid = AXIS + longest * CELL;
        let across = if self.dims == 2 { 1 } else { 4 };
        let down = (panels.len() as u32).div_ceil(across);
        let label = if self.dims == 3 { 20 } else { 0 };
        // Room for the title at about 11 pixels a character.
        let width = (GAP + across * (grid + GAP)).max(2 * GAP + 11 * self.title.chars().count() as u32);
        let mut body = String::new();
        let header = self.legend(&mut body, width);
        let height = header + down * (grid + label + GAP) + GAP;
        let mut svg = String::new();
        crate::svg::head(&mut svg, width, height, &self.title, GAP);
        svg.push_str(&body);
        for (i, &l) in panels.iter().enumerate() {
            let (x, y) =
                (GAP + (i as u32 % across) * (grid + GAP), header + (i as u32 / across) * (grid + label + GAP));
            let _ = writeln!(svg, r#"<g transform="translate({x},{y})">"#);
            if self.dims == 3 {
                let _ = writeln!(svg, r#"<text x="0" y="14" font-size="13">shortest side {l}</text>"#);
            }
            let _ = writeln!(svg, r#"<g transform="translate(0,{label})">"#);
            self.panel(&mut svg, l, longest);
            svg.push_str("</g>\n</g>\n");
        }
        svg.push_str("</svg>\n");
        Ok(svg)
    }

    /// The colour key and the axes' meaning under the title, wrapped to
    /// `width`; returns where the panels may begin.
    fn legend(&self, svg: &mut String, width: u32) -> u32 {
        let (mut x, mut y) = (GAP, 38);
        for class in AtlasClass::ALL {
            let count = self.cells.iter().filter(|c| c.class == class).count();
            let text = format!("{} ({count})", class.label());
            let wide = 28 + 8 * text.len() as u32;
            if x > GAP && x + wide > width {
                (x, y) = (GAP, y + 20);
            }
            let _ = writeln!(
                svg,
                r##"<rect x="{x}" y="{y}" width="14" height="14" fill="{}" stroke="#999"/>"##,
                class.colour()
            );
            let _ = writeln!(svg, r#"<text x="{}" y="{}" font-size="13">{text}</text>"#, x + 20, y + 12);
            x += wide;
        }
        let axes = if self.dims == 2 { "m down, n across" } else { "the other two sides down and across" };
        let _ = writeln!(
            svg,
            r#"<text x="{GAP}" y="{}" font-size="13">{axes}; each board drawn on both sides of the diagonal</text>"#,
            y + 34
        );
        y + 50
    }

    /// One grid: the boards with shortest side `l` (3D) or all (2D, `l` 0).
    fn panel(&self, svg: &mut String, l: u32, longest: u32) {
        let font = r##"font-size="10" fill="#555" text-anchor="middle""##;
        for k in 1..=longest {
            let at = AXIS + (k - 1) * CELL + CELL / 2;
            let _ = writeln!(svg, r#"<text x="{at}" y="{}" {font}>{k}</text>"#, AXIS - 8);
            let _ = writeln!(svg, r#"<text x="{}" y="{}" {font}>{k}</text>"#, AXIS / 2, at + 4);
        }
        for c in &self.cells {
            let (m, n) = match c.sides[..] {
                [m, n] => (m, n),
                [s, m, n] if s == l => (m, n),
                _ => continue,
            };
            let colour = c.class.colour();
            let (x, y) = (AXIS + (n - 1) * CELL, AXIS + (m - 1) * CELL);
            let _ = writeln!(
                svg,
                r##"<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{colour}" stroke="white"><title>{}{m}x{n}: {}</title></rect>"##,
                if self.dims == 3 { format!("{l}x") } else { String::new() },
                c.class.label()
            );
            // The mirror image, without a second tooltip.
            if m != n {
                let (x, y) = (AXIS + (m - 1) * CELL, AXIS + (n - 1) * CELL);
                let _ = writeln!(
                    svg,
                    r##"<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{colour}" stroke="white"/>"##
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_every_board_twice_and_refuses_4d() {
        let cells = vec![
            AtlasCell { sides: vec![1, 1], class: AtlasClass::OpenAndClosed },
            AtlasCell { sides: vec![2, 3], class: AtlasClass::None },
            AtlasCell { sides: vec![3, 3], class: AtlasClass::Unknown },
        ];
        let svg = AtlasPicture { title: "t".into(), dims: 2, cells: cells.clone() }.svg().unwrap();
        // After the 5 keys: 1x1 and 3x3 once (on the diagonal), 2x3 twice.
        assert_eq!(svg.matches("<rect x=").count() - 5, 4);
        assert_eq!(svg.matches("<title>").count(), 1 + 3, "the picture's and one a board");
        assert!(svg.contains("no tour (1)"));
        let four = AtlasPicture { title: "t".into(), dims: 4, cells }.svg();
        assert!(four.is_err());
    }
}
