//! # sweep: knight-sweep's sweeps, from spec to tables
//!
//! Pure logic shared by the coordinator and the CLI (no async, no I/O):
//!
//! - [`spec`]: the TOML sweep spec and its field checks;
//! - [`Sweep`]: a validated spec expanded into configurations, with a
//!   content id and an exact task count;
//! - [`Planner`]: cuts the task grid into shards from a [`Cursor`], lazily,
//!   so no sweep is ever held as a task list;
//! - [`render`]: the report's accuracy and timing tables;
//! - [`SweepStatus`] and [`ResultRow`]: the read model the coordinator
//!   serves and the CLI prints (the wire's messages convert to and from
//!   them in `ksweep_proto::convert` only).
//!
//! ```
//! use sweep::{Cursor, Planner, Sweep};
//!
//! let sweep = Sweep::parse(r#"
//!     name = "demo"
//!     seed = 7
//!     starts = 10
//!     methods = ["w", "aw+"]
//!     [[grid]]
//!     rule = [2, 1]
//!     dims = [2]
//!     n = [5, 6]
//! "#)?;
//! // 5x5: 13 eligible starts (odd board), 6x6: 36; S = 10 each, 2 methods.
//! assert_eq!(sweep.total_tasks(), 2 * 10 * 2);
//!
//! let planner = Planner::new(&sweep);
//! let mut cursor = Cursor::default();
//! let shard = planner.next_shard(&mut cursor, 1e9).expect("work to plan");
//! assert_eq!((shard.config, shard.start_lo, shard.start_hi), (0, 0, 10));
//! let cells = planner.starts(shard.config); // start index i is cell cells[i]
//! assert_eq!(cells.len(), 10);
//! # Ok::<(), sweep::SpecError>(())
//! ```

#![warn(missing_docs)]

mod cursor;
mod diff;
mod error;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
pub mod labels;
mod listing;
mod plan;
pub mod precision;
mod progress;
mod removal;
pub mod replay;
mod result_row;
mod reuse;
pub mod spec;
mod starts;
mod status;
mod sweep;
mod table;
mod task_report;
mod work;

pub use cursor::Cursor;
pub use diff::{DiffBuilder, DiffRow, DiffSummary, Side, SpecChange, StartDiff, SweepDiff, Tally};
pub use error::SpecError;
pub use listing::{Listing, SweepLine};
pub use plan::{Planner, ShardPlan};
pub use progress::{format_duration, format_eta, format_rate, format_utc, format_utc_minutes, Progress, RateWindow};
pub use removal::Removal;
pub use result_row::ResultRow;
pub use reuse::{MethodSet, Reused};
pub use spec::{GridSpec, Limits, NRange, SweepSpec, MAX_CONFIGURATIONS, MAX_SPEC_BYTES};
pub use starts::{parse_start_line, StartLineError};
pub use status::{
    build_label, short_id, Contributor, FailedShard, Reuse, ReusedFrom, RunTimes, SweepState, SweepStatus, Waiting,
};
pub use sweep::{
    board_moves, board_moves_configuration, board_moves_of, identity_dims, identity_seeks_closed, ConfigEntry,
    MoveSpec, MovesKind, Sweep,
};
pub use table::{
    csv, first_appearances, html_escape, markdown_text, render, wilson, AggregateRow, CellPrecision, Metric,
    TableFormat, TableLayout, TableOptions, IMPOSSIBLE,
};
pub use task_report::{TaskReport, TaskSummary};
pub use work::{
    least_micros_to_run, micros_to_run, Cells, CostModel, DoneCounts, TaskPrice, Work, WorkNow, WorkRate, WorkTally,
};
