//! knight-sweep's wire protocol: the `Sweeps` service for clients and the
//! `Workers` service for workers, generated from `ksweep/v1/ksweep.proto`;
//! the conversions between its messages and the domain types
//! ([`convert`]); what a worker does on each failed call ([`classify`]);
//! the rule for worker labels (from `sweep::labels`); the channel settings both
//! ends share; and the files by which batch jobs find their coordinator
//! ([`cluster_dir`]).

mod action;
pub mod build;
mod channel;
pub mod cluster_dir;
pub mod codec;
pub mod convert;

/// Generated messages, clients and servers of `ksweep.v1`.
#[allow(clippy::all, missing_docs)]
pub mod v1 {
    tonic::include_proto!("ksweep.v1");
}

pub use action::{classify, WorkerAction, WorkerRpc};
// Labels are part of specs too (`requires`): the rule lives in `sweep`.
pub use channel::{
    call_timeout, check_token, endpoint, error_chain, join_causes, worker_endpoint, BearerToken, EndpointError,
    Liveness, TokenError, MIN_CALL_TIMEOUT,
};
pub use sweep::labels::{label_ok, labels, LabelError, LABEL_RULE, MAX_LABELS, MAX_LABEL_CHARS};

/// Version a worker must announce at registration; bumped on any
/// incompatible change to the protocol.
pub const PROTOCOL_VERSION: u32 = 1;

/// Most threads a worker may claim at registration: a coordinator refuses
/// more (the work it lets a worker hold scales with the claim), and the
/// CLI's `--threads` stops here.
pub const MAX_WORKER_THREADS: u32 = 4096;

/// Most memory a worker may advertise, in bytes (1 PiB, beyond any one
/// machine's): a coordinator refuses more, since it places boards by the
/// claim, and the CLI's `--memory` stops here.
pub const MAX_WORKER_MEMORY: u64 = 1 << 50;

/// Largest message either end sends or accepts, in bytes. Both ends must
/// agree: a result batch the coordinator cannot decode is refused whole.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// Most failed shards a Status reply lists (each with its error); the
/// count of all of them is `shards_failed`.
pub const MAX_FAILED_SHARDS: usize = 20;

/// Encoded file descriptor set, for gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("ksweep_descriptor");
