//! The coordinator's gRPC services, black-box, in process: a coordinator on
//! 127.0.0.1:0 over an in-memory store, on tokio's paused clock, so lease
//! expiry is driven by `tokio::time::advance`, never by sleeping.

use std::time::Duration;

use ksweep_coordinator::store::Store;
use ksweep_coordinator::{serve, ConnectionLimits, CoordinatorOptions, RateLimit, TlsIdentity};
use ksweep_proto::v1 as pb;
use ksweep_proto::v1::sweeps_client::SweepsClient;
use ksweep_proto::v1::workers_client::WorkersClient;
use ksweep_proto::{BearerToken, PROTOCOL_VERSION};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::codegen::InterceptedService;
use tonic::transport::Channel;
use tonic::Code;

static SPEC: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| sweep::fixtures::knight_spec("service", 1, 4, &[5, 6]));

const LEASE: Duration = Duration::from_secs(10);

type Sweeps = SweepsClient<InterceptedService<Channel, BearerToken>>;
type Workers = WorkersClient<InterceptedService<Channel, BearerToken>>;

/// A coordinator serving in this runtime until dropped.
struct Coordinator {
    url: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<ksweep_coordinator::Result<()>>>,
}

impl Coordinator {
    async fn start(token: Option<&str>) -> Coordinator {
        Coordinator::start_with(CoordinatorOptions {
            token: token.map(str::to_string),
            ..CoordinatorOptions::default()
        })
        .await
    }

    async fn start_with(options: CoordinatorOptions) -> Coordinator {
        Coordinator::start_over(Store::in_memory().unwrap(), options).await
    }

    /// A coordinator over a database file, as after a restart.
    async fn start_on(path: &std::path::Path) -> Coordinator {
        Coordinator::start_over(Store::open(path).unwrap(), CoordinatorOptions::default()).await
    }

    async fn start_over(store: Store, mut options: CoordinatorOptions) -> Coordinator {
        options.scheduler.lease = LEASE;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve(listener, store, options, async {
            let _ = stopped.await;
        }));
        Coordinator { url, stop: Some(stop), task: Some(task) }
    }

    async fn channel(&self, token: Option<&str>) -> (Channel, BearerToken) {
        let channel = tonic::transport::Endpoint::from_shared(self.url.clone()).unwrap().connect().await.unwrap();
        (channel, BearerToken::new(token).unwrap())
    }

    async fn sweeps(&self, token: Option<&str>) -> Sweeps {
        let (channel, token) = self.channel(token).await;
        SweepsClient::with_interceptor(channel, token)
    }

    async fn workers(&self, token: Option<&str>) -> Workers {
        let (channel, token) = self.channel(token).await;
        WorkersClient::with_interceptor(channel, token)
    }

    /// Stops the coordinator and returns what `serve` returned.
    async fn stop(mut self) -> ksweep_coordinator::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.take().unwrap().await.unwrap()
    }
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// A registered worker: its id, the coordinator's nonce and its session
/// secret.
#[derive(Debug, Clone)]
struct Worker {
    id: u64,
    nonce: u64,
    secret: Vec<u8>,
}

async fn register(workers: &mut Workers, name: &str) -> Worker {
    let reply = workers
        .register(pb::RegisterRequest {
            protocol_version: PROTOCOL_VERSION,
            name: name.into(),
            threads: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.lease_millis as u128, LEASE.as_millis());
    assert_eq!(reply.session_secret.len(), 16, "a 128-bit session secret");
    Worker { id: reply.worker_id, nonce: reply.coordinator_nonce, secret: reply.session_secret }
}

fn lease_of(s: &pb::Shard) -> pb::LeaseRef {
    pb::LeaseRef { shard_id: s.shard_id, epoch: s.epoch }
}

async fn poll(workers: &mut Workers, w: &Worker, free: u32, running: &[pb::LeaseRef]) -> pb::PollReply {
    let req = pb::PollRequest {
        worker_id: w.id,
        coordinator_nonce: w.nonce,
        free_slots: free,
        running: running.to_vec(),
        results: vec![],
        session_secret: w.secret.clone(),
        ..Default::default()
    };
    workers.poll(req).await.unwrap().into_inner()
}

async fn submit(sweeps: &mut Sweeps) -> String {
    sweeps
        .submit(pb::SubmitRequest { spec_toml: SPEC.to_string(), resume: false, no_reuse: false })
        .await
        .unwrap()
        .into_inner()
        .sweep_id
}

/// Lets the coordinator's background tasks catch up. The clock is paused,
/// but the ticker's database writes run on the blocking pool in real time:
/// a tick still waiting for one is not back at its timer, so turns alone
/// (ten yields) were not enough on a loaded machine. Real time is given
/// too, between the turns.
async fn settle() {
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(2));
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }
}

