//! End-to-end tests: `ksweep coordinator` and `ksweep worker` as real child
//! processes on loopback, driven by the `ksweep` client commands (and, for
//! the protocol's edge cases, by raw gRPC calls), with a SQLite file in a
//! temporary directory per test. Every child is killed when its test ends,
//! every wait is bounded, and a failing test prints the children's logs.
//!
//! The distributed results are compared with `ksweep run` (coordinator and
//! worker in one process) on the same spec: identical success flags, counts
//! and tables, timings aside.

use std::future::Future;
use std::path::Path;
use std::thread::sleep;
use std::time::{Duration, Instant};

use ksweep_e2e::*;
use ksweep_proto::v1 as pb;
use ksweep_proto::v1::sweeps_client::SweepsClient;
use ksweep_proto::v1::workers_client::WorkersClient;
use tonic::transport::Channel;
use tonic::Code;

/// How long a whole distributed sweep of SPEC_MEDIUM may take (it needs
/// well under 30 s on 2 busy cores).
const SWEEP_TIMEOUT: Duration = Duration::from_secs(150);

/// Per worker (id) in a coordinator's database: tasks and summed task
/// microseconds of the results it delivered.
fn work_per_worker(db: &Path) -> Vec<(i64, u64, u64)> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open the coordinator's database read-only");
    let mut stmt = conn
        .prepare("SELECT worker, COUNT(*), SUM(micros) FROM results GROUP BY worker ORDER BY worker")
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)? as u64)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// Waits until a good part of the sweep is done (by task count; the large
/// 3D boards come last, so most of the CPU time is still ahead).
fn wait_mid_sweep(c: &Cluster, id: &str) -> Status {
    c.wait_for(id, "30% of the tasks done", SWEEP_TIMEOUT, |s| s.tasks_done * 10 >= s.tasks_total * 3)
}

#[test]
fn distributed_equals_embedded() {
    let want = reference(SPEC_MEDIUM);
    let mut c = Cluster::start(&[]);
    for _ in 0..3 {
        c.add_worker(1);
    }
    let spec = c.write("spec.toml", SPEC_MEDIUM);
    let id = c.submit(&spec);

    // `watch` follows the sweep to its end and exits 0 once it is done.
    let watch = run_ksweep(c.path(), &["watch", &id, "--coordinator", &c.url()], SWEEP_TIMEOUT).ok();
    assert!(watch.stdout.contains("state           done"), "watch ended without `done`:\n{}", watch.stdout);
    let s = c.wait_done(&id, Duration::from_secs(10));
    assert_eq!(s.tasks_total, want.status.tasks_total);
    assert_matches_reference(&c, &id, SPEC_MEDIUM);

    // The database file read directly (while the coordinator runs) gives the
    // very same rows, timings included.
    let db = c.db.to_str().unwrap();
    let id = id.as_str();
    for args in [&["table", id, "--format", "json"][..], &["export", id, "--format", "csv"], &["status", id]] {
        let served = c.client(args).ok().stdout;
        let direct = c.ksweep(&[args, &["--db", db]].concat()).ok().stdout;
        assert!(served == direct, "`ksweep {}` differs between the coordinator and --db", args[0]);
    }
}

#[test]
fn work_is_shared_by_the_workers() {
    let mut c = Cluster::start(&[]);
    for _ in 0..3 {
        c.add_worker(1);
    }
    // Let every worker register before there is work.
    c.wait_for_log(Duration::from_secs(30), |log| log.matches("worker registered").count() == 3);
    let spec = c.write("spec.toml", SPEC_MEDIUM);
    let id = c.submit(&spec);
    c.wait_done(&id, SWEEP_TIMEOUT);
    let work = work_per_worker(&c.db);
    let total: u64 = work.iter().map(|w| w.2).sum();
    let busiest = work.iter().map(|w| w.2).max().unwrap_or(0);
    // A fair split gives each about a third; allow a lot of slack.
    assert!(
        work.len() == 3 && busiest * 4 <= total * 3,
        "three idle workers, one sweep: each should run a fair part of it, but (worker, tasks, micros) = {work:?}"
    );
}

#[test]
fn worker_killed_mid_shard() {
    reference(SPEC_MEDIUM);
    let mut c = Cluster::start(&["--lease-secs", "2", "--shard-secs", "0.5"]);
    c.add_worker(1);
    let spec = c.write("spec.toml", SPEC_MEDIUM);
    let id = c.submit(&spec);

    // The first worker is alone at first, so it surely holds shards when
    // it is killed; the second one joins just before.
    let at_kill = wait_mid_sweep(&c, &id);
    assert!(at_kill.tasks_done < at_kill.tasks_total, "{at_kill:?}");
    c.add_worker(1);
    sleep(Duration::from_millis(300));
    c.workers[0].kill();
    let status = c.workers[0].try_exit().expect("killed and reaped");
    assert!(!status.success(), "SIGKILL is not a clean exit: {status}");

    c.wait_done(&id, SWEEP_TIMEOUT);
    let log = c.coordinator.as_ref().expect("coordinator").log_text();
    assert!(log.contains("lease expired"), "the killed worker's leases should have expired and been handed out again");
    assert_matches_reference(&c, &id, SPEC_MEDIUM);
}

