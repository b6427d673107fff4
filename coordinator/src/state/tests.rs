//! Lost work, in process: cuts that never reached the database, gaps in
//! the stored shards, sweeps that drain short, and writes that fail. Each
//! test crashes or breaks the coordinator where the attack found it lost
//! tasks, then runs the sweep to its end and counts every result.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sweep::{Cursor, Planner, ShardPlan, Sweep};
use tour::{Runner, TaskOptions};

use super::*;
use crate::ids::{ShardId, SweepKey, WorkerId};
use crate::scheduler::{ShardReport, TaskReport};
use crate::store::{NewShards, ResultRecord};

/// 5x5 to 8x8, up to 8 starts each, two methods.
static SPEC: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| sweep::fixtures::knight_spec("lost-work", 7, 8, &[5, 6, 7, 8]));

fn options() -> CoordinatorOptions {
    let mut options = CoordinatorOptions::default();
    // Tiny shards (a start or two), so a sweep has many cuts.
    options.scheduler.target_shard = Duration::from_micros(1);
    // No cap on held work (the scheduler's tests cover it).
    options.scheduler.held_per_thread = 1e12;
    options
}

/// A coordinator's state over the file, its running sweeps resumed.
async fn open(path: &Path) -> Shared {
    resumed(Store::open(path).unwrap()).await
}

/// A coordinator's state over `store`, as `serve` starts it.
async fn resumed(store: Store) -> Shared {
    let shared = Shared::new(store, options()).unwrap();
    shared.resume().await.unwrap();
    shared
}

async fn submit(shared: &Shared) -> SweepKey {
    shared.submit(Arc::new(Sweep::parse(&SPEC).unwrap()), false, true).await.unwrap().0.key
}

/// What an honest worker reports for an assignment: the engine's results.
fn answer(a: &Assignment) -> ShardReport {
    let entry = &a.sweep.configurations()[a.plan.config as usize];
    let runner = Runner::new(entry.configuration()).unwrap();
    let mut ws = runner.workspace();
    let mut tasks = Vec::new();
    for (offset, &start) in a.starts.iter().enumerate() {
        for (k, m) in a.methods.indices().enumerate() {
            let method = a.sweep.methods()[m];
            let seed = runner.config().task_seed(a.sweep.seed(), start, method);
            let options = TaskOptions { seed, ..TaskOptions::default() };
            let r = runner.run_task(&mut ws, start, method, &options);
            tasks.push(TaskReport {
                start_offset: offset as u32,
                method_index: k as u32,
                summary: (&r).into(),
                error: None,
            });
        }
    }
    ShardReport { shard: a.shard, epoch: a.epoch, tasks, error: None }
}

/// One poll of an honest worker taking up to `shards` shards, then a tick.
async fn poll(shared: &Shared, worker: WorkerId, shards: usize) {
    let assignments = shared.assign(worker, shards).await.unwrap();
    let reports: Vec<ShardReport> = assignments.iter().map(answer).collect();
    shared.report(worker, &reports).await.unwrap();
    shared.tick().await.unwrap();
}

/// Runs every shard of the coordinator's sweeps with one honest worker
/// until none is running; returns the stored record of `key`.
async fn run_to_end(shared: &Shared, key: SweepKey) -> SweepRecord {
    let (worker, _) = shared.register("honest".into(), 4, Default::default()).await.unwrap();
    for _ in 0..10_000 {
        poll(shared, worker, 8).await;
        let record = shared.with_store(move |s| s.record_of(key)).await.unwrap();
        if record.state != SweepState::Running {
            return record;
        }
    }
    panic!("the sweep never ended");
}

fn assert_complete(record: &SweepRecord) {
    assert_eq!(record.state, SweepState::Done, "{record:?}");
    assert_eq!(record.tasks_done, record.tasks_total, "every task has a stored result");
}

#[tokio::test]
async fn a_cut_whose_call_was_dropped_is_stored_before_any_later_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let shared = open(&path).await;
    let key = submit(&shared).await;
    let (worker, _) = shared.register("w".into(), 8, Default::default()).await.unwrap();
    // A poll that cut shards and was dropped before storing them (its
    // client went away): the reordering the attack found.
    let dropped = shared.scheduler().assign(worker, 2, now());
    assert_eq!(dropped.leased.len(), 2);
    // A later poll queues its own cuts: the dropped ones must go first.
    assert_eq!(shared.assign(worker, 2).await.unwrap().len(), 2);
    shared.writer_idle().await;
    drop(shared); // the coordinator dies here
    let store = Store::open(&path).unwrap();
    let stored = store.shard_plans(key).unwrap();
    assert_eq!(stored.len(), 4, "both polls' shards are stored: {stored:?}");
    let sweep = Sweep::parse(&SPEC).unwrap();
    let cursor = store.record_of(key).unwrap().cursor;
    assert_eq!(Planner::new(&sweep).uncovered(&stored, cursor, 0.0), vec![], "the shards tile the cursor");
    drop(store);
    assert_complete(&run_to_end(&open(&path).await, key).await);
}

