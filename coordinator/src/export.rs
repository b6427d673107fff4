//! Stored results as export rows: what `ksweep export` prints, whether it
//! reads a coordinator or a database file.

use std::collections::HashMap;

use sweep::{ResultRow, Sweep};

use crate::error::{Error, Result};
use crate::ids::SweepKey;
use crate::store::{ResultRecord, WorkerRecord};

/// Turns stored results into export rows: configuration labels, the
/// start's coordinates and the method's name resolved from the sweep, its
/// worker and computing sweep by name. The labels a configuration or a
/// worker shares with its other rows are made once, not per row (a million
/// rows are a few hundred boards and workers).
pub struct RowLabels<'a> {
    sweep: &'a Sweep,
    workers: &'a HashMap<u64, WorkerRecord>,
    sweep_ids: &'a HashMap<SweepKey, String>,
    boards: HashMap<u32, BoardLabels>,
    origins: HashMap<u64, WorkerLabels>,
}

/// A configuration's board and labels.
struct BoardLabels {
    board: tour::Board,
    moves: String,
    shape: String,
    dims: u32,
}

/// A worker's name and provenance as export columns.
#[derive(Default)]
struct WorkerLabels {
    name: String,
    version: String,
    host: String,
    cpu: String,
    features: String,
}

impl<'a> RowLabels<'a> {
    /// Labels for results of `sweep` by `workers`, computed by `sweep_ids`.
    pub fn new(
        sweep: &'a Sweep,
        workers: &'a HashMap<u64, WorkerRecord>,
        sweep_ids: &'a HashMap<SweepKey, String>,
    ) -> RowLabels<'a> {
        RowLabels { sweep, workers, sweep_ids, boards: HashMap::new(), origins: HashMap::new() }
    }

    /// One stored result as an export row. A result outside the sweep's
    /// grid (a damaged database) is an error.
    pub fn row(&mut self, r: &ResultRecord) -> Result<ResultRow> {
        let outside = || {
            Error::Corrupt(format!(
                "a result for configuration {}, method {} is outside the sweep's grid",
                r.config, r.method
            ))
        };
        let method = self.sweep.methods().get(r.method as usize).ok_or_else(outside)?;
        let board = match self.boards.entry(r.config) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let entry = self.sweep.configurations().get(r.config as usize).ok_or_else(outside)?;
                let board = tour::Board::with_max_cells(&entry.sides, u64::MAX)
                    .map_err(|e| Error::Corrupt(format!("configuration {}: {e}", r.config)))?;
                let (moves, shape, dims) = (entry.moves_label(), entry.shape_label(), entry.dims() as u32);
                e.insert(BoardLabels { board, moves, shape, dims })
            }
        };
        if r.start_cell >= board.board.cells() {
            return Err(Error::Corrupt(format!("start cell {} is outside configuration {}", r.start_cell, r.config)));
        }
        let workers = self.workers;
        let worker = self.origins.entry(r.worker.0).or_insert_with(|| match workers.get(&r.worker.0) {
            Some(w) => WorkerLabels {
                name: w.name.clone(),
                version: w.provenance.version_text(),
                host: w.provenance.host.clone(),
                cpu: w.provenance.cpu.clone(),
                features: w.provenance.features.join(" "),
            },
            None => WorkerLabels { name: r.worker.0.to_string(), ..WorkerLabels::default() },
        });
        Ok(ResultRow {
            config: r.config,
            moves: board.moves.clone(),
            dims: board.dims,
            shape: board.shape.clone(),
            method: method.name().to_string(),
            start: board.board.coords(r.start_cell),
            success: r.success,
            attempts: r.attempts,
            visited: r.visited,
            micros: r.micros,
            worker: worker.name.clone(),
            worker_version: worker.version.clone(),
            worker_host: worker.host.clone(),
            worker_cpu: worker.cpu.clone(),
            worker_features: worker.features.clone(),
            start_index: r.start_index,
            outcome: Some(r.outcome),
            computed_by: self
                .sweep_ids
                .get(&r.computed_by)
                .cloned()
                .unwrap_or_else(|| format!("key {}", r.computed_by.0)),
        })
    }
}
