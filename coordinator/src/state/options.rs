//! A coordinator's settings.

use std::time::Duration;

use crate::bucket::RateLimit;
use crate::connections::ConnectionLimits;
use crate::scheduler::SchedulerConfig;

/// Settings of a coordinator.
#[derive(Debug, Clone)]
pub struct CoordinatorOptions {
    pub scheduler: SchedulerConfig,
    /// How often a busy worker should poll (its heartbeat).
    pub poll_interval: Duration,
    /// When set, every RPC must carry `authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Largest spec accepted, in bytes.
    pub max_spec_bytes: usize,
    /// The most any spec's own `[limits]` may allow here: a spec asking for
    /// more is held to these (a few bytes of TOML must not make the
    /// coordinator expand 2^24 configurations).
    pub spec_caps: sweep::Limits,
    /// Largest gRPC message accepted, in bytes.
    pub max_message_bytes: usize,
    /// Serve TLS with this identity instead of plain HTTP/2.
    pub tls: Option<TlsIdentity>,
    /// Connections open at once, and how long one may stay silent.
    pub connections: ConnectionLimits,
    /// Serve the web dashboard on this address (off when None).
    pub http: Option<std::net::SocketAddr>,
    /// The dashboard's bounds and the host names it answers to.
    pub dashboard: DashboardOptions,
    /// Take the database's running sweeps back as it starts (a served
    /// coordinator); `ksweep run` runs only the sweep it was given.
    pub resume_running: bool,
    /// Worker registrations taken; more are refused RESOURCE_EXHAUSTED, and
    /// the workers try again after a backoff. Each is a database row, and
    /// a client looping on `Register` would add them without end.
    pub registrations: RateLimit,
}

/// Most configurations a spec may expand to on a coordinator serving
/// others, unless its operator says more (`--max-configurations`): a
/// parsed configuration holds a few hundred bytes while its sweep runs, so
/// a 1 KB spec of a million boards cost 370 MB and a minute of the writer.
/// The report's largest experiment has a few hundred; `ksweep run` holds a
/// spec to its own limits (a million by default).
pub const SERVED_MAX_CONFIGURATIONS: u64 = 100_000;

/// The coordinator's certificate chain and private key, PEM.
#[derive(Clone)]
pub struct TlsIdentity {
    pub cert_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
}

impl std::fmt::Debug for TlsIdentity {
    /// Never prints the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsIdentity").field("cert_pem", &format_args!("{} bytes", self.cert_pem.len())).finish()
    }
}

impl Default for CoordinatorOptions {
    fn default() -> Self {
        CoordinatorOptions {
            scheduler: SchedulerConfig::default(),
            poll_interval: Duration::from_millis(1000),
            token: None,
            max_spec_bytes: sweep::MAX_SPEC_BYTES,
            spec_caps: sweep::Limits { max_configurations: SERVED_MAX_CONFIGURATIONS, ..Default::default() },
            max_message_bytes: ksweep_proto::MAX_MESSAGE_BYTES,
            tls: None,
            connections: ConnectionLimits::default(),
            http: None,
            dashboard: DashboardOptions::default(),
            resume_running: true,
            // A cluster of a thousand restarting at once registers at once.
            registrations: RateLimit { burst: 2000, every: Duration::from_millis(5) },
        }
    }
}

/// Bounds and names of the dashboard's port.
#[derive(Debug, Clone)]
pub struct DashboardOptions {
    /// Connections open at once (more wait in the kernel's backlog); a
    /// request's head must arrive whole within `handshake` of the
    /// connection opening or of the previous answer (so idle keep-alive
    /// connections close then too); a connection with no bytes moving
    /// either way for `idle` is closed.
    pub connections: ConnectionLimits,
    /// Live-update streams and change polls (open pages) at once; more are
    /// answered 503.
    pub event_streams: usize,
    /// Downloads and reports built at once; more wait their turn. Each
    /// keeps a core busy (Parquet encoding, report plots) while it is
    /// built, so by default half the cores, 1 to 4: on two cores, two at
    /// once left Poll's p99 at 1.05 s under 20 download loops.
    pub downloads: usize,
    /// Host names served besides the listening address (`*`: any).
    pub hosts: Vec<String>,
    /// Wrong tokens (login form, header, cookie or link) one source may
    /// show; past them it is answered 429 with Retry-After.
    pub guesses_per_source: RateLimit,
    /// Wrong tokens all sources together may show, once each has shown one.
    pub guesses: RateLimit,
}

impl Default for DashboardOptions {
    fn default() -> Self {
        DashboardOptions {
            connections: ConnectionLimits {
                max: 128,
                handshake: Duration::from_secs(10),
                idle: Duration::from_secs(120),
            },
            event_streams: 32,
            downloads: std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).clamp(1, 4)),
            hosts: Vec::new(),
            guesses_per_source: RateLimit { burst: 10, every: Duration::from_secs(6) },
            guesses: RateLimit { burst: 100, every: Duration::from_secs(1) },
        }
    }
}
