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
/// done at about an eighth of the work. Then the share of the work shown
/// must be near that eighth, and the ETA, from estimated work, within a
/// factor of 2 of the time the sweep really took to end. The sweep runs
/// long enough (about 10 s past half its tasks) that a poll's delay and a
/// client's start-up are small beside the time measured.
#[test]
fn the_eta_at_half_the_tasks_counts_work_not_tasks() {
    let mut c = Cluster::start(&[]);
    let spec = c.write(
        "spread.toml",
        "name = \"spread\"\nseed = 1\nstarts = 150\nmethods = [\"w\"]\n\
         [[grid]]\nrule = [2, 1]\ndims = [2]\nn_range = { from = 10, to = 1000, step = 10 }\n",
    );
    let id = c.submit(&spec);
    c.add_worker(1);
    let (half, eta, work) = loop {
        let out = c.client(&["status", &id]).ok().stdout;
        let s = parse_statuses(&out).remove(0);
        assert_eq!(s.state, "running", "the sweep ended before half its tasks were seen:\n{out}");
        if 2 * s.tasks_done >= s.tasks_total {
            if let (Some(eta), Some(work)) = (eta_secs(&out), work_percent(&out)) {
                break (std::time::Instant::now(), eta, work);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // 12.5 % at exactly half the tasks (cells N^2 per task); a poll late, a little more.
    assert!((8.0..25.0).contains(&work), "{work} % of the work at half the tasks");
    c.wait_done(&id, Duration::from_secs(600));
    let truth = half.elapsed().as_secs_f64();
    assert!(eta >= truth / 2.0 && eta <= truth * 2.0, "ETA {eta} s at half the tasks; it took {truth:.1} s");
}

/// The share of the work done in `ksweep status`'s work line (`work
/// 12.4 % ...`); None where the work is not estimated.
fn work_percent(status: &str) -> Option<f64> {
    let work = status.lines().find_map(|l| l.strip_prefix("work "))?;
    work.split_whitespace().next()?.parse().ok()
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

/// The ids of `ksweep status` (one line per sweep), in its order.
fn listed_ids(status: &str) -> Vec<String> {
    status.lines().skip(1).filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect()
}

/// Two sweeps of one name (quick.toml, then a widened copy): naming them by
/// it, or naming none in a file of two, failed without saying which there
/// are. The error lists them (short id, name, state, tasks, created),
/// offline and through a coordinator alike.
#[test]
fn sweeps_of_one_name_are_listed_to_choose_from() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tiny.toml"), SPEC_TINY).unwrap();
    std::fs::write(dir.path().join("wide.toml"), SPEC_TINY.replace("n = [5, 6, 7, 8]", "n = [5, 6, 7, 8, 9]")).unwrap();
    for spec in ["tiny.toml", "wide.toml"] {
        run_ksweep_in(dir.path(), &["run", spec, "--db", "t.db"], LIMIT).ok();
    }
    let ids = listed_ids(&run_ksweep_in(dir.path(), &["status", "--db", "t.db"], LIMIT).ok().stdout);
    assert_eq!(ids.len(), 2, "{ids:?}");
    let line = |id: &str, tasks: &str| format!("  {}  e2e-tiny  done   {tasks}  20", &id[..8]);
    let (tiny, wide) = (line(&ids[0], "48/48"), line(&ids[1], "60/60"));
    run_ksweep_in(dir.path(), &["table", "e2e-tiny", "--db", "t.db"], LIMIT).fails_with(&[
        "\"e2e-tiny\" names 2 sweeps; name one by its id",
        "ID        NAME      STATE  TASKS  CREATED",
        &tiny,
        &wide,
    ]);
    run_ksweep_in(dir.path(), &["export", "--db", "t.db"], LIMIT).fails_with(&[
        "the database holds 2 sweeps; name one",
        &tiny,
        &wide,
    ]);

    // Through a coordinator: two sweeps no worker runs yet.
    let c = Cluster::start(&[]);
    let tiny = c.submit(&c.write("tiny.toml", SPEC_TINY));
    let wide = c.submit(&c.write("wide.toml", &SPEC_TINY.replace("n = [5, 6, 7, 8]", "n = [5, 6, 7, 8, 9]")));
    c.client(&["table", "e2e-tiny"]).fails_with(&[
        "\"e2e-tiny\" names 2 sweeps",
        &format!("  {}  e2e-tiny  running  0/48  ", &tiny[..8]),
        &format!("  {}  e2e-tiny  running  0/60  ", &wide[..8]),
    ]);
    c.client(&["watch"]).fails_with(&["the database holds 2 sweeps", &tiny[..8], &wide[..8]]);
}

/// `rename` tells two sweeps of one name apart (the id stays); `rm` asks
/// first (off a terminal it wants --yes), refuses a running sweep, and
/// keeps the results another sweep has: the widened sweep's tables are
/// unchanged after its narrower twin, whose results it took, is removed.
#[test]
fn sweeps_are_renamed_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let (d, wide_spec) = (dir.path(), SPEC_TINY.replace("n = [5, 6, 7, 8]", "n = [5, 6, 7, 8, 9]"));
    std::fs::write(d.join("tiny.toml"), SPEC_TINY).unwrap();
    std::fs::write(d.join("wide.toml"), &wide_spec).unwrap();
    for spec in ["tiny.toml", "wide.toml"] {
        run_ksweep_in(d, &["run", spec, "--db", "t.db"], LIMIT).ok();
    }
    let ids = listed_ids(&run_ksweep_in(d, &["status", "--db", "t.db"], LIMIT).ok().stdout);
    let (tiny, wide) = (&ids[0], &ids[1]);
    let renamed = run_ksweep_in(d, &["rename", &wide[..8], "e2e-wide", "--db", "t.db"], LIMIT).ok();
    assert_eq!(renamed.stdout, format!("renamed sweep {} from \"e2e-tiny\" to \"e2e-wide\"\n", &wide[..8]));
    run_ksweep_in(d, &["rename", "e2e-wide", "a\tb", "--db", "t.db"], LIMIT).fails_with(&["name: must be"]);
    let table = |d: &std::path::Path| {
        run_ksweep_in(d, &["table", "e2e-wide", "--db", "t.db", "--format", "csv"], LIMIT).ok().stdout
    };
    let before = table(d);
    run_ksweep_in(d, &["rm", "e2e-tiny", "--db", "t.db"], LIMIT)
        .fails_with(&["not removing sweep", "stdin is not a terminal; give --yes"]);
    let removed = run_ksweep_in(d, &["rm", "e2e-tiny", "--db", "t.db", "--yes"], LIMIT).ok();
    assert_eq!(
        removed.stdout,
        format!("removed sweep {} (e2e-tiny): 0 results deleted, 48 kept (other sweeps have them)\n", &tiny[..8])
    );
    assert_eq!(table(d), before, "the kept results are the wide sweep's");
    assert_eq!(
        listed_ids(&run_ksweep_in(d, &["status", "--db", "t.db"], LIMIT).ok().stdout),
        std::slice::from_ref(wide)
    );
    let gone = run_ksweep_in(d, &["rm", "e2e-wide", "--db", "t.db", "--yes"], LIMIT).ok();
    assert!(gone.stdout.contains("(e2e-wide): 60 results deleted\n"), "{}", gone.stdout);

    // Through a coordinator: a running sweep is refused, a cancelled one goes.
    let c = Cluster::start(&[]);
    let id = c.submit(&c.write("tiny.toml", SPEC_TINY));
    c.client(&["rm", &id, "--yes"]).fails_with(&["is running; cancel it first"]);
    c.client(&["rename", &id, "renamed"]).ok();
    c.client(&["cancel", "renamed"]).ok();
    c.client(&["rm", "renamed"]).fails_with(&["give --yes"]);
    let removed = c.client(&["rm", "renamed", "--yes"]).ok();
    assert_eq!(removed.stdout, format!("removed sweep {} (renamed): 0 results deleted\n", &id[..8]));
    assert_eq!(c.client(&["status"]).ok().stdout, "no sweeps\n");
}

/// `diff A B`: per (configuration, method) both have, the accuracy of each,
/// the difference and the starts whose flags differ. Two seeds of `wr` on
/// the same boards differ somewhere; `w`, deterministic, never does.
#[test]
fn two_sweeps_are_compared_per_configuration_and_method() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = SPEC_TINY.replace("[\"w\", \"aw+\"]", "[\"w\", \"wr\"]").replace("starts = 6", "starts = 20");
    std::fs::write(d.join("a.toml"), &spec).unwrap();
    std::fs::write(
        d.join("b.toml"),
        spec.replace("seed = 11", "seed = 12").replace("n = [5, 6, 7, 8]", "n = [6, 7, 8, 9]"),
    )
    .unwrap();
    for spec in ["a.toml", "b.toml"] {
        run_ksweep_in(d, &["run", spec, "--db", "t.db"], LIMIT).ok();
    }
    let ids = listed_ids(&run_ksweep_in(d, &["status", "--db", "t.db"], LIMIT).ok().stdout);
    let diff = |format: &str| {
        run_ksweep_in(d, &["diff", &ids[0], &ids[1], "--db", "t.db", "--format", format], LIMIT).ok().stdout
    };
    let text = diff("text");
    assert!(text.contains("6 (configuration, method) pairs in both; 2 only in A, 2 only in B"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&diff("json")).unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for row in rows {
        let differ = row["differing"].as_array().unwrap().len();
        match row["method"].as_str().unwrap() {
            "w" => assert_eq!(differ, 0, "w is deterministic: {row}"),
            _ => assert!(row["both_ran"].as_u64().unwrap() > 0, "{row}"),
        }
        let (a, b) = (row["a_accuracy"].as_f64().unwrap(), row["b_accuracy"].as_f64().unwrap());
        assert!((row["difference"].as_f64().unwrap() - (b - a)).abs() < 1e-9, "{row}");
    }
    let differing: usize = rows.iter().map(|r| r["differing"].as_array().unwrap().len()).sum();
    let csv = diff("csv");
    assert_eq!(csv.lines().count(), 7, "{csv}");
    assert!(csv.starts_with("moves,board,dims,method,a_tasks,"), "{csv}");
    if differing > 0 {
        assert!(text.contains("starts whose flags differ (A -> B):"), "{text}");
    }
}

/// `diff` through a coordinator: the specs come from each sweep's status,
/// and the list shows both seeds of one name.
#[test]
fn two_sweeps_of_one_name_are_compared_through_a_coordinator() {
    let mut c = Cluster::start(&[]);
    let a = c.submit(&c.write("a.toml", SPEC_TINY));
    let b = c.submit(&c.write("b.toml", &SPEC_TINY.replace("seed = 11", "seed = 12")));
    c.add_worker(1);
    c.wait_done(&a, LIMIT);
    c.wait_done(&b, LIMIT);
    let list = c.client(&["status"]).ok().stdout;
    let seeds: Vec<&str> = list.lines().skip(1).filter_map(|l| l.split_whitespace().nth(2)).collect();
    assert_eq!(seeds, ["11", "12"], "{list}");
    let diff = c.client(&["diff", &a, &b, "--only-differences"]).ok().stdout;
    assert!(diff.contains("specs differ (A -> B):\n  seed: 11 -> 12\n"), "{diff}");
    assert!(diff.contains("8 (configuration, method) pairs in both; 0 only in A, 0 only in B"), "{diff}");
    assert!(diff.contains("\n8 pairs: "), "{diff}");
}

/// `plot --help` described its `--by` values as tables (`One table per
/// (moves, method): rows N, columns D`) and `--kind` not at all.
#[test]
fn plot_help_describes_plots() {
    let dir = tempfile::tempdir().unwrap();
    let help = run_ksweep(dir.path(), &["plot", "--help"], LIMIT).ok().stdout;
    for needle in ["What to draw", "Accuracy against N with 95 % Wilson bands", "a panel per (rule, D)", "image format"]
    {
        assert!(help.contains(needle), "plot --help lacks {needle:?}:\n{help}");
    }
    assert!(!help.contains("table"), "plot --help speaks of tables:\n{help}");
}

/// `cancel` of a sweep that had ended said it cancelled it, and that
/// `resume` would run the rest: it says there was nothing to cancel.
#[test]
fn cancel_says_what_happened() {
    let mut c = Cluster::start(&[]);
    let id = c.submit(&c.write("tiny.toml", SPEC_TINY));
    c.add_worker(1);
    c.wait_done(&id, LIMIT);
    let out = c.client(&["cancel", &id]).ok().stdout;
    assert!(out.starts_with(&format!("sweep {id} (e2e-tiny) is done: nothing to cancel\n")), "{out}");
}

/// `exists` answered from theorems only: a board `solve` refuted from every
/// start stayed `unknown` (issue 39). The database's results now prove it
/// impossible there and in the table and status; a board where a method
/// found a tour exists, with the tour as evidence.
#[test]
fn exists_answers_from_the_stored_proofs() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, db) = (dir.path().join("facts.toml"), dir.path().join("f.db"));
    std::fs::write(
        &spec,
        "name = \"facts\"\nseed = 3\nstarts = 64\nmethods = [\"aw+\", \"solve\"]\n\
         [[grid]]\nrule = [3, 2]\ndims = [2]\nn = [6, 10]\n",
    )
    .unwrap();
    let (spec, db) = (spec.to_str().unwrap(), db.to_str().unwrap());
    run_ksweep(dir.path(), &["run", spec, "--db", db], LIMIT).ok();
    let exists = |shape: &str, db: Option<&str>| {
        // No search, the atlas set aside: what the theorems and the
        // stored results say.
        let mut args = vec!["exists", "--rule", "3,2", "--shape", shape, "--budget", "0", "--no-atlas"];
        args.extend(db.map(|db| ["--db", db]).into_iter().flatten());
        run_ksweep(dir.path(), &args, LIMIT).ok().stdout
    };
    assert!(exists("6x6", None).contains("open    unknown: no theorem"), "{}", exists("6x6", None));
    let six = exists("6x6", Some(db));
    assert!(
        six.contains("open    impossible: stored results: no open tour from all 36 starts, proven by `solve v1 budget"),
        "{six}"
    );
    let ten = exists("10x10", Some(db));
    assert!(ten.contains("open    exists: stored results: a tour from ("), "{ten}");
    assert!(ten.contains("closed  unknown"), "an open-tour method's tour proves no closed one: {ten}");
    let atlas = run_ksweep(dir.path(), &["exists", "--rule", "3,2", "--shape", "6x6", "--db", db], LIMIT).ok().stdout;
    assert!(atlas.contains("open    impossible: the atlas"), "the atlas comes before stored results: {atlas}");
    let five = run_ksweep(dir.path(), &["exists", "--rule", "2,1", "--shape", "5x5", "--db", db], LIMIT).ok().stdout;
    assert!(five.contains("closed  impossible: Schwenk"), "the theorems come first: {five}");
    let missing = run_ksweep(dir.path(), &["exists", "--rule", "3,2", "--shape", "6x6", "--db", "nope.db"], LIMIT)
        .fails_with(&["--db", "nope.db", "does not exist"]);
    assert!(missing.stdout.is_empty(), "a bad --db prints nothing but its error: {}", missing.stdout);

    let table = run_ksweep(dir.path(), &["table", "--db", db, "--format", "json"], LIMIT).ok();
    let rows: serde_json::Value = serde_json::from_str(&table.stdout).unwrap();
    for row in rows.as_array().unwrap() {
        let (shape, open) = (row["shape"].as_str().unwrap(), row["open_tour"].as_str().unwrap());
        match shape {
            "6x6" => assert!(open == "impossible" && row["accuracy_possible"].is_null(), "{row}"),
            _ => assert_eq!(open, "exists", "{row}"),
        }
    }
    let text = run_ksweep(dir.path(), &["table", "--db", db], LIMIT).ok().stdout;
    let six_row = text.lines().find(|l| l.contains("6x6") || l.trim_start().starts_with("6 ")).unwrap_or("");
    assert!(six_row.contains('*'), "a refuted board is marked as a proven one:\n{text}");
    let status = run_ksweep(dir.path(), &["status", "facts", "--db", db], LIMIT).ok().stdout;
    assert!(status.contains("configurations  2 (1 impossible)"), "{status}");
}