#[tokio::test(start_paused = true)]
async fn an_expired_lease_returns_its_shard_to_the_queue() {
    let c = Coordinator::start(None).await;
    submit(&mut c.sweeps(None).await).await;
    let mut workers = c.workers(None).await;
    let one = register(&mut workers, "one").await;
    let reply = poll(&mut workers, &one, 1, &[]).await;
    let first = reply.shards[0].clone();

    // Heartbeats keep the lease past its first deadline.
    tokio::time::advance(LEASE - Duration::from_secs(2)).await;
    settle().await;
    assert!(poll(&mut workers, &one, 0, &[lease_of(&first)]).await.revoked.is_empty());
    tokio::time::advance(LEASE - Duration::from_secs(2)).await;
    settle().await;
    assert!(poll(&mut workers, &one, 0, &[lease_of(&first)]).await.revoked.is_empty(), "extended");

    // Silence past the lease: the shard goes to the next worker that asks.
    tokio::time::advance(LEASE + Duration::from_secs(1)).await;
    settle().await;
    let two = register(&mut workers, "two").await;
    let again = poll(&mut workers, &two, 1, &[]).await.shards;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].shard_id, first.shard_id, "the expired shard first");
    assert_ne!(again[0].epoch, first.epoch, "under a new epoch");
    assert_eq!(again[0].starts, first.starts);
    // The old holder is told to stop.
    let reply = poll(&mut workers, &one, 0, &[lease_of(&first)]).await;
    assert_eq!(reply.revoked, vec![lease_of(&first)]);
    c.stop().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_stale_nonce_or_an_unknown_worker_is_refused() {
    let c = Coordinator::start(None).await;
    let mut workers = c.workers(None).await;
    let w = register(&mut workers, "w").await;
    let stale = Worker { nonce: w.nonce.wrapping_add(1), ..w.clone() };
    let poll_stale = pb::PollRequest {
        worker_id: stale.id,
        coordinator_nonce: stale.nonce,
        session_secret: w.secret.clone(),
        ..Default::default()
    };
    let e = workers.poll(poll_stale).await.unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains("register again"), "{e:?}");
    assert!(!e.message().contains(&w.nonce.to_string()), "the current nonce is never echoed: {e:?}");
    let bye = pb::GoodbyeRequest {
        worker_id: w.id,
        coordinator_nonce: stale.nonce,
        returned: vec![],
        session_secret: w.secret.clone(),
    };
    assert_eq!(workers.goodbye(bye).await.unwrap_err().code(), Code::FailedPrecondition);
    let unknown = pb::PollRequest {
        worker_id: w.id + 100,
        coordinator_nonce: w.nonce,
        session_secret: w.secret.clone(),
        ..Default::default()
    };
    assert_eq!(workers.poll(unknown).await.unwrap_err().code(), Code::FailedPrecondition);
    let old = pb::RegisterRequest {
        protocol_version: PROTOCOL_VERSION + 1,
        name: "old".into(),
        threads: 1,
        ..Default::default()
    };
    assert_eq!(workers.register(old).await.unwrap_err().code(), Code::FailedPrecondition);
    // The right nonce still works.
    poll(&mut workers, &w, 0, &[]).await;
    c.stop().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn cancel_revokes_held_shards_and_hands_out_no_more() {
    let c = Coordinator::start(None).await;
    let mut sweeps = c.sweeps(None).await;
    let id = submit(&mut sweeps).await;
    let mut workers = c.workers(None).await;
    let w = register(&mut workers, "w").await;
    let held = poll(&mut workers, &w, 1, &[]).await.shards;
    assert_eq!(held.len(), 1);
    let status = sweeps.cancel(pb::SweepRef { sweep_id: id.clone() }).await.unwrap().into_inner();
    assert_eq!(status.state, pb::SweepState::Cancelled as i32);
    let reply = poll(&mut workers, &w, 4, &[lease_of(&held[0])]).await;
    assert_eq!(reply.revoked, vec![lease_of(&held[0])], "the held shard is revoked");
    assert!(reply.shards.is_empty(), "nothing more of a cancelled sweep");
    c.stop().await.unwrap();
}

