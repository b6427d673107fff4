//! Where a sweep stands, as every table, export and figure says it: a
//! table of a half-done sweep must not read as a finished one.

use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A sweep's state and task counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// `running`, `done`, `cancelled` or `failed`.
    pub state: String,
    /// Tasks with a result.
    pub tasks_done: u64,
    /// Tasks in the sweep.
    pub tasks_total: u64,
    /// Shards that failed (their tasks have no result).
    pub shards_failed: u64,
}

impl Progress {
    /// Done, with every task's result and no failed shard.
    pub fn is_finished(&self) -> bool {
        self.state == "done" && self.tasks_done >= self.tasks_total && self.shards_failed == 0
    }

    /// The state as data columns carry it: the state's name, except that a
    /// sweep marked done with results missing is `incomplete`.
    pub fn state_label(&self) -> &str {
        if self.state == "done" && !self.is_finished() {
            "incomplete"
        } else {
            &self.state
        }
    }

    /// One line saying the sweep is unfinished and how far it got; None
    /// when it is finished.
    pub fn warning(&self) -> Option<String> {
        if self.is_finished() {
            return None;
        }
        let pct = if self.tasks_total > 0 { 100.0 * self.tasks_done as f64 / self.tasks_total as f64 } else { 0.0 };
        let failed = match self.shards_failed {
            0 => String::new(),
            1 => "; 1 shard failed".into(),
            n => format!("; {n} shards failed"),
        };
        Some(format!(
            "UNFINISHED sweep ({}): {} of {} tasks have results ({pct:.1} %){failed}; figures cover only those",
            self.state_label(),
            self.tasks_done,
            self.tasks_total
        ))
    }
}

/// Throughput over a sliding window of (time, tasks done) samples: the
/// rate a progress display shows. After a resume or a late attach it is
/// the rate since the first sample, never tasks done over a few seconds.
/// Time is passed in (any monotonic origin), so it tests without a clock.
#[derive(Clone, Debug)]
pub struct RateWindow {
    window: Duration,
    samples: VecDeque<(Duration, u64)>,
}

/// Shortest span a rate is computed over: a rate from two samples a few
/// milliseconds apart says nothing.
pub(crate) const MIN_SPAN: Duration = Duration::from_secs(2);

impl RateWindow {
    /// A window of `window` (a minute, say).
    pub fn new(window: Duration) -> RateWindow {
        RateWindow { window, samples: VecDeque::new() }
    }

    /// Records `done` tasks at time `at`; samples older than the window
    /// (but the newest such, which anchors the window's start) go.
    pub fn observe(&mut self, at: Duration, done: u64) {
        if self.samples.back().is_some_and(|&(t, d)| at < t || done < d) {
            // Time or count went back (a restart): start over.
            self.samples.clear();
        }
        self.samples.push_back((at, done));
        while self.samples.len() > 2 && at.saturating_sub(self.samples[1].0) >= self.window {
            self.samples.pop_front();
        }
    }

    /// Tasks per second over the window; None until it spans at least two
    /// seconds.
    pub fn rate(&self) -> Option<f64> {
        let (&(t0, d0), &(t1, d1)) = (self.samples.front()?, self.samples.back()?);
        let span = t1.checked_sub(t0)?;
        (span >= MIN_SPAN).then(|| (d1 - d0) as f64 / span.as_secs_f64())
    }

    /// Time to finish `remaining` tasks at [`RateWindow::rate`]; None with
    /// no rate yet or none at all (nothing done in the window).
    pub fn eta(&self, remaining: u64) -> Option<Duration> {
        let rate = self.rate().filter(|&r| r > 0.0)?;
        Some(Duration::from_secs_f64(remaining as f64 / rate))
    }
}

/// A rate for people: `850 tasks/s`, `12.5k tasks/s`, `0.3 tasks/s`.
pub fn format_rate(per_sec: f64) -> String {
    match per_sec {
        r if r >= 1e6 => format!("{:.1}M tasks/s", r / 1e6),
        r if r >= 1e4 => format!("{:.0}k tasks/s", r / 1e3),
        r if r >= 1e3 => format!("{:.1}k tasks/s", r / 1e3),
        r if r >= 10.0 => format!("{r:.0} tasks/s"),
        r => format!("{r:.1} tasks/s"),
    }
}

/// A time left for people, to the unit that matters: `45 s`, `4 min 35 s`
/// (to 5 s under ten minutes, where a rounded minute is a large share of
/// what is left), `12 min`, `3 h 20 min`, `2 d 5 h`.
pub fn format_eta(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        60..600 => {
            let s = (s + 2) / 5 * 5;
            format!("{} min {} s", s / 60, s % 60)
        }
        600..3600 => format!("{} min", (s + 30) / 60),
        _ => format_duration(Duration::from_secs(s)),
    }
}

/// A measured duration for people, in its two largest units: `38 ms`,
/// `4.2 s`, `45 s`, `2 min 13 s`, `3 h 20 min`, `2 d 5 h`.
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => format!("{} ms", d.as_millis()),
        1..10 => format!("{:.1} s", d.as_secs_f64()),
        10..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        3600..86400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        _ => format!("{} d {} h", s / 86400, s % 86400 / 3600),
    }
}