/// Cuts are queued for the writer, not waited for: a coordinator that dies
/// before they are stored has handed out shards the database lacks. The
/// stored cursor is not past them, so they are cut again, and results
/// reported for them meanwhile count once.
#[tokio::test]
async fn shards_handed_out_before_their_cut_was_stored_are_cut_again_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let shared = open(&path).await;
    let key = submit(&shared).await;
    let (worker, _) = shared.register("w".into(), 8, Default::default()).await.unwrap();
    let given = shared.scheduler().assign_drawn(worker, 3, now()).assignments;
    assert_eq!(given.len(), 3);
    // Their results are stored; their cuts never are.
    let rows = shared.scheduler().validate(worker, &given.iter().map(answer).collect::<Vec<_>>()).unwrap();
    let reported = rows.len() as u64;
    shared.with_store(move |s| s.record(&rows)).await.unwrap();
    drop(shared); // the coordinator dies here
    let shared = open(&path).await;
    let stored = shared.with_store(move |s| Ok((s.shard_plans(key)?, s.record_of(key)?))).await.unwrap();
    assert_eq!((stored.0.len(), stored.1.cursor), (0, Cursor::default()), "nothing of them stored");
    assert_eq!(stored.1.tasks_done, reported);
    assert_complete(&run_to_end(&shared, key).await);
}

#[tokio::test]
async fn a_gap_in_the_stored_shards_is_planned_again_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let sweep = Sweep::parse(&SPEC).unwrap();
    let key = {
        // What the old coordinator could leave: a cursor past config 0,
        // with starts 2..5 of it in no shard.
        let mut store = Store::open(&path).unwrap();
        let key = store.insert_sweep(&sweep).unwrap().0.key;
        let shards = vec![
            (ShardId(1), ShardPlan { config: 0, start_lo: 0, start_hi: 2 }),
            (ShardId(2), ShardPlan { config: 0, start_lo: 5, start_hi: 8 }),
        ];
        store.cut_shards(&[NewShards { sweep: key, shards, cursor: Cursor { config: 1, start: 0 } }]).unwrap();
        key
    };
    let shared = open(&path).await;
    let stored = shared.with_store(move |s| s.shard_plans(key)).await.unwrap();
    let upto = Cursor { config: 1, start: 0 };
    assert_eq!(Planner::new(&sweep).uncovered(&stored, upto, 0.0), vec![], "re-planned and stored: {stored:?}");
    assert!(stored.len() > 2);
    assert_complete(&run_to_end(&shared, key).await);
}

#[tokio::test]
async fn a_sweep_that_drains_short_of_results_runs_the_missing_starts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let shared = open(&path).await;
    let key = submit(&shared).await;
    let done = run_to_end(&shared, key).await;
    assert_complete(&done);
    drop(shared);
    {
        // Results lost after their shard was marked done, and the sweep
        // running again: it drains at once, short by those results.
        let store = Store::open(&path).unwrap();
        store.conn().execute("DELETE FROM sweep_tasks WHERE config = 1 AND start_index IN (2, 3)", []).unwrap();
        store
            .conn()
            .execute("UPDATE sweeps SET state = ?1, tasks_done = tasks_done - 4", [SweepState::Running])
            .unwrap();
    }
    let shared = open(&path).await;
    shared.tick().await.unwrap();
    let record = shared.with_store(move |s| s.record_of(key)).await.unwrap();
    assert_eq!(record.state, SweepState::Running, "not done with 4 results missing");
    assert_complete(&run_to_end(&shared, key).await);
}

