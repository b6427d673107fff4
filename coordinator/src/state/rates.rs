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
/// rate) and estimated work a second (what its ETA divides the work left
/// by); and the largest share of its work shown done.
pub(super) struct Windows {
    tasks: sweep::RateWindow,
    work: sweep::WorkRate,
    shown: f64,
}

impl Windows {
    fn new() -> Windows {
        Windows { tasks: sweep::RateWindow::new(RATE_WINDOW), work: sweep::WorkRate::new(RATE_WINDOW), shown: 0.0 }
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
    ///
    /// The share of the work shown done never goes back: when a refit
    /// makes the total grow, it holds until the work catches up (the ETA
    /// is always the latest estimate's).
    pub fn live(&self, mut status: SweepStatus) -> SweepStatus {
        let running = status.state == SweepState::Running;
        let mut now_work = None;
        if running {
            let sched = self.scheduler();
            let waiting = sched.waiting_for(&status.sweep_id, now());
            status.waiting = sweep::Waiting {
                shards: waiting.shards,
                memory_bytes: waiting.memory,
                labels: waiting.labels.into_iter().collect(),
                excluded: waiting.excluded,
                behind: waiting.behind,
            };
            now_work = sched.work_now(&status.sweep_id);
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
        status.eta = match now_work {
            Some(now) => {
                windows.work.observe(at, now.done);
                let eta = windows.work.eta(now.work.remaining_micros(), &now.model);
                status.work = Some(held_share(now.work, &mut windows.shown));
                eta
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

/// `work` with its share done at least `shown` percent (the most shown
/// before), which it becomes.
fn held_share(mut work: sweep::Work, shown: &mut f64) -> sweep::Work {
    if work.percent() < *shown {
        work.done_micros = *shown / 100.0 * work.total_micros;
    }
    *shown = work.percent();
    work
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_shown_never_goes_back() {
        let mut shown = 0.0;
        let work = |done, total| sweep::Work { done_micros: done, total_micros: total, adaptive: None };
        assert_eq!(held_share(work(50.0, 100.0), &mut shown).percent(), 50.0);
        // The total grew (a refit): held at 50 % until the work catches up.
        let held = held_share(work(60.0, 200.0), &mut shown);
        assert_eq!((held.percent(), held.total_micros), (50.0, 200.0));
        assert_eq!(held_share(work(150.0, 200.0), &mut shown).percent(), 75.0);
    }
}
