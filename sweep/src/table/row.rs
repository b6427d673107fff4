//! The row model: one (configuration, method) aggregate, as the store
//! computes it and every table format reads it.

use serde::{Deserialize, Serialize};
use tour::exists::Claim;
use tour::{Eligibility, Method};

use super::Metric;
use crate::precision::{clopper_pearson, Precision, Standing};
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
    /// Nothing was run on the configuration: no move changes colour (the
    /// colour rule), so no tour of either kind exists and tables print
    /// `n/a`. A board a theorem, the atlas or results prove to have no open
    /// tour is not this: its starts run, and `open_tour` says `impossible`.
    /// Written `not_run` in JSON, beside `open_tour` and `closed_tour`.
    #[serde(rename = "not_run", alias = "impossible")]
    pub impossible: bool,
    /// Tasks with a result.
    pub tasks: u64,
    /// Tasks that found a tour.
    pub successes: u64,
    /// Tasks proven to have no tour from their start (colour rule,
    /// exhaustive search, construction).
    #[serde(default)]
    pub no_tour: u64,
    /// Starts with a result here from which no tour of the kind this
    /// method seeks exists, by any method's proof on the same start (`solve`,
    /// `bt`, `construct`, the colour rule; an open refutation refutes a
    /// closed tour too, a closed one anywhere refutes every start's), or
    /// by the board's claim ([`AggregateRow::board_refuted`]): what the
    /// accuracy among starts from which a tour exists leaves out.
    #[serde(default)]
    pub refuted: u64,
    /// Starts with a result here that no method settled: no tour of this
    /// kind found from them and none refuted. They stay in the accuracy
    /// among starts from which a tour exists, so it is a lower bound. None
    /// where not counted (rows written before it was).
    #[serde(default)]
    pub unsettled: Option<u64>,
    /// The method looked for closed tours.
    #[serde(default)]
    pub closed: bool,
    /// Mean wall time per task, in microseconds.
    #[serde(default, deserialize_with = "null_as_zero")]
    pub mean_micros: f64,
    /// Median wall time per task, in microseconds.
    #[serde(default, deserialize_with = "null_as_zero")]
    pub median_micros: f64,
    /// Mean walks per task (rotations and retries included).
    #[serde(default, deserialize_with = "null_as_zero")]
    pub mean_attempts: f64,
    /// What is proven about open tours on the board: `exists`,
    /// `impossible` or `unknown` ([`tour::exists::known`]).
    #[serde(default)]
    pub open_tour: String,
    /// The same for closed tours.
    #[serde(default)]
    pub closed_tour: String,
    /// With adaptive precision, how the cell stopped; its `tasks` and
    /// `successes` are then the starts its looks counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<CellPrecision>,
}

/// How a cell of a sweep with adaptive precision stands
/// ([`crate::precision`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellPrecision {
    /// The half-width asked for, as a share.
    pub asked: f64,
    /// The interval's low end, as a share: at the sweep's confidence with
    /// the error level spent over the looks (a point when every eligible
    /// start ran).
    pub low: f64,
    /// Its high end.
    pub high: f64,
    /// The cell stopped: no more of its starts will run.
    pub settled: bool,
    /// The half-width reached the one asked (false when the cap stopped
    /// it short, or while it runs).
    pub reached: bool,
}

impl CellPrecision {
    /// The cell as `standing` leaves it, under `precision`.
    pub fn new(precision: &Precision, standing: &Standing) -> CellPrecision {
        let ((low, high), settled, reached) = match *standing {
            Standing::Settled { interval, reached, .. } => (interval, true, reached),
            Standing::Going { n, successes, .. } => {
                (clopper_pearson(successes, n, precision.level_at(n)), false, false)
            }
        };
        CellPrecision { asked: precision.half_width, low, high, settled, reached }
    }

    /// Half the interval's width, as a share.
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }

    /// Stopped at the cap short of the precision.
    pub fn capped(&self) -> bool {
        self.settled && !self.reached
    }
}

