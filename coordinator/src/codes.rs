//! The integers stored for states and outcomes. Each decodes through an
//! enum that refuses unknown values with [`UnknownCode`]: a database written
//! by a newer build, or damaged, is reported, never read as a default.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use thiserror::Error;

/// A stored code this build does not know.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown {what} code {code} in the database (written by a newer build, or damaged)")]
pub struct UnknownCode {
    pub what: &'static str,
    pub code: i64,
}

/// Lifecycle of a sweep, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepState {
    Running = 1,
    Done = 2,
    Cancelled = 3,
    /// Finished with shards that failed on every retry.
    Failed = 4,
}

impl SweepState {
    /// True once nothing more will run.
    pub fn is_terminal(self) -> bool {
        self != SweepState::Running
    }
}

/// The state as read: stored states are read as they are (only an
/// offline read of a file nothing serves says `stopped`).
impl From<SweepState> for sweep::SweepState {
    fn from(s: SweepState) -> sweep::SweepState {
        match s {
            SweepState::Running => sweep::SweepState::Running,
            SweepState::Done => sweep::SweepState::Done,
            SweepState::Cancelled => sweep::SweepState::Cancelled,
            SweepState::Failed => sweep::SweepState::Failed,
        }
    }
}

impl TryFrom<i64> for SweepState {
    type Error = UnknownCode;
    fn try_from(code: i64) -> Result<Self, UnknownCode> {
        match code {
            1 => Ok(SweepState::Running),
            2 => Ok(SweepState::Done),
            3 => Ok(SweepState::Cancelled),
            4 => Ok(SweepState::Failed),
            _ => Err(UnknownCode { what: "sweep state", code }),
        }
    }
}

/// A shard's state, as stored (the scheduler's richer
/// [`crate::scheduler::ShardState`] lives in memory only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredShardState {
    /// Queued or leased: run again after a restart.
    Open = 0,
    Done = 1,
    Failed = 2,
}

impl TryFrom<i64> for StoredShardState {
    type Error = UnknownCode;
    fn try_from(code: i64) -> Result<Self, UnknownCode> {
        match code {
            0 => Ok(StoredShardState::Open),
            1 => Ok(StoredShardState::Done),
            2 => Ok(StoredShardState::Failed),
            _ => Err(UnknownCode { what: "shard state", code }),
        }
    }
}

/// A task's outcome, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredOutcome(pub tour::Outcome);

impl StoredOutcome {
    /// The stored integer (also used in SQL: `outcome = 2` is no tour).
    pub fn code(self) -> i64 {
        match self.0 {
            tour::Outcome::Tour => 1,
            tour::Outcome::NoTour => 2,
            tour::Outcome::GaveUp => 3,
        }
    }
}

impl TryFrom<i64> for StoredOutcome {
    type Error = UnknownCode;
    fn try_from(code: i64) -> Result<Self, UnknownCode> {
        match code {
            1 => Ok(StoredOutcome(tour::Outcome::Tour)),
            2 => Ok(StoredOutcome(tour::Outcome::NoTour)),
            3 => Ok(StoredOutcome(tour::Outcome::GaveUp)),
            _ => Err(UnknownCode { what: "outcome", code }),
        }
    }
}

/// SQL glue: each code reads through its `TryFrom`, so an unknown value
/// fails the query with [`UnknownCode`] as the cause.
macro_rules! sql_code {
    ($t:ty, $code:expr) => {
        impl FromSql for $t {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                let code = i64::column_result(value)?;
                <$t>::try_from(code).map_err(|e| FromSqlError::Other(Box::new(e)))
            }
        }
        impl ToSql for $t {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                let code: fn(&$t) -> i64 = $code;
                Ok(ToSqlOutput::from(code(self)))
            }
        }
    };
}

sql_code!(SweepState, |s| *s as i64);
sql_code!(StoredShardState, |s| *s as i64);
sql_code!(StoredOutcome, |o| o.code());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_ones_are_refused() {
        for s in [SweepState::Running, SweepState::Done, SweepState::Cancelled, SweepState::Failed] {
            assert_eq!(SweepState::try_from(s as i64), Ok(s));
        }
        for s in [StoredShardState::Open, StoredShardState::Done, StoredShardState::Failed] {
            assert_eq!(StoredShardState::try_from(s as i64), Ok(s));
        }
        for o in [tour::Outcome::Tour, tour::Outcome::NoTour, tour::Outcome::GaveUp] {
            assert_eq!(StoredOutcome::try_from(StoredOutcome(o).code()), Ok(StoredOutcome(o)));
        }
        assert_eq!(SweepState::try_from(0), Err(UnknownCode { what: "sweep state", code: 0 }));
        assert_eq!(SweepState::try_from(9).unwrap_err().code, 9);
        assert!(StoredShardState::try_from(3).is_err());
        assert!(StoredOutcome::try_from(0).is_err());
        assert!(StoredOutcome::try_from(4).is_err());
    }
}
