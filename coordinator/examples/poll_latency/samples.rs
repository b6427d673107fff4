//! Latencies seen while measuring, and their percentiles.

use std::time::Duration;

/// Latencies seen while measuring.
#[derive(Default)]
pub struct Samples {
    pub measuring: bool,
    pub polls: Vec<Duration>,
    /// Polls that carried results, and those that did not.
    pub result_polls: Vec<Duration>,
    pub other_polls: Vec<Duration>,
    pub late_polls: usize,
    pub statuses: Vec<Duration>,
    pub pages: Vec<Duration>,
    pub downloads: Vec<Duration>,
}

impl Samples {
    /// Notes a poll that took `took`, carried results or not, and came
    /// past the worker's call deadline or not; only while measuring.
    pub fn note_poll(&mut self, took: Duration, carried: bool, late: bool) {
        if !self.measuring {
            return;
        }
        self.polls.push(took);
        if carried {
            self.result_polls.push(took);
        } else {
            self.other_polls.push(took);
        }
        self.late_polls += usize::from(late);
    }
}

pub fn percentiles(name: &str, v: &mut [Duration]) {
    if v.is_empty() {
        println!("{name}: none");
        return;
    }
    v.sort();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3;
    println!(
        "{name}: n={} p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        v.len(),
        at(0.5),
        at(0.95),
        at(0.99),
        at(1.0)
    );
}
