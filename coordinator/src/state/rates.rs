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
    pub(super) windows: HashMap<String, Windows>,
}

/// One running sweep's windows: tasks a second (what a status shows as its
/// rate) and estimated work a second (what its ETA divides the work left by).
pub(super) struct Windows {
    tasks: sweep::RateWindow,
    work: sweep::RateWindow,
}

impl Windows {
    fn new() -> Windows {
        Windows { tasks: sweep::RateWindow::new(RATE_WINDOW), work: sweep::RateWindow::new(RATE_WINDOW) }
    }
}

/// Window of the rate a status shows.
const RATE_WINDOW: Duration = Duration::from_secs(60);

/// How often ticks sample every running sweep's count.
const RATE_SAMPLE: Duration = Duration::from_secs(2);

impl Shared {
    /// `status` with its live figures: its progress in estimated work, the
    /// rate and the ETA (its counts folded into the sweep's windows first),
    /// and the shards that wait for a worker able to run them. Ended sweeps
    /// have none.
    ///
    /// The ETA is the estimated work left over the estimated work done a
    /// second: a task count would say a sweep is nearly done when its cheap
    /// 2D tasks are, hours before its 4D ones.
    pub fn live(&self, mut status: SweepStatus) -> SweepStatus {
        let running = status.state == SweepState::Running;
        if running {
            let sched = self.scheduler();
            let waiting = sched.waiting_for(&status.sweep_id, now());
            status.waiting = sweep::Waiting {
                shards: waiting.shards,
                memory_bytes: waiting.memory,
                labels: waiting.labels.into_iter().collect(),
                excluded: waiting.excluded,
            };
            status.work = sched.work(&status.sweep_id).or(status.work);
        }
        let mut rates = self.rates.lock().unwrap_or_else(|p| p.into_inner());
        if !running {
            rates.windows.remove(&status.sweep_id);
            return status;
        }
        let at = now().saturating_duration_since(rates.origin);
        let windows = rates.windows.entry(status.sweep_id.clone()).or_insert_with(Windows::new);
        windows.tasks.observe(at, status.tasks_done);
        status.rate_per_sec = windows.tasks.rate();
        status.eta = match status.work {
            // In nanoseconds: a small board's task is well under a microsecond.
            Some(work) => {
                windows.work.observe(at, (work.done_micros * 1e3) as u64);
                windows.work.eta((work.remaining_micros() * 1e3) as u64)
            }
            None => windows.tasks.eta(status.tasks_total.saturating_sub(status.tasks_done)),
        };
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