/// A shard a worker hands back unstarted with its poll (its threads all
/// held up by long tasks) goes to the next worker at once, under a new
/// epoch, and counts no failed attempt.
#[tokio::test(start_paused = true)]
async fn a_shard_handed_back_with_a_poll_goes_to_the_next_worker() {
    let c = Coordinator::start(None).await;
    submit(&mut c.sweeps(None).await).await;
    let mut workers = c.workers(None).await;
    let (busy, idle) = (register(&mut workers, "busy").await, register(&mut workers, "idle").await);
    let held = poll(&mut workers, &busy, 1, &[]).await.shards;
    let handed_back = pb::PollRequest {
        worker_id: busy.id,
        coordinator_nonce: busy.nonce,
        returned: vec![lease_of(&held[0])],
        task_polls: 1_000,
        session_secret: busy.secret.clone(),
        ..Default::default()
    };
    assert!(workers.poll(handed_back).await.unwrap().into_inner().shards.is_empty(), "it asked for none");
    let taken = poll(&mut workers, &idle, 1, &[]).await.shards;
    assert_eq!((taken[0].shard_id, taken[0].starts.clone()), (held[0].shard_id, held[0].starts.clone()));
    assert_ne!(taken[0].epoch, held[0].epoch);
    assert_eq!(poll(&mut workers, &busy, 0, &[lease_of(&held[0])]).await.revoked, vec![lease_of(&held[0])]);
    c.stop().await.unwrap();
}

/// Reports W failures (a legal result on any board) for `offsets` of a shard.
async fn report_failures(workers: &mut Workers, w: &Worker, shard: &pb::Shard, offsets: std::ops::Range<u32>) {
    let tasks = offsets
        .map(|start_offset| pb::TaskOutcome {
            start_offset,
            method_index: 0,
            success: false,
            attempts: 1,
            visited: 3,
            micros: 10,
            outcome: pb::Outcome::GaveUp as i32,
            ..Default::default()
        })
        .collect();
    let results = vec![pb::ShardResults { shard_id: shard.shard_id, epoch: shard.epoch, tasks, ..Default::default() }];
    let req = pb::PollRequest {
        worker_id: w.id,
        coordinator_nonce: w.nonce,
        free_slots: 0,
        running: vec![lease_of(shard)],
        results,
        session_secret: w.secret.clone(),
        ..Default::default()
    };
    workers.poll(req).await.unwrap();
}