#[tokio::test]
async fn a_settle_whose_write_failed_is_written_once_the_disk_takes_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let shared = open(&path).await;
    let key = submit(&shared).await;
    let (worker, _) = shared.register("w".into(), 1, Default::default()).await.unwrap();
    let mut held = Vec::new();
    loop {
        let more = shared.assign(worker, 64).await.unwrap();
        if more.is_empty() {
            break;
        }
        held.extend(more);
    }
    let (last, rest) = held.split_last().unwrap();
    let reports: Vec<ShardReport> = rest.iter().map(answer).collect();
    shared.report(worker, &reports).await.unwrap();
    // The last results are stored, then the write that ends the sweep fails.
    shared
        .with_store(|s| {
            Ok(s.conn().execute_batch(
                "CREATE TEMP TRIGGER full BEFORE UPDATE OF state ON sweeps BEGIN SELECT RAISE(FAIL, 'disk full'); END",
            )?)
        })
        .await
        .unwrap();
    // The poll succeeds (its results are stored; what they settled is
    // queued, not waited for); the tick after the failed write reports it.
    shared.report(worker, &[answer(last)]).await.unwrap();
    shared.writer_idle().await;
    shared.tick().await.unwrap_err();
    assert!(shared.writes_failing(), "health reports the failing writes");
    let record = shared.with_store(move |s| s.record_of(key)).await.unwrap();
    assert_eq!((record.state, record.tasks_done), (SweepState::Running, record.tasks_total));
    shared.tick().await.unwrap_err();
    // The disk takes writes again: the next tick ends the sweep.
    shared.with_store(|s| Ok(s.conn().execute_batch("DROP TRIGGER full")?)).await.unwrap();
    shared.tick().await.unwrap();
    assert!(!shared.writes_failing());
    assert_complete(&shared.with_store(move |s| s.record_of(key)).await.unwrap());
}

/// A sweep that failed (here: every board of 5x5 fails on each of three
/// workers in turn, as a board too big for every worker then registered
/// would; three workers, since none is handed back a shard it failed
/// within the cooldown) is not final: status says which shards failed and
/// why, and resuming it retries them from scratch, to a complete sweep.
#[tokio::test]
async fn a_failed_sweep_says_why_and_resumes_to_the_end() {
    let shared = Shared::new(Store::in_memory().unwrap(), options()).unwrap();
    let key = submit(&shared).await;
    let mut small = Vec::new();
    for name in ["small-1", "small-2", "small-3"] {
        small.push(shared.register(name.into(), 4, Default::default()).await.unwrap().0);
    }
    let refused = "board 5x5 needs 1 KiB; this worker's memory budget is 1 B";
    for round in 0..10_000 {
        let worker = small[round % small.len()];
        let assignments = shared.assign(worker, 8).await.unwrap();
        let reports: Vec<ShardReport> = assignments
            .iter()
            .map(|a| match a.plan.config {
                0 => ShardReport { shard: a.shard, epoch: a.epoch, tasks: Vec::new(), error: Some(refused.into()) },
                _ => answer(a),
            })
            .collect();
        shared.report(worker, &reports).await.unwrap();
        shared.tick().await.unwrap();
        if shared.with_store(move |s| s.record_of(key)).await.unwrap().state != SweepState::Running {
            break;
        }
    }
    let status = shared.with_store(|s| crate::query::status(s, None)).await.unwrap();
    assert_eq!(status.state, sweep::SweepState::Failed);
    let error = status.error.as_deref().unwrap_or_default();
    assert!(status.shards_failed > 0 && error.contains("`ksweep resume` retries them"), "{status:?}");
    assert_eq!(status.failed_shards.len() as u64, status.shards_failed);
    for f in &status.failed_shards {
        assert_eq!((f.config, f.board.as_str(), f.moves.as_str(), f.error.as_str()), (0, "5x5", "2,1", refused));
    }
    let (record, created) = shared.submit(Arc::new(Sweep::parse(&SPEC).unwrap()), true, true).await.unwrap();
    assert!(created.is_none());
    assert_eq!((record.state, record.shards_failed), (SweepState::Running, 0));
    assert_complete(&run_to_end(&shared, key).await);
    let status = shared.with_store(|s| crate::query::status(s, None)).await.unwrap();
    assert!(status.failed_shards.is_empty() && status.error.is_none(), "{status:?}");
}

/// A coordinator started on a disk that refuses writes says so at once
/// (health NOT_SERVING), not when the first worker fails to register, and
/// says SERVING again once a write goes through.
#[tokio::test]
async fn writes_refused_at_start_are_reported_until_one_succeeds() {
    let shared = Shared::new(Store::in_memory().unwrap(), options()).unwrap();
    shared.with_store(|s| Ok(s.conn().execute_batch("PRAGMA query_only = 1")?)).await.unwrap();
    assert!(shared.probe_writes().await.is_err());
    assert!(shared.writes_failing());
    // A worker's registration is a write too: it keeps health failing.
    shared.tick().await.unwrap();
    assert!(shared.register("w".into(), 1, Default::default()).await.is_err());
    assert!(shared.writes_failing(), "a refused registration counts");
    shared.tick().await.unwrap();
    assert!(shared.writes_failing(), "the tick's probe fails while the disk refuses");
    shared.with_store(|s| Ok(s.conn().execute_batch("PRAGMA query_only = 0")?)).await.unwrap();
    shared.tick().await.unwrap();
    assert!(!shared.writes_failing(), "the tick's probe sees the disk take writes");
    shared.register("w".into(), 1, Default::default()).await.unwrap();
}

