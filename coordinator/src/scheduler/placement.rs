//! Placement: which worker may run which shard. A shard's board needs a
//! known amount of memory for one task ([`tour::Configuration::memory_need_for`],
//! the figure a worker reserves before it runs anything), and its grid may
//! require labels; a worker runs only shards whose need fits the memory it
//! advertised and whose labels it carries. A shard no worker can run waits
//! in the queue, visibly ([`Scheduler::waiting`]), instead of failing on
//! every small worker it is offered to.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::resources::Requirement;
use super::shard::{ShardRun, ShardState};
use super::sweep_run::SweepPhase;
use super::Scheduler;
use crate::ids::{ShardId, SweepKey, WorkerId};

/// Queued shards of a sweep that no live worker can run, and the most
/// they need: what `status` shows while they wait.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Waiting {
    pub shards: u64,
    /// The largest memory need among them.
    pub memory: u64,
    /// Every label some of them require.
    pub labels: BTreeSet<String>,
    /// Besides those: shards whose every able worker is excluded from them
    /// for now, having stalled on or failed them (`scheduler::stalls`).
    pub excluded: u64,
    /// When none of its shards runs though it has work left and none of
    /// the above holds it back: how many workers are registered, every one
    /// busy with other sweeps' shards (0: there is no worker at all).
    pub behind: Option<u64>,
}

/// Shards a cut may queue for other workers in one call, when the one
/// asking cannot run them: enough to step past a few large boards in the
/// grid's order, few enough that the queue never fills with work nobody
/// here can run.
pub(super) const MAX_UNFIT_CUTS: usize = 64;

/// How many times over a shard's estimated time must fit in the time a
/// worker with an end has left: estimates are rough, and a worker must
/// deliver before its batch job is killed.
const LIFETIME_SAFETY: f64 = 2.0;

impl Scheduler {
    /// The requirement of a shard of `key` on configuration `config`,
    /// computed once per configuration and kept with the sweep.
    pub(super) fn requirement(&mut self, key: SweepKey, config: u32) -> Requirement {
        let Some(run) = self.sweeps.get_mut(&key) else { return Requirement::default() };
        if let Some(r) = run.requirements.get(&config) {
            return r.clone();
        }
        let sweep = &run.sweep;
        let requirement = match sweep.configurations().get(config as usize) {
            Some(entry) => Requirement {
                memory: entry.configuration().memory_need_for(sweep.methods(), false).with_threads(1),
                labels: Arc::new(sweep.required_labels(entry.grid)),
            },
            None => Requirement::default(),
        };
        run.requirements.insert(config, requirement.clone());
        requirement
    }

    /// True when `worker` can run the queued shard `id`, and end it well
    /// before its own end if it has one.
    pub(super) fn can_run(&self, worker: WorkerId, id: ShardId, now: Instant) -> bool {
        self.shards.get(&id).is_some_and(|run| self.suits(worker, run, now))
    }

    /// [`Scheduler::can_run`] of a shard in hand: also false while the
    /// worker is excluded from it (`scheduler::stalls`).
    pub(super) fn suits(&self, worker: WorkerId, run: &ShardRun, now: Instant) -> bool {
        run.requirement.met_by(self.resources(worker))
            && self.ends_in_time(worker, run, now)
            && !self.excluded(worker, run, now)
    }

    /// True unless the worker has an end (`--lifetime`) and the shard's
    /// estimated time, spread over its threads, does not fit
    /// `LIFETIME_SAFETY` times in what is left: near its end a worker takes
    /// short shards only, then none.
    fn ends_in_time(&self, worker: WorkerId, run: &ShardRun, now: Instant) -> bool {
        let Some(w) = self.workers.get(&worker) else { return true };
        let Some(deadline) = w.deadline else { return true };
        let parallel = f64::from(w.threads).min(run.tasks.max(1) as f64);
        let wall = self.estimate_micros(run) / parallel * LIFETIME_SAFETY;
        wall < deadline.saturating_duration_since(now).as_micros() as f64
    }

    /// Notes the time a worker has left, from its poll (None: no end).
    pub fn note_lifetime(&mut self, worker: WorkerId, left: Option<Duration>, now: Instant) {
        if let Some(w) = self.workers.get_mut(&worker) {
            w.deadline = left.map(|l| now + l);
        }
    }

    /// Asks a worker to leave: it is given nothing more, and its polls'
    /// replies tell it to finish what it holds. Returns the shards it
    /// holds, or None for a worker not registered here.
    pub fn drain(&mut self, worker: WorkerId) -> Option<usize> {
        self.workers.get_mut(&worker)?.draining = true;
        Some(self.held_by(worker).count())
    }