/// The rate after a restart counts what came since, over the coordinator's
/// minute window on tokio's paused clock: not the tasks done before it
/// divided by the seconds since it started.
#[tokio::test(start_paused = true)]
async fn after_a_restart_the_rate_counts_only_what_came_since() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let c = Coordinator::start_on(&path).await;
    let id = submit(&mut c.sweeps(None).await).await;
    let mut workers = c.workers(None).await;
    let w = register(&mut workers, "before").await;
    let shard = poll(&mut workers, &w, 1, &[]).await.shards[0].clone();
    report_failures(&mut workers, &w, &shard, 0..2).await;
    c.stop().await.unwrap();

    let c = Coordinator::start_on(&path).await;
    // The coordinator serves at once and takes its running sweeps back in
    // the background: the window starts once it has (before that a status
    // has the stored figures alone, no work counts to start a window from).
    settle().await;
    let mut sweeps = c.sweeps(None).await;
    let status = |sweeps: &mut Sweeps| {
        let r = pb::SweepRef { sweep_id: id.clone() };
        let mut sweeps = sweeps.clone();
        async move { sweeps.status(r).await.unwrap().into_inner() }
    };
    let s = status(&mut sweeps).await;
    let work_before = s.work.expect("a running sweep's work").done_micros;
    assert_eq!(s.tasks_done, 2, "done before the restart");
    assert_eq!((s.rate_per_sec, s.eta_secs), (None, None), "no rate from one look, no ETA");
    tokio::time::advance(Duration::from_secs(10)).await;
    settle().await;
    let s = status(&mut sweeps).await;
    assert_eq!(s.rate_per_sec, Some(0.0), "nothing since the restart");
    assert_eq!(s.eta_secs, None, "no ETA while nothing moves");

    let mut workers = c.workers(None).await;
    let w = register(&mut workers, "after").await;
    let shard = poll(&mut workers, &w, 1, &[]).await.shards[0].clone();
    report_failures(&mut workers, &w, &shard, 2..4).await;
    tokio::time::advance(Duration::from_secs(10)).await;
    settle().await;
    let s = status(&mut sweeps).await;
    assert_eq!(s.tasks_done, 4);
    let rate = s.rate_per_sec.expect("a rate after 20 s");
    assert!(rate > 0.05 && rate < 0.15, "2 tasks in about 20 s, not 4 over the sweep's life: {rate}");
    // The ETA is the estimated work left over the work done a second since
    // the restart (20 s ago).
    let eta = s.eta_secs.expect("an ETA once tasks move");
    let work = s.work.expect("a running sweep's work");
    let want = (work.total_micros - work.done_micros) / ((work.done_micros - work_before) / 20.0);
    // (The window counts whole nanoseconds of work.)
    assert!((eta - want).abs() < 1e-3 * want, "ETA {eta} s, want {want} s");
    c.stop().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_sweep_resumed_runs_again_from_where_it_stopped() {
    let c = Coordinator::start(None).await;
    let mut sweeps = c.sweeps(None).await;
    let id = submit(&mut sweeps).await;
    let mut workers = c.workers(None).await;
    let w = register(&mut workers, "w").await;
    let held = poll(&mut workers, &w, 1, &[]).await.shards;
    sweeps.cancel(pb::SweepRef { sweep_id: id.clone() }).await.unwrap();
    assert!(poll(&mut workers, &w, 4, &[lease_of(&held[0])]).await.shards.is_empty());
    // Submitted again as is, it stays cancelled.
    let spec = sweeps.status(pb::SweepRef { sweep_id: id.clone() }).await.unwrap().into_inner().spec_toml;
    let same = sweeps
        .submit(pb::SubmitRequest { spec_toml: spec.clone(), resume: false, no_reuse: false })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(same.status.unwrap().state, pb::SweepState::Cancelled as i32);
    // `ksweep resume ID` submits the stored spec with `resume`: the same sweep, running again.
    let again =
        sweeps.submit(pb::SubmitRequest { spec_toml: spec, resume: true, no_reuse: false }).await.unwrap().into_inner();
    assert_eq!((again.sweep_id.as_str(), again.created), (id.as_str(), false));
    assert_eq!(again.status.unwrap().state, pb::SweepState::Running as i32);
    assert!(!poll(&mut workers, &w, 4, &[]).await.shards.is_empty(), "its shards are handed out again");
    c.stop().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn every_rpc_needs_the_token() {
    let c = Coordinator::start(Some("s3cret")).await;
    for token in [None, Some("wrong")] {
        let mut sweeps = c.sweeps(token).await;
        let mut workers = c.workers(token).await;
        let r = pb::SweepRef::default();
        let codes = [
            sweeps
                .submit(pb::SubmitRequest { spec_toml: SPEC.to_string(), resume: false, no_reuse: false })
                .await
                .map(drop)
                .unwrap_err()
                .code(),
            sweeps.list(pb::ListRequest {}).await.map(drop).unwrap_err().code(),
            sweeps.status(r.clone()).await.map(drop).unwrap_err().code(),
            sweeps.watch(r.clone()).await.map(drop).unwrap_err().code(),
            sweeps.cancel(r.clone()).await.map(drop).unwrap_err().code(),
            sweeps.table(r.clone()).await.map(drop).unwrap_err().code(),
            sweeps.export(r.clone()).await.map(drop).unwrap_err().code(),
            workers
                .register(pb::RegisterRequest {
                    protocol_version: PROTOCOL_VERSION,
                    name: "w".into(),
                    threads: 1,
                    ..Default::default()
                })
                .await
                .map(drop)
                .unwrap_err()
                .code(),
            workers.poll(pb::PollRequest::default()).await.map(drop).unwrap_err().code(),
            workers.goodbye(pb::GoodbyeRequest::default()).await.map(drop).unwrap_err().code(),
        ];
        assert_eq!(codes, [Code::Unauthenticated; 10], "token {token:?}");
        let (channel, bearer) = c.channel(token).await;
        let mut health = tonic_health::pb::health_client::HealthClient::with_interceptor(channel, bearer);
        let e = health.check(tonic_health::pb::HealthCheckRequest { service: String::new() }).await.unwrap_err();
        assert_eq!(e.code(), Code::Unauthenticated);
    }
    let mut sweeps = c.sweeps(Some("s3cret")).await;
    submit(&mut sweeps).await;
    assert_eq!(sweeps.list(pb::ListRequest {}).await.unwrap().into_inner().sweeps.len(), 1);
    register(&mut c.workers(Some("s3cret")).await, "w").await;
    c.stop().await.unwrap();
}

/// A coordinator that cannot start (here: a key that is no key) leaves no
/// empty database file behind; one that started keeps it.
#[tokio::test]
async fn a_coordinator_that_fails_to_start_leaves_no_database_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    let store = Store::open(&path).unwrap();
    assert!(path.exists());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let tls = TlsIdentity { cert_pem: b"not a certificate".to_vec(), key_pem: b"not a key".to_vec() };
    let options = CoordinatorOptions { tls: Some(tls), ..CoordinatorOptions::default() };
    let e = serve(listener, store, options, std::future::pending()).await.unwrap_err();
    assert!(e.to_string().contains("TLS"), "{e}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "nothing left behind: {left:?}");

    // One that started keeps its file, even with nothing stored.
    let store = Store::open(&path).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    serve(listener, store, CoordinatorOptions::default(), async {}).await.unwrap();
    assert!(path.exists());
}

/// When `serve` returns, the database is closed and its writer lock free,
/// even with a client's watch stream still open: the file opens again at
/// once (`ksweep replay` runs several embedded sweeps on one file).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_serve_returns_the_database_is_free() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    for round in 0..20 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let store = Store::open(&path).unwrap_or_else(|e| panic!("round {round}: {e}"));
        let task = tokio::spawn(serve(listener, store, CoordinatorOptions::default(), async {
            let _ = stopped.await;
        }));
        let channel = tonic::transport::Endpoint::from_shared(url).unwrap().connect().await.unwrap();
        let mut sweeps = SweepsClient::with_interceptor(channel, BearerToken::new(None).unwrap());
        let id = sweeps
            .submit(pb::SubmitRequest { spec_toml: SPEC.to_string(), resume: false, no_reuse: false })
            .await
            .unwrap()
            .into_inner()
            .sweep_id;
        // A watch stream of a running sweep, held open while the coordinator stops.
        let _stream = sweeps.watch(pb::SweepRef { sweep_id: id }).await.unwrap().into_inner();
        let _ = stop.send(());
        task.await.unwrap().unwrap();
    }
}