#[test]
fn coordinator_killed_and_restarted() {
    reference(SPEC_MEDIUM);
    let mut c = Cluster::start(&["--lease-secs", "2", "--shard-secs", "0.5"]);
    c.add_worker(1);
    c.add_worker(1);
    let spec = c.write("spec.toml", SPEC_MEDIUM);
    let id = c.submit(&spec);

    let before = wait_mid_sweep(&c, &id);
    // A user following the sweep: `watch` outlives the restart.
    let watch_args: Vec<String> =
        ["watch", id.as_str(), "--coordinator", c.url().as_str()].into_iter().map(String::from).collect();
    let mut watch = Proc::spawn("watch", c.path(), &watch_args);
    sleep(Duration::from_millis(300));
    c.kill_coordinator();
    sleep(Duration::from_millis(500));
    c.restart_coordinator();

    // Running sweeps come back in the background, after the coordinator listens.
    c.wait_for_log(Duration::from_secs(30), |log| log.contains("resuming sweep"));
    // What was reported done before the kill was committed: nothing lost.
    let after = c.status(&id);
    assert!(after.tasks_done >= before.tasks_done, "results were lost over the restart: {before:?} then {after:?}");

    let done = c.wait_done(&id, SWEEP_TIMEOUT);
    assert_eq!(done.tasks_done, done.tasks_total);
    let watched = watch.wait_exit(Duration::from_secs(30)).expect("watch ends with the sweep");
    let log = watch.log_text();
    assert!(watched.success(), "watch should follow the sweep to its end over the restart:\n{log}");
    assert!(log.contains("connecting again"), "watch should have reconnected:\n{log}");
    for w in &mut c.workers {
        assert!(w.try_exit().is_none(), "{} should have survived the coordinator restart", w.name);
        let log = w.log_text();
        assert!(log.contains("registering again"), "{} should have registered again with the new coordinator", w.name);
    }
    assert_matches_reference(&c, &id, SPEC_MEDIUM);
}

#[test]
fn bad_input_and_auth() {
    let mut c = Cluster::start_with_token(&[], Some("secret"));
    let url = c.url();

    // Clients without the token, or with a wrong one, are refused.
    for token in [None, Some("wrong")] {
        let mut args = vec!["status", "--coordinator", url.as_str()];
        if let Some(t) = token {
            args.extend(["--token", t]);
        }
        c.ksweep(&args).fails_with(&["token"]);
    }
    let good = c.write("good.toml", SPEC_TINY);
    c.ksweep(&["submit", good.to_str().unwrap(), "--coordinator", &url]).fails_with(&["token"]);

    // Workers too: they exit non-zero rather than retry forever.
    for token in [None, Some("wrong".to_string())] {
        let i = c.add_worker_with(1, token.clone());
        let w = &mut c.workers[i];
        let status =
            w.wait_exit(Duration::from_secs(20)).unwrap_or_else(|| panic!("a worker with token {token:?} should exit"));
        assert!(!status.success(), "a worker with token {token:?} exited 0");
        assert!(w.log_text().contains("token"), "the worker's error should mention the token:\n{}", w.log_text());
    }

    // Bad specs: a non-zero exit naming the field, and nothing stored.
    let valid_head = "name = \"bad\"\nseed = 1\nstarts = 4\nmethods = [\"w\"]\n";
    let grid = "[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [5, 6]\n";
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        ("malformed.toml", "name = \"bad\"\nseed = \n[[grid\n".to_string(), vec!["spec", "not valid TOML", "line 3"]),
        (
            "starts0.toml",
            format!("{}{grid}", valid_head.replace("starts = 4", "starts = 0")),
            vec!["starts", "0 is below the minimum 1"],
        ),
        ("zero-rule.toml", format!("{valid_head}{}", grid.replace("[2, 1]", "[0, 0]")), vec!["grid[0].rule"]),
        (
            "unknown-method.toml",
            format!("{}{grid}", valid_head.replace("[\"w\"]", "[\"w\", \"zz\"]")),
            vec!["methods", "zz"],
        ),
        ("unknown-key.toml", format!("{valid_head}{grid}n_rang = 3\n"), vec!["grid[0].n_rang"]),
        (
            "oversized.toml",
            format!("{valid_head}{grid}#{}\n", "x".repeat(1 << 20)),
            vec!["spec", "larger than 1048576 bytes (the limit of a spec)"],
        ),
    ];
    for (name, text, needles) in &cases {
        let path = c.write(name, text);
        let out = c.client(&["submit", path.to_str().unwrap()]);
        out.fails_with(needles);
    }
    c.client(&["status", "0123456789abcdef"]).fails_with(&["0123456789abcdef", "not found"]);
    let stored = c.list();
    assert!(stored.is_empty(), "refused specs must leave nothing stored, found {stored:?}");

    // With the token everything works; the same spec is the same sweep.
    let first = c.client(&["submit", good.to_str().unwrap()]).ok();
    let again = c.client(&["submit", good.to_str().unwrap()]).ok();
    assert_eq!(first.last_line(), again.last_line(), "same spec, same id");
    assert!(again.stdout.contains("already known"), "the second submit should say so:\n{}", again.stdout);
    // The same spec written differently (comments, spacing, key order) too.
    let reordered = c.write(
        "reordered.toml",
        &format!("# the tiny spec again\n{}", SPEC_TINY.replace("seed = 11\n", ""))
            .replace("starts = 6", "starts   =   6\nseed = 11"),
    );
    assert_eq!(c.submit(&reordered), first.last_line());
    let id = first.last_line();
    assert_eq!(c.list().len(), 1, "one sweep stored");

    c.add_worker(1);
    c.wait_done(&id, Duration::from_secs(60));
    assert_matches_reference(&c, &id, SPEC_TINY);
}

/// Awaits `fut`, failing the test after 10 s.
async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), fut).await.unwrap_or_else(|_| panic!("{what}: no answer within 10 s"))
}

async fn status_of(sweeps: &mut SweepsClient<Channel>, id: &str) -> pb::SweepStatus {
    within("Status", sweeps.status(pb::SweepRef { sweep_id: id.to_string() })).await.expect("Status").into_inner()
}

/// A fake worker's session: its id, the coordinator's nonce and its
/// session secret.
#[derive(Clone)]
struct Fake {
    id: u64,
    nonce: u64,
    secret: Vec<u8>,
}

async fn register(workers: &mut WorkersClient<Channel>, name: &str) -> Fake {
    let reply = within(
        "Register",
        workers.register(pb::RegisterRequest {
            protocol_version: ksweep_proto::PROTOCOL_VERSION,
            name: name.to_string(),
            threads: 1,
            ..Default::default()
        }),
    )
    .await
    .expect("Register")
    .into_inner();
    Fake { id: reply.worker_id, nonce: reply.coordinator_nonce, secret: reply.session_secret }
}

