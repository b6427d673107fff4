//! A worker's life: connect, register, poll until shutdown; register again
//! whenever the coordinator restarts.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use ksweep_proto::cluster_dir::{ClusterDir, Located};
use ksweep_proto::convert::{self, ShardWork};
use ksweep_proto::v1 as pb;
use ksweep_proto::v1::workers_client::WorkersClient;
use ksweep_proto::{classify, BearerToken, Liveness, WorkerAction, WorkerRpc, PROTOCOL_VERSION};
use tokio::sync::mpsc;
use tokio::time::{sleep, sleep_until, Instant};
use tonic::codegen::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic::Status;
use tracing::Instrument;

use crate::activity::HELD_UP;
use crate::error::{Error, Result};
use crate::execute::{run_shard, Control, Event, Lease, Resources};

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
/// "transport error" names no cause itself).
fn cause(status: &Status) -> String {
    let mut text = format!("{:?}: {}", status.code(), status.message());
    if let Some(source) = std::error::Error::source(status) {
        text.push_str(": ");
        text.push_str(&ksweep_proto::error_chain(source));
    }
    text
}

/// Runs a worker until `shutdown` completes; then hands back unfinished
/// shards, delivers what finished, says goodbye and returns. Errs when the
/// coordinator refuses the worker for good, or when the finished results
/// could not be delivered at shutdown ([`Error::Undelivered`]).
pub async fn run(options: WorkerOptions, shutdown: impl Future<Output = ()>) -> Result<()> {
    let decided = crate::resources::decide(options.threads, options.memory);
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(decided.threads)
            .thread_name(|i| format!("ksweep-task-{i}"))
            .build()
            .map_err(|e| Error::Pool(e.to_string()))?,
    );
    let threads = pool.current_num_threads();
    let resources = Resources::new(decided.memory, threads);
    tracing::info!(threads, memory_bytes = decided.memory, labels = ?options.labels, "worker resources");
    let mut url = options.coordinator.clone();
    let mut endpoint = ksweep_proto::worker_endpoint(&url, options.tls_ca.as_deref(), &Liveness::default())?;
    let token = BearerToken::new(options.token.as_deref()).map_err(|e| Error::Token(e.to_string()))?;
    // Its end is a shutdown too, a little before it.
    let end = options.end;
    let leave_at = end.map(|e| Instant::from_std(e.checked_sub(crate::lifetime::LEAVE_BEFORE).unwrap_or(e)));
    let shutdown = async move {
        match leave_at {
            Some(at) => tokio::select! {
                _ = shutdown => {}
                _ = sleep_until(at) => tracing::info!("the worker's end is near: leaving"),
            },
            None => shutdown.await,
        }
    };
    tokio::pin!(shutdown);

    let mut backoff = FIRST_BACKOFF;
    loop {
        if let Some(dir) = &options.cluster_dir {
            match dir.locate()? {
                Located::Finished(state) => {
                    tracing::info!(dir = %dir.path().display(), %state, "the coordinator has finished: leaving");
                    return Ok(());
                }
                Located::NotYet => {
                    tracing::info!(dir = %dir.path().display(), retry_in = ?backoff, "no coordinator has announced itself yet");
                    tokio::select! {
                        _ = &mut shutdown => return Ok(()),
                        _ = sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
                Located::At(announced) if announced != url => {
                    tracing::info!(coordinator = %announced, "the coordinator announced itself");
                    endpoint =
                        ksweep_proto::worker_endpoint(&announced, options.tls_ca.as_deref(), &Liveness::default())?;
                    url = announced;
                }
                Located::At(_) => {}
            }
        }
        let registered = tokio::select! {
            _ = &mut shutdown => return Ok(()),
            r = register(&endpoint, &token, &options, &resources) => r,
        };
        let mut session = match registered {
            Ok(s) => s,
            Err(RegisterError::Fatal(e)) => return Err(e),
            Err(RegisterError::Retry(why)) => {
                if why.starts_with("ResourceExhausted") {
                    // Its registration limit: many workers starting at once.
                    tracing::info!(coordinator = %url, %why, retry_in = ?backoff, "the coordinator asks to register later");
                } else {
                    tracing::warn!(coordinator = %url, %why, retry_in = ?backoff, "cannot reach the coordinator");
                }
                tokio::select! {
                    _ = &mut shutdown => return Ok(()),
                    _ = sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        backoff = FIRST_BACKOFF;
        // A channel per session: tasks of an old session still finishing on
        // the pool send into a closed channel, never into this session,
        // whose coordinator may reuse their (shard, epoch) numbers.
        let (events_tx, mut events) = mpsc::unbounded_channel::<Event>();
        tracing::info!(worker = session.worker_id, threads, "registered");
        let target = Target { options: &options, url: &url };
        // Every event of a session (its shards, revocations, deliveries)
        // carries the worker id it has there and its coordinator.
        let span = tracing::info_span!("session", worker = session.worker_id, coordinator = %url);
        let served = serve_session(&mut session, &pool, &resources, &target, &events_tx, &mut events, &mut shutdown)
            .instrument(span.clone())
            .await;
        match served {
            SessionEnd::Shutdown => return farewell(&mut session, &mut events).instrument(span).await,
            SessionEnd::Reregister(why) => {
                tracing::warn!(%why, "registering again; dropping the shards of the old session");
                session.cancel_all();
            }
            SessionEnd::Fatal(e) => return Err(e),
        }
    }
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

async fn register(
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

async fn serve_session(
    s: &mut Session,
    pool: &Arc<rayon::ThreadPool>,
    resources: &Resources,
    target: &Target<'_>,
    events_tx: &mpsc::UnboundedSender<Event>,
    events: &mut mpsc::UnboundedReceiver<Event>,
    shutdown: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
) -> SessionEnd {
    let threads = resources.threads;
    let mut backoff = FIRST_BACKOFF;
    loop {
        while let Ok(e) = events.try_recv() {
            s.apply(e);
        }
        // A pool whose every thread is held up by a long task (another
        // sweep's, say) would leave the shards it has not started waiting
        // for as long: they go back to run elsewhere, and no more are
        // taken until a thread is free.
        let held_up = resources.activity.held_up(HELD_UP).min(threads);
        if held_up == threads {
            s.hand_back_waiting();
        }
        // Drained, with everything delivered: leave.
        if s.draining && s.running.is_empty() && s.outbox.is_empty() {
            tracing::info!("drained: leaving");
            return SessionEnd::Shutdown;
        }
        let free = if s.draining { 0 } else { s.free_slots(threads, held_up) };
        let results: Vec<pb::ShardResults> = std::mem::take(&mut s.outbox).into_values().collect();
        let request = pb::PollRequest {
            worker_id: s.worker_id,
            coordinator_nonce: s.nonce,
            free_slots: free as u32,
            running: s.leases(),
            results: results.clone(),
            session_secret: s.secret.clone(),
            returned: s.returning.clone(),
            task_polls: resources.activity.polls().load(Ordering::Relaxed),
            lifetime_left_millis: target
                .options
                .end
                .map(|e| e.saturating_duration_since(std::time::Instant::now()).as_millis() as u64),
        };
        let request = s.request(request);
        let reply = match s.client.poll(request).await {
            Ok(r) => {
                backoff = FIRST_BACKOFF;
                s.returning.clear();
                r.into_inner()
            }
            Err(status) => {
                match classify(WorkerRpc::Poll, &status) {
                    WorkerAction::Reregister => return SessionEnd::Reregister(cause(&status)),
                    WorkerAction::Stop => return SessionEnd::Fatal(Error::Refused(status.message().into())),
                    WorkerAction::DropResults => {
                        let tasks: usize = results.iter().map(|r| r.tasks.len()).sum();
                        tracing::error!(tasks, error = %cause(&status), "coordinator refused our results; dropping them");
                    }
                    WorkerAction::RetryLater if target.moved() => {
                        // Its results go with the old session: the shards'
                        // leases lapse and they run again wherever it is now.
                        return SessionEnd::Reregister("the coordinator moved or finished".into());
                    }
                    WorkerAction::RetryLater => {
                        for r in results {
                            s.outbox.insert((r.shard_id, r.epoch), r);
                        }
                        tracing::warn!(error = %cause(&status), retry_in = ?backoff, "poll failed");
                        tokio::select! {
                            _ = &mut *shutdown => return SessionEnd::Shutdown,
                            _ = sleep(backoff) => {}
                        }
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                    }
                }
                continue;
            }
        };
        if reply.drain && !s.draining {
            tracing::info!(held = s.running.len(), "asked to drain: finishing the shards held, then leaving");
            s.draining = true;
        }
        for lease in &reply.revoked {
            if let Some(r) = s.running.get(&lease.shard_id).filter(|r| r.epoch == lease.epoch) {
                r.control.cancelled.store(true, Ordering::Relaxed);
                s.running.remove(&lease.shard_id);
                tracing::info!(shard = lease.shard_id, "lease revoked; shard stopped");
            }
        }
        let got_work = !reply.shards.is_empty();
        for shard in reply.shards {
            let control = Arc::new(Control::default());
            s.running.insert(shard.shard_id, Running { epoch: shard.epoch, control: control.clone() });
            let tx = events_tx.clone();
            let resources = resources.clone();
            // On the pool, under the session's span: a shard's events say
            // which session and shard they are of.
            let span = tracing::debug_span!("shard", id = shard.shard_id, epoch = shard.epoch);
            let lease = Lease { shard: shard.shard_id, epoch: shard.epoch };
            // Decoded here, so the pool sees domain types only; a shard
            // this worker cannot build fails at once with the decoder's words.
            match ShardWork::try_from(&shard) {
                Ok(work) => pool.spawn(move || span.in_scope(|| run_shard(lease, &work, control, tx, &resources))),
                Err(e) => {
                    let _ = tx.send(Event::Finished { lease, error: Some(e.into()), busy: Duration::ZERO });
                }
            }
        }

        // Wait for results (then gather a batch), the next heartbeat, or shutdown.
        let room = s.free_slots(threads, held_up) > 0;
        let wait = if got_work && room {
            Duration::ZERO
        } else if s.running.is_empty() {
            IDLE_POLL.min(s.poll_every)
        } else {
            s.poll_every
        };
        let deadline = Instant::now() + wait;
        tokio::select! {
            _ = &mut *shutdown => return SessionEnd::Shutdown,
            Some(e) = events.recv() => {
                s.apply(e);
                let until = Instant::now() + BATCH_WINDOW;
                loop {
                    tokio::select! {
                        Some(e) = events.recv() => s.apply(e),
                        _ = sleep_until(until) => break,
                    }
                }
            }
            _ = sleep_until(deadline) => {}
        }
    }
}

/// Stops the running shards, delivers what finished, hands back the rest
/// and says goodbye. Err if finished results could not be delivered (they
/// are lost; their shards run again elsewhere when their leases expire).
async fn farewell(s: &mut Session, events: &mut mpsc::UnboundedReceiver<Event>) -> Result<()> {
    s.cancel_all();
    // Results that finished since the last poll.
    while let Ok(e) = events.try_recv() {
        s.apply(e);
    }
    let deadline = Instant::now() + LAST_DELIVERY;
    let mut returned = s.leases();
    returned.append(&mut s.returning);
    let results: Vec<pb::ShardResults> = std::mem::take(&mut s.outbox).into_values().collect();
    let tasks: usize = results.iter().map(|r| r.tasks.len()).sum();
    let delivered = if results.is_empty() { Ok(()) } else { deliver_last(s, results, deadline).await };
    if let Err(why) = &delivered {
        tracing::error!(tasks, error = %why, "could not deliver the last results");
    }
    let bye = s.request(pb::GoodbyeRequest {
        worker_id: s.worker_id,
        coordinator_nonce: s.nonce,
        returned,
        session_secret: s.secret.clone(),
    });
    match tokio::time::timeout(GOODBYE, s.client.goodbye(bye)).await {
        Ok(Ok(_)) => tracing::info!("said goodbye"),
        // Not fatal: unreturned shards go back to the queue when their leases expire.
        Ok(Err(status)) => tracing::warn!(error = %cause(&status), "goodbye failed"),
        Err(_) => tracing::warn!("goodbye timed out"),
    }
    delivered.map_err(|why| Error::Undelivered { tasks, why })
}

/// The last poll: `results` only, asking for nothing, retried while the
/// classifier says so and `deadline` allows.
async fn deliver_last(s: &mut Session, results: Vec<pb::ShardResults>, deadline: Instant) -> Result<(), String> {
    let mut backoff = FIRST_BACKOFF;
    loop {
        let request = s.request(pb::PollRequest {
            worker_id: s.worker_id,
            coordinator_nonce: s.nonce,
            free_slots: 0,
            running: vec![],
            results: results.clone(),
            session_secret: s.secret.clone(),
            ..Default::default()
        });
        let status = match tokio::time::timeout_at(deadline, s.client.poll(request)).await {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(status)) => status,
            Err(_) => return Err(format!("no answer within {LAST_DELIVERY:?}")),
        };
        match classify(WorkerRpc::Poll, &status) {
            WorkerAction::RetryLater if Instant::now() + backoff < deadline => {
                tracing::warn!(error = %cause(&status), retry_in = ?backoff, "delivering the last results failed");
                sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
            action => return Err(format!("{} ({action:?})", cause(&status))),
        }
    }
}
