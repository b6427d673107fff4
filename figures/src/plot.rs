//! Drawing a [`Chart`]: a title band, then its panels in a grid, each with
//! its series as lines (and points, where few), accuracy intervals as
//! bands, and one legend for all panels under the title.

use std::collections::HashMap;
use std::ops::Range;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::chart::list_mark_note;
use crate::error::draw_error;
use crate::palette::colour;
use crate::{Chart, FigureError, Panel, Quantity};

const PANEL: (u32, u32) = (560, 380);
/// Width of a chart of one panel.
const SINGLE_WIDTH: u32 = 840;
const TITLE_BAND: u32 = 44;
/// The legend row under the title: one entry per series, shared by every panel.
const LEGEND_BAND: u32 = 28;
/// Series with more points than this are drawn as lines without markers.
const MARKED_POINTS: usize = 40;
const WARNING_BAND: u32 = 26;
/// Times under this many microseconds are drawn at it: a log axis has no 0.
const TIME_FLOOR: f64 = 0.1;

/// Columns of the panel grid.
fn columns(chart: &Chart) -> u32 {
    if chart.panels.len() == 1 {
        1
    } else {
        2
    }
}

/// A line under the legend explaining a mark in the panel titles.
const NOTE_BAND: u32 = 22;

fn header(chart: &Chart) -> u32 {
    TITLE_BAND
        + LEGEND_BAND
        + if chart.warning.is_some() { WARNING_BAND } else { 0 }
        + if note(chart).is_some() { NOTE_BAND } else { 0 }
}

/// The legend's note on the marks of the panel titles and the rings of
/// cells stopped at their cap, if any carries one.
fn note(chart: &Chart) -> Option<String> {
    let titles = list_mark_note(chart.panels.iter().map(|p| p.title.as_str()));
    let capped = chart.panels.iter().flat_map(|p| &p.series).flat_map(|s| &s.points).any(|p| p.capped);
    let ring =
        capped.then(|| "a ring marks a cell adaptive precision stopped at its cap, short of the precision".into());
    match (titles, ring) {
        (Some(t), Some(r)) => Some(format!("{t}; {r}")),
        (t, r) => t.or(r),
    }
}

/// The chart's size in pixels: its title band and a grid of panels (one
/// panel alone is drawn wider, so the title fits).
pub(crate) fn size(chart: &Chart) -> (u32, u32) {
    let cols = columns(chart);
    let rows = (chart.panels.len() as u32).div_ceil(cols);
    let width = if cols == 1 { SINGLE_WIDTH } else { PANEL.0 * cols };
    (width, header(chart) + PANEL.1 * rows)
}

pub(crate) fn draw<DB: DrawingBackend>(chart: &Chart, root: &DrawingArea<DB, Shift>) -> Result<(), FigureError> {
    let (top, body) = root.split_vertically(header(chart));
    top.draw(&Text::new(chart.title.clone(), (12, 10), ("sans-serif", 22).into_font().style(FontStyle::Bold)))
        .map_err(draw_error)?;
    if let Some(warning) = &chart.warning {
        top.draw(&Text::new(warning.clone(), (12, TITLE_BAND as i32), ("sans-serif", 16).into_font().color(&RED)))
            .map_err(draw_error)?;
    }
    // One legend for all panels: a series keeps its colour everywhere.
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for series in chart.panels.iter().flat_map(|p| &p.series) {
        if !keys.iter().any(|(k, _)| *k == series.key) {
            keys.push((&series.key, &series.label));
        }
    }
    let colours: HashMap<&str, RGBColor> = keys.iter().enumerate().map(|(i, (k, _))| (*k, colour(k, i))).collect();
    let note = note(chart);
    let note_band = if note.is_some() { NOTE_BAND } else { 0 };
    if let Some(note) = note {
        let y = (header(chart) - NOTE_BAND / 2) as i32 - 8;
        top.draw(&Text::new(note, (16, y), ("sans-serif", 14))).map_err(draw_error)?;
    }
    let (mut x, y) = (16, (header(chart) - note_band - LEGEND_BAND / 2) as i32);
    for (key, label) in &keys {
        let c = colours[key];
        top.draw(&PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(3))).map_err(draw_error)?;
        top.draw(&Text::new(label.to_string(), (x + 30, y - 8), ("sans-serif", 15))).map_err(draw_error)?;
        x += 30 + 9 * label.chars().count() as i32 + 24;
    }
    let cols = columns(chart) as usize;
    let rows = chart.panels.len().div_ceil(cols);
    for (panel, area) in chart.panels.iter().zip(body.split_evenly((rows, cols))) {
        let x = x_range(panel);
        match chart.quantity {
            Quantity::Accuracy | Quantity::AccuracyExists => {
                draw_panel(&area, panel, chart.quantity, &colours, x, -2.0..102.0)?
            }
            Quantity::Attempts => {
                let top = panel.series.iter().flat_map(|s| &s.points).map(|p| p.y).fold(1.0, f64::max);
                draw_panel(&area, panel, chart.quantity, &colours, x, 0.0..top * 1.08)?
            }
            Quantity::Time => {
                let ys = || panel.series.iter().flat_map(|s| &s.points).map(|p| p.y.max(TIME_FLOOR));
                let (lo, hi) = (ys().fold(f64::INFINITY, f64::min), ys().fold(TIME_FLOOR, f64::max));
                draw_panel(&area, panel, chart.quantity, &colours, x, (lo / 2.0..hi * 2.0).log_scale())?
            }
        }
    }
    Ok(())
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

