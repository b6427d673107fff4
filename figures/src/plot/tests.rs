//! The pictures read back: a PNG decoded pixel by pixel and an SVG parsed,
//! to check that no series' colour lies outside the plotting areas and the
//! legend's keys, and that a chart of many N is drawn as small multiples.

use std::ops::Range;

use plotters::prelude::*;

use super::{draw, Areas};
use crate::figure::register_font;
use crate::{Chart, Figure, Panel, Point, Quantity, Series};

const METHODS: [(&str, &str); 5] = [("w", "W"), ("w+", "W+"), ("aw", "AW"), ("aw+", "AW+"), ("mw", "MW")];

/// Two panels of five methods over `ns`, each point's accuracy from `y`
/// (of the method's index and N) with its Wilson interval over 32 starts.
fn chart(ns: Range<u32>, y: impl Fn(usize, u32) -> f64) -> Chart {
    let panel = |title: &str| Panel {
        title: title.into(),
        series: METHODS
            .iter()
            .enumerate()
            .map(|(i, (key, label))| Series {
                label: label.to_string(),
                key: key.to_string(),
                points: ns
                    .clone()
                    .map(|n| {
                        let y = y(i, n);
                        let band = sweep::wilson((y * 0.32).round() as u64, 32);
                        Point { n, y, band, starts: 32, capped: n % 50 == 0 }
                    })
                    .collect(),
            })
            .collect(),
    };
    Chart {
        title: "zig-zag".into(),
        warning: None,
        quantity: Quantity::Accuracy,
        panels: vec![panel("(3,2) 2D"), panel("(2,1) 2D")],
    }
}

/// Accuracy alternating 0 / 100 % with N's parity, out of phase between
/// methods: the sharpest zig-zag a chart can hold.
fn zigzag(ns: Range<u32>) -> Chart {
    chart(ns, |i, n| if (n as usize + i).is_multiple_of(2) { 100.0 } else { 0.0 })
}

/// Where the chart draws its series, from a drawing of it.
fn areas(chart: &Chart) -> Areas {
    register_font();
    let mut text = String::new();
    let root = SVGBackend::with_string(&mut text, super::size(chart)).into_drawing_area();
    draw(chart, &root).expect("the chart draws")
}

fn inside(rects: &[(Range<i32>, Range<i32>)], x: f64, y: f64) -> bool {
    rects.iter().any(|(xs, ys)| {
        (f64::from(xs.start)..=f64::from(xs.end)).contains(&x) && (f64::from(ys.start)..=f64::from(ys.end)).contains(&y)
    })
}

/// A colour of some series, or its blend with the white ground or a band:
/// every series colour is clearly chromatic, text and axes are grey.
fn inked(rgb: [u8; 3]) -> bool {
    rgb.iter().max().unwrap() - rgb.iter().min().unwrap() > 30
}

/// Decodes `chart`'s PNG and returns its inked pixels outside `allowed`,
/// and how many were inside.
fn ink_outside(chart: &Chart, allowed: &[(Range<i32>, Range<i32>)]) -> (Vec<(u32, u32)>, usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chart.png");
    Figure::Chart(chart.clone()).png(&path).unwrap();
    let mut reader = png::Decoder::new(std::fs::File::open(&path).unwrap()).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    assert!(channels >= 3 && info.bit_depth == png::BitDepth::Eight, "{:?}", info.color_type);
    let (mut outside, mut within) = (Vec::new(), 0);
    for (i, px) in pixels[..info.buffer_size()].chunks(channels).enumerate() {
        if !inked([px[0], px[1], px[2]]) {
            continue;
        }
        let (x, y) = (i as u32 % info.width, i as u32 / info.width);
        if inside(allowed, f64::from(x), f64::from(y)) {
            within += 1;
        } else {
            outside.push((x, y));
        }
    }
    (outside, within)
}

fn allowed(areas: &Areas) -> Vec<(Range<i32>, Range<i32>)> {
    areas.plots.iter().chain(&areas.keys).cloned().collect()
}

#[test]
fn png_of_many_n_zigzag_keeps_every_series_pixel_inside_the_plots() {
    let chart = zigzag(5..225);
    let areas = areas(&chart);
    assert_eq!(areas.plots.len(), 10, "a plot per rule and method");
    assert_eq!(
        areas.keys.len(),
        10 * 2,
        "the legend is grey (each plot names its method); keys are the labels of N even and odd"
    );
    let (outside, within) = ink_outside(&chart, &allowed(&areas));
    assert!(
        outside.is_empty(),
        "{} series pixels outside the plots, e.g. {:?}",
        outside.len(),
        &outside[..10.min(outside.len())]
    );
    assert!(within > 10 * 500, "the series are drawn: {within} pixels");
}

#[test]
fn png_of_few_n_zigzag_keeps_every_series_pixel_inside_the_plots_and_keys() {
    let chart = zigzag(5..45);
    let areas = areas(&chart);
    assert_eq!((areas.plots.len(), areas.keys.len()), (2, 5), "overlaid: a plot per rule, a key per method");
    let (outside, within) = ink_outside(&chart, &allowed(&areas));
    assert!(
        outside.is_empty(),
        "{} series pixels outside the plots, e.g. {:?}",
        outside.len(),
        &outside[..10.min(outside.len())]
    );
    assert!(within > 2 * 2000, "the series are drawn: {within} pixels");
}

