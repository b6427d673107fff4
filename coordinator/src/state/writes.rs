//! Whether the database takes writes: health reports NOT_SERVING while it
//! refuses them (a full or read-only disk).

use std::sync::atomic::Ordering;

use super::Shared;
use crate::error::Result;

impl Shared {
    /// Remembers whether the database took the last write: health reports
    /// NOT_SERVING while writes fail (a full or read-only disk).
    pub(super) fn note_write<T>(&self, result: &Result<T>) {
        let failing = result.is_err();
        if self.writes_failing.swap(failing, Ordering::Relaxed) != failing {
            match result {
                Err(e) => tracing::error!(error = %e, "the database refuses writes; results wait until it takes them"),
                Ok(_) => tracing::info!("the database takes writes again"),
            }
        }
    }

    /// True while the database refuses writes.
    pub fn writes_failing(&self) -> bool {
        self.writes_failing.load(Ordering::Relaxed)
    }

    /// Tries a small write (the start time), so health tells whether the
    /// database takes writes before any worker finds out by failing: at
    /// start, and on every tick while writes fail with nothing else to retry.
    pub async fn probe_writes(&self) -> Result<()> {
        let written = self.with_store(|s| s.note_start()).await;
        self.note_write(&written);
        written
    }
}
