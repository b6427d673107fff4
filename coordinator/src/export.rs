//! Stored results as export rows: what `ksweep export` prints, whether it
//! reads a coordinator or a database file.

use std::collections::HashMap;

use ksweep_proto::v1 as pb;
use sweep::Sweep;

use crate::store::ResultRecord;

/// One stored result as an export row: configuration labels, the start's
/// coordinates and the method's name resolved from the sweep.
pub fn result_row(sweep: &Sweep, r: &ResultRecord, worker_names: &HashMap<u64, String>) -> pb::ResultRow {
    let entry = &sweep.configurations()[r.config as usize];
    let board = tour::Board::with_max_cells(&entry.sides, u64::MAX).expect("validated at submit");
    pb::ResultRow {
        config: r.config,
        moves: entry.moves_label(),
        dims: entry.dims() as u32,
        shape: entry.shape_label(),
        method: sweep.methods()[r.method as usize].name().to_string(),
        start: board.coords(r.start_cell),
        success: r.success,
        attempts: r.attempts,
        visited: r.visited,
        micros: r.micros,
        worker: worker_names.get(&r.worker.0).cloned().unwrap_or_else(|| r.worker.0.to_string()),
        error: String::new(),
        start_index: r.start_index,
        outcome: match r.outcome {
            tour::Outcome::Tour => pb::Outcome::Tour,
            tour::Outcome::NoTour => pb::Outcome::NoTour,
            tour::Outcome::GaveUp => pb::Outcome::GaveUp,
        } as i32,
    }
}
