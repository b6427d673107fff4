//! What a researcher meets in the first hour (issue 39), through the real
//! binary: each check is one thing a new user tripped over.

use std::time::Duration;

use ksweep_e2e::*;

const LIMIT: Duration = Duration::from_secs(120);

/// `--rule` with a value the sweep lacks printed an empty table and
/// exited 0; it is an error naming the rules the sweep has.
#[test]
fn an_unknown_rule_is_an_error_that_lists_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, db) = (dir.path().join("tiny.toml"), dir.path().join("t.db"));
    std::fs::write(&spec, SPEC_TINY).unwrap();
    let (spec, db) = (spec.to_str().unwrap(), db.to_str().unwrap());
    let run = run_ksweep(dir.path(), &["run", spec, "--db", db], LIMIT).ok();
    // No cryptic `· -` where no rate was measured.
    assert!(run.stderr.contains("(100.0 %) · done\n") && !run.stderr.contains("· -"), "{}", run.stderr);
    let table = run_ksweep(dir.path(), &["table", "--db", db, "--rule", "2,1"], LIMIT).ok();
    assert!(table.stdout.contains("100.0") || table.stdout.contains("0.0"), "{}", table.stdout);
    run_ksweep(dir.path(), &["table", "--db", db, "--rule", "3,2"], LIMIT).fails_with(&[
        "--rule 3,2",
        "no such moves",
        "it has 2,1",
    ]);
}

/// `health` said nothing when the coordinator served; `status` with no
/// sweeps printed "no sweeps" and then an empty table's header.
#[test]
fn health_says_serving_and_an_empty_coordinator_has_no_table_header() {
    let c = Cluster::start(&[]);
    assert_eq!(c.client(&["health"]).ok().stdout, "coordinator serving\n");
    assert_eq!(c.client(&["status"]).ok().stdout, "no sweeps\n");
}

/// `watch` against an address no coordinator ever answered retried for
/// ever (as it rightly does for one that went away): it gives up soon.
#[test]
fn watch_gives_up_on_a_coordinator_it_never_reached() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    run_ksweep(dir.path(), &["watch", "x", "--coordinator", "http://127.0.0.1:1"], Duration::from_secs(60))
        .fails_with(&["cannot reach the coordinator at http://127.0.0.1:1"]);
    assert!(started.elapsed() < Duration::from_secs(40), "{:?}", started.elapsed());
}

/// Connection mistakes say what to do: an address without a scheme, an
/// https:// URL for a plain coordinator, a wrong token.
#[test]
fn connection_mistakes_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    run_ksweep(dir.path(), &["status", "--coordinator", "localhost:50051"], LIMIT)
        .fails_with(&["has no scheme: did you mean http://localhost:50051"]);
    let c = Cluster::start_with_token(&[], Some("the-token"));
    let https = c.url().replacen("http://", "https://", 1);
    c.ksweep(&["status", "--coordinator", &https, "--token", "the-token"])
        .fails_with(&["the coordinator does not speak TLS; use http://"]);
    c.ksweep(&["status", "--coordinator", &c.url(), "--token", "wrong"]).fails_with(&[
        "missing or wrong token",
        "--token-file",
        "KSWEEP_TOKEN",
    ]);
}

/// Every command that names a sweep says, in its help, how to name one.
#[test]
fn every_sweep_argument_is_described_in_help() {
    let dir = tempfile::tempdir().unwrap();
    for command in ["status", "watch", "table", "export", "plot", "report"] {
        let help = run_ksweep(dir.path(), &[command, "--help"], LIMIT).ok().stdout;
        // `[ID]  text`, or `[ID]` with the text on the next line (long help).
        let mut lines = help.lines().skip_while(|l| !l.trim_start().starts_with("[ID]"));
        let first = lines.next().unwrap_or_else(|| panic!("{command} --help has no [ID]:\n{help}"));
        let same_line = first.trim_start().trim_start_matches("[ID]").trim();
        let description = if same_line.is_empty() { lines.next().unwrap_or_default() } else { same_line };
        assert!(description.contains("The sweep"), "{command} --help leaves [ID] undescribed:\n{help}");
    }
}

