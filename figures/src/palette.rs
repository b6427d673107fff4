//! Colours: each method keeps one colour across every figure, so W is the
//! same blue in the accuracy, time and attempts plots.

use plotters::style::RGBColor;
use tour::Method;

/// Tableau's 10 colours and four more: distinct, and readable in print.
const COLOURS: [RGBColor; 14] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 128),
    RGBColor(128, 0, 0),
    RGBColor(0, 100, 0),
    RGBColor(30, 30, 30),
];

/// The colour of a series: a method's own (by its place in
/// [`Method::ALL`]), or the `index`-th for anything else (a D, say).
pub(crate) fn colour(name: &str, index: usize) -> RGBColor {
    let slot = Method::ALL.iter().position(|m| m.name() == name).unwrap_or(index);
    COLOURS[slot % COLOURS.len()]
}

/// The `index`-th colour of the palette.
pub(crate) fn nth(index: usize) -> RGBColor {
    COLOURS[index % COLOURS.len()]
}
