//! Task times in CPU time, not a thread's wall time: a task's clock (the
//! engine's `micros`) runs on while the thread waits for a core, so on a
//! machine with more runnable threads than cores every task, and every
//! table of times, came out slower than it ran (5 min 44 s of "CPU" against
//! 186 s of user time, two threads sharing a core with a build).
//!
//! Reading the thread's CPU clock is a system call (0.1 to 2 µs, more than
//! a small board's whole task), so it is read once a window of at least
//! [`WINDOW`] of batches, and the tasks that ran in the window have their
//! wall times scaled by the share of it the thread was on a core. The
//! scaled times add up to the thread's CPU time over the window, whatever
//! the batches.

use std::time::{Duration, Instant};

/// The shortest span between two reads of the thread's CPU clock.
pub const WINDOW: Duration = Duration::from_millis(2);

/// This thread's CPU time, where the system has a per-thread CPU clock.
/// The one unsafe call of the worker: std has no thread CPU clock.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn thread_cpu_time() -> Option<Duration> {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid, writable timespec for the call to fill;
    // clock_gettime reads nothing else of ours.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    (status == 0).then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
}

/// No per-thread CPU clock here: task times stay wall times.
#[cfg(not(unix))]
pub fn thread_cpu_time() -> Option<Duration> {
    None
}

/// One thread's window of task results waiting to be scaled from wall
/// time to CPU time. `T` is whatever carries a task's micros; the caller
/// says how to scale one ([`scale`] does the arithmetic).
pub struct CpuWindow<T> {
    since: Instant,
    cpu_since: Option<Duration>,
    pending: Vec<T>,
    read_cpu: fn() -> Option<Duration>,
}

impl<T> CpuWindow<T> {
    /// A window opening now, on the system's thread clock.
    pub fn start() -> CpuWindow<T> {
        CpuWindow::with_clock(thread_cpu_time)
    }

    /// A window on `read_cpu` (a test's clock).
    pub fn with_clock(read_cpu: fn() -> Option<Duration>) -> CpuWindow<T> {
        CpuWindow { since: Instant::now(), cpu_since: read_cpu(), pending: Vec::new(), read_cpu }
    }

    /// Holds `results` of a batch that ran in this window. When the window
    /// is at least [`WINDOW`] long, returns every result it holds, each
    /// scaled to CPU time by `scale_by(result, share)`; otherwise nothing yet.
    pub fn add(&mut self, results: impl IntoIterator<Item = T>, scale_by: impl Fn(&mut T, f64)) -> Vec<T> {
        self.pending.extend(results);
        if self.since.elapsed() < WINDOW {
            return Vec::new();
        }
        self.flush(scale_by)
    }

    /// Every result held, scaled by the share of the window the thread was
    /// on a core (1 where that cannot be told); the next window opens now.
    pub fn flush(&mut self, scale_by: impl Fn(&mut T, f64)) -> Vec<T> {
        let (now, cpu_now) = (Instant::now(), (self.read_cpu)());
        let wall = now.saturating_duration_since(self.since);
        let share = match (self.cpu_since, cpu_now) {
            (Some(a), Some(b)) if !wall.is_zero() => (b.saturating_sub(a).as_secs_f64() / wall.as_secs_f64()).min(1.0),
            _ => 1.0,
        };
        (self.since, self.cpu_since) = (now, cpu_now);
        let mut out = std::mem::take(&mut self.pending);
        if share < 1.0 {
            for r in &mut out {
                scale_by(r, share);
            }
        }
        out
    }
}

/// `micros` scaled by `share`, to the nearest microsecond.
pub fn scale(micros: &mut u64, share: f64) {
    *micros = (*micros as f64 * share).round() as u64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_clock_counts_work_not_sleep() {
        let Some(before) = thread_cpu_time() else {
            eprintln!("skipped: no per-thread CPU clock on this system");
            return;
        };
        std::thread::sleep(Duration::from_millis(50));
        let slept = thread_cpu_time().unwrap() - before;
        assert!(slept < Duration::from_millis(20), "asleep 50 ms, {slept:?} of CPU");
        let began = Instant::now();
        let mut x = 1u64;
        while began.elapsed() < Duration::from_millis(30) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let worked = thread_cpu_time().unwrap() - before - slept;
        assert!(worked >= Duration::from_millis(10), "30 ms of work, {worked:?} of CPU");
    }

    /// A clock that gains 1 ms of CPU at every read.
    fn one_ms_a_read() -> Option<Duration> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static READS: AtomicU64 = AtomicU64::new(0);
        Some(Duration::from_micros(READS.fetch_add(1, Ordering::Relaxed) * 1_000))
    }

    #[test]
    fn held_results_scale_to_the_share_of_the_window_on_a_core() {
        let mut window: CpuWindow<u64> = CpuWindow::with_clock(one_ms_a_read);
        let mut out = window.add([400, 400], scale);
        std::thread::sleep(Duration::from_millis(4));
        out.extend(window.add([200], scale));
        assert_eq!(out.len(), 3, "every result comes out once its window closes: {out:?}");
        // 1 ms of CPU a window of at least WINDOW (2 ms): half at most; the
        // last window spans the 4 ms sleep: a quarter at most.
        assert!(out[0] <= 200 && out[2] <= 50, "{out:?}");
        assert!(out.iter().all(|&m| m > 0), "scaled, not zeroed: {out:?}");
    }

    #[test]
    fn without_a_thread_clock_times_stay_wall_times() {
        let mut window: CpuWindow<u64> = CpuWindow::with_clock(|| None);
        std::thread::sleep(WINDOW);
        assert_eq!(window.add([7, 9], scale), [7, 9]);
        assert_eq!(window.flush(scale), Vec::<u64>::new());
    }
}
