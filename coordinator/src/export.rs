//! Stored results as export rows: what `ksweep export` prints, whether it
//! reads a coordinator or a database file.

use std::collections::HashMap;

use sweep::{ResultRow, Sweep};

use crate::error::{Error, Result};
use crate::ids::SweepKey;
use crate::store::{ResultRecord, WorkerRecord};
use ksweep_proto::build::Provenance;

/// One stored result as an export row: configuration labels, the start's
/// coordinates and the method's name resolved from the sweep, its worker
/// and computing sweep by name. A result outside the sweep's grid (a
/// damaged database) is an error.
pub fn export_row(
    sweep: &Sweep,
    r: &ResultRecord,
    workers: &HashMap<u64, WorkerRecord>,
    sweep_ids: &HashMap<SweepKey, String>,
) -> Result<ResultRow> {
    let outside = || {
        Error::Corrupt(format!(
            "a result for configuration {}, method {} is outside the sweep's grid",
            r.config, r.method
        ))
    };
    let entry = sweep.configurations().get(r.config as usize).ok_or_else(outside)?;
    let method = sweep.methods().get(r.method as usize).ok_or_else(outside)?;
    let board = tour::Board::with_max_cells(&entry.sides, u64::MAX)
        .map_err(|e| Error::Corrupt(format!("configuration {}: {e}", r.config)))?;
    if r.start_cell >= board.cells() {
        return Err(Error::Corrupt(format!("start cell {} is outside configuration {}", r.start_cell, r.config)));
    }
    let worker = workers.get(&r.worker.0);
    let provenance = worker.map(|w| &w.provenance);
    let text = |f: fn(&Provenance) -> &String| provenance.map(f).cloned().unwrap_or_default();
    Ok(ResultRow {
        config: r.config,
        moves: entry.moves_label(),
        dims: entry.dims() as u32,
        shape: entry.shape_label(),
        method: method.name().to_string(),
        start: board.coords(r.start_cell),
        success: r.success,
        attempts: r.attempts,
        visited: r.visited,
        micros: r.micros,
        worker: worker.map_or_else(|| r.worker.0.to_string(), |w| w.name.clone()),
        worker_version: provenance.map(Provenance::version_text).unwrap_or_default(),
        worker_host: text(|p| &p.host),
        worker_cpu: text(|p| &p.cpu),
        worker_features: provenance.map(|p| p.features.join(" ")).unwrap_or_default(),
        start_index: r.start_index,
        outcome: Some(r.outcome),
        computed_by: sweep_ids.get(&r.computed_by).cloned().unwrap_or_else(|| format!("key {}", r.computed_by.0)),
    })
}
