//! # tour: knight's tour heuristics on D-dimensional boards
//!
//! The engine of knight-sweep. It runs the Warnsdorff-rule methods of the
//! research report behind knight-sweep (W, W+, AW, AW+, MW), the random
//! variants WR and WR+, exact backtracking (bt), a construction for 2D
//! knight's tours and the Takefuji-Lee neural network with its remedies (nn,
//! nn-cut, nn-connect, nn-both) and `solve`, which finds a tour wherever one
//! exists ([`solve`]): [`Method::ALL`], exactly as the project's
//! docs/methods.md defines them, on
//! boards n_1 x .. x n_D with leaper rules such as (2,1), (1,2,2) or (4,3),
//! or an explicit move list. Pure Rust: no async, no I/O.
//!
//! ```
//! use tour::{verify, Board, Configuration, Method, Moves, Runner};
//!
//! let board = Board::regular(2, 8)?;
//! let moves = Moves::from_rule(&[2, 1], board.dims())?;
//! let runner = Runner::new(Configuration::new(board, moves)?)?;
//! let mut ws = runner.workspace();
//!
//! let start = runner.config().board().index_of(&[0, 0])?;
//! let result = runner.run(&mut ws, start, Method::W, 0, true);
//! assert!(result.success);
//! assert_eq!(result.attempts, 1);
//! let path = result.path.expect("asked for the path");
//! verify(runner.config().board(), runner.config().moves(), &path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A sweep prepares one [`Runner`] per configuration, gives each thread a
//! [`Workspace`], draws its starts with [`Configuration::starts`] and seeds
//! each task with [`Configuration::task_seed`], so results never depend on
//! how the tasks are split.

#![warn(missing_docs)]
// Unsafe code lives in the walk kernels (`walk` and its children) and in
// the padded buffer type whose invariants they rely on (`layout::Padded`,
// in `layout/padded.rs`).
// The types carry the proofs: the kernels' entry points are safe functions
// that check once per walk that their buffer, start and moves come from one
// layout. Every unsafe block says why it holds, every `unsafe fn` what its
// caller proves, and an `unsafe fn`'s body proves its own unsafe operations.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod backtrack;
pub mod baseline;
mod board;
mod cancel;
mod config;
pub mod construct;
mod error;
pub mod exists;
mod layout;
mod method;
mod moves;
pub mod neural;
mod outcome;
mod runner;
pub mod seed;
pub mod solve;
mod verify;
mod walk;

pub use board::{Board, DEFAULT_MAX_CELLS, MAX_DIMS};
pub use cancel::{within, Cancel, Cancelled};
pub use config::{format_bytes, Configuration, Eligibility, MemoryNeed, Starts, MAX_STARTS};
pub use error::{Error, Result};
pub use layout::MAX_PADDED_CELLS;
pub use method::{Method, NN_MAX_CELLS};
pub use moves::{Colouring, MoveSource, Moves, MAX_COMPONENT, MAX_MOVES};
pub use outcome::Outcome;
pub use runner::{Runner, Task, TaskOptions, TaskResult, Workspace, DEFAULT_BUDGET, DEFAULT_ITERATIONS};
pub use verify::{verify, verify_closed, TourError};
pub use walk::Tiebreak;

/// The CPU features the walk kernels may use in this process (`sse4.1`,
/// `ssse3`, `avx2`, `avx512f`; those the CPU has, capped by `KSWEEP_SIMD`,
/// none where `KSWEEP_NO_SIMD` is set):
/// recorded with results, since the kernels differ in speed, never in
/// flags.
pub fn kernel_features() -> Vec<&'static str> {
    walk::cpu::Cpu::detect().names()
}

/// Checks the variables that choose the kernels (`KSWEEP_SIMD`,
/// `KSWEEP_NO_SIMD`): an error naming the value and the levels where
/// `KSWEEP_SIMD` names none, so a binary stops before any walk.
pub fn check_kernel_env() -> Result<()> {
    walk::cpu::Cpu::from_env().map(|_| ())
}

/// How rule-W steps of 24 moves on 3D boards scan their neighbours in
/// this process, as `ksweep bench` says it: on boards of at most 1.5 Mi
/// padded cells (and moves whose rows fit), `avx512 windows` where the
/// CPU has AVX-512 VBMI, else `sse4.1 windows` where it has SSE4.1; up to
/// `WINDOWS_MAX_PADDED` (4 Mi) the windows or the tiles, whichever times
/// faster on the board, once a process; past that the fastest tiled scan
/// (`scalar`, `avx2`, `avx512`), timed once ([`kernel_features`] caps
/// which are tried). Speed only: every scan walks the same cells.
pub fn scan_3d() -> String {
    let cpu = walk::cpu::Cpu::detect();
    let tiled = walk::w_3d_scaled::Scan::fastest(cpu).name();
    let board = Board::new(&[100, 100, 100]).expect("a board");
    let moves = Moves::from_rule(&[2, 1], 3).expect("the knight's moves");
    match walk::w_3d_scaled::window_scan(&board, &moves, cpu) {
        Some(scan) => {
            let untimed = walk::w_3d_scaled::WINDOWS_UNTIMED_PADDED as f64 / f64::from(1 << 20);
            let mi = walk::w_3d_scaled::WINDOWS_MAX_PADDED >> 20;
            format!(
                "{} up to {untimed} Mi padded cells, the faster of it and {tiled} (timed) to {mi} Mi, {tiled} past them",
                scan.name()
            )
        }
        None => tiled.to_string(),
    }
}
