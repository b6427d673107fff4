//! The read side: sweeps' statuses, table rows and export pages, answered
//! from a store. The gRPC `Sweeps` service answers from these functions and
//! the CLI's `--db` calls them on a database file directly, so what a
//! coordinator serves and what its file says agree by construction.
//!
//! ```no_run
//! # fn main() -> ksweep_coordinator::Result<()> {
//! use ksweep_coordinator::query::Query;
//! let query = Query::open_read_only(std::path::Path::new("ksweep.db"))?;
//! for status in query.sweeps()? {
//!     println!("{} {}", status.sweep_id, status.tasks_done);
//! }
//! let table = query.table(None)?; // the only sweep
//! let export = query.export(Some(&table.status.sweep_id))?;
//! let mut after = None;
//! loop {
//!     let page = query.export_page(&export, after, 8192)?;
//!     // print page.rows
//!     match page.next {
//!         Some(next) => after = Some(next),
//!         None => break,
//!     }
//! }
//! # Ok(())
//! # }
//! ```

use std::path::Path;
use std::sync::Arc;

use sweep::{AggregateRow, FailedShard, ResultRow, Sweep, SweepStatus};

use crate::error::Result;
use crate::ids::SweepKey;
use crate::scheduler::Counted;
use crate::store::{Store, SweepRecord, SweepState};

/// Read-only queries on a database file (the CLI's `--db`).
pub struct Query {
    store: Store,
}

/// A sweep's status and its aggregate rows (the domain types the tables
/// render; the service converts them to messages).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub status: SweepStatus,
    pub rows: Vec<AggregateRow>,
}

/// A sweep being exported: resolved and parsed once, then read in pages.
#[derive(Debug, Clone)]
pub struct Export {
    pub status: SweepStatus,
    key: SweepKey,
    sweep: Arc<Sweep>,
}

impl Export {
    /// The sweep exported, shared.
    pub fn shared_sweep(&self) -> Arc<Sweep> {
        self.sweep.clone()
    }

    /// The sweep exported.
    pub fn sweep(&self) -> &Sweep {
        &self.sweep
    }
}

/// Where the next export page starts: after this task key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportCursor {
    config: u32,
    start_index: u64,
    method: u32,
}

/// Up to `limit` export rows in (configuration, start, method) order, and
/// the cursor of the next page (None once this page ended the results).
#[derive(Debug, Clone, PartialEq)]
pub struct ExportPage {
    pub rows: Vec<ResultRow>,
    pub next: Option<ExportCursor>,
}

impl Query {
    /// Opens a database file read-only: checks it is a ksweep database of
    /// this version; works in a read-only directory and beside a running
    /// coordinator.
    pub fn open_read_only(path: &Path) -> Result<Query> {
        Ok(Query { store: Store::open_read_only(path)? })
    }

    /// Queries on an open store.
    pub fn new(store: Store) -> Query {
        Query { store }
    }

    /// Every sweep's status, oldest first (`ksweep status` without an id).
    pub fn sweeps(&self) -> Result<Vec<SweepStatus>> {
        sweeps(&self.store)
    }

    /// One sweep's status; `None` names the only sweep.
    pub fn status(&self, id: Option<&str>) -> Result<SweepStatus> {
        status(&self.store, id)
    }

    /// A sweep's status and aggregate rows.
    pub fn table(&self, id: Option<&str>) -> Result<Table> {
        table(&self.store, id)
    }

    /// A sweep's aggregate rows (what `ksweep table` renders).
    pub fn table_rows(&self, id: Option<&str>) -> Result<Vec<AggregateRow>> {
        Ok(table(&self.store, id)?.rows)
    }

    /// A sweep's parsed spec (parsed once per query layer, whatever else
    /// reads it: tables, exports, failed shards).
    pub fn sweep(&self, id: Option<&str>) -> Result<Arc<Sweep>> {
        self.store.sweep_of(&self.store.resolve(id)?)
    }

    /// Starts an export of a sweep.
    pub fn export(&self, id: Option<&str>) -> Result<Export> {
        export(&self.store, id)
    }

    /// The export page after `after` (from the start when None).
    pub fn export_page(&self, export: &Export, after: Option<ExportCursor>, limit: usize) -> Result<ExportPage> {
        export_page(&self.store, export, after, limit)
    }
}

