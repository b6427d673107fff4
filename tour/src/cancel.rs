//! Stopping a running task from another thread: a flag the long-running
//! methods (`bt`, `solve`, the `nn` methods) poll from the work counters
//! their budgets already keep, about every millisecond ([`Poll`]). The
//! Warnsdorff walks never poll: they are bounded by the board, nanoseconds
//! a cell.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A handle on a flag another thread raises to stop the tasks given it
/// ([`crate::Runner::run_task_cancellable`]). Cheap to copy.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cancel<'a> {
    flag: Option<&'a AtomicBool>,
    polls: Option<&'a AtomicU64>,
}

/// A task stopped because its [`Cancel`] flag was raised: it has no result,
/// not even a "gave up" (nothing was learnt about the start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the task was cancelled")]
pub struct Cancelled;

impl<'a> Cancel<'a> {
    /// A flag nobody raises: the task runs to its end.
    pub const NEVER: Cancel<'static> = Cancel { flag: None, polls: None };

    /// Stops the tasks given it once `flag` is true.
    pub fn new(flag: &'a AtomicBool) -> Cancel<'a> {
        Cancel { flag: Some(flag), polls: None }
    }

    /// The same, counting every poll in `polls`: a task that polls is
    /// working, which whoever watches the count can tell from one that is
    /// stuck.
    pub fn counting(self, polls: &'a AtomicU64) -> Cancel<'a> {
        Cancel { polls: Some(polls), ..self }
    }

    /// True once the flag is raised.
    pub fn is_raised(self) -> bool {
        self.flag.is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// A poll from a running task: counted, then the flag read.
    fn poll(self) -> bool {
        if let Some(polls) = self.polls {
            polls.fetch_add(1, Ordering::Relaxed);
        }
        self.is_raised()
    }
}

/// Runs `f` with a flag raised once `limit` has passed (at once for a
/// zero limit), and returns as soon as `f` does: the timer thread ends
/// with it, so calls in a loop leave no sleeping threads behind.
pub fn within<T>(limit: Duration, f: impl FnOnce(Cancel) -> T) -> T {
    let stop = AtomicBool::new(limit.is_zero());
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let flag = &stop;
    std::thread::scope(|scope| {
        scope.spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(limit) {
                flag.store(true, Ordering::Relaxed);
            }
        });
        let out = f(Cancel::new(flag));
        drop(done);
        out
    })
}

/// Wall time a running task aims to leave between two polls.
const POLL_GAP: Duration = Duration::from_millis(1);
/// Units of work before a task's first poll after its start.
const FIRST_POLL: u64 = 1 << 10;

/// A [`Cancel`] polled from one monotone work counter. A unit of work
/// costs from a nanosecond (a walk step) to over a hundred (a neuron
/// update on a board of a million cells, out of cache), so the units
/// between polls adapt, doubling or halving, to about [`POLL_GAP`] of wall
/// time: one comparison a unit, and a clock read and a flag read a
/// millisecond. Once it has seen the flag raised it stays stopped, so
/// every loop of a method ends as if its budget were spent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Poll<'a> {
    cancel: Cancel<'a>,
    /// The counter value of the next poll.
    next: u64,
    every: u64,
    last: Option<Instant>,
    stopped: bool,
}

impl<'a> Poll<'a> {
    /// A poll that looks at the flag on its first call.
    pub(crate) fn new(cancel: Cancel<'a>) -> Poll<'a> {
        Poll { cancel, next: 0, every: FIRST_POLL, last: None, stopped: false }
    }

    /// True when the task should stop, its counter standing at `work`.
    #[inline]
    pub(crate) fn stop(&mut self, work: u64) -> bool {
        if work >= self.next {
            self.poll(work);
        }
        self.stopped
    }

    #[cold]
    fn poll(&mut self, work: u64) {
        if self.cancel.flag.is_none() {
            // Nothing can stop it: never look again.
            self.next = u64::MAX;
            return;
        }
        let now = Instant::now();
        if let Some(gap) = self.last.map(|last| now.saturating_duration_since(last)) {
            if gap < POLL_GAP / 2 {
                self.every = self.every.saturating_mul(2);
            } else if gap > POLL_GAP * 2 {
                self.every = (self.every / 2).max(1);
            }
        }
        self.last = Some(now);
        self.next = work.saturating_add(self.every);
        self.stopped = self.cancel.poll();
    }
}

/// The result of a run that [`Cancel::NEVER`] cannot have stopped.
pub(crate) fn uncancelled<T>(r: Result<T, Cancelled>) -> T {
    match r {
        Ok(t) => t,
        Err(Cancelled) => unreachable!("Cancel::NEVER is never raised"),
    }
}
