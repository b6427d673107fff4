//! The worker's error type.

use thiserror::Error;

/// Result alias for the worker.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a worker stopped.
#[derive(Debug, Error)]
pub enum Error {
    #[error("coordinator: {0}")]
    Endpoint(#[from] ksweep_proto::EndpointError),
    #[error("token: {0}")]
    Token(String),
    /// A file of the cluster directory (`--dir`) cannot be trusted or read.
    #[error("--dir: {0}")]
    ClusterDir(#[from] ksweep_proto::cluster_dir::DirError),
    /// The coordinator refused us for good (wrong token, protocol version).
    #[error("coordinator refused the worker: {0}")]
    Refused(String),
    #[error("threads: could not start the pool: {0}")]
    Pool(String),
    /// Shutting down, the last results could not be delivered.
    #[error("{tasks} finished tasks were not delivered: {why}")]
    Undelivered { tasks: usize, why: String },
}