async fn poll(
    workers: &mut WorkersClient<Channel>,
    w: &Fake,
    free_slots: u32,
    running: Vec<pb::LeaseRef>,
    results: Vec<pb::ShardResults>,
) -> Result<pb::PollReply, tonic::Status> {
    within(
        "Poll",
        workers.poll(pb::PollRequest {
            worker_id: w.id,
            coordinator_nonce: w.nonce,
            free_slots,
            running,
            results,
            session_secret: w.secret.clone(),
            ..Default::default()
        }),
    )
    .await
    .map(|r| r.into_inner())
}

/// Made-up outcomes for every task of a shard (offset, method), with
/// success decided by `ok`; figures the engine could produce (the
/// coordinator checks them).
fn outcomes(shard: &pb::Shard, ok: impl Fn(u32, u32) -> bool) -> Vec<pb::TaskOutcome> {
    let work = ksweep_proto::convert::ShardWork::try_from(shard).expect("a shard the worker could run");
    let cells = work.configuration.board().cells();
    let moves = work.configuration.moves().len();
    let mut tasks = Vec::new();
    for o in 0..shard.starts.len() as u32 {
        for m in 0..shard.methods.len() as u32 {
            let walks = work.methods[m as usize].max_attempts(moves) as u32;
            tasks.push(pb::TaskOutcome {
                start_offset: o,
                method_index: m,
                success: ok(o, m),
                attempts: if ok(o, m) { 1 } else { walks },
                visited: if ok(o, m) { cells } else { 1 },
                micros: 5,
                outcome: if ok(o, m) { pb::Outcome::Tour } else { pb::Outcome::GaveUp } as i32,
                ..Default::default()
            });
        }
    }
    tasks
}

fn results(shard: &pb::Shard, tasks: Vec<pb::TaskOutcome>) -> pb::ShardResults {
    pb::ShardResults { shard_id: shard.shard_id, epoch: shard.epoch, tasks, error: String::new() }
}

fn lease(shard: &pb::Shard) -> pb::LeaseRef {
    pb::LeaseRef { shard_id: shard.shard_id, epoch: shard.epoch }
}

#[track_caller]
fn assert_code(r: Result<pb::PollReply, tonic::Status>, code: Code, what: &str) {
    match r {
        Ok(reply) => panic!("{what}: accepted ({reply:?}), expected {code:?}"),
        Err(s) => assert_eq!(s.code(), code, "{what}: {s:?}"),
    }
}

#[test]
fn duplicate_late_and_unsolicited_results() {
    let c = Cluster::start(&["--lease-secs", "1"]);
    let spec = c.write("spec.toml", SPEC_TINY);
    let id = c.submit(&spec);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let (done, successes) = rt.block_on(async {
        let mut workers = within("connect", WorkersClient::connect(c.url())).await.expect("connect");
        let mut sweeps = within("connect", SweepsClient::connect(c.url())).await.expect("connect");

        // A worker speaking another protocol version is refused.
        let refused = within(
            "Register",
            workers.register(pb::RegisterRequest {
                protocol_version: ksweep_proto::PROTOCOL_VERSION + 98,
                name: "from-the-future".into(),
                threads: 1,
                ..Default::default()
            }),
        )
        .await
        .expect_err("a wrong protocol version must be refused");
        assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
        assert!(refused.message().contains("protocol"), "{refused:?}");

        let a = register(&mut workers, "fake-a").await;
        let reply = poll(&mut workers, &a, 1, vec![], vec![]).await.expect("poll");
        assert_eq!(reply.shards.len(), 1, "asked for one shard: {reply:?}");
        let s1 = reply.shards[0].clone();
        assert_eq!(s1.sweep_id, id);
        assert_eq!(s1.methods, ["w", "aw+"]);
        let n1 = (s1.starts.len() * s1.methods.len()) as u64;
        assert!(n1 >= 2, "{s1:?}");

        // Half, then all (the first half again), then all once more with
        // other values: every task counts once, with its first values.
        let first = outcomes(&s1, |o, m| (o + m) % 2 == 0);
        let want_ok = first.iter().filter(|t| t.success).count() as u64;
        let half = first[..first.len() / 2].to_vec();
        poll(&mut workers, &a, 0, vec![lease(&s1)], vec![results(&s1, half.clone())]).await.expect("first half");
        assert_eq!(status_of(&mut sweeps, &id).await.tasks_done, half.len() as u64);
        poll(&mut workers, &a, 0, vec![], vec![results(&s1, first.clone())]).await.expect("all");
        let s = status_of(&mut sweeps, &id).await;
        assert_eq!((s.tasks_done, s.successes), (n1, want_ok), "after all of shard 1");
        poll(&mut workers, &a, 0, vec![], vec![results(&s1, outcomes(&s1, |_, _| true))])
            .await
            .expect("a duplicate is accepted");
        let s = status_of(&mut sweeps, &id).await;
        assert_eq!((s.tasks_done, s.successes), (n1, want_ok), "after the duplicate");

        // Results for a shard never handed out: refused, nothing counted.
        let mut unknown = s1.clone();
        unknown.shard_id += 10_000;
        let r = poll(&mut workers, &a, 0, vec![], vec![results(&unknown, outcomes(&unknown, |_, _| true))]).await;
        assert_code(r, Code::InvalidArgument, "results for an unknown shard");
        // A stale coordinator nonce: register again.
        let stale = Fake { nonce: a.nonce ^ 0x5a5a, ..a.clone() };
        let r = poll(&mut workers, &stale, 1, vec![], vec![]).await;
        assert_code(r, Code::FailedPrecondition, "a stale nonce");
        assert_eq!(status_of(&mut sweeps, &id).await.tasks_done, n1);

        // A second shard to A; B may not report on A's shards.
        let reply = poll(&mut workers, &a, 1, vec![], vec![]).await.expect("poll");
        assert_eq!(reply.shards.len(), 1, "{reply:?}");
        let s2 = reply.shards[0].clone();
        assert_ne!(s2.shard_id, s1.shard_id);
        let n2 = (s2.starts.len() * s2.methods.len()) as u64;
        let b = register(&mut workers, "fake-b").await;
        for (shard, what) in [(&s1, "B reporting A's finished shard"), (&s2, "B reporting A's running shard")] {
            let r = poll(&mut workers, &b, 0, vec![], vec![results(shard, outcomes(shard, |_, _| true))]).await;
            assert_code(r, Code::InvalidArgument, what);
        }
        assert_eq!(status_of(&mut sweeps, &id).await.tasks_done, n1);

        // A goes quiet past its 1 s lease: shard 2 goes to B, with a new epoch.
        tokio::time::sleep(Duration::from_millis(1700)).await;
        let reply = poll(&mut workers, &b, 1, vec![], vec![]).await.expect("poll");
        assert_eq!(reply.shards.len(), 1, "{reply:?}");
        let s2b = reply.shards[0].clone();
        assert_eq!(s2b.shard_id, s2.shard_id, "the expired shard is handed out again first");
        assert_ne!(s2b.epoch, s2.epoch, "a new lease has a new epoch");
        // A's heartbeat for it is answered with a revocation...
        let reply = poll(&mut workers, &a, 0, vec![lease(&s2)], vec![]).await.expect("heartbeat");
        assert!(
            reply.revoked.iter().any(|l| l.shard_id == s2.shard_id && l.epoch == s2.epoch),
            "A's expired lease should be revoked: {reply:?}"
        );
        // ...but its late results are accepted and counted, once.
        let late = outcomes(&s2, |o, _| o == 0);
        let late_ok = late.iter().filter(|t| t.success).count() as u64;
        poll(&mut workers, &a, 0, vec![], vec![results(&s2, late)]).await.expect("late results are accepted");
        let s = status_of(&mut sweeps, &id).await;
        assert_eq!((s.tasks_done, s.successes), (n1 + n2, want_ok + late_ok), "after A's late results");
        poll(&mut workers, &b, 0, vec![], vec![results(&s2b, outcomes(&s2b, |_, _| true))])
            .await
            .expect("B's results for the same shard are accepted");
        let s = status_of(&mut sweeps, &id).await;
        assert_eq!((s.tasks_done, s.successes), (n1 + n2, want_ok + late_ok), "after B's copy");
        (s.tasks_done, s.successes)
    });

    // The export holds exactly those results, each task once.
    let export = c.export(&id);
    export.assert_complete(done);
    assert_eq!(export.successes(), successes, "successes in the export");
}

