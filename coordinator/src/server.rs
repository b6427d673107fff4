//! `serve`: the coordinator's gRPC server on a listener, with health,
//! reflection, the optional token check, and a shutdown future.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ksweep_proto::v1 as pb;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::ReceiverStream;
use tonic::service::InterceptorLayer;
use tonic::transport::{Identity, Server, ServerTlsConfig};
use tonic::{Request, Status};
use tonic_health::server::HealthReporter;
use tonic_health::ServingStatus;

use crate::connections::{ConnectionInfo, ConnectionLimits, Liveness};
use crate::descriptors::{self, Split};
use crate::error::{Error, Result};
use crate::state::{CoordinatorOptions, Shared};
use crate::store::Store;
use crate::sweeps_service::SweepsService;
use crate::workers_service::WorkersService;

/// Health names of the two services.
const SWEEPS: &str = "ksweep.v1.Sweeps";
const WORKERS: &str = "ksweep.v1.Workers";

/// How often leases are checked for expiry.
const TICK: Duration = Duration::from_millis(250);
/// How long in-flight calls (watch streams included) may run after the
/// shutdown signal before the server closes anyway.
const GRACE: Duration = Duration::from_secs(5);

/// Serves until `shutdown` completes, then stops accepting, lets in-flight
/// calls finish and returns. Running sweeps in `store` are resumed.
pub async fn serve(
    listener: TcpListener,
    store: Store,
    options: CoordinatorOptions,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<()> {
    let token = options.token.clone();
    let max_message = options.max_message_bytes;
    let limits = options.connections;
    let builder = builder(&options)?;
    let shared = Arc::new(Shared::new(store, options)?);

    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(ksweep_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| Error::Internal(format!("reflection: {e}")))?;

    let sweeps = pb::sweeps_server::SweepsServer::new(SweepsService::new(shared.clone()))
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message);
    let workers = pb::workers_server::WorkersServer::new(WorkersService::new(shared.clone()))
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message);

    let local = listener.local_addr().map_err(|e| Error::Internal(e.to_string()))?;
    let serving = started(&shared, &health_reporter).await?;

    let resumer = spawn_resumer(shared.clone());
    let ticker = spawn_ticker(shared.clone(), health_reporter, serving);
    let split = connection_split(&shared, limits);
    let dashboard = spawn_dashboard(&shared, split).await?;
    tracing::info!(%local, tls = shared.options.tls.is_some(), "coordinator listening");
    let limits = ConnectionLimits { max: split.grpc, ..limits };
    let (incoming, acceptor) = crate::connections::accept(listener, limits, Liveness::PeerSends);
    // The server stops accepting when `stop` flips; the shutdown future
    // flips it, then allows GRACE for in-flight calls.
    let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
    // Boxed so it can be dropped (with the services and their hold on
    // `shared`) before waiting for the last handler below.
    let mut server = Box::pin(
        builder
            .trace_fn(request_span)
            .layer(InterceptorLayer::new(move |req: Request<()>| check_token(token.as_deref(), req)))
            .add_service(health_service)
            .add_service(reflection)
            .add_service(sweeps)
            .add_service(workers)
            .serve_with_incoming_shutdown(ReceiverStream::new(incoming), async move {
                let _ = stop_rx.wait_for(|stop| *stop).await;
            }),
    );
    tokio::pin!(shutdown);
    let result = tokio::select! {
        r = &mut server => r,
        _ = &mut shutdown => {
            tracing::info!("shutting down: no new calls; waiting for in-flight ones");
            shared.stop();
            let _ = stop_tx.send(true);
            match tokio::time::timeout(GRACE, &mut server).await {
                Ok(r) => r,
                Err(_) => {
                    tracing::warn!(grace = ?GRACE, "in-flight calls outlived the grace period; closing them");
                    Ok(())
                }
            }
        }
    };
    drop(server);
    let background = Background { ticker, dashboard, resumer, acceptor };
    background.stop(&shared).await;
    wait_for_handlers(shared).await;
    result.map_err(|e| Error::Internal(format!("server: {e}")))?;
    tracing::info!("coordinator stopped");
    Ok(())
}

