//! The worker's life: its pool and resources, then register, serve and
//! register again, until shutdown or the coordinator's refusal.

use std::future::Future;
use std::sync::Arc;

use ksweep_proto::cluster_dir::Located;
use ksweep_proto::{BearerToken, Liveness};
use tokio::sync::mpsc;
use tokio::time::{sleep, sleep_until, Instant};
use tracing::Instrument;

use super::farewell::farewell;
use super::register::register;
use super::serve::serve_session;
use super::{RegisterError, SessionEnd, Target, WorkerOptions, FIRST_BACKOFF, MAX_BACKOFF};
use crate::error::{Error, Result};
use crate::execute::{Event, Resources};

/// Runs a worker until `shutdown` completes; then hands back unfinished
/// shards, delivers what finished, says goodbye and returns. Errs when the
/// coordinator refuses the worker for good, or when the finished results
/// could not be delivered at shutdown ([`Error::Undelivered`]).
pub async fn run(options: WorkerOptions, shutdown: impl Future<Output = ()>) -> Result<()> {
    // The address and token first: a bad one is said before anything starts.
    let mut url = options.coordinator.clone();
    let mut endpoint = ksweep_proto::worker_endpoint(&url, options.tls_ca.as_deref(), &Liveness::default())?;
    let token = BearerToken::new(options.token.as_deref()).map_err(|e| Error::Token(e.to_string()))?;
    let (pool, resources) = pool(&options)?;
    let threads = resources.threads;
    let shutdown = or_end(shutdown, options.end);
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

/// The pool of the threads the worker may use, and the resources its
/// tasks share.
fn pool(options: &WorkerOptions) -> Result<(Arc<rayon::ThreadPool>, Resources)> {
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
    Ok((pool, resources))
}

/// `shutdown`, or the worker's end: its end is a shutdown too, a little
/// before it.
fn or_end(shutdown: impl Future<Output = ()>, end: Option<std::time::Instant>) -> impl Future<Output = ()> {
    let leave_at = end.map(|e| Instant::from_std(e.checked_sub(crate::lifetime::LEAVE_BEFORE).unwrap_or(e)));
    async move {
        match leave_at {
            Some(at) => tokio::select! {
                _ = shutdown => {}
                _ = sleep_until(at) => tracing::info!("the worker's end is near: leaving"),
            },
            None => shutdown.await,
        }
    }
}
