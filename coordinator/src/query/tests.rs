//! The query layer's tests, against a database file read back through it.

use super::*;
use crate::ids::WorkerId;
use crate::store::ResultRecord;

static SPEC: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| sweep::fixtures::knight_spec("query", 3, 3, &[5, 6]));

/// A file with one sweep and all its results, read back through `Query`.
#[test]
fn a_database_file_reads_back_through_the_query_layer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    let sweep = Sweep::parse(&SPEC).unwrap();
    let mut rows = Vec::new();
    {
        let mut store = Store::open(&path).unwrap();
        let (record, _) = store.insert_sweep(&sweep).unwrap();
        let worker = store.register_worker("w", 1, &Default::default()).unwrap();
        let planner = sweep::Planner::new(&sweep);
        for config in 0..2u32 {
            for (start_index, &start_cell) in planner.starts(config).iter().enumerate() {
                for method in 0..2 {
                    rows.push(ResultRecord {
                        sweep: record.key,
                        config,
                        start_index: start_index as u64,
                        method,
                        start_cell,
                        success: method == 0,
                        attempts: 1,
                        visited: 1,
                        micros: 10,
                        worker: WorkerId(worker.0),
                        outcome: if method == 0 { tour::Outcome::Tour } else { tour::Outcome::GaveUp },
                        computed_by: record.key,
                    });
                }
            }
        }
        store.record(&rows).unwrap();
    }
    let query = Query::open_read_only(&path).unwrap();
    let all = query.sweeps().unwrap();
    assert_eq!(all.len(), 1);
    let status = query.status(None).unwrap();
    assert_eq!(status.spec_toml, sweep.canonical_toml(), "status carries the spec");
    assert_eq!(status.cpu_micros, Some(10 * rows.len() as u64), "and its CPU time");
    assert_eq!(status.contributors.len(), 1);
    assert_eq!((status.contributors[0].name.as_str(), status.contributors[0].tasks), ("w", rows.len() as u64));
    let listed = SweepStatus {
        spec_toml: String::new(),
        cpu_micros: None,
        reused_cpu_micros: None,
        contributors: Vec::new(),
        ..status
    };
    assert_eq!(listed, all[0], "lists do not");
    assert!(all[0].started_unix_ms.is_some(), "the first result's time");
    assert_eq!(all[0].finished_unix_ms, None, "still running");
    assert_eq!(query.status(Some(&sweep.id())).unwrap().tasks_done, rows.len() as u64);
    let table = query.table(None).unwrap();
    assert_eq!(table.status, all[0]);
    assert_eq!(table.rows.len(), 4);
    assert!(table.rows.iter().all(|r| r.tasks == 3), "{:?}", table.rows);
    assert_eq!(query.table_rows(None).unwrap(), table.rows);

    let export = query.export(None).unwrap();
    let mut exported = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let page = query.export_page(&export, after, 5).unwrap();
        pages += 1;
        exported.extend(page.rows);
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(exported.len(), rows.len());
    assert_eq!(pages, rows.len().div_ceil(5), "no empty page after a short one");
    assert!(exported.iter().all(|r| r.worker == "w"));
    let keys: Vec<_> = exported.iter().map(|r| (r.config, r.start_index)).collect();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "task order");
    assert!(matches!(query.status(Some("nope")), Err(crate::Error::SweepNotFound(_))));
}

/// Contributors: one per worker and machine (a restarted worker's
/// registrations merge), most tasks first, with their CPU time.
#[test]
fn a_status_names_the_workers_whose_results_it_holds() {
    let mut store = Store::in_memory().unwrap();
    let sweep = Sweep::parse(&SPEC).unwrap();
    let (record, _) = store.insert_sweep(&sweep).unwrap();
    let here = ksweep_proto::build::Provenance {
        version: "0.1.0".into(),
        build: "abc123".into(),
        host: "node-1".into(),
        cpu: "Some CPU".into(),
        features: vec!["sse4.1".into(), "ssse3".into()],
    };
    let first = store.register_worker("node-1", 2, &here).unwrap();
    let again = store.register_worker("node-1", 2, &here).unwrap();
    let other = ksweep_proto::build::Provenance { host: "node-2".into(), features: Vec::new(), ..here.clone() };
    let second = store.register_worker("node-2", 2, &other).unwrap();
    let gone = WorkerId(99); // no row in `workers`: a damaged or hand-edited file
    let workers = [first, again, first, second, again, gone];
    let rows: Vec<ResultRecord> = workers
        .iter()
        .enumerate()
        .map(|(i, &worker)| ResultRecord {
            sweep: record.key,
            config: 0,
            start_index: i as u64 / 2,
            method: i as u32 % 2,
            start_cell: i as u64 / 2,
            success: true,
            attempts: 1,
            visited: 1,
            micros: 1000 * (i as u64 + 1),
            worker,
            outcome: tour::Outcome::Tour,
            computed_by: record.key,
        })
        .collect();
    store.record(&rows).unwrap();
    let query = Query::new(store);
    let status = query.status(None).unwrap();
    let summary: Vec<(&str, &str, u64, u64)> =
        status.contributors.iter().map(|c| (c.name.as_str(), c.host.as_str(), c.tasks, c.cpu_micros)).collect();
    assert_eq!(
        summary,
        [("node-1", "node-1", 4, 1000 + 2000 + 3000 + 5000), ("99", "", 1, 6000), ("node-2", "node-2", 1, 4000)]
    );
    assert_eq!(status.contributors[0].features, ["sse4.1", "ssse3"]);
    assert_eq!(status.contributors[0].build_label(), "0.1.0 (abc123)");
    assert!(status.contributors[2].features.is_empty());
    assert_eq!(status.cpu_micros, Some(21_000));
    assert_eq!(query.sweeps().unwrap()[0].cpu_micros, None, "lists do not sum results");
}
