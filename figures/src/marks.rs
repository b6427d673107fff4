//! What a panel draws inside its frame: a few N's series overlaid, each
//! point marked, or one series of many N as a dot per N under the running
//! mean of each residue class of N ([`crate::trend`]). Every line is drawn
//! one width and in strokes without sharp joints, and every mark stays
//! within the inset the axes keep free, so nothing reaches past the frame.

use std::ops::Range;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::draw_error;
use crate::trend::running_mean;
use crate::{FigureError, Point, Quantity, Series};

/// A rectangle of pixels: columns and rows.
pub(crate) type PixelRect = (Range<i32>, Range<i32>);

/// The width of every series' line.
pub(crate) const LINE_WIDTH: u32 = 2;
/// The radius of a few-N point's marker.
pub(crate) const MARKER: u32 = 4;
/// The radius of a many-N point's dot.
const DOT: u32 = 2;
/// A ring around a capped cell is this much wider than the point's mark.
const RING: u32 = 3;
/// Pixels from a mark's centre that no mark, ring or line reaches past.
pub(crate) const REACH: f64 = MARKER as f64 + RING as f64 + 2.0;
/// A running mean spans this many points on each side.
pub(crate) const HALF_WINDOW: usize = 4;
/// A joint turning further than this (cosine of the turn) starts a new
/// stroke: a thick polyline's joint at a sharp turn is drawn far out of
/// place (a miter spike), while a stroke's own ends are not.
const SHARPEST_TURN: f64 = -0.5;

/// Times under this many microseconds are drawn at it: a log axis has no 0.
pub(crate) const TIME_FLOOR: f64 = 0.1;

/// A panel's chart: N on a linear axis, the quantity on a linear or log one.
pub(crate) type Plot<'a, DB, Y> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Y>>;

/// The value drawn for `y` (a time is held to [`TIME_FLOOR`]).
pub(crate) fn drawn(quantity: Quantity, y: f64) -> f64 {
    if quantity == Quantity::Time {
        y.max(TIME_FLOOR)
    } else {
        y
    }
}

/// `y` where the axis is linear: a time's logarithm, anything else as is.
pub(crate) fn linear(quantity: Quantity, y: f64) -> f64 {
    if quantity == Quantity::Time {
        drawn(quantity, y).log10()
    } else {
        y
    }
}

/// The inverse of [`linear`].
fn from_linear(quantity: Quantity, v: f64) -> f64 {
    if quantity == Quantity::Time {
        10f64.powf(v)
    } else {
        v
    }
}

/// A few N's series drawn over each other: intervals as bands, lines, a
/// marker per point. Series `i` is moved `offsets[i]` along N, so points
/// that coincide (every method at 100 %) sit side by side, all seen.
pub(crate) fn overlay<DB, Y>(
    plot: &mut Plot<'_, DB, Y>,
    series: &[(&Series, RGBColor)],
    quantity: Quantity,
    offsets: &[f64],
) -> Result<(), FigureError>
where
    DB: DrawingBackend,
    Y: Ranged<ValueType = f64>,
{
    for (&(series, c), &dx) in series.iter().zip(offsets) {
        let xy = |p: &Point| (f64::from(p.n) + dx, drawn(quantity, p.y));
        band(plot, &series.points, c, dx)?;
        let line: Vec<(f64, f64)> = series.points.iter().map(xy).collect();
        polyline(plot, &line, c.stroke_width(LINE_WIDTH), false)?;
        plot.draw_series(series.points.iter().map(|p| Circle::new(xy(p), MARKER, c.filled()))).map_err(draw_error)?;
        rings(plot, &series.points, MARKER, c, xy)?;
    }
    Ok(())
}

/// One residue class's look: its shade of the series' colour, whether its
/// line is dashed, and its label.
pub(crate) struct Class {
    pub label: String,
    pub colour: RGBColor,
    pub dashed: bool,
}

/// The classes of N mod `modulus` for a series of colour `c`: one (the
/// series itself) without a modulus; else a darker solid line for residue
/// 0 (N even) and lighter ones for the rest, every other one dashed.
pub(crate) fn classes(modulus: Option<u32>, c: RGBColor) -> Vec<Class> {
    let Some(k) = modulus else {
        return vec![Class { label: String::new(), colour: c, dashed: false }];
    };
    (0..k)
        .map(|r| {
            let label = match (k, r) {
                (2, 0) => "N even".to_string(),
                (2, _) => "N odd".to_string(),
                _ => format!("N\u{2261}{r} mod {k}"),
            };
            let colour = if r == 0 { blend(c, BLACK, 0.3) } else { blend(c, WHITE, 0.15 + 0.15 * f64::from(r - 1)) };
            Class { label, colour, dashed: r % 2 == 1 }
        })
        .collect()
}

