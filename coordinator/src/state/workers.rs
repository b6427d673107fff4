//! The workers' side of the shared state: registration, the heartbeat a
//! poll carries, draining and goodbye. The services and the dashboard ask
//! these methods; none of them reaches the scheduler itself.

use std::time::Duration;

use ksweep_proto::build::Provenance;

use super::{now, Shared};
use crate::bucket::{RateLimit, TokenBucket};
use crate::error::{Error, Result};
use crate::ids::{Epoch, ShardId, WorkerId};
use crate::scheduler::{WorkerResources, WorkerView};
use crate::secret::SessionSecret;

/// What a worker's poll says about itself besides its results.
#[derive(Debug, Clone, Default)]
pub struct Heartbeat {
    /// The leases it is running.
    pub running: Vec<(ShardId, Epoch)>,
    /// Leases it hands back unstarted.
    pub returned: Vec<(ShardId, Epoch)>,
    /// How many times its threads have polled their tasks (grows while busy).
    pub task_polls: u64,
    /// How long it has left to live, if it was given a lifetime.
    pub lifetime_left: Option<Duration>,
}

/// What the coordinator answers a heartbeat.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeartbeatReply {
    /// Leases the worker must stop: expired, or their sweep ended.
    pub revoked: Vec<(ShardId, Epoch)>,
    /// The worker is asked to finish what it holds and leave.
    pub drain: bool,
}

/// Registrations taken, within a rate; refusals counted so that a run of
/// them is logged once, not once each.
pub(super) struct Registrations {
    limit: RateLimit,
    bucket: TokenBucket,
    refused: u64,
}

impl Registrations {
    pub fn new(limit: RateLimit, now: std::time::Instant) -> Registrations {
        Registrations { limit, bucket: TokenBucket::full(limit, now), refused: 0 }
    }

    fn take(&mut self, now: std::time::Instant) -> Result<()> {
        match self.bucket.take(now) {
            Ok(()) => {
                if self.refused > 0 {
                    tracing::info!(refused = self.refused, "worker registrations are taken again");
                    self.refused = 0;
                }
                Ok(())
            }
            Err(retry_in) => {
                if self.refused == 0 {
                    let limit = self.limit.describe();
                    tracing::warn!(%limit, "worker registrations come faster than the limit: refused until they slow");
                }
                self.refused += 1;
                Err(Error::TooManyRegistrations { limit: self.limit, retry_in })
            }
        }
    }
}

impl Shared {
    /// Registers a worker: a new id, stored, known to the scheduler, and
    /// the session secret its polls must present. Refused past the rate
    /// `options.registrations` allows.
    pub async fn register(
        &self,
        name: String,
        threads: u32,
        provenance: Provenance,
    ) -> Result<(WorkerId, SessionSecret)> {
        self.registrations.lock().unwrap_or_else(|p| p.into_inner()).take(now())?;
        let secret = SessionSecret::new()?;
        let registered = self.with_store(move |s| s.register_worker(&name, threads, &provenance)).await;
        self.note_write(&registered);
        let worker = registered?;
        self.scheduler().register(worker, threads, now());
        self.sessions.lock().unwrap_or_else(|p| p.into_inner()).insert(worker, secret);
        Ok((worker, secret))
    }

    /// Forgets in the database the registrations the scheduler forgot
    /// that never called after registering, so that a client looping on
    /// `Register` leaves no rows behind. Their ids are never given again.
    pub(super) async fn forget_unheard(&self, workers: Vec<WorkerId>) {
        if workers.is_empty() {
            return;
        }
        let n = workers.len();
        match self.with_store(move |s| s.forget_workers(&workers)).await {
            Ok(forgotten) => tracing::info!(forgotten, "registrations never followed by a call forgotten"),
            Err(e) => {
                tracing::warn!(error = %e, workers = n, "forgetting registrations never followed by a call failed")
            }
        }
    }

