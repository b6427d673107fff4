//! The coordinator's records of work, shared by the scheduler (which makes
//! and reads them in memory) and the store (which writes and reads them in
//! SQLite): neither depends on the other for them.

use sweep::{Cursor, MethodSet, ShardPlan};

use crate::ids::{ShardId, SweepKey, WorkerId};

/// One task's result, keyed by (sweep, config, start index, method index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultRecord {
    pub sweep: SweepKey,
    pub config: u32,
    pub start_index: u64,
    pub method: u32,
    pub start_cell: u64,
    pub success: bool,
    pub attempts: u32,
    pub visited: u64,
    pub micros: u64,
    pub worker: WorkerId,
    pub outcome: tour::Outcome,
    /// The sweep that computed it: `sweep` itself for a new result, another
    /// where a stored one was taken (docs/identity.md).
    pub computed_by: SweepKey,
}

/// A shard not yet done or failed, for resuming after a restart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenShard {
    pub id: ShardId,
    pub plan: ShardPlan,
    pub failures: u32,
    /// The methods it runs when not every method its configuration runs
    /// (a later stage of a sweep with adaptive precision, derived from
    /// the stored results as it is taken in); None for those.
    pub methods: Option<MethodSet>,
}

/// Shards cut (or re-planned) in memory that the database has not recorded
/// yet, with the cursor they advanced their sweep to. They go to the
/// database in the order they were cut
/// ([`crate::scheduler::Scheduler::take_unstored`], then the state's one
/// writer, which keeps a failed write's cuts queued): a stored cursor is
/// then never past a shard the database lacks, even when the call that cut
/// them was dropped or its write failed.
#[derive(Debug, Clone, PartialEq)]
pub struct NewShards {
    pub sweep: SweepKey,
    pub shards: Vec<(ShardId, ShardPlan)>,
    pub cursor: Cursor,
}
