//! What the services share: the database, the scheduler, the coordinator's
//! nonce and a change counter that progress watchers wait on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::watch;

use crate::error::{Error, Result};
use crate::ids::WorkerId;
use crate::scheduler::{Assignment, Scheduler, Settled};
use crate::secret::SessionSecret;
use crate::store::{ParsedSweeps, Readers, Store};

use settle::log_settled;
use writer::WriteQueue;
// Names the lost-work tests take from here (`use super::*`).
#[cfg(test)]
use crate::store::{SweepRecord, SweepState};

/// Runs CPU-bound work (parsing a spec, drawing start cells) on the
/// blocking pool, so the runtime threads keep serving heartbeats.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    tokio::task::spawn_blocking(f).await.map_err(|e| Error::Internal(format!("blocking task: {e}")))?
}

/// State shared by every handler.
/// What became of a message for a client's stream ([`Shared::send`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    Yes,
    /// The client went away.
    ClientGone,
    /// Shutdown began before the client took it.
    Stopping,
}

pub struct Shared {
    /// The connection every write goes through (the scheduler's).
    store: Arc<Mutex<Store>>,
    /// Connections that read beside it; None for an in-memory store.
    readers: Option<Arc<Readers>>,
    scheduler: Mutex<Scheduler>,
    /// Every sweep's spec, parsed once (the store's, shared with its readers).
    parsed: Arc<ParsedSweeps>,
    /// Random per process start: a worker that sees it change registers again.
    pub(crate) nonce: u64,
    changes: watch::Sender<u64>,
    /// Set when shutdown begins, so long-lived streams end at once.
    stopping: watch::Sender<bool>,
    pub(crate) options: CoordinatorOptions,
    /// Serialises loading a sweep into the scheduler with cancels and
    /// removals. (Cuts reach the database in the order they were made
    /// through the writer's queue, `writer.rs`, so a crash never leaves a
    /// stored cursor past an unstored shard.)
    cutting: tokio::sync::Mutex<()>,
    /// Held by `assign` from leasing until the start cells are drawn.
    drawing: tokio::sync::Mutex<()>,
    /// Each registered worker's session secret.
    sessions: Mutex<HashMap<WorkerId, SessionSecret>>,
    /// Registrations taken against `options.registrations`.
    registrations: Mutex<workers::Registrations>,
    /// Cuts, results and settled shards waiting for the one writer
    /// (`writer.rs`).
    writes: Arc<Mutex<WriteQueue>>,
    /// Grouped results writes so far.
    result_writes: Arc<AtomicU64>,
    /// Settled batches whose write failed, retried on every tick.
    unsettled: Mutex<Vec<Settled>>,
    /// The last write the database was asked for failed.
    writes_failing: AtomicBool,
    /// Each running sweep's throughput over the last minute, by id, sampled
    /// on ticks and whenever a status is asked for.
    rates: Mutex<Rates>,
}

/// Readers for queries besides those the dashboard's downloads may hold.
const QUERY_READERS: usize = 4;

/// Monotonic now, from tokio's clock, so tests on a paused clock drive
/// lease expiry with `tokio::time::advance` (see `tests/service.rs`).
pub(crate) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

impl Shared {
    /// A coordinator's state over `store`, ready to answer calls at once:
    /// running sweeps are taken back into the scheduler by
    /// [`Shared::resume`], off the request path (parsing a large spec and
    /// checking its shards can take seconds).
    pub fn new(store: Store, options: CoordinatorOptions) -> Result<Shared> {
        if let Some(token) = &options.token {
            // An empty token would compare equal to an empty header: no auth.
            ksweep_proto::check_token(token)
                .map_err(|e| Error::Options { field: "CoordinatorOptions.token", why: e.to_string() })?;
        }
        let scheduler = Scheduler::new(options.scheduler.clone(), store.max_shard_id()?);
        let nonce =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
                ^ (std::process::id() as u64) << 32;
        let registrations = workers::Registrations::new(options.registrations, now());
        let readers = Readers::of(&store, options.dashboard.downloads + QUERY_READERS).map(Arc::new);
        let parsed = store.parsed().clone();
        Ok(Shared {
            store: Arc::new(Mutex::new(store)),
            readers,
            scheduler: Mutex::new(scheduler),
            parsed,
            nonce,
            changes: watch::channel(0).0,
            stopping: watch::channel(false).0,
            options,
            cutting: tokio::sync::Mutex::new(()),
            drawing: tokio::sync::Mutex::new(()),
            sessions: Mutex::new(HashMap::new()),
            registrations: Mutex::new(registrations),
            writes: writer::queue(),
            result_writes: Arc::new(AtomicU64::new(0)),
            unsettled: Mutex::new(Vec::new()),
            writes_failing: AtomicBool::new(false),
            rates: Mutex::new(Rates { origin: now(), sampled: None, windows: HashMap::new() }),
        })
    }

