//! Sweeps and results: stored once, named, counted, paged, reopened,
//! removed and renamed.

use super::*;

#[test]
fn the_same_sweep_is_stored_once() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(SPEC).unwrap();
    let (a, created) = store.insert_sweep(&sweep).unwrap();
    assert!(created);
    assert_eq!(a.tasks_total, sweep.total_tasks());
    assert_eq!((a.configurations, a.impossible), (3, 1));
    let (b, created) = store.insert_sweep(&sweep).unwrap();
    assert!(!created);
    assert_eq!(a.key, b.key);
    assert_eq!(store.sweeps().unwrap().len(), 1);
    assert_eq!(store.resolve(None).unwrap().id, sweep.id());
    assert!(matches!(store.resolve(Some("nope")), Err(Error::SweepNotFound(_))));
}

#[test]
fn a_sweep_is_named_by_its_id_a_unique_prefix_or_its_name() {
    let mut store = Store::in_memory().unwrap();
    let first = Sweep::parse(SPEC).unwrap();
    let other = Sweep::parse(&SPEC.replacen("seed = ", "seed = 1", 1)).unwrap();
    store.insert_sweep(&first).unwrap();
    store.insert_sweep(&other).unwrap();
    let (a, b) = (first.id(), other.id());
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    assert_eq!(store.resolve(Some(&a)).unwrap().id, a);
    assert_eq!(store.resolve(Some(&a[..common + 1])).unwrap().id, a, "a unique prefix");
    assert_eq!(store.resolve(Some(&b[..common + 1])).unwrap().id, b);
    // Both sweeps share the spec's name: by name, or by a common prefix, it is ambiguous.
    let err = store.resolve(Some(first.name())).unwrap_err();
    assert!(matches!(err, Error::AmbiguousId(..)), "{err}");
    // Listed to choose from: each by a short id that tells it apart, its state and tasks.
    let Error::AmbiguousId(_, listing) = &err else { unreachable!() };
    assert_eq!(listing.len(), 2);
    let text = err.to_string();
    for short in listing.short_ids() {
        assert!(short.len() >= 8 && text.contains(&format!("\n  {short}  ")), "{text}");
    }
    assert!(text.contains("running") && text.contains(&format!("0/{}", first.total_tasks())), "{text}");
    match store.resolve(None) {
        Err(Error::AmbiguousSweep(all)) => assert_eq!(all.len(), 2),
        other => panic!("no id, two sweeps: {other:?}"),
    }
    if common > 0 {
        assert!(matches!(store.resolve(Some(&a[..common])), Err(Error::AmbiguousId(..))));
    }
    let renamed = Sweep::parse(&SPEC.replacen("name = ", "name = \"solo\"\n# ", 1)).unwrap();
    store.insert_sweep(&renamed).unwrap();
    assert_eq!(store.resolve(Some("solo")).unwrap().id, renamed.id(), "a unique name");
}

