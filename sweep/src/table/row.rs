//! The row model: one (configuration, method) aggregate, as the store
//! computes it and every table format reads it.

use serde::{Deserialize, Serialize};
use tour::exists::Claim;
use tour::{Eligibility, Method};

use crate::sweep::ConfigEntry;

/// One (configuration, method) aggregate over its starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AggregateRow {
    /// The configuration's index in the sweep.
    pub config: u32,
    /// The move set's label (`"3,2"`, or an explicit list).
    pub moves: String,
    /// Axes of the board.
    pub dims: u32,
    /// The board's sides, `"5x5"`.
    pub shape: String,
    /// Some(N) for a regular N^D board.
    pub n: Option<u32>,
    /// The method's name (`"aw+"`).
    pub method: String,
    /// No tour can exist on the configuration, so nothing was run.
    pub impossible: bool,
    /// Tasks with a result.
    pub tasks: u64,
    /// Tasks that found a tour.
    pub successes: u64,
    /// Tasks proven to have no tour from their start (colour rule,
    /// exhaustive search, construction).
    #[serde(default)]
    pub no_tour: u64,
    /// Mean wall time per task, in microseconds.
    pub mean_micros: f64,
    /// Median wall time per task, in microseconds.
    pub median_micros: f64,
    /// Mean walks per task (rotations and retries included).
    pub mean_attempts: f64,
    /// What is proven about open tours on the board: `exists`,
    /// `impossible` or `unknown` ([`tour::exists::known`]).
    #[serde(default)]
    pub open_tour: String,
    /// The same for closed tours.
    #[serde(default)]
    pub closed_tour: String,
}

impl AggregateRow {
    /// A row for `entry` and `method` with no results yet.
    pub fn new(entry: &ConfigEntry, method: Method) -> AggregateRow {
        let known = entry.existence();
        AggregateRow {
            config: entry.index,
            moves: entry.moves_label(),
            dims: entry.dims() as u32,
            shape: entry.shape_label(),
            n: entry.n(),
            method: method.name().to_string(),
            impossible: entry.eligibility() == Eligibility::Impossible,
            tasks: 0,
            successes: 0,
            no_tour: 0,
            mean_micros: 0.0,
            median_micros: 0.0,
            mean_attempts: 0.0,
            open_tour: known.open.verdict().to_string(),
            closed_tour: known.closed.verdict().to_string(),
        }
    }

    /// True when a theorem (or the colour rule) rules out every open tour
    /// on the board, so no start can succeed.
    pub fn no_open_tour(&self) -> bool {
        self.open_tour == Claim::Impossible("").verdict()
    }

    /// Successes in percent of tasks; None when there are no tasks.
    pub fn accuracy(&self) -> Option<f64> {
        (self.tasks > 0).then(|| 100.0 * self.successes as f64 / self.tasks as f64)
    }

    /// Successes in percent of the tasks not proven impossible; None when
    /// every task was (or there are none), the board's theorems included.
    pub fn accuracy_possible(&self) -> Option<f64> {
        if self.no_open_tour() {
            return None;
        }
        let possible = self.tasks.saturating_sub(self.no_tour);
        (possible > 0).then(|| 100.0 * self.successes as f64 / possible as f64)
    }
}