#[test]
fn graceful_shutdown() {
    reference(SPEC_MEDIUM);
    // A long lease: only the worker's goodbye can hand its shards back in time.
    let mut c = Cluster::start(&["--lease-secs", "60"]);
    c.add_worker(1);
    let spec = c.write("spec.toml", SPEC_MEDIUM);
    let id = c.submit(&spec);

    // The first worker is alone at first, so it surely holds shards when
    // it is stopped; the second one joins just before.
    wait_mid_sweep(&c, &id);
    c.add_worker(1);
    sleep(Duration::from_millis(300));
    let stopping = Instant::now();
    c.workers[0].term();
    let status =
        c.workers[0].wait_exit(Duration::from_secs(10)).expect("the worker should exit within 10 s of SIGTERM");
    assert!(status.success(), "SIGTERM: the worker exited {status}");
    eprintln!("worker stopped {:?} after SIGTERM", stopping.elapsed());
    assert!(c.workers[0].log_text().contains("said goodbye"), "the worker should say goodbye");
    let log = c.coordinator.as_ref().expect("coordinator").log_text();
    let returned: u64 = log
        .lines()
        .filter(|l| l.contains("worker said goodbye"))
        .filter_map(|l| l.split("returned=").nth(1))
        .filter_map(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    assert!(returned >= 1, "the worker should hand back its shards:\n{log}");

    // The other worker finishes, well before the 60 s lease could expire.
    c.wait_done(&id, Duration::from_secs(50));
    let log = c.coordinator.as_ref().expect("coordinator").log_text();
    assert!(!log.contains("lease expired"), "no lease should have expired");
    assert_matches_reference(&c, &id, SPEC_MEDIUM);

    // A coordinator with a running sweep, a worker and a client following
    // the sweep: SIGTERM stops it cleanly, and soon.
    let more = c.write("more.toml", &SPEC_MEDIUM.replace("seed = 7", "seed = 8"));
    let more_id = c.submit(&more);
    c.wait_for(&more_id, "some progress", SWEEP_TIMEOUT, |s| s.tasks_done > 0);
    let watch = Proc::spawn("watch", c.path(), &["watch".into(), more_id.clone(), "--coordinator".into(), c.url()]);
    sleep(Duration::from_millis(500));
    let coordinator = c.take_coordinator();
    let stopping = Instant::now();
    coordinator.term();
    let status =
        coordinator.wait_exit(Duration::from_secs(10)).expect("the coordinator should exit within 10 s of SIGTERM");
    assert!(status.success(), "SIGTERM: the coordinator exited {status}");
    eprintln!("coordinator stopped {:?} after SIGTERM", stopping.elapsed());
    // `watch` outlives a coordinator that stops (a restart, as compose
    // does one): it keeps connecting again, as workers do, and says so.
    let mut watch = watch;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !watch.log_text().contains("connecting again") {
        assert!(watch.try_exit().is_none(), "watch should wait for the coordinator, not exit:\n{}", watch.log_text());
        assert!(Instant::now() < deadline, "watch never said it is connecting again:\n{}", watch.log_text());
        sleep(Duration::from_millis(100));
    }
    assert!(watch.try_exit().is_none(), "watch should still be waiting for the coordinator");
}

#[test]
fn cancel_stops_a_sweep() {
    let mut c = Cluster::start(&["--lease-secs", "2"]);
    c.add_worker(1);
    let spec = c.write("spec.toml", SPEC_MEDIUM);
    let id = c.submit(&spec);
    c.wait_for(&id, "some progress", SWEEP_TIMEOUT, |s| s.tasks_done > 0);

    let out = c.client(&["cancel", &id]).ok();
    assert!(out.stdout.contains("state           cancelled"), "cancel printed:\n{}", out.stdout);
    assert!(out.stdout.starts_with(&format!("cancelled sweep {id}")), "says what it did:\n{}", out.stdout);
    assert!(out.stdout.contains(&format!("`ksweep resume {id}` runs the rest")), "{}", out.stdout);
    // Results in flight at the cancel may land; after that, nothing counts.
    sleep(Duration::from_secs(1));
    let a = c.status(&id);
    assert_eq!(a.state, "cancelled", "{a:?}");
    assert!(a.tasks_done < a.tasks_total, "{a:?}");
    sleep(Duration::from_millis(1500));
    let b = c.status(&id);
    assert_eq!((b.state.as_str(), b.tasks_done), ("cancelled", a.tasks_done), "results counted after the cancel");
    c.export(&id).assert_complete(b.tasks_done);
    // `watch` of a cancelled sweep ends at once, and not with success.
    c.client(&["watch", &id]).fails_with(&["cancelled"]);

    // The worker drops the cancelled shards and takes the next sweep.
    let tiny = c.write("tiny.toml", SPEC_TINY);
    let tiny_id = c.submit(&tiny);
    c.wait_done(&tiny_id, Duration::from_secs(30));
    assert_matches_reference(&c, &tiny_id, SPEC_TINY);
    assert!(c.workers[0].try_exit().is_none(), "the worker should live on");

    // Submitting the cancelled spec again names the same sweep; it stays cancelled.
    let again = c.client(&["submit", spec.to_str().unwrap()]).ok();
    assert_eq!(again.last_line(), id);
    let s = c.status(&id);
    assert_eq!((s.state.as_str(), s.tasks_done), ("cancelled", a.tasks_done), "{s:?}");
    assert_eq!(c.list().len(), 2, "two sweeps stored");
}

#[test]
fn embedded_run_resumes_after_interrupt() {
    let want = reference(SPEC_MEDIUM);
    let dir = tempfile::Builder::new().prefix("ksweep-e2e-resume-").tempdir().expect("temp dir");
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, SPEC_MEDIUM).expect("write spec");
    let db = dir.path().join("run.db");
    let (spec, db) = (spec.to_str().unwrap(), db.to_str().unwrap());
    let run_args: Vec<String> = ["run", spec, "--db", db, "--threads", "1"].into_iter().map(String::from).collect();

    let mut first = Proc::spawn("run-1", dir.path(), &run_args);
    let deadline = Instant::now() + SWEEP_TIMEOUT;
    let progress = loop {
        assert!(first.try_exit().is_none(), "ksweep run ended before it was interrupted");
        let out = run_ksweep(dir.path(), &["status", "--long", "--db", db], CLIENT_TIMEOUT);
        if out.status.success() {
            let s = parse_statuses(&out.stdout);
            if s.len() == 1 && s[0].tasks_done > 0 {
                assert_eq!(s[0].state, "running", "a served sweep reads as running: {s:?}");
                break s[0].clone();
            }
        }
        assert!(Instant::now() < deadline, "no progress in the database; last:\n{}{}", out.stdout, out.stderr);
        sleep(Duration::from_millis(100));
    };
    first.term();
    let status = first.wait_exit(Duration::from_secs(10)).expect("ksweep run should stop within 10 s of SIGTERM");
    assert!(!status.success(), "an interrupted run should not exit 0");
    let log = first.log_text();
    assert!(log.contains("run the same command again"), "the interrupted run should say how to resume:\n{log}");
    let stopped =
        parse_statuses(&run_ksweep(dir.path(), &["status", "--long", "--db", db], CLIENT_TIMEOUT).ok().stdout);
    assert_eq!(stopped.len(), 1);
    // Nothing serves the file now: the sweep reads as stopped, not running.
    assert_eq!(stopped[0].state, "stopped", "{stopped:?}");
    assert!(stopped[0].tasks_done >= progress.tasks_done, "{progress:?} then {stopped:?}");
    assert!(stopped[0].tasks_done < stopped[0].tasks_total, "interrupted too late to test resuming: {stopped:?}");

    // The same command again resumes and finishes; the results are those
    // of an uninterrupted run.
    let args: Vec<&str> = run_args.iter().map(String::as_str).collect();
    let second = run_ksweep(dir.path(), &args, SWEEP_TIMEOUT).ok();
    assert!(second.stdout.contains("state           done"), "{}", second.stdout);
    let table =
        strip_timing(&run_ksweep(dir.path(), &["table", "--db", db, "--format", "json"], CLIENT_TIMEOUT).ok().stdout);
    assert_tables_equal(&table, &want.table, "resumed vs uninterrupted table");
    let export =
        Export::parse(&run_ksweep(dir.path(), &["export", "--db", db, "--format", "csv"], CLIENT_TIMEOUT).ok().stdout);
    export.assert_complete(want.status.tasks_total);
    assert_lines_equal(&export.without_micros(), &want.csv, "resumed vs uninterrupted export");
}

