//! # ksweep-coordinator
//!
//! Splits sweeps into shards, leases them to workers over gRPC, persists
//! every result in SQLite and aggregates them into tables. The scheduling
//! rules live in [`scheduler`] (pure, time passed in); [`store`] is the
//! database; [`query`] is the read side, shared by the service and `--db`;
//! the services only translate between them and the wire.

#![cfg_attr(not(test), deny(clippy::unwrap_used))]

mod bucket;
pub mod codes;
mod connections;
mod dashboard;
mod descriptors;
pub mod error;
pub mod export;
pub mod export_format;
pub mod ids;
pub mod model;
pub mod query;
pub mod scheduler;
mod secret;
mod server;
mod state;
pub mod store;
mod sweeps_service;
mod workers_service;

pub use bucket::RateLimit;
pub use connections::ConnectionLimits;
pub use error::{Error, Result};
pub use query::{status_of, Query};
pub use secret::random_token;
pub use server::serve;
pub use state::{CoordinatorOptions, DashboardOptions, TlsIdentity, SERVED_MAX_CONFIGURATIONS};
pub use sweeps_service::table_rows;
