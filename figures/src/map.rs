//! Failure maps: a 2D board with each start square coloured by which
//! methods failed from it; a 3D board as its slices along the first axis.
//! Axes follow `ksweep tour`'s pictures: the last axis runs left to right,
//! the one before it top to bottom.

use std::collections::{HashMap, HashSet};

use plotters::coord::Shift;
use plotters::prelude::*;
use tour::Method;

use crate::error::draw_error;
use crate::palette::nth;
use crate::FigureError;

/// One task's result: where it started, which method, whether it found a tour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartResult {
    pub start: Vec<u32>,
    pub method: String,
    pub success: bool,
    /// Proven: no tour exists from this start (the colour rule, a search,
    /// a theorem), so its failure is the board's, not the method's.
    pub no_tour: bool,
}

/// Colours of a map's classes; a failure class's colour comes from its
/// method set ([`set_colour`]), the same on every map.
const NONE_FAILED: RGBColor = RGBColor(199, 233, 192);
const NOT_A_START: RGBColor = RGBColor(238, 238, 238);
/// Starts from which no tour exists (proven): the board's doing.
const NO_TOUR: RGBColor = RGBColor(90, 90, 90);
const OTHER: RGBColor = RGBColor(0, 0, 0);
/// The class of a start proven to have no tour, whatever failed there.
const NO_TOUR_CLASS: u32 = u32::MAX;
/// Most methods a map tells apart: one bit each, below [`NO_TOUR_CLASS`].
const MAX_METHODS: usize = 31;
/// Room left of and above a board for its coordinates.
const AXIS: u32 = 22;
/// Failure classes with a colour of their own; the rarer ones share OTHER.
const CLASSES: usize = 10;
/// Most starts a map draws.
pub const MAX_STARTS: usize = 1 << 20;

const HEADER: u32 = 44;
const WARNING_BAND: u32 = 26;
const LEGEND_WIDTH: u32 = 330;
/// Narrowest map: its title must fit.
const MIN_WIDTH: u32 = 900;
const SLICE_LABEL: u32 = 22;
const GAP: u32 = 14;

/// A board's starts and, for each, the set of methods that failed from it.
#[derive(Clone, Debug)]
pub struct FailureMap {
    title: String,
    warning: Option<String>,
    /// The board's sides (2 or 3 of them).
    shape: Vec<u32>,
    /// The methods, in legend order (report names).
    methods: Vec<String>,
    /// Each start's failed-methods bit set, by cell index (row-major).
    starts: HashMap<u64, u32>,
    /// The starts proven to have no tour.
    no_tour: HashSet<u64>,
}

impl FailureMap {
    /// The map of `results` on a board of `shape`. Fails on boards that are
    /// not 2D or 3D, on more than 32 methods, and on a start off the board.
    pub fn new(
        title: String,
        warning: Option<String>,
        shape: &[u32],
        results: impl IntoIterator<Item = StartResult>,
    ) -> Result<FailureMap, FigureError> {
        if !(2..=3).contains(&shape.len()) {
            return Err(FigureError::Unsupported(format!(
                "a failure map draws 2D and 3D boards; this board is {}D",
                shape.len()
            )));
        }
        let mut methods: Vec<String> = Vec::new();
        let mut starts: HashMap<u64, u32> = HashMap::new();
        let mut no_tour = HashSet::new();
        for r in results {
            if r.start.len() != shape.len() || r.start.iter().zip(shape).any(|(c, s)| c >= s) {
                return Err(FigureError::Unsupported(format!("start {:?} is off the board {shape:?}", r.start)));
            }
            let name = r.method.parse::<Method>().map_or(r.method.clone(), |m| m.report_name().to_string());
            let bit = match methods.iter().position(|m| *m == name) {
                Some(i) => i,
                None if methods.len() < MAX_METHODS => {
                    methods.push(name);
                    methods.len() - 1
                }
                None => {
                    return Err(FigureError::Unsupported(format!(
                        "a failure map tells at most {MAX_METHODS} methods apart"
                    )))
                }
            };
            let cell = r.start.iter().zip(shape).fold(0u64, |acc, (&c, &s)| acc * u64::from(s) + u64::from(c));
            let failed = starts.entry(cell).or_insert(0);
            if !r.success {
                *failed |= 1 << bit;
            }
            if r.no_tour {
                no_tour.insert(cell);
            }
            if starts.len() > MAX_STARTS {
                return Err(FigureError::Unsupported(format!("a failure map draws at most {MAX_STARTS} starts")));
            }
        }
        if starts.is_empty() {
            return Err(FigureError::Empty("no task results on this board yet".into()));
        }
        Ok(FailureMap { title, warning, shape: shape.to_vec(), methods, starts, no_tour })
    }

    /// Starts on the map.
    pub fn start_count(&self) -> usize {
        self.starts.len()
    }