/// A time in milliseconds since the Unix epoch as UTC, to the second:
/// `2025-03-01 14:02:11 UTC` (the proleptic Gregorian calendar, computed
/// here rather than with a date crate for this one line).
pub fn format_utc(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (days, day_secs) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days, on days since 1970-01-01 (unsigned:
    // no time here is before the epoch).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    let (h, m, s) = (day_secs / 3600, day_secs % 3600 / 60, day_secs % 60);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02} UTC")
}

/// [`format_utc`] to the minute, without the zone: `2025-03-01 14:02`,
/// for a column headed `(UTC)`.
pub fn format_utc_minutes(unix_ms: u64) -> String {
    let mut text = format_utc(unix_ms);
    // `YYYY-MM-DD HH:MM`: the first 16 characters, all ASCII.
    text.truncate(16);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn the_rate_is_over_the_window_not_since_the_start() {
        let mut w = RateWindow::new(secs(60));
        // A resumed sweep: 90,000 tasks were done before this process.
        w.observe(secs(1000), 90_000);
        assert_eq!(w.rate(), None, "one sample is no rate");
        assert_eq!(w.eta(10_000), None, "and no ETA");
        w.observe(secs(1001), 90_010);
        assert_eq!(w.rate(), None, "a second is too short to tell");
        w.observe(secs(1010), 90_100);
        assert_eq!(w.rate(), Some(10.0), "100 tasks in 10 s, not 90,100 in 10 s");
        assert_eq!(w.eta(9_900), Some(secs(990)));
        // The rate halves; a minute later the window holds only the slow part.
        for t in 1..=80 {
            w.observe(secs(1010 + t), 90_100 + 5 * t);
        }
        assert_eq!(w.rate(), Some(5.0));
    }

    #[test]
    fn no_eta_before_work_starts_and_a_restart_starts_over() {
        let mut w = RateWindow::new(secs(60));
        w.observe(secs(0), 0);
        w.observe(secs(30), 0);
        assert_eq!(w.rate(), Some(0.0));
        assert_eq!(w.eta(100), None, "nothing done: no ETA");
        w.observe(secs(5), 0); // a clock that went back
        assert_eq!(w.rate(), None);
    }

    #[test]
    fn rates_and_durations_read_well() {
        assert_eq!(format_rate(0.25), "0.2 tasks/s");
        assert_eq!(format_rate(850.4), "850 tasks/s");
        assert_eq!(format_rate(1234.0), "1.2k tasks/s");
        assert_eq!(format_rate(56_789.0), "57k tasks/s");
        assert_eq!(format_eta(secs(45)), "45 s");
        assert_eq!(format_eta(secs(725)), "12 min");
        assert_eq!(format_eta(secs(278)), "4 min 40 s", "no minute rounded away near the end");
        assert_eq!(format_eta(secs(61)), "1 min 0 s");
        assert_eq!(format_eta(secs(12_000)), "3 h 20 min");
        assert_eq!(format_eta(secs(190_000)), "2 d 4 h");
        assert_eq!(format_duration(Duration::from_micros(420)), "0 ms");
        assert_eq!(format_duration(Duration::from_millis(38)), "38 ms");
        assert_eq!(format_duration(Duration::from_millis(4_240)), "4.2 s");
        assert_eq!(format_duration(Duration::from_millis(9_960)), "10.0 s");
        assert_eq!(format_duration(secs(45)), "45 s");
        assert_eq!(format_duration(secs(133)), "2 min 13 s");
        assert_eq!(format_duration(secs(12_000)), "3 h 20 min");
        assert_eq!(format_duration(secs(190_000)), "2 d 4 h");
    }

    #[test]
    fn utc_times_read_as_calendar_dates() {
        assert_eq!(format_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_utc(951_782_400_000), "2000-02-29 00:00:00 UTC", "a leap day of a 400-year leap year");
        assert_eq!(format_utc(1_709_251_199_999), "2024-02-29 23:59:59 UTC");
        assert_eq!(format_utc(1_740_837_731_000), "2025-03-01 14:02:11 UTC");
        assert_eq!(format_utc(4_102_444_800_000), "2100-01-01 00:00:00 UTC");
        assert_eq!(format_utc_minutes(1_740_837_731_000), "2025-03-01 14:02");
    }

    fn progress(state: &str, done: u64, total: u64, failed: u64) -> Progress {
        Progress { state: state.into(), tasks_done: done, tasks_total: total, shards_failed: failed }
    }

    #[test]
    fn only_a_done_sweep_with_every_result_is_finished() {
        assert_eq!(progress("done", 40, 40, 0).warning(), None);
        for p in [progress("running", 10, 40, 0), progress("cancelled", 40, 40, 0), progress("done", 39, 40, 0)] {
            assert!(!p.is_finished(), "{p:?}");
        }
        let w = progress("failed", 30, 40, 2).warning().unwrap();
        assert!(w.contains("UNFINISHED sweep (failed): 30 of 40 tasks have results (75.0 %); 2 shards failed"), "{w}");
        assert_eq!(progress("done", 39, 40, 0).state_label(), "incomplete");
        assert_eq!(progress("done", 40, 40, 0).state_label(), "done");
    }
}