#[tokio::test]
async fn a_failed_cancel_leaves_the_sweep_running_everywhere() {
    let shared = Shared::new(Store::in_memory().unwrap(), options()).unwrap();
    let key = submit(&shared).await;
    shared.with_store(|s| Ok(s.conn().execute_batch("PRAGMA query_only = 1")?)).await.unwrap();
    assert!(shared.cancel(key).await.is_err());
    assert!(shared.scheduler().is_running(key), "memory follows the database");
    shared.with_store(|s| Ok(s.conn().execute_batch("PRAGMA query_only = 0")?)).await.unwrap();
    shared.cancel(key).await.unwrap();
    assert!(!shared.scheduler().is_running(key));
}

/// Opens the database once the last handle of a dropped coordinator (a
/// store write still finishing on the blocking pool) has let it go.
async fn reopen(path: &Path) -> Shared {
    for _ in 0..500 {
        match Store::open(path) {
            Ok(store) => return resumed(store).await,
            Err(crate::Error::Locked { .. }) => tokio::time::sleep(Duration::from_millis(10)).await,
            Err(e) => panic!("{e}"),
        }
    }
    panic!("the database stayed locked");
}

/// The attack, in process: dozens of workers poll at once, their calls are
/// dropped at random points (clients timing out), and the coordinator dies
/// a few milliseconds into each round. However the cuts and writes
/// interleave, the sweep ends with every task stored exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_cuts_dropped_calls_and_crashes_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let spec = SPEC.replace("n = [5, 6, 7, 8]", "n = [5, 6, 7, 8, 9, 10, 11, 12]").replace("starts = 8", "starts = 40");
    let key = {
        let shared = open(&path).await;
        let key = shared.submit(Arc::new(Sweep::parse(&spec).unwrap()), false, true).await.unwrap().0.key;
        key
    };
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _round in 0..30 {
        let shared = Arc::new(reopen(&path).await);
        let mut polls = tokio::task::JoinSet::new();
        for w in 0..40 {
            let (worker, _) = shared.register(format!("w{w}"), 2, Default::default()).await.unwrap();
            let shared = shared.clone();
            let (drop_after, honest) = (Duration::from_micros(next() % 3000), next() % 2 == 0);
            polls.spawn(async move {
                loop {
                    match tokio::time::timeout(drop_after, shared.assign(worker, 2)).await {
                        Ok(Ok(given)) if honest => {
                            let reports: Vec<ShardReport> = given.iter().map(answer).collect();
                            let _ = shared.report(worker, &reports).await;
                        }
                        _ => tokio::task::yield_now().await,
                    }
                }
            });
        }
        tokio::time::sleep(Duration::from_millis(next() % 40)).await;
        polls.shutdown().await; // every call in flight is dropped
        drop(shared); // and the coordinator dies
    }
    let shared = reopen(&path).await;
    assert_complete(&run_to_end(&shared, key).await);
}

/// A restart answers at once: running sweeps are loaded afterwards, off
/// the request path, with their open shards.
#[tokio::test]
async fn a_restart_answers_before_its_sweeps_are_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let key = {
        let shared = open(&path).await;
        let key = submit(&shared).await;
        let (worker, _) = shared.register("w".into(), 8, Default::default()).await.unwrap();
        assert!(!shared.assign(worker, 3).await.unwrap().is_empty());
        shared.writer_idle().await; // a clean stop: its cuts are stored
        key
    };
    let shared = Shared::new(Store::open(&path).unwrap(), options()).unwrap();
    assert!(!shared.scheduler().is_running(key), "nothing parsed or planned yet");
    let listed = shared.with_store(|s| s.sweeps()).await.unwrap();
    assert_eq!(listed.len(), 1, "but the database answers");
    shared.resume().await.unwrap();
    assert!(shared.scheduler().is_running(key));
    assert_complete(&run_to_end(&shared, key).await);
}

