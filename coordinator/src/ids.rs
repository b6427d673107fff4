//! Identifier newtypes, so a shard id cannot be passed where a worker id is
//! expected, and a stale lease (an old epoch) cannot extend, hand back or
//! fail a shard another worker holds. Its late results still count, once.

use std::fmt;

/// A sweep's row in the database (its public id is the spec hash string).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SweepKey(pub i64);

/// A shard, unique across coordinator restarts (a database row id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShardId(pub u64);

/// A registered worker, unique across coordinator restarts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkerId(pub u64);

/// One lease of a shard; every re-lease gets a new epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Epoch(pub u64);

impl fmt::Display for ShardId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shard {}", self.0)
    }
}

impl fmt::Display for WorkerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "worker {}", self.0)
    }
}