    /// True once a worker was asked to leave.
    pub fn is_draining(&self, worker: WorkerId) -> bool {
        self.workers.get(&worker).is_some_and(|w| w.draining)
    }

    /// The most memory any live worker but `worker` advertised (a worker
    /// that advertised none counts as unbounded): shards needing more are
    /// ones only `worker` can run.
    pub(super) fn others_memory(&self, worker: WorkerId) -> u64 {
        self.workers
            .keys()
            .filter(|&&w| w != worker)
            .map(|w| self.resources(*w).map_or(u64::MAX, |r| r.memory.unwrap_or(u64::MAX)))
            .max()
            .unwrap_or(0)
    }

    /// [`Scheduler::waiting`] of the running sweep with this id (none for
    /// a sweep not running here).
    pub fn waiting_for(&self, sweep_id: &str, now: Instant) -> Waiting {
        match self.sweeps.iter().find(|(_, s)| s.id == sweep_id) {
            Some((&key, _)) => self.waiting(key, now),
            None => Waiting::default(),
        }
    }

    /// The queued shards of `key` that no registered worker can run, or
    /// none may take as of `now`.
    pub fn waiting(&self, key: SweepKey, now: Instant) -> Waiting {
        let mut waiting = Waiting::default();
        let mut checked: Vec<(&Requirement, Vec<WorkerId>)> = Vec::new();
        for id in &self.queue {
            let Some(run) = self.shards.get(id).filter(|r| r.sweep == key) else { continue };
            let r = &run.requirement;
            // Few distinct requirements (one per board): each is checked
            // against the workers once.
            let at = match checked.iter().position(|(c, _)| *c == r) {
                Some(at) => at,
                None => {
                    let able = self.workers.keys().copied().filter(|w| r.met_by(self.resources(*w))).collect();
                    checked.push((r, able));
                    checked.len() - 1
                }
            };
            let able = &checked[at].1;
            if able.is_empty() {
                waiting.shards += 1;
                waiting.memory = waiting.memory.max(r.memory);
                waiting.labels.extend(r.labels.iter().cloned());
            } else if able.iter().all(|&w| self.excluded(w, run, now)) {
                waiting.excluded += 1;
            }
        }
        if waiting.shards == 0 && waiting.excluded == 0 && self.stands_behind_others(key) {
            waiting.behind = Some(self.workers.len() as u64);
        }
        waiting
    }

    /// True when `key` has work left (shards queued, or a grid still to
    /// cut) but none of its shards runs, and every registered worker (if
    /// any) holds other shards: it waits for a worker to come free, which a
    /// status should say rather than sit at 0 % without a word. An idle
    /// worker takes it at its next poll, so then nothing is said.
    fn stands_behind_others(&self, key: SweepKey) -> bool {
        let Some(sweep) = self.sweeps.get(&key) else { return false };
        let mine = || self.shards.values().filter(|r| r.sweep == key);
        let running = mine().any(|r| matches!(r.state, ShardState::Leased(_)));
        let left = sweep.phase == SweepPhase::Cutting || mine().any(|r| r.state == ShardState::Queued);
        !running && left && self.workers.keys().all(|&w| self.held_by(w).next().is_some())
    }
}

#[cfg(test)]
mod tests {
    use sweep::{Cursor, Sweep};

    use super::*;
    use crate::scheduler::{SchedulerConfig, WorkerResources};

    /// Two small boards and one large, one start each: 3 shards.
    const MIXED: &str = r#"
        name = "mixed"
        seed = 1
        starts = 2
        methods = ["w"]
        [[grid]]
        rule = [2, 1]
        dims = [2]
        n = [8, 10, 400]
    "#;

    fn scheduler(spec: &str) -> (Scheduler, SweepKey, Instant) {
        let config = SchedulerConfig {
            target_shard: Duration::from_nanos(1),
            held_per_thread: f64::INFINITY,
            ..SchedulerConfig::default()
        };
        let mut s = Scheduler::new(config, 0);
        let sweep = Arc::new(Sweep::parse(spec).unwrap());
        s.add_sweep(SweepKey(1), sweep.id(), sweep, Cursor::default(), Vec::new(), 0, sweep::Reused::none());
        (s, SweepKey(1), Instant::now())
    }

    fn join(s: &mut Scheduler, id: u64, memory: Option<u64>, labels: &[&str], now: Instant) -> WorkerId {
        let worker = WorkerId(id);
        s.register(worker, 4, now);
        s.advertise(worker, WorkerResources { memory, labels: labels.iter().map(|l| l.to_string()).collect() });
        worker
    }

    /// The boards (side N) of the shards a worker is given.
    fn boards(s: &mut Scheduler, worker: WorkerId, now: Instant) -> Vec<u32> {
        let drawn = s.assign_drawn(worker, 64, now);
        drawn.assignments.iter().map(|a| a.sweep.configurations()[a.plan.config as usize].sides[0]).collect()
    }