/// Knowing a worker's id and the coordinator's nonce (both easy to learn:
/// ids are sequential) is not enough to poll or say goodbye as it.
#[tokio::test(start_paused = true)]
async fn a_worker_cannot_be_impersonated_without_its_session_secret() {
    let c = Coordinator::start(None).await;
    let mut sweeps = c.sweeps(None).await;
    let mut workers = c.workers(None).await;
    submit(&mut sweeps).await;
    let victim = register(&mut workers, "victim").await;
    let thief = register(&mut workers, "thief").await;
    assert_ne!(victim.secret, thief.secret);
    let held = poll(&mut workers, &victim, 1, &[]).await.shards;
    assert_eq!(held.len(), 1);
    for secret in [vec![], thief.secret.clone(), victim.secret[..15].to_vec()] {
        let forged = Worker { secret, ..victim.clone() };
        let req = pb::PollRequest {
            worker_id: forged.id,
            coordinator_nonce: forged.nonce,
            free_slots: 4,
            session_secret: forged.secret.clone(),
            ..Default::default()
        };
        let e = workers.poll(req).await.unwrap_err();
        assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
        let bye = pb::GoodbyeRequest {
            worker_id: forged.id,
            coordinator_nonce: forged.nonce,
            returned: held.iter().map(lease_of).collect(),
            session_secret: forged.secret.clone(),
        };
        assert_eq!(workers.goodbye(bye).await.unwrap_err().code(), Code::FailedPrecondition);
    }
    // The victim still holds its shard.
    assert!(poll(&mut workers, &victim, 0, &[lease_of(&held[0])]).await.revoked.is_empty());
    c.stop().await.unwrap();
}