/// A client that stops reading fills its stream's channel; a send to it
/// must give way to shutdown, or it holds the state (and the database).
#[tokio::test]
async fn a_send_to_a_client_that_stopped_reading_gives_way_to_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let shared = Arc::new(open(&dir.path().join("k.db")).await);
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(1);
    assert_eq!(shared.send(&tx, 1).await, Sent::Yes);
    let blocked = tokio::spawn({
        let shared = shared.clone();
        async move { shared.send(&tx, 2).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!blocked.is_finished(), "the channel is full: the send waits");
    shared.stop();
    let sent = tokio::time::timeout(Duration::from_secs(5), blocked).await.expect("the send ends at shutdown");
    assert_eq!(sent.unwrap(), Sent::Stopping);
    assert_eq!(rx.recv().await, Some(1));
    // A client that went away is told apart from shutdown.
    let (tx, rx) = tokio::sync::mpsc::channel::<u32>(1);
    drop(rx);
    assert_eq!(shared.send(&tx, 3).await, Sent::ClientGone);
}

/// Reads (exports, reports, the dashboard, status) run on readers of the
/// file: one held open as long as a large export takes does not hold up
/// the scheduler's writes, nor other reads. They had shared the writer's
/// lock: four Parquet downloads pushed Poll's p99 to 28.6 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_read_holds_up_neither_writes_nor_other_reads() {
    let dir = tempfile::tempdir().unwrap();
    let shared = Arc::new(open(&dir.path().join("k.db")).await);
    let key = submit(&shared).await;
    let (started, reading) = tokio::sync::oneshot::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let long = tokio::spawn({
        let shared = shared.clone();
        async move {
            shared
                .read(move |s| {
                    let _ = started.send(());
                    let _ = released.recv_timeout(Duration::from_secs(30));
                    s.record_of(key)
                })
                .await
        }
    });
    reading.await.unwrap();
    let quick = Duration::from_secs(5);
    let (worker, _) = tokio::time::timeout(quick, shared.register("w".into(), 1, Default::default()))
        .await
        .expect("a write")
        .unwrap();
    let assigned = tokio::time::timeout(quick, shared.assign(worker, 4)).await.expect("a lease").unwrap();
    assert!(!assigned.is_empty());
    let status = tokio::time::timeout(quick, shared.sweep_record(None)).await.expect("another read").unwrap();
    assert_eq!(status.key, key);
    assert!(!long.is_finished(), "the long read is still open");
    release.send(()).unwrap();
    assert_eq!(long.await.unwrap().unwrap().key, key);
    assert!(!shared.store_in_use());
}

/// A running coordinator's `Status` counts what the offline status sums
/// from the results (workers, CPU time, work done), before and after a
/// restart takes the sweep in from the file.
#[tokio::test]
async fn a_running_sweeps_counted_status_equals_the_summed_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("counted.db");
    let shared = Arc::new(open(&path).await);
    let key = submit(&shared).await;
    let (a, _) = shared.register("a".into(), 4, Default::default()).await.unwrap();
    let (b, _) = shared.register("b".into(), 4, Default::default()).await.unwrap();
    let compare = |shared: Arc<Shared>| async move {
        let counter = shared.clone();
        let (counted, summed) = shared
            .with_store(move |s| {
                let counted = crate::query::status_counted(s, None, |k| counter.counted(k))?;
                Ok((counted, crate::query::status(s, None)?))
            })
            .await
            .unwrap();
        assert!(shared.counted(key).is_some(), "the coordinator runs the sweep");
        assert_eq!(counted.state, sweep::SweepState::Running);
        assert_eq!((&counted.contributors, counted.cpu_micros), (&summed.contributors, summed.cpu_micros));
        assert_eq!(counted.reuse, summed.reuse);
        let (c, s) = (counted.work.unwrap(), summed.work.unwrap());
        assert!((c.done_micros - s.done_micros).abs() <= 1e-6 * s.done_micros.max(1.0), "{c:?} {s:?}");
        assert!((c.total_micros - s.total_micros).abs() <= 1e-6 * s.total_micros.max(1.0), "{c:?} {s:?}");
        counted
    };
    for (round, worker) in [a, b, a].into_iter().enumerate() {
        let reports: Vec<ShardReport> = shared.assign(worker, 3).await.unwrap().iter().map(answer).collect();
        assert!(!reports.is_empty(), "round {round}: work to do");
        shared.report(worker, &reports).await.unwrap();
    }
    let before = compare(shared.clone()).await;
    assert_eq!(before.contributors.len(), 2, "{:?}", before.contributors);
    drop(shared);
    let shared = Arc::new(reopen(&path).await);
    assert_eq!(compare(shared.clone()).await.contributors, before.contributors, "seeded from the file");
    let (c, _) = shared.register("c".into(), 4, Default::default()).await.unwrap();
    let reports: Vec<ShardReport> = shared.assign(c, 2).await.unwrap().iter().map(answer).collect();
    shared.report(c, &reports).await.unwrap();
    assert_eq!(compare(shared.clone()).await.contributors.len(), 3);
}

