//! The one error type of sweep specs: every message starts with the path of
//! the field at fault (`grid[1].n_range.step`, `limits.max_tasks`, `spec`)
//! and names the limit it broke, so a CLI or RPC caller can show it as is.

use thiserror::Error;

/// A spec that cannot become a [`crate::Sweep`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SpecError {
    /// The text is larger than [`crate::MAX_SPEC_BYTES`].
    #[error("spec: is {bytes} bytes, over the limit of {max} bytes")]
    TooLarge {
        /// Bytes of the text.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// The text is not TOML at all.
    #[error("spec: is not valid TOML: {0}")]
    Syntax(String),
    /// A field is missing, unknown, of the wrong type or out of range.
    #[error("{path}: {message}")]
    Field {
        /// The field, as TOML writes its path (`grid[1].n_range.step`).
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// The engine refused a grid's rule, move list or board; its message
    /// already starts with the field (`rule: ...`), so the grid path goes first.
    #[error("grid[{grid}].{error}{context}")]
    Engine {
        /// The grid's index in the spec, 0-based.
        grid: usize,
        /// The engine's refusal.
        error: tour::Error,
        /// Where in the grid, e.g. `" (board 5x0)"`; may be empty.
        context: String,
    },
    /// More configurations than `limits.max_configurations`.
    #[error("limits.max_configurations: the sweep has {count:e} configurations, over the limit {max:e}")]
    TooManyConfigurations {
        /// Configurations of the sweep.
        count: u64,
        /// The limit.
        max: u64,
    },
    /// More tasks than `limits.max_tasks`.
    #[error("limits.max_tasks: the sweep has {tasks:e} tasks, over the limit {max:e}")]
    TooManyTasks {
        /// Tasks of the sweep.
        tasks: u64,
        /// The limit.
        max: u64,
    },
}

impl SpecError {
    /// A field error at `path`.
    pub(crate) fn field(path: impl Into<String>, message: impl Into<String>) -> SpecError {
        SpecError::Field { path: path.into(), message: message.into() }
    }

    /// The path of the field at fault, as the message starts with it.
    pub fn path(&self) -> String {
        match self {
            SpecError::TooLarge { .. } | SpecError::Syntax(_) => "spec".into(),
            SpecError::Field { path, .. } => path.clone(),
            SpecError::Engine { grid, error, .. } => format!("grid[{grid}].{}", error.field()),
            SpecError::TooManyConfigurations { .. } => "limits.max_configurations".into(),
            SpecError::TooManyTasks { .. } => "limits.max_tasks".into(),
        }
    }
}
