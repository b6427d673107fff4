//! Outcomes and tasks: a worker's finished (or failed) task as reported,
//! and the checks its error text passes when received.

use tour::TaskResult;

use super::ConvertError;
use crate::v1 as pb;

impl From<tour::Outcome> for pb::Outcome {
    fn from(o: tour::Outcome) -> pb::Outcome {
        match o {
            tour::Outcome::Tour => pb::Outcome::Tour,
            tour::Outcome::NoTour => pb::Outcome::NoTour,
            tour::Outcome::GaveUp => pb::Outcome::GaveUp,
        }
    }
}

/// The enum code of an outcome, as message fields hold it.
pub fn outcome_code(o: tour::Outcome) -> i32 {
    pb::Outcome::from(o) as i32
}

/// The outcome an enum code names: None for `OUTCOME_UNSPECIFIED` (a peer
/// that predates outcomes), an error for a value this build does not know.
pub fn outcome(code: i32, field: &'static str) -> Result<Option<tour::Outcome>, ConvertError> {
    match pb::Outcome::try_from(code) {
        Ok(pb::Outcome::Unspecified) => Ok(None),
        Ok(pb::Outcome::Tour) => Ok(Some(tour::Outcome::Tour)),
        Ok(pb::Outcome::NoTour) => Ok(Some(tour::Outcome::NoTour)),
        Ok(pb::Outcome::GaveUp) => Ok(Some(tour::Outcome::GaveUp)),
        Err(_) => Err(ConvertError::UnknownValue { field, value: code }),
    }
}

// ------------------------------------------------------------------- tasks

/// A finished task's message: `start_offset` indexes the shard's starts,
/// `method_index` its methods.
pub fn task_done(start_offset: u32, method_index: u32, r: &TaskResult) -> pb::TaskOutcome {
    pb::TaskOutcome {
        start_offset,
        method_index,
        success: r.success,
        attempts: r.attempts,
        visited: r.visited,
        micros: r.micros,
        error: String::new(),
        outcome: outcome_code(r.outcome),
    }
}

/// A task that could not run (it panicked): the error, every count 0.
pub fn task_failed(start_offset: u32, method_index: u32, error: String) -> pb::TaskOutcome {
    pb::TaskOutcome { start_offset, method_index, error, ..Default::default() }
}

/// What a reported task found. A worker that predates outcomes sends none:
/// its success is a tour, anything else gave up.
pub fn task_outcome(t: &pb::TaskOutcome) -> Result<tour::Outcome, ConvertError> {
    Ok(outcome(t.outcome, "TaskOutcome.outcome")?.unwrap_or(if t.success {
        tour::Outcome::Tour
    } else {
        tour::Outcome::GaveUp
    }))
}

/// Longest error text kept from a worker (per task or shard): enough for
/// a panic message, never a whole spec or a flood.
pub const MAX_ERROR_CHARS: usize = 1000;

/// A worker's error text as kept: None when empty, cut after
/// [`MAX_ERROR_CHARS`] characters (the cut says how long it was).
pub fn reported_error(text: String) -> Option<String> {
    if text.is_empty() {
        return None;
    }
    match text.char_indices().nth(MAX_ERROR_CHARS) {
        Some((cut, _)) => Some(format!("{}... ({} bytes)", &text[..cut], text.len())),
        None => Some(text),
    }
}

impl TryFrom<pb::TaskOutcome> for sweep::TaskReport {
    type Error = ConvertError;

    /// A reported task as the coordinator checks it; an outcome code this
    /// build does not know is refused.
    fn try_from(t: pb::TaskOutcome) -> Result<sweep::TaskReport, ConvertError> {
        let summary = sweep::TaskSummary {
            outcome: task_outcome(&t)?,
            success: t.success,
            attempts: t.attempts,
            visited: t.visited,
            micros: t.micros,
        };
        Ok(sweep::TaskReport {
            start_offset: t.start_offset,
            method_index: t.method_index,
            summary,
            error: reported_error(t.error),
        })
    }
}
