//! Sweeps coming and going: submitted, resumed after a restart (taken
//! back into the scheduler with their open shards), found and cancelled.

use std::sync::Arc;

use sweep::{MethodSet, Planner, ShardPlan, Sweep};

use super::{blocking, Shared};
use crate::error::{Error, Result};
use crate::ids::SweepKey;
use crate::scheduler::Counted;
use crate::store::{Known, SweepRecord, SweepState};

impl Shared {
    /// A sweep's counted figures ([`Counted`]) while this coordinator runs
    /// it; None otherwise.
    pub fn counted(&self, key: SweepKey) -> Option<Counted> {
        self.scheduler().counted(key)
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
                // A run a stopped process left open ended with its last result.
                s.close_stopped_run(key)?;
                let record = s.record_of(key)?;
                if record.state != SweepState::Running {
                    return Ok(None);
                }
                let mut open = s.open_shards(key)?;
                let reused = s.reused(key, &for_store)?;
                let gaps = Planner::reusing(&for_store, &reused).uncovered(&s.shard_plans(key)?, record.cursor, target);
                let stages = s.stages_at_load(key, &for_store, &mut open, record.cursor, target)?;
                let gaps = gaps.into_iter().map(|p| (p, None)).chain(stages.into_iter().map(|(p, m)| (p, Some(m))));
                let gaps: Vec<(ShardPlan, Option<MethodSet>)> = gaps.collect();
                let counts = s.stored_counts(key, &for_store)?;
                Ok(Some((record, open, gaps, reused, counts)))
            })
            .await?;
        let Some((record, open, gaps, reused, (work, workers, reused_from))) = loaded else { return Ok(()) };
        if !open.is_empty() {
            tracing::info!(sweep = %record.id, name = %record.name, open_shards = open.len(), "resuming sweep");
        }
        {
            let mut sched = self.scheduler();
            sched.add_sweep(key, record.id.clone(), sweep, record.cursor, open, record.shards_failed, reused);
            sched.seed_counts(key, work, workers, reused_from);
            if !gaps.is_empty() {
                let starts: u64 = gaps.iter().map(|(p, _)| p.start_count()).sum();
                tracing::error!(
                    sweep = %record.id, starts, shards = gaps.len(),
                    "the stored shards do not cover the grid planned so far; planning the gap again"
                );
                sched.replan(key, gaps);
            }
        }
        self.flush_cuts(true).await?;
        self.changed();
        Ok(())
    }

    /// The parse of `text` offered by this process ([`ParsedSweeps::offer`]),
    /// if it is what parsing `text` under `caps` would give.
    ///
    /// [`ParsedSweeps::offer`]: crate::store::ParsedSweeps::offer
    pub fn offered(&self, text: &str, caps: &sweep::Limits) -> Option<Arc<Sweep>> {
        self.parsed.take_offered(text, caps)
    }

    /// Stores a sweep (or finds the stored one with its id) and schedules
    /// it if it is running. With `resume`, a cancelled sweep runs again from
    /// where it stopped (its results and open shards are stored); without,
    /// it stays cancelled. A new sweep takes the tasks the database holds
    /// unless `reuse` is false (`--no-reuse`). Returns its record and, when
    /// it is new, what it took.
    pub async fn submit(&self, sweep: Arc<Sweep>, resume: bool, reuse: bool) -> Result<(SweepRecord, Option<Known>)> {
        let for_store = sweep.clone();
        let (mut record, created) = self.with_store(move |s| s.insert_sweep_with(&for_store, reuse)).await?;
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

    /// Resolves a sweep by id (or the only one).
    pub async fn sweep_record(&self, id: Option<String>) -> Result<SweepRecord> {
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

    /// Removes a sweep that is not running ([`Store::remove_sweep`]), under
    /// `cutting`, like a cancel, so no load runs beside it.
    ///
    /// [`Store::remove_sweep`]: crate::store::Store::remove_sweep
    pub async fn remove(&self, id: String) -> Result<sweep::Removal> {
        let _in_order = self.cutting.lock().await;
        // Cuts of a sweep cancelled a moment ago may still be queued: their
        // rows go in before the sweep goes out.
        self.flush_cuts(true).await?;
        // Checked and removed in one hold of the store: a resume stores a
        // sweep as running through it too.
        let written = self
            .with_store(move |s| {
                let record = s.resolve(Some(&id))?;
                if record.state == SweepState::Running {
                    return Err(Error::SweepRunning { id: record.id, name: record.name });
                }
                Ok(s.remove_sweep(record.key))
            })
            .await?;
        self.note_write(&written);
        let removal = written?;
        tracing::info!(
            sweep = %removal.sweep_id, name = %removal.name, deleted = removal.tasks_deleted,
            kept = removal.tasks_kept, "sweep removed"
        );
        self.changed();
        Ok(removal)
    }

    /// Gives a sweep another name ([`Store::rename_sweep`]).
    ///
    /// [`Store::rename_sweep`]: crate::store::Store::rename_sweep
    pub async fn rename(&self, id: Option<String>, name: String) -> Result<SweepRecord> {
        let record = self.with_store(move |s| s.rename_sweep(s.resolve(id.as_deref())?.key, &name)).await?;
        tracing::info!(sweep = %record.id, name = %record.name, "sweep renamed");
        self.changed();
        Ok(record)
    }
}
