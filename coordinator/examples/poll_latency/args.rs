//! The harness's flags, parsed by hand: an example has no clap.

use std::time::Duration;

pub struct Args {
    pub coordinator: String,
    pub http: Option<String>,
    pub workers: usize,
    /// HTTP/2 connections the workers share (0: one each, as separate
    /// processes have). Fewer spare the client the kernel's per-connection
    /// cost on a machine it shares with the coordinator.
    pub connections: usize,
    pub pages: usize,
    pub downloads: usize,
    /// Results stored (by workers reporting at once) before measuring.
    pub fill: u64,
    pub hold: Duration,
    /// Simulated speed: microseconds per unit of estimated cost, replacing
    /// the flat `hold`.
    pub micros_per_cost: Option<f64>,
    /// Board sides, `from <= n < to`.
    pub boards: (u64, u64),
    /// Starts per board: the sweep's size.
    pub starts: u64,
    /// The coordinator's process id, to report its CPU time and memory.
    pub pid: Option<u32>,
    pub warmup: Duration,
    pub measure: Duration,
}

pub fn args() -> Args {
    let mut a = Args {
        coordinator: "http://127.0.0.1:50051".into(),
        http: None,
        workers: 100,
        connections: 0,
        pages: 0,
        downloads: 0,
        fill: 0,
        hold: Duration::from_millis(1000),
        micros_per_cost: None,
        boards: (8, 1601),
        starts: 300,
        pid: None,
        warmup: Duration::from_secs(5),
        measure: Duration::from_secs(30),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        let number = || value.parse::<u64>().unwrap_or_else(|_| panic!("{flag}: not a number: {value}"));
        match flag.as_str() {
            "--coordinator" => a.coordinator = value.clone(),
            "--http" => a.http = Some(value.clone()),
            "--workers" => a.workers = number() as usize,
            "--connections" => a.connections = number() as usize,
            "--pages" => a.pages = number() as usize,
            "--downloads" => a.downloads = number() as usize,
            "--fill" => a.fill = number(),
            "--hold-ms" => a.hold = Duration::from_millis(number()),
            "--micros-per-cost" => {
                a.micros_per_cost = Some(value.parse().unwrap_or_else(|_| panic!("{flag}: not a number: {value}")))
            }
            "--n-from" => a.boards.0 = number(),
            "--n-to" => a.boards.1 = number(),
            "--starts" => a.starts = number(),
            "--pid" => a.pid = Some(number() as u32),
            "--warmup-secs" => a.warmup = Duration::from_secs(number()),
            "--secs" => a.measure = Duration::from_secs(number()),
            _ => panic!("unknown flag {flag}"),
        }
    }
    a
}
