//! The worker against a scripted coordinator (an in-process tonic server):
//! what it does when a call hangs or fails, seen from the wire.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ksweep_proto::v1 as pb;
use ksweep_proto::v1::workers_server::{Workers, WorkersServer};
use ksweep_worker::{Error, WorkerOptions};
use tokio::sync::{oneshot, Notify};
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Code, Request, Response, Status};

/// How the fake answers a worker's polls.
#[derive(Debug, Clone, Copy)]
enum Script {
    /// The first poll never returns; the others are answered empty.
    FreezeFirstPoll,
    /// Hands out one shard; refuses every poll delivering results with
    /// UNAVAILABLE until shutdown; answers the final delivery (the poll
    /// asking for no shards) with these codes in turn, then OK.
    FailDelivery { last: &'static [Code] },
    /// Hands out a hog shard (`bt` with an endless budget) and a quick one
    /// together; once the quick one is handed back, revokes the hog.
    Hog,
}

struct Fake {
    script: Script,
    lease_millis: u32,
    state: Mutex<State>,
    /// Wakes the test on every poll.
    polled: Notify,
}

#[derive(Default)]
struct State {
    polls: usize,
    handed_out: bool,
    /// Tasks received in polls that were answered OK.
    delivered: usize,
    /// Session polls carrying results, all refused.
    refused_deliveries: usize,
    /// The most tasks one refused poll carried.
    refused_tasks: usize,
    final_deliveries: usize,
    /// The last registration.
    registered: Option<pb::RegisterRequest>,
    /// Script::Hog: the poll that handed the quick shard back, when the hog
    /// was revoked, and the first poll asking for work after that.
    handed_back: Option<pb::PollRequest>,
    revoked_at: Option<std::time::Instant>,
    asked_after_revoke: Option<std::time::Duration>,
}

/// A small shard: 3 starts of the knight on 5x5, one method.
fn shard() -> pb::Shard {
    pb::Shard {
        shard_id: 1,
        epoch: 1,
        sweep_id: "fake".into(),
        sweep_seed: 3,
        config: Some(pb::BoardConfig { sides: vec![5, 5], rule: vec![2, 1], moves_flat: vec![], max_cells: 0 }),
        methods: vec!["w".into()],
        starts: vec![0, 2, 4],
        budget: 0,
        iterations: 0,
        closed: false,
    }
}

/// Script::Hog's shards: `bt` from one start of (3,2) 12x12 with an endless
/// budget (hours of search), and the quick [`shard`].
fn hog_and_quick() -> Vec<pb::Shard> {
    let hog = pb::Shard {
        config: Some(pb::BoardConfig { sides: vec![12, 12], rule: vec![3, 2], moves_flat: vec![], max_cells: 0 }),
        methods: vec!["bt".into()],
        starts: vec![0],
        budget: u64::MAX,
        ..shard()
    };
    vec![hog, pb::Shard { shard_id: 2, ..shard() }]
}

#[tonic::async_trait]
impl Workers for Fake {
    async fn register(&self, req: Request<pb::RegisterRequest>) -> Result<Response<pb::RegisterReply>, Status> {
        self.state.lock().expect("fake state").registered = Some(req.into_inner());
        Ok(Response::new(pb::RegisterReply {
            worker_id: 1,
            coordinator_nonce: 1,
            lease_millis: self.lease_millis,
            poll_millis: 50,
            session_secret: b"fake-secret".to_vec(),
        }))
    }

    async fn poll(&self, req: Request<pb::PollRequest>) -> Result<Response<pb::PollReply>, Status> {
        let req = req.into_inner();
        assert_eq!(req.session_secret, b"fake-secret", "every poll presents the session secret");
        let tasks: usize = req.results.iter().map(|r| r.tasks.len()).sum();
        let reply = {
            let mut st = self.state.lock().expect("fake state");
            st.polls += 1;
            match self.script {
                Script::FreezeFirstPoll if st.polls == 1 => None,
                Script::FreezeFirstPoll => Some(Ok(pb::PollReply::default())),
                Script::Hog => Some(Ok(if !st.handed_out && req.free_slots > 0 {
                    st.handed_out = true;
                    pb::PollReply { shards: hog_and_quick(), ..Default::default() }
                } else if st.handed_back.is_none() && req.returned.iter().any(|l| l.shard_id == 2) {
                    st.handed_back = Some(req.clone());
                    st.revoked_at = Some(std::time::Instant::now());
                    pb::PollReply { revoked: vec![pb::LeaseRef { shard_id: 1, epoch: 1 }], ..Default::default() }
                } else {
                    if let (Some(at), None, true) = (st.revoked_at, st.asked_after_revoke, req.free_slots > 0) {
                        st.asked_after_revoke = Some(at.elapsed());
                    }
                    pb::PollReply::default()
                })),
                Script::FailDelivery { last } => Some(if tasks > 0 && req.free_slots == 0 {
                    st.final_deliveries += 1;
                    match last.get(st.final_deliveries - 1) {
                        Some(&code) => Err(Status::new(code, "fake: refused the last delivery")),
                        None => {
                            st.delivered += tasks;
                            Ok(pb::PollReply::default())
                        }
                    }
                } else if tasks > 0 {
                    st.refused_deliveries += 1;
                    st.refused_tasks = st.refused_tasks.max(tasks);
                    Err(Status::unavailable("fake: down for now"))
                } else if !st.handed_out && req.free_slots > 0 {
                    st.handed_out = true;
                    Ok(pb::PollReply { shards: vec![shard()], ..Default::default() })
                } else {
                    Ok(pb::PollReply::default())
                }),
            }
        };
        self.polled.notify_one();
        match reply {
            Some(r) => r.map(Response::new),
            None => std::future::pending().await,
        }
    }

