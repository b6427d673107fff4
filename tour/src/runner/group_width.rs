//! How many walks a runner's 2D window kernels advance together. Each
//! walk in a group hides the others' waits (on the store two steps back
//! that a window reload overlaps, docs/performance/engine.md), but more
//! walks spill more registers, and where the two balance differs from
//! CPU to CPU. aw+ (3,2) N=400, `--threads 1`, least-to-most over runs:
//!
//! | walks together | 3 | 4 | 5 | 6 |
//! |---|---|---|---|---|
//! | Zen 5, 3,000 starts (s) | | 2.03-2.14 | 1.85-1.93 | 1.81-1.89 |
//! | Zen 3, 60 starts (ms) | 96-113 | 102-131 | 116-141 | 127-174 |
//! | Zen 2, 300 starts (ms) | 390-399 | 352-373 | 376-395 | 379-424 |
//!
//! A step's cost hardly depends on the board (2.7-3.3 ns on Zen 5 from
//! N=60 to N=800), but on the moves, whose windows overlap the stored
//! ones differently. So the width is timed once per process, move set
//! and feature level, on a square board of [`SIDE`]: about 20 ms, which
//! every configuration of those moves then shares. Every width walks the
//! same cells, so it changes no flag, only the time.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use super::{Runner, Task, MAX_TASKS_AT_ONCE};
use crate::board::Board;
use crate::config::Configuration;
use crate::method::Method;
use crate::moves::Moves;
use crate::walk::cpu::Level;
use crate::walk::kernel::WALKS_AT_ONCE;
use crate::walk::select::GroupKernel;
use crate::walk::Tiebreak;

/// Narrowest width timed: the narrowest measured (above), slower than
/// four everywhere but Zen 3, where it led four within the noise.
const NARROWEST: usize = 3;

/// Side of the square board the width is timed on: 16,384 cells, a walk
/// about 0.07 ms, small enough to walk a batch a few dozen times.
const SIDE: u32 = 128;

/// Rounds of the timing, each walking every width in turn, so that a
/// moment's load weighs on each alike; the least time of each counts.
/// Two: nine timings on a noisy Zen 2 VM all chose four, the width that
/// led over 300 starts there (docs/performance/engine.md).
const ROUNDS: usize = 2;

/// How much faster a narrower group must walk to be taken over
/// [`WALKS_AT_ONCE`], the width that led over thousands of starts where
/// the widest pays.
const MARGIN: f64 = 0.03;

impl Runner {
    /// Walks the 2D window kernels advance together at most, as timed
    /// (the first batch of walks on one times it): W+'s, else rule W's;
    /// `None` before, or where no kernel takes more than two.
    /// `ksweep bench` reports it.
    pub fn walks_together(&self) -> Option<usize> {
        self.widths.iter().find_map(|w| w.get().copied())
    }

    /// Walks of the group kernel `kind` that advance together at most: for
    /// a window kernel, timed on the first asking in this process for
    /// these moves, kernel and feature level ([`fastest`]), or
    /// [`WALKS_AT_ONCE`] where the timing board takes another kernel.
    pub(super) fn group_width(&self, kind: GroupKernel) -> usize {
        if kind.at_once() <= 2 {
            return kind.at_once();
        }
        // W+'s kernel, or rule W's.
        let plus = self.kernels.w_plus() == Some(kind);
        *self.widths[usize::from(!plus)].get_or_init(|| {
            // Held while timing, as the layout's timing is: two threads
            // timing at once would slow each other.
            let mut chosen = chosen();
            let key = (self.config.moves().clone(), self.cpu.level(), kind);
            if let Some(&width) = chosen.get(&key) {
                return width;
            }
            let timing = Board::new(&[SIDE, SIDE])
                .and_then(|board| Configuration::new(board, key.0.clone()))
                .and_then(|config| Runner::on_layout(config, self.cpu, None));
            let width = match timing {
                Ok(runner) if runner.kernels.grouped(tiebreak(plus)) == Some(kind) => fastest(&runner, kind, plus),
                _ => WALKS_AT_ONCE,
            };
            chosen.insert(key, width);
            width
        })
    }
}

/// The tiebreak of W+ walks (`plus`) or of rule W's.
fn tiebreak(plus: bool) -> Tiebreak {
    if plus {
        Tiebreak::Distance
    } else {
        Tiebreak::First
    }
}

/// The width at which a batch of walks of `kind`, W+ (`plus`) or rule W,
/// takes least time, a batch of
/// [`MAX_TASKS_AT_ONCE`] from starts spread over the board as a sweep
/// runs them (so its last walks, with fewer partners, weigh as they do
/// there); the widest unless another beats it by [`MARGIN`].
fn fastest(runner: &Runner, kind: GroupKernel, plus: bool) -> usize {
    let method = if plus { Method::WPlus } else { Method::W };
    let cells = runner.config.board().cells();
    let batch = MAX_TASKS_AT_ONCE as u64;
    let tasks: Vec<Task> =
        (0..batch).map(|k| Task { start: k * cells / batch, method, options: Default::default() }).collect();
    let indices: Vec<usize> = (0..tasks.len()).collect();
    let widths: Vec<usize> = (NARROWEST..=WALKS_AT_ONCE).collect();
    let mut least = vec![Duration::MAX; widths.len()];
    let mut ws = runner.workspace();
    for _ in 0..ROUNDS {
        for (&width, least) in widths.iter().zip(&mut least) {
            let began = Instant::now();
            runner.run_grouped_at(&mut ws, (&tasks, &indices), &|k| if k == kind { width } else { 2 });
            *least = (*least).min(began.elapsed());
        }
    }
    let widest = *least.last().expect("a width");
    let (at, &best) = least.iter().enumerate().min_by_key(|&(_, t)| *t).expect("a width");
    if best.as_secs_f64() * (1.0 + MARGIN) < widest.as_secs_f64() {
        widths[at]
    } else {
        WALKS_AT_ONCE
    }
}

/// The width timed, by move set, feature level and kernel.
type Chosen = HashMap<(Moves, Level, GroupKernel), usize>;

/// The answers timed so far in this process.
fn chosen() -> MutexGuard<'static, Chosen> {
    static CHOSEN: OnceLock<Mutex<Chosen>> = OnceLock::new();
    CHOSEN.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner)
}

/// The width timed for `moves` on `level` and `kind`, if timed.
#[cfg(test)]
pub(super) fn remembered(moves: &Moves, level: Level, kind: GroupKernel) -> Option<usize> {
    chosen().get(&(moves.clone(), level, kind)).copied()
}
