//! The picture of one walk (`ksweep tour --format svg`): the checkered
//! board under a title line, the start (green) and end (red); cells the
//! walk never reached shaded red; on small boards every cell numbered by its
//! step, on large ones the path coloured from the first step to the last.
//! A 3D board draws as its slices along the first axis, each cell coloured
//! (and on small boards numbered) by its step: a move between slices has
//! no line to draw. Hand-written SVG: exact coordinates, nothing to measure.

use std::fmt::Write;

use sweep::html_escape;

use crate::FigureError;

/// Largest picture side the cells are scaled to, in pixels.
const SIDE: u32 = 1200;
const HEADER: u32 = 58;
const SLICE_LABEL: u32 = 20;
const GAP: u32 = 16;
/// Cells at least this wide carry their step number.
const NUMBERED_CELL: u32 = 18;
/// Path colour segments on a large board.
const SEGMENTS: usize = 256;
const LIGHT: &str = "#f0d9b5";
const DARK: &str = "#b58863";
const PATH: &str = "#1f4e9c";
const UNREACHED: &str = "#d9534f";

/// One walk to draw.
#[derive(Clone, Debug)]
pub struct TourPicture {
    /// The title line: rule, board, method, start, outcome.
    pub title: String,
    /// The board's sides (2 or 3).
    pub sides: Vec<u32>,
    /// The cells in walk order (row-major indices, the last axis fastest).
    pub path: Vec<u64>,
    /// The walk is a closed tour: its closing step is drawn dashed.
    pub closed: bool,
}

