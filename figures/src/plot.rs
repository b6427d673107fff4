//! Drawing a [`Chart`]: a title band and one legend, then a grid of panels.
//! A chart of few N overlays each panel's series, every point marked; one
//! with many N (where overlaid lines would be a tangle) draws small
//! multiples instead, a panel per series on shared axes, each N a dot
//! under its trend ([`crate::marks`]).

use std::collections::HashMap;
use std::ops::Range;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::chart::list_mark_note;
use crate::error::draw_error;
use crate::marks::{self, linear, PixelRect, HALF_WINDOW, LINE_WIDTH, MARKER, REACH};
use crate::palette::colour;
use crate::trend::residue_modulus;
use crate::{Chart, FigureError, Panel, Quantity, Series};

const PANEL: (u32, u32) = (560, 380);
/// Width of a chart of one panel.
const SINGLE_WIDTH: u32 = 840;
/// A small multiple: one series of one panel.
const MULTIPLE: (u32, u32) = (340, 260);
const TITLE_BAND: u32 = 44;
/// The legend row under the title: one entry per series, shared by every panel.
const LEGEND_BAND: u32 = 28;
/// A chart with a series of more points than this is drawn as small
/// multiples: overlaid, its lines would cross each other at every N.
const DENSE_POINTS: usize = 40;
const WARNING_BAND: u32 = 26;
/// A line under the legend explaining a mark in the panel titles.
const NOTE_BAND: u32 = 22;
/// Pixels a panel keeps around its frame, and for its axes' labels.
const MARGIN: i32 = 12;
const X_LABEL_AREA: u32 = 40;
const Y_LABEL_AREA: u32 = 64;
/// Pixels right of a small multiple's frame for its class labels.
const LABEL_ROOM: i32 = 76;
/// The most pixels between the points of two series at one N, moved apart
/// so that coinciding points all show.
const DODGE: f64 = 6.0;

/// Where a chart drew in its series' colours, in pixels (edges included):
/// each panel's plotting area and the legend's keys. Nothing else of a
/// series' colour may be in the picture.
#[derive(Clone, Debug, Default)]
pub(crate) struct Areas {
    pub plots: Vec<PixelRect>,
    pub keys: Vec<PixelRect>,
}

/// How a chart's panels are laid out.
enum Grid {
    /// Each panel's series drawn together, in this many columns.
    Overlay { columns: u32 },
    /// A row per panel, a column per series key (of the legend's), each
    /// cell one series.
    Multiples { columns: u32 },
}

fn grid(chart: &Chart) -> Grid {
    let dense = chart.panels.iter().flat_map(|p| &p.series).any(|s| s.points.len() > DENSE_POINTS);
    match (dense, chart.panels.len()) {
        (true, _) => Grid::Multiples { columns: keys(chart).len() as u32 },
        (false, 1) => Grid::Overlay { columns: 1 },
        (false, _) => Grid::Overlay { columns: 2 },
    }
}

/// The series keys and labels, in order of first appearance: a series
/// keeps its colour (and in small multiples its column) in every panel.
fn keys(chart: &Chart) -> Vec<(&str, &str)> {
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for series in chart.panels.iter().flat_map(|p| &p.series) {
        if !keys.iter().any(|(k, _)| *k == series.key) {
            keys.push((&series.key, &series.label));
        }
    }
    keys
}

fn header(chart: &Chart) -> u32 {
    TITLE_BAND
        + LEGEND_BAND
        + if chart.warning.is_some() { WARNING_BAND } else { 0 }
        + if note(chart).is_some() { NOTE_BAND } else { 0 }
}

