//! A figure and its two outputs: SVG text, or a PNG file. Both draw the
//! same way (plotters' backends share one API); only the backend differs.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::draw_error;
use crate::{plot, Chart, FailureMap, FigureError};

/// Something to draw.
#[derive(Clone, Debug)]
pub enum Figure {
    /// Panels of a quantity against N.
    Chart(Chart),
    /// A board's starts coloured by which methods failed from them.
    Map(FailureMap),
}

impl Figure {
    /// Width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        match self {
            Figure::Chart(chart) => plot::size(chart),
            Figure::Map(map) => map.size(),
        }
    }

    /// The figure as an SVG document.
    pub fn svg(&self) -> Result<String, FigureError> {
        register_font();
        let mut text = String::new();
        {
            let root = SVGBackend::with_string(&mut text, self.size()).into_drawing_area();
            self.draw(&root)?;
            root.present().map_err(draw_error)?;
        }
        Ok(text)
    }

    /// Writes the figure to `path` as a PNG.
    pub fn png(&self, path: &Path) -> Result<(), FigureError> {
        register_font();
        let root = BitMapBackend::new(path, self.size()).into_drawing_area();
        self.draw(&root)?;
        root.present().map_err(draw_error)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), FigureError> {
        root.fill(&WHITE).map_err(draw_error)?;
        match self {
            Figure::Chart(chart) => plot::draw(chart, root).map(drop),
            Figure::Map(map) => map.draw(root),
        }
    }
}

/// The one font: DejaVu Sans, registered as plotters' "sans-serif" (in both
/// styles the figures use) before the first figure is drawn. SVG text only
/// names the family; the font measures it for layout.
pub(crate) fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for (style, bytes) in [(FontStyle::Normal, dejavu::sans::regular()), (FontStyle::Bold, dejavu::sans::bold())] {
            let parsed = plotters::style::register_font("sans-serif", style, bytes);
            assert!(parsed.is_ok(), "the embedded DejaVu Sans parses");
        }
    });
}
