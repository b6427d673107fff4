//! Every conversion between `ksweep.v1` messages and the domain types of
//! `tour` and `sweep`, in one place, so both ends of the wire agree by
//! construction. Encoding is total; decoding a peer's message returns a
//! [`ConvertError`] naming the field, never panics.

use sweep::{ConfigEntry, MoveSpec, Sweep};
use tour::{Board, Configuration, Method, Moves, TaskResult};

use crate::v1 as pb;

/// Why a message from a peer does not decode; names the field.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("{field}: missing")]
    Missing { field: &'static str },
    #[error("{field}: {value} is not a known value")]
    UnknownValue { field: &'static str, value: i32 },
    #[error("{field}: {why}")]
    Invalid { field: &'static str, why: String },
    /// The engine refused the value (a board, a move set, a method name).
    #[error("{field}: {error}")]
    Engine { field: &'static str, error: tour::Error },
}

impl ConvertError {
    /// The message field at fault, as `Message.field`.
    pub fn field(&self) -> &'static str {
        match self {
            ConvertError::Missing { field }
            | ConvertError::UnknownValue { field, .. }
            | ConvertError::Invalid { field, .. }
            | ConvertError::Engine { field, .. } => field,
        }
    }
}

// ------------------------------------------------------------------ outcomes

impl From<tour::Outcome> for pb::Outcome {
    fn from(o: tour::Outcome) -> pb::Outcome {
        match o {
            tour::Outcome::Tour => pb::Outcome::Tour,
            tour::Outcome::NoTour => pb::Outcome::NoTour,
            tour::Outcome::GaveUp => pb::Outcome::GaveUp,
        }
    }
}

/// The enum code of an outcome, as message fields hold it.
pub fn outcome_code(o: tour::Outcome) -> i32 {
    pb::Outcome::from(o) as i32
}

/// The outcome an enum code names: None for `OUTCOME_UNSPECIFIED` (a peer
/// that predates outcomes), an error for a value this build does not know.
pub fn outcome(code: i32, field: &'static str) -> Result<Option<tour::Outcome>, ConvertError> {
    match pb::Outcome::try_from(code) {
        Ok(pb::Outcome::Unspecified) => Ok(None),
        Ok(pb::Outcome::Tour) => Ok(Some(tour::Outcome::Tour)),
        Ok(pb::Outcome::NoTour) => Ok(Some(tour::Outcome::NoTour)),
        Ok(pb::Outcome::GaveUp) => Ok(Some(tour::Outcome::GaveUp)),
        Err(_) => Err(ConvertError::UnknownValue { field, value: code }),
    }
}

// ------------------------------------------------------------------- tasks

/// A finished task's message: `start_offset` indexes the shard's starts,
/// `method_index` its methods.
pub fn task_done(start_offset: u32, method_index: u32, r: &TaskResult) -> pb::TaskOutcome {
    pb::TaskOutcome {
        start_offset,
        method_index,
        success: r.success,
        attempts: r.attempts,
        visited: r.visited,
        micros: r.micros,
        error: String::new(),
        outcome: outcome_code(r.outcome),
    }
}

/// A task that could not run (it panicked): the error, every count 0.
pub fn task_failed(start_offset: u32, method_index: u32, error: String) -> pb::TaskOutcome {
    pb::TaskOutcome { start_offset, method_index, error, ..Default::default() }
}

/// What a reported task found. A worker that predates outcomes sends none:
/// its success is a tour, anything else gave up.
pub fn task_outcome(t: &pb::TaskOutcome) -> Result<tour::Outcome, ConvertError> {
    Ok(outcome(t.outcome, "TaskOutcome.outcome")?.unwrap_or(if t.success {
        tour::Outcome::Tour
    } else {
        tour::Outcome::GaveUp
    }))
}

/// Longest error text kept from a worker (per task or shard): enough for
/// a panic message, never a whole spec or a flood.
pub const MAX_ERROR_CHARS: usize = 1000;

/// A worker's error text as kept: None when empty, cut after
/// [`MAX_ERROR_CHARS`] characters (the cut says how long it was).
pub fn reported_error(text: String) -> Option<String> {
    if text.is_empty() {
        return None;
    }
    match text.char_indices().nth(MAX_ERROR_CHARS) {
        Some((cut, _)) => Some(format!("{}... ({} bytes)", &text[..cut], text.len())),
        None => Some(text),
    }
}

impl TryFrom<pb::TaskOutcome> for sweep::TaskReport {
    type Error = ConvertError;

    /// A reported task as the coordinator checks it; an outcome code this
    /// build does not know is refused.
    fn try_from(t: pb::TaskOutcome) -> Result<sweep::TaskReport, ConvertError> {
        Ok(sweep::TaskReport {
            outcome: task_outcome(&t)?,
            start_offset: t.start_offset,
            method_index: t.method_index,
            success: t.success,
            attempts: t.attempts,
            visited: t.visited,
            micros: t.micros,
            error: reported_error(t.error),
        })
    }
}

// ------------------------------------------------------------ aggregates

impl From<sweep::AggregateRow> for pb::AggregateRow {
    fn from(a: sweep::AggregateRow) -> pb::AggregateRow {
        pb::AggregateRow {
            config: a.config,
            moves: a.moves,
            dims: a.dims,
            shape: a.shape,
            n: a.n,
            method: a.method,
            impossible: a.impossible,
            tasks: a.tasks,
            successes: a.successes,
            mean_micros: a.mean_micros,
            median_micros: a.median_micros,
            mean_attempts: a.mean_attempts,
            no_tour: a.no_tour,
            open_tour: a.open_tour,
            closed_tour: a.closed_tour,
        }
    }
}

impl From<pb::AggregateRow> for sweep::AggregateRow {
    fn from(r: pb::AggregateRow) -> sweep::AggregateRow {
        sweep::AggregateRow {
            config: r.config,
            moves: r.moves,
            dims: r.dims,
            shape: r.shape,
            n: r.n,
            method: r.method,
            impossible: r.impossible,
            tasks: r.tasks,
            successes: r.successes,
            no_tour: r.no_tour,
            mean_micros: r.mean_micros,
            median_micros: r.median_micros,
            mean_attempts: r.mean_attempts,
            open_tour: r.open_tour,
            closed_tour: r.closed_tour,
        }
    }
}

// ---------------------------------------------------------------- statuses

impl From<sweep::SweepState> for pb::SweepState {
    fn from(s: sweep::SweepState) -> pb::SweepState {
        match s {
            sweep::SweepState::Running => pb::SweepState::Running,
            sweep::SweepState::Done => pb::SweepState::Done,
            sweep::SweepState::Cancelled => pb::SweepState::Cancelled,
            sweep::SweepState::Failed => pb::SweepState::Failed,
            sweep::SweepState::Stopped => pb::SweepState::Stopped,
        }
    }
}

/// The sweep state an enum code names; `SWEEP_STATE_UNSPECIFIED` (a
/// status without one) and codes this build does not know are refused.
pub fn sweep_state(code: i32, field: &'static str) -> Result<sweep::SweepState, ConvertError> {
    match pb::SweepState::try_from(code) {
        Ok(pb::SweepState::Running) => Ok(sweep::SweepState::Running),
        Ok(pb::SweepState::Done) => Ok(sweep::SweepState::Done),
        Ok(pb::SweepState::Cancelled) => Ok(sweep::SweepState::Cancelled),
        Ok(pb::SweepState::Failed) => Ok(sweep::SweepState::Failed),
        Ok(pb::SweepState::Stopped) => Ok(sweep::SweepState::Stopped),
        Ok(pb::SweepState::Unspecified) => Err(ConvertError::Missing { field }),
        Err(_) => Err(ConvertError::UnknownValue { field, value: code }),
    }
}

impl From<sweep::FailedShard> for pb::FailedShard {
    fn from(f: sweep::FailedShard) -> pb::FailedShard {
        pb::FailedShard {
            shard_id: f.shard_id,
            config: f.config,
            board: f.board,
            moves: f.moves,
            start_lo: f.start_lo,
            start_hi: f.start_hi,
            error: f.error,
        }
    }
}

impl TryFrom<pb::FailedShard> for sweep::FailedShard {
    type Error = ConvertError;

    /// A failed shard; one whose starts end before they begin is refused.
    fn try_from(f: pb::FailedShard) -> Result<sweep::FailedShard, ConvertError> {
        if f.start_hi < f.start_lo {
            return Err(ConvertError::Invalid {
                field: "FailedShard.start_hi",
                why: format!("{} is below start_lo {}", f.start_hi, f.start_lo),
            });
        }
        Ok(sweep::FailedShard {
            shard_id: f.shard_id,
            config: f.config,
            board: f.board,
            moves: f.moves,
            start_lo: f.start_lo,
            start_hi: f.start_hi,
            error: f.error,
        })
    }
}

impl From<sweep::SweepStatus> for pb::SweepStatus {
    fn from(s: sweep::SweepStatus) -> pb::SweepStatus {
        pb::SweepStatus {
            sweep_id: s.sweep_id,
            name: s.name,
            state: pb::SweepState::from(s.state) as i32,
            tasks_total: s.tasks_total,
            tasks_done: s.tasks_done,
            successes: s.successes,
            configurations: s.configurations,
            impossible_configurations: s.impossible_configurations,
            shards_failed: s.shards_failed,
            created_unix_ms: s.created_unix_ms,
            error: s.error.unwrap_or_default(),
            spec_toml: s.spec_toml,
            rate_per_sec: s.rate_per_sec,
            eta_secs: s.eta.map(|d| d.as_secs_f64()),
            failed_shards: s.failed_shards.into_iter().map(pb::FailedShard::from).collect(),
            shards_waiting: s.waiting.shards,
            waiting_memory_bytes: s.waiting.memory_bytes,
            waiting_labels: s.waiting.labels,
            waiting_excluded: s.waiting.excluded,
            reuse: Some(pb::Reuse {
                tasks: s.reuse.tasks,
                from: s
                    .reuse
                    .from
                    .into_iter()
                    .map(|f| pb::ReusedFrom { sweep_id: f.sweep_id, name: f.name, tasks: f.tasks })
                    .collect(),
                conflicts: s.reuse.conflicts,
                no_reuse: s.reuse.no_reuse,
            }),
            started_unix_ms: s.started_unix_ms,
            finished_unix_ms: s.finished_unix_ms,
            cpu_micros: s.cpu_micros,
            contributors: s.contributors.into_iter().map(pb::Contributor::from).collect(),
            work: s.work.map(|w| pb::Work { done_micros: w.done_micros, total_micros: w.total_micros }),
        }
    }
}

impl From<sweep::Contributor> for pb::Contributor {
    fn from(c: sweep::Contributor) -> pb::Contributor {
        let provenance =
            pb::Provenance { version: c.version, build: c.build, host: c.host, cpu: c.cpu, features: c.features };
        pb::Contributor { name: c.name, provenance: Some(provenance), tasks: c.tasks, cpu_micros: c.cpu_micros }
    }
}

/// A contributor as the coordinator sent it; without a provenance, its
/// build and machine read as not recorded.
impl From<pb::Contributor> for sweep::Contributor {
    fn from(c: pb::Contributor) -> sweep::Contributor {
        let p = c.provenance.unwrap_or_default();
        sweep::Contributor {
            name: c.name,
            version: p.version,
            build: p.build,
            host: p.host,
            cpu: p.cpu,
            features: p.features,
            tasks: c.tasks,
            cpu_micros: c.cpu_micros,
        }
    }
}

impl TryFrom<pb::SweepStatus> for sweep::SweepStatus {
    type Error = ConvertError;

    /// A coordinator's status: its state must be one this build knows, its
    /// ETA a duration, its failed shards well formed.
    fn try_from(s: pb::SweepStatus) -> Result<sweep::SweepStatus, ConvertError> {
        let eta = s
            .eta_secs
            .map(|secs| {
                std::time::Duration::try_from_secs_f64(secs)
                    .map_err(|e| ConvertError::Invalid { field: "SweepStatus.eta_secs", why: format!("{secs}: {e}") })
            })
            .transpose()?;
        Ok(sweep::SweepStatus {
            state: sweep_state(s.state, "SweepStatus.state")?,
            sweep_id: s.sweep_id,
            name: s.name,
            tasks_total: s.tasks_total,
            tasks_done: s.tasks_done,
            successes: s.successes,
            configurations: s.configurations,
            impossible_configurations: s.impossible_configurations,
            shards_failed: s.shards_failed,
            created_unix_ms: s.created_unix_ms,
            started_unix_ms: s.started_unix_ms,
            finished_unix_ms: s.finished_unix_ms,
            cpu_micros: s.cpu_micros,
            contributors: s.contributors.into_iter().map(sweep::Contributor::from).collect(),
            error: (!s.error.is_empty()).then_some(s.error),
            spec_toml: s.spec_toml,
            rate_per_sec: s.rate_per_sec,
            eta,
            failed_shards: s.failed_shards.into_iter().map(sweep::FailedShard::try_from).collect::<Result<_, _>>()?,
            waiting: sweep::Waiting {
                shards: s.shards_waiting,
                memory_bytes: s.waiting_memory_bytes,
                labels: s.waiting_labels,
                excluded: s.waiting_excluded,
            },
            reuse: s.reuse.map_or_else(sweep::Reuse::default, |r| sweep::Reuse {
                tasks: r.tasks,
                from: r
                    .from
                    .into_iter()
                    .map(|f| sweep::ReusedFrom { sweep_id: f.sweep_id, name: f.name, tasks: f.tasks })
                    .collect(),
                conflicts: r.conflicts,
                no_reuse: r.no_reuse,
            }),
            work: s.work.map(work).transpose()?,
        })
    }
}

/// A sweep's work as a coordinator sent it: finite, not negative, the done
/// part within the whole.
fn work(w: pb::Work) -> Result<sweep::Work, ConvertError> {
    let valid = |x: f64| x.is_finite() && x >= 0.0;
    if !(valid(w.done_micros) && valid(w.total_micros)) {
        return Err(ConvertError::Invalid {
            field: "SweepStatus.work",
            why: format!("done {} of {} micros", w.done_micros, w.total_micros),
        });
    }
    Ok(sweep::Work { done_micros: w.done_micros.min(w.total_micros), total_micros: w.total_micros })
}

// ----------------------------------------------------------- result rows

impl From<sweep::Removal> for pb::RemoveReply {
    fn from(r: sweep::Removal) -> pb::RemoveReply {
        pb::RemoveReply { sweep_id: r.sweep_id, name: r.name, tasks_deleted: r.tasks_deleted, tasks_kept: r.tasks_kept }
    }
}

impl From<pb::RemoveReply> for sweep::Removal {
    fn from(r: pb::RemoveReply) -> sweep::Removal {
        sweep::Removal { sweep_id: r.sweep_id, name: r.name, tasks_deleted: r.tasks_deleted, tasks_kept: r.tasks_kept }
    }
}

impl From<sweep::ResultRow> for pb::ResultRow {
    fn from(r: sweep::ResultRow) -> pb::ResultRow {
        pb::ResultRow {
            config: r.config,
            moves: r.moves,
            dims: r.dims,
            shape: r.shape,
            method: r.method,
            start: r.start,
            success: r.success,
            attempts: r.attempts,
            visited: r.visited,
            micros: r.micros,
            worker: r.worker,
            worker_version: r.worker_version,
            worker_host: r.worker_host,
            worker_cpu: r.worker_cpu,
            worker_features: r.worker_features,
            computed_by: r.computed_by,
            // Deprecated: failed tasks are not stored, so no row has one.
            error: String::new(),
            start_index: r.start_index,
            outcome: r.outcome.map_or(pb::Outcome::Unspecified as i32, outcome_code),
        }
    }
}

impl TryFrom<pb::ResultRow> for sweep::ResultRow {
    type Error = ConvertError;

    /// An exported result; an outcome code this build does not know is
    /// refused, none at all (a worker that predates outcomes) is None.
    fn try_from(r: pb::ResultRow) -> Result<sweep::ResultRow, ConvertError> {
        Ok(sweep::ResultRow {
            outcome: outcome(r.outcome, "ResultRow.outcome")?,
            config: r.config,
            moves: r.moves,
            dims: r.dims,
            shape: r.shape,
            method: r.method,
            start: r.start,
            start_index: r.start_index,
            success: r.success,
            attempts: r.attempts,
            visited: r.visited,
            micros: r.micros,
            worker: r.worker,
            worker_version: r.worker_version,
            worker_host: r.worker_host,
            worker_cpu: r.worker_cpu,
            worker_features: r.worker_features,
            computed_by: r.computed_by,
        })
    }
}

// ------------------------------------------------------------------ boards

/// The board configuration message of a sweep's configuration, with the
/// sweep's cell limit (`max_cells`).
pub fn board_config(entry: &ConfigEntry, max_cells: u64) -> pb::BoardConfig {
    let (rule, moves_flat) = match &entry.moves {
        MoveSpec::Rule(rule) => (rule.clone(), Vec::new()),
        MoveSpec::List(list) => (Vec::new(), list.iter().flatten().copied().collect()),
    };
    pb::BoardConfig { sides: entry.sides.clone(), rule, moves_flat, max_cells }
}

impl TryFrom<&pb::BoardConfig> for Configuration {
    type Error = ConvertError;

    /// The engine's configuration; `max_cells` 0 is the engine's default.
    fn try_from(c: &pb::BoardConfig) -> Result<Configuration, ConvertError> {
        let max_cells = if c.max_cells == 0 { tour::DEFAULT_MAX_CELLS } else { c.max_cells };
        let board = Board::with_max_cells(&c.sides, max_cells)
            .map_err(|error| ConvertError::Engine { field: "BoardConfig.sides", error })?;
        let dims = board.dims();
        let moves = match (c.rule.is_empty(), c.moves_flat.is_empty()) {
            (false, false) => {
                return Err(ConvertError::Invalid {
                    field: "BoardConfig.rule",
                    why: "a rule and a move list (moves_flat) are both set; send one".into(),
                })
            }
            (false, true) => Moves::from_rule(&c.rule, dims)
                .map_err(|error| ConvertError::Engine { field: "BoardConfig.rule", error })?,
            (true, _) => {
                if !c.moves_flat.len().is_multiple_of(dims) {
                    return Err(ConvertError::Invalid {
                        field: "BoardConfig.moves_flat",
                        why: format!("{} components is not a multiple of {dims} dims", c.moves_flat.len()),
                    });
                }
                let list: Vec<Vec<i64>> = c.moves_flat.chunks(dims).map(<[i64]>::to_vec).collect();
                Moves::explicit(&list, dims)
                    .map_err(|error| ConvertError::Engine { field: "BoardConfig.moves_flat", error })?
            }
        };
        Configuration::new(board, moves).map_err(|error| ConvertError::Engine { field: "BoardConfig", error })
    }
}

// ------------------------------------------------------------------ shards

/// The message for a shard of `sweep`: lease (`shard_id`, `epoch`), the
/// configuration `entry`, the methods it runs (the sweep's, less those the
/// configuration took from stored results) and its start cells in order.
pub fn shard(
    shard_id: u64,
    epoch: u64,
    sweep_id: &str,
    sweep: &Sweep,
    entry: &ConfigEntry,
    methods: &[Method],
    starts: &[u64],
) -> pb::Shard {
    pb::Shard {
        shard_id,
        epoch,
        sweep_id: sweep_id.to_string(),
        sweep_seed: sweep.seed(),
        config: Some(board_config(entry, sweep.limits().max_cells)),
        methods: methods.iter().map(|m| m.name().to_string()).collect(),
        starts: starts.to_vec(),
        budget: sweep.budget(),
        iterations: sweep.iterations(),
        closed: sweep.closed(),
    }
}

/// What a shard asks a worker to run, decoded and checked against its board.
#[derive(Debug)]
pub struct ShardWork {
    pub configuration: Configuration,
    pub methods: Vec<Method>,
    /// Start cells, each on the board.
    pub starts: Vec<u64>,
    pub sweep_seed: u64,
    /// Node budget of `bt` (the engine's default when the message says 0).
    pub budget: u64,
    /// Iteration cap of `nn` (the engine's default when the message says 0).
    pub iterations: u32,
    /// Closed tours asked of solve and bt.
    pub closed: bool,
}

impl ShardWork {
    /// The options of one of the shard's tasks, with its task seed.
    pub fn options(&self, seed: u64) -> tour::TaskOptions {
        tour::TaskOptions {
            seed,
            record_path: false,
            budget: self.budget,
            iterations: self.iterations,
            closed: self.closed,
        }
    }
}

impl TryFrom<&pb::Shard> for ShardWork {
    type Error = ConvertError;

    fn try_from(s: &pb::Shard) -> Result<ShardWork, ConvertError> {
        let configuration =
            Configuration::try_from(s.config.as_ref().ok_or(ConvertError::Missing { field: "Shard.config" })?)?;
        let methods = s
            .methods
            .iter()
            .map(|m| m.parse::<Method>().map_err(|error| ConvertError::Engine { field: "Shard.methods", error }))
            .collect::<Result<Vec<_>, _>>()?;
        let cells = configuration.board().cells();
        if let Some(&off) = s.starts.iter().find(|&&start| start >= cells) {
            return Err(ConvertError::Invalid {
                field: "Shard.starts",
                why: format!("cell {off} is off the {} board", configuration.board()),
            });
        }
        let defaults = tour::TaskOptions::default();
        Ok(ShardWork {
            configuration,
            methods,
            starts: s.starts.clone(),
            sweep_seed: s.sweep_seed,
            budget: if s.budget == 0 { defaults.budget } else { s.budget },
            iterations: if s.iterations == 0 { defaults.iterations } else { s.iterations },
            closed: s.closed,
        })
    }
}

impl From<crate::build::Provenance> for pb::Provenance {
    fn from(p: crate::build::Provenance) -> pb::Provenance {
        pb::Provenance { version: p.version, build: p.build, host: p.host, cpu: p.cpu, features: p.features }
    }
}

/// A registration's provenance; a worker too old to send one is recorded
/// with empty texts.
impl From<pb::Provenance> for crate::build::Provenance {
    fn from(p: pb::Provenance) -> crate::build::Provenance {
        crate::build::Provenance { version: p.version, build: p.build, host: p.host, cpu: p.cpu, features: p.features }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"
        name = "convert"
        seed = 5
        starts = 4
        methods = ["w", "aw+", "wr"]
        budget = 1234
        [[grid]]
        rule = [2, 1]
        dims = [2, 3]
        n = [5]
        [[grid]]
        moves = [[1, 2], [-2, 1], [-1, -2], [2, -1]]
        shapes = [[4, 6]]
    "#;

    fn task_result(outcome: tour::Outcome) -> TaskResult {
        TaskResult {
            success: outcome == tour::Outcome::Tour,
            outcome,
            attempts: 3,
            visited: 25,
            micros: 17,
            path: None,
        }
    }

    #[test]
    fn outcomes_round_trip() {
        for o in [tour::Outcome::Tour, tour::Outcome::NoTour, tour::Outcome::GaveUp] {
            assert_eq!(outcome(outcome_code(o), "f").unwrap(), Some(o));
            let t = task_done(2, 1, &task_result(o));
            assert_eq!((t.start_offset, t.method_index, t.attempts, t.visited, t.micros), (2, 1, 3, 25, 17));
            assert_eq!(task_outcome(&t).unwrap(), o);
        }
        assert_eq!(outcome(pb::Outcome::Unspecified as i32, "f").unwrap(), None);
    }

    #[test]
    fn an_unknown_outcome_is_refused_by_name() {
        let t = pb::TaskOutcome { outcome: 9, success: true, ..Default::default() };
        let e = task_outcome(&t).unwrap_err();
        assert_eq!(e.field(), "TaskOutcome.outcome");
        assert!(matches!(e, ConvertError::UnknownValue { value: 9, .. }), "{e}");
    }

    #[test]
    fn a_worker_without_outcomes_reads_as_success_or_gave_up() {
        let ok = pb::TaskOutcome { success: true, ..Default::default() };
        assert_eq!(task_outcome(&ok).unwrap(), tour::Outcome::Tour);
        assert_eq!(task_outcome(&pb::TaskOutcome::default()).unwrap(), tour::Outcome::GaveUp);
        let failed = task_failed(1, 2, "boom".into());
        assert_eq!((failed.error.as_str(), failed.success, failed.attempts), ("boom", false, 0));
    }

    #[test]
    fn a_reported_task_decodes_with_its_error_cut() {
        let long = "x".repeat(MAX_ERROR_CHARS + 5);
        let t = pb::TaskOutcome { start_offset: 3, method_index: 1, error: long, ..Default::default() };
        let report = sweep::TaskReport::try_from(t).unwrap();
        assert_eq!((report.start_offset, report.method_index, report.outcome), (3, 1, tour::Outcome::GaveUp));
        let error = report.error.unwrap();
        assert!(error.ends_with(&format!("... ({} bytes)", MAX_ERROR_CHARS + 5)), "{error}");
        assert_eq!(reported_error(String::new()), None);
        let bad = pb::TaskOutcome { outcome: 9, ..Default::default() };
        assert_eq!(sweep::TaskReport::try_from(bad).unwrap_err().field(), "TaskOutcome.outcome");
    }

    #[test]
    fn aggregate_rows_round_trip() {
        let row = sweep::AggregateRow {
            config: 3,
            moves: "2,1".into(),
            dims: 2,
            shape: "8x8".into(),
            n: Some(8),
            method: "aw+".into(),
            impossible: false,
            tasks: 100,
            successes: 97,
            no_tour: 2,
            mean_micros: 1.5,
            median_micros: 1.25,
            mean_attempts: 1.01,
            open_tour: "exists".into(),
            closed_tour: "unknown".into(),
        };
        let wire = pb::AggregateRow::from(row.clone());
        assert_eq!(sweep::AggregateRow::from(wire), row);
        let irregular = sweep::AggregateRow { n: None, ..row };
        assert_eq!(sweep::AggregateRow::from(pb::AggregateRow::from(irregular.clone())), irregular);
    }

    fn sweep_status() -> sweep::SweepStatus {
        sweep::SweepStatus {
            sweep_id: "0123abcd".into(),
            name: "convert".into(),
            state: sweep::SweepState::Running,
            tasks_total: 100,
            tasks_done: 40,
            successes: 38,
            configurations: 3,
            impossible_configurations: 1,
            shards_failed: 2,
            created_unix_ms: 1_700_000_000_000,
            started_unix_ms: Some(1_700_000_001_000),
            finished_unix_ms: None,
            cpu_micros: Some(123_456),
            contributors: vec![sweep::Contributor {
                name: "node-1".into(),
                version: "0.1.0".into(),
                build: "abc123-dirty".into(),
                host: "node-1.lab".into(),
                cpu: "Some CPU".into(),
                features: vec!["sse4.1".into(), "ssse3".into()],
                tasks: 40,
                cpu_micros: 123_456,
            }],
            error: None,
            spec_toml: "name = \"convert\"\n".into(),
            rate_per_sec: Some(12.5),
            eta: Some(std::time::Duration::from_millis(4800)),
            failed_shards: vec![sweep::FailedShard {
                shard_id: 7,
                config: 1,
                board: "5x5".into(),
                moves: "2,1".into(),
                start_lo: 0,
                start_hi: 4,
                error: "boom".into(),
            }],
            waiting: sweep::Waiting { shards: 2, memory_bytes: 1 << 30, labels: vec!["bigmem".into()], excluded: 3 },
            reuse: sweep::Reuse {
                tasks: 30,
                from: vec![sweep::ReusedFrom { sweep_id: "fedc".into(), name: "quick".into(), tasks: 30 }],
                conflicts: 1,
                no_reuse: false,
            },
            work: Some(sweep::Work { done_micros: 1.5e6, total_micros: 4e6 }),
        }
    }

    #[test]
    fn sweep_statuses_round_trip() {
        let status = sweep_status();
        let wire = pb::SweepStatus::from(status.clone());
        assert_eq!(wire.state, pb::SweepState::Running as i32);
        assert_eq!((wire.eta_secs, wire.error.as_str()), (Some(4.8), ""));
        assert_eq!((wire.shards_waiting, wire.waiting_labels.len(), wire.failed_shards.len()), (2, 1, 1));
        assert_eq!(wire.waiting_excluded, 3);
        assert_eq!(
            (wire.started_unix_ms, wire.finished_unix_ms, wire.cpu_micros),
            (Some(1_700_000_001_000), None, Some(123_456))
        );
        let provenance = wire.contributors[0].provenance.as_ref().unwrap();
        assert_eq!((provenance.build.as_str(), provenance.features.len()), ("abc123-dirty", 2));
        assert_eq!(sweep::SweepStatus::try_from(wire).unwrap(), status);
        for state in [sweep::SweepState::Done, sweep::SweepState::Cancelled, sweep::SweepState::Failed] {
            let ended = sweep::SweepStatus {
                state,
                error: Some("some shards failed on every retry".into()),
                rate_per_sec: None,
                eta: None,
                failed_shards: Vec::new(),
                waiting: sweep::Waiting::default(),
                finished_unix_ms: Some(1_700_000_009_000),
                cpu_micros: None,
                contributors: Vec::new(),
                ..sweep_status()
            };
            assert_eq!(sweep::SweepStatus::try_from(pb::SweepStatus::from(ended.clone())).unwrap(), ended);
        }
    }

    #[test]
    fn a_contributor_without_provenance_reads_as_not_recorded() {
        let wire = pb::Contributor { name: "old".into(), provenance: None, tasks: 3, cpu_micros: 9 };
        let c = sweep::Contributor::from(wire);
        assert_eq!((c.name.as_str(), c.tasks, c.cpu_micros, c.build_label()), ("old", 3, 9, String::new()));
    }

    #[test]
    fn a_status_without_a_known_state_is_refused_by_name() {
        let unknown = pb::SweepStatus { state: 9, ..pb::SweepStatus::from(sweep_status()) };
        let e = sweep::SweepStatus::try_from(unknown).unwrap_err();
        assert_eq!(e.field(), "SweepStatus.state");
        assert!(matches!(e, ConvertError::UnknownValue { value: 9, .. }), "{e}");
        let e = sweep::SweepStatus::try_from(pb::SweepStatus::default()).unwrap_err();
        assert!(matches!(e, ConvertError::Missing { field: "SweepStatus.state" }), "{e}");
    }

    #[test]
    fn a_status_with_a_bad_eta_or_failed_shard_is_refused_by_name() {
        let wire = pb::SweepStatus::from(sweep_status());
        for eta in [-1.0, f64::NAN, f64::INFINITY] {
            let bad = pb::SweepStatus { eta_secs: Some(eta), ..wire.clone() };
            assert_eq!(sweep::SweepStatus::try_from(bad).unwrap_err().field(), "SweepStatus.eta_secs");
        }
        let mut bad = wire;
        bad.failed_shards[0].start_lo = 5;
        assert_eq!(sweep::SweepStatus::try_from(bad).unwrap_err().field(), "FailedShard.start_hi");
    }

    #[test]
    fn result_rows_round_trip() {
        let row = sweep::ResultRow {
            config: 2,
            moves: "2,1".into(),
            dims: 2,
            shape: "5x5".into(),
            method: "aw+".into(),
            start: vec![0, 3],
            start_index: 11,
            success: false,
            outcome: Some(tour::Outcome::NoTour),
            attempts: 3,
            visited: 24,
            micros: 17,
            worker: "node-1".into(),
            worker_version: "0.1.0 (abc123)".into(),
            worker_host: "node-1.lab".into(),
            worker_cpu: "Some CPU @ 3 GHz".into(),
            worker_features: "sse4.1 ssse3".into(),
            computed_by: "0123abcd".into(),
        };
        let wire = pb::ResultRow::from(row.clone());
        assert_eq!((wire.outcome, wire.error.as_str()), (pb::Outcome::NoTour as i32, ""));
        assert_eq!(sweep::ResultRow::try_from(wire).unwrap(), row);
        let old_worker = sweep::ResultRow { outcome: None, ..row };
        let wire = pb::ResultRow::from(old_worker.clone());
        assert_eq!(wire.outcome, pb::Outcome::Unspecified as i32);
        assert_eq!(sweep::ResultRow::try_from(wire).unwrap(), old_worker);
        let unknown = pb::ResultRow { outcome: 9, ..Default::default() };
        assert_eq!(sweep::ResultRow::try_from(unknown).unwrap_err().field(), "ResultRow.outcome");
    }

    #[test]
    fn every_configuration_of_a_sweep_round_trips_through_a_shard() {
        let sweep = Sweep::parse(SPEC).unwrap();
        assert!(sweep.configurations().len() >= 3);
        for entry in sweep.configurations() {
            let starts: Vec<u64> = (0..entry.cells().min(4)).collect();
            let message = shard(7, 2, "sweep-id", &sweep, entry, sweep.methods(), &starts);
            assert_eq!((message.shard_id, message.epoch, message.sweep_id.as_str()), (7, 2, "sweep-id"));
            let work = ShardWork::try_from(&message).unwrap();
            assert_eq!(work.configuration, entry.configuration());
            assert_eq!(work.methods, sweep.methods());
            assert_eq!(work.starts, starts);
            assert_eq!((work.sweep_seed, work.budget, work.iterations), (5, 1234, sweep.iterations()));
        }
    }

    fn good_shard() -> pb::Shard {
        pb::Shard {
            config: Some(pb::BoardConfig { sides: vec![8, 8], rule: vec![2, 1], ..Default::default() }),
            methods: vec!["w".into()],
            starts: vec![0, 63],
            ..Default::default()
        }
    }

    #[test]
    fn zeros_mean_the_engine_defaults() {
        let work = ShardWork::try_from(&good_shard()).unwrap();
        assert_eq!((work.budget, work.iterations), (tour::DEFAULT_BUDGET, tour::DEFAULT_ITERATIONS));
        assert_eq!(work.configuration.board().cells(), 64);
    }

    /// A change that breaks a good shard.
    type Breakage = Box<dyn Fn(&mut pb::Shard)>;

    #[test]
    fn bad_shards_are_refused_naming_the_field() {
        let cases: Vec<(&str, Breakage)> = vec![
            ("Shard.config", Box::new(|s| s.config = None)),
            ("Shard.methods", Box::new(|s| s.methods = vec!["nope".into()])),
            ("Shard.starts", Box::new(|s| s.starts = vec![0, 64])),
            ("BoardConfig.sides", Box::new(|s| s.config.as_mut().unwrap().sides = vec![8, 0])),
            ("BoardConfig.sides", Box::new(|s| s.config.as_mut().unwrap().sides = vec![])),
            ("BoardConfig.sides", Box::new(|s| s.config.as_mut().unwrap().max_cells = 10)),
            ("BoardConfig.rule", Box::new(|s| s.config.as_mut().unwrap().rule = vec![0, 0])),
            ("BoardConfig.rule", Box::new(|s| s.config.as_mut().unwrap().moves_flat = vec![1, 2])),
            (
                "BoardConfig.moves_flat",
                Box::new(|s| {
                    let c = s.config.as_mut().unwrap();
                    c.rule.clear();
                    c.moves_flat = vec![1, 2, 3];
                }),
            ),
            (
                "BoardConfig.moves_flat",
                Box::new(|s| {
                    let c = s.config.as_mut().unwrap();
                    c.rule.clear();
                    c.moves_flat = vec![0, 0];
                }),
            ),
        ];
        for (field, break_it) in cases {
            let mut s = good_shard();
            break_it(&mut s);
            let e = ShardWork::try_from(&s).expect_err(field);
            assert_eq!(e.field(), field, "{e}");
            assert!(e.to_string().starts_with(field), "{e}");
        }
    }
}