/// The legend's note on the marks of the panel titles, the rings of cells
/// stopped at their cap and the residue classes drawn apart, if any.
fn note(chart: &Chart) -> Option<String> {
    let titles = list_mark_note(chart.panels.iter().map(|p| p.title.as_str()));
    let capped = chart.panels.iter().flat_map(|p| &p.series).flat_map(|s| &s.points).any(|p| p.capped);
    let ring =
        capped.then(|| "a ring marks a cell adaptive precision stopped at its cap, short of the precision".into());
    let classes = moduli(chart).iter().any(Option::is_some).then(|| {
        "where N's residue splits a series' values, each class has its own dots and line, named at the right".into()
    });
    let notes: Vec<String> = [titles, ring, classes].into_iter().flatten().collect();
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// The modulus whose residue classes of N split each series (of every
/// panel, in order), in small multiples; none in an overlay, whose few N
/// show any alternation plainly.
fn moduli(chart: &Chart) -> Vec<Option<u32>> {
    let series = || chart.panels.iter().flat_map(|p| &p.series);
    match grid(chart) {
        Grid::Overlay { .. } => series().map(|_| None).collect(),
        Grid::Multiples { .. } => {
            let bounds = Bounds::of(chart.quantity, series());
            let span = bounds.y.1 - bounds.y.0;
            series().map(|s| residue_modulus(&s.points, |p| linear(chart.quantity, p.y), span)).collect()
        }
    }
}

/// The chart's size in pixels: its header and a grid of panels (one
/// panel alone is drawn wider, so the title fits).
pub(crate) fn size(chart: &Chart) -> (u32, u32) {
    let panels = chart.panels.len() as u32;
    let (width, height) = match grid(chart) {
        Grid::Overlay { columns: 1 } => (SINGLE_WIDTH, PANEL.1 * panels),
        Grid::Overlay { columns } => (PANEL.0 * columns, PANEL.1 * panels.div_ceil(columns)),
        Grid::Multiples { columns } => ((MULTIPLE.0 * columns).max(SINGLE_WIDTH), MULTIPLE.1 * panels),
    };
    (width, header(chart) + height)
}

/// What every panel of a chart shares.
struct Scene<'c> {
    quantity: Quantity,
    colours: HashMap<&'c str, RGBColor>,
    /// Pixels right of a plot's frame for class labels: in every small
    /// multiple alike when any has classes, so the plots stay one size.
    label_room: i32,
}

/// The data's extent: N, and the quantity where its axis is linear.
#[derive(Clone, Copy)]
struct Bounds {
    n: (f64, f64),
    y: (f64, f64),
}

impl Bounds {
    fn of<'s>(quantity: Quantity, series: impl Iterator<Item = &'s Series> + Clone) -> Bounds {
        let points = || series.clone().flat_map(|s| &s.points);
        let extent = |v: &dyn Fn(&crate::Point) -> f64| {
            points().map(v).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
        };
        let n = extent(&|p| f64::from(p.n));
        let y = match quantity {
            Quantity::Accuracy | Quantity::AccuracyExists => (0.0, 100.0),
            Quantity::Attempts => (0.0, extent(&|p| p.y).1.max(1.0)),
            Quantity::Time => extent(&|p| linear(quantity, p.y)),
        };
        Bounds { n, y }
    }
}

/// What one panel draws.
enum Marks<'c> {
    /// Series overlaid, each point marked.
    Overlay(Vec<&'c Series>),
    /// One series' trend, by N's residue classes mod this (if they split it).
    Trend(&'c Series, Option<u32>),
}

pub(crate) fn draw<DB: DrawingBackend>(chart: &Chart, root: &DrawingArea<DB, Shift>) -> Result<Areas, FigureError> {
    let (top, body) = root.split_vertically(header(chart));
    top.draw(&Text::new(chart.title.clone(), (12, 10), ("sans-serif", 22).into_font().style(FontStyle::Bold)))
        .map_err(draw_error)?;
    if let Some(warning) = &chart.warning {
        top.draw(&Text::new(warning.clone(), (12, TITLE_BAND as i32), ("sans-serif", 16).into_font().color(&RED)))
            .map_err(draw_error)?;
    }
    let keys = keys(chart);
    let mut scene = Scene {
        quantity: chart.quantity,
        colours: keys.iter().enumerate().map(|(i, (k, _))| (*k, colour(k, i))).collect(),
        label_room: 0,
    };
    let note = note(chart);
    let note_band = if note.is_some() { NOTE_BAND } else { 0 };
    if let Some(note) = note {
        let y = (header(chart) - NOTE_BAND / 2) as i32 - 8;
        top.draw(&Text::new(note, (16, y), ("sans-serif", 14))).map_err(draw_error)?;
    }
    let legend_y = (header(chart) - note_band - LEGEND_BAND / 2) as i32;
    let mut areas = Areas::default();
    match grid(chart) {
        Grid::Overlay { columns } => {
            areas.keys = series_legend(&top, legend_y, &keys, &scene)?;
            let rows = chart.panels.len().div_ceil(columns as usize);
            for (panel, area) in chart.panels.iter().zip(body.split_evenly((rows, columns as usize))) {
                let bounds = Bounds::of(chart.quantity, panel.series.iter());
                let marks = Marks::Overlay(panel.series.iter().collect());
                let (plot, _) = draw_panel(&area, &panel.title, &scene, bounds, &marks)?;
                areas.plots.push(plot);
            }
        }
        Grid::Multiples { columns } => {
            let cells = body.split_evenly((chart.panels.len(), columns as usize));
            let bounds = Bounds::of(chart.quantity, chart.panels.iter().flat_map(|p| &p.series));
            let trends: Vec<(&Panel, &Series, Option<u32>)> = chart
                .panels
                .iter()
                .flat_map(|p| p.series.iter().map(move |s| (p, s)))
                .zip(moduli(chart))
                .map(|((p, s), m)| (p, s, m))
                .collect();
            if trends.iter().any(|(_, _, m)| m.is_some()) {
                scene.label_room = LABEL_ROOM;
            }
            trend_legend(&top, legend_y, chart.quantity)?;
            for (row, panel) in chart.panels.iter().enumerate() {
                for (panel, series, modulus) in trends.iter().filter(|(p, _, _)| std::ptr::eq(*p, panel)) {
                    let column = keys.iter().position(|(k, _)| *k == series.key).expect("every key is listed");
                    let title = format!("{} \u{b7} {}", panel.title, series.label);
                    let marks = Marks::Trend(series, *modulus);
                    let area = &cells[row * columns as usize + column];
                    let (plot, labels) = draw_panel(area, &title, &scene, bounds, &marks)?;
                    areas.plots.push(plot);
                    areas.keys.extend(labels);
                }
            }
        }
    }
    Ok(areas)
}

/// The legend of overlaid series: each key's line and marker in its
/// colour, and its label; returns where the keys were drawn.
fn series_legend<DB: DrawingBackend>(
    top: &DrawingArea<DB, Shift>,
    y: i32,
    keys: &[(&str, &str)],
    scene: &Scene,
) -> Result<Vec<PixelRect>, FigureError> {
    let mut drawn = Vec::new();
    let mut x = 16;
    let reach = MARKER as i32 + 1;
    for (key, label) in keys {
        let c = scene.colours[key];
        top.draw(&PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(LINE_WIDTH))).map_err(draw_error)?;
        top.draw(&Circle::new((x + 12, y), MARKER, c.filled())).map_err(draw_error)?;
        drawn.push((x - 2..x + 26, y - reach..y + reach));
        top.draw(&Text::new(label.to_string(), (x + 30, y - 8), ("sans-serif", 15))).map_err(draw_error)?;
        x += 30 + 9 * label.chars().count() as i32 + 24;
    }
    Ok(drawn)
}