impl AggregateRow {
    /// A row for `entry` and `method` with no results yet, in a sweep that
    /// asks for closed tours when `closed` ([`Method::seeks_closed`]).
    pub fn new(entry: &ConfigEntry, method: Method, closed: bool) -> AggregateRow {
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
            refuted: 0,
            unsettled: Some(0),
            closed: method.seeks_closed(closed),
            mean_micros: 0.0,
            median_micros: 0.0,
            mean_attempts: 0.0,
            open_tour: known.open.verdict().to_string(),
            closed_tour: known.closed.verdict().to_string(),
            precision: None,
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

    /// True when no start of the board can give this method a tour: no
    /// open tour exists (a theorem, the atlas, the colour rule), or it
    /// seeks a closed one and none exists.
    pub fn board_refuted(&self) -> bool {
        let impossible = Claim::Impossible("").verdict();
        self.no_open_tour() || self.closed && self.closed_tour == impossible
    }

    /// The starts left out of the accuracy among starts from which a tour
    /// exists: all of them on a refuted board, else those a proof refuted
    /// (this method's own `no-tour`s where the rows predate `refuted`).
    pub fn starts_refuted(&self) -> u64 {
        if self.board_refuted() {
            self.tasks
        } else {
            self.refuted.max(self.no_tour).min(self.tasks)
        }
    }

    /// Successes in percent of the starts from which a tour may exist (not
    /// refuted, [`AggregateRow::starts_refuted`]); None when every start
    /// was refuted (or there are none).
    pub fn accuracy_possible(&self) -> Option<f64> {
        let possible = self.tasks - self.starts_refuted();
        (possible > 0).then(|| 100.0 * self.successes as f64 / possible as f64)
    }

    /// The cell's number under `metric`: None with no tasks, or when every
    /// task was proven impossible (the possible-starts accuracy).
    pub fn value(&self, metric: Metric) -> Option<f64> {
        match metric {
            Metric::Accuracy => self.accuracy(),
            Metric::AccuracyPossible => self.accuracy_possible(),
            Metric::MeanMicros => (self.tasks > 0).then_some(self.mean_micros),
        }
    }

    /// The cell's denominator under `metric`: the tasks counted, which for
    /// the accuracy among starts from which a tour exists leaves out those
    /// refuted.
    pub fn denominator(&self, metric: Metric) -> u64 {
        match metric {
            Metric::AccuracyPossible => self.tasks - self.starts_refuted(),
            _ => self.tasks,
        }
    }

    /// The 95 % Wilson score interval of an accuracy cell, in percent
    /// (with adaptive precision, the accuracy's sequential interval, which
    /// keeps its confidence over the looks); None for times and empty cells.
    pub fn interval(&self, metric: Metric) -> Option<(f64, f64)> {
        match (metric, self.precision) {
            (Metric::MeanMicros, _) => None,
            (Metric::Accuracy, Some(p)) if self.tasks > 0 => Some((100.0 * p.low, 100.0 * p.high)),
            _ => wilson(self.successes, self.denominator(metric)),
        }
    }
}

/// A figure of a cell without results is written as null (see the JSON
/// tables); read back, it is 0 like a fresh row's.
fn null_as_zero<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(0.0))
}

/// The Wilson score interval (95 %, z = 1.96) of `successes` in `n`
/// trials, in percent; None when n is 0. Unlike the normal approximation it
/// stays inside [0, 100] and is not empty at 0 or n successes, which matters
/// for cells of 20 starts.
pub fn wilson(successes: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    const Z: f64 = 1.959_963_984_540_054;
    let (k, n) = (successes.min(n) as f64, n as f64);
    let p = k / n;
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    // At 0 or n successes the bound is 0 or 100 exactly, not 1e-14 off.
    let low = if k == 0.0 { 0.0 } else { 100.0 * (centre - half) };
    let high = if k == n { 100.0 } else { 100.0 * (centre + half) };
    Some((low, high))
}
