//! A worker's account of one task of a shard: what the coordinator checks
//! and stores, decoded from the wire by `ksweep_proto::convert`.

/// One task's report: which task of its shard (`start_offset` indexes the
/// shard's starts, `method_index` the sweep's methods) and what it found.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskReport {
    /// Index of the start in its shard.
    pub start_offset: u32,
    /// Index of the method in the sweep.
    pub method_index: u32,
    /// A tour was found ([`tour::TaskResult::success`]).
    pub success: bool,
    /// The task's effort ([`tour::TaskResult::attempts`]).
    pub attempts: u32,
    /// Cells visited ([`tour::TaskResult::visited`]).
    pub visited: u64,
    /// Thread time spent on the task, in microseconds.
    pub micros: u64,
    /// Why the task could not run (it panicked); its counts are then 0.
    pub error: Option<String>,
    /// What the task found.
    pub outcome: tour::Outcome,
}
