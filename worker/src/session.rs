//! A worker's life: connect, register, poll until shutdown; register again
//! whenever the coordinator restarts. Here its settings and what one
//! registration holds; the life itself in `run`, a registration in
//! `register`, its poll loop in `serve` and leaving in `farewell`.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use ksweep_proto::cluster_dir::{ClusterDir, Located};
use ksweep_proto::convert;
use ksweep_proto::v1 as pb;
use ksweep_proto::v1::workers_client::WorkersClient;
use ksweep_proto::BearerToken;
use tonic::codegen::InterceptedService;
use tonic::transport::Channel;
use tonic::Status;

use crate::error::Error;
use crate::execute::{Control, Event, Lease};

mod farewell;
mod register;
mod run;
mod serve;

pub use run::run;

/// How long results are gathered after the first one arrives before they
/// are sent: batches thousands of small tasks into one poll.
const BATCH_WINDOW: Duration = Duration::from_millis(20);
/// Work each thread should have queued, so a thread never waits for a poll
/// round-trip between shards, however small the shards are.
const QUEUED_WORK: Duration = Duration::from_millis(200);
/// Most shards held at once per thread (tiny shards).
const MAX_SHARDS_PER_THREAD: usize = 1024;
/// Longest wait between polls while idle, so new sweeps start promptly.
const IDLE_POLL: Duration = Duration::from_millis(250);
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long shutting down may spend delivering the last results (retries
/// included), then saying goodbye: well within the 10 s a process manager
/// (docker, Slurm) gives after SIGTERM.
const LAST_DELIVERY: Duration = Duration::from_secs(4);
const GOODBYE: Duration = Duration::from_secs(2);

/// Settings of a worker.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// Coordinator URL, e.g. `http://127.0.0.1:50051`.
    pub coordinator: String,
    /// Threads of the rayon pool; 0 for what the process may use (its
    /// affinity mask and cgroup CPU quota).
    pub threads: usize,
    /// Name shown in the coordinator's logs and exports.
    pub name: String,
    pub token: Option<String>,
    /// PEM of the CA to trust for an `https://` coordinator (else the
    /// public web roots).
    pub tls_ca: Option<Vec<u8>>,
    /// Largest message sent or accepted: [`ksweep_proto::MAX_MESSAGE_BYTES`],
    /// the coordinator's limit too.
    pub max_message_bytes: usize,
    /// Bytes the boards of running tasks may take in all; None for the
    /// tightest of the process's cgroup, Slurm and available-memory limits
    /// at start, less a margin (see `resources`).
    pub memory: Option<u64>,
    /// Advertised at registration, for placing work (checked by
    /// [`ksweep_proto::labels`]).
    pub labels: Vec<String>,
    /// When the worker must be gone (`--lifetime`, its batch job's end;
    /// see [`crate::lifetime`]): it takes only shards that end well before
    /// and leaves on its own [`crate::lifetime::LEAVE_BEFORE`] the end.
    pub end: Option<std::time::Instant>,
    /// A cluster directory to find the coordinator in (`--dir`): read
    /// before every registration, so a worker waits for a coordinator not
    /// yet started, follows one that moved (a requeued batch job) and
    /// leaves once it has finished. `coordinator` is then only the first
    /// guess.
    pub cluster_dir: Option<ClusterDir>,
}

impl WorkerOptions {
    /// A worker of `coordinator` with every other setting at its default:
    /// the threads and memory the process may use, named `worker-PID`, no
    /// token, the public web roots, the protocol's message limit, no
    /// labels, no end and no cluster directory. Callers change what they
    /// set with `WorkerOptions { threads, ..WorkerOptions::new(url) }`, so
    /// a new setting gets its default here alone.
    pub fn new(coordinator: impl Into<String>) -> WorkerOptions {
        WorkerOptions {
            coordinator: coordinator.into(),
            threads: 0,
            name: format!("worker-{}", std::process::id()),
            token: None,
            tls_ca: None,
            max_message_bytes: ksweep_proto::MAX_MESSAGE_BYTES,
            memory: None,
            labels: Vec::new(),
            end: None,
            cluster_dir: None,
        }
    }
}

type Client = WorkersClient<InterceptedService<Channel, BearerToken>>;

/// A shard this worker holds: running, or waiting on the pool.
struct Running {
    epoch: u64,
    control: Arc<Control>,
}

/// Everything one registration holds.
struct Session {
    client: Client,
    worker_id: u64,
    nonce: u64,
    /// Presented on every poll and goodbye of this registration.
    secret: Vec<u8>,
    poll_every: Duration,
    /// Bound of every call of this session, from the lease.
    call_timeout: Duration,
    running: HashMap<u64, Running>,
    /// Shards handed back unstarted, until a poll delivers them.
    returning: Vec<pb::LeaseRef>,
    /// Results not yet delivered, per (shard, epoch).
    outbox: BTreeMap<(u64, u64), pb::ShardResults>,
    /// Smoothed seconds one shard keeps the pool busy (not counting its
    /// wait); None until one has finished.
    shard_secs: Option<f64>,
    /// Asked to leave (`ksweep drain`): takes nothing more, and leaves
    /// once what it holds is delivered.
    draining: bool,
}