/// The status of a stored sweep.
pub fn status_of(r: &SweepRecord) -> SweepStatus {
    SweepStatus {
        sweep_id: r.id.clone(),
        name: r.name.clone(),
        state: r.state.into(),
        tasks_total: r.tasks_total,
        tasks_done: r.tasks_done,
        successes: r.successes,
        configurations: r.configurations,
        impossible_configurations: r.impossible,
        shards_failed: r.shards_failed,
        created_unix_ms: r.created_ms,
        seed: sweep::SweepSpec::seed_of(&r.spec),
        started_unix_ms: r.first_result_ms,
        finished_unix_ms: r.finished_ms,
        runs: sweep::RunTimes {
            ended_ms: r.ran_ms,
            current_from_unix_ms: r.run_from_ms,
            last_result_unix_ms: r.last_result_ms,
        },
        // Only `status` sums the results (like the spec, not in lists).
        cpu_micros: None,
        reused_cpu_micros: None,
        contributors: Vec::new(),
        // The wire says "no error" with an empty text: one meaning for both.
        error: r.error.clone().filter(|e| !e.is_empty()),
        // Only `status` carries the spec: lists, watch streams and submit
        // replies stay small however large the spec.
        spec_toml: String::new(),
        // Live figures; the coordinator's services fill them in (`Shared::rates`).
        rate_per_sec: None,
        eta: None,
        // Only `status` lists them, as it carries the spec.
        failed_shards: Vec::new(),
        // Live figures, like the rate (`Shared::live`).
        waiting: sweep::Waiting::default(),
        // Where its results came from: counted for `status` only.
        reuse: sweep::Reuse { tasks: r.tasks_reused, no_reuse: !r.reuse, ..sweep::Reuse::default() },
        // Estimated where asked for: `status` and a running sweep's live figures.
        work: None,
    }
}

/// What a sweep's report shows (`ksweep report`, the dashboard's report
/// link): its status (with the spec and contributors), table rows and
/// failure maps. A running sweep's wall time counts to now.
pub fn report_input(
    status: &SweepStatus,
    rows: Vec<AggregateRow>,
    maps: Vec<figures::FailureMap>,
) -> figures::report::ReportInput {
    figures::report::ReportInput {
        name: status.name.clone(),
        id: status.sweep_id.clone(),
        progress: sweep::Progress::from(status),
        successes: status.successes,
        configurations: status.configurations,
        spec_toml: status.spec_toml.clone(),
        rows,
        maps,
        times: status.time_lines(crate::store::now_ms()),
        contributors: status.contributors.clone(),
        generator: format!("knight-sweep {}", env!("CARGO_PKG_VERSION")),
    }
}

pub(crate) fn sweeps(store: &Store) -> Result<Vec<SweepStatus>> {
    Ok(store.sweeps()?.iter().map(status_of).collect())
}

/// One sweep's status as the Status reply carries it: with its spec, its
/// failed shards, its CPU time and contributors (a pass over its results)
/// and, unfinished, its progress in estimated work.
pub(crate) fn status(store: &Store, id: Option<&str>) -> Result<SweepStatus> {
    status_counted(store, id, |_| None)
}

/// [`status`], taking a running sweep's sums from `counted` (a running
/// coordinator's [`Counted`]) where it has them, instead of passes over all
/// its results: what keeps `Status` fast on a sweep of millions.
pub(crate) fn status_counted(
    store: &Store,
    id: Option<&str>,
    counted: impl FnOnce(SweepKey) -> Option<Counted>,
) -> Result<SweepStatus> {
    let record = store.resolve(id)?;
    let counted = if record.state == SweepState::Running { counted(record.key) } else { None };
    let (reused_from, workers, work) = match counted {
        Some(c) => (c.reused_from, c.workers, Some(c.work)),
        None => {
            // How far an unfinished sweep is in estimated work (another pass).
            let work = if record.tasks_done < record.tasks_total {
                let sweep = store.sweep_of(&record)?;
                Some(store.work_tally(record.key, &sweep)?.work(&sweep))
            } else {
                None
            };
            (store.reused_from(record.key)?, store.worker_totals(record.key)?, work)
        }
    };
    let status = detailed_status(store, &record, reused_from)?.with_contributors(store.contributors_of(&workers)?);
    let reused_cpu_micros = Some(store.reused_micros(record.key, record.tasks_reused)?);
    Ok(SweepStatus { work, reused_cpu_micros, ..status })
}

/// One sweep's status with its spec and failed shards, but not what its
/// results cost: what the dashboard reads on every update (it reads the
/// contributors with the tables, less often).
pub(crate) fn status_without_costs(store: &Store, id: Option<&str>) -> Result<SweepStatus> {
    let record = store.resolve(id)?;
    detailed_status(store, &record, store.reused_from(record.key)?)
}

/// A sweep's contributors (see [`Store::contributors`]).
pub(crate) fn contributors(store: &Store, id: Option<&str>) -> Result<Vec<sweep::Contributor>> {
    store.contributors(store.resolve(id)?.key)
}