/// `a` moved `t` of the way to `b`.
fn blend(a: RGBColor, b: RGBColor, t: f64) -> RGBColor {
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * t).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// One series of many N: per residue class of N (all N if `modulus` is
/// None), its intervals as a band, a dot per N, and the running mean as a
/// line over a white halo (so it reads over the dots); returns the
/// classes' labels to set beside the plot ([`labels`]), none without
/// classes.
pub(crate) fn trend<DB, Y>(
    plot: &mut Plot<'_, DB, Y>,
    series: &Series,
    c: RGBColor,
    quantity: Quantity,
    modulus: Option<u32>,
) -> Result<Vec<(Class, i32)>, FigureError>
where
    DB: DrawingBackend,
    Y: Ranged<ValueType = f64>,
{
    let xy = |p: &Point| (f64::from(p.n), drawn(quantity, p.y));
    let classes: Vec<(Class, Vec<Point>)> = classes(modulus, c)
        .into_iter()
        .enumerate()
        .map(|(r, class)| {
            let points = series.points.iter().filter(|p| modulus.is_none_or(|k| p.n % k == r as u32));
            (class, points.copied().collect())
        })
        .collect();
    for (class, points) in &classes {
        band(plot, points, class.colour, 0.0)?;
    }
    for (class, points) in &classes {
        let dot = class.colour.mix(0.45).filled();
        plot.draw_series(points.iter().map(|p| Circle::new(xy(p), DOT, dot))).map_err(draw_error)?;
        rings(plot, points, DOT, class.colour, xy)?;
    }
    let mut labelled = Vec::new();
    for (class, points) in classes {
        let mean: Vec<(f64, f64)> = running_mean(&points, |p| linear(quantity, p.y), HALF_WINDOW)
            .into_iter()
            .map(|(n, v)| (f64::from(n), from_linear(quantity, v)))
            .collect();
        polyline(plot, &mean, WHITE.stroke_width(LINE_WIDTH + 2), false)?;
        polyline(plot, &mean, class.colour.stroke_width(LINE_WIDTH), class.dashed)?;
        // A label sits level with where its line runs over the last
        // quarter of N: the very last value is one noisy window.
        let tail = &points[points.len() - points.len().div_ceil(4)..];
        if let (false, Some(last)) = (class.label.is_empty(), tail.last()) {
            let level = tail.iter().map(|p| linear(quantity, p.y)).sum::<f64>() / tail.len() as f64;
            let (_, y) = plot.backend_coord(&(f64::from(last.n), from_linear(quantity, level)));
            labelled.push((class, y));
        }
    }
    Ok(labelled)
}

/// Class labels at the right of a plot (`right`, in pixels of `area`), each
/// a short line in its class's look and its words, level with the class
/// (`y`, in the backend's pixels) and moved apart where they would overlap;
/// returns where the line samples were drawn.
pub(crate) fn labels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    right: i32,
    heights: Range<i32>,
    mut classes: Vec<(Class, i32)>,
) -> Result<Vec<PixelRect>, FigureError> {
    const LINE: i32 = 14;
    const SAMPLE: i32 = 16;
    classes.sort_by_key(|(_, y)| *y);
    let (x0, y0) = area.get_base_pixel();
    let count = classes.len() as i32;
    let mut next = heights.start + LINE / 2;
    let mut keys = Vec::new();
    for (i, (class, y)) in classes.into_iter().enumerate() {
        // Below the label above it, and above the room the rest need.
        let y = y.max(next).min(heights.end - LINE / 2 - (count - 1 - i as i32) * LINE);
        next = y + LINE;
        let (x, local) = (right + 6, y - y0);
        let style = class.colour.stroke_width(LINE_WIDTH);
        let segments = if class.dashed { vec![(0, 7), (11, SAMPLE)] } else { vec![(0, SAMPLE)] };
        for (from, to) in segments {
            area.draw(&PathElement::new(vec![(x + from, local), (x + to, local)], style)).map_err(draw_error)?;
        }
        keys.push((x0 + x - 2..x0 + x + SAMPLE + 2, y - 2..y + 2));
        let words = ("sans-serif", 12).into_font().color(&BLACK.mix(0.8)).pos(Pos::new(HPos::Left, VPos::Center));
        area.draw(&Text::new(class.label, (x + SAMPLE + 4, local), words)).map_err(draw_error)?;
    }
    Ok(keys)
}

