//! A position in a sweep's task grid, where planning stands: shared by the
//! planner, which advances it, and the sweep, which prices what lies after
//! it.

use serde::{Deserialize, Serialize};

/// Where planning stands: the next unplanned start index of
/// `configurations()[config]`. `Cursor::default()` is the beginning; a
/// coordinator stores it to resume planning after a restart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Cursor {
    /// Index of the configuration planning is in.
    pub config: u32,
    /// Its next unplanned start index.
    pub start: u64,
}