/// A name that would forge log lines or bloat every export, a thread
/// count or memory that would claim the whole queue, and labels or a
/// provenance past their bounds are refused at registration.
#[tokio::test(start_paused = true)]
async fn registration_refuses_hostile_names_thread_counts_and_labels() {
    let c = Coordinator::start(None).await;
    let mut workers = c.workers(None).await;
    let many: Vec<String> = (0..=ksweep_proto::MAX_LABELS).map(|i| format!("l{i}")).collect();
    let cases = [
        ("w\n2026-01-01 INFO forged line".to_string(), 1, vec![], "RegisterRequest.name"),
        ("x".repeat(2 << 20), 1, vec![], "RegisterRequest.name"),
        ("greedy".to_string(), u32::MAX, vec![], "RegisterRequest.threads"),
        ("w".to_string(), 1, vec!["ok".into(), "x\nINFO forged".into()], "RegisterRequest.labels: label 2"),
        ("w".to_string(), 1, vec!["y".repeat(2 << 20)], "RegisterRequest.labels: label 1"),
        ("w".to_string(), 1, many, "RegisterRequest.labels: at most 32 labels"),
    ];
    let hostile = [
        (pb::Provenance { host: "h\nINFO forged".into(), ..Default::default() }, "RegisterRequest.provenance.host"),
        (pb::Provenance { cpu: "c".repeat(2 << 20), ..Default::default() }, "RegisterRequest.provenance.cpu"),
        (
            pb::Provenance { features: vec!["f".into(); 1000], ..Default::default() },
            "RegisterRequest.provenance.features",
        ),
    ];
    let cases = cases.into_iter().map(|(n, t, l, f)| (n, t, l, None, None, f));
    let cases = cases.chain(hostile.into_iter().map(|(p, f)| ("w".to_string(), 1, vec![], None, Some(p), f)));
    // 16 EiB, to take the boards no one else can hold.
    let greedy = ("w".to_string(), 1, vec![], Some(u64::MAX), None, "RegisterRequest.memory_bytes: at most");
    for (name, threads, labels, memory_bytes, provenance, field) in cases.chain([greedy]) {
        let req = pb::RegisterRequest {
            protocol_version: PROTOCOL_VERSION,
            name: name.clone(),
            threads,
            memory_bytes,
            labels,
            provenance,
        };
        let e = workers.register(req).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
        assert!(e.message().contains(field) && e.message().len() < 200, "named, not echoed: {}", e.message());
    }
    c.stop().await.unwrap();
}

/// A spec's own [limits] cannot raise what the coordinator allows: a spec
/// declaring a huge max_configurations is held to the coordinator's cap and
/// refused before the grid is expanded.
#[tokio::test(start_paused = true)]
async fn a_spec_cannot_raise_the_coordinators_limits() {
    let mut options = CoordinatorOptions::default();
    options.spec_caps.max_configurations = 10;
    let c = Coordinator::start_with(options).await;
    let mut sweeps = c.sweeps(None).await;
    let greedy = r#"
        name = "greedy"
        seed = 1
        starts = 1
        methods = ["w"]
        [limits]
        max_configurations = 16777216
        [[grid]]
        rule = [2, 1]
        dims = [2]
        n_range = { from = 5, to = 30 }
    "#;
    let e = sweeps
        .submit(pb::SubmitRequest { spec_toml: greedy.into(), resume: false, no_reuse: false })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("limits.max_configurations") && e.message().contains("over the limit 1e1"), "{e:?}");
    // Within the cap, the same spec form is accepted.
    let modest = greedy.replace("to = 30", "to = 9");
    assert!(sweeps.submit(pb::SubmitRequest { spec_toml: modest, resume: false, no_reuse: false }).await.is_ok());
    c.stop().await.unwrap();
}

/// A 1 KB spec of a million boards (15 leapers x N = 1..65536) once cost a
/// coordinator 370 MB and most of a minute: a served coordinator holds a
/// spec to 100,000 configurations unless its operator raises the cap, and
/// refuses more before it expands any.
#[tokio::test(start_paused = true)]
async fn a_small_spec_of_a_million_boards_is_refused_before_it_costs_memory() {
    let c = Coordinator::start(None).await;
    let mut sweeps = c.sweeps(None).await;
    let mut bloat = "name = \"bloat\"\nseed = 1\nstarts = 1\nmethods = [\"w\"]\n".to_string();
    for a in 2..=16 {
        bloat.push_str(&format!("[[grid]]\nrule = [{a}, 1]\ndims = [2]\nn_range = {{ from = 1, to = 65536 }}\n"));
    }
    assert!(bloat.len() < 2048, "{} bytes", bloat.len());
    let began = std::time::Instant::now();
    let e = sweeps.submit(pb::SubmitRequest { spec_toml: bloat, resume: false, no_reuse: false }).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(
        e.message().contains("limits.max_configurations: the sweep has 9.8304e5 configurations, over the limit 1e5"),
        "{e:?}"
    );
    assert!(began.elapsed() < Duration::from_secs(2), "refused before expanding: {:?}", began.elapsed());
    c.stop().await.unwrap();
}