#[test]
fn failing_shards_end_the_sweep_failed() {
    let c = Cluster::start(&["--max-shard-failures", "2"]);
    let spec = c.write("spec.toml", SPEC_TINY);
    let id = c.submit(&spec);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let lost = rt.block_on(async {
        let mut workers = within("connect", WorkersClient::connect(c.url())).await.expect("connect");
        let mut sweeps = within("connect", SweepsClient::connect(c.url())).await.expect("connect");
        // No worker is handed back a shard it failed within the cooldown:
        // a second worker takes the retry.
        let a = register(&mut workers, "fake-failing").await;
        let b = register(&mut workers, "fake-failing-too").await;
        let failed = |shard: &pb::Shard| pb::ShardResults {
            error: "boom: the worker cannot run this shard".into(),
            ..results(shard, vec![])
        };

        let s1 = poll(&mut workers, &a, 1, vec![], vec![]).await.expect("poll").shards.remove(0);
        poll(&mut workers, &a, 0, vec![], vec![failed(&s1)]).await.expect("a shard error is accepted");
        let reply = poll(&mut workers, &b, 1, vec![], vec![]).await.expect("poll");
        let again = reply.shards.first().expect("the failed shard is handed out again");
        assert_eq!(again.shard_id, s1.shard_id, "the failed shard is retried first, on another worker");
        assert_ne!(again.epoch, s1.epoch);
        let s = status_of(&mut sweeps, &id).await;
        assert_eq!((s.tasks_done, s.shards_failed), (0, 0), "one failure of two allowed: {s:?}");
        poll(&mut workers, &b, 0, vec![], vec![failed(again)]).await.expect("the second failure is accepted");
        let s = status_of(&mut sweeps, &id).await;
        assert_eq!(s.shards_failed, 1, "failed for good after two failures: {s:?}");
        assert_eq!(s.state, pb::SweepState::Running as i32, "other shards remain: {s:?}");

        // Every other shard succeeds.
        let mut pending = Vec::new();
        for _ in 0..100 {
            let reply = poll(&mut workers, &a, 4, vec![], std::mem::take(&mut pending)).await.expect("poll");
            if reply.shards.is_empty() && status_of(&mut sweeps, &id).await.state != pb::SweepState::Running as i32 {
                break;
            }
            for shard in &reply.shards {
                assert_ne!(shard.shard_id, s1.shard_id, "a shard failed for good is not handed out again");
                pending.push(results(shard, outcomes(shard, |_, _| true)));
            }
        }
        let s = status_of(&mut sweeps, &id).await;
        assert_eq!(s.state, pb::SweepState::Failed as i32, "{s:?}");
        assert!(s.error.contains("failed"), "a failed sweep says why: {s:?}");
        let lost = (s1.starts.len() * s1.methods.len()) as u64;
        assert_eq!(s.tasks_done, s.tasks_total - lost, "{s:?}");
        lost
    });

    let s = c.status(&id);
    assert_eq!((s.state.as_str(), s.shards_failed), ("failed", 1), "{s:?}");
    c.client(&["watch", &id]).fails_with(&["failed"]);
    c.export(&id).assert_complete(s.tasks_total - lost);
}