/// The panel's N range, padded so end points are not on the frame.
fn x_range(panel: &Panel) -> Range<f64> {
    let ns = || panel.series.iter().flat_map(|s| &s.points).map(|p| f64::from(p.n));
    let (lo, hi) = (ns().fold(f64::INFINITY, f64::min), ns().fold(f64::NEG_INFINITY, f64::max));
    let pad = ((hi - lo) * 0.04).max(0.5);
    lo - pad..hi + pad
}

fn draw_panel<DB, Y>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    quantity: Quantity,
    colours: &HashMap<&str, RGBColor>,
    x: Range<f64>,
    y: Y,
) -> Result<(), FigureError>
where
    DB: DrawingBackend,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(x, y)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .x_desc("N (board side)")
        .y_desc(quantity.axis_label())
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|&v| y_label(quantity, v))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(draw_error)?;
    let floor = |y: f64| if quantity == Quantity::Time { y.max(TIME_FLOOR) } else { y };
    let count = panel.series.len() as u32;
    for (i, series) in panel.series.iter().enumerate() {
        let c = colours[series.key.as_str()];
        // Each line is drawn thinner than the ones under it, so lines that
        // coincide (every method at 100 %) show as nested stripes, none
        // hiding another.
        let under = count - 1 - i as u32;
        let width = 2 + 2 * under;
        let xy = |p: &crate::Point| (f64::from(p.n), floor(p.y));
        let bands: Vec<(f64, (f64, f64))> =
            series.points.iter().filter_map(|p| p.band.map(|b| (f64::from(p.n), b))).collect();
        if bands.len() > 1 {
            let outline =
                bands.iter().map(|&(x, (_, hi))| (x, hi)).chain(bands.iter().rev().map(|&(x, (lo, _))| (x, lo)));
            chart
                .draw_series(std::iter::once(Polygon::new(outline.collect::<Vec<_>>(), c.mix(0.08).filled())))
                .map_err(draw_error)?;
        } else if let Some(&(x, (lo, hi))) = bands.first() {
            chart
                .draw_series(std::iter::once(PathElement::new(vec![(x, lo), (x, hi)], c.stroke_width(2))))
                .map_err(draw_error)?;
        }
        chart.draw_series(LineSeries::new(series.points.iter().map(xy), c.stroke_width(width))).map_err(draw_error)?;
        let radius = 3 + 2 * under;
        if series.points.len() <= MARKED_POINTS {
            chart
                .draw_series(series.points.iter().map(|p| Circle::new(xy(p), radius, c.filled())))
                .map_err(draw_error)?;
        }
        let capped = series.points.iter().filter(|p| p.capped);
        chart.draw_series(capped.map(|p| Circle::new(xy(p), radius + 3, c.stroke_width(2)))).map_err(draw_error)?;
    }
    Ok(())
}
