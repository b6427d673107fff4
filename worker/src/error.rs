//! The worker's error type.

use thiserror::Error;

/// Result alias for the worker.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a worker stopped. Each message says its cause itself, so none is
/// also given as a source: a cause chain would say it twice.
#[derive(Debug, Error)]
pub enum Error {
    /// The coordinator's URL (or CA) cannot make an endpoint.
    #[error("coordinator: {0}")]
    Endpoint(ksweep_proto::EndpointError),
    #[error("token: {0}")]
    Token(String),
    /// A file of the cluster directory (`--dir`) cannot be trusted or read.
    #[error("--dir: {0}")]
    ClusterDir(ksweep_proto::cluster_dir::DirError),
    /// The coordinator refused us for good (wrong token, protocol version).
    #[error("coordinator refused the worker: {0}")]
    Refused(String),
    #[error("threads: could not start the pool: {0}")]
    Pool(String),
    /// Shutting down, the last results could not be delivered.
    #[error("{tasks} finished tasks were not delivered: {why}")]
    Undelivered { tasks: usize, why: String },
}

impl From<ksweep_proto::EndpointError> for Error {
    fn from(e: ksweep_proto::EndpointError) -> Error {
        Error::Endpoint(e)
    }
}

impl From<ksweep_proto::cluster_dir::DirError> for Error {
    fn from(e: ksweep_proto::cluster_dir::DirError) -> Error {
        Error::ClusterDir(e)
    }
}

/// Why a shard could not run; the coordinator gets its text as the shard's
/// error and retries the shard elsewhere or fails it.
#[derive(Debug, Error)]
pub enum ShardError {
    /// The coordinator's message does not describe a shard this worker can
    /// build (a start off the board, an unknown method).
    #[error(transparent)]
    Decode(#[from] ksweep_proto::convert::ConvertError),
    /// The board's runner, even for one thread, is larger than the budget.
    #[error("board {board} needs {need}; this worker's memory budget is {}", tour::format_bytes(*.budget))]
    TooBig { board: String, need: tour::MemoryNeed, budget: u64 },
    /// The engine refused the board or a method on it.
    #[error(transparent)]
    Engine(#[from] tour::Error),
    /// The shard asks for closed tours of a method that finds open ones.
    #[error("method {0} cannot look for the closed tours this shard asks for")]
    NotClosed(tour::Method),
    /// Building the shard's runner panicked; its tasks did not run.
    #[error("shard set-up panicked: {0}")]
    Panicked(String),
}