/// A number attribute of an SVG element (0 when absent).
fn number(node: roxmltree::Node, name: &str) -> f64 {
    node.attribute(name).map_or(0.0, |v| v.parse().unwrap())
}

/// Every SVG element painted in a series' colour, as the extent of its
/// paint: points grown by the stroke (a joint of a turn no sharper than
/// 120 degrees reaches a stroke width out), circles by radius and stroke.
fn svg_ink(svg: &str) -> Vec<(String, f64, f64)> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let mut ink = Vec::new();
    for node in doc.descendants().filter(|n| n.is_element()) {
        let colour = |name| {
            node.attribute(name).and_then(|c| c.strip_prefix('#')).filter(|c| c.len() == 6).map(|c| {
                let byte = |i| u8::from_str_radix(&c[i..i + 2], 16).unwrap();
                [byte(0), byte(2), byte(4)]
            })
        };
        if !colour("stroke").into_iter().chain(colour("fill")).any(inked) {
            continue;
        }
        let stroke = number(node, "stroke-width");
        let tag = node.tag_name().name().to_string();
        match tag.as_str() {
            "polyline" | "polygon" => {
                for pair in node.attribute("points").unwrap().split_whitespace() {
                    let (x, y) = pair.split_once(',').unwrap();
                    let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
                    for (dx, dy) in [(-1.0, -1.0), (1.0, 1.0), (-1.0, 1.0), (1.0, -1.0)] {
                        ink.push((tag.clone(), x + dx * stroke, y + dy * stroke));
                    }
                }
            }
            "circle" => {
                let (x, y, r) = (number(node, "cx"), number(node, "cy"), number(node, "r") + stroke / 2.0);
                ink.extend([(tag.clone(), x - r, y - r), (tag.clone(), x + r, y + r)]);
            }
            "rect" => {
                let (x, y) = (number(node, "x"), number(node, "y"));
                ink.extend([(tag.clone(), x, y), (tag.clone(), x + number(node, "width"), y + number(node, "height"))]);
            }
            other => panic!("a series colour on an unexpected <{other}>"),
        }
    }
    ink
}

#[test]
fn svg_of_a_zigzag_paints_series_only_inside_the_plots_and_keys() {
    for chart in [zigzag(5..225), zigzag(5..45)] {
        let svg = Figure::Chart(chart.clone()).svg().unwrap();
        let allowed = allowed(&areas(&chart));
        let ink = svg_ink(&svg);
        assert!(ink.len() > 1000, "{} painted points", ink.len());
        let outside: Vec<_> = ink.iter().filter(|(_, x, y)| !inside(&allowed, *x, *y)).collect();
        assert!(outside.is_empty(), "{} painted outside, e.g. {:?}", outside.len(), &outside[..5.min(outside.len())]);
    }
}

/// Every text node of an SVG.
fn texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

#[test]
fn many_n_are_small_multiples_with_parity_classes_labelled() {
    let chart = zigzag(5..225);
    assert_eq!(super::size(&chart), (5 * 340, 44 + 28 + 22 + 2 * 260), "a column per method, a row per rule");
    let svg = Figure::Chart(chart).svg().unwrap();
    let texts = texts(&svg);
    for title in ["(3,2) 2D \u{b7} W", "(3,2) 2D \u{b7} MW", "(2,1) 2D \u{b7} AW+"] {
        assert!(texts.iter().any(|t| t == title), "no panel {title:?} in {texts:?}");
    }
    assert_eq!(texts.iter().filter(|t| *t == "N even").count(), 10, "every plot splits by parity");
    assert_eq!(texts.iter().filter(|t| *t == "N odd").count(), 10);
    assert!(texts.iter().any(|t| t.starts_with("running mean of 9")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("where N's residue splits")), "the note says why: {texts:?}");
}

#[test]
fn many_n_without_alternation_draw_one_trend_unlabelled() {
    let chart = chart(5..225, |i, n| (100.0 - f64::from(n) / 3.0 - 5.0 * i as f64).max(0.0));
    let svg = Figure::Chart(chart).svg().unwrap();
    let texts = texts(&svg);
    assert!(!texts.iter().any(|t| t.starts_with("N even") || t.starts_with("N odd")), "no classes: {texts:?}");
    assert!(!texts.iter().any(|t| t.contains("where N's residue")), "{texts:?}");
}

/// Few N: the methods overlaid, every line one width (none stands out),
/// and points that coincide (every method at 100 %) side by side.
#[test]
fn few_n_overlay_lines_of_one_width_and_coinciding_points_side_by_side() {
    let chart = chart(5..13, |_, _| 100.0);
    let svg = Figure::Chart(chart).svg().unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let widths: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke").is_some_and(|s| s != "#000000"))
        .filter_map(|n| n.attribute("stroke-width"))
        .collect();
    assert!(!widths.is_empty());
    assert!(widths.iter().all(|w| *w == "2"), "{widths:?}");
    let at_top: Vec<f64> = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle") && n.attribute("fill").is_some_and(|f| f != "#000000"))
        .map(|n| (number(n, "cx"), number(n, "cy")))
        .filter(|&(_, cy)| cy < 200.0)
        .map(|(cx, _)| cx)
        .collect();
    let mut distinct = at_top.clone();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    assert!(distinct.len() >= 5 * 8, "each method's 8 points at 100 % apart: {at_top:?}");
}