/// The tasks serve started beside the server, stopped after it.
struct Background {
    ticker: JoinHandle<()>,
    dashboard: Option<JoinHandle<()>>,
    resumer: JoinHandle<()>,
    acceptor: JoinHandle<()>,
}

impl Background {
    /// Stops each task, giving the dashboard's pages in flight the grace
    /// period; the acceptor last, which frees the port.
    async fn stop(self, shared: &Shared) {
        let Background { ticker, dashboard, resumer, acceptor } = self;
        ticker.abort();
        let _ = ticker.await;
        if let Some(mut dashboard) = dashboard {
            // `stop` ended its event streams; pages in flight get the grace period.
            shared.stop();
            if tokio::time::timeout(GRACE, &mut dashboard).await.is_err() {
                dashboard.abort();
                let _ = dashboard.await;
            }
        }
        resumer.abort();
        let _ = resumer.await;
        // Stops accepting, and frees the port.
        acceptor.abort();
        let _ = acceptor.await;
    }
}

/// Keeps the database file, whatever is stored in it, and reports the
/// services' health; returns whether they are serving.
async fn started(shared: &Shared, health_reporter: &HealthReporter) -> Result<bool> {
    // Started: the database file stays, whatever is stored in it.
    shared
        .with_store(|s| {
            s.keep();
            Ok(())
        })
        .await?;
    // A database that refuses writes (a full disk) is served, so results
    // can be read, but reported NOT_SERVING (and logged) until it takes one.
    let _ = shared.probe_writes().await;
    let serving = !shared.writes_failing();
    for service in ["", SWEEPS, WORKERS] {
        health_reporter.set_service_status(service, health(serving)).await;
    }
    Ok(serving)
}

/// The server with its keepalive pings and, if asked for, TLS.
fn builder(options: &CoordinatorOptions) -> Result<Server> {
    // Pings every client well within the idle limit, so a live one is
    // never silent that long and a dead one is found.
    let ping = options.connections.idle / 4;
    // (TCP keepalive would be set on tonic's own listener only; ours is
    // `connections::accept`, whose idle deadline finds dead peers.)
    let mut builder = Server::builder().http2_keepalive_interval(Some(ping)).http2_keepalive_timeout(Some(ping));
    if let Some(id) = &options.tls {
        // Parses the PEM now, so a bad certificate or key fails at start.
        let config = ServerTlsConfig::new().identity(Identity::from_pem(&id.cert_pem, &id.key_pem));
        builder = builder.tls_config(config).map_err(|e| Error::Tls(ksweep_proto::error_chain(&e)))?;
    }
    Ok(builder)
}

/// SERVING, or NOT_SERVING while the database refuses writes.
fn health(serving: bool) -> ServingStatus {
    if serving {
        ServingStatus::Serving
    } else {
        ServingStatus::NotServing
    }
}

/// Running sweeps come back in the background: calls are answered (and
/// new sweeps run) while large specs are parsed and checked.
fn spawn_resumer(shared: Arc<Shared>) -> JoinHandle<()> {
    tokio::spawn(async move {
        if !shared.options.resume_running {
            return;
        }
        if let Err(e) = shared.resume().await {
            tracing::error!(error = %e, "resuming the running sweeps failed");
        }
    })
}

/// Checks leases for expiry every [`TICK`], and reports the services
/// NOT_SERVING while the database refuses writes.
fn spawn_ticker(ticker_shared: Arc<Shared>, health_reporter: HealthReporter, mut serving: bool) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(TICK);
        loop {
            interval.tick().await;
            if let Err(e) = ticker_shared.tick().await {
                tracing::error!(error = %e, "lease tick failed");
            }
            // NOT_SERVING while the database refuses writes: results
            // cannot be kept, whatever else still answers.
            if serving == ticker_shared.writes_failing() {
                serving = !serving;
                for service in ["", SWEEPS, WORKERS] {
                    health_reporter.set_service_status(service, health(serving)).await;
                }
            }
        }
    })
}

