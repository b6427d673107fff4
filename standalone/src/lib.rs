//! # ksweep-standalone
//!
//! knight-sweep in one process: a coordinator on a loopback port and a
//! worker connected to it, over the same gRPC code paths as a cluster
//! (Ballista's standalone mode). `ksweep run` and `ksweep replay` start one;
//! so can tests and other programs.
//!
//! The coordinator gets a fresh random token, so another local process that
//! finds its port can neither submit, poll nor forge results.

#![cfg_attr(not(test), deny(clippy::unwrap_used))]

use ksweep_coordinator::store::Store;
use ksweep_coordinator::CoordinatorOptions;
use ksweep_worker::WorkerOptions;
use thiserror::Error;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// What can go wrong starting or stopping a standalone cluster.
#[derive(Debug, Error)]
pub enum Error {
    #[error("cannot listen on loopback: {0}")]
    Listen(#[source] std::io::Error),
    #[error(transparent)]
    Coordinator(#[from] ksweep_coordinator::Error),
    #[error("the {0} task panicked")]
    Panicked(&'static str),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A running coordinator and worker; [`Standalone::stop`] ends both.
pub struct Standalone {
    url: String,
    token: String,
    coordinator: Running<ksweep_coordinator::Result<()>>,
    worker: Running<ksweep_worker::Result<()>>,
}

/// A spawned service and the sender that stops it.
struct Running<T> {
    stop: oneshot::Sender<()>,
    task: JoinHandle<T>,
}

impl<T: Send + 'static> Running<T> {
    fn spawn<F>(serve: impl FnOnce(oneshot::Receiver<()>) -> F) -> Running<T>
    where
        F: std::future::Future<Output = T> + Send + 'static,
    {
        let (stop, stopped) = oneshot::channel();
        Running { stop, task: tokio::spawn(serve(stopped)) }
    }

    async fn stop(self, what: &'static str) -> Result<T> {
        let _ = self.stop.send(());
        self.task.await.map_err(|_| Error::Panicked(what))
    }
}

impl Standalone {
    /// Starts a coordinator serving `store` with `options` (its token is
    /// replaced by a fresh one) and a worker of `threads` threads (0: what
    /// the process may use).
    pub async fn start(store: Store, mut options: CoordinatorOptions, threads: usize) -> Result<Standalone> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(Error::Listen)?;
        let url = format!("http://{}", listener.local_addr().map_err(Error::Listen)?);
        let token = ksweep_coordinator::random_token()?;
        options.token = Some(token.clone());
        let coordinator = Running::spawn(|stopped| {
            ksweep_coordinator::serve(listener, store, options, async {
                let _ = stopped.await;
            })
        });
        let worker_options = WorkerOptions {
            threads,
            name: format!("embedded-{}", std::process::id()),
            token: Some(token.clone()),
            ..WorkerOptions::new(url.clone())
        };
        let worker = Running::spawn(|stopped| {
            ksweep_worker::run(worker_options, async {
                let _ = stopped.await;
            })
        });
        Ok(Standalone { url, token, coordinator, worker })
    }

    /// The coordinator's URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The token every call to the coordinator presents.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Stops the worker (it delivers what it finished), then the
    /// coordinator, and waits for both. A worker's error is logged: its
    /// results are what the coordinator stored.
    pub async fn stop(self) -> Result<()> {
        if let Err(e) = self.worker.stop("worker").await? {
            tracing::warn!(error = %e, "worker stopped with an error");
        }
        self.coordinator.stop("coordinator").await??;
        Ok(())
    }
}
