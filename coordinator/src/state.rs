//! What the services share: the database, the scheduler, the coordinator's
//! nonce and a change counter that progress watchers wait on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ksweep_proto::v1 as pb;
use sweep::{Cursor, Planner, ShardPlan, Sweep};
use tokio::sync::watch;

use crate::connections::ConnectionLimits;
use crate::dashboard::DashboardOptions;
use crate::error::{Error, Result};
use crate::ids::{SweepKey, WorkerId};
use crate::scheduler::{Assignment, Scheduler, SchedulerConfig, Settled, ShardReport};
use crate::secret::SessionSecret;
use crate::store::{ParsedSweeps, Readers, Store, SweepRecord, SweepState};

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
            max_spec_bytes: sweep::MAX_SPEC_BYTES,
            spec_caps: sweep::Limits::default(),
            max_message_bytes: ksweep_proto::MAX_MESSAGE_BYTES,
            tls: None,
            connections: ConnectionLimits::default(),
            http: None,
            dashboard: DashboardOptions::default(),
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
    /// Held from cutting shards until they and the advanced cursor are
    /// stored, so cuts reach the database in the order they were made: a
    /// crash can then never leave a stored cursor past an unstored shard
    /// (tasks lost for good after a restart).
    cutting: tokio::sync::Mutex<()>,
    /// Each registered worker's session secret.
    sessions: Mutex<HashMap<WorkerId, SessionSecret>>,
    /// Settled batches whose write failed, retried on every tick.
    unsettled: Mutex<Vec<Settled>>,
    /// The last write the database was asked for failed.
    writes_failing: AtomicBool,
    /// Each running sweep's throughput over the last minute, by id, sampled
    /// on ticks and whenever a status is asked for.
    rates: Mutex<Rates>,
}

/// The sweeps' rate windows and when they were last sampled together.
struct Rates {
    origin: Instant,
    sampled: Option<Instant>,
    windows: HashMap<String, sweep::RateWindow>,
}