impl Session {
    fn apply(&mut self, event: Event) {
        match event {
            Event::Task { lease: Lease { shard, epoch }, task } => {
                if self.running.get(&shard).is_some_and(|r| r.epoch == epoch) {
                    let outcome = match &task.result {
                        Ok(r) => convert::task_done(task.start_offset, task.method_index, r),
                        Err(why) => convert::task_failed(task.start_offset, task.method_index, why.clone()),
                    };
                    self.entry(shard, epoch).tasks.push(outcome);
                }
            }
            Event::Finished { lease: Lease { shard, epoch }, error, busy } => {
                if self.running.get(&shard).is_some_and(|r| r.epoch == epoch) {
                    self.running.remove(&shard);
                    let busy = busy.as_secs_f64();
                    self.shard_secs = match self.shard_secs {
                        None => busy,
                        Some(avg) => 0.8 * avg + 0.2 * busy,
                    }
                    .into();
                    if let Some(error) = error {
                        self.entry(shard, epoch).error = error.to_string();
                    }
                }
            }
        }
    }

    fn entry(&mut self, shard: u64, epoch: u64) -> &mut pb::ShardResults {
        self.outbox.entry((shard, epoch)).or_insert_with(|| pb::ShardResults {
            shard_id: shard,
            epoch,
            ..Default::default()
        })
    }

    fn cancel_all(&mut self) {
        for r in self.running.values() {
            r.control.cancelled.store(true, Ordering::Relaxed);
        }
    }

    /// Hands back the shards no thread has taken up (they are stopped
    /// here, and go to the coordinator with the next poll).
    fn hand_back_waiting(&mut self) {
        let waiting: Vec<u64> = self
            .running
            .iter()
            .filter(|(_, r)| !r.control.started.load(Ordering::Relaxed))
            .map(|(&id, _)| id)
            .collect();
        if !waiting.is_empty() {
            tracing::info!(
                shards = waiting.len(),
                "every thread is held up by a long task; handing back the shards waiting"
            );
        }
        for shard_id in waiting {
            if let Some(r) = self.running.remove(&shard_id) {
                r.control.cancelled.store(true, Ordering::Relaxed);
                self.returning.push(pb::LeaseRef { shard_id, epoch: r.epoch });
            }
        }
    }

    /// How many more shards to ask for when `held_up` of the `threads` are
    /// held up by long batches: for the others, one per thread plus enough
    /// queued to cover QUEUED_WORK per thread at the measured shard
    /// duration; none when all are held up (a shard would only wait).
    fn free_slots(&self, threads: usize, held_up: usize) -> usize {
        let free_threads = threads.saturating_sub(held_up);
        if free_threads == 0 {
            return 0;
        }
        // Until a shard has finished, assume it takes as long as the
        // coordinator aims for (about a second): one per thread.
        let secs = self.shard_secs.unwrap_or(1.0).max(1e-6);
        let per_thread = (QUEUED_WORK.as_secs_f64() / secs).ceil() as usize;
        let wanted = free_threads * per_thread.clamp(1, MAX_SHARDS_PER_THREAD) + 1;
        // Each held-up thread runs (at most) one of the shards held.
        wanted.saturating_sub(self.running.len().saturating_sub(held_up))
    }

    fn leases(&self) -> Vec<pb::LeaseRef> {
        self.running.iter().map(|(&shard_id, r)| pb::LeaseRef { shard_id, epoch: r.epoch }).collect()
    }

    /// A request bounded by the session's call timeout.
    fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        request.set_timeout(self.call_timeout);
        request
    }
}

/// A failed call's code, message and the transport's cause chain (tonic's
/// "transport error" names no cause itself), each cause said once (a
/// status made from an error carries its text as the message too).
fn cause(status: &Status) -> String {
    let head = format!("{:?}: {}", status.code(), status.message());
    let chain = std::iter::successors(std::error::Error::source(status), |e| e.source()).map(ToString::to_string);
    ksweep_proto::join_causes(std::iter::once(head).chain(chain))
}

/// The coordinator a session serves: the worker's options and the URL it
/// registered at.
struct Target<'a> {
    options: &'a WorkerOptions,
    url: &'a str,
}

impl Target<'_> {
    /// Whether the cluster directory (if any) says the coordinator is no
    /// longer at this session's URL: moved (a requeued job) or finished;
    /// or it can no longer be read, which the next registration reports.
    fn moved(&self) -> bool {
        self.options.cluster_dir.as_ref().is_some_and(|d| d.locate().ok() != Some(Located::At(self.url.to_string())))
    }
}

enum RegisterError {
    Retry(String),
    Fatal(Error),
}

enum SessionEnd {
    Shutdown,
    Reregister(String),
    Fatal(Error),
}