/// TLS: a coordinator with a certificate from a private CA, a worker and
/// clients that trust that CA; the sweep's table is the embedded one.
/// Peers that do not trust it, or speak plain HTTP/2, get nowhere, and a
/// key that is not a key stops the coordinator at start with a TLS error.
#[test]
fn tls_end_to_end() {
    let want = reference(SPEC_TINY);
    let mut c = Cluster::start_tls(&[]);
    assert!(c.url().starts_with("https://"));
    c.add_worker(1);
    let spec = c.write("spec.toml", SPEC_TINY);
    let id = c.submit(&spec);
    let s = c.wait_done(&id, SWEEP_TIMEOUT);
    assert_eq!(s.tasks_total, want.status.tasks_total);
    assert_matches_reference(&c, &id, SPEC_TINY);

    let https = c.url();
    let http = https.replacen("https://", "http://", 1);
    let ca = c.tls_ca.clone().expect("a TLS cluster has a CA");
    let ca = ca.to_str().expect("utf-8 path");
    // https without the CA: the public roots do not know it.
    c.ksweep(&["status", &id, "--coordinator", &https]).fails_with(&["cannot connect", "UnknownIssuer"]);
    // Plain HTTP/2 to the TLS port.
    c.ksweep(&["status", &id, "--coordinator", &http]).fails_with(&[]);
    // A CA only makes sense with https.
    c.ksweep(&["status", &id, "--coordinator", &http, "--tls-ca", ca]).fails_with(&["--tls-ca", "https://"]);

    // The CA certificate given as the key: refused at start, naming TLS.
    let db = c.path().join("other.db");
    let cert = c.path().join("server.pem");
    let out = c.ksweep(&[
        "coordinator",
        "--listen",
        "127.0.0.1:0",
        "--db",
        db.to_str().unwrap(),
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        ca,
    ]);
    out.fails_with(&["TLS"]);
    // --tls-cert alone is a usage error.
    c.ksweep(&["coordinator", "--db", db.to_str().unwrap(), "--tls-cert", cert.to_str().unwrap()])
        .fails_with(&["--tls-key"]);
}

/// The engine's own results for a shard: what an honest worker sends.
fn engine_outcomes(shard: &pb::Shard) -> Vec<pb::TaskOutcome> {
    let work = ksweep_proto::convert::ShardWork::try_from(shard).expect("a shard the worker could run");
    let runner = tour::Runner::new(work.configuration.clone()).expect("a board the engine takes");
    let mut ws = runner.workspace();
    let mut tasks = Vec::new();
    for (o, &start) in work.starts.iter().enumerate() {
        for (m, &method) in work.methods.iter().enumerate() {
            let seed = runner.config().task_seed(work.sweep_seed, start, method);
            let options = work.options(seed);
            let r = runner.run_task(&mut ws, start, method, &options);
            tasks.push(ksweep_proto::convert::task_done(o as u32, m as u32, &r));
        }
    }
    tasks
}

