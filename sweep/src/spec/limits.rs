//! `[limits]`: the bounds a spec sets on itself, and the caps a server
//! holds every spec to.

use serde::{Deserialize, Serialize};

/// Upper bounds a spec sets on itself, so a typo cannot ask for years of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Cells of one board.
    pub max_cells: u64,
    /// Starts x methods over the whole sweep.
    pub max_tasks: u64,
    /// (move set, board) pairs.
    pub max_configurations: u64,
    /// `budget` of one `bt` or `solve` task: a task runs until its budget
    /// is spent, pinning a worker's thread (1e10 is about an hour of `bt`
    /// on a board of 144 cells).
    pub max_budget: u64,
    /// `iterations` of one `nn` task (at most [`MAX_ITERATIONS`]).
    pub max_iterations: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_cells: tour::DEFAULT_MAX_CELLS,
            max_tasks: 10_000_000_000,
            max_configurations: 1_000_000,
            max_budget: 100 * tour::DEFAULT_BUDGET,
            max_iterations: 100 * tour::DEFAULT_ITERATIONS,
        }
    }
}

impl Limits {
    /// No limit at all: the caps of a coordinator that serves only its own
    /// user's specs (`ksweep run`), which holds each spec to its own.
    pub const UNCAPPED: Limits = Limits {
        max_cells: u64::MAX,
        max_tasks: u64::MAX,
        max_configurations: u64::MAX,
        max_budget: u64::MAX,
        max_iterations: u32::MAX,
    };

    /// Each limit lowered to at most `caps`'s: what a server that accepts
    /// specs from others (the coordinator) allows whatever a spec asks for.
    pub fn capped(self, caps: &Limits) -> Limits {
        Limits {
            max_cells: self.max_cells.min(caps.max_cells),
            max_tasks: self.max_tasks.min(caps.max_tasks),
            max_configurations: self.max_configurations.min(caps.max_configurations),
            max_budget: self.max_budget.min(caps.max_budget),
            max_iterations: self.max_iterations.min(caps.max_iterations),
        }
    }
}

/// Largest `iterations` accepted for the nn methods.
pub const MAX_ITERATIONS: u32 = 1_000_000;
