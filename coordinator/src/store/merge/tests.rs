//! The merge's tests: databases computed apart, joined, refused when
//! forged; kept apart from the code they check, which they outgrew.

use sweep::{Planner, Sweep};
use tour::Outcome;

use super::*;
use crate::codes::SweepState;
use crate::error::Error;
use crate::ids::{SweepKey, WorkerId};
use crate::model::ResultRecord;
use crate::store::{Fact, Facts};

/// A sweep of boards `n`, methods W and AW, four starts per board.
fn spec(name: &str, n: &str) -> Sweep {
    spec_of(name, n, "[\"w\", \"aw\"]")
}

/// A sweep of boards `n`, `methods`, four starts per board.
fn spec_of(name: &str, n: &str, methods: &str) -> Sweep {
    Sweep::parse(&format!(
        "name = \"{name}\"\nseed = 5\nstarts = 4\nmethods = {methods}\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = {n}"
    ))
    .unwrap()
}

/// Both halves' sweep, 16 tasks; `u` shares its n = 6 boards.
fn s() -> Sweep {
    spec("s", "[5, 6]")
}

fn u() -> Sweep {
    spec("u", "[6, 7]")
}

/// A task's result as this test's engine gives it: the flags depend on
/// the cell alone, so every database agrees unless `outcome` says not.
/// A failed Warnsdorff method made all its walks, as the engine's do.
fn result(
    key: SweepKey,
    sweep: &Sweep,
    config: u32,
    index: usize,
    cell: u64,
    method: u32,
    outcome: Outcome,
) -> ResultRecord {
    let success = outcome == Outcome::Tour;
    let (entry, m) = (&sweep.configurations()[config as usize], sweep.methods()[method as usize]);
    let walks = m.max_attempts(entry.move_count() as usize) as u32;
    ResultRecord {
        sweep: key,
        config,
        start_index: index as u64,
        method,
        start_cell: cell,
        success,
        attempts: if m.is_warnsdorff() && !success { walks } else { 1 },
        visited: if success { sweep.configurations()[config as usize].cells() } else { 2 + cell % 3 },
        micros: 9,
        worker: WorkerId(1),
        outcome,
        computed_by: key,
    }
}

fn agreed(cell: u64) -> Outcome {
    if cell.is_multiple_of(2) {
        Outcome::Tour
    } else {
        Outcome::GaveUp
    }
}

/// Stores `sweep` (taking what the store holds of it) and the results
/// of its configurations `configs`, with outcomes from `outcome`.
fn run(store: &mut Store, sweep: &Sweep, configs: &[u32], outcome: impl Fn(u64) -> Outcome) -> SweepKey {
    let (record, _) = store.insert_sweep(sweep).unwrap();
    let planner = Planner::new(sweep);
    let mut rows = Vec::new();
    for &config in configs {
        for (i, &cell) in planner.starts(config).iter().enumerate() {
            rows.extend((0..2).map(|m| result(record.key, sweep, config, i, cell, m, outcome(cell))));
        }
    }
    store.record(&rows).unwrap();
    record.key
}

/// A database file with one worker; `fill` runs sweeps in it.
fn file(dir: &Path, name: &str, fill: impl FnOnce(&mut Store)) -> PathBuf {
    let path = dir.join(name);
    let mut store = Store::open(&path).unwrap();
    store.register_worker(name, 1, &Default::default()).unwrap();
    fill(&mut store);
    path
}

