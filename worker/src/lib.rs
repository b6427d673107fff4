//! # ksweep-worker
//!
//! Runs shards for a coordinator. [`run`] connects (retrying with backoff),
//! registers, then polls: each poll carries finished results and heartbeats
//! for running shards and asks for as many new shards as there is room for.
//! Shards run on a rayon pool, away from the tokio runtime that keeps the
//! polls going; each task runs inside `catch_unwind`, so a panic becomes an
//! error result and the worker lives on. A coordinator restart (new nonce)
//! makes the worker register again and drop what it held.

#![cfg_attr(not(test), deny(clippy::unwrap_used))]

mod activity;
mod error;
mod execute;
pub mod lifetime;
mod memory;
pub mod resources;
mod runners;
mod session;
mod thread_clock;

pub use error::{Error, Result};
pub use memory::MemoryBudget;
pub use session::{run, WorkerOptions};