    /// A start's class: the bit set of the methods that failed from it,
    /// or [`NO_TOUR_CLASS`] where no tour exists from it.
    fn class_of(&self, cell: u64, failed: u32) -> u32 {
        if self.no_tour.contains(&cell) {
            NO_TOUR_CLASS
        } else {
            failed
        }
    }

    /// The classes on the map, most starts first: (failed bit set, starts);
    /// starts proven to have no tour last, in a class of their own.
    pub fn classes(&self) -> Vec<(u32, usize)> {
        let mut counts: HashMap<u32, usize> = HashMap::new();
        for (&cell, &failed) in &self.starts {
            *counts.entry(self.class_of(cell, failed)).or_default() += 1;
        }
        let mut classes: Vec<(u32, usize)> = counts.into_iter().collect();
        // No failure first, then by starts, then by bits: a stable order.
        classes.sort_by_key(|&(bits, n)| (bits == NO_TOUR_CLASS, bits != 0, std::cmp::Reverse(n), bits));
        classes
    }

    /// A class's legend text.
    pub fn class_label(&self, bits: u32) -> String {
        if bits == 0 {
            return "no method failed".into();
        }
        if bits == NO_TOUR_CLASS {
            return "no tour from here (proven impossible)".into();
        }
        let names: Vec<&str> =
            self.methods.iter().enumerate().filter(|(i, _)| bits >> i & 1 == 1).map(|(_, m)| m.as_str()).collect();
        if names.len() == self.methods.len() && names.len() > 1 {
            "every method failed".into()
        } else {
            format!("failed: {}", names.join(", "))
        }
    }

    /// (slices, rows, columns) of the board as drawn.
    fn grid(&self) -> (u32, u32, u32) {
        match self.shape[..] {
            [r, c] => (1, r, c),
            [s, r, c] => (s, r, c),
            _ => unreachable!("checked in new"),
        }
    }

    /// (slice columns, cell size in pixels).
    fn layout(&self) -> (u32, u32) {
        let (slices, rows, cols) = self.grid();
        let across = (f64::from(slices).sqrt().ceil() as u32).max(1);
        let cell = (760 / (across * rows.max(cols))).clamp(1, 28);
        (across, cell)
    }

    fn header(&self) -> u32 {
        HEADER + if self.warning.is_some() { WARNING_BAND } else { 0 }
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        let (slices, rows, cols) = self.grid();
        let (across, cell) = self.layout();
        let down = slices.div_ceil(across);
        let slice = (cols * cell + AXIS + GAP, rows * cell + SLICE_LABEL + AXIS + GAP);
        let legend_rows = (self.classes().len().min(CLASSES + 1) + 2) as u32;
        let height = (down * slice.1).max(legend_rows * 24 + 20);
        ((across * slice.0 + GAP + LEGEND_WIDTH).max(MIN_WIDTH), self.header() + height)
    }

