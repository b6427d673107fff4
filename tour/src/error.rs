//! The one error type of the engine: every variant names the input field at
//! fault and, where there is one, the limit it broke.

use thiserror::Error;

/// Result alias for the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Invalid input to the engine. The message starts with the field name so a
/// CLI or RPC caller can show it unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    #[error("dims: must be between 1 and {max}, got {dims}")]
    Dims { dims: usize, max: usize },
    #[error("shape: side {axis} is 0; every side must be at least 1")]
    ZeroSide { axis: usize },
    #[error("shape: {cells} cells exceeds the limit of {max} (max-cells)")]
    TooManyCells { cells: u128, max: u64 },
    #[error("shape: the padded layout needs {cells} cells, over the engine limit of {max}")]
    PaddedTooLarge { cells: u128, max: u64 },
    #[error("rule: is empty; give at least one entry, e.g. 2,1")]
    RuleEmpty,
    #[error("rule: every entry is 0; at least one must be non-zero")]
    RuleAllZero,
    #[error("rule: has {len} entries but the board has only {dims} dims")]
    RuleTooLong { len: usize, dims: usize },
    #[error("rule: entry {value} is larger than the limit {max}")]
    RuleEntry { value: u32, max: u32 },
    #[error("moves: move {index} has {len} components, expected {dims} (one per dim)")]
    MoveLength { index: usize, len: usize, dims: usize },
    #[error("moves: move {index} is all zeros")]
    ZeroMove { index: usize },
    #[error("moves: move {index} repeats move {first}")]
    DuplicateMove { index: usize, first: usize },
    #[error("moves: move {index} has component {value}, outside the limit ±{max}")]
    MoveComponent { index: usize, value: i64, max: u32 },
    #[error("moves: the moves have {moves} dims but the board has {board}")]
    DimsMismatch { moves: usize, board: usize },
    #[error("moves: the list is empty")]
    NoMoves,
    #[error("moves: {count} moves exceeds the limit of {max}")]
    TooManyMoves { count: u128, max: usize },
    #[error("start: has {len} coordinates, expected {dims}")]
    StartLength { len: usize, dims: usize },
    #[error("start: coordinate {axis} is {value}, off the board (side {side}, 0-based)")]
    StartOffBoard { axis: usize, value: u64, side: u32 },
    #[error("method: unknown method {name:?}; expected one of {known}")]
    UnknownMethod { name: String, known: &'static str },
    #[error("method: {method} cannot run here: {reason}")]
    Unsupported { method: &'static str, reason: String },
    #[error("starts: asked for {requested} starts, over the limit of {max}")]
    TooManyStarts { requested: u64, max: u64 },
    #[error("path: {0}")]
    Path(String),
}

impl Error {
    /// The input field the error is about (`"shape"`, `"rule"`, `"start"`, ...).
    pub fn field(&self) -> &'static str {
        use Error::*;
        match self {
            Dims { .. } => "dims",
            ZeroSide { .. } | TooManyCells { .. } | PaddedTooLarge { .. } => "shape",
            RuleEmpty | RuleAllZero | RuleTooLong { .. } | RuleEntry { .. } => "rule",
            MoveLength { .. }
            | ZeroMove { .. }
            | DuplicateMove { .. }
            | MoveComponent { .. }
            | DimsMismatch { .. }
            | NoMoves
            | TooManyMoves { .. } => "moves",
            StartLength { .. } | StartOffBoard { .. } => "start",
            UnknownMethod { .. } | Unsupported { .. } => "method",
            TooManyStarts { .. } => "starts",
            Path(_) => "path",
        }
    }
}
