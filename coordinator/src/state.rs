//! What the services share: the database, the scheduler, the coordinator's
//! nonce and a change counter that progress watchers wait on.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sweep::Sweep;
use tokio::sync::watch;

use crate::error::{Error, Result};
use crate::ids::{SweepKey, WorkerId};
use crate::scheduler::{Assignment, Scheduler, SchedulerConfig, Settled};
use crate::store::{Store, SweepRecord, SweepState};

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
    /// Largest gRPC message accepted, in bytes.
    pub max_message_bytes: usize,
    /// Serve TLS with this identity instead of plain HTTP/2.
    pub tls: Option<TlsIdentity>,
}

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
            max_spec_bytes: 1 << 20,
            max_message_bytes: ksweep_proto::MAX_MESSAGE_BYTES,
            tls: None,
        }
    }
}

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
pub struct Shared {
    store: Arc<Mutex<Store>>,
    pub(crate) scheduler: Mutex<Scheduler>,
    /// Random per process start: a worker that sees it change registers again.
    pub(crate) nonce: u64,
    changes: watch::Sender<u64>,
    /// Set when shutdown begins, so long-lived streams end at once.
    stopping: watch::Sender<bool>,
    pub(crate) options: CoordinatorOptions,
    /// Held from cutting shards until they and the advanced cursor are
    /// stored, so cuts reach the database in the order they were made: a
    /// crash can then never leave a stored cursor past an unstored shard
    /// (tasks lost for good after a restart).
    cutting: tokio::sync::Mutex<()>,
}

/// Monotonic now, from tokio's clock, so tests on a paused clock drive
/// lease expiry with `tokio::time::advance` (see `tests/service.rs`).
pub(crate) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

impl Shared {
    /// Loads every running sweep from the store into a fresh scheduler.
    pub fn new(store: Store, options: CoordinatorOptions) -> Result<Shared> {
        let mut scheduler = Scheduler::new(options.scheduler.clone(), store.max_shard_id()?);
        for record in store.sweeps()? {
            if record.state != SweepState::Running {
                continue;
            }
            let sweep = Sweep::parse(&record.spec)?;
            let open = store.open_shards(record.key)?;
            tracing::info!(sweep = %record.id, name = %record.name, open_shards = open.len(), "resuming sweep");
            scheduler.add_sweep(
                record.key,
                record.id.clone(),
                Arc::new(sweep),
                record.cursor,
                open,
                record.shards_failed,
            );
        }
        let nonce =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
                ^ (std::process::id() as u64) << 32;
        Ok(Shared {
            store: Arc::new(Mutex::new(store)),
            scheduler: Mutex::new(scheduler),
            nonce,
            changes: watch::channel(0).0,
            stopping: watch::channel(false).0,
            options,
            cutting: tokio::sync::Mutex::new(()),
        })
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

    /// The scheduler, locked (never held across an await).
    pub fn scheduler(&self) -> std::sync::MutexGuard<'_, Scheduler> {
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

    /// Persists what settling shards decided.
    pub async fn persist_settled(&self, settled: Settled) -> Result<()> {
        if settled == Settled::default() {
            return Ok(());
        }
        for (shard, error) in &settled.retried {
            tracing::warn!(%shard, %error, "shard failed; queued again");
        }
        for (shard, error) in &settled.failed {
            tracing::error!(%shard, %error, "shard failed for good");
        }
        for (key, state) in &settled.finished {
            tracing::info!(sweep = key.0, ?state, "sweep finished");
        }
        self.with_store(move |s| {
            s.finish_shards(&settled.done, &settled.failed)?;
            for (shard, error) in &settled.retried {
                s.shard_failed_once(*shard, error)?;
            }
            for (key, state) in &settled.finished {
                let error = (*state == SweepState::Failed).then_some("some shards failed on every retry");
                s.set_state(*key, *state, error)?;
            }
            Ok(())
        })
        .await?;
        self.changed();
        Ok(())
    }

    /// Expires leases and ends drained sweeps; run on a timer.
    pub async fn tick(&self) -> Result<()> {
        let (requeued, finished) = {
            let mut sched = self.scheduler();
            let requeued = sched.expire(now());
            (requeued, sched.drain_finished())
        };
        if !requeued.is_empty() {
            tracing::warn!(?requeued, "leases expired; shards queued again");
        }
        self.persist_settled(Settled { finished, ..Settled::default() }).await
    }

    /// Leases up to `free` shards to a worker. The scheduler's lock is held
    /// only to lease; start lists are drawn on the blocking pool and newly
    /// cut shards are stored before the assignments are returned.
    pub async fn assign(&self, worker: WorkerId, free: usize) -> Result<Vec<Assignment>> {
        let _in_order = self.cutting.lock().await;
        let grant = self.scheduler().assign(worker, free, now());
        if grant.leased.is_empty() {
            return Ok(Vec::new());
        }
        let drawn = blocking(move || Ok(grant.draw_starts())).await?;
        self.scheduler().remember_starts(&drawn);
        if !drawn.new_shards.is_empty() {
            let new_shards = drawn.new_shards.clone();
            self.with_store(move |s| {
                for n in &new_shards {
                    s.cut_shards(n.sweep, &n.shards, n.cursor)?;
                }
                Ok(())
            })
            .await?;
        }
        Ok(drawn.assignments)
    }

    /// Resolves a sweep by id (or the only one).
    pub async fn record(&self, id: Option<String>) -> Result<SweepRecord> {
        self.with_store(move |s| s.resolve(id.as_deref())).await
    }

    /// Cancels a running sweep.
    pub async fn cancel(&self, key: SweepKey) -> Result<()> {
        self.scheduler().cancel(key);
        self.with_store(move |s| s.set_state(key, SweepState::Cancelled, None)).await?;
        self.changed();
        Ok(())
    }
}
