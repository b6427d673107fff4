//! What a task found: a tour, a proof that none exists from the start, or
//! nothing conclusive. `success` stays "a tour was found"; the outcome tells
//! a method's failure apart from an impossible start.

use std::fmt;

/// The outcome of one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// A tour was found (and verified where the method returns a path).
    Tour,
    /// Proven: no tour exists from this start (colour rule, exhaustive
    /// search, or a theorem).
    NoTour,
    /// Neither: a heuristic failed or a budget ran out.
    GaveUp,
}

impl Outcome {
    /// The name results and tables use.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Tour => "tour",
            Outcome::NoTour => "no-tour",
            Outcome::GaveUp => "gave-up",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