/// Holds the store's lock, as a long write would, until the returned
/// function lets it go (and waits for the holder to end).
fn hold_store(shared: &Shared) -> impl FnOnce() {
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (locked, is_locked) = std::sync::mpsc::channel();
    let store = shared.store.clone();
    let holder = std::thread::spawn(move || {
        let _guard = store.lock().unwrap();
        locked.send(()).unwrap();
        held.recv().unwrap();
    });
    is_locked.recv().unwrap();
    move || {
        release.send(()).unwrap();
        holder.join().unwrap();
    }
}

/// Polls queued beyond the writer's bound (`GROUP_ROWS`) go in more than
/// one transaction, the oldest first, no poll split, and each is told its
/// results are stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_queued_beyond_the_bound_go_in_several_transactions() {
    let shared = Arc::new(Shared::new(Store::in_memory().unwrap(), options()).unwrap());
    let spec = "name = \"groups\"\nseed = 1\nstarts = 100\nmethods = [\"w\"]\n[[grid]]\nrule = [2, 1]\n\
                dims = [2]\nn_range = { from = 50, to = 99 }";
    let key = shared.submit(Arc::new(Sweep::parse(spec).unwrap()), false, true).await.unwrap().0.key;
    let (worker, _) = shared.register("w".into(), 1, Default::default()).await.unwrap();
    // Three polls of three quarters of the bound: the first two reach it
    // together, the third waits for a transaction of its own.
    let per_poll = super::writer::GROUP_ROWS * 3 / 4;
    let poll = |p: usize| -> Vec<ResultRecord> {
        (p * per_poll..(p + 1) * per_poll)
            .map(|n| ResultRecord {
                worker,
                ..crate::store::tests::result(key, (n / 100) as u32, (n % 100) as u64, 0, false, 1)
            })
            .collect()
    };
    let release = hold_store(&shared);
    let before = shared.result_writes();
    let mut polls = Vec::new();
    for p in 0..3 {
        let (writer, rows) = (shared.clone(), poll(p));
        polls.push(tokio::spawn(async move { writer.store_results(rows).await }));
        // Queued in this order.
        while shared.queued_results() <= p {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    release();
    for poll in polls {
        poll.await.unwrap().unwrap();
    }
    assert_eq!(shared.result_writes() - before, 2, "two polls, then the third");
    let done = shared.with_store(move |s| s.record_of(key)).await.unwrap().tasks_done;
    assert_eq!(done, 3 * per_poll as u64, "every poll's results are stored");
}

/// Polls whose results wait for the store meanwhile are stored in one
/// transaction (group commit), and every one of them is told it is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_waiting_for_the_store_are_written_together() {
    let shared = Arc::new(Shared::new(Store::in_memory().unwrap(), options()).unwrap());
    let key = submit(&shared).await;
    let mut workers = Vec::new();
    for n in 0..10 {
        let (worker, _) = shared.register(format!("w{n}"), 4, Default::default()).await.unwrap();
        let reports: Vec<ShardReport> = shared.assign(worker, 1).await.unwrap().iter().map(answer).collect();
        assert_eq!(reports.len(), 1);
        workers.push((worker, reports));
    }
    // Hold the store (as a long write would) while every poll reports.
    let release = hold_store(&shared);
    let before = shared.result_writes();
    let reported: u64 = workers.iter().flat_map(|(_, r)| r).map(|r| r.tasks.len() as u64).sum();
    let polls: Vec<_> = workers
        .into_iter()
        .map(|(worker, reports)| {
            let shared = shared.clone();
            tokio::spawn(async move { shared.report(worker, &reports).await })
        })
        .collect();
    while shared.queued_results() < polls.len() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    release();
    for poll in polls {
        poll.await.unwrap().unwrap();
    }
    assert_eq!(shared.result_writes() - before, 1, "one transaction for the ten polls");
    let done = shared.with_store(move |s| s.record_of(key)).await.unwrap().tasks_done;
    assert_eq!(done, reported, "every poll's results are stored");
    assert_complete(&run_to_end(&shared, key).await);
}

