//! Result rows and removals, as `results` and `remove` carry them.

use super::{outcome, outcome_code, ConvertError};
use crate::v1 as pb;

impl From<sweep::Removal> for pb::RemoveReply {
    fn from(r: sweep::Removal) -> pb::RemoveReply {
        pb::RemoveReply { sweep_id: r.sweep_id, name: r.name, tasks_deleted: r.tasks_deleted, tasks_kept: r.tasks_kept }
    }
}

impl From<pb::RemoveReply> for sweep::Removal {
    fn from(r: pb::RemoveReply) -> sweep::Removal {
        sweep::Removal { sweep_id: r.sweep_id, name: r.name, tasks_deleted: r.tasks_deleted, tasks_kept: r.tasks_kept }
    }
}

impl From<sweep::ResultRow> for pb::ResultRow {
    fn from(r: sweep::ResultRow) -> pb::ResultRow {
        pb::ResultRow {
            config: r.config,
            moves: r.moves,
            dims: r.dims,
            shape: r.shape,
            method: r.method,
            start: r.start,
            success: r.success,
            attempts: r.attempts,
            visited: r.visited,
            micros: r.micros,
            worker: r.worker,
            worker_version: r.worker_version,
            worker_host: r.worker_host,
            worker_cpu: r.worker_cpu,
            worker_features: r.worker_features,
            computed_by: r.computed_by,
            // Deprecated: failed tasks are not stored, so no row has one.
            error: String::new(),
            start_index: r.start_index,
            outcome: r.outcome.map_or(pb::Outcome::Unspecified as i32, outcome_code),
        }
    }
}

impl TryFrom<pb::ResultRow> for sweep::ResultRow {
    type Error = ConvertError;

    /// An exported result; an outcome code this build does not know is
    /// refused, none at all (a worker that predates outcomes) is None.
    fn try_from(r: pb::ResultRow) -> Result<sweep::ResultRow, ConvertError> {
        Ok(sweep::ResultRow {
            outcome: outcome(r.outcome, "ResultRow.outcome")?,
            config: r.config,
            moves: r.moves,
            dims: r.dims,
            shape: r.shape,
            method: r.method,
            start: r.start,
            start_index: r.start_index,
            success: r.success,
            attempts: r.attempts,
            visited: r.visited,
            micros: r.micros,
            worker: r.worker,
            worker_version: r.worker_version,
            worker_host: r.worker_host,
            worker_cpu: r.worker_cpu,
            worker_features: r.worker_features,
            computed_by: r.computed_by,
        })
    }
}
