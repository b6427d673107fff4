//! Workers and their leases: registration, heartbeats that extend leases,
//! expiry that returns silent workers' shards to the queue, and goodbye.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::shard::ShardState;
use super::stalls::{Loss, Stalls};
use super::{Scheduler, Settled};
use crate::error::{Error, Result};
use crate::ids::{Epoch, ShardId, SweepKey, WorkerId};

/// Threads' worth of work a worker is trusted with before it has shown
/// its throughput, whatever it claims (slow start).
const SLOW_START_THREADS: f64 = 4.0;
/// Shortest span over which a worker's throughput is sampled.
const SAMPLE: Duration = Duration::from_millis(500);

#[derive(Debug)]
pub(super) struct WorkerRun {
    pub seen: Instant,
    /// Threads it claimed at registration.
    pub threads: u32,
    /// When it last delivered a new result, or began holding work: its
    /// results window (`scheduler::stalls`) runs from here.
    pub progress_at: Instant,
    /// Its running tasks' cancel-flag polls in all, as last reported.
    /// Recorded only: a count that grows proves nothing (a liar sends one).
    pub polls: u64,
    /// Task time (bounded per task) reported since `sampled_at`, in µs.
    pub reported_micros: f64,
    pub sampled_at: Instant,
    /// Smoothed threads' worth of work it delivers: task time over wall time.
    pub parallelism: f64,
    /// When it registered: the origin of `delivered`'s clock.
    pub registered: Instant,
    /// Tasks it delivered, their task time in all (bounded per task, µs),
    /// and their rate over the last minute.
    pub tasks: u64,
    pub micros: f64,
    pub delivered: sweep::RateWindow,
    /// When it must be gone (`--lifetime`, its batch job's end), as of its
    /// last poll: it is given only shards that end well before.
    pub deadline: Option<Instant>,
    /// Asked to leave (`ksweep drain`): given nothing more.
    pub draining: bool,
    /// Its recent stalls on each sweep, and whether it is kept off it.
    pub stalls: HashMap<SweepKey, Stalls>,
    /// It has called since registering: a registration never followed by
    /// a call is forgotten in the database too ([`Scheduler::forget_silent`]).
    pub heard: bool,
}

/// A worker as the dashboard shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerView {
    pub id: WorkerId,
    pub threads: u32,
    /// Shards it holds now.
    pub shards: usize,
    /// The (sweep, configuration) of each board it holds shards of, each
    /// once: what it is running now.
    pub boards: Vec<(crate::ids::SweepKey, u32)>,
    /// Since its last call.
    pub silent: Duration,
    /// Tasks delivered since it registered here, and a second over the
    /// last minute (None until measured).
    pub tasks: u64,
    pub tasks_per_sec: Option<f64>,
    /// The task time of those tasks, in µs.
    pub micros: u64,
    /// Silent past a lease: presumed gone, its shards go to others.
    pub lost: bool,
    /// Asked to leave (`ksweep drain`); it finishes what it holds.
    pub draining: bool,
    /// Time it has left (`--lifetime`, its job's end), if it has an end.
    pub lifetime_left: Option<Duration>,
}

impl WorkerRun {
    /// Threads' worth of work it may hold: what it claims, but no more than
    /// twice what it has shown it delivers, so a worker claiming 2^32
    /// threads cannot take the queue from the others.
    pub fn trusted_threads(&self) -> f64 {
        f64::from(self.threads).min(SLOW_START_THREADS.max(2.0 * self.parallelism))
    }

    fn sample(&mut self, now: Instant) {
        let span = now.saturating_duration_since(self.sampled_at);
        if span >= SAMPLE {
            let rate = self.reported_micros / span.as_micros() as f64;
            self.parallelism = 0.5 * self.parallelism + 0.5 * rate;
            self.reported_micros = 0.0;
            self.sampled_at = now;
        }
        self.delivered.observe(now.saturating_duration_since(self.registered), self.tasks);
    }
}

impl Scheduler {
    /// A worker registered, with its thread count (it bounds how much work
    /// the worker may hold at once, with its measured throughput).
    pub fn register(&mut self, worker: WorkerId, threads: u32, now: Instant) {
        let run = WorkerRun {
            seen: now,
            threads: threads.max(1),
            progress_at: now,
            polls: 0,
            reported_micros: 0.0,
            sampled_at: now,
            parallelism: 0.0,
            registered: now,
            tasks: 0,
            micros: 0.0,
            delivered: sweep::RateWindow::new(Duration::from_secs(60)),
            deadline: None,
            draining: false,
            stalls: HashMap::new(),
            heard: false,
        };
        self.workers.insert(worker, run);
    }

    /// The workers known here, by id, as of `now`.
    pub fn workers(&self, now: Instant) -> Vec<WorkerView> {
        let mut held: HashMap<WorkerId, usize> = HashMap::new();
        let mut boards: HashMap<WorkerId, Vec<(crate::ids::SweepKey, u32)>> = HashMap::new();
        for (_, shard) in self.open_shards() {
            if let ShardState::Leased(lease) = &shard.state {
                *held.entry(lease.worker).or_default() += 1;
                let board = (shard.sweep, shard.plan.config);
                let on = boards.entry(lease.worker).or_default();
                if !on.contains(&board) {
                    on.push(board);
                }
            }
        }
        let mut views: Vec<WorkerView> = self
            .workers
            .iter()
            .map(|(&id, w)| {
                let silent = now.saturating_duration_since(w.seen);
                let mut delivered = w.delivered.clone();
                delivered.observe(now.saturating_duration_since(w.registered), w.tasks);
                WorkerView {
                    id,
                    threads: w.threads,
                    shards: held.get(&id).copied().unwrap_or(0),
                    boards: boards
                        .remove(&id)
                        .map(|mut b| {
                            b.sort();
                            b
                        })
                        .unwrap_or_default(),
                    silent,
                    tasks: w.tasks,
                    tasks_per_sec: delivered.rate(),
                    micros: w.micros as u64,
                    lost: silent > self.config.lease,
                    draining: w.draining,
                    lifetime_left: w.deadline.map(|d| d.saturating_duration_since(now)),
                }
            })
            .collect();
        views.sort_by_key(|v| v.id.0);
        views
    }

