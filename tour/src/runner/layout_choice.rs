//! Whether a runner's rule-W walks of 24 moves on a 3D board take the
//! window scans (on a row-major board) or the tiled ones. The windows do
//! fewer instructions a step but touch 16 or more cache lines where 4x4x4
//! tiles touch about 8, so which is faster depends on how the board sits
//! in the CPU's caches, and that differs from CPU to CPU
//! (docs/performance/engine.md, (2,1) 3D, the windows against the tiles):
//! on Zen 4 (1 MiB of L2) the windows lead to about 4.4 M padded cells;
//! on Emerald Rapids (2 MiB) they lead by a third at 1.5 M and lose by
//! 15-25 % from 2.4 M; on Zen 1 and Zen 3 (512 KiB) the two are even at
//! 3 M. So past [`WINDOWS_UNTIMED_PADDED`] the choice is timed on the
//! board itself, once per process, configuration and feature level. Both
//! layouts walk the same cells (the walk tests), so it changes no flag.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use super::{Runner, Task};
use crate::config::Configuration;
use crate::error::Result;
use crate::method::Method;
use crate::walk::cpu::{Cpu, Level};
use crate::walk::select::{layout_choice, LayoutChoice};
use crate::walk::w_3d_scaled::Scan;
#[cfg(doc)]
use crate::walk::w_3d_scaled::{window_scan, WINDOWS_UNTIMED_PADDED};

/// Rounds of the timing, each walking both layouts in turn, so that a
/// moment's load on the machine weighs on both alike; the least time of
/// each counts (the first round also pays for fresh pages).
const ROUNDS: usize = 2;

/// How much faster the tiles must walk to be taken: the windows are what
/// W+ walks pair on, and what a board took before it was timed.
const MARGIN: f64 = 0.05;

/// A runner of `config` on `cpu`, its rule-W walks on
/// [`window_scan`]'s scan where it fits, on boards past
/// [`WINDOWS_UNTIMED_PADDED`] only where the windows time faster (else on
/// the tiles). The timing keeps the runner it timed that won.
pub(super) fn runner(config: Configuration, cpu: Cpu) -> Result<Runner> {
    let scan = match layout_choice(config.board(), config.moves(), cpu) {
        LayoutChoice::Fixed(windows) => return Runner::on_layout(config, cpu, windows),
        LayoutChoice::Timed(scan) => scan,
    };
    // Held while timing: two threads that timed at once would slow each
    // other, and the second one finds the first one's answer (and builds
    // its runner after letting go).
    let mut chosen = chosen();
    let key = (config, cpu.level());
    if let Some(&rows) = chosen.get(&key) {
        drop(chosen);
        return Runner::on_layout(key.0, cpu, rows.then_some(scan));
    }
    let (rows, runner) = faster(&key.0, cpu, scan)?;
    chosen.insert(key, rows);
    Ok(runner)
}

/// Whether a pair of rule-W walks, as a sweep runs them, takes less time
/// on the window scan `scan` than on the tiles, with [`MARGIN`] to
/// spare, and the runner on the faster layout: two walks, from a corner
/// and from the centre, a layout a round (about 0.8 s in all on a 140^3
/// board on Zen 3). W+ walks are not timed, to halve that: they take the
/// layout rule W chose, and lose less than the margin on the tiles where
/// the two are even for rule W (docs/performance/engine.md). Meanwhile
/// the loser and the two workspaces take memory a worker's budget does
/// not count: at most about five times a 4 Mi-cell board's bytes.
fn faster(config: &Configuration, cpu: Cpu, scan: Scan) -> Result<(bool, Runner)> {
    let runners = [Runner::on_layout(config.clone(), cpu, Some(scan))?, Runner::on_layout(config.clone(), cpu, None)?];
    let board = config.board();
    let centre: Vec<u64> = board.sides().iter().map(|&n| u64::from(n / 2)).collect();
    let pair =
        [0, board.index_of(&centre)?].map(|start| Task { start, method: Method::W, options: Default::default() });
    let mut least = [Duration::MAX; 2];
    {
        let mut workspaces = runners.each_ref().map(Runner::workspace);
        for _ in 0..ROUNDS {
            for ((runner, ws), least) in runners.iter().zip(&mut workspaces).zip(&mut least) {
                let began = Instant::now();
                runner.run_tasks(ws, &pair);
                *least = (*least).min(began.elapsed());
            }
        }
    }
    let [on_rows, on_tiles] = runners;
    let [rows, tiles] = least;
    Ok(if tiles.as_secs_f64() * (1.0 + MARGIN) >= rows.as_secs_f64() { (true, on_rows) } else { (false, on_tiles) })
}

/// Whether the windows were the faster, by configuration and level.
type Chosen = HashMap<(Configuration, Level), bool>;

/// The answers timed so far in this process.
fn chosen() -> MutexGuard<'static, Chosen> {
    static CHOSEN: OnceLock<Mutex<Chosen>> = OnceLock::new();
    CHOSEN.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether the windows timed faster for `config` on `cpu`, if timed.
#[cfg(test)]
pub(super) fn remembered(config: &Configuration, cpu: Cpu) -> Option<bool> {
    chosen().get(&(config.clone(), cpu.level())).copied()
}
