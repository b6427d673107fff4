//! The read-only web dashboard (`--http ADDR`): the sweeps, one sweep's
//! progress, tables and plots filling in, and the workers, updated live by
//! server-sent events. One page, its script and style embedded in the
//! binary: no build step, nothing fetched from elsewhere.
//!
//! With a token set, nothing is served without it: an `Authorization:
//! Bearer` header, or the cookie the login form (or a `?token=` link, as
//! the coordinator prints it) sets. Every answer reads the same query
//! layer and scheduler the gRPC services do.

mod api;
mod auth;

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;

use crate::error::{Error, Result};
use crate::state::Shared;

/// The page: markup, style and script in one file.
const PAGE: &str = include_str!("page.html");

/// Fewest milliseconds between two live updates a browser is sent.
const UPDATE_EVERY: Duration = Duration::from_millis(500);

/// What every handler reads.
#[derive(Clone)]
pub(crate) struct Dashboard {
    shared: Arc<Shared>,
    token: Option<Arc<str>>,
    /// Each sweep's page data, by id: one computation serves every open page.
    views: Arc<tokio::sync::Mutex<HashMap<String, View>>>,
}

/// A sweep's page data and the (results, state) it was computed at.
type View = ((u64, i32), Arc<serde_json::Value>);

/// Serves the dashboard on `listener` until `shutdown` completes.
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let token = shared.options.token.as_deref().map(Arc::from);
    let state = Dashboard { shared, token, views: Default::default() };
    let protected = Router::new()
        .route("/", get(page))
        .route("/api/sweeps", get(api::sweeps))
        .route("/api/sweeps/{id}", get(api::sweep))
        .route("/api/workers", get(api::workers))
        .route("/events", get(api::events))
        .route("/sweeps/{id}/results.csv", get(api::results_csv))
        .route("/sweeps/{id}/results.jsonl", get(api::results_jsonl))
        .route("/sweeps/{id}/results.parquet", get(api::results_parquet))
        .route("/sweeps/{id}/report.html", get(api::report))
        .layer(axum::middleware::from_fn_with_state(state.clone(), auth::require_token));
    let app = Router::new().route("/login", get(auth::login_form).post(auth::login)).merge(protected).with_state(state);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| Error::Internal(format!("dashboard: {e}")))
}

async fn page() -> axum::response::Html<&'static str> {
    axum::response::Html(PAGE)
}