fn count(store: &Store, sql: &str) -> i64 {
    store.conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn halves_computed_apart_join_into_what_one_place_computes() {
    let dir = tempfile::tempdir().unwrap();
    // The laptop ran half of s (a shard of it left open) and all of u;
    // the cluster the other half of s (u's n = 6 tasks, so agreeing)
    // and began w, a sweep only it has, cutting one shard before it
    // stopped.
    let laptop = file(dir.path(), "laptop.db", |store| {
        run(store, &s(), &[0], agreed);
        run(store, &u(), &[0, 1], agreed);
        store
            .conn
            .execute("INSERT INTO shards (id, sweep, config, start_lo, start_hi, state) VALUES (1, 1, 0, 0, 4, 0)", [])
            .unwrap();
    });
    let w = spec("w", "[8]");
    let (mut cluster_first, mut cluster_finished) = (0, 0);
    let cluster = file(dir.path(), "cluster.db", |store| {
        let key = run(store, &s(), &[1], agreed);
        store.set_state(key, SweepState::Cancelled, None).unwrap();
        let record = store.record_of(key).unwrap();
        (cluster_first, cluster_finished) = (record.first_result_ms.unwrap(), record.finished_ms.unwrap());
        let key = run(store, &w, &[], agreed);
        store
            .conn
            .execute(
                "INSERT INTO shards (id, sweep, config, start_lo, start_hi, state) VALUES (1, ?1, 0, 0, 2, 0)",
                [key.0],
            )
            .unwrap();
    });
    let whole = file(dir.path(), "whole.db", |store| {
        run(store, &s(), &[0, 1], agreed);
        run(store, &u(), &[1], agreed);
    });

    let mut merged = Store::open(&dir.path().join("merged.db")).unwrap();
    let a = merged.import(&laptop).unwrap();
    assert_eq!((a.sweeps_new, a.sweeps_joined, a.tasks_new, a.tasks_agreeing, a.workers), (2, 0, 24, 0, 1));
    let laptop_first = merged.resolve(Some("s")).unwrap().first_result_ms.unwrap();
    let b = merged.import(&cluster).unwrap();
    assert_eq!((b.sweeps_new, b.sweeps_joined, b.workers), (1, 1, 1), "{b:?}");
    assert_eq!((b.tasks_new, b.tasks_agreeing, b.tasks_conflicting), (0, 8, 0), "u had s's other half: {b:?}");
    assert!(b.conflicts.is_empty());
    assert_eq!(count(&merged, "SELECT COUNT(*) FROM tasks"), 24, "each task stored once");
    assert_eq!(count(&merged, "SELECT COUNT(*) FROM workers"), 2);

    let joined = merged.resolve(Some("s")).unwrap();
    assert_eq!((joined.tasks_done, joined.tasks_total, joined.state), (16, 16, SweepState::Done));
    assert_eq!(joined.finished_ms, Some(cluster_finished), "finished when the later input finished it");
    assert_eq!(joined.first_result_ms, Some(laptop_first.min(cluster_first)));
    let started = merged.resolve(Some("w")).unwrap();
    assert_eq!((started.state, started.tasks_done), (SweepState::Running, 0), "an unfinished sweep resumes");
    let shards: Vec<(i64, i64, i64)> = merged
        .conn
        .prepare("SELECT id, sweep, state FROM shards ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(shards, vec![(1, joined.key.0, 1), (2, started.key.0, 0)], "shard ids stay unique");

    let reference = Store::open_read_only(&whole).unwrap();
    for sweep in [s(), u()] {
        let rows = |store: &Store| store.aggregates(&store.resolve(Some(sweep.name())).unwrap(), &sweep).unwrap();
        assert_eq!(rows(&merged), rows(&reference), "{}: the same tables as one place computes", sweep.name());
    }
    let u_record = merged.resolve(Some("u")).unwrap();
    assert_eq!((u_record.tasks_done, u_record.successes), (16, reference.resolve(Some("u")).unwrap().successes));

    let again = merged.import(&cluster).unwrap();
    assert_eq!((again.sweeps_joined, again.tasks_new, again.tasks_agreeing), (2, 0, 8), "importing twice adds nothing");
    assert_eq!(count(&merged, "SELECT COUNT(*) FROM sweep_tasks"), 16 + 16);
}

/// Refutations computed apart prove together what neither input does:
/// the merged file derives the fact from its whole set of results.
#[test]
fn refutations_from_two_inputs_prove_what_neither_proves_alone() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = Sweep::parse(
        // (4,3) 10x10 has no tour (the atlas), so the facts agree with it.
        "name = \"f\"\nseed = 5\nstarts = 100\nmethods = [\"solve\"]\n[[grid]]\nrule = [4, 3]\ndims = [2]\nn = [10]",
    )
    .unwrap();
    let c = sweep.configurations()[0].configuration();
    let key = sweep::board_moves(c.board().sides(), c.moves());
    let starts = Planner::new(&sweep).starts(0).to_vec();
    assert_eq!(starts.len(), 100, "every cell a start");
    // Each input refutes half of the starts with `solve`.
    let half = |lo: usize| {
        let (sweep, starts) = (&sweep, &starts);
        move |store: &mut Store| {
            let (record, _) = store.insert_sweep(sweep).unwrap();
            let rows: Vec<_> =
                (lo..lo + 50).map(|i| result(record.key, sweep, 0, i, starts[i], 0, Outcome::NoTour)).collect();
            store.record(&rows).unwrap();
        }
    };
    let first = file(dir.path(), "first.db", half(0));
    let second = file(dir.path(), "second.db", half(50));
    for input in [&first, &second] {
        assert_eq!(Store::open_read_only(input).unwrap().facts(&key).unwrap(), Facts::default(), "half proves nothing");
    }
    let mut merged = Store::open(&dir.path().join("merged.db")).unwrap();
    merged.import(&first).unwrap();
    assert_eq!(merged.facts(&key).unwrap(), Facts::default());
    merged.import(&second).unwrap();
    let facts = merged.facts(&key).unwrap();
    match &facts.open {
        Some(Fact::Impossible(why)) => assert!(why.contains("from all 100 starts"), "{why}"),
        other => panic!("no open tour is proven by the two halves together: {other:?}"),
    }
    assert!(matches!(facts.closed, Some(Fact::Impossible(_))), "no open tour, so no closed one: {facts:?}");
}

#[test]
fn a_disagreement_is_listed_and_the_earlier_result_kept() {
    let dir = tempfile::tempdir().unwrap();
    // Methods that may prove there is no tour (a heuristic's no-tour
    // would be refused: `forged_rows_are_refused_naming_them`).
    let s = spec_of("s", "[5, 6]", "[\"solve\", \"bt\"]");
    let mine = file(dir.path(), "mine.db", |store| {
        run(store, &s, &[0], |_| Outcome::GaveUp);
    });
    // Theirs proves there is no tour where mine gave up: the flags
    // agree but for the outcome, which is a conflict all the same.
    let theirs = file(dir.path(), "theirs.db", |store| {
        run(store, &s, &[0], |cell| if cell.is_multiple_of(3) { Outcome::NoTour } else { Outcome::GaveUp });
    });
    let mut merged = Store::open(&dir.path().join("merged.db")).unwrap();
    merged.import(&mine).unwrap();
    let b = merged.import(&theirs).unwrap();
    assert!(b.tasks_conflicting > 0, "{b:?}");
    assert_eq!(b.tasks_conflicting + b.tasks_agreeing, 8);
    assert!(
        b.conflicts[0].contains("kept gave-up") && b.conflicts[0].contains("this one has no-tour"),
        "{:?}",
        b.conflicts
    );
    assert!(b.conflicts[0].contains("on 5x5 rule"), "{:?}", b.conflicts);
    let listed = count(&merged, "SELECT COUNT(*) FROM conflicts WHERE outcome = 2 AND worker = 2");
    assert_eq!(listed as u64, b.tasks_conflicting, "each listed with their flags and their worker");
    assert_eq!(count(&merged, "SELECT COUNT(*) FROM tasks WHERE outcome != 3"), 0, "the first database's results stay");
}

#[test]
fn an_id_taken_by_another_spec_imports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mine = file(dir.path(), "mine.db", |store| {
        run(store, &s(), &[0], agreed);
    });
    let other = file(dir.path(), "other.db", |store| {
        run(store, &s(), &[1], agreed);
        run(store, &u(), &[0], agreed);
        store.conn.execute("UPDATE sweeps SET spec = spec || '# another' WHERE name = 's'", []).unwrap();
    });
    let mut merged = Store::open(&dir.path().join("merged.db")).unwrap();
    merged.import(&mine).unwrap();
    let err = merged.import(&other).unwrap_err();
    assert!(matches!(err, Error::IdCollision(_)), "{err}");
    assert_eq!(count(&merged, "SELECT COUNT(*) FROM sweeps"), 1, "all or nothing");
    assert_eq!(count(&merged, "SELECT COUNT(*) FROM tasks"), 8);
    assert_eq!(count(&merged, "SELECT COUNT(*) FROM workers"), 1);
    assert_eq!(count(&merged, "SELECT COUNT(*) FROM sweep_tasks"), 8);
}
/// What a merged database holds, table by table.
fn contents(store: &Store) -> Vec<i64> {
    ["sweeps", "shards", "workers", "configs", "methods", "tasks", "sweep_tasks", "conflicts", "facts"]
        .iter()
        .map(|table| count(store, &format!("SELECT COUNT(*) FROM {table}")))
        .collect()
}

