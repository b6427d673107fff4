//! A sweep's status and aggregate rows as the coordinator reports them:
//! states, failed shards, contributors and work, decoded with checks.

use super::ConvertError;
use crate::v1 as pb;

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
            refuted: a.refuted,
            unsettled: a.unsettled,
            closed: a.closed,
            precision: a.precision.map(|c| pb::CellPrecision {
                asked: c.asked,
                low: c.low,
                high: c.high,
                settled: c.settled,
                reached: c.reached,
            }),
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
            refuted: r.refuted,
            unsettled: r.unsettled,
            closed: r.closed,
            precision: r.precision.map(|c| sweep::CellPrecision {
                asked: c.asked,
                low: c.low,
                high: c.high,
                settled: c.settled,
                reached: c.reached,
            }),
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
            seed: s.seed,
            error: s.error.unwrap_or_default(),
            spec_toml: s.spec_toml,
            rate_per_sec: s.rate_per_sec,
            eta_secs: s.eta.map(|d| d.as_secs_f64()),
            failed_shards: s.failed_shards.into_iter().map(pb::FailedShard::from).collect(),
            shards_waiting: s.waiting.shards,
            waiting_memory_bytes: s.waiting.memory_bytes,
            waiting_labels: s.waiting.labels,
            waiting_excluded: s.waiting.excluded,
            waiting_behind: s.waiting.behind,
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
            ended_runs_ms: s.runs.ended_ms,
            run_from_unix_ms: s.runs.current_from_unix_ms,
            last_result_unix_ms: s.runs.last_result_unix_ms,
            cpu_micros: s.cpu_micros,
            reused_cpu_micros: s.reused_cpu_micros,
            contributors: s.contributors.into_iter().map(pb::Contributor::from).collect(),
            work: s.work.map(|w| pb::Work {
                done_micros: w.done_micros,
                total_micros: w.total_micros,
                adaptive: w.adaptive.map(|c| pb::Cells {
                    settled: c.settled,
                    cells: c.cells,
                    most_micros: c.most_micros,
                }),
            }),
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
            seed: s.seed,
            started_unix_ms: s.started_unix_ms,
            finished_unix_ms: s.finished_unix_ms,
            runs: sweep::RunTimes {
                ended_ms: s.ended_runs_ms,
                current_from_unix_ms: s.run_from_unix_ms,
                last_result_unix_ms: s.last_result_unix_ms,
            },
            cpu_micros: s.cpu_micros,
            reused_cpu_micros: s.reused_cpu_micros,
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
                behind: s.waiting_behind,
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
    let adaptive = w.adaptive.map(|c| sweep::Cells {
        settled: c.settled.min(c.cells),
        cells: c.cells,
        most_micros: if valid(c.most_micros) { c.most_micros } else { 0.0 },
    });
    Ok(sweep::Work { done_micros: w.done_micros.min(w.total_micros), total_micros: w.total_micros, adaptive })
}