/// The legend of small multiples, in grey: what a dot, a line and a band
/// are, since each panel names its series in its title.
fn trend_legend<DB: DrawingBackend>(
    top: &DrawingArea<DB, Shift>,
    y: i32,
    quantity: Quantity,
) -> Result<(), FigureError> {
    let grey = BLACK.mix(0.6);
    let font = ("sans-serif", 15);
    let mut x = 16;
    let text = |x: &mut i32, words: String| -> Result<(), FigureError> {
        top.draw(&Text::new(words.clone(), (*x, y - 8), font)).map_err(draw_error)?;
        *x += top.estimate_text_size(&words, &font.into_text_style(top)).map_err(draw_error)?.0 as i32 + 24;
        Ok(())
    };
    top.draw(&Circle::new((x + 4, y), 3, grey.filled())).map_err(draw_error)?;
    x += 14;
    text(&mut x, "one N".into())?;
    top.draw(&PathElement::new(vec![(x, y), (x + 24, y)], grey.stroke_width(LINE_WIDTH))).map_err(draw_error)?;
    x += 30;
    text(&mut x, format!("running mean of {} neighbouring N", 2 * HALF_WINDOW + 1))?;
    if matches!(quantity, Quantity::Accuracy | Quantity::AccuracyExists) {
        top.draw(&Rectangle::new([(x, y - 6), (x + 24, y + 6)], BLACK.mix(0.12).filled())).map_err(draw_error)?;
        x += 30;
        text(&mut x, "95 % intervals".into())?;
    }
    Ok(())
}

/// A range holding `lo..hi` with `before` and `after` pixels free at its
/// ends, on an axis `pixels` long.
fn padded((lo, hi): (f64, f64), pixels: u32, before: f64, after: f64) -> Range<f64> {
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo - 0.5, hi + 0.5) };
    let per_pixel = (hi - lo) / (f64::from(pixels) - before - after).max(1.0);
    lo - before * per_pixel..hi + after * per_pixel
}

/// The axes builder every panel uses, so measuring and drawing agree.
fn frame<'a, 'b, DB: DrawingBackend>(area: &'a DrawingArea<DB, Shift>) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(area);
    builder.x_label_area_size(X_LABEL_AREA).y_label_area_size(Y_LABEL_AREA);
    builder
}

