//! The one error type of the engine: every variant names the input field at
//! fault and, where there is one, the limit it broke.

use thiserror::Error;

/// Result alias for the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Invalid input to the engine. The message starts with the field name so a
/// CLI or RPC caller can show it unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// `KSWEEP_SIMD` names no feature level.
    #[error("KSWEEP_SIMD={value:?}: not a level (one of {levels})")]
    SimdLevel {
        /// The variable's value.
        value: String,
        /// The levels it may name.
        levels: String,
    },
    /// The board has no axes or more than [`crate::MAX_DIMS`].
    #[error("dims: must be between 1 and {max}, got {dims}")]
    Dims {
        /// The number of axes asked for.
        dims: usize,
        /// The largest number allowed.
        max: usize,
    },
    /// A side of the board is 0.
    #[error("shape: side {axis} is 0; every side must be at least 1")]
    ZeroSide {
        /// The axis, 0-based.
        axis: usize,
    },
    /// The board has more cells than the caller's limit.
    #[error("shape: {cells} cells exceeds the limit of {max} (max-cells)")]
    TooManyCells {
        /// Cells of the board.
        cells: u128,
        /// The limit.
        max: u64,
    },
    /// The board with its border is over [`crate::MAX_PADDED_CELLS`].
    #[error("shape: the padded layout needs {cells} cells, over the engine limit of {max}")]
    PaddedTooLarge {
        /// Cells of the padded array.
        cells: u128,
        /// The limit.
        max: u64,
    },
    /// A rule with no entries.
    #[error("rule: is empty; give at least one entry, e.g. 2,1")]
    RuleEmpty,
    /// A rule of zeros only, which moves nowhere.
    #[error("rule: every entry is 0; at least one must be non-zero")]
    RuleAllZero,
    /// A rule with more entries than the board has axes.
    #[error("rule: has {len} entries but the board has only {dims} dims")]
    RuleTooLong {
        /// Entries of the rule.
        len: usize,
        /// Axes of the board.
        dims: usize,
    },
    /// A rule entry over [`crate::MAX_COMPONENT`].
    #[error("rule: entry {value} is larger than the limit {max}")]
    RuleEntry {
        /// The entry.
        value: u32,
        /// The limit.
        max: u32,
    },
    /// A move with the wrong number of components.
    #[error("moves: move {index} has {len} components, expected {dims} (one per dim)")]
    MoveLength {
        /// The move's position in the list, 0-based.
        index: usize,
        /// Its components.
        len: usize,
        /// Axes of the board.
        dims: usize,
    },
    /// A move of zeros only.
    #[error("moves: move {index} is all zeros")]
    ZeroMove {
        /// The move's position in the list, 0-based.
        index: usize,
    },
    /// A move listed twice.
    #[error("moves: move {index} repeats move {first}")]
    DuplicateMove {
        /// The repeat's position in the list, 0-based.
        index: usize,
        /// The first occurrence's position.
        first: usize,
    },
    /// A move component beyond ±[`crate::MAX_COMPONENT`].
    #[error("moves: move {index} has component {value}, outside the limit ±{max}")]
    MoveComponent {
        /// The move's position in the list, 0-based.
        index: usize,
        /// The component.
        value: i64,
        /// The limit on its absolute value.
        max: u32,
    },
    /// Moves and board of different dimensions.
    #[error("moves: the moves have {moves} dims but the board has {board}")]
    DimsMismatch {
        /// Components per move.
        moves: usize,
        /// Axes of the board.
        board: usize,
    },
    /// An empty move list.
    #[error("moves: the list is empty")]
    NoMoves,
    /// More moves than [`crate::MAX_MOVES`] (a rule in many dims makes many).
    #[error("moves: {count} moves exceeds the limit of {max}")]
    TooManyMoves {
        /// Moves the rule or list makes.
        count: u128,
        /// The limit.
        max: usize,
    },
    /// A start with the wrong number of coordinates.
    #[error("start: has {len} coordinates, expected {dims}")]
    StartLength {
        /// Coordinates given.
        len: usize,
        /// Axes of the board.
        dims: usize,
    },
    /// A start off the board.
    #[error("start: coordinate {axis} is {value}, off the board (side {side}, 0-based)")]
    StartOffBoard {
        /// The axis, 0-based.
        axis: usize,
        /// The coordinate given.
        value: u64,
        /// The board's side on that axis.
        side: u32,
    },
    /// A method name that is not one of [`crate::Method::ALL`].
    #[error("method: unknown method {name:?}; expected one of {known}")]
    UnknownMethod {
        /// The name given.
        name: String,
        /// Every method's name ([`crate::Method::names`]).
        known: String,
    },
    /// A method that cannot run on this configuration.
    #[error("method: {method} cannot run here: {reason}")]
    Unsupported {
        /// The method's name.
        method: &'static str,
        /// Why not.
        reason: String,
    },
    /// More starts than [`crate::MAX_STARTS`].
    #[error("starts: asked for {requested} starts, over the limit of {max}")]
    TooManyStarts {
        /// Starts asked for.
        requested: u64,
        /// The limit.
        max: u64,
    },
    /// A path (e.g. a tour read back) that does not fit the configuration.
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
            SimdLevel { .. } => "KSWEEP_SIMD",
        }
    }
}