impl TourPicture {
    /// The picture as an SVG document.
    pub fn svg(&self) -> Result<String, FigureError> {
        let (slices, rows, cols) = match self.sides[..] {
            [r, c] => (1, r, c),
            [s, r, c] => (s, r, c),
            _ => {
                return Err(FigureError::Unsupported(format!(
                    "a tour picture draws 2D and 3D boards; this board is {}D",
                    self.sides.len()
                )))
            }
        };
        let cells = u64::from(slices) * u64::from(rows) * u64::from(cols);
        if let Some(&off) = self.path.iter().find(|&&c| c >= cells) {
            return Err(FigureError::Unsupported(format!("cell {off} is off the board {:?}", self.sides)));
        }
        let across = (f64::from(slices).sqrt().ceil() as u32).max(1);
        let cell = (SIDE / (across * rows.max(cols))).clamp(2, 40);
        let label = if slices > 1 { SLICE_LABEL } else { 0 };
        let (slice_w, slice_h) = (cols * cell + GAP, rows * cell + label + GAP);
        let down = slices.div_ceil(across);
        let width = (across * slice_w + GAP).max(640);
        let height = HEADER + down * slice_h + if self.numbered(cell) { 0 } else { 36 };

        let mut step = vec![0u64; cells as usize];
        for (i, &c) in self.path.iter().enumerate() {
            step[c as usize] = i as u64 + 1;
        }
        let steps = self.path.len().max(1) as f64;
        let mut svg = String::new();
        crate::svg::head(&mut svg, width, height, &self.title, GAP);
        let _ = writeln!(svg, r#"<text x="{GAP}" y="46" font-size="13">{}</text>"#, html_escape(&self.legend(cells)));
        for s in 0..slices {
            let (x, y) = (GAP + (s % across) * slice_w, HEADER + (s / across) * slice_h);
            let _ = writeln!(svg, r#"<g transform="translate({x},{y})">"#);
            if slices > 1 {
                let _ = writeln!(svg, r#"<text x="0" y="14" font-size="13">slice {s}</text>"#);
            }
            let _ = writeln!(svg, r#"<g transform="translate(0,{label})">"#);
            let first = u64::from(s) * u64::from(rows) * u64::from(cols);
            let plane = &step[first as usize..(first + u64::from(rows) * u64::from(cols)) as usize];
            let plane_grid =
                Plane { rows, cols, cell, by_step: slices > 1, unreached: (self.path.len() as u64) < cells };
            self.board(&mut svg, plane, &plane_grid, steps);
            if slices == 1 {
                self.path_lines(&mut svg, cols, cell, steps);
            }
            self.ends(&mut svg, first, plane.len() as u64, cols, cell);
            svg.push_str("</g>\n</g>\n");
        }
        if !self.numbered(cell) {
            colour_bar(&mut svg, GAP, height - 28, self.path.len());
        }
        svg.push_str("</svg>\n");
        Ok(svg)
    }

    fn numbered(&self, cell: u32) -> bool {
        cell >= NUMBERED_CELL
    }

    /// The line under the title: what the marks mean.
    fn legend(&self, cells: u64) -> String {
        let visited = self.path.len() as u64;
        let mut text = format!("{visited} of {cells} cells visited; start green, end red");
        if visited < cells {
            let missed = cells - visited;
            let noun = if missed == 1 { "cell" } else { "cells" };
            text.push_str(&format!("; {missed} {noun} never reached (shaded red)"));
        }
        if self.closed {
            text.push_str("; the closing step dashed");
        }
        text
    }

    /// The checkered squares of one plane, the unreached ones hatched, and
    /// (3D) each visited cell coloured by its step; numbers where they fit.
    fn board(&self, svg: &mut String, plane: &[u64], p: &Plane, steps: f64) {
        let (rows, cols, cell, by_step) = (p.rows, p.cols, p.cell, p.by_step);
        let (w, h) = (cols * cell, rows * cell);
        let _ = writeln!(svg, r#"<rect width="{w}" height="{h}" fill="{LIGHT}"/>"#);
        let _ = write!(svg, r#"<path fill="{DARK}" d=""#);
        for r in 0..rows {
            for c in (r % 2..cols).step_by(2) {
                let _ = write!(svg, "M{} {}h{cell}v{cell}h-{cell}z", c * cell, r * cell);
            }
        }
        svg.push_str("\"/>\n");
        let mut unreached = String::new();
        for (i, &s) in plane.iter().enumerate() {
            let (r, c) = (i as u32 / cols, i as u32 % cols);
            if s == 0 && p.unreached {
                let _ = write!(unreached, "M{} {}h{cell}v{cell}h-{cell}z", c * cell, r * cell);
            } else if s > 0 && by_step {
                let _ = writeln!(
                    svg,
                    r#"<rect x="{}" y="{}" width="{cell}" height="{cell}" fill="{}"/>"#,
                    c * cell,
                    r * cell,
                    step_colour((s - 1) as f64 / (steps - 1.0).max(1.0))
                );
            }
        }
        if !unreached.is_empty() {
            let _ = writeln!(svg, r#"<path fill="{UNREACHED}" fill-opacity="0.6" d="{unreached}"/>"#);
        }
        if self.numbered(cell) {
            let size = f64::from(cell) * if steps >= 1000.0 { 0.28 } else { 0.36 };
            for (i, &s) in plane.iter().enumerate().filter(|(_, &s)| s > 0) {
                // White on the scale's dark end, black on its light end.
                let light = (s - 1) as f64 / (steps - 1.0).max(1.0) > 0.6;
                let colour = if by_step && !light { "white" } else { "#111" };
                let (r, c) = (i as u32 / cols, i as u32 % cols);
                let (x, y) =
                    ((f64::from(c) + 0.5) * f64::from(cell), (f64::from(r) + 0.5) * f64::from(cell) + size * 0.35);
                let _ = writeln!(
                    svg,
                    r#"<text x="{x:.1}" y="{y:.1}" font-size="{size:.1}" text-anchor="middle" fill="{colour}">{s}</text>"#
                );
            }
        }
    }

    /// The 2D path through the cell centres: one colour on a numbered
    /// board, coloured by step on a large one.
    fn path_lines(&self, svg: &mut String, cols: u32, cell: u32, steps: f64) {
        let centre = |i: u64| {
            let (r, c) = (i / u64::from(cols), i % u64::from(cols));
            ((c as f64 + 0.5) * f64::from(cell), (r as f64 + 0.5) * f64::from(cell))
        };
        let stroke = (f64::from(cell) / 8.0).max(0.5);
        let points = |cells: &[u64]| -> String {
            cells.iter().map(|&i| centre(i)).map(|(x, y)| format!("{x:.1},{y:.1}")).collect::<Vec<_>>().join(" ")
        };
        if self.path.len() > 1 {
            if self.numbered(cell) {
                let _ = writeln!(
                    svg,
                    r#"<polyline fill="none" stroke="{PATH}" stroke-opacity="0.45" stroke-width="{stroke}" stroke-linejoin="round" points="{}"/>"#,
                    points(&self.path)
                );
            } else {
                // Consecutive chunks share their end cell, so the line is unbroken.
                let chunk = self.path.len().div_ceil(SEGMENTS).max(1);
                let mut at = 0;
                while at + 1 < self.path.len() {
                    let end = (at + chunk).min(self.path.len() - 1);
                    let colour = step_colour(at as f64 / (steps - 1.0).max(1.0));
                    let _ = writeln!(
                        svg,
                        r#"<polyline fill="none" stroke="{colour}" stroke-width="{stroke}" stroke-linejoin="round" points="{}"/>"#,
                        points(&self.path[at..=end])
                    );
                    at = end;
                }
            }
        }
        if self.closed && self.path.len() > 1 {
            let ((x1, y1), (x2, y2)) = (centre(self.path[self.path.len() - 1]), centre(self.path[0]));
            let _ = writeln!(
                svg,
                r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{PATH}" stroke-width="{stroke}" stroke-dasharray="{stroke} {stroke}"/>"#
            );
        }
    }

    /// The start and end marks, when they lie in this plane.
    fn ends(&self, svg: &mut String, first: u64, len: u64, cols: u32, cell: u32) {
        // Rings, so the step number inside stays readable.
        let radius = (f64::from(cell) * 0.4).max(1.5);
        let ring = (f64::from(cell) / 10.0).max(1.0);
        let marks = [(self.path.first(), "#2e8b57"), (self.path.last(), "#c0392b")];
        for (i, colour) in marks.iter().filter_map(|(i, c)| i.map(|&i| (i, *c))) {
            if !(first..first + len).contains(&i) {
                continue;
            }
            let i = i - first;
            let (r, c) = (i / u64::from(cols), i % u64::from(cols));
            let (x, y) = ((c as f64 + 0.5) * f64::from(cell), (r as f64 + 0.5) * f64::from(cell));
            let _ = writeln!(
                svg,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="{radius:.1}" fill="none" stroke="{colour}" stroke-width="{ring:.1}"/>"#
            );
        }
    }
}

/// How one plane is drawn.
struct Plane {
    rows: u32,
    cols: u32,
    /// Pixels a cell.
    cell: u32,
    /// Colour visited cells by step (3D, where the path has no lines).
    by_step: bool,
    /// The walk missed cells: mark those it never reached.
    unreached: bool,
}

/// The step scale under a large board: first step to last.
fn colour_bar(svg: &mut String, x: u32, y: u32, steps: usize) {
    let _ = writeln!(svg, r#"<defs><linearGradient id="steps">"#);
    for (i, stop) in STOPS.iter().enumerate() {
        let offset = 100.0 * i as f64 / (STOPS.len() - 1) as f64;
        let _ = writeln!(svg, r#"<stop offset="{offset:.0}%" stop-color="rgb({},{},{})"/>"#, stop.0, stop.1, stop.2);
    }
    svg.push_str("</linearGradient></defs>\n");
    let _ = writeln!(svg, r#"<text x="{x}" y="{}" font-size="12">step 1</text>"#, y + 12);
    let _ = writeln!(svg, r#"<rect x="{}" y="{y}" width="240" height="14" fill="url(#steps)"/>"#, x + 50);
    let _ = writeln!(svg, r#"<text x="{}" y="{}" font-size="12">step {steps}</text>"#, x + 298, y + 12);
}

/// A perceptually even scale (viridis, by five stops), dark to light.
const STOPS: [(u8, u8, u8); 5] = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)];

/// The colour of a step at `t` in [0, 1] along the walk.
fn step_colour(t: f64) -> String {
    let t = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    format!("#{:02x}{:02x}{:02x}", mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}