/// A task's budget and iterations are held to the coordinator's caps
/// (issue 34: `budget = 2^64 - 1` on `bt` pinned a worker for ever),
/// whatever the spec's own [limits] say; the error names the field and
/// the limit.
#[tokio::test(start_paused = true)]
async fn budgets_and_iterations_are_held_to_the_coordinators_caps() {
    let mut options = CoordinatorOptions::default();
    options.spec_caps.max_iterations = 500;
    let c = Coordinator::start_with(options).await;
    let mut sweeps = c.sweeps(None).await;
    let hog = |effort: &str| {
        format!(
            "name = \"hog\"\nseed = 1\nstarts = 6\nmethods = [\"bt\", \"nn\"]\n{effort}\n[limits]\n\
             max_budget = 18446744073709551615\nmax_iterations = 1000000\n[[grid]]\nrule = [3, 2]\ndims = [2]\nn = [12]"
        )
    };
    let refused = [
        ("budget = 18446744073709551615", "budget: 18446744073709551615 is over the limit 10000000000"),
        ("budget = 10000000001", "budget: 10000000001 is over the limit 10000000000"),
        ("iterations = 501", "iterations: 501 is over the limit 500"),
    ];
    for (effort, needle) in refused {
        let e = sweeps
            .submit(pb::SubmitRequest { spec_toml: hog(effort), resume: false, no_reuse: false })
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
        assert!(e.message().contains(needle), "{effort}: {e:?}");
    }
    let within = hog("budget = 10000000000\niterations = 500");
    assert!(sweeps.submit(pb::SubmitRequest { spec_toml: within, resume: false, no_reuse: false }).await.is_ok());
    c.stop().await.unwrap();
}

/// Connections that never speak hold no slot for long: with every slot
/// taken by silent sockets and no one else asking for one, the server
/// closes them at the handshake deadline, not before; a real client is
/// served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_are_closed_and_cannot_starve_clients() {
    let connections = ConnectionLimits { max: 4, handshake: Duration::from_millis(300), idle: Duration::from_secs(60) };
    let c = Coordinator::start_with(CoordinatorOptions { connections, ..CoordinatorOptions::default() }).await;
    let addr = c.url.trim_start_matches("http://").to_string();
    let mut silent = Vec::new();
    for _ in 0..4 {
        silent.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    let began = std::time::Instant::now();
    for s in &mut silent {
        assert!(closed_within(s, Duration::from_secs(5)).await, "the silent connection was closed");
    }
    assert!(began.elapsed() >= Duration::from_millis(250), "closed at the deadline: {:?}", began.elapsed());
    let mut sweeps = c.sweeps(None).await;
    let listed = tokio::time::timeout(Duration::from_secs(10), sweeps.list(pb::ListRequest {})).await;
    assert!(matches!(listed, Ok(Ok(_))), "a real client is served: {listed:?}");
    c.stop().await.unwrap();
}

/// Whether the server has closed `socket`, within `wait`.
async fn closed_within(socket: &mut tokio::net::TcpStream, wait: Duration) -> bool {
    use tokio::io::AsyncReadExt;
    // The server's HTTP/2 preface, then the end of the stream.
    let mut sink = Vec::new();
    tokio::time::timeout(wait, socket.read_to_end(&mut sink)).await.is_ok()
}