/// After `ksweep run` the database file holds the results itself: copying
/// it alone (without `-wal`) copied an empty database.
#[test]
fn a_finished_run_leaves_its_results_in_the_database_file() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, db) = (dir.path().join("tiny.toml"), dir.path().join("t.db"));
    std::fs::write(&spec, SPEC_TINY).unwrap();
    run_ksweep(dir.path(), &["run", spec.to_str().unwrap(), "--db", db.to_str().unwrap()], LIMIT).ok();
    let copy = dir.path().join("copy.db");
    std::fs::copy(&db, &copy).unwrap();
    let table = run_ksweep(dir.path(), &["table", "--db", copy.to_str().unwrap(), "--format", "json"], LIMIT).ok();
    assert!(table.stdout.contains("\"tasks\": 6"), "the copy holds the results: {}", table.stdout);
}

/// Progress counted tasks, so a sweep whose cheap boards come first read
/// nearly done long before it was: `113375/166665 tasks · ETA 4 s` on a
/// sweep that needed 40 minutes more. N = 10..1000 on one worker thread:
/// a task's cost grows 10^4 times across the grid, and half the tasks are
/// done at about an eighth of the work. The ETA then, from estimated work,
/// must be within a factor of 2 of the time the sweep really took to end.
#[test]
fn the_eta_at_half_the_tasks_counts_work_not_tasks() {
    let mut c = Cluster::start(&[]);
    let spec = c.write(
        "spread.toml",
        "name = \"spread\"\nseed = 1\nstarts = 60\nmethods = [\"w\"]\n\
         [[grid]]\nrule = [2, 1]\ndims = [2]\nn_range = { from = 10, to = 1000, step = 10 }\n",
    );
    let id = c.submit(&spec);
    c.add_worker(1);
    let (half, eta) = loop {
        let out = c.client(&["status", &id]).ok().stdout;
        let s = parse_statuses(&out).remove(0);
        assert_eq!(s.state, "running", "the sweep ended before half its tasks were seen:\n{out}");
        if 2 * s.tasks_done >= s.tasks_total {
            if let Some(eta) = eta_secs(&out) {
                break (std::time::Instant::now(), eta);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    c.wait_done(&id, Duration::from_secs(600));
    let truth = half.elapsed().as_secs_f64();
    assert!(eta >= truth / 2.0 && eta <= truth * 2.0, "ETA {eta} s at half the tasks; it took {truth:.1} s");
}

/// The ETA in `ksweep status`'s rate line (`12 tasks/s, ETA 2 min`), in
/// seconds; None before one is measured.
fn eta_secs(status: &str) -> Option<f64> {
    let rate = status.lines().find_map(|l| l.strip_prefix("rate"))?;
    let eta = rate.split("ETA ").nth(1)?.trim();
    let mut secs = 0.0;
    let words: Vec<&str> = eta.split_whitespace().collect();
    for pair in words.chunks(2) {
        let value: f64 = pair[0].parse().ok()?;
        secs += value
            * match pair.get(1).copied()? {
                "ms" => 0.001,
                "s" => 1.0,
                "min" => 60.0,
                "h" => 3600.0,
                "d" => 86400.0,
                _ => return None,
            };
    }
    Some(secs)
}

/// `ksweep run quick.toml` on a file holding an interrupted sweep resumed
/// that one first and sat at 0 %: it runs the sweep it was given, names
/// the other, and runs it too only with `--all`.
#[test]
fn run_runs_the_named_sweep_and_names_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let (big, tiny, db) = (dir.path().join("big.toml"), dir.path().join("tiny.toml"), dir.path().join("m.db"));
    std::fs::write(
        &big,
        "name = \"big\"\nseed = 1\nstarts = 40\nmethods = [\"w\"]\n\
         [[grid]]\nrule = [2, 1]\ndims = [2]\nn_range = { from = 100, to = 2000, step = 100 }\n",
    )
    .unwrap();
    std::fs::write(&tiny, SPEC_TINY).unwrap();
    let db_arg = db.to_str().unwrap().to_string();
    // Interrupt big once it has results.
    let mut run = Proc::spawn(
        "run-big",
        dir.path(),
        &["run".into(), big.to_str().unwrap().into(), "--db".into(), db_arg.clone(), "--threads".into(), "1".into()],
    );
    let started = std::time::Instant::now();
    let stopped_at = loop {
        assert!(started.elapsed() < LIMIT, "big never stored a result");
        std::thread::sleep(Duration::from_millis(300));
        if !db.exists() {
            continue;
        }
        let out = run_ksweep(dir.path(), &["status", "--db", &db_arg, "--long"], LIMIT);
        let Some(s) = out.status.success().then(|| parse_statuses(&out.stdout)).and_then(|mut v| v.pop()) else {
            continue;
        };
        if s.tasks_done > 0 {
            run.kill();
            break run_ksweep(dir.path(), &["status", "--db", &db_arg, "--long"], LIMIT).ok().stdout;
        }
    };
    let big_done = parse_statuses(&stopped_at)[0].tasks_done;
    let tiny_run = run_ksweep(dir.path(), &["run", tiny.to_str().unwrap(), "--db", &db_arg], LIMIT).ok();
    assert!(
        tiny_run.stderr.contains("the database also holds an unfinished sweep, not run now")
            && tiny_run.stderr.contains("(big)")
            && tiny_run.stderr.contains("--all"),
        "{}",
        tiny_run.stderr
    );
    let after: Vec<Status> =
        parse_statuses(&run_ksweep(dir.path(), &["status", "--db", &db_arg, "--long"], LIMIT).ok().stdout);
    let big_after = after.iter().find(|s| s.tasks_total == 800).expect("big (800 tasks) is listed");
    assert_eq!((big_after.state.as_str(), big_after.tasks_done), ("stopped", big_done), "big was left alone");
    assert!(after.iter().any(|s| s.tasks_total != 800 && s.state == "done"), "{after:?}");
    // --all then runs big to its end after tiny (already done: resumed at once).
    let all = run_ksweep(dir.path(), &["run", tiny.to_str().unwrap(), "--db", &db_arg, "--all"], LIMIT * 5).ok();
    assert!(all.stderr.contains("resuming sweep"), "{}", all.stderr);
    let end = parse_statuses(&run_ksweep(dir.path(), &["status", "--db", &db_arg, "--long"], LIMIT).ok().stdout);
    assert!(end.iter().all(|s| s.state == "done" && s.tasks_done == s.tasks_total), "{end:?}");
}

/// A grid given as a move list was titled by the whole list in tables and
/// plots; its `label` names it there and in `--rule`, and the list itself
/// stays in the spec. An unknown `--rule` fails in `plot` as in `table`.
#[test]
fn a_grid_label_titles_tables_and_plots_and_matches_rule() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, db) = (dir.path().join("labelled.toml"), dir.path().join("l.db"));
    let list = "[2, 1], [1, 2], [-1, 2], [-2, 1], [-2, -1], [-1, -2], [1, -2], [2, -1]";
    std::fs::write(
        &spec,
        format!(
            "name = \"labelled\"\nseed = 3\nstarts = 4\nmethods = [\"w\", \"aw+\"]\n\
             [[grid]]\nmoves = [{list}]\nlabel = \"(2,1) my order\"\ndims = [2]\nn = [5, 6]\n"
        ),
    )
    .unwrap();
    let (spec, db) = (spec.to_str().unwrap(), db.to_str().unwrap());
    run_ksweep(dir.path(), &["run", spec, "--db", db], LIMIT).ok();
    let table = run_ksweep(dir.path(), &["table", "--db", db, "--rule", "(2,1) my order"], LIMIT).ok();
    assert!(table.stdout.contains("moves (2,1) my order, 2D") && !table.stdout.contains("-1,-2"), "{}", table.stdout);
    let plot = run_ksweep(dir.path(), &["plot", "--db", db, "--rule", "(2,1) my order"], LIMIT).ok();
    assert!(plot.stdout.contains("(2,1) my order 2D") && !plot.stdout.contains("-1,-2"), "{}", plot.stdout);
    run_ksweep(dir.path(), &["plot", "--db", db, "--rule", "2,1"], LIMIT).fails_with(&[
        "--rule 2,1",
        "no such moves",
        "it has (2,1) my order",
    ]);
}
