//! Helpers of the end-to-end tests: `ksweep` child processes that are always
//! killed (even when a test panics), client commands bounded in time, status
//! polling with deadlines, and the embedded (`ksweep run`) reference results
//! the distributed runs are compared with.
//!
//! Every service writes its stderr (RUST_LOG=info) to a file in the test's
//! temporary directory; when a test fails, the [`Cluster`] prints them all.

pub mod cgroup;

mod binary;
mod cluster;
mod compare;
mod pki;
mod process;
mod status;

pub use binary::KSWEEP;
pub use cluster::{assert_matches_reference, Cluster};
pub use compare::{assert_lines_equal, assert_tables_equal, csv_fields, reference, strip_timing, Export, Reference};
pub use pki::{write_test_pki, TestPki};
pub use process::{plain, run_ksweep, run_ksweep_in, tail, Output, Proc};
pub use status::{listening_port, parse_statuses, Status};

use std::time::Duration;

/// A sweep of a few seconds of CPU: the (2,1) knight on N^2 and N^3 boards,
/// N = 5..40, 30 starts, five methods (one of them random, seeded): 10,690
/// tasks, the late (large 3D) configurations the most expensive.
pub const SPEC_MEDIUM: &str = r#"
name = "e2e-medium"
seed = 7
starts = 30
methods = ["w", "w+", "aw", "aw+", "wr"]

[[grid]]
rule = [2, 1]
dims = [2, 3]
n_range = { from = 5, to = 40 }
"#;

/// A tiny sweep (milliseconds of work).
pub const SPEC_TINY: &str = r#"
name = "e2e-tiny"
seed = 11
starts = 6
methods = ["w", "aw+"]

[[grid]]
rule = [2, 1]
dims = [2]
n = [5, 6, 7, 8]
"#;

/// How long one client command (submit, status, table, export...) may take.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);
