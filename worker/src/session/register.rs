//! Registering with a coordinator: the session it opens, or why not (to
//! retry, or for good).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use ksweep_proto::v1 as pb;
use ksweep_proto::v1::workers_client::WorkersClient;
use ksweep_proto::{classify, BearerToken, WorkerAction, WorkerRpc, PROTOCOL_VERSION};
use tonic::transport::Endpoint;

use super::{cause, RegisterError, Session, WorkerOptions};
use crate::error::Error;
use crate::execute::Resources;

pub(super) async fn register(
    endpoint: &Endpoint,
    token: &BearerToken,
    options: &WorkerOptions,
    resources: &Resources,
) -> Result<Session, RegisterError> {
    let channel = endpoint.connect().await.map_err(|e| RegisterError::Retry(ksweep_proto::error_chain(&e)))?;
    let mut client = WorkersClient::with_interceptor(channel, token.clone())
        .max_decoding_message_size(options.max_message_bytes)
        .max_encoding_message_size(options.max_message_bytes);
    let reply = client
        .register(pb::RegisterRequest {
            protocol_version: PROTOCOL_VERSION,
            name: options.name.clone(),
            threads: resources.threads as u32,
            // Unbounded (no limit found) is said by saying nothing: a
            // coordinator refuses claims past MAX_WORKER_MEMORY.
            memory_bytes: Some(resources.memory.total()).filter(|&b| b <= ksweep_proto::MAX_WORKER_MEMORY),
            labels: options.labels.clone(),
            provenance: Some(ksweep_proto::build::Provenance::here().into()),
        })
        .await
        .map_err(|s| match classify(WorkerRpc::Register, &s) {
            WorkerAction::Stop => RegisterError::Fatal(Error::Refused(s.message().to_string())),
            _ => RegisterError::Retry(cause(&s)),
        })?
        .into_inner();
    Ok(Session {
        client,
        worker_id: reply.worker_id,
        nonce: reply.coordinator_nonce,
        secret: reply.session_secret,
        poll_every: Duration::from_millis(reply.poll_millis.max(50) as u64),
        call_timeout: ksweep_proto::call_timeout(Duration::from_millis(reply.lease_millis.into())),
        running: HashMap::new(),
        returning: Vec::new(),
        outbox: BTreeMap::new(),
        shard_secs: None,
        draining: false,
    })
}