/// Peers without the token cannot keep a client with it out: with every
/// slot held by a client, a peer whose call was refused (the server's
/// pings would keep it open for ever) and silent sockets (for the whole
/// handshake deadline), later clients with the token are served at once.
/// The oldest connection that has made no call with the token gives way
/// each time, never the client's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peers_without_the_token_cannot_keep_clients_out() {
    let connections = ConnectionLimits { max: 4, handshake: Duration::from_secs(60), idle: Duration::from_secs(60) };
    let options = CoordinatorOptions { token: Some("t".into()), connections, ..CoordinatorOptions::default() };
    let c = Coordinator::start_with(options).await;
    let addr = c.url.trim_start_matches("http://").to_string();
    let within = Duration::from_secs(2);
    let mut client = c.sweeps(Some("t")).await;
    client.list(pb::ListRequest {}).await.unwrap();
    let mut stranger = c.sweeps(None).await;
    let refused = stranger.list(pb::ListRequest {}).await.unwrap_err();
    assert_eq!(refused.code(), Code::Unauthenticated, "{refused:?}");
    let mut silent = Vec::new();
    for _ in 0..2 {
        silent.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    // Every slot is taken: the stranger gives way, then the first socket.
    let mut late = Vec::new();
    for (i, waiting) in ["the stranger", "the first silent socket"].into_iter().enumerate() {
        let began = std::time::Instant::now();
        let served = tokio::time::timeout(within, async {
            let mut client = c.sweeps(Some("t")).await;
            let listed = client.list(pb::ListRequest {}).await;
            late.push(client); // holding its slot
            listed
        })
        .await;
        assert!(matches!(served, Ok(Ok(_))), "client {} was not served over {waiting}: {served:?}", i + 2);
        assert!(began.elapsed() < within, "{:?}", began.elapsed());
    }
    // The second late client took the first silent socket's slot, not the
    // first client's (older) nor the second socket's (newer).
    assert!(closed_within(&mut silent[0], within).await, "the oldest silent socket gave way");
    assert!(!closed_within(&mut silent[1], Duration::from_millis(300)).await, "the newer one is still open");
    assert!(client.list(pb::ListRequest {}).await.is_ok());
    drop((client, stranger, silent, late));
    c.stop().await.unwrap();
}

/// Registrations past the rate are refused RESOURCE_EXHAUSTED, which a
/// worker retries after its backoff, with a message saying the limit and
/// when to try again; one is taken again once the rate allows.
#[tokio::test(start_paused = true)]
async fn registrations_past_the_rate_are_refused_until_it_allows() {
    // Within the server's pings (an hour's advance would time them out).
    let every = Duration::from_secs(10);
    let options = CoordinatorOptions { registrations: RateLimit { burst: 3, every }, ..CoordinatorOptions::default() };
    let c = Coordinator::start_with(options).await;
    let mut workers = c.workers(None).await;
    for i in 0..3 {
        register(&mut workers, &format!("w{i}")).await;
    }
    let request = pb::RegisterRequest { protocol_version: PROTOCOL_VERSION, threads: 1, ..Default::default() };
    let e = workers.register(request.clone()).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("3 at once, then one each 10s") && e.message().contains("try again in"), "{e:?}");
    let action = ksweep_proto::classify(ksweep_proto::WorkerRpc::Register, &e);
    assert_eq!(action, ksweep_proto::WorkerAction::RetryLater);
    tokio::time::advance(every).await;
    assert!(workers.register(request.clone()).await.is_ok());
    assert_eq!(workers.register(request).await.unwrap_err().code(), Code::ResourceExhausted);
    c.stop().await.unwrap();
}

/// The default rate takes a cluster of a thousand workers registering at
/// once (all restarted, or the coordinator restarted under them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_workers_register_at_once() {
    let c = Coordinator::start(None).await;
    let workers = c.workers(None).await;
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..1000 {
        let mut workers = workers.clone();
        calls.spawn(async move { register(&mut workers, &format!("w{i}")).await });
    }
    let registered = calls.join_all().await;
    assert_eq!(registered.len(), 1000);
    c.stop().await.unwrap();
}

/// An oversized sweep id is refused by its length, never echoed back.
#[tokio::test(start_paused = true)]
async fn an_oversized_sweep_id_is_refused_not_echoed() {
    let c = Coordinator::start(None).await;
    let mut sweeps = c.sweeps(None).await;
    let e = sweeps.status(pb::SweepRef { sweep_id: "f".repeat(1 << 20) }).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("sweep_id") && e.message().len() < 200, "{}", e.message());
    c.stop().await.unwrap();
}

/// Field 1 of `SubmitRequest` is a string; sent as a varint, the message
/// does not parse.
#[derive(Clone, PartialEq, prost::Message)]
struct Mistyped {
    #[prost(uint64, tag = "1")]
    spec_toml: u64,
}

/// A message that does not parse is the sender's fault: InvalidArgument,
/// not Internal.
#[tokio::test(start_paused = true)]
async fn a_malformed_message_is_an_invalid_argument() {
    let c = Coordinator::start(None).await;
    let (channel, _) = c.channel(None).await;
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let codec = tonic_prost::ProstCodec::<Mistyped, pb::SubmitReply>::default();
    let path = tonic::codegen::http::uri::PathAndQuery::from_static("/ksweep.v1.Sweeps/Submit");
    let e = grpc.unary(tonic::Request::new(Mistyped { spec_toml: 7 }), path, codec).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("malformed message"), "{e:?}");
    c.stop().await.unwrap();
}
