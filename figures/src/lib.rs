//! Pictures of a sweep's results, and the report page that gathers them
//! with the tables.
//!
//! The model comes first and is format-free: [`Chart`] (a quantity against
//! N, a panel per rule and D, a line per method, with the accuracy's 95 %
//! Wilson intervals as bands) is built from the table rows every format
//! reads, [`FailureMap`] from per-start results. A chart of many N is drawn
//! as small multiples, a panel per line, each with its trend by N's residue
//! classes where they split it. A [`Figure`] draws either
//! through plotters as SVG (text stays text) or PNG (drawn with an embedded
//! font, so no system fonts are needed). [`report`] lays out a sweep's
//! spec, state, tables and figures as one self-contained HTML file or as
//! Markdown with the SVGs beside it. [`AtlasPicture`] draws the atlas of
//! leaper tours.

mod atlas;
mod chart;
mod error;
mod figure;
mod map;
mod marks;
mod palette;
mod plot;
pub mod report;
mod svg;
mod tour;
mod trend;

pub use atlas::{AtlasCell, AtlasClass, AtlasPicture};
pub use chart::{list_mark_note, rule_name, Chart, ChartSpec, Panel, Point, Quantity, Series, LIST_MARK};
pub use error::FigureError;
pub use figure::Figure;
pub use map::{FailureMap, StartResult};
pub use tour::TourPicture;