/// A hostile client beside two honest workers: garbage on the port, hostile
/// registrations, impersonation, impossible and unsolicited results, an
/// unknown outcome code, and one shard reported (correctly) three times.
/// Every forgery is refused, the duplicates count once, and the sweep ends
/// with the very table of the embedded run.
#[test]
fn a_hostile_worker_cannot_change_the_table() {
    let mut c = Cluster::start(&["--lease-secs", "1"]);
    c.add_worker(1);
    c.add_worker(1);
    let spec = c.write("spec.toml", SPEC_MEDIUM);
    let id = c.submit(&spec);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    rt.block_on(async {
        // Garbage bytes on the gRPC port: the connection dies, not the server.
        let addr = c.url().trim_start_matches("http://").to_string();
        let mut raw = tokio::net::TcpStream::connect(&addr).await.expect("connect");
        let garbage: Vec<u8> = (0..65536u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let _ = tokio::io::AsyncWriteExt::write_all(&mut raw, &garbage).await;
        drop(raw);

        let mut workers = within("connect", WorkersClient::connect(c.url())).await.expect("connect");
        for (name, threads) in [("w\nINFO forged log line", 1), ("greedy", u32::MAX)] {
            let req = pb::RegisterRequest {
                protocol_version: ksweep_proto::PROTOCOL_VERSION,
                name: name.into(),
                threads,
                ..Default::default()
            };
            let e = within("Register", workers.register(req)).await.expect_err("a hostile registration");
            assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
        }
        let h = register(&mut workers, "hostile").await;
        // Honest workers registered first (ids 1 and 2): poll as them.
        for victim in [1, 2] {
            let as_victim = Fake { id: victim, ..h.clone() };
            assert_code(
                poll(&mut workers, &as_victim, 8, vec![], vec![]).await,
                Code::FailedPrecondition,
                "impersonation",
            );
        }
        let held = poll(&mut workers, &h, 2, vec![], vec![]).await.expect("poll").shards;
        assert!(!held.is_empty(), "the hostile worker gets work like any other");
        let s = &held[0];
        let honest = engine_outcomes(s);
        let cells = ksweep_proto::convert::ShardWork::try_from(s).expect("shard").configuration.board().cells();
        let mut forgeries: Vec<(&str, Vec<pb::TaskOutcome>)> = Vec::new();
        let mut t = honest.clone();
        t[0].visited = cells + 1;
        forgeries.push(("more cells than the board", t));
        let mut t = honest.clone();
        t[0].success = !t[0].success;
        forgeries.push(("success contradicting its outcome", t));
        let mut t = honest.clone();
        t[0].outcome = 99;
        forgeries.push(("an unknown outcome code", t));
        for (what, tasks) in forgeries {
            let r = poll(&mut workers, &h, 0, vec![], vec![results(s, tasks)]).await;
            assert_code(r, Code::InvalidArgument, what);
        }
        let mut unsolicited = s.clone();
        unsolicited.shard_id += 100_000;
        let r = poll(&mut workers, &h, 0, vec![], vec![results(&unsolicited, honest.clone())]).await;
        assert_code(r, Code::InvalidArgument, "results for a shard never issued");
        // The true results, three times over (a worker resending after errors).
        for _ in 0..3 {
            poll(&mut workers, &h, 0, vec![], vec![results(s, honest.clone())]).await.expect("true results");
        }
        // The rest of what it holds it abandons: the leases expire and the
        // honest workers run those shards.
    });
    c.wait_done(&id, SWEEP_TIMEOUT);
    assert_matches_reference(&c, &id, SPEC_MEDIUM);
    let log = c.coordinator.as_ref().expect("coordinator").log_text();
    assert!(!log.contains("INFO forged log line"), "a name cannot forge a log line");
}

/// A mixed cluster: small workers (`--memory 64K`) and a big one started
/// late. The small ones run every board they can hold and are never
/// offered the large one; its shards wait, visibly, instead of failing;
/// once the big worker joins it runs them (and only it), and the sweep ends
/// done with the table of the embedded run.
#[test]
fn a_board_no_worker_can_hold_waits_for_one_that_can() {
    // 400x400 with (2,1): 404x404 padded, about 1.1 MiB for one task of
    // w and aw (six walks' byte degrees a thread); 8x8 and 10x10 well
    // under 64 KiB.
    const SPEC: &str =
        "name = \"mixed\"\nseed = 3\nstarts = 3\nmethods = [\"w\", \"aw\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [8, 10, 400]\n";
    let mut c = Cluster::start(&["--max-shard-failures", "1"]);
    for _ in 0..3 {
        c.add_worker_with_flags(1, &["--memory", "64K"]);
    }
    c.wait_for_log(Duration::from_secs(30), |log| log.matches("worker registered").count() == 3);
    let spec = c.write("spec.toml", SPEC);
    let id = c.submit(&spec);
    let small_boards = 2 * 3 * 2;
    c.wait_for(&id, "the small boards", SWEEP_TIMEOUT, |s| s.tasks_done == small_boards);
    let status = c.client(&["status", &id]).ok().stdout;
    assert!(status.contains("state           running"), "{status}");
    assert!(status.contains("shards failed   0"), "waiting is not failing:\n{status}");
    let waiting =
        status.lines().find(|l| l.starts_with("waiting")).unwrap_or_else(|| panic!("no waiting line:\n{status}"));
    // One shard of 3 starts x 2 methods, about 1.1 MiB a task.
    assert!(waiting.contains("1 shard waits for a worker with >= ") && waiting.ends_with(" MiB"), "{waiting}");
    let big = c.add_worker_with_flags(1, &["--memory", "64M"]);
    c.wait_done(&id, SWEEP_TIMEOUT);
    assert_eq!(c.status(&id).shards_failed, 0);
    assert_matches_reference(&c, &id, SPEC);
    // The large board's tasks, and only those, ran on the big worker.
    let work = work_per_worker(&c.db);
    let by_big: Vec<u64> = work.iter().filter(|w| w.0 == big as i64 + 1).map(|w| w.1).collect();
    assert_eq!(by_big, [6], "(worker, tasks, micros) = {work:?}");
}

/// `ksweep drain` asks a worker to finish what it holds and leave: it
/// exits 0, nothing is lost, and another worker finishes the sweep.
#[test]
fn a_drained_worker_leaves_and_the_sweep_goes_on() {
    let mut c = Cluster::start(&[]);
    let first = c.add_worker(1);
    let spec = c.write("spec.toml", SPEC_MEDIUM);
    let id = c.submit(&spec);
    wait_mid_sweep(&c, &id);
    let out = c.client(&["drain", "worker-1"]).ok().stdout;
    assert!(out.starts_with("worker 1 (worker-1) is draining"), "{out}");
    let exit = c.workers[first].wait_exit(Duration::from_secs(60)).expect("the drained worker leaves");
    assert!(exit.success(), "a drained worker exits 0: {exit:?}");
    c.client(&["drain", "worker-1"]).fails_with(&["no registered worker"]);
    c.add_worker(1);
    c.wait_done(&id, SWEEP_TIMEOUT);
    assert_matches_reference(&c, &id, SPEC_MEDIUM);
}

/// A worker with `--lifetime` takes only shards that end well within it
/// and leaves on its own before its end, exit 0, handing back what it
/// holds: no shard fails, and another worker finishes the sweep.
#[test]
fn a_worker_leaves_before_its_lifetime_ends_with_nothing_lost() {
    let mut c = Cluster::start(&[]);
    let short = c.add_worker_with_flags(1, &["--lifetime", "14s"]);
    let started = Instant::now();
    let spec = c.write("spec.toml", SPEC_MEDIUM);
    let id = c.submit(&spec);
    let exit = c.workers[short].wait_exit(Duration::from_secs(40)).expect("the worker leaves at its end");
    let lived = started.elapsed();
    assert!(exit.success(), "exit 0 at its end: {exit:?}");
    assert!(lived < Duration::from_secs(14), "it left before its end, after {lived:?}");
    let log = c.workers[short].log_text();
    assert!(log.contains("the worker's end is near: leaving"), "{log}");
    c.add_worker(1);
    c.wait_done(&id, SWEEP_TIMEOUT);
    assert_eq!(c.status(&id).shards_failed, 0);
    assert_matches_reference(&c, &id, SPEC_MEDIUM);
}

/// A worker under a cgroup memory limit budgets by that limit less its
/// margin, never by the host's available memory; its log names the file
/// the limit came from, and it advertises the budget and its labels when it
/// registers (issue 35: a worker limited to 300M read the host's 24 GB,
/// took a 687 MiB board and was OOM-killed).
#[test]
fn a_worker_in_a_memory_limited_cgroup_budgets_by_its_limit() {
    let limit: u64 = 300 << 20;
    let cgroup = match ksweep_e2e::cgroup::MemoryCgroup::create(limit) {
        Ok(cgroup) => cgroup,
        Err(why) => {
            eprintln!("skipped: cannot make a cgroup with a memory limit here: {why}");
            return;
        }
    };
    let mut c = Cluster::start(&[]);
    let w = c.add_worker_in_cgroup(1, &cgroup.procs(), &["--label", "site=lab", "--label", "bigmem"]);
    let budget = limit - ksweep_worker::resources::margin(limit);

    let log = c.workers[w].wait_for_log(CLIENT_TIMEOUT, |l| l.contains("worker resources"));
    let line = log.lines().find(|l| l.contains("memory budget")).expect("a memory budget line");
    assert!(line.contains(&format!("memory_bytes={budget} ")), "the cgroup's limit less the margin: {line}");
    assert!(line.contains(&cgroup.limit_file.display().to_string()), "named by its file: {line}");
    let registered = c.wait_for_log(CLIENT_TIMEOUT, |l| l.contains("worker registered"));
    let registered = registered.lines().find(|l| l.contains("worker registered")).expect("a registration line");
    assert!(registered.contains(&format!("memory_bytes=Some({budget})")), "advertised: {registered}");
    assert!(registered.contains(r#"labels={"bigmem", "site=lab"}"#), "advertised: {registered}");
    drop(c); // the worker leaves the cgroup before it is removed
}

/// Issue 34's hog: `bt` from six starts of (3,2) 12x12 with the largest
/// budget a coordinator allows by default, about an hour a task.
const SPEC_HOG: &str = r#"
name = "e2e-hog"
seed = 5
starts = 6
methods = ["bt"]
budget = 10000000000

[[grid]]
rule = [3, 2]
dims = [2]
n = [12]
"#;

/// CPU time a process has used, in clock ticks (Linux /proc).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc/<pid>/stat");
    // After the command's name (in parentheses): utime and stime are the
    // 12th and 13th fields.
    let fields: Vec<&str> = stat.rsplit_once(')').expect("a stat line").1.split_whitespace().collect();
    fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime")
}

/// CPU ticks each worker uses over `span`.
fn cpu_over(c: &Cluster, span: Duration) -> Vec<u64> {
    let before: Vec<u64> = c.workers.iter().map(|w| cpu_ticks(w.pid())).collect();
    sleep(span);
    c.workers.iter().zip(before).map(|(w, b)| cpu_ticks(w.pid()) - b).collect()
}

/// Issue 34, a hostile neighbour: a sweep of hog tasks and a quick sweep on
/// the same two workers. The hogged worker hands back the quick shards it
/// cannot start and keeps its own shard for as long as its tasks' budget
/// says they may take, so nothing is charged a failure even past six
/// leases (the least a holder that delivers nothing keeps its shards, for
/// tasks short at their worst); the quick sweep ends done,
/// equal to the embedded run; cancelling the hog frees its worker within a
/// second.
#[test]
fn a_hog_sweep_neither_fails_nor_starves_its_neighbour_and_cancel_frees_the_workers() {
    reference(SPEC_TINY);
    let mut c = Cluster::start(&["--lease-secs", "1"]);
    c.add_worker(1);
    c.add_worker(1);
    c.wait_for_log(Duration::from_secs(30), |log| log.matches("worker registered").count() == 2);
    let hog = c.submit(&c.write("hog.toml", SPEC_HOG));
    let quick = c.submit(&c.write("quick.toml", SPEC_TINY));
    let began = Instant::now();
    c.wait_done(&quick, Duration::from_secs(60));
    assert_matches_reference(&c, &quick, SPEC_TINY);
    eprintln!("the quick sweep was done {:?} after it was submitted, beside the hog", began.elapsed());

    // Past six leases of a hog that delivers nothing: not one failed attempt.
    sleep(Duration::from_secs(6).saturating_sub(began.elapsed()));
    // A whole core is 100 ticks a second; the machine may be shared.
    let busy = cpu_over(&c, Duration::from_secs(2));
    assert!(busy.iter().any(|&t| t >= 10), "a worker should be busy on the hog: {busy:?} ticks in 2 s");
    let log = c.coordinator.as_ref().expect("coordinator").log_text();
    assert!(!log.contains("failed attempt"), "nothing may be charged a failure:\n{}", tail(&log, 40));
    let s = c.status(&hog);
    assert_eq!((s.state.as_str(), s.tasks_done, s.shards_failed), ("running", 0, 0), "{s:?}");

    let out = c.client(&["cancel", &hog]).ok();
    assert!(out.stdout.contains("state           cancelled"), "cancel printed:\n{}", out.stdout);
    sleep(Duration::from_secs(1));
    let idle = cpu_over(&c, Duration::from_secs(1));
    assert!(idle.iter().all(|&t| t <= 5), "the workers should be idle a second after the cancel: {idle:?} ticks");
    assert!(c.workers.iter_mut().all(|w| w.try_exit().is_none()), "the workers live on");
    assert_eq!(c.status(&hog).tasks_done, 0, "a cancelled task reports nothing");
}
