//! The store's tests, one file per concern; here the spec and helpers
//! they share (and `result`, which other modules' tests use too).

use sweep::{Cursor, ShardPlan, Sweep};

use super::*;
use crate::ids::{ShardId, SweepKey, WorkerId};

mod facts;
mod files;
mod results;
mod throughput;
mod upgrades;

const SPEC: &str = r#"
    name = "store"
    seed = 3
    starts = 3
    methods = ["w", "aw"]
    [[grid]]
    rule = [2, 1]
    dims = [2]
    n = [5, 6]
    [[grid]]
    rule = [3, 1]
    dims = [2]
    n = [4]
"#;

/// A result whose start cell is its start index (one attempt, 25 cells
/// visited, worker 1); the state tests build theirs from it too.
pub(crate) fn result(
    sweep: SweepKey,
    config: u32,
    start_index: u64,
    method: u32,
    success: bool,
    micros: u64,
) -> ResultRecord {
    ResultRecord {
        sweep,
        config,
        start_index,
        method,
        start_cell: start_index,
        success,
        attempts: 1,
        visited: 25,
        micros,
        worker: WorkerId(1),
        outcome: if success { tour::Outcome::Tour } else { tour::Outcome::GaveUp },
        computed_by: sweep,
    }
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// A database as a release of schema `version` wrote it, holding the store
/// test's sweep with one success and one failure.
fn released_database(path: &std::path::Path, released: i64) -> Sweep {
    let sweep = Sweep::parse(SPEC).unwrap();
    let mut conn = rusqlite::Connection::open(path).unwrap();
    // From version 4 on, `results` is a view: made as version 3, then upgraded.
    let version = released.min(3);
    schema::create_as_released(&mut conn, version);
    conn.execute(
        "INSERT INTO sweeps (id, name, spec, state, tasks_total, configurations, impossible, created_ms)
         VALUES (?1, 'store', ?2, 1, ?3, 3, 1, 1000)",
        rusqlite::params![sweep.id(), sweep.canonical_toml(), sweep.total_tasks() as i64],
    )
    .unwrap();
    conn.execute("INSERT INTO workers (name, threads, registered_ms) VALUES ('w', 2, 1000)", []).unwrap();
    let outcome = if version >= 2 { ", outcome" } else { "" };
    for (start, success, code) in [(0, 1, 1), (1, 0, 2)] {
        let values = if version >= 2 { format!(", {code}") } else { String::new() };
        conn.execute_batch(&format!(
            "INSERT INTO results (sweep, config, start_index, method, start_cell, success, attempts, visited, micros,
             worker{outcome}) VALUES (1, 0, {start}, 0, {start}, {success}, 1, 25, 10, 1{values});
             UPDATE sweeps SET tasks_done = tasks_done + 1, successes = successes + {success};"
        ))
        .unwrap();
    }
    if released > version {
        schema::upgrade_as_released(&mut conn, released);
    }
    sweep
}

/// (3,2) on 10x10: no theorem or move-graph proof settles it either way.
const FACTS_SPEC: &str = r#"
    name = "facts"
    seed = 5
    starts = 100
    methods = ["w", "solve"]
    [[grid]]
    rule = [3, 2]
    dims = [2]
    n = [10]
"#;

fn proof(sweep: SweepKey, start: u64, method: u32, outcome: tour::Outcome) -> ResultRecord {
    ResultRecord { outcome, success: outcome == tour::Outcome::Tour, ..result(sweep, 0, start, method, false, 10) }
}

fn board_key(sweep: &Sweep) -> String {
    let c = sweep.configurations()[0].configuration();
    sweep::board_moves(c.board().sides(), c.moves())
}
