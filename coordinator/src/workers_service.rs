//! The `Workers` service: registration, the poll that carries results,
//! heartbeats and requests for work, and goodbye.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use ksweep_proto::build::Provenance;
use ksweep_proto::v1 as pb;
use ksweep_proto::{convert, PROTOCOL_VERSION};
use tonic::{Request, Response, Status};

use crate::error::{Error, Result};
use crate::ids::{Epoch, ShardId, WorkerId};
use crate::scheduler::{Assignment, ShardReport, TaskReport, WorkerResources};
use crate::state::{Heartbeat, HeartbeatReply, Shared};

/// Most shards one poll may ask for, whatever free capacity it claims.
const MAX_SLOTS_PER_POLL: usize = 1024;

/// Handlers of `ksweep.v1.Workers`.
pub struct WorkersService {
    shared: Arc<Shared>,
}

impl WorkersService {
    pub fn new(shared: Arc<Shared>) -> WorkersService {
        WorkersService { shared }
    }

    fn check_nonce(&self, got: u64) -> Result<()> {
        if got != self.shared.nonce {
            return Err(Error::StaleNonce(got));
        }
        Ok(())
    }

    /// One poll: heartbeat, results, new shards. Its span names the worker
    /// and what it carried (`RUST_LOG=ksweep_coordinator=debug`).
    #[tracing::instrument(level = "debug", name = "poll", skip_all, fields(
        worker = req.worker_id, results = req.results.len(), free = req.free_slots))]
    async fn poll_inner(&self, req: pb::PollRequest) -> Result<pb::PollReply> {
        self.check_nonce(req.coordinator_nonce)?;
        let worker = WorkerId(req.worker_id);
        self.shared.authenticate(worker, &req.session_secret)?;
        let reports: Vec<ShardReport> = req.results.into_iter().map(report_of).collect::<Result<_>>()?;
        let beat = Heartbeat {
            running: lease_ids(&req.running),
            returned: lease_ids(&req.returned),
            task_polls: req.task_polls,
            lifetime_left: req.lifetime_left_millis.map(Duration::from_millis),
        };
        let HeartbeatReply { revoked, drain } = self.shared.heartbeat(worker, &beat)?;
        self.shared.report(worker, &reports).await?;

        let free = (req.free_slots as usize).min(MAX_SLOTS_PER_POLL);
        let assignments = if free > 0 { self.shared.assign(worker, free).await? } else { Vec::new() };
        Ok(pb::PollReply {
            shards: assignments.iter().map(shard_message).collect(),
            revoked: revoked.into_iter().map(|(s, e)| pb::LeaseRef { shard_id: s.0, epoch: e.0 }).collect(),
            drain,
        })
    }
}

/// The (shard, epoch) pairs of leases a worker names.
fn lease_ids(refs: &[pb::LeaseRef]) -> Vec<(ShardId, Epoch)> {
    refs.iter().map(|l| (ShardId(l.shard_id), Epoch(l.epoch))).collect()
}

/// Longest worker name: it goes into logs and every export row.
pub(crate) const MAX_NAME_CHARS: usize = 128;

/// Refuses a name that is long or holds control characters (a newline
/// would forge a log line), an implausible thread count or memory, and
/// labels past [`ksweep_proto::labels`]' bounds. None is echoed back.
fn check_registration(
    name: &str,
    threads: u32,
    memory: Option<u64>,
    labels: &[String],
    provenance: &Provenance,
) -> Result<BTreeSet<String>> {
    if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(Error::Refused(format!(
            "RegisterRequest.name: at most {MAX_NAME_CHARS} characters, none of them control characters"
        )));
    }
    if threads > ksweep_proto::MAX_WORKER_THREADS {
        let most = ksweep_proto::MAX_WORKER_THREADS;
        return Err(Error::Refused(format!("RegisterRequest.threads: at most {most}, got {threads}")));
    }
    if let Some(bytes) = memory.filter(|&b| b > ksweep_proto::MAX_WORKER_MEMORY) {
        let most = ksweep_proto::MAX_WORKER_MEMORY;
        return Err(Error::Refused(format!("RegisterRequest.memory_bytes: at most {most} (1 PiB), got {bytes}")));
    }
    provenance.check().map_err(|e| Error::Refused(format!("RegisterRequest.{e}")))?;
    ksweep_proto::labels(labels).map_err(|e| Error::Refused(format!("RegisterRequest.labels: {e}")))
}

/// A shard's results as the scheduler sees them; an outcome code this
/// build does not know refuses the whole poll.
fn report_of(r: pb::ShardResults) -> Result<ShardReport> {
    let shard = ShardId(r.shard_id);
    let tasks = r
        .tasks
        .into_iter()
        .map(|t| {
            let task = (t.start_offset, t.method_index);
            TaskReport::try_from(t).map_err(|e| Error::Refused(format!("{shard} task ({}, {}): {e}", task.0, task.1)))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ShardReport { shard, epoch: Epoch(r.epoch), tasks, error: convert::reported_error(r.error) })
}

/// The message for an assignment: configuration, methods and start cells.
fn shard_message(a: &Assignment) -> pb::Shard {
    let entry = &a.sweep.configurations()[a.plan.config as usize];
    let methods: Vec<tour::Method> = a.methods.indices().filter_map(|i| a.sweep.methods().get(i).copied()).collect();
    convert::shard(a.shard.0, a.epoch.0, &a.sweep_id, &a.sweep, entry, &methods, &a.starts)
}

#[tonic::async_trait]
impl pb::workers_server::Workers for WorkersService {
    async fn register(&self, req: Request<pb::RegisterRequest>) -> Result<Response<pb::RegisterReply>, Status> {
        let req = req.into_inner();
        if req.protocol_version != PROTOCOL_VERSION {
            return Err(Error::ProtocolVersion { got: req.protocol_version, want: PROTOCOL_VERSION }.into());
        }
        let name = if req.name.is_empty() { "worker".to_string() } else { req.name };
        let provenance = Provenance::from(req.provenance.unwrap_or_default());
        let labels = check_registration(&name, req.threads, req.memory_bytes, &req.labels, &provenance)?;
        let threads = req.threads.max(1);
        let (worker, secret) = self.shared.register(name.clone(), threads, provenance).await?;
        let memory = req.memory_bytes;
        tracing::info!(%worker, %name, threads, memory_bytes = ?memory, ?labels, "worker registered");
        self.shared.advertise(worker, WorkerResources { memory, labels });
        let options = &self.shared.options;
        Ok(Response::new(pb::RegisterReply {
            worker_id: worker.0,
            coordinator_nonce: self.shared.nonce,
            lease_millis: options.scheduler.lease.as_millis() as u32,
            poll_millis: options.poll_interval.as_millis() as u32,
            session_secret: secret.as_bytes().to_vec(),
        }))
    }

    async fn poll(&self, req: Request<pb::PollRequest>) -> Result<Response<pb::PollReply>, Status> {
        Ok(Response::new(self.poll_inner(req.into_inner()).await?))
    }

    async fn goodbye(&self, req: Request<pb::GoodbyeRequest>) -> Result<Response<pb::GoodbyeReply>, Status> {
        let req = req.into_inner();
        self.check_nonce(req.coordinator_nonce)?;
        self.shared.authenticate(WorkerId(req.worker_id), &req.session_secret)?;
        let returned = lease_ids(&req.returned);
        self.shared.goodbye(WorkerId(req.worker_id), &returned);
        tracing::info!(worker = req.worker_id, returned = returned.len(), "worker said goodbye");
        Ok(Response::new(pb::GoodbyeReply {}))
    }
}