/// The 95 % intervals of `points` as a band (a bar for one point), moved
/// `dx` along N.
fn band<DB, Y>(plot: &mut Plot<'_, DB, Y>, points: &[Point], c: RGBColor, dx: f64) -> Result<(), FigureError>
where
    DB: DrawingBackend,
    Y: Ranged<ValueType = f64>,
{
    let bands: Vec<(f64, (f64, f64))> =
        points.iter().filter_map(|p| p.band.map(|b| (f64::from(p.n) + dx, b))).collect();
    if bands.len() > 1 {
        let outline = bands.iter().map(|&(x, (_, hi))| (x, hi)).chain(bands.iter().rev().map(|&(x, (lo, _))| (x, lo)));
        plot.draw_series(std::iter::once(Polygon::new(outline.collect::<Vec<_>>(), c.mix(0.08).filled())))
            .map_err(draw_error)?;
    } else if let Some(&(x, (lo, hi))) = bands.first() {
        plot.draw_series(std::iter::once(PathElement::new(vec![(x, lo), (x, hi)], c.stroke_width(LINE_WIDTH))))
            .map_err(draw_error)?;
    }
    Ok(())
}

/// A ring around each point adaptive precision stopped at its cap, as
/// heavy as the point's mark (a dot's is thin, not to outweigh its line).
fn rings<DB, Y>(
    plot: &mut Plot<'_, DB, Y>,
    points: &[Point],
    radius: u32,
    c: RGBColor,
    xy: impl Fn(&Point) -> (f64, f64),
) -> Result<(), FigureError>
where
    DB: DrawingBackend,
    Y: Ranged<ValueType = f64>,
{
    let capped = points.iter().filter(|p| p.capped);
    let width = if radius < MARKER { 1 } else { LINE_WIDTH };
    plot.draw_series(capped.map(|p| Circle::new(xy(p), radius + RING, c.stroke_width(width)))).map_err(draw_error)?;
    Ok(())
}

/// A line through `points`, cut into strokes at its sharp turns.
fn polyline<DB, Y>(
    plot: &mut Plot<'_, DB, Y>,
    points: &[(f64, f64)],
    style: ShapeStyle,
    dashed: bool,
) -> Result<(), FigureError>
where
    DB: DrawingBackend,
    Y: Ranged<ValueType = f64>,
{
    for stroke in strokes(points, |p| plot.backend_coord(p)) {
        if dashed {
            plot.draw_series(DashedLineSeries::new(stroke, 7, 4, style)).map_err(draw_error)?;
        } else {
            plot.draw_series(std::iter::once(PathElement::new(stroke, style))).map_err(draw_error)?;
        }
    }
    Ok(())
}

/// `points` cut into runs that turn (in pixels, `pixel` maps a point) no
/// sharper than [`SHARPEST_TURN`]; consecutive runs share their end point.
fn strokes(points: &[(f64, f64)], pixel: impl Fn(&(f64, f64)) -> (i32, i32)) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut run: Vec<(f64, f64)> = Vec::new();
    for &p in points {
        if let [.., a, b] = run[..] {
            let (a, b, c) = (pixel(&a), pixel(&b), pixel(&p));
            let (u, v) = ((b.0 - a.0, b.1 - a.1), (c.0 - b.0, c.1 - b.1));
            let lengths = f64::from(u.0).hypot(f64::from(u.1)) * f64::from(v.0).hypot(f64::from(v.1));
            let turn = f64::from(u.0 * v.0 + u.1 * v.1) / lengths;
            if lengths > 0.0 && turn < SHARPEST_TURN {
                let joint = *run.last().expect("two points");
                runs.push(std::mem::replace(&mut run, vec![joint]));
            }
        }
        run.push(p);
    }
    if run.len() > 1 {
        runs.push(run);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zigzag_is_cut_at_every_turn_and_a_gentle_line_is_not() {
        let pixel = |&(x, y): &(f64, f64)| ((x * 2.0) as i32, (300.0 - y * 3.0) as i32);
        let zigzag: Vec<(f64, f64)> = (0..6).map(|n| (f64::from(n), if n % 2 == 0 { 0.0 } else { 100.0 })).collect();
        let runs = strokes(&zigzag, pixel);
        assert_eq!(runs.len(), 5, "{runs:?}");
        assert!(runs.iter().all(|r| r.len() == 2));
        assert_eq!(runs[1][0], runs[0][1], "runs join");
        let gentle: Vec<(f64, f64)> = (0..6).map(|n| (f64::from(n) * 10.0, f64::from(n * n))).collect();
        assert_eq!(strokes(&gentle, pixel), vec![gentle.clone()]);
        assert!(strokes(&gentle[..1], pixel).is_empty());
    }
}
