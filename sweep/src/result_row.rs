//! One task's stored result as exports read it: labels resolved from the
//! sweep (moves, board, method's name, the start's coordinates). The wire
//! carries it as `ksweep.v1.ResultRow` (conversions in
//! `ksweep_proto::convert`).

/// One task's result, in an export's (configuration, start, method) order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultRow {
    /// Index of the configuration in the sweep.
    pub config: u32,
    /// The move rule's label (`2,1`, or an explicit list).
    pub moves: String,
    /// The board's dimensions.
    pub dims: u32,
    /// The board as tables label it (`8x8`).
    pub shape: String,
    /// The method's name.
    pub method: String,
    /// The start square's coordinates.
    pub start: Vec<u32>,
    /// Index of the start among the configuration's starts.
    pub start_index: u64,
    /// A tour was found.
    pub success: bool,
    /// What the task found; None from a worker too old to say.
    pub outcome: Option<tour::Outcome>,
    /// The task's effort ([`tour::TaskResult::attempts`]).
    pub attempts: u32,
    /// Cells visited ([`tour::TaskResult::visited`]).
    pub visited: u64,
    /// Time the task took, in microseconds.
    pub micros: u64,
    /// The worker's name (its id when it has none).
    pub worker: String,
    /// The worker's ksweep release and commit (`0.1.0 (abc123def456)`);
    /// empty where it was not recorded (before schema version 3, or a
    /// worker too old to say). Likewise the three below.
    pub worker_version: String,
    /// The worker's host name.
    pub worker_host: String,
    /// The worker's CPU model.
    pub worker_cpu: String,
    /// The CPU features its engine's kernels used, space-separated
    /// (`sse4.1 ssse3`; empty for the scalar kernels).
    pub worker_features: String,
    /// The id of the sweep that computed it: another sweep's where this
    /// one took it from stored results (docs/identity.md).
    pub computed_by: String,
}