/// Both ports' connections fit under the open-file limit together, the
/// database's descriptors kept aside: idle dashboard requests cannot
/// take the ones gRPC calls need.
fn connection_split(shared: &Shared, limits: ConnectionLimits) -> Split {
    let wanted = Split {
        grpc: limits.max,
        dashboard: if shared.options.http.is_some() { shared.options.dashboard.connections.max } else { 0 },
    };
    let needed = (wanted.grpc + wanted.dashboard) as u64 + descriptors::RESERVED;
    let open_files = descriptors::open_file_limit(needed);
    let split = descriptors::split(open_files, wanted);
    if split != wanted {
        tracing::warn!(
            open_files,
            grpc = split.grpc,
            dashboard = split.dashboard,
            wanted_grpc = wanted.grpc,
            wanted_dashboard = wanted.dashboard,
            "the open-file limit cannot hold the connections asked for; fewer are served (raise `ulimit -n`)"
        );
    } else {
        tracing::debug!(open_files, grpc = split.grpc, dashboard = split.dashboard, "connection bounds");
    }
    split
}

/// The dashboard, if `--http` asked for it, served until the coordinator stops.
async fn spawn_dashboard(shared: &Arc<Shared>, split: Split) -> Result<Option<JoinHandle<()>>> {
    Ok(match shared.options.http {
        Some(addr) => {
            let http = TcpListener::bind(addr)
                .await
                .map_err(|e| Error::Internal(format!("--http {addr}: cannot listen: {e}")))?;
            let bound = http.local_addr().map_err(|e| Error::Internal(e.to_string()))?;
            tracing::info!(url = %format!("http://{bound}/"), "dashboard listening");
            let stopping = shared.clone();
            let shutdown = async move { stopping.stopped().await };
            let shared = shared.clone();
            Some(tokio::spawn(async move {
                if let Err(e) = crate::dashboard::serve(http, shared, split.dashboard, shutdown).await {
                    tracing::error!(error = %e, "the dashboard stopped");
                }
            }))
        }
        None => None,
    })
}

/// Handlers and watch streams still finishing hold `shared`, and with it
/// the database and its writer lock, as do blocking database tasks whose
/// callers were aborted (the ticker's): waits (up to GRACE) for the last
/// one, so the file is closed when serve returns and can be opened again
/// at once, in this process or another.
async fn wait_for_handlers(shared: Arc<Shared>) {
    let deadline = tokio::time::Instant::now() + GRACE;
    let held = |shared: &Arc<Shared>| Arc::strong_count(shared) > 1 || shared.store_in_use();
    while held(&shared) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    if held(&shared) {
        tracing::warn!(grace = ?GRACE, "a handler outlived the grace period; the database closes when it ends");
    }
    drop(shared);
}

/// The span of one call, so its events say which: a client's sweep
/// requests (submit, status, cancel, ...) at info, the workers' polls and
/// the rest at debug (`RUST_LOG=ksweep_coordinator=debug` shows them).
fn request_span(req: &tonic::codegen::http::Request<()>) -> tracing::Span {
    let method = req.uri().path();
    if method.starts_with("/ksweep.v1.Sweeps/") {
        tracing::info_span!("sweep_request", method = method.trim_start_matches("/ksweep.v1.Sweeps/"))
    } else {
        tracing::debug_span!("rpc", %method)
    }
}

/// Refuses a call without the shared-secret token, when one is set. A call
/// let through proves its connection a client's, whose slot no newcomer
/// takes (`connections`).
fn check_token(token: Option<&str>, req: Request<()>) -> Result<Request<()>, Status> {
    if let Some(token) = token {
        let presented = req.metadata().get("authorization").and_then(|v| v.to_str().ok());
        match presented.and_then(|v| v.strip_prefix("Bearer ")) {
            Some(t) if crate::secret::constant_time_eq(t.as_bytes(), token.as_bytes()) => {}
            _ => return Err(Status::unauthenticated("missing or wrong token (authorization: Bearer <token>)")),
        }
    }
    if let Some(connection) = req.extensions().get::<ConnectionInfo>() {
        connection.prove();
    }
    Ok(req)
}
