//! Every conversion between `ksweep.v1` messages and the domain types of
//! `tour` and `sweep`, in one place, so both ends of the wire agree by
//! construction. Encoding is total; decoding a peer's message returns a
//! [`ConvertError`] naming the field, never panics. One file per kind of
//! message: tasks, statuses, result rows, shards.

/// Why a message from a peer does not decode; names the field.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("{field}: missing")]
    Missing { field: &'static str },
    #[error("{field}: {value} is not a known value")]
    UnknownValue { field: &'static str, value: i32 },
    #[error("{field}: {why}")]
    Invalid { field: &'static str, why: String },
    /// The engine refused the value (a board, a move set, a method name).
    #[error("{field}: {error}")]
    Engine { field: &'static str, error: tour::Error },
}

impl ConvertError {
    /// The message field at fault, as `Message.field`.
    pub fn field(&self) -> &'static str {
        match self {
            ConvertError::Missing { field }
            | ConvertError::UnknownValue { field, .. }
            | ConvertError::Invalid { field, .. }
            | ConvertError::Engine { field, .. } => field,
        }
    }
}

mod rows;
mod shard;
mod status;
mod task;

pub use shard::{board_config, shard, ShardWork};
pub use status::sweep_state;
pub use task::{outcome, outcome_code, reported_error, task_done, task_failed, task_outcome, MAX_ERROR_CHARS};

#[cfg(test)]
mod tests;
