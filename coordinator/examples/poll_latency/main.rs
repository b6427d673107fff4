//! Poll latency under load, with and without dashboards and downloads: the
//! figures of issues 34 and 40. Simulated workers (no engine: each holds a
//! shard, then reports every task as a W give-up, a legal result on any
//! board) poll a running coordinator; optional dashboard pages follow the
//! event stream and fetch the sweep's page data on every event, as the page
//! does; optional download loops fetch the results as Parquet. Prints Poll's
//! (all, those carrying results, those only asking for work or beating) and
//! `status`'s latency percentiles over the measured window.
//!
//! A worker holds a shard for `--hold-ms`, or, with `--micros-per-cost R`,
//! for as long as a worker of that speed takes: R microseconds per unit of
//! a task's estimated cost (cells x moves, the scheduler's measure), which it
//! also reports as each task's time. The scheduler then learns that speed
//! and cuts shards of its target length, so the load is what as many real
//! one-thread workers of that speed would send, not a flat hold.
//!
//! Issue 40's load (1,000 workers, tasks of about 4 ms, so about 250,000
//! results/s if the coordinator keeps up):
//!
//! ```sh
//! ksweep coordinator --db /tmp/load.db --listen 127.0.0.1:50551 &
//! poll_latency --coordinator http://127.0.0.1:50551 --pid "$!" --workers 1000 \
//!     --n-from 1000 --n-to 1101 --starts 50000 --micros-per-cost 0.00045 --warmup-secs 10 --secs 20
//! ```
//!
//! ```sh
//! ksweep coordinator --db /tmp/load.db --listen 127.0.0.1:50051 --http 127.0.0.1:8080 &
//! cargo run --release -p ksweep-coordinator --example poll_latency -- --pid "$(pgrep -f "ksweep coordinator")" \
//!     --coordinator http://127.0.0.1:50051 --http 127.0.0.1:8080 --workers 100 --pages 1
//! ```
//!
//! The coordinator runs without a token (loopback only). `bench/cluster.sh
//! polls` runs the cases of issue 34 this way.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ksweep_proto::v1 as pb;
use ksweep_proto::v1::sweeps_client::SweepsClient;
use ksweep_proto::v1::workers_client::WorkersClient;
use ksweep_proto::PROTOCOL_VERSION;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tonic::transport::Channel;

use args::{args, Args};
use samples::{percentiles, Samples};

mod args;
mod samples;

/// Square boards of `n` cells a side, `from <= n < to` (by default 8 to
/// 1,600), `starts` starts each (300: 478,200 tasks), rule W (a W give-up,
/// one walk, is a legal result anywhere), knight moves.
fn spec(starts: u64, (from, to): (u64, u64)) -> String {
    format!(
        "name = \"poll-latency-{starts}-{from}-{to}\"\nseed = 7\nstarts = {starts}\nmethods = [\"w\"]\n\
         [[grid]]\nrule = [2, 1]\ndims = [2]\nn_range = {{ from = {from}, to = {to} }}\n"
    )
}

/// Knight moves on a square board: 8 in two dimensions.
const KNIGHT_MOVES_2D: f64 = 8.0;

/// A task's estimated cost on the shard's board, as the scheduler counts it
/// (cells x moves).
fn cost_per_task(s: &pb::Shard) -> f64 {
    let cells: f64 = s.config.as_ref().map_or(0.0, |c| c.sides.iter().map(|&n| f64::from(n)).product());
    cells * KNIGHT_MOVES_2D
}

/// CPU seconds (user + system) and resident set (current, peak) in MiB of
/// process `pid`, from /proc.
fn usage(pid: u32) -> Option<(f64, f64, f64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |key: &str| -> Option<f64> {
        status.lines().find(|l| l.starts_with(key))?.split_whitespace().nth(1)?.parse().ok()
    };
    Some((ticks / 100.0, kib("VmRSS:")? / 1024.0, kib("VmHWM:")? / 1024.0))
}

