//! The client-facing `Sweeps` service: submit, list, status, watch, cancel,
//! table, export.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use ksweep_proto::v1 as pb;
use sweep::Sweep;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::error::{Error, Result};
use crate::state::Shared;
use crate::store::{SweepRecord, SweepState};

/// Rows per export message: large enough to amortise framing, small enough
/// to stay far below the message size limit.
const EXPORT_PAGE: usize = 4096;

/// Handlers of `ksweep.v1.Sweeps`.
pub struct SweepsService {
    shared: Arc<Shared>,
}

impl SweepsService {
    pub fn new(shared: Arc<Shared>) -> SweepsService {
        SweepsService { shared }
    }
}

/// The status message of a stored sweep.
pub fn status_of(r: &SweepRecord) -> pb::SweepStatus {
    let state = match r.state {
        SweepState::Running => pb::SweepState::Running,
        SweepState::Done => pb::SweepState::Done,
        SweepState::Cancelled => pb::SweepState::Cancelled,
        SweepState::Failed => pb::SweepState::Failed,
    };
    pb::SweepStatus {
        sweep_id: r.id.clone(),
        name: r.name.clone(),
        state: state as i32,
        tasks_total: r.tasks_total,
        tasks_done: r.tasks_done,
        successes: r.successes,
        configurations: r.configurations,
        impossible_configurations: r.impossible,
        shards_failed: r.shards_failed,
        created_unix_ms: r.created_ms,
        error: r.error.clone().unwrap_or_default(),
        spec_toml: r.spec.clone(),
    }
}

fn optional_id(id: &str) -> Option<String> {
    (!id.is_empty()).then(|| id.to_string())
}

/// Aggregate rows of a stored sweep, as messages.
pub fn table_rows(shared_rows: Vec<sweep::AggregateRow>) -> Vec<pb::AggregateRow> {
    shared_rows
        .into_iter()
        .map(|a| pb::AggregateRow {
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
        })
        .collect()
}

impl SweepsService {
    async fn submit_spec(&self, text: String) -> Result<pb::SubmitReply> {
        let limit = self.shared.options.max_spec_bytes;
        if text.len() > limit {
            return Err(Error::Spec(sweep::SpecError::TooLarge { bytes: text.len(), max: limit }));
        }
        let sweep = Arc::new(Sweep::parse(&text)?);
        let for_store = sweep.clone();
        let (record, created) = self.shared.with_store(move |s| s.insert_sweep(&for_store)).await?;
        if record.state == SweepState::Running {
            let mut sched = self.shared.scheduler();
            if !sched.is_running(record.key) {
                sched.add_sweep(record.key, record.id.clone(), sweep, record.cursor, Vec::new());
            }
        }
        if created {
            tracing::info!(sweep = %record.id, name = %record.name, tasks = record.tasks_total, "sweep submitted");
        }
        self.shared.changed();
        Ok(pb::SubmitReply { sweep_id: record.id.clone(), created, status: Some(status_of(&record)) })
    }
}

type StatusStream = Pin<Box<dyn Stream<Item = Result<pb::SweepStatus, Status>> + Send>>;
type ExportStream = Pin<Box<dyn Stream<Item = Result<pb::ExportBatch, Status>> + Send>>;

#[tonic::async_trait]
impl pb::sweeps_server::Sweeps for SweepsService {
    async fn submit(&self, req: Request<pb::SubmitRequest>) -> Result<Response<pb::SubmitReply>, Status> {
        Ok(Response::new(self.submit_spec(req.into_inner().spec_toml).await?))
    }

    async fn list(&self, _req: Request<pb::ListRequest>) -> Result<Response<pb::ListReply>, Status> {
        let records = self.shared.with_store(|s| s.sweeps()).await?;
        Ok(Response::new(pb::ListReply { sweeps: records.iter().map(status_of).collect() }))
    }

    async fn status(&self, req: Request<pb::SweepRef>) -> Result<Response<pb::SweepStatus>, Status> {
        let record = self.shared.record(optional_id(&req.into_inner().sweep_id)).await?;
        Ok(Response::new(status_of(&record)))
    }

    type WatchStream = StatusStream;

    async fn watch(&self, req: Request<pb::SweepRef>) -> Result<Response<StatusStream>, Status> {
        let first = self.shared.record(optional_id(&req.into_inner().sweep_id)).await?;
        let (tx, rx) = mpsc::channel(4);
        let shared = self.shared.clone();
        let mut changes = shared.subscribe();
        tokio::spawn(async move {
            let id = first.id.clone();
            let mut last = None;
            loop {
                let record = match shared.record(Some(id.clone())).await {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = tx.send(Err(e.into())).await;
                        return;
                    }
                };
                let status = status_of(&record);
                if last.as_ref() != Some(&status) {
                    if tx.send(Ok(status.clone())).await.is_err() {
                        return; // the client went away
                    }
                    last = Some(status);
                }
                if record.state.is_terminal() {
                    return;
                }
                // Wake on progress, but at least once a second; end at once
                // when the coordinator shuts down.
                tokio::select! {
                    _ = shared.stopped() => {
                        let _ = tx.send(Err(Status::unavailable("the coordinator is shutting down"))).await;
                        return;
                    }
                    _ = tokio::time::timeout(Duration::from_secs(1), changes.changed()) => {}
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn cancel(&self, req: Request<pb::SweepRef>) -> Result<Response<pb::SweepStatus>, Status> {
        let record = self.shared.record(optional_id(&req.into_inner().sweep_id)).await?;
        if record.state == SweepState::Running {
            self.shared.cancel(record.key).await?;
            tracing::info!(sweep = %record.id, "sweep cancelled");
        }
        let record = self.shared.record(Some(record.id)).await?;
        Ok(Response::new(status_of(&record)))
    }

    async fn table(&self, req: Request<pb::SweepRef>) -> Result<Response<pb::TableReply>, Status> {
        let record = self.shared.record(optional_id(&req.into_inner().sweep_id)).await?;
        let for_store = record.clone();
        let rows = self
            .shared
            .with_store(move |s| {
                let sweep = Sweep::parse(&for_store.spec)?;
                s.aggregates(&for_store, &sweep)
            })
            .await?;
        Ok(Response::new(pb::TableReply { status: Some(status_of(&record)), rows: table_rows(rows) }))
    }

    type ExportStream = ExportStream;

    async fn export(&self, req: Request<pb::SweepRef>) -> Result<Response<ExportStream>, Status> {
        let record = self.shared.record(optional_id(&req.into_inner().sweep_id)).await?;
        let sweep = Arc::new(Sweep::parse(&record.spec).map_err(Error::from)?);
        let (tx, rx) = mpsc::channel(4);
        let shared = self.shared.clone();
        tokio::spawn(async move {
            let mut after = None;
            loop {
                let key = record.key;
                let page =
                    shared.with_store(move |s| Ok((s.results_page(key, after, EXPORT_PAGE)?, s.worker_names()?))).await;
                let (rows, names) = match page {
                    Ok(p) => p,
                    Err(e) => {
                        let _ = tx.send(Err(e.into())).await;
                        return;
                    }
                };
                let Some(last) = rows.last() else { return };
                after = Some((last.config, last.start_index, last.method));
                let batch = pb::ExportBatch {
                    rows: rows.iter().map(|r| crate::export::result_row(&sweep, r, &names)).collect(),
                };
                if tx.send(Ok(batch)).await.is_err() {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}