/// Window of the rate a status shows.
const RATE_WINDOW: Duration = Duration::from_secs(60);
/// How often ticks sample every running sweep's count.
const RATE_SAMPLE: Duration = Duration::from_secs(2);
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
        let scheduler = Scheduler::new(options.scheduler.clone(), store.max_shard_id()?);
        let nonce =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
                ^ (std::process::id() as u64) << 32;
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
            sessions: Mutex::new(HashMap::new()),
            unsettled: Mutex::new(Vec::new()),
            writes_failing: AtomicBool::new(false),
            rates: Mutex::new(Rates { origin: now(), sampled: None, windows: HashMap::new() }),
        })
    }

    /// `status` with its live figures: the rate and ETA (its count folded
    /// into the sweep's window first), and the shards that wait for a
    /// worker able to run them. Ended sweeps have none.
    pub fn live(&self, mut status: pb::SweepStatus) -> pb::SweepStatus {
        let running = status.state == pb::SweepState::Running as i32;
        if running {
            let waiting = self.scheduler().waiting_for(&status.sweep_id);
            status.shards_waiting = waiting.shards;
            status.waiting_memory_bytes = waiting.memory;
            status.waiting_labels = waiting.labels.into_iter().collect();
        }
        let mut rates = self.rates.lock().unwrap_or_else(|p| p.into_inner());
        if !running {
            rates.windows.remove(&status.sweep_id);
            return status;
        }
        let at = now().saturating_duration_since(rates.origin);
        let window =
            rates.windows.entry(status.sweep_id.clone()).or_insert_with(|| sweep::RateWindow::new(RATE_WINDOW));
        window.observe(at, status.tasks_done);
        status.rate_per_sec = window.rate();
        status.eta_secs = window.eta(status.tasks_total.saturating_sub(status.tasks_done)).map(|d| d.as_secs_f64());
        status
    }

    /// Samples every running sweep's count, at most every RATE_SAMPLE, so
    /// a rate is ready when a status is first asked for.
    async fn sample_rates(&self) -> Result<()> {
        {
            let mut rates = self.rates.lock().unwrap_or_else(|p| p.into_inner());
            if rates.sampled.is_some_and(|t| now().saturating_duration_since(t) < RATE_SAMPLE) {
                return Ok(());
            }
            rates.sampled = Some(now());
        }
        let statuses = self.read(crate::query::sweeps).await?;
        for status in statuses {
            self.live(status);
        }
        Ok(())
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

    /// Takes every running sweep of the database into the scheduler (see
    /// [`Shared::load`]). A sweep that cannot be loaded is logged and left
    /// as stored; the others go on.
    pub async fn resume(&self) -> Result<()> {
        let running = self
            .with_store(|s| Ok(s.sweeps()?.into_iter().filter(|r| r.state == SweepState::Running).collect::<Vec<_>>()))
            .await?;
        for record in running {
            let (key, id) = (record.key, record.id.clone());
            let parsed = self.parsed.clone();
            match blocking(move || parsed.of(&record)).await {
                Ok(sweep) => self.load(key, sweep).await?,
                Err(e) => tracing::error!(sweep = %id, error = %e, "cannot resume this sweep; it stays as stored"),
            }
        }
        Ok(())
    }

    /// Takes a stored sweep into the scheduler if it is running there and
    /// not here yet: its open shards, and shards for any part of its planned
    /// grid that no stored shard holds (a gap is logged; it means a cut was
    /// lost). Serialised with cuts and cancels by `cutting`.
    async fn load(&self, key: SweepKey, sweep: Arc<Sweep>) -> Result<()> {
        let _in_order = self.cutting.lock().await;
        if self.scheduler().is_running(key) {
            return Ok(());
        }
        let target = self.scheduler().target_cost();
        let for_store = sweep.clone();
        let loaded = self
            .with_store(move |s| {
                let record = s.record_of(key)?;
                if record.state != SweepState::Running {
                    return Ok(None);
                }
                let open = s.open_shards(key)?;
                let gaps = Planner::new(&for_store).uncovered(&s.shard_plans(key)?, record.cursor, target);
                Ok(Some((record, open, gaps)))
            })
            .await?;
        let Some((record, open, gaps)) = loaded else { return Ok(()) };
        if !open.is_empty() {
            tracing::info!(sweep = %record.id, name = %record.name, open_shards = open.len(), "resuming sweep");
        }
        {
            let mut sched = self.scheduler();
            sched.add_sweep(key, record.id.clone(), sweep, record.cursor, open, record.shards_failed);
            if !gaps.is_empty() {
                let starts: u64 = gaps.iter().map(ShardPlan::start_count).sum();
                tracing::error!(
                    sweep = %record.id, starts, shards = gaps.len(),
                    "the stored shards do not cover the grid planned so far; planning the gap again"
                );
                sched.replan(key, gaps);
            }
        }
        self.flush_cuts().await?;
        self.changed();
        Ok(())
    }

    /// Stores a sweep (or finds the stored one with its id) and schedules
    /// it if it is running. With `resume`, a cancelled sweep runs again from
    /// where it stopped (its results and open shards are stored); without,
    /// it stays cancelled. Returns its record and whether it is new.
    pub async fn submit(&self, sweep: Arc<Sweep>, resume: bool) -> Result<(SweepRecord, bool)> {
        let for_store = sweep.clone();
        let (mut record, created) = self.with_store(move |s| s.insert_sweep(&for_store)).await?;
        // The stored text is this spec's canonical form: no need to parse it again.
        self.parsed.keep(record.key, &record.id, sweep.clone());
        if resume && matches!(record.state, SweepState::Cancelled | SweepState::Failed) {
            let key = record.key;
            let was = record.state;
            // A failed sweep's failed shards run again from scratch: they
            // may have failed for want of a worker that has joined since.
            let written = self
                .with_store(move |s| match was {
                    SweepState::Failed => s.reopen_failed(key),
                    _ => s.set_state(key, SweepState::Running, None).map(|()| 0),
                })
                .await;
            self.note_write(&written);
            let reopened = written?;
            record.state = SweepState::Running;
            record.shards_failed = 0;
            record.error = None;
            tracing::info!(sweep = %record.id, done = record.tasks_done, was = ?was, reopened, "sweep resumed");
        }
        if record.state == SweepState::Running {
            self.load(record.key, sweep).await?;
        }
        Ok((record, created))
    }

    /// Records which results of a worker's poll are new, then settles what
    /// they complete: rows are stored before the scheduler counts them, so a
    /// crash in between only means the worker's results are taken again.
    pub async fn report(&self, worker: WorkerId, reports: &[ShardReport]) -> Result<()> {
        if reports.is_empty() {
            return Ok(());
        }
        let rows = self.scheduler().validate(worker, reports)?;
        if !rows.is_empty() {
            let stored = self.with_store(move |s| s.record(&rows)).await;
            self.note_write(&stored);
            stored?;
        }
        let settled = self.scheduler().commit(worker, reports);
        self.persist_settled(settled).await?;
        self.changed();
        Ok(())
    }

    /// Persists what settling shards decided. The scheduler has already
    /// moved on, so a write that fails is kept and retried on every tick
    /// (the sweep would otherwise stay running for ever in the database);
    /// the error still reaches the caller.
    pub async fn persist_settled(&self, settled: Settled) -> Result<()> {
        if settled == Settled::default() {
            return Ok(());
        }
        log_settled(&settled);
        let pending = {
            let mut unsettled = self.unsettled.lock().unwrap_or_else(|p| p.into_inner());
            unsettled.push(settled);
            std::mem::take(&mut *unsettled)
        };
        self.write_settled(pending).await
    }

    /// Writes settled batches, oldest first; on failure keeps the rest for
    /// the next try.
    async fn write_settled(&self, pending: Vec<Settled>) -> Result<()> {
        let target_cost = self.scheduler().target_cost();
        let mut pending = pending.into_iter();
        while let Some(settled) = pending.next() {
            let batch = settled.clone();
            let written = self.with_store(move |s| settle_in_store(s, &batch, target_cost)).await;
            self.note_write(&written);
            match written {
                Ok(short) => self.reopen(short),
                Err(e) => {
                    let mut unsettled = self.unsettled.lock().unwrap_or_else(|p| p.into_inner());
                    let later = std::mem::take(&mut *unsettled);
                    unsettled.push(settled);
                    unsettled.extend(pending);
                    unsettled.extend(later);
                    return Err(e);
                }
            }
        }
        self.changed();
        Ok(())
    }

    /// Takes sweeps whose results fell short back into the scheduler, with
    /// shards for the starts that lack results.
    fn reopen(&self, short: Vec<ShortSweep>) {
        if short.is_empty() {
            return;
        }
        let mut sched = self.scheduler();
        for s in short {
            tracing::error!(
                sweep = %s.record.id, stored = s.record.tasks_done, tasks = s.record.tasks_total,
                shards = s.gaps.len(),
                "a drained sweep lacks results; running the missing starts again instead of ending it"
            );
            let (key, id, failed) = (s.record.key, s.record.id.clone(), s.record.shards_failed);
            sched.add_sweep(key, id, s.sweep, s.record.cursor, Vec::new(), failed);
            sched.replan(key, s.gaps);
        }
    }

    /// Remembers whether the database took the last write: health reports
    /// NOT_SERVING while writes fail (a full or read-only disk).
    fn note_write<T>(&self, result: &Result<T>) {
        let failing = result.is_err();
        if self.writes_failing.swap(failing, Ordering::Relaxed) != failing {
            match result {
                Err(e) => tracing::error!(error = %e, "the database refuses writes; results wait until it takes them"),
                Ok(_) => tracing::info!("the database takes writes again"),
            }
        }
    }

    /// True while the database refuses writes.
    pub fn writes_failing(&self) -> bool {
        self.writes_failing.load(Ordering::Relaxed)
    }

    /// Tries a small write (the start time), so health tells whether the
    /// database takes writes before any worker finds out by failing: at
    /// start, and on every tick while writes fail with nothing else to retry.
    pub async fn probe_writes(&self) -> Result<()> {
        let written = self.with_store(|s| s.note_start()).await;
        self.note_write(&written);
        written
    }

    /// Expires leases, retries settled writes that failed, and ends drained
    /// sweeps; run on a timer.
    pub async fn tick(&self) -> Result<()> {
        let expired = {
            let mut sched = self.scheduler();
            let mut expired = sched.expire(now());
            expired.finished = sched.drain_finished();
            // Workers silent for long are forgotten: their secrets too.
            self.sessions.lock().unwrap_or_else(|p| p.into_inner()).retain(|w, _| sched.knows(*w));
            expired
        };
        let pending = std::mem::take(&mut *self.unsettled.lock().unwrap_or_else(|p| p.into_inner()));
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
        let _in_order = self.cutting.lock().await;
        self.flush_cuts().await
    }

    /// Leases up to `free` shards to a worker. The scheduler's lock is held
    /// only to lease; start lists are drawn on the blocking pool and newly
    /// cut shards are stored before the assignments are returned.
    pub async fn assign(&self, worker: WorkerId, free: usize) -> Result<Vec<Assignment>> {
        let _in_order = self.cutting.lock().await;
        let grant = self.scheduler().assign(worker, free, now());
        if grant.leased.is_empty() {
            self.flush_cuts().await?;
            return Ok(Vec::new());
        }
        let drawn = blocking(move || Ok(grant.draw_starts())).await?;
        self.scheduler().remember_starts(&drawn);
        self.flush_cuts().await?;
        Ok(drawn.assignments)
    }

    /// Stores every cut the scheduler holds unstored, in cut order, in one
    /// transaction; gives them back if the write fails. The caller holds
    /// `cutting`, so no other flush can store a later cut first.
    async fn flush_cuts(&self) -> Result<()> {
        let cuts = self.scheduler().take_unstored();
        if cuts.is_empty() {
            return Ok(());
        }
        // Once spawned, the write runs to its end even if this call is
        // dropped: only a failed write gives the cuts back.
        let for_store = cuts.clone();
        let written = self.with_store(move |s| s.cut_shards(&for_store)).await;
        self.note_write(&written);
        if written.is_err() {
            self.scheduler().restore_unstored(cuts);
        }
        written
    }

    /// Resolves a sweep by id (or the only one).
    pub async fn record(&self, id: Option<String>) -> Result<SweepRecord> {
        self.read(move |s| s.resolve(id.as_deref())).await
    }

    /// Cancels a running sweep: stored first, so a failed write leaves it
    /// running in memory and in the database alike.
    pub async fn cancel(&self, key: SweepKey) -> Result<()> {
        // Not while the sweep is being loaded: it would come back running.
        let _in_order = self.cutting.lock().await;
        let written = self.with_store(move |s| s.set_state(key, SweepState::Cancelled, None)).await;
        self.note_write(&written);
        written?;
        self.scheduler().cancel(key);
        self.changed();
        Ok(())
    }
}

