//! Idle dashboard connections cannot take the file descriptors gRPC calls
//! need: 1,100 idle requests on `--http` had exhausted the coordinator's
//! descriptors, and `status` then timed out (`accept failed ... Too many
//! open files`). Its own test binary: it lowers this process's open-file
//! limit, which every test in a binary would share.

use std::time::{Duration, Instant};

use ksweep_coordinator::store::Store;
use ksweep_coordinator::{serve, CoordinatorOptions};
use ksweep_proto::v1 as pb;
use ksweep_proto::v1::sweeps_client::SweepsClient;
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use tokio::net::TcpStream;

/// The open-file limit this test runs under.
const LIMIT: u64 = 200;
/// Idle connections opened to the dashboard: with the server's side of
/// each, more than the limit holds. Beyond the 8 accepted, they wait in
/// the listener's backlog (128 here), so their connects complete at once.
const IDLE: usize = 120;

fn open_files() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_dashboard_connections_leave_grpc_its_descriptors() {
    let hard = getrlimit(Resource::Nofile).maximum;
    assert!(hard.is_none_or(|h| h >= LIMIT), "the hard limit {hard:?} is below {LIMIT}");
    // Lowered for good (the hard limit too, so the coordinator cannot raise it).
    setrlimit(Resource::Nofile, Rlimit { current: Some(LIMIT), maximum: Some(LIMIT) }).unwrap();

    let http = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut options = CoordinatorOptions { http: Some(http), ..Default::default() };
    options.dashboard.connections.max = 8;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(serve(listener, Store::in_memory().unwrap(), options, std::future::pending()));
    let mut sweeps = None;
    for _ in 0..200 {
        if let Ok(channel) = tonic::transport::Endpoint::from_shared(url.clone()).unwrap().connect().await {
            sweeps = Some(SweepsClient::new(channel));
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut sweeps = sweeps.expect("the coordinator is up");
    sweeps.list(pb::ListRequest {}).await.unwrap();

    let before = open_files();
    let mut idle = Vec::new();
    for _ in 0..IDLE {
        match TcpStream::connect(http).await {
            Ok(s) => idle.push(s),
            Err(e) => panic!("connection {} of {IDLE} to the dashboard: {e}", idle.len() + 1),
        }
    }
    // Let the dashboard accept all it will.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let held = open_files() - before;
    assert!(held <= IDLE + 8 + 4, "the dashboard took {} descriptors for {IDLE} idle connections", held - IDLE);

    // gRPC still has descriptors: a new connection, and a call on it, answer at once.
    let began = Instant::now();
    let called = tokio::time::timeout(Duration::from_secs(5), async {
        let channel =
            tonic::transport::Endpoint::from_shared(url.clone()).unwrap().connect().await.map_err(|e| e.to_string())?;
        SweepsClient::new(channel).list(pb::ListRequest {}).await.map_err(|e| e.to_string())
    })
    .await
    .unwrap_or_else(|_| Err("timed out".to_string()));
    assert!(called.is_ok(), "a new gRPC client was not served beside {IDLE} idle dashboard connections: {called:?}");
    assert!(began.elapsed() < Duration::from_secs(2), "it took {:?}", began.elapsed());
    drop(idle);
}