/// The library refuses a token that would mean no authentication, or one
/// no header carries as given, as the CLI does: an empty token once
/// matched an empty `Bearer` header.
#[test]
fn a_blank_or_padded_token_is_refused_at_start() {
    for (token, why) in [("", "empty or only spaces"), (" ", "empty or only spaces"), ("t ", "begins or ends")] {
        let o = CoordinatorOptions { token: Some(token.into()), ..options() };
        let e = Shared::new(Store::in_memory().unwrap(), o).err().expect("refused").to_string();
        assert!(e.starts_with("CoordinatorOptions.token: ") && e.contains(why), "{token:?}: {e}");
    }
    let o = CoordinatorOptions { token: Some("s3cret".into()), ..options() };
    assert!(Shared::new(Store::in_memory().unwrap(), o).is_ok());
}

/// Registrations never followed by a call (a client looping on
/// `Register`) leave no rows once the scheduler forgets them; a worker
/// that polled keeps its row, and so does the newest registration, so no
/// id is given twice.
#[tokio::test(start_paused = true)]
async fn registrations_never_followed_by_a_call_are_forgotten() {
    let shared = Shared::new(Store::in_memory().unwrap(), options()).unwrap();
    let (heard, _) = shared.register("heard".into(), 1, Default::default()).await.unwrap();
    let mut flood = Vec::new();
    for i in 0..3 {
        flood.push(shared.register(format!("flood-{i}"), 1, Default::default()).await.unwrap().0);
    }
    shared.heartbeat(heard, &Heartbeat::default()).unwrap();
    tokio::time::advance(options().scheduler.lease * 3).await;
    shared.tick().await.unwrap();
    let mut kept: Vec<u64> = shared.read(|s| s.worker_names()).await.unwrap().into_keys().collect();
    kept.sort_unstable();
    assert_eq!(kept, [heard.0, flood[2].0], "the one heard from, and the newest");
    let (next, _) = shared.register("next".into(), 1, Default::default()).await.unwrap();
    assert!(next.0 > flood[2].0, "{next} after {}", flood[2]);
}

// ------------------------------------------------------- adaptive precision

/// The knight on 8x8 to 12x12 with w and aw+, up to 128 starts a cell,
/// looking at 8, 16, .. for a half-width of 0.12: cells near 100 % stop
/// early, the others go on.
const ADAPTIVE: &str = r#"
name = "adaptive"
seed = 5
starts = 128
precision = 0.12
min_starts = 8
methods = ["w", "aw+"]
[[grid]]
rule = [2, 1]
dims = [2]
n_range = { from = 5, to = 12 }
"#;

/// Each cell as the engine gives it run start by start in the sweep's
/// order until its looks stop it: (tasks, successes) per (config, method).
fn adaptive_reference(sweep: &Sweep) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let planner = Planner::new(sweep);
    for entry in sweep.configurations() {
        let runner = Runner::new(entry.configuration()).unwrap();
        let mut ws = runner.workspace();
        let cells = planner.starts(entry.index);
        for &method in sweep.methods() {
            let Some(precision) = sweep.cell_precision(entry.index).filter(|p| p.cap > 0) else {
                out.push((0, 0));
                continue;
            };
            let flags: Vec<bool> = cells
                .iter()
                .map(|&start| {
                    let options = sweep.task_options(runner.config(), start, method);
                    runner.run_task(&mut ws, start, method, &options).success
                })
                .collect();
            let exhaustive = precision.cap == entry.eligible_count();
            let standing = precision.standing(exhaustive, |i| flags.get(i as usize).copied());
            assert!(standing.is_settled(), "every result in: {standing:?}");
            out.push(standing.counted());
        }
    }
    out
}