fn log_settled(settled: &Settled) {
    for (shard, error) in &settled.retried {
        tracing::warn!(%shard, %error, "shard failed; queued again");
    }
    for (shard, error) in &settled.failed {
        tracing::error!(%shard, %error, "shard failed for good");
    }
}

/// A sweep that drained with fewer results stored than it has tasks.
struct ShortSweep {
    record: SweepRecord,
    sweep: Arc<Sweep>,
    gaps: Vec<ShardPlan>,
}

/// Writes one settled batch. A sweep ends only when every task has a
/// result or lies in a shard that failed for good: one that drained short
/// (results lost) stays running and is returned with the missing starts.
fn settle_in_store(s: &mut Store, settled: &Settled, target_cost: f64) -> Result<Vec<ShortSweep>> {
    s.finish_shards(&settled.done, &settled.failed)?;
    for (shard, error) in &settled.retried {
        s.shard_failed_once(*shard, error)?;
    }
    let mut short = Vec::new();
    for &(key, state) in &settled.finished {
        let record = s.record_of(key)?;
        if record.state != SweepState::Running {
            continue;
        }
        if record.tasks_done < record.tasks_total {
            let sweep = s.sweep_of(&record)?;
            let settled = s.settled_ranges(key, sweep.methods().len() as u32)?;
            let end = Cursor { config: sweep.configurations().len() as u32, start: 0 };
            let gaps = Planner::new(&sweep).uncovered(&settled, end, target_cost);
            if !gaps.is_empty() {
                short.push(ShortSweep { record, sweep, gaps });
                continue;
            }
        }
        tracing::info!(sweep = %record.id, ?state, "sweep finished");
        let error = (state == SweepState::Failed).then(|| {
            format!(
                "{} shards failed on every retry (`ksweep status` says why; `ksweep resume` retries them)",
                record.shards_failed
            )
        });
        s.set_state(key, state, error.as_deref())?;
    }
    Ok(short)
}

#[cfg(test)]
mod tests;
mod workers;

pub use workers::{Heartbeat, HeartbeatReply};
