//! Each running sweep's throughput and ETA, as statuses show them.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use sweep::{SweepState, SweepStatus};

use super::{now, Shared};
use crate::error::Result;

/// The sweeps' rate windows and when they were last sampled together.
pub(super) struct Rates {
    pub(super) origin: Instant,
    pub(super) sampled: Option<Instant>,
    pub(super) windows: HashMap<String, sweep::RateWindow>,
}

/// Window of the rate a status shows.
const RATE_WINDOW: Duration = Duration::from_secs(60);

/// How often ticks sample every running sweep's count.
const RATE_SAMPLE: Duration = Duration::from_secs(2);

impl Shared {
    /// `status` with its live figures: the rate and ETA (its count folded
    /// into the sweep's window first), and the shards that wait for a
    /// worker able to run them. Ended sweeps have none.
    pub fn live(&self, mut status: SweepStatus) -> SweepStatus {
        let running = status.state == SweepState::Running;
        if running {
            let waiting = self.scheduler().waiting_for(&status.sweep_id);
            status.waiting = sweep::Waiting {
                shards: waiting.shards,
                memory_bytes: waiting.memory,
                labels: waiting.labels.into_iter().collect(),
            };
        }
        let mut rates = self.rates.lock().unwrap_or_else(|p| p.into_inner());
        if !running {
            rates.windows.remove(&status.sweep_id);
            return status;
        }
        let at = now().saturating_duration_since(rates.origin);
        let window =
            rates.windows.entry(status.sweep_id.clone()).or_insert_with(|| sweep::RateWindow::new(RATE_WINDOW));
        window.observe(at, status.tasks_done);
        status.rate_per_sec = window.rate();
        status.eta = window.eta(status.tasks_total.saturating_sub(status.tasks_done));
        status
    }

    /// Samples every running sweep's count, at most every RATE_SAMPLE, so
    /// a rate is ready when a status is first asked for.
    pub(super) async fn sample_rates(&self) -> Result<()> {
        {
            let mut rates = self.rates.lock().unwrap_or_else(|p| p.into_inner());
            if rates.sampled.is_some_and(|t| now().saturating_duration_since(t) < RATE_SAMPLE) {
                return Ok(());
            }
            rates.sampled = Some(now());
        }
        let statuses = self.read(crate::query::sweeps).await?;
        for status in statuses {
            self.live(status);
        }
        Ok(())
    }
}