    /// Bytes one task of the N x N board of MIXED needs.
    fn need(s: &mut Scheduler, key: SweepKey, config: u32) -> u64 {
        s.requirement(key, config).memory
    }

    #[test]
    fn a_shard_goes_only_to_a_worker_that_fits_it_and_waits_visibly_until_one_joins() {
        let (mut s, key, now) = scheduler(MIXED);
        let (small_need, large_need) = (need(&mut s, key, 1), need(&mut s, key, 2));
        assert!(large_need > 100 * small_need, "{small_need} {large_need}");
        let small = join(&mut s, 1, Some(2 * small_need), &[], now);
        let mut got = boards(&mut s, small, now);
        got.sort();
        assert_eq!(got, [8, 8, 10, 10], "the small boards, never the large one");
        assert!(boards(&mut s, small, now).is_empty(), "nothing more it can run");
        let waiting = Waiting { shards: 2, memory: large_need, labels: BTreeSet::new(), excluded: 0, behind: None };
        assert_eq!(s.waiting(key, now), waiting);
        // A worker large enough joins (late): the waiting shards are its.
        let big = join(&mut s, 2, Some(large_need), &[], now);
        assert_eq!(s.waiting(key, now), Waiting::default(), "someone can run them now");
        assert_eq!(boards(&mut s, big, now), [400, 400]);
    }

    #[test]
    fn a_sweep_behind_busy_workers_or_without_any_says_so() {
        let (mut s, first, now) = scheduler(MIXED);
        assert_eq!(s.waiting(first, now).behind, Some(0), "no worker at all");
        let worker = join(&mut s, 1, None, &[], now);
        assert_eq!(s.waiting(first, now).behind, None, "an idle worker takes it at its next poll");
        assert_eq!(s.assign_drawn(worker, 2, now).assignments.len(), 2);
        // A second sweep while the only worker holds the first's shards.
        let other = Arc::new(Sweep::parse(&MIXED.replace("seed = 1", "seed = 2")).unwrap());
        let second = SweepKey(2);
        s.add_sweep(second, other.id(), other, Cursor::default(), Vec::new(), 0, sweep::Reused::none());
        let waiting = s.waiting(second, now);
        assert_eq!(waiting.behind, Some(1), "{waiting:?}");
        assert_eq!(s.waiting(first, now).behind, None, "the first one runs");
        // Once its shards run, nothing is said.
        let taken = s.assign_drawn(worker, 64, now).assignments;
        assert!(taken.iter().any(|a| a.sweep_key == second), "the worker takes the second sweep's shards");
        assert_eq!(s.waiting(second, now).behind, None);
    }

    #[test]
    fn a_large_worker_takes_the_boards_only_it_can_run_first() {
        let (mut s, key, now) = scheduler(MIXED);
        let large_need = need(&mut s, key, 2);
        let small = join(&mut s, 1, Some(large_need / 2), &[], now);
        let big = join(&mut s, 2, Some(4 * large_need), &[], now);
        // The whole grid is cut into the queue (the small worker steps past
        // the large board, leaving it queued).
        let first = s.assign_drawn(small, 1, now).assignments;
        assert_eq!(first.len(), 1);
        while s.cut(0.0, &[]).map(|id| s.queue.push_back(id)).is_some() {}
        assert_eq!(boards(&mut s, big, now)[..2], [400, 400], "its own boards before the small ones");
    }

    #[test]
    fn required_labels_are_honoured() {
        let spec = MIXED.replace("n = [8, 10, 400]", "n = [8]\nrequires = [\"bigmem\", \"site=lab\"]");
        let (mut s, key, now) = scheduler(&spec);
        let plain = join(&mut s, 1, None, &["site=lab"], now);
        assert!(boards(&mut s, plain, now).is_empty(), "one label missing");
        let waiting = s.waiting(key, now);
        assert_eq!((waiting.shards, waiting.labels.len()), (2, 2), "{waiting:?}");
        let labelled = join(&mut s, 2, None, &["bigmem", "site=lab", "gpu"], now);
        assert_eq!(boards(&mut s, labelled, now), [8, 8]);
    }

    #[test]
    fn a_worker_that_advertised_no_memory_is_taken_at_its_word() {
        let unbounded = Requirement { memory: u64::MAX, labels: Arc::default() };
        assert!(unbounded.met_by(Some(&WorkerResources::default())));
        assert!(unbounded.met_by(None));
        let labelled = Requirement { memory: 1, labels: Arc::new(["x".to_string()].into()) };
        assert!(!labelled.met_by(None), "an unknown worker carries no labels");
    }
}