#[test]
fn results_are_idempotent_and_counters_follow() {
    let mut store = Store::in_memory().unwrap();
    let (rec, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    let k = rec.key;
    let batch = vec![result(k, 0, 0, 0, true, 10), result(k, 0, 0, 1, false, 20), result(k, 0, 1, 0, true, 30)];
    assert_eq!(store.record(&batch).unwrap(), 3);
    assert_eq!(store.record(&batch).unwrap(), 0, "a duplicate batch adds nothing");
    let mut overlapping = batch.clone();
    overlapping.push(result(k, 1, 0, 0, true, 40));
    assert_eq!(store.record(&overlapping).unwrap(), 1);
    let rec = store.resolve(None).unwrap();
    assert_eq!((rec.tasks_done, rec.successes), (4, 3));
}

/// Batches as large as the coordinator's (a sweep's references go in 64
/// to a statement): duplicates inside a batch and across batches count
/// once, successes by the stored result, and two sweeps' runs in one batch
/// each get their own.
#[test]
fn large_batches_count_each_new_result_once() {
    let mut store = Store::in_memory().unwrap();
    let spec = |name: &str| {
        format!("name = \"{name}\"\nseed = 1\nstarts = 400\nmethods = [\"w\", \"aw\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [30]")
    };
    let (a, _) = store.insert_sweep(&Sweep::parse(&spec("a")).unwrap()).unwrap();
    let (b, _) = store.insert_sweep(&Sweep::parse(&spec("b")).unwrap()).unwrap();
    // Starts by both methods, a success where the start is a multiple of 3.
    let of = |k: SweepKey, starts: std::ops::Range<u64>| -> Vec<ResultRecord> {
        starts.flat_map(|s| (0..2).map(move |m| result(k, 0, s, m, s % 3 == 0, 5))).collect()
    };
    // A rerun disagreeing with the stored result: a conflict, the stored one kept.
    let disagree = |mut r: ResultRecord| {
        r.success = !r.success;
        r
    };
    let mut first = of(a.key, 0..150);
    first.extend(of(a.key, 140..145)); // 10 repeated inside the batch, in one statement with the first
    first[300] = disagree(first[300]);
    assert_eq!(store.record(&first).unwrap(), 300);
    // A's 100..250 (100 new), B's 0..70 (its own list; the stored tasks), A's 250..260.
    let mut second = of(a.key, 100..250);
    second.extend(of(b.key, 0..70));
    second.extend(of(a.key, 250..260));
    second[41] = disagree(second[41]);
    assert_eq!(store.record(&second).unwrap(), 200 + 140 + 20);
    let conflicts: Vec<(i64, i64, bool)> = store
        .conn
        .prepare("SELECT start_index, method, success FROM conflicts ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(conflicts, [(140, 0, true), (120, 1, false)]);
    let successes = |starts: u64| 2 * starts.div_ceil(3);
    let (a, b) = (store.record_of(a.key).unwrap(), store.record_of(b.key).unwrap());
    assert_eq!((a.tasks_done, a.successes), (520, successes(260)));
    assert_eq!((b.tasks_done, b.successes), (140, successes(70)));
    let listed = store.results_page(a.key, None, 1000).unwrap();
    assert_eq!(listed.len(), 520, "every reference listed once");
    assert!(listed.iter().all(|r| r.success == (r.start_index % 3 == 0)));
}

#[test]
fn results_of_a_sweep_no_longer_running_are_not_stored() {
    let mut store = Store::in_memory().unwrap();
    let (rec, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    let k = rec.key;
    assert_eq!(store.record(&[result(k, 0, 0, 0, true, 10)]).unwrap(), 1);
    store.set_state(k, SweepState::Cancelled, None).unwrap();
    assert_eq!(store.record(&[result(k, 0, 1, 0, true, 10), result(k, 0, 2, 0, true, 10)]).unwrap(), 0);
    let rec = store.resolve(None).unwrap();
    assert_eq!((rec.tasks_done, rec.successes), (1, 1), "counters follow the rows");
    let rows: i64 = store.conn.query_row("SELECT COUNT(*) FROM results", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 1);
}

#[test]
fn aggregates_have_medians_and_mark_impossible_configurations() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(SPEC).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let k = rec.key;
    store
        .record(&[
            result(k, 0, 0, 0, true, 10),
            result(k, 0, 1, 0, false, 40),
            result(k, 0, 2, 0, true, 20),
            result(k, 1, 0, 1, true, 5),
            result(k, 1, 1, 1, true, 7),
        ])
        .unwrap();
    let rows = store.aggregates(&rec, &sweep).unwrap();
    assert_eq!(rows.len(), 3 * 2);
    let w5 = &rows[0];
    assert_eq!((w5.config, w5.method.as_str(), w5.tasks, w5.successes), (0, "w", 3, 2));
    assert_eq!(w5.median_micros, 20.0);
    assert!((w5.mean_micros - 70.0 / 3.0).abs() < 1e-9);
    let aw6 = &rows[3];
    assert_eq!((aw6.config, aw6.method.as_str(), aw6.tasks), (1, "aw", 2));
    assert_eq!(aw6.median_micros, 6.0, "even count: mean of the middle two");
    assert!(rows[4].impossible && rows[5].impossible);
    assert_eq!(rows[4].tasks, 0);
}

#[test]
fn pages_come_in_task_order() {
    let mut store = Store::in_memory().unwrap();
    let (rec, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    let k = rec.key;
    let mut all = Vec::new();
    for c in (0..2).rev() {
        for s in (0..3).rev() {
            for m in 0..2 {
                all.push(result(k, c, s, m, true, 1));
            }
        }
    }
    store.record(&all).unwrap();
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = store.results_page(k, after, 5).unwrap();
        let Some(last) = page.last() else { break };
        after = Some((last.config, last.start_index, last.method));
        seen.extend(page.iter().map(|r| (r.config, r.start_index, r.method)));
    }
    let mut want: Vec<_> = all.iter().map(|r| (r.config, r.start_index, r.method)).collect();
    want.sort();
    assert_eq!(seen, want);
}

#[test]
fn a_reopened_file_keeps_shards_cursor_and_results() {
    let dir = std::env::temp_dir().join(format!("ksweep-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.db");
    let _ = std::fs::remove_file(&path);
    let sweep = Sweep::parse(SPEC).unwrap();
    {
        let mut store = Store::open(&path).unwrap();
        let (rec, _) = store.insert_sweep(&sweep).unwrap();
        let plans = [
            (ShardId(1), ShardPlan { config: 0, start_lo: 0, start_hi: 2 }),
            (ShardId(2), ShardPlan { config: 0, start_lo: 2, start_hi: 3 }),
        ];
        let cursor = Cursor { config: 1, start: 0 };
        store.cut_shards(&[NewShards { sweep: rec.key, shards: plans.to_vec(), cursor }]).unwrap();
        store.record(&[result(rec.key, 0, 2, 0, true, 1), result(rec.key, 0, 2, 1, true, 1)]).unwrap();
        store.finish_shards(&[ShardId(2)], &[]).unwrap();
    }
    let store = Store::open(&path).unwrap();
    let rec = store.resolve(None).unwrap();
    assert_eq!(rec.cursor, Cursor { config: 1, start: 0 });
    assert_eq!(rec.tasks_done, 2);
    let open = store.open_shards(rec.key).unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].id, ShardId(1));
    assert_eq!(store.max_shard_id().unwrap(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `ksweep rm`: a sweep's own results go with it; results another sweep
/// refers to stay (computed, from then on, by a sweep no longer there),
/// and the other sweep's counters and rows are as before.
#[test]
fn removing_a_sweep_keeps_the_results_other_sweeps_share() {
    let mut store = Store::in_memory().unwrap();
    let (a, _) = store.insert_sweep(&Sweep::parse(SPEC).unwrap()).unwrap();
    // The same 5x5 (2,1) board and methods under another name: the same task identities.
    let other = SPEC.replacen("name = \"store\"", "name = \"other\"", 1).replacen("n = [5, 6]", "n = [5]", 1);
    let (b, _) = store.insert_sweep(&Sweep::parse(&other).unwrap()).unwrap();
    let plan = ShardPlan { config: 0, start_lo: 0, start_hi: 3 };
    let cursor = Cursor { config: 1, start: 0 };
    store.cut_shards(&[NewShards { sweep: a.key, shards: vec![(ShardId(1), plan)], cursor }]).unwrap();
    // A: 5x5 starts 0..2 by both methods, and one task of 6x6: 5 results.
    let mut of_a: Vec<_> =
        (0..2).flat_map(|s| [result(a.key, 0, s, 0, true, 1), result(a.key, 0, s, 1, false, 1)]).collect();
    of_a.push(result(a.key, 1, 0, 0, true, 1));
    assert_eq!(store.record(&of_a).unwrap(), 5);
    // B: two of A's tasks (stored once, computed by A) and one of its own.
    let of_b = [result(b.key, 0, 0, 0, true, 1), result(b.key, 0, 1, 0, true, 1), result(b.key, 0, 2, 0, false, 1)];
    assert_eq!(store.record(&of_b).unwrap(), 3);
    let count = |store: &Store, sql: &str| -> i64 { store.conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count(&store, "SELECT COUNT(*) FROM tasks"), 6);
    let b_before = store.record_of(b.key).unwrap();
    let b_rows = store.results_page(b.key, None, 10).unwrap();

    let removal = store.remove_sweep(a.key).unwrap();
    assert_eq!((removal.sweep_id.as_str(), removal.name.as_str()), (a.id.as_str(), "store"));
    assert_eq!((removal.tasks_deleted, removal.tasks_kept), (3, 2));
    assert_eq!(count(&store, "SELECT COUNT(*) FROM tasks"), 3, "B's 3 tasks: 2 shared, 1 its own");
    assert!(matches!(store.resolve(Some(&a.id)), Err(Error::SweepNotFound(_))));
    for table in ["shards", "sweep_configs", "sweep_methods", "sweep_tasks", "conflicts"] {
        let sql = format!("SELECT COUNT(*) FROM {table} WHERE sweep = {}", a.key.0);
        assert_eq!(count(&store, &sql), 0, "{table} keeps nothing of the removed sweep");
    }
    assert_eq!(count(&store, &format!("SELECT COUNT(*) FROM tasks WHERE sweep = {}", a.key.0)), 0);
    assert_eq!(store.record_of(b.key).unwrap(), b_before, "B's counters are untouched");
    let after = store.results_page(b.key, None, 10).unwrap();
    let flags = |rows: &[ResultRecord]| rows.iter().map(|r| (r.start_index, r.success)).collect::<Vec<_>>();
    assert_eq!(flags(&after), flags(&b_rows), "B reads the same results");
    let computed: Vec<i64> = after.iter().map(|r| r.computed_by.0).collect();
    assert_eq!(computed, [0, 0, b.key.0], "the shared ones are computed by a sweep no longer here");

    // The last sweep leaves no task behind.
    assert_eq!(store.remove_sweep(b.key).unwrap().tasks_deleted, 3);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM tasks") + count(&store, "SELECT COUNT(*) FROM sweeps"), 0);
}

/// `ksweep rename`: the name changes, checked as a spec's; the id stays,
/// and the same spec submitted again is still the sweep.
#[test]
fn a_renamed_sweep_keeps_its_id_and_its_spec() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(SPEC).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let renamed = store.rename_sweep(rec.key, "wide grid").unwrap();
    assert_eq!((renamed.id.as_str(), renamed.name.as_str()), (rec.id.as_str(), "wide grid"));
    assert_eq!(store.resolve(Some("wide grid")).unwrap().key, rec.key);
    let (again, created) = store.insert_sweep(&sweep).unwrap();
    assert!(!created && again.key == rec.key && again.name == "wide grid", "resubmitted: {again:?}");
    // Another sweep's full id, or any name shaped like an id, would let
    // this sweep pass for another in listings.
    let (other, _) = store.insert_sweep(&Sweep::parse(&SPEC.replace("seed = ", "seed = 1")).unwrap()).unwrap();
    for bad in ["", "  ", "a\nb", &"x".repeat(201), &other.id, "0123456789ABCDEF"] {
        let e = store.rename_sweep(rec.key, bad).unwrap_err();
        assert!(matches!(e, Error::Spec(_)) && e.to_string().starts_with("name: "), "{bad:?}: {e}");
    }
    assert_eq!(store.record_of(rec.key).unwrap().name, "wide grid");
    assert_eq!(store.resolve(Some(&other.id)).unwrap().key, other.key);
}