    /// Asks the registered worker named by `who` (its id, or a name only
    /// one registered worker has) to finish what it holds and leave.
    /// Returns its id, name and the shards it still holds.
    pub async fn drain(&self, who: &str) -> Result<(WorkerId, String, usize)> {
        let names = self.read(|s| s.worker_names()).await?;
        let known: Vec<WorkerId> = self.scheduler().workers(now()).into_iter().map(|w| w.id).collect();
        let by_id = who.parse::<u64>().ok().map(WorkerId).filter(|id| known.contains(id));
        let matches: Vec<WorkerId> = match by_id {
            Some(id) => vec![id],
            None => known.into_iter().filter(|id| names.get(&id.0).is_some_and(|n| n == who)).collect(),
        };
        let worker = match matches[..] {
            [one] => one,
            [] => return Err(Error::WorkerNotFound(who.to_string())),
            _ => {
                let ids: Vec<String> = matches.iter().map(|w| w.0.to_string()).collect();
                return Err(Error::AmbiguousWorker(who.to_string(), ids.join(", ")));
            }
        };
        let held = self.scheduler().drain(worker).ok_or_else(|| Error::WorkerNotFound(who.to_string()))?;
        let name = names.get(&worker.0).cloned().unwrap_or_default();
        tracing::info!(%worker, %name, held, "worker asked to drain: it finishes what it holds and leaves");
        self.changed();
        Ok((worker, name, held))
    }

    /// Asks every live registered worker to finish what it holds and
    /// leave. Returns how many are draining and the shards they hold; a
    /// coordinator ending with its sweeps calls it until none is left.
    pub fn drain_all(&self) -> (usize, usize) {
        let mut sched = self.scheduler();
        let live: Vec<WorkerId> = sched.workers(now()).into_iter().filter(|w| !w.lost).map(|w| w.id).collect();
        let held = live.iter().filter_map(|w| sched.drain(*w)).sum();
        drop(sched);
        if !live.is_empty() {
            self.changed();
        }
        (live.len(), held)
    }

    /// Checks that a call comes from the registration of `worker`: its id
    /// alone (sequential, and in every export) is no proof.
    pub fn authenticate(&self, worker: WorkerId, presented: &[u8]) -> Result<()> {
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        match sessions.get(&worker) {
            Some(secret) if secret.matches(presented) => Ok(()),
            _ => Err(Error::UnknownWorker(worker.0)),
        }
    }

    /// Notes a registered worker's memory budget and labels, which decide
    /// the shards it may be given.
    pub fn advertise(&self, worker: WorkerId, resources: WorkerResources) {
        self.scheduler().advertise(worker, resources);
    }

    /// Takes a worker's heartbeat: it is alive, these leases run, those
    /// come back; says which of its leases to stop and whether to drain.
    pub fn heartbeat(&self, worker: WorkerId, beat: &Heartbeat) -> Result<HeartbeatReply> {
        let mut sched = self.scheduler();
        sched.touch(worker, now())?;
        sched.note_polls(worker, beat.task_polls);
        sched.hand_back(worker, &beat.returned);
        sched.note_lifetime(worker, beat.lifetime_left, now());
        Ok(HeartbeatReply { revoked: sched.heartbeat(worker, &beat.running, now()), drain: sched.is_draining(worker) })
    }

    /// A worker leaves: the leases it returns go back to the queue at once.
    pub fn goodbye(&self, worker: WorkerId, returned: &[(ShardId, Epoch)]) {
        self.scheduler().goodbye(worker, returned);
    }

    /// The workers known here (alive, or silent past a lease), each with
    /// what it advertised.
    pub fn workers(&self) -> Vec<(WorkerView, WorkerResources)> {
        let sched = self.scheduler();
        sched
            .workers(now())
            .into_iter()
            .map(|w| {
                let advertised = sched.resources(w.id).cloned().unwrap_or_default();
                (w, advertised)
            })
            .collect()
    }
}