/// A database edited to claim what no worker could have reported is
/// refused whole, naming the row (sweep, identities, start cell) and
/// why: the checks a coordinator applies to a worker's results. What
/// was merged before it stays exactly as it was.
#[test]
fn forged_rows_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let clean = file(dir.path(), "clean.db", |store| {
        run(store, &u(), &[0, 1], agreed);
    });
    let sweep = s();
    let starts = Planner::new(&sweep).starts(1);
    let (first, stray) = (starts[0], (0..36).find(|c| !starts.contains(c)).unwrap());
    // W's result of 6x6 (a board with tours) from its first start.
    let task = "(SELECT task FROM sweep_tasks WHERE config = 1 AND start_index = 0 AND method = 0)";
    let cases: [(&str, String, Vec<String>); 5] = [
        (
            "a heuristic's no-tour",
            format!("UPDATE tasks SET success = 0, outcome = 2, visited = 3 WHERE id = {task}"),
            vec![format!("start cell {first}"), "no-tour from w".into(), "is not a proof".into()],
        ),
        (
            "attempts past u32",
            format!("UPDATE tasks SET attempts = 4000000000 WHERE id = {task}"),
            vec![format!("start cell {first}"), "attempts 4000000000".into()],
        ),
        (
            "negative micros",
            format!("UPDATE tasks SET micros = -5 WHERE id = {task}"),
            vec![format!("start cell {first}"), "micros -5".into()],
        ),
        (
            "a start the spec does not draw",
            format!("UPDATE tasks SET start_cell = {stray} WHERE id = {task}"),
            vec![format!("start cell {stray}"), format!("the spec's start 0 is cell {first}")],
        ),
        (
            "a result no sweep refers to",
            format!(
                "INSERT INTO tasks (config_key, method_key, start_cell, success, attempts, visited, micros, worker,
                     outcome, sweep)
                 SELECT config_key, method_key, {stray}, 1, 1, 36, 9, worker, 1, sweep FROM tasks WHERE id = {task}"
            ),
            vec![format!("start cell {stray}"), "no sweep of the file refers to it".into()],
        ),
    ];
    for (i, (what, sql, parts)) in cases.into_iter().enumerate() {
        let forged = file(dir.path(), &format!("forged-{i}.db"), |store| {
            run(store, &sweep, &[0, 1], agreed);
            store.conn.execute_batch(&sql).unwrap();
        });
        let mut merged = Store::open(&dir.path().join(format!("merged-{i}.db"))).unwrap();
        merged.import(&clean).unwrap();
        let before = contents(&merged);
        let e = merged.import(&forged).map(drop).unwrap_err();
        assert!(matches!(e, Error::Refused(_)), "{what}: {e}");
        let text = e.to_string();
        let named = ["6x6 rule 2,1", "`w v1`"].into_iter().map(String::from);
        let sweep_named = (i < 4).then(|| format!("sweep {} (s)", sweep.id()));
        for part in parts.into_iter().chain(named).chain(sweep_named) {
            assert!(text.contains(&part), "{what}: {part:?} is not in {text}");
        }
        assert_eq!(contents(&merged), before, "{what}: nothing of it imported");
    }
}
