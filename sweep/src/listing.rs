//! Several sweeps listed so that a user can tell them apart and name one:
//! what an error shows when a name or an id prefix fits more than one
//! sweep, or a database holds several and none was named. One format for
//! the coordinator's answers and the offline (`--db`) ones alike.

use std::fmt;

use crate::{format_utc, SweepState, SweepStatus};

/// Digits of an id a listing shows at least ([`crate::short_id`]'s).
const SHORT_ID: usize = 8;

/// One sweep of a [`Listing`]: what tells it from the others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepLine {
    /// Its full id.
    pub sweep_id: String,
    /// Its spec's name.
    pub name: String,
    /// Where it is in its life.
    pub state: SweepState,
    /// Tasks with a result.
    pub tasks_done: u64,
    /// Tasks in it.
    pub tasks_total: u64,
    /// When it was submitted, in milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
}

impl From<&SweepStatus> for SweepLine {
    fn from(s: &SweepStatus) -> SweepLine {
        SweepLine {
            sweep_id: s.sweep_id.clone(),
            name: s.name.clone(),
            state: s.state,
            tasks_done: s.tasks_done,
            tasks_total: s.tasks_total,
            created_unix_ms: s.created_unix_ms,
        }
    }
}

/// Sweeps to choose from, oldest first, shown as an indented table: a
/// short id (8 digits, more where two listed ids share them), name,
/// state, tasks done/total and when each was created.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// The sweeps, in the order shown.
    pub sweeps: Vec<SweepLine>,
}

impl Listing {
    /// A listing of these sweeps.
    pub fn new(sweeps: impl IntoIterator<Item = SweepLine>) -> Listing {
        Listing { sweeps: sweeps.into_iter().collect() }
    }

    /// How many sweeps it lists.
    pub fn len(&self) -> usize {
        self.sweeps.len()
    }

    /// True when it lists none.
    pub fn is_empty(&self) -> bool {
        self.sweeps.is_empty()
    }

    /// The listing read from a database file nothing serves: a sweep
    /// stored as running is `stopped` there ([`SweepState::Stopped`]).
    pub fn unserved(mut self) -> Listing {
        for line in &mut self.sweeps {
            if line.state == SweepState::Running {
                line.state = SweepState::Stopped;
            }
        }
        self
    }

    /// Each sweep's id as shown: its first 8 digits, or as many more as
    /// tell it from every other listed id.
    pub fn short_ids(&self) -> Vec<&str> {
        let ids: Vec<&str> = self.sweeps.iter().map(|s| s.sweep_id.as_str()).collect();
        ids.iter()
            .map(|id| {
                let shared = ids
                    .iter()
                    .filter(|other| *other != id)
                    .map(|other| id.bytes().zip(other.bytes()).take_while(|(a, b)| a == b).count())
                    .max()
                    .unwrap_or(0);
                let digits = (shared + 1).max(SHORT_ID);
                id.get(..digits).unwrap_or(id)
            })
            .collect()
    }
}

impl fmt::Display for Listing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header = ["ID", "NAME", "STATE", "TASKS", "CREATED"].map(String::from);
        let rows: Vec<[String; 5]> = self
            .sweeps
            .iter()
            .zip(self.short_ids())
            .map(|(s, id)| {
                [
                    id.to_string(),
                    s.name.clone(),
                    s.state.name().to_string(),
                    format!("{}/{}", s.tasks_done, s.tasks_total),
                    format_utc(s.created_unix_ms),
                ]
            })
            .collect();
        let widths: Vec<usize> =
            (0..5).map(|i| rows.iter().chain([&header]).map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
        for (i, row) in std::iter::once(&header).chain(&rows).enumerate() {
            let cells: Vec<String> = row.iter().zip(&widths).map(|(c, &w)| format!("{c:<w$}")).collect();
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "  {}", cells.join("  ").trim_end())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: &str, name: &str, state: SweepState, done: u64) -> SweepLine {
        SweepLine {
            sweep_id: id.into(),
            name: name.into(),
            state,
            tasks_done: done,
            tasks_total: 1892,
            created_unix_ms: 1_740_837_600_000,
        }
    }

    #[test]
    fn a_listing_tells_its_sweeps_apart() {
        let listing = Listing::new([
            line("3675248c0011aabb", "quick", SweepState::Done, 1892),
            line("9a8b7c6d00000000", "quick", SweepState::Running, 120),
        ]);
        assert_eq!(
            listing.to_string(),
            "  ID        NAME   STATE    TASKS      CREATED\n\
             \x20 3675248c  quick  done     1892/1892  2025-03-01 14:00:00 UTC\n\
             \x20 9a8b7c6d  quick  running  120/1892   2025-03-01 14:00:00 UTC"
        );
        let offline = listing.unserved();
        assert_eq!(offline.sweeps[1].state, SweepState::Stopped);
        assert_eq!(offline.sweeps[0].state, SweepState::Done, "only a running sweep is stopped");
    }

    #[test]
    fn ids_sharing_eight_digits_are_shown_until_they_differ() {
        let listing = Listing::new([
            line("0123456789abcdef", "a", SweepState::Done, 0),
            line("0123456789abffff", "b", SweepState::Done, 0),
            line("fedcba9876543210", "c", SweepState::Done, 0),
        ]);
        assert_eq!(listing.short_ids(), ["0123456789abc", "0123456789abf", "fedcba98"]);
    }
}
