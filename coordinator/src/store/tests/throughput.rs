//! How fast results are recorded, refutations included (ignored unless
//! asked for).

use super::*;

/// Results stored per second into a file database, in batches of 2,000 as a
/// busy coordinator writes them. A figure for notes, not a pass/fail
/// threshold: `cargo test --release -p ksweep-coordinator --lib --
/// --ignored --nocapture record_throughput`.
#[test]
#[ignore = "a measurement; run by hand"]
fn record_throughput() {
    let dir = temp();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let spec = "name = \"t\"\nseed = 1\nstarts = 100000\nmethods = [\"w\", \"aw\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\nn = [600]";
    let sweep = Sweep::parse(spec).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let batches = 100u64;
    let started = std::time::Instant::now();
    for b in 0..batches {
        let rows: Vec<ResultRecord> = (0..1000u64)
            .flat_map(|i| {
                let start = b * 1000 + i;
                [0, 1].map(|m| ResultRecord { start_cell: start, ..result(rec.key, 0, start, m, start % 3 == 0, 5) })
            })
            .collect();
        store.record(&rows).unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let n = batches * 2000;
    println!("record_throughput: {n} results in {secs:.2} s = {:.0} results/s", n as f64 / secs);
    assert_eq!(store.record_of(rec.key).unwrap().tasks_done, n);
}

/// Results stored per second as issue 40's load writes them: W give-ups on
/// 100 boards of 1,000,000 cells and more, 100,000 distinct random start
/// cells each, all boards in flight at once (as 1,000 workers hold shards
/// of all of them): each transaction holds 72 shards of 280 starts, each of
/// another board, the file growing to 4,000,000 results. Prints the rate of
/// each million, so a cost that grows with the file shows. `cargo test
/// --release -p ksweep-coordinator --lib -- --ignored --nocapture
/// record_throughput_at_scale`.
#[test]
#[ignore = "a measurement; run by hand"]
fn record_throughput_at_scale() {
    let dir = temp();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let boards = 100u32;
    let spec = format!(
        "name = \"t\"\nseed = 1\nstarts = 100000\nmethods = [\"w\"]\n[[grid]]\nrule = [2, 1]\ndims = [2]\n\
         n_range = {{ from = 1000, to = {} }}",
        1000 + boards
    );
    let sweep = Sweep::parse(&spec).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    // Distinct pseudo-random cells of a board: a multiplier prime to 1,000,000.
    let cell = |config: u32, start: u64| (start * 999_983 + u64::from(config) * 7_919) % 1_000_000;
    let (shard, per_round) = (280u64, 72u32);
    let mut next_start = vec![0u64; boards as usize];
    let mut board = 0u32;
    let mut total = 0u64;
    for million in 0..4 {
        let started = std::time::Instant::now();
        let mut stored = 0u64;
        while stored < 1_000_000 {
            let mut rows = Vec::with_capacity((shard * u64::from(per_round)) as usize);
            for _ in 0..per_round {
                let from = next_start[board as usize];
                next_start[board as usize] += shard;
                rows.extend((from..from + shard).map(|start| ResultRecord {
                    start_cell: cell(board, start),
                    ..result(rec.key, board, start, 0, false, 4000)
                }));
                board = (board + 1) % boards;
            }
            stored += rows.len() as u64;
            store.record(&rows).unwrap();
        }
        let secs = started.elapsed().as_secs_f64();
        println!(
            "record_throughput_at_scale: million {} in {secs:.2} s = {:.0} results/s, {:.2} us a result",
            million + 1,
            stored as f64 / secs,
            secs * 1e6 / stored as f64
        );
        total += stored;
    }
    assert_eq!(store.record_of(rec.key).unwrap().tasks_done, total, "every result is new and counted");
}

/// Refutations cost a count of the board's refuted starts per batch:
/// 200,000 `no-tour` results of `solve` on a board no theorem settles,
/// never all of its starts.
#[test]
#[ignore = "a measurement; run by hand"]
fn record_throughput_of_refutations() {
    let dir = temp();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let spec = "name = \"t\"\nseed = 1\nstarts = 200000\nmethods = [\"solve\"]\n[[grid]]\nrule = [3, 2]\ndims = [2]\nn = [600]";
    let sweep = Sweep::parse(spec).unwrap();
    let (rec, _) = store.insert_sweep(&sweep).unwrap();
    let started = std::time::Instant::now();
    for b in 0..100u64 {
        let rows: Vec<ResultRecord> = (0..2000u64)
            .map(|i| ResultRecord {
                start_cell: b * 2000 + i,
                ..proof(rec.key, b * 2000 + i, 0, tour::Outcome::NoTour)
            })
            .collect();
        store.record(&rows).unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    println!("record_throughput_of_refutations: 200000 results in {secs:.2} s = {:.0} results/s", 200000.0 / secs);
    assert_eq!(store.facts(&board_key(&sweep)).unwrap(), Facts::default());
}