    /// Notes new results from a worker (their task time, bounded): its
    /// throughput, and that it is making progress (its results window
    /// starts again).
    pub(super) fn note_progress(&mut self, worker: WorkerId, micros: f64, tasks: usize, now: Instant) {
        if let Some(w) = self.workers.get_mut(&worker) {
            w.progress_at = now;
            w.reported_micros += micros;
            w.tasks += tasks as u64;
            w.micros += micros;
        }
    }

    /// Notes how often the worker's running tasks have polled their cancel
    /// flags in all (bt, solve and nn poll every millisecond or so of
    /// work). Recorded, but no progress: a worker can send any count, so
    /// only a new result keeps it from stalling (`scheduler::stalls`).
    pub fn note_polls(&mut self, worker: WorkerId, polls: u64) {
        if let Some(w) = self.workers.get_mut(&worker) {
            w.polls = w.polls.max(polls);
        }
    }

    /// True while the worker is registered here (not silent for long).
    pub fn knows(&self, worker: WorkerId) -> bool {
        self.workers.contains_key(&worker)
    }

    /// Checks that the worker is known and notes that it is alive.
    pub fn touch(&mut self, worker: WorkerId, now: Instant) -> Result<()> {
        match self.workers.get_mut(&worker) {
            Some(w) => {
                w.seen = now;
                w.heard = true;
                Ok(())
            }
            None => Err(Error::UnknownWorker(worker.0)),
        }
    }

    /// Heartbeats: extends the leases the worker still holds; returns the
    /// ones it should stop (expired and re-leased, or cancelled).
    pub fn heartbeat(&mut self, worker: WorkerId, running: &[(ShardId, Epoch)], now: Instant) -> Vec<(ShardId, Epoch)> {
        if let Some(w) = self.workers.get_mut(&worker) {
            w.sample(now);
        }
        let mut revoked = Vec::new();
        for &(id, epoch) in running {
            match self.shards.get_mut(&id).map(|s| &mut s.state) {
                Some(ShardState::Leased(lease)) if lease.worker == worker && lease.epoch == epoch => {
                    lease.deadline = now + self.config.lease;
                }
                _ => revoked.push((id, epoch)),
            }
        }
        revoked
    }

    /// Takes shards from holders that lost them. A lease that expired, or whose holder stalled
    /// (no new result on any shard it holds for its results window,
    /// whatever its heartbeats and polls), is a failed attempt, counted
    /// once per worker: its worker died, hung or lies, and a shard that
    /// kills or hangs every worker taking it would otherwise loop for ever.
    /// See `scheduler::stalls`. Returns what it settled, for the database.
    pub fn expire(&mut self, now: Instant) -> Settled {
        let expired: Vec<(ShardId, WorkerId)> = self
            .open_shards()
            .filter_map(|(id, run)| run.lease().filter(|l| l.deadline <= now).map(|l| (id, l.worker)))
            .collect();
        let mut out = Settled::default();
        for (id, worker) in expired {
            self.lose(id, worker, Loss::Expired, now, &mut out);
        }
        for (worker, window) in self.stalled_holders(now) {
            let mut held: Vec<ShardId> = self.held_by(worker).map(|(id, _)| id).collect();
            held.sort_unstable();
            tracing::warn!(%worker, shards = held.len(), ?window, "a worker heartbeats but delivers nothing; its shards go to others");
            for id in held {
                self.lose(id, worker, Loss::Stalled(window), now, &mut out);
            }
            if let Some(w) = self.workers.get_mut(&worker) {
                w.progress_at = now;
            }
        }
        out.note_stages(self);
        out
    }

    /// Forgets workers silent for several leases. Returns those among them
    /// that never called after registering, in id order: registrations
    /// with nothing to keep them for (a registration flood's), which the
    /// database may forget too.
    pub fn forget_silent(&mut self, now: Instant) -> Vec<WorkerId> {
        let forget = self.config.lease * 3;
        let mut unheard = Vec::new();
        self.workers.retain(|&id, w| {
            let keep = now.saturating_duration_since(w.seen) < forget;
            if !keep && !w.heard {
                unheard.push(id);
            }
            keep
        });
        unheard.sort_unstable();
        unheard
    }

    /// A worker leaves: the shards it hands back go to the front of the
    /// queue at once.
    pub fn goodbye(&mut self, worker: WorkerId, returned: &[(ShardId, Epoch)]) {
        self.hand_back(worker, returned);
        self.workers.remove(&worker);
    }

    /// Shards a worker hands back unfinished (leaving, or every thread
    /// held up by long tasks so that they would only wait): next in line
    /// for any worker, and no failed attempt, since nothing went wrong.
    pub fn hand_back(&mut self, worker: WorkerId, returned: &[(ShardId, Epoch)]) {
        // Last first, so that they keep their order at the front.
        for &(id, epoch) in returned.iter().rev() {
            if self.shards.get(&id).is_some_and(|run| run.is_held_by(worker, epoch)) {
                self.transition(id, ShardState::Queued);
                // Handed back on purpose: next in line, before older ones.
                if let Some(pos) = self.queue.iter().rposition(|&q| q == id) {
                    self.queue.remove(pos);
                }
                self.queue.push_front(id);
            }
        }
    }
}
