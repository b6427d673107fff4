//! The read-only web dashboard (`--http ADDR`): the sweeps, one sweep's
//! progress, tables and plots filling in, and the workers, updated in place
//! by a long poll for changes (`/api/changes`; `/events`, a server-sent
//! event stream, stays for scripts). A sweep's tables come per (moves, D)
//! section as a page opens them. One page, its script and style embedded
//! in the binary: no build step, nothing fetched from elsewhere.
//!
//! Only requests naming an accepted host are served ([`hosts`]). With a
//! token set, nothing is served without it: an `Authorization: Bearer`
//! header, or the cookie the login form (or a `?token=` link, as the
//! coordinator prints it) sets. Every answer reads the same query layer
//! and scheduler the gRPC services do, on the database's readers, never on
//! the connection the scheduler writes with.
//!
//! The port is bounded on its own: connections (which must send a whole
//! request head within a deadline, and are closed once silent), event
//! streams, downloads built at once, and wrong tokens (per source and in
//! all, [`guesses`]).

mod api;
mod auth;
mod guesses;
mod hosts;
mod views;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::routing::get;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;
use tonic::transport::server::Connected;

use crate::connections::{ConnectionLimits, LimitedConnection, Liveness};
use crate::error::{Error, Result};
use crate::state::Shared;

pub(crate) use hosts::Hosts;

/// The page: markup, style and script in one file.
const PAGE: &str = include_str!("page.html");

/// Fewest milliseconds between two live updates a browser is sent.
const UPDATE_EVERY: Duration = Duration::from_millis(500);

/// Gone workers' ids and their stored totals, by id.
type GoneTotals = (Vec<u64>, Arc<HashMap<u64, (u64, u64)>>);

/// A sweep's JSON as a page was last answered it, and when.
type Answered = (std::time::Instant, Arc<serde_json::Value>);

/// What every handler reads.
#[derive(Clone)]
pub(crate) struct Dashboard {
    shared: Arc<Shared>,
    token: Option<Arc<str>>,
    hosts: Arc<Hosts>,
    /// Each sweep's page data, by id: one computation serves every open page.
    views: Arc<tokio::sync::Mutex<HashMap<String, Arc<views::View>>>>,
    /// The last answer for each sweep a page asked for, by the id asked, and when.
    answers: Arc<tokio::sync::Mutex<HashMap<String, Answered>>>,
    /// The gone workers last listed and their stored (tasks, CPU µs).
    gone: Arc<tokio::sync::Mutex<GoneTotals>>,
    /// A permit per open event stream.
    streams: Arc<Semaphore>,
    /// A permit per download or report being built.
    downloads: Arc<Semaphore>,
    /// Wrong tokens seen, per source and in all.
    guesses: Arc<Mutex<guesses::Guesses>>,
}

/// Serves the dashboard on `listener`, at most `max_connections` at once,
/// until `shutdown` completes.
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    max_connections: usize,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let options = shared.options.dashboard.clone();
    let local = listener.local_addr().map_err(|e| Error::Internal(format!("dashboard: {e}")))?;
    let state = Dashboard {
        token: shared.options.token.as_deref().map(Arc::from),
        hosts: Arc::new(Hosts::new(local, &options.hosts)),
        views: Default::default(),
        gone: Default::default(),
        answers: Default::default(),
        streams: Arc::new(Semaphore::new(options.event_streams.max(1))),
        downloads: Arc::new(Semaphore::new(options.downloads.max(1))),
        guesses: Arc::new(Mutex::new(guesses::Guesses::new(
            options.guesses_per_source,
            options.guesses,
            crate::state::now(),
        ))),
        shared,
    };
    let app = router(state);
    let limits = ConnectionLimits { max: max_connections, ..options.connections };
    let (mut incoming, acceptor) = crate::connections::accept(listener, limits, Liveness::EitherWay);
    // Connections are tasks of this one: dropped (aborted) with it.
    let mut connections = JoinSet::new();
    let (closing, closed) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = incoming.recv() => match accepted {
                Some(Ok(conn)) => {
                    connections.spawn(connection(conn, app.clone(), limits.handshake, closed.clone()));
                }
                Some(Err(_)) => {}
                None => break,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            _ = &mut shutdown => break,
        }
    }
    acceptor.abort();
    let _ = closing.send(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// The routes, behind the host check and (but for the login form) the token.
fn router(state: Dashboard) -> Router {
    let protected = Router::new()
        .route("/", get(page))
        .route("/api/sweeps", get(api::sweeps))
        .route("/api/sweeps/{id}", get(api::sweep))
        .route("/api/sweeps/{id}/sections/{index}", get(api::section))
        .route("/api/sweeps/{id}/figures/{name}", get(api::figure))
        .route("/api/workers", get(api::workers))
        .route("/api/changes", get(api::changes))
        .route("/events", get(api::events))
        .route("/sweeps/{id}/results.csv", get(api::results_csv))
        .route("/sweeps/{id}/results.jsonl", get(api::results_jsonl))
        .route("/sweeps/{id}/results.parquet", get(api::results_parquet))
        .route("/sweeps/{id}/report.html", get(api::report))
        .layer(axum::middleware::from_fn_with_state(state.clone(), auth::require_token));
    Router::new()
        .route("/login", get(auth::login_form).post(auth::login))
        .merge(protected)
        .layer(axum::middleware::from_fn_with_state(state.clone(), hosts::require_host))
        .with_state(state)
}

/// Serves one connection: HTTP/1.1 with keep-alive, each request's head
/// within `head_within`; on shutdown, the request in flight is finished.
/// Each request carries the connection's [`ConnectionInfo`] (the peer, and
/// the means to prove the connection a client's), as tonic's do.
///
/// [`ConnectionInfo`]: crate::connections::ConnectionInfo
async fn connection(conn: LimitedConnection, app: Router, head_within: Duration, mut closing: watch::Receiver<bool>) {
    let info = conn.connect_info();
    let app = TowerToHyperService::new(app);
    let service = hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
        request.extensions_mut().insert(info.clone());
        hyper::service::Service::call(&app, request)
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(head_within);
    let served = http.serve_connection(TokioIo::new(conn), service);
    tokio::pin!(served);
    let result = tokio::select! {
        r = served.as_mut() => r,
        _ = async { closing.wait_for(|c| *c).await.is_ok() } => {
            served.as_mut().graceful_shutdown();
            served.await
        }
    };
    if let Err(e) = result {
        tracing::debug!(error = %e, "dashboard connection ended");
    }
}

async fn page() -> axum::response::Html<&'static str> {
    axum::response::Html(PAGE)
}
