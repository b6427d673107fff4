//! What can go wrong drawing a figure.

use plotters::drawing::DrawingAreaErrorKind;
use thiserror::Error;

/// A figure that cannot be drawn, or written.
#[derive(Debug, Error)]
pub enum FigureError {
    /// Nothing in the rows fits the figure (no results yet, or a filter
    /// that matches nothing).
    #[error("nothing to plot: {0}")]
    Empty(String),
    /// The figure's input does not fit it (a board of the wrong dimension).
    #[error("{0}")]
    Unsupported(String),
    /// plotters failed (an I/O error writing the PNG, mostly).
    #[error("drawing the figure: {0}")]
    Draw(String),
}

/// A plotters error as ours.
pub(crate) fn draw_error<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> FigureError {
    FigureError::Draw(e.to_string())
}