/// A sweep's status with its spec, failed shards and where its results
/// came from (`reused_from`, [`Store::reused_from`]).
fn detailed_status(store: &Store, record: &SweepRecord, reused_from: Vec<(SweepKey, u64)>) -> Result<SweepStatus> {
    let failed_shards = failed_shards(store, record)?;
    let base = status_of(record);
    let conflicts = store.conflict_count(record.key)?;
    let from = reused_from
        .into_iter()
        .map(|(key, tasks)| {
            let (sweep_id, name) = match store.record_of(key) {
                Ok(r) => (r.id, r.name),
                Err(_) => (format!("key {}", key.0), "(gone)".to_string()),
            };
            sweep::ReusedFrom { sweep_id, name, tasks }
        })
        .collect();
    let reuse = sweep::Reuse { from, conflicts, ..base.reuse.clone() };
    // Boards the stored results prove impossible count with the theorems'.
    let sweep = store.sweep_of(record)?;
    let impossible_configurations = base.impossible_configurations + store.impossible_by_facts(record.key.0, &sweep)?;
    Ok(SweepStatus { spec_toml: record.spec.clone(), failed_shards, reuse, impossible_configurations, ..base })
}

/// The first shards of a sweep that failed for good, labelled as tables
/// label their boards (the spec is parsed only when there are some).
fn failed_shards(store: &Store, record: &SweepRecord) -> Result<Vec<FailedShard>> {
    if record.shards_failed == 0 {
        return Ok(Vec::new());
    }
    let failed = store.failed_shards(record.key, ksweep_proto::MAX_FAILED_SHARDS)?;
    let sweep = store.sweep_of(record)?;
    Ok(failed
        .into_iter()
        .map(|f| {
            let entry = sweep.configurations().get(f.plan.config as usize);
            FailedShard {
                shard_id: f.id.0,
                config: f.plan.config,
                board: entry.map(|c| c.shape_label()).unwrap_or_default(),
                moves: entry.map(|c| c.moves_label()).unwrap_or_default(),
                start_lo: f.plan.start_lo,
                start_hi: f.plan.start_hi,
                error: f.error,
            }
        })
        .collect())
}

/// A board a worker is running, labelled as tables label it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeldBoard {
    pub sweep: String,
    pub moves: String,
    pub shape: String,
}

/// The boards of `held` (workers' leases, as (sweep, configuration)); one
/// whose sweep is gone is left out.
pub(crate) fn held_boards(
    store: &Store,
    held: &[(SweepKey, u32)],
) -> Result<std::collections::HashMap<(SweepKey, u32), HeldBoard>> {
    let mut boards = std::collections::HashMap::with_capacity(held.len());
    for &(key, config) in held {
        let Ok(record) = store.record_of(key) else { continue };
        let sweep = store.sweep_of(&record)?;
        if let Some(entry) = sweep.configurations().get(config as usize) {
            let board =
                HeldBoard { sweep: record.name.clone(), moves: entry.moves_label(), shape: entry.shape_label() };
            boards.insert((key, config), board);
        }
    }
    Ok(boards)
}

pub(crate) fn table(store: &Store, id: Option<&str>) -> Result<Table> {
    let record = store.resolve(id)?;
    let sweep = store.sweep_of(&record)?;
    let rows = store.aggregates(&record, &sweep)?;
    Ok(Table { status: status_of(&record), rows })
}

pub(crate) fn export(store: &Store, id: Option<&str>) -> Result<Export> {
    let record = store.resolve(id)?;
    let sweep = store.sweep_of(&record)?;
    Ok(Export { status: status_of(&record), key: record.key, sweep })
}

pub(crate) fn export_page(
    store: &Store,
    export: &Export,
    after: Option<ExportCursor>,
    limit: usize,
) -> Result<ExportPage> {
    let limit = limit.max(1);
    let after = after.map(|c| (c.config, c.start_index, c.method));
    let records = store.results_page(export.key, after, limit)?;
    // Read per page: workers registered during a long export are named too.
    let workers = store.worker_records()?;
    let sweep_ids = store.sweep_ids()?;
    let mut labels = crate::export::RowLabels::new(&export.sweep, &workers, &sweep_ids);
    let rows = records.iter().map(|r| labels.row(r)).collect::<Result<_>>()?;
    let next = match records.last() {
        Some(last) if records.len() == limit => {
            Some(ExportCursor { config: last.config, start_index: last.start_index, method: last.method })
        }
        _ => None,
    };
    Ok(ExportPage { rows, next })
}

#[cfg(test)]
mod tests;