    pub(crate) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), FigureError> {
        let title_font = ("sans-serif", 22).into_font().style(FontStyle::Bold);
        root.draw(&Text::new(self.title.clone(), (12, 10), title_font)).map_err(draw_error)?;
        if let Some(warning) = &self.warning {
            root.draw(&Text::new(warning.clone(), (12, HEADER as i32), ("sans-serif", 16).into_font().color(&RED)))
                .map_err(draw_error)?;
        }
        let classes = self.classes();
        let mut colours: HashMap<u32, RGBColor> = HashMap::new();
        let mut failure_rank = 0;
        for &(bits, _) in &classes {
            let c = match bits {
                0 => NONE_FAILED,
                NO_TOUR_CLASS => NO_TOUR,
                _ if failure_rank < CLASSES => self.set_colour(bits),
                _ => OTHER,
            };
            failure_rank += usize::from(bits != 0 && bits != NO_TOUR_CLASS);
            colours.insert(bits, c);
        }
        let (slices, rows, cols) = self.grid();
        let (across, cell) = self.layout();
        let (slice_w, slice_h) = (cols * cell + AXIS + GAP, rows * cell + SLICE_LABEL + AXIS + GAP);
        let origin = |s: u32| (GAP + (s % across) * slice_w, self.header() + (s / across) * slice_h);
        let label_font = ("sans-serif", 14).into_font();
        for s in 0..slices {
            let (x, y) = origin(s);
            if slices > 1 {
                root.draw(&Text::new(format!("slice {s}"), (x as i32, y as i32), label_font.clone()))
                    .map_err(draw_error)?;
            }
            let (left, top) = ((x + AXIS) as i32, (y + SLICE_LABEL + AXIS) as i32);
            let board = [(left, top), (left + (cols * cell) as i32, top + (rows * cell) as i32)];
            root.draw(&Rectangle::new(board, NOT_A_START.filled())).map_err(draw_error)?;
            root.draw(&Rectangle::new(board, BLACK.mix(0.5))).map_err(draw_error)?;
            self.draw_coordinates(root, (left, top), (rows, cols), cell)?;
        }
        // A start is at least 4 pixels wide, so 20 starts on a big board show.
        let mark = cell.max(4) as i32;
        let plane = u64::from(rows) * u64::from(cols);
        let mut cells: Vec<(&u64, &u32)> = self.starts.iter().collect();
        cells.sort_unstable();
        for (&index, bits) in cells {
            let (s, rest) = ((index / plane) as u32, index % plane);
            let (r, c) = ((rest / u64::from(cols)) as u32, (rest % u64::from(cols)) as u32);
            let (x, y) = origin(s);
            let centre = (
                (x + AXIS + c * cell) as i32 + cell as i32 / 2,
                (y + SLICE_LABEL + AXIS + r * cell) as i32 + cell as i32 / 2,
            );
            let corner = (centre.0 - mark / 2, centre.1 - mark / 2);
            let square = [corner, (corner.0 + mark, corner.1 + mark)];
            let class = self.class_of(index, *bits);
            root.draw(&Rectangle::new(square, colours[&class].filled())).map_err(draw_error)?;
        }
        self.draw_legend(root, &classes, &colours, across * slice_w + GAP)
    }

    /// A failure class's colour, from its method set alone, so one set has
    /// one colour on every map: a single method's is that method's colour
    /// in the charts; a set of several gets a hue of its own from the
    /// methods' places in [`Method::ALL`].
    fn set_colour(&self, bits: u32) -> RGBColor {
        let names: Vec<&str> =
            self.methods.iter().enumerate().filter(|(i, _)| bits >> i & 1 == 1).map(|(_, m)| m.as_str()).collect();
        let slot = |name: &str| Method::ALL.iter().position(|m| m.report_name() == name);
        if let [one] = names[..] {
            return slot(one).map_or(nth(0), nth);
        }
        let key: u64 = names.iter().map(|n| slot(n).map_or(1 << 40, |s| 1u64 << s)).sum();
        // The golden ratio spreads the hues of nearby keys apart.
        let hue = (key as f64 * 0.618_033_988_75).fract();
        let (r, g, b) = hsl(hue, 0.65, 0.45);
        RGBColor(r, g, b)
    }

    /// Row numbers left of a board and column numbers above it, 0-based as
    /// in `ksweep tour` and the exports; every k-th where cells are small.
    fn draw_coordinates<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        (left, top): (i32, i32),
        (rows, cols): (u32, u32),
        cell: u32,
    ) -> Result<(), FigureError> {
        let font = ("sans-serif", 11).into_font().color(&BLACK.mix(0.7));
        let step = 22_u32.div_ceil(cell).max(1);
        let half = cell as i32 / 2;
        for c in (0..cols).step_by(step as usize) {
            let x = left + (c * cell) as i32 + half - 3 * c.to_string().len() as i32;
            root.draw(&Text::new(c.to_string(), (x, top - 15), font.clone())).map_err(draw_error)?;
        }
        for r in (0..rows).step_by(step as usize) {
            let x = left - 4 - 6 * r.to_string().len() as i32;
            root.draw(&Text::new(r.to_string(), (x, top + (r * cell) as i32 + half - 6), font.clone()))
                .map_err(draw_error)?;
        }
        Ok(())
    }

    fn draw_legend<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        classes: &[(u32, usize)],
        colours: &HashMap<u32, RGBColor>,
        left: u32,
    ) -> Result<(), FigureError> {
        let font = ("sans-serif", 14).into_font();
        let mut entries: Vec<(RGBColor, String)> = Vec::new();
        let mut other = 0;
        for &(bits, n) in classes {
            if colours[&bits] == OTHER {
                other += n;
            } else {
                entries.push((colours[&bits], format!("{} ({n})", self.class_label(bits))));
            }
        }
        if other > 0 {
            entries.push((OTHER, format!("other failures ({other})")));
        }
        entries.push((NOT_A_START, "not a start".into()));
        let top = self.header() as i32;
        let left = left as i32;
        root.draw(&Text::new(
            format!("{} starts", self.starts.len()),
            (left, top),
            font.clone().style(FontStyle::Bold),
        ))
        .map_err(draw_error)?;
        for (i, (c, text)) in entries.into_iter().enumerate() {
            let y = top + 26 + 24 * i as i32;
            root.draw(&Rectangle::new([(left, y), (left + 16, y + 16)], c.filled())).map_err(draw_error)?;
            root.draw(&Rectangle::new([(left, y), (left + 16, y + 16)], BLACK.mix(0.5))).map_err(draw_error)?;
            root.draw(&Text::new(text, (left + 24, y + 1), font.clone())).map_err(draw_error)?;
        }
        Ok(())
    }
}

/// RGB of a colour given as hue, saturation and lightness, each in 0..1.
fn hsl(h: f64, s: f64, l: f64) -> (u8, u8, u8) {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let h6 = h * 6.0;
    let x = c * (1.0 - (h6 % 2.0 - 1.0).abs());
    let (r, g, b) = match h6 as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    (byte(r), byte(g), byte(b))
}