    /// True while a blocking task still holds the store or a reader: one
    /// whose caller was dropped (an aborted tick) runs to its end regardless.
    pub fn store_in_use(&self) -> bool {
        Arc::strong_count(&self.store) > 1 || self.readers.as_ref().is_some_and(|r| r.in_use())
    }

    /// Runs a query on a reader, in one snapshot, never waiting for the
    /// writer's lock (nor holding it); on the writer's connection only when
    /// the store has no file to read beside it.
    pub async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T> + Send + 'static,
    {
        match &self.readers {
            Some(readers) => readers.read(f).await,
            None => self.with_store(move |s| f(s)).await,
        }
    }

    /// Runs a store operation on the blocking pool.
    pub async fn with_store<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Store) -> Result<T> + Send + 'static,
    {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = store.lock().map_err(|_| Error::Internal("store lock poisoned".into()))?;
            f(&mut guard)
        })
        .await
        .map_err(|e| Error::Internal(format!("store task: {e}")))?
    }

    /// The scheduler, locked (never held across an await). Only this
    /// state's own methods reach it: the services ask them.
    fn scheduler(&self) -> std::sync::MutexGuard<'_, Scheduler> {
        self.scheduler.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Wakes progress watchers.
    pub fn changed(&self) {
        self.changes.send_modify(|v| *v += 1);
    }

    /// A receiver that sees every `changed()`.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Begins shutdown: streams (watch) end with "unavailable".
    pub fn stop(&self) {
        self.stopping.send_replace(true);
    }

    /// Completes once shutdown has begun.
    pub async fn stopped(&self) {
        let mut rx = self.stopping.subscribe();
        let _ = rx.wait_for(|stopping| *stopping).await;
    }

    /// Sends `item` on a stream to a client (watch, export, the dashboard's
    /// events and downloads) unless shutdown begins first: a client that
    /// stops reading fills the channel, and a task waiting on it would hold
    /// this state, and the database with it, past shutdown.
    pub async fn send<T>(&self, tx: &tokio::sync::mpsc::Sender<T>, item: T) -> Sent {
        tokio::select! {
            biased;
            r = tx.send(item) => if r.is_ok() { Sent::Yes } else { Sent::ClientGone },
            _ = self.stopped() => Sent::Stopping,
        }
    }

    /// Expires leases, retries settled writes that failed, and ends drained
    /// sweeps; run on a timer.
    pub async fn tick(&self) -> Result<()> {
        let (expired, unheard) = {
            let mut sched = self.scheduler();
            let mut expired = sched.expire(now());
            expired.finished = sched.drain_finished();
            // Workers silent for long are forgotten: their secrets too.
            let unheard = sched.forget_silent(now());
            self.sessions.lock().unwrap_or_else(|p| p.into_inner()).retain(|w, _| sched.knows(*w));
            (expired, unheard)
        };
        self.forget_unheard(unheard).await;
        let mut pending = std::mem::take(&mut *self.unsettled.lock().unwrap_or_else(|p| p.into_inner()));
        pending.extend(self.unwritten_settles());
        let retry = !pending.is_empty();
        let mut batches = pending;
        if expired != Settled::default() {
            log_settled(&expired);
            batches.push(expired);
        }
        if !batches.is_empty() {
            self.write_settled(batches).await?;
            if retry {
                tracing::info!("settled shards written after an earlier failure");
            }
        } else if self.writes_failing() {
            // Nothing waits to be written: probe, so health turns back to
            // SERVING once the disk takes writes, not at the next result.
            // (A failure was logged when writes began failing.)
            let _ = self.probe_writes().await;
        }
        self.sample_rates().await?;
        // Cuts left by a failed write, or gaps re-planned by a settle.
        self.flush_cuts(true).await
    }

    /// Leases up to `free` shards to a worker. The scheduler's lock is held
    /// only to lease; start lists are drawn on the blocking pool. Newly cut
    /// shards are queued for the writer, not waited for: a crash before they
    /// are stored loses no result (the stored cursor is not past them, so
    /// they are cut again, and results stored meanwhile count once).
    pub async fn assign(&self, worker: WorkerId, free: usize) -> Result<Vec<Assignment>> {
        // One grant at a time, from leasing to its start cells: a board's
        // list is drawn once and cached for the next grants (drawing it
        // beside another grant's of the next board would evict it).
        let _one = self.drawing.lock().await;
        let grant = self.scheduler().assign(worker, free, now());
        self.flush_cuts(false).await?;
        let drawn = if grant.leased.iter().all(|l| l.starts.is_some()) {
            grant.draw_starts() // all cached: nothing to draw
        } else {
            let drawn = blocking(move || Ok(grant.draw_starts())).await?;
            self.scheduler().remember_starts(&drawn);
            drawn
        };
        Ok(drawn.assignments)
    }
}

mod options;
mod rates;
mod settle;
mod sweeps;
#[cfg(test)]
mod tests;
mod workers;
mod writer;
mod writes;

pub use options::{CoordinatorOptions, DashboardOptions, TlsIdentity, SERVED_MAX_CONFIGURATIONS};
pub use workers::{Heartbeat, HeartbeatReply};

use rates::Rates;
