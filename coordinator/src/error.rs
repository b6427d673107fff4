//! The coordinator's error type, and its one conversion to `tonic::Status`.

use thiserror::Error;

/// Result alias for the coordinator.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong serving sweeps and workers.
#[derive(Debug, Error)]
pub enum Error {
    /// A spec that does not validate; nothing was stored.
    #[error("{0}")]
    Spec(#[from] sweep::SpecError),
    #[error("sweep {0:?} not found")]
    SweepNotFound(String),
    #[error("sweep id {0} is taken by a different spec; change the spec's name or seed")]
    IdCollision(String),
    /// No sweep was named and the database holds several: they are listed.
    #[error("the database holds {n} sweeps; name one by its id (a prefix only it has will do):\n{listing}", n = .0.len(), listing = .0)]
    AmbiguousSweep(sweep::Listing),
    /// A name (or id prefix) that fits several sweeps: they are listed.
    #[error("{text:?} names {n} sweeps; name one by its id (a prefix only it has will do):\n{listing}", text = .0, n = .1.len(), listing = .1)]
    AmbiguousId(String, sweep::Listing),
    /// A sweep a request may not change while it runs (`ksweep rm`).
    #[error("sweep {id} ({name}) is running; cancel it first (`ksweep cancel {id}`)")]
    SweepRunning { id: String, name: String },
    #[error("worker {0} is not registered here (the coordinator may have restarted); register again")]
    UnknownWorker(u64),
    /// A client named a worker (`ksweep drain`) that no registered worker is.
    #[error("no registered worker has the id or name {0:?}")]
    WorkerNotFound(String),
    #[error("{0:?} names several workers (ids {1}); give the id")]
    AmbiguousWorker(String, String),
    /// Registrations come faster than this coordinator takes them.
    #[error("too many worker registrations (this coordinator takes {limit}); try again in {retry_in:.1?}", limit = .limit.describe())]
    TooManyRegistrations { limit: crate::bucket::RateLimit, retry_in: std::time::Duration },
    /// Never names the current nonce: it is no credential, but nothing a
    /// caller needs either.
    #[error("coordinator nonce {0} is stale: the coordinator restarted; register again")]
    StaleNonce(u64),
    #[error("protocol version {got} is not supported; this coordinator speaks version {want}")]
    ProtocolVersion { got: u32, want: u32 },
    /// A peer sent something it should not have (e.g. results for tasks it
    /// was never given); the whole request is refused.
    #[error("refused: {0}")]
    Refused(String),
    #[error("database: {0}")]
    Database(#[from] rusqlite::Error),
    /// The file is not a ksweep database (another program's, or not SQLite).
    #[error("not a ksweep database: {0}")]
    NotADatabase(String),
    /// A database a newer release wrote: never read as if it were ours.
    #[error(
        "the database has schema version {found}, newer than this ksweep {} reads (version {supported}); \
         use {} or a later release",
        env!("CARGO_PKG_VERSION"),
        writer.as_deref().map_or("the release that wrote it".to_string(), |w| format!("ksweep {w}, which wrote it,"))
    )]
    SchemaNewer { found: i64, supported: i64, writer: Option<String> },
    /// An older database opened where it cannot be brought up to date.
    #[error(
        "the database has schema version {found}, older than this build's {want}, and cannot be upgraded here; \
         run `ksweep db upgrade --db FILE` where the file is writable"
    )]
    SchemaOlder { found: i64, want: i64 },
    /// The copy of an older database could not be written before its
    /// upgrade: nothing was upgraded, and no partial copy is left.
    #[error("cannot write the backup {path} before upgrading the database, so it was not upgraded: {why}")]
    Backup { path: String, why: String },
    /// A schema step failed; the database is as it was before it.
    #[error("upgrading the database failed, nothing was changed: {0}")]
    Migration(String),
    /// Stored values that cannot be (a damaged or foreign database).
    #[error("damaged database: {0}")]
    Corrupt(String),
    #[error("{0}")]
    UnknownCode(#[from] crate::codes::UnknownCode),
    /// Another process has the database open for writing.
    #[error("{db} is in use by {holder}; stop it first, or use another database file")]
    Locked { db: String, holder: String },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("TLS: {0}")]
    Tls(String),
    /// The coordinator's own options are unusable (it does not start).
    #[error("{field}: {why}")]
    Options { field: &'static str, why: String },
    #[error("internal: {0}")]
    Internal(String),
}

impl From<Error> for tonic::Status {
    fn from(e: Error) -> tonic::Status {
        use tonic::Status;
        let message = e.to_string();
        match e {
            Error::Spec(_) => Status::invalid_argument(message),
            Error::SweepNotFound(_) | Error::WorkerNotFound(_) => Status::not_found(message),
            Error::IdCollision(_) => Status::already_exists(message),
            Error::AmbiguousSweep(_) | Error::AmbiguousId(..) | Error::AmbiguousWorker(..) => {
                Status::invalid_argument(message)
            }
            Error::UnknownWorker(_) | Error::StaleNonce(_) | Error::SweepRunning { .. } => {
                Status::failed_precondition(message)
            }
            Error::ProtocolVersion { .. } => Status::failed_precondition(message),
            Error::TooManyRegistrations { .. } => Status::resource_exhausted(message),
            Error::Refused(_) => Status::invalid_argument(message),
            Error::Database(_)
            | Error::NotADatabase(_)
            | Error::SchemaNewer { .. }
            | Error::SchemaOlder { .. }
            | Error::Migration(_)
            | Error::Backup { .. }
            | Error::Corrupt(_)
            | Error::UnknownCode(_)
            | Error::Locked { .. }
            | Error::Io { .. }
            | Error::Tls(_)
            | Error::Options { .. }
            | Error::Internal(_) => Status::internal(message),
        }
    }
}
