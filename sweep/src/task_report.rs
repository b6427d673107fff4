//! A worker's account of one task of a shard: what the coordinator checks
//! and stores, decoded from the wire by `ksweep_proto::convert`.

/// What one task found, as a worker reports it and a database stores it:
/// a [`tour::TaskResult`] without the path, which never leaves the worker.
/// [`crate::Sweep::check_result`] judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSummary {
    /// A tour was found ([`tour::TaskResult::success`]).
    pub success: bool,
    /// What the task found.
    pub outcome: tour::Outcome,
    /// The task's effort ([`tour::TaskResult::attempts`]).
    pub attempts: u32,
    /// Cells visited ([`tour::TaskResult::visited`]).
    pub visited: u64,
    /// Thread time spent on the task, in microseconds.
    pub micros: u64,
}

impl From<&tour::TaskResult> for TaskSummary {
    fn from(r: &tour::TaskResult) -> TaskSummary {
        TaskSummary {
            success: r.success,
            outcome: r.outcome,
            attempts: r.attempts,
            visited: r.visited,
            micros: r.micros,
        }
    }
}

/// One task's report: which task of its shard (`start_offset` indexes the
/// shard's starts, `method_index` the sweep's methods) and what it found.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskReport {
    /// Index of the start in its shard.
    pub start_offset: u32,
    /// Index of the method in the sweep.
    pub method_index: u32,
    /// What the task found.
    pub summary: TaskSummary,
    /// Why the task could not run (it panicked); its counts are then 0.
    pub error: Option<String>,
}
