//! # ksweep-coordinator
//!
//! Splits sweeps into shards, leases them to workers over gRPC, persists
//! every result in SQLite and aggregates them into tables. The scheduling
//! rules live in [`scheduler`] (pure, time passed in); [`store`] is the
//! database; the services only translate between the two and the wire.

pub mod error;
pub mod export;
pub mod ids;
pub mod scheduler;
mod server;
mod state;
pub mod store;
mod sweeps_service;
mod workers_service;

pub use error::{Error, Result};
pub use server::serve;
pub use state::{CoordinatorOptions, TlsIdentity};
pub use sweeps_service::{status_of, table_rows};