/// One panel: its title, axes padded so no mark reaches the frame, and its
/// marks; returns its plotting area in pixels.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    scene: &Scene,
    bounds: Bounds,
    marks: &Marks,
) -> Result<(PixelRect, Vec<PixelRect>), FigureError> {
    let framed = area
        .margin(MARGIN, MARGIN, MARGIN, MARGIN + scene.label_room)
        .titled(title, ("sans-serif", 18))
        .map_err(draw_error)?;
    let (width, height) =
        frame(&framed).build_cartesian_2d(0.0..1.0, 0.0..1.0).map_err(draw_error)?.plotting_area().dim_in_pixel();
    let (mut left, mut right) = (REACH.max(0.04 * f64::from(width)), REACH.max(0.04 * f64::from(width)));
    let mut offsets = Vec::new();
    if let Marks::Overlay(series) = marks {
        // Neighbouring series a little apart at each N, no further than a
        // share of the gap between Ns.
        let (lo, hi) = bounds.n;
        let gap =
            series.iter().flat_map(|s| s.points.windows(2).map(|w| f64::from(w[1].n - w[0].n))).fold(hi - lo, f64::min);
        let per_n = f64::from(width) / (hi - lo).max(1.0);
        let step = DODGE.min(0.6 * gap.max(1.0) * per_n / series.len() as f64);
        let spread = step * (series.len() as f64 - 1.0) / 2.0;
        left += spread;
        right += spread;
        let px_per_n = (f64::from(width) - left - right) / (hi - lo).max(1.0);
        offsets = (0..series.len()).map(|i| (step * i as f64 - spread) / px_per_n).collect();
    }
    let x = padded(bounds.n, width, left, right);
    let y = padded(bounds.y, height, REACH, REACH);
    match scene.quantity {
        Quantity::Time => {
            let y = (10f64.powf(y.start)..10f64.powf(y.end)).log_scale();
            draw_marks(area, &framed, scene, marks, &offsets, x, y)
        }
        _ => draw_marks(area, &framed, scene, marks, &offsets, x, y),
    }
}

/// The axes in `framed` (the panel less its title and margins) and the
/// marks in them; class labels go in the panel's right margin (`area`).
fn draw_marks<DB, Y>(
    area: &DrawingArea<DB, Shift>,
    framed: &DrawingArea<DB, Shift>,
    scene: &Scene,
    marks: &Marks,
    offsets: &[f64],
    x: Range<f64>,
    y: Y,
) -> Result<(PixelRect, Vec<PixelRect>), FigureError>
where
    DB: DrawingBackend,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let quantity = scene.quantity;
    let mut plot = frame(framed).build_cartesian_2d(x, y).map_err(draw_error)?;
    let small = matches!(marks, Marks::Trend(..));
    plot.configure_mesh()
        .x_desc("N (board side)")
        .y_desc(quantity.axis_label())
        .x_labels(if small { 6 } else { 10 })
        .y_labels(if small { 6 } else { 10 })
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|&v| y_label(quantity, v))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(draw_error)?;
    let (xs, ys) = plot.plotting_area().get_pixel_range();
    let mut keys = Vec::new();
    match marks {
        Marks::Overlay(series) => {
            let coloured: Vec<(&Series, RGBColor)> =
                series.iter().map(|s| (*s, scene.colours[s.key.as_str()])).collect();
            marks::overlay(&mut plot, &coloured, quantity, offsets)?;
        }
        Marks::Trend(series, modulus) => {
            let classes = marks::trend(&mut plot, series, scene.colours[series.key.as_str()], quantity, *modulus)?;
            let right = xs.end - area.get_base_pixel().0;
            keys = marks::labels(area, right, ys.clone(), classes)?;
        }
    }
    Ok(((xs, ys), keys))
}

/// A y tick's text: whole percent, walks, or a time with its unit.
fn y_label(quantity: Quantity, v: f64) -> String {
    match quantity {
        Quantity::Accuracy | Quantity::AccuracyExists => format!("{v:.0}"),
        Quantity::Attempts => format!("{v:.1}"),
        Quantity::Time => time_label(v),
    }
}

/// Microseconds as a tick reads best: `100 µs`, `2.5 ms`, `10 s`.
fn time_label(micros: f64) -> String {
    let (value, unit) = match micros {
        m if m >= 1e6 => (m / 1e6, "s"),
        m if m >= 1e3 => (m / 1e3, "ms"),
        m => (m, "µs"),
    };
    let digits = if value >= 10.0 || value.fract() == 0.0 { 0 } else { 1 };
    format!("{value:.digits$} {unit}")
}

#[cfg(test)]
mod tests;
