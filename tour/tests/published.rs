//! The engine reproduces, flag for flag, the 253,497 success flags the
//! research report's authors published for w, w+, aw, aw+ and mw on 2D
//! (3,2), (4,1) and (4,3) boards (data/report-2d-flags.tsv.gz in this
//! repository; data/README.md names the source).
//!
//! Release-mode tier: in a debug build it is ignored (it would take an hour);
//! `cargo test --release` runs it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

use flate2::read::GzDecoder;
use tour::{verify, Board, Configuration, Method, Moves, Runner};

fn data_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/report-2d-flags.tsv.gz")
}

struct Row {
    method: Method,
    start: [u64; 2],
    success: bool,
}

/// Rows grouped by (rule, n), in file order.
fn load() -> BTreeMap<(String, u32), Vec<Row>> {
    let path = data_file();
    let file =
        std::fs::File::open(&path).unwrap_or_else(|e| panic!("published data {} is missing ({e})", path.display()));
    let mut groups: BTreeMap<(String, u32), Vec<Row>> = BTreeMap::new();
    let mut header_seen = false;
    for line in BufReader::new(GzDecoder::new(file)).lines() {
        let line = line.expect("readable gzip");
        if line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 6, "malformed line {line:?}");
        if !header_seen {
            assert_eq!(f, ["rule", "dims", "n", "method", "start", "success"]);
            header_seen = true;
            continue;
        }
        assert_eq!(f[1], "2", "only 2D data is published");
        let xy: Vec<u64> = f[4].split(',').map(|v| v.parse().unwrap()).collect();
        groups.entry((f[0].to_string(), f[2].parse().unwrap())).or_default().push(Row {
            method: f[3].parse().unwrap(),
            start: [xy[0], xy[1]],
            success: f[5] == "1",
        });
    }
    groups
}

#[test]
#[cfg_attr(not(optimized), ignore = "slow tier: runs in optimised builds (--release, --profile checked)")]
fn engine_reproduces_every_published_flag() {
    let groups = load();
    let total: usize = groups.values().map(Vec::len).sum();
    assert_eq!(total, 253_497, "the published file has 253,497 flags");

    let work: Vec<_> = groups.into_iter().collect();
    let mismatches = std::sync::Mutex::new(Vec::new());
    let checked = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        for t in 0..threads {
            let (work, mismatches, checked) = (&work, &mismatches, &checked);
            s.spawn(move || {
                for ((rule, n), rows) in work.iter().skip(t).step_by(threads) {
                    let rule: Vec<u32> = rule.split(',').map(|v| v.parse().unwrap()).collect();
                    let board = Board::regular(2, *n).unwrap();
                    let moves = Moves::from_rule(&rule, 2).unwrap();
                    let runner = Runner::new(Configuration::new(board, moves).unwrap()).unwrap();
                    let mut ws = runner.workspace();
                    for row in rows {
                        let start = runner.config().board().index_of(&row.start).unwrap();
                        let r = runner.run(&mut ws, start, row.method, 0, row.success);
                        if r.success != row.success {
                            mismatches.lock().unwrap().push(format!(
                                "rule {rule:?} n {n} {} start {:?}: published {}, engine {}",
                                row.method, row.start, row.success, r.success
                            ));
                        }
                        if let Some(path) = &r.path {
                            verify(runner.config().board(), runner.config().moves(), path)
                                .unwrap_or_else(|e| panic!("rule {rule:?} n {n} {}: {e}", row.method));
                        }
                        checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let mismatches = mismatches.into_inner().unwrap();
    assert_eq!(checked.into_inner(), total);
    assert!(
        mismatches.is_empty(),
        "{} of {total} flags differ; first: {:#?}",
        mismatches.len(),
        &mismatches[..mismatches.len().min(10)]
    );
}