    async fn goodbye(&self, _: Request<pb::GoodbyeRequest>) -> Result<Response<pb::GoodbyeReply>, Status> {
        Ok(Response::new(pb::GoodbyeReply {}))
    }
}

/// Serves `fake` on a loopback port; returns its URL.
async fn serve(fake: Arc<Fake>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let url = format!("http://{}", listener.local_addr().expect("local addr"));
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(WorkersServer::from_arc(fake))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    url
}

fn options(url: String) -> WorkerOptions {
    WorkerOptions { threads: 1, name: "test".into(), ..WorkerOptions::new(url) }
}

fn fake(script: Script, lease_millis: u32) -> Arc<Fake> {
    Arc::new(Fake { script, lease_millis, state: Mutex::default(), polled: Notify::new() })
}

/// Waits (at most `limit`) until the fake's state satisfies `pred`.
async fn until(fake: &Fake, limit: Duration, what: &str, pred: impl Fn(&State) -> bool) {
    let wait = async {
        loop {
            let notified = fake.polled.notified();
            if pred(&fake.state.lock().expect("fake state")) {
                return;
            }
            notified.await;
        }
    };
    tokio::time::timeout(limit, wait).await.unwrap_or_else(|_| panic!("{what}: not within {limit:?}"));
}

#[tokio::test]
async fn a_poll_the_coordinator_never_answers_times_out_and_is_made_again() {
    // A 1 s lease: every call is bounded by half of it.
    let fake = fake(Script::FreezeFirstPoll, 1000);
    let url = serve(fake.clone()).await;
    let (stop, stopped) = oneshot::channel::<()>();
    let worker = tokio::spawn(ksweep_worker::run(options(url), async {
        let _ = stopped.await;
    }));
    until(&fake, Duration::from_secs(5), "a second poll after the frozen one", |s| s.polls >= 2).await;
    let _ = stop.send(());
    let result = tokio::time::timeout(Duration::from_secs(10), worker).await.expect("the worker stops").expect("join");
    assert!(result.is_ok(), "{result:?}");
}

/// A worker advertises its threads, memory budget and labels when it
/// registers.
#[tokio::test]
async fn registration_advertises_threads_memory_and_labels() {
    let fake = fake(Script::FreezeFirstPoll, 1000);
    let url = serve(fake.clone()).await;
    let labels = vec!["bigmem".to_string(), "site=lab".to_string()];
    let options = WorkerOptions { threads: 2, memory: Some(5 << 20), labels: labels.clone(), ..options(url) };
    let (stop, stopped) = oneshot::channel::<()>();
    let worker = tokio::spawn(ksweep_worker::run(options, async {
        let _ = stopped.await;
    }));
    until(&fake, Duration::from_secs(5), "a poll after registering", |s| s.polls >= 1).await;
    let registered = fake.state.lock().expect("fake state").registered.clone().expect("registered");
    assert_eq!((registered.threads, registered.memory_bytes, registered.labels), (2, Some(5 << 20), labels));
    let _ = stop.send(());
    let result = tokio::time::timeout(Duration::from_secs(10), worker).await.expect("the worker stops").expect("join");
    assert!(result.is_ok(), "{result:?}");
}

/// Runs a worker until the fake has refused a delivery of all the shard's
/// results (a busy machine may deliver the first before the others are
/// done), then stops it; returns what `run` returned and the fake.
async fn stop_with_undelivered_results(last: &'static [Code]) -> (ksweep_worker::Result<()>, Arc<Fake>) {
    let fake = fake(Script::FailDelivery { last }, 10_000);
    let url = serve(fake.clone()).await;
    let (stop, stopped) = oneshot::channel::<()>();
    let worker = tokio::spawn(ksweep_worker::run(options(url), async {
        let _ = stopped.await;
    }));
    until(&fake, Duration::from_secs(10), "a delivery of all results", |s| s.refused_tasks >= shard().starts.len())
        .await;
    let _ = stop.send(());
    let result = tokio::time::timeout(Duration::from_secs(15), worker).await.expect("the worker stops").expect("join");
    (result, fake)
}

#[tokio::test]
async fn a_refused_last_delivery_is_reported() {
    let (result, fake) = stop_with_undelivered_results(&[Code::InvalidArgument]).await;
    match result {
        Err(Error::Undelivered { tasks, why }) => {
            assert_eq!(tasks, 3);
            assert!(why.contains("fake: refused the last delivery"), "{why}");
        }
        other => panic!("run should report the undelivered results, got {other:?}"),
    }
    let st = fake.state.lock().expect("fake state");
    assert_eq!((st.final_deliveries, st.delivered), (1, 0), "a refusal is not retried");
}

#[tokio::test]
async fn a_transient_failure_of_the_last_delivery_is_retried() {
    let (result, fake) = stop_with_undelivered_results(&[Code::Unavailable, Code::Internal]).await;
    assert!(result.is_ok(), "{result:?}");
    let st = fake.state.lock().expect("fake state");
    assert_eq!((st.final_deliveries, st.delivered), (3, 3), "delivered on the third try");
}

#[tokio::test]
async fn a_last_delivery_that_keeps_failing_is_reported() {
    let always: &'static [Code] = &[Code::Unavailable; 64];
    let (result, _) = stop_with_undelivered_results(always).await;
    assert!(matches!(result, Err(Error::Undelivered { tasks: 3, .. })), "{result:?}");
}

/// Issue 34: a worker whose one thread another sweep's endless `bt` task
/// holds hands back the shard it cannot start (and asks for none) once the
/// thread has been held up for a while, its heartbeats showing the hog's
/// polls; revoked, the hog stops within milliseconds and the worker asks
/// for work again at its next poll.
#[tokio::test]
async fn a_hogged_worker_hands_back_what_waits_and_a_revoked_hog_frees_it() {
    let fake = fake(Script::Hog, 10_000);
    let url = serve(fake.clone()).await;
    let (stop, stopped) = oneshot::channel::<()>();
    let worker = tokio::spawn(ksweep_worker::run(options(url), async {
        let _ = stopped.await;
    }));
    until(&fake, Duration::from_secs(20), "the quick shard handed back", |s| s.handed_back.is_some()).await;
    let back = fake.state.lock().expect("fake state").handed_back.clone().expect("handed back");
    assert_eq!(back.free_slots, 0, "a held-up pool asks for nothing");
    assert_eq!(back.running, vec![pb::LeaseRef { shard_id: 1, epoch: 1 }], "the hog is still heartbeated");
    assert!(back.task_polls > 0, "the hog's polls show it working");
    until(&fake, Duration::from_secs(5), "a request for work after the revoke", |s| s.asked_after_revoke.is_some())
        .await;
    let freed = fake.state.lock().expect("fake state").asked_after_revoke.expect("asked");
    eprintln!("the hog's thread was free {freed:?} after the revoke");
    assert!(freed < Duration::from_secs(1), "the thread was freed {freed:?} after the revoke");
    let _ = stop.send(());
    let result = tokio::time::timeout(Duration::from_secs(10), worker).await.expect("the worker stops").expect("join");
    assert!(result.is_ok(), "{result:?}");
}

/// Serves `fake` on a loopback port until `stop` completes (then closes its
/// connections); returns its URL.
async fn serve_until(fake: Arc<Fake>, stop: oneshot::Receiver<()>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let url = format!("http://{}", listener.local_addr().expect("local addr"));
    tokio::spawn(
        tonic::transport::Server::builder().add_service(WorkersServer::from_arc(fake)).serve_with_incoming_shutdown(
            TcpListenerStream::new(listener),
            async {
                let _ = stop.await;
            },
        ),
    );
    url
}

/// A worker given a cluster directory (`--dir`) waits for a coordinator to
/// announce itself there, follows it when it moves (a requeued batch job on
/// another node and port) and leaves, exit 0, once it has finished.
#[tokio::test]
async fn a_worker_finds_its_coordinator_through_a_cluster_directory() {
    use ksweep_proto::cluster_dir::ClusterDir;
    let path = std::env::temp_dir().join(format!("ksweep-worker-dir-{}", std::process::id()));
    std::fs::create_dir_all(&path).expect("temp dir");
    let dir = ClusterDir::new(&path);
    let options = WorkerOptions { cluster_dir: Some(dir.clone()), ..options("http://127.0.0.1:9".into()) };
    let worker = tokio::spawn(ksweep_worker::run(options, std::future::pending::<()>()));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!worker.is_finished(), "it waits while nothing is announced");

    let (stop_first, first_stopped) = oneshot::channel::<()>();
    let first = fake(Script::FreezeFirstPoll, 1000);
    dir.announce(&serve_until(first.clone(), first_stopped).await).expect("announce");
    until(&first, Duration::from_secs(10), "a poll of the announced coordinator", |s| s.polls >= 2).await;

    // The coordinator's job ends; its successor serves elsewhere.
    let second = fake(Script::FreezeFirstPoll, 1000);
    let (_stop_second, second_stopped) = oneshot::channel::<()>();
    dir.announce(&serve_until(second.clone(), second_stopped).await).expect("announce");
    let _ = stop_first.send(());
    until(&second, Duration::from_secs(15), "a poll of the coordinator that moved", |s| s.polls >= 2).await;

    dir.finish("done").expect("finish");
    drop(_stop_second);
    let result = tokio::time::timeout(Duration::from_secs(20), worker).await.expect("the worker leaves").expect("join");
    assert!(result.is_ok(), "{result:?}");
    std::fs::remove_dir_all(&path).expect("remove temp dir");
}