async fn adaptive_rows(shared: &Shared, key: SweepKey) -> Vec<sweep::AggregateRow> {
    let sweep = Arc::new(Sweep::parse(ADAPTIVE).unwrap());
    shared
        .with_store(move |s| {
            let record = s.record_of(key)?;
            s.aggregates(&record, &sweep)
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn adaptive_cells_stop_at_their_looks_as_the_engine_says() {
    let sweep = Arc::new(Sweep::parse(ADAPTIVE).unwrap());
    let shared = resumed(Store::in_memory().unwrap()).await;
    let key = submit_adaptive(&shared, &sweep).await;
    let record = run_to_end(&shared, key).await;
    assert_eq!(record.state, SweepState::Done, "{record:?}");
    let rows = adaptive_rows(&shared, key).await;
    let expected = adaptive_reference(&sweep);
    let got: Vec<(u64, u64)> = rows.iter().map(|r| (r.tasks, r.successes)).collect();
    assert_eq!(got, expected, "cell for cell, start for start");
    let ran: u64 = rows.iter().map(|r| r.tasks).sum();
    assert_eq!(record.tasks_done, ran, "no task past a cell's stopping look");
    assert!(ran < sweep.total_tasks(), "the looks saved work: {ran} of {}", sweep.total_tasks());
    assert!(rows.iter().any(|r| r.tasks > 8), "some cell went past its first look");
    for r in rows.iter().filter(|r| !r.impossible) {
        let p = r.precision.expect("a cell of a sweep with precision says how it stopped");
        assert!(p.settled, "{r:?}");
        assert!(p.reached || r.tasks == sweep.cell_precision(r.config).unwrap().cap, "short only at the cap: {r:?}");
        assert!(p.low <= r.successes as f64 / r.tasks as f64 && r.successes as f64 / r.tasks as f64 <= p.high);
    }
}

#[tokio::test]
async fn adaptive_tables_are_the_same_after_a_restart_and_at_any_shard_size() {
    let sweep = Arc::new(Sweep::parse(ADAPTIVE).unwrap());
    // One run with large shards, no restart.
    let big = {
        let mut options = options();
        options.scheduler.target_shard = Duration::from_secs(10);
        let shared = Shared::new(Store::in_memory().unwrap(), options).unwrap();
        shared.resume().await.unwrap();
        let key = submit_adaptive(&shared, &sweep).await;
        run_to_end(&shared, key).await;
        adaptive_rows(&shared, key).await
    };
    // One with tiny shards, the coordinator restarted every few polls.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.db");
    let key = { submit_adaptive(&open(&path).await, &sweep).await };
    let mut restarts = 0;
    loop {
        let shared = open(&path).await;
        let (worker, _) = shared.register("w".into(), 2, Default::default()).await.unwrap();
        for _ in 0..3 {
            poll(&shared, worker, 2).await;
        }
        shared.writer_idle().await;
        let record = shared.with_store(move |s| s.record_of(key)).await.unwrap();
        if record.state != SweepState::Running {
            assert_eq!(record.state, SweepState::Done);
            let small = adaptive_rows(&shared, key).await;
            assert_eq!(cells(&small), cells(&big));
            break;
        }
        restarts += 1;
        assert!(restarts < 2000, "the sweep never ended");
    }
    assert!(restarts > 3, "the run was cut by restarts: {restarts}");
}

#[tokio::test]
async fn adaptive_cells_taken_from_a_fixed_sweep_of_the_cap_are_the_same() {
    let sweep = Arc::new(Sweep::parse(ADAPTIVE).unwrap());
    let fresh = {
        let shared = resumed(Store::in_memory().unwrap()).await;
        let key = submit_adaptive(&shared, &sweep).await;
        run_to_end(&shared, key).await;
        adaptive_rows(&shared, key).await
    };
    // A fixed sweep of S = the cap, same seed and grid: the same cells.
    let fixed_text: String = ADAPTIVE
        .lines()
        .filter(|l| !l.starts_with("precision") && !l.starts_with("min_starts"))
        .collect::<Vec<_>>()
        .join("\n");
    let fixed = Arc::new(Sweep::parse(&fixed_text.replace("name = \"adaptive\"", "name = \"fixed\"")).unwrap());
    let shared = resumed(Store::in_memory().unwrap()).await;
    let fixed_key = shared.submit(fixed, false, true).await.unwrap().0.key;
    run_to_end(&shared, fixed_key).await;
    let (record, known) = shared.submit(sweep.clone(), false, true).await.unwrap();
    let known = known.expect("a new sweep says what it took");
    assert_eq!(known.tasks, sweep.total_tasks(), "every task of the cap is stored");
    let record = run_to_end(&shared, record.key).await;
    assert_eq!(record.state, SweepState::Done);
    assert_eq!(cells(&adaptive_rows(&shared, record.key).await), cells(&fresh), "past the looks, nothing counts");
}

/// What two runs of a sweep must agree on, cell by cell.
type Cell = (u64, u64, Option<(f64, f64, bool)>);

fn cells(rows: &[sweep::AggregateRow]) -> Vec<Cell> {
    rows.iter().map(|r| (r.tasks, r.successes, r.precision.map(|p| (p.low, p.high, p.reached)))).collect()
}

async fn submit_adaptive(shared: &Shared, sweep: &Arc<Sweep>) -> SweepKey {
    shared.submit(sweep.clone(), false, true).await.unwrap().0.key
}