// Requests end in `..Default::default()`: fields the protocol gains later keep their defaults.
#[allow(clippy::needless_update)]
async fn worker(
    channel: Channel,
    n: usize,
    hold: Duration,
    micros_per_cost: Option<f64>,
    fill: Arc<tokio::sync::watch::Receiver<bool>>,
    samples: Arc<Mutex<Samples>>,
) {
    let mut client = WorkersClient::new(channel);
    let reg = client
        .register(pb::RegisterRequest {
            protocol_version: PROTOCOL_VERSION,
            name: format!("sim-{n}"),
            threads: 1,
            ..Default::default()
        })
        .await
        .expect("register")
        .into_inner();
    let mut held: Option<pb::Shard> = None;
    let mut since = Instant::now();
    // How long the held shard takes, and each of its tasks (µs).
    let mut hold = hold;
    let mut task_micros = 1;
    loop {
        let filling = *fill.borrow();
        let done = held.as_ref().filter(|_| filling || since.elapsed() >= hold);
        let results = done.map(|s| finished(s, task_micros)).unwrap_or_default();
        let carried = done.is_some();
        if carried {
            held = None;
        }
        let running = held.iter().map(|s| pb::LeaseRef { shard_id: s.shard_id, epoch: s.epoch }).collect();
        let req = pb::PollRequest {
            worker_id: reg.worker_id,
            coordinator_nonce: reg.coordinator_nonce,
            free_slots: u32::from(held.is_none()),
            running,
            results,
            session_secret: reg.session_secret.clone(),
            ..Default::default()
        };
        let began = Instant::now();
        let reply = client.poll(req).await;
        let took = began.elapsed();
        let late = took > ksweep_proto::call_timeout(Duration::from_millis(reg.lease_millis.into()));
        samples.lock().await.note_poll(took, carried, late);
        let reply = match reply {
            Ok(r) => r.into_inner(),
            Err(e) => {
                eprintln!("poll: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if let Some(s) = reply.shards.into_iter().next() {
            let tasks = (s.starts.len() * s.methods.len()).max(1) as u64;
            match micros_per_cost {
                Some(rate) => {
                    task_micros = ((cost_per_task(&s) * rate) as u64).max(1);
                    hold = Duration::from_micros(task_micros * tasks);
                }
                None => task_micros = (hold.as_micros() as u64 / tasks).max(1),
            }
            held = Some(s);
            since = Instant::now();
        }
        if !*fill.borrow() {
            // Heartbeat as a worker does while busy, or wait out the shard.
            let wait = if held.is_some() { hold.saturating_sub(since.elapsed()) } else { Duration::from_millis(200) };
            tokio::time::sleep(wait.min(Duration::from_millis(reg.poll_millis as u64))).await;
        }
    }
}

/// The results of a held shard: every task gave up after one walk of
/// `micros`.
fn finished(s: &pb::Shard, micros: u64) -> Vec<pb::ShardResults> {
    let tasks = (0..s.starts.len() as u32)
        .flat_map(|start_offset| {
            (0..s.methods.len() as u32).map(move |method_index| pb::TaskOutcome {
                start_offset,
                method_index,
                success: false,
                attempts: 1,
                visited: 3,
                micros,
                outcome: pb::Outcome::GaveUp as i32,
                ..Default::default()
            })
        })
        .collect();
    vec![pb::ShardResults { shard_id: s.shard_id, epoch: s.epoch, tasks, ..Default::default() }]
}

/// One HTTP/1.1 GET on a fresh connection, read to its end.
async fn get(http: &str, path: &str) -> usize {
    let mut s = TcpStream::connect(http).await.expect("dashboard");
    let req = format!("GET {path} HTTP/1.1\r\nHost: {http}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut body = Vec::new();
    s.read_to_end(&mut body).await.unwrap_or(0);
    body.len()
}

/// A page: follows /events, fetching the sweep's data on every event.
async fn page(http: String, id: String, samples: Arc<Mutex<Samples>>) {
    let mut s = TcpStream::connect(&http).await.expect("dashboard");
    let req = format!("GET /events HTTP/1.1\r\nHost: {http}\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut lines = BufReader::new(s).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.starts_with("event: change") {
            let began = Instant::now();
            get(&http, &format!("/api/sweeps/{id}")).await;
            let mut s = samples.lock().await;
            if s.measuring {
                s.pages.push(began.elapsed());
            }
        }
    }
    eprintln!("event stream ended");
}

/// Starts the simulated workers, each on its own connection (as separate
/// processes have) unless `--connections` shares a few.
async fn start_workers(a: &Args, fill: Arc<tokio::sync::watch::Receiver<bool>>, samples: &Arc<Mutex<Samples>>) {
    let mut shared: Vec<Channel> = Vec::new();
    for _ in 0..a.connections {
        shared.push(connect(&a.coordinator).await);
    }
    for n in 0..a.workers {
        let channel = match shared.get(n % a.connections.max(1)) {
            Some(channel) => channel.clone(),
            None => connect(&a.coordinator).await,
        };
        tokio::spawn(worker(channel, n, a.hold, a.micros_per_cost, fill.clone(), samples.clone()));
    }
}

async fn connect(url: &str) -> Channel {
    tonic::transport::Endpoint::from_shared(url.to_string()).unwrap().connect().await.unwrap()
}

/// Starts the readers: dashboard pages and Parquet downloads when `--http`
/// is given, and `status` five times a second, as `ksweep status` asks it.
fn start_readers(a: &Args, sweeps: &SweepsClient<Channel>, id: &str, samples: &Arc<Mutex<Samples>>) {
    if let Some(http) = &a.http {
        for _ in 0..a.pages {
            tokio::spawn(page(http.clone(), id.to_string(), samples.clone()));
        }
        for _ in 0..a.downloads {
            let (http, id, samples) = (http.clone(), id.to_string(), samples.clone());
            tokio::spawn(async move {
                loop {
                    let began = Instant::now();
                    get(&http, &format!("/sweeps/{id}/results.parquet")).await;
                    let mut s = samples.lock().await;
                    if s.measuring {
                        s.downloads.push(began.elapsed());
                    }
                }
            });
        }
    }
    let (mut sweeps, id, samples) = (sweeps.clone(), id.to_string(), samples.clone());
    tokio::spawn(async move {
        loop {
            let began = Instant::now();
            let _ = sweeps.status(pb::SweepRef { sweep_id: id.clone() }).await;
            let took = began.elapsed();
            let mut s = samples.lock().await;
            if s.measuring {
                s.statuses.push(took);
            }
            drop(s);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
}

/// Results the sweep has stored.
async fn stored(sweeps: &SweepsClient<Channel>, id: &str) -> u64 {
    let mut sweeps = sweeps.clone();
    sweeps.status(pb::SweepRef { sweep_id: id.to_string() }).await.unwrap().into_inner().tasks_done
}

/// Prints what the measuring window saw: CPU of this client and of the
/// coordinator, results stored, and the latency percentiles.
fn report(
    a: &Args,
    s: &mut Samples,
    (before, after): (u64, u64),
    cpu_before: Option<(f64, f64, f64)>,
    client_before: Option<(f64, f64, f64)>,
) {
    let seconds = a.measure.as_secs_f64();
    if let (Some((c0, _, _)), Some((c1, _, _))) = (client_before, usage(std::process::id())) {
        println!("this client: {:.0} % of a core", 100.0 * (c1 - c0) / seconds);
    }
    if let (Some((c0, _, _)), Some((c1, rss, peak))) = (cpu_before, a.pid.and_then(usage)) {
        println!(
            "coordinator: {:.2} CPU-s over {seconds:.0} s ({:.0} % of a core), RSS {rss:.0} MiB (peak {peak:.0} MiB)",
            c1 - c0,
            100.0 * (c1 - c0) / seconds
        );
    }
    println!(
        "{} workers, {} pages, {} download loops, {seconds:.0} s: {} results stored ({:.0}/s), {after} of them at the end",
        a.workers,
        a.pages,
        a.downloads,
        after - before,
        (after - before) as f64 / seconds,
    );
    let late = s.late_polls;
    percentiles("Poll", &mut s.polls);
    percentiles("Poll with results", &mut s.result_polls);
    percentiles("Poll without results", &mut s.other_polls);
    println!("polls past a worker's call deadline (half the lease): {late}");
    percentiles("status", &mut s.statuses);
    percentiles("page data", &mut s.pages);
    percentiles("Parquet download", &mut s.downloads);
}

#[tokio::main]
async fn main() {
    let a = args();
    let channel = connect(&a.coordinator).await;
    let mut sweeps = SweepsClient::new(channel.clone());
    let id = sweeps
        .submit(pb::SubmitRequest { spec_toml: spec(a.starts, a.boards), resume: true, no_reuse: false })
        .await
        .unwrap()
        .into_inner()
        .sweep_id;
    let samples = Arc::new(Mutex::new(Samples::default()));
    let (filling, fill) = tokio::sync::watch::channel(a.fill > 0);
    start_workers(&a, Arc::new(fill), &samples).await;
    if a.fill > 0 {
        while stored(&sweeps, &id).await < a.fill {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        filling.send_replace(false);
    }
    println!("results stored before measuring: {}", stored(&sweeps, &id).await);
    start_readers(&a, &sweeps, &id, &samples);
    tokio::time::sleep(a.warmup).await;
    let before = stored(&sweeps, &id).await;
    let cpu_before = a.pid.and_then(usage);
    let client_before = usage(std::process::id());
    samples.lock().await.measuring = true;
    tokio::time::sleep(a.measure).await;
    let mut s = samples.lock().await;
    s.measuring = false;
    let after = stored(&sweeps, &id).await;
    report(&a, &mut s, (before, after), cpu_before, client_before);
    std::process::exit(0);
}
