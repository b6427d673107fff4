//! What a worker does when a `Workers` call fails: the one reading of the
//! status codes listed in `ksweep/v1/ksweep.proto`.
//!
//! The coordinator's codes come from its one `Error -> Status` mapping
//! (coordinator/src/error.rs); the rest are tonic's own: UNAVAILABLE when
//! the coordinator cannot be reached, CANCELLED when a call outlives its
//! timeout, OUT_OF_RANGE when a message exceeds [`crate::MAX_MESSAGE_BYTES`].

use tonic::{Code, Status};

/// The worker's calls to the `Workers` service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerRpc {
    Register,
    Poll,
    Goodbye,
}

/// What a worker does after a failed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerAction {
    /// Transient (unreachable, overloaded, timed out, a database error):
    /// keep everything and make the same call again after a backoff.
    RetryLater,
    /// The coordinator does not know this session (it restarted, or forgot
    /// the worker): register again. Leases held are dead; so are results
    /// not yet delivered (they name leases of the old session).
    Reregister,
    /// The request was refused as a whole (results for shards the worker
    /// does not hold, or too large): drop the results it carried, since
    /// sending them again would be refused again, and go on.
    DropResults,
    /// Refused for good (wrong token, another protocol version): stop.
    Stop,
}

/// The action for a failed `rpc`, by its status code.
pub fn classify(rpc: WorkerRpc, status: &Status) -> WorkerAction {
    use WorkerAction::*;
    match (rpc, status.code()) {
        (_, Code::Unauthenticated | Code::PermissionDenied) => Stop,
        // Register: FAILED_PRECONDITION is a protocol version mismatch, and
        // INVALID_ARGUMENT a registration this coordinator will never take.
        (WorkerRpc::Register, Code::FailedPrecondition | Code::InvalidArgument) => Stop,
        // Poll, Goodbye: FAILED_PRECONDITION is a stale nonce or an unknown
        // worker id. NOT_FOUND, which no coordinator sends today, would say
        // the same.
        (WorkerRpc::Poll | WorkerRpc::Goodbye, Code::FailedPrecondition | Code::NotFound) => Reregister,
        (WorkerRpc::Poll | WorkerRpc::Goodbye, Code::InvalidArgument | Code::OutOfRange) => DropResults,
        _ => RetryLater,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use WorkerAction::*;
    use WorkerRpc::*;

    #[test]
    fn every_documented_code_has_its_action() {
        let table = [
            (Register, Code::Unauthenticated, Stop),
            (Register, Code::PermissionDenied, Stop),
            (Register, Code::FailedPrecondition, Stop),
            (Register, Code::InvalidArgument, Stop),
            (Register, Code::Internal, RetryLater),
            (Register, Code::Unavailable, RetryLater),
            (Register, Code::Cancelled, RetryLater),
            (Register, Code::ResourceExhausted, RetryLater),
            (Poll, Code::FailedPrecondition, Reregister),
            (Poll, Code::NotFound, Reregister),
            (Poll, Code::InvalidArgument, DropResults),
            (Poll, Code::OutOfRange, DropResults),
            (Poll, Code::Unauthenticated, Stop),
            (Poll, Code::Internal, RetryLater),
            (Poll, Code::Unavailable, RetryLater),
            (Poll, Code::Cancelled, RetryLater),
            (Poll, Code::DeadlineExceeded, RetryLater),
            (Poll, Code::ResourceExhausted, RetryLater),
            (Goodbye, Code::FailedPrecondition, Reregister),
            (Goodbye, Code::Unauthenticated, Stop),
            (Goodbye, Code::Unavailable, RetryLater),
        ];
        for (rpc, code, want) in table {
            assert_eq!(classify(rpc, &Status::new(code, "x")), want, "{rpc:?} {code:?}");
        }
    }
}
