//! The client-facing `Sweeps` service: submit, list, status, watch, cancel,
//! table, export. It answers from [`crate::query`]'s domain types and
//! converts them to messages here, at the edge (`ksweep_proto::convert`).

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
use crate::query::{self, status_of};
use crate::state::{blocking, Sent, Shared};
use crate::store::SweepState;

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

/// Longest sweep id (or prefix) a request may name; longer ones are
/// refused without being echoed back.
const MAX_ID_CHARS: usize = 64;

/// The sweep a request names, or None for "the only one".
fn optional_id(id: &str) -> Result<Option<String>> {
    if id.len() > MAX_ID_CHARS {
        return Err(Error::Refused(format!("SweepRef.sweep_id: at most {MAX_ID_CHARS} characters, got {}", id.len())));
    }
    Ok((!id.is_empty()).then(|| id.to_string()))
}

/// Aggregate rows of a stored sweep, as messages.
pub fn table_rows(rows: Vec<sweep::AggregateRow>) -> Vec<pb::AggregateRow> {
    rows.into_iter().map(pb::AggregateRow::from).collect()
}

/// Export rows as one message.
fn export_batch(rows: Vec<sweep::ResultRow>) -> pb::ExportBatch {
    pb::ExportBatch { rows: rows.into_iter().map(pb::ResultRow::from).collect() }
}

impl SweepsService {
    async fn submit_spec(&self, text: String, resume: bool, reuse: bool) -> Result<pb::SubmitReply> {
        let limit = self.shared.options.max_spec_bytes;
        if text.len() > limit {
            return Err(Error::Spec(sweep::SpecError::TooLarge { bytes: text.len(), max: limit }));
        }
        let caps = self.shared.options.spec_caps;
        let sweep = match self.shared.offered(&text, &caps) {
            Some(sweep) => sweep,
            // Parsing expands the whole grid: CPU work, off the runtime threads.
            None => Arc::new(blocking(move || Ok(Sweep::parse_capped(&text, &caps)?)).await?),
        };
        let (record, known) = self.shared.submit(sweep, resume, reuse).await?;
        if let Some(known) = &known {
            tracing::info!(
                sweep = %record.id, name = %record.name, tasks = record.tasks_total, reused = known.tasks,
                "sweep submitted"
            );
        }
        self.shared.changed();
        Ok(pb::SubmitReply {
            sweep_id: record.id.clone(),
            created: known.is_some(),
            status: Some(status_of(&record).into()),
            estimated_cpu_secs: known.map(|k| k.micros_to_run / 1e6),
        })
    }
}

/// [`Shared::send`] on a gRPC stream, which then tells a client that the
/// coordinator is stopping.
async fn send<T>(tx: &mpsc::Sender<Result<T, Status>>, item: Result<T, Status>, shared: &Shared) -> Sent {
    let sent = shared.send(tx, item).await;
    if sent == Sent::Stopping {
        leave_stop_notice(tx).await;
    }
    sent
}

/// How long a stream's "shutting down" notice waits for room in a client's
/// channel; a client that is not reading then sees its stream end without
/// it (and `ksweep watch` counts that as a lost connection too).
const STOP_NOTICE_WAIT: Duration = Duration::from_millis(200);

/// Tells the client the stream ends because the coordinator stops, so it
/// connects again rather than taking the end for an answer.
async fn leave_stop_notice<T>(tx: &mpsc::Sender<Result<T, Status>>) {
    let notice = Err(Status::unavailable("the coordinator is shutting down"));
    let _ = tokio::time::timeout(STOP_NOTICE_WAIT, tx.send(notice)).await;
}

type StatusStream = Pin<Box<dyn Stream<Item = Result<pb::SweepStatus, Status>> + Send>>;
type ExportStream = Pin<Box<dyn Stream<Item = Result<pb::ExportBatch, Status>> + Send>>;

#[tonic::async_trait]
impl pb::sweeps_server::Sweeps for SweepsService {
    async fn submit(&self, req: Request<pb::SubmitRequest>) -> Result<Response<pb::SubmitReply>, Status> {
        let req = req.into_inner();
        Ok(Response::new(self.submit_spec(req.spec_toml, req.resume, !req.no_reuse).await?))
    }

    async fn list(&self, _req: Request<pb::ListRequest>) -> Result<Response<pb::ListReply>, Status> {
        let sweeps = self.shared.read(query::sweeps).await?;
        let sweeps = sweeps.into_iter().map(|s| self.shared.live(s).into()).collect();
        Ok(Response::new(pb::ListReply { sweeps }))
    }

    async fn status(&self, req: Request<pb::SweepRef>) -> Result<Response<pb::SweepStatus>, Status> {
        let id = optional_id(&req.into_inner().sweep_id)?;
        let shared = self.shared.clone();
        let status =
            self.shared.read(move |s| query::status_counted(s, id.as_deref(), |key| shared.counted(key))).await?;
        Ok(Response::new(self.shared.live(status).into()))
    }

    type WatchStream = StatusStream;

    async fn watch(&self, req: Request<pb::SweepRef>) -> Result<Response<StatusStream>, Status> {
        let first = self.shared.sweep_record(optional_id(&req.into_inner().sweep_id)?).await?;
        let (tx, rx) = mpsc::channel(4);
        let shared = self.shared.clone();
        let mut changes = shared.subscribe();
        tokio::spawn(async move {
            let id = first.id.clone();
            let mut last = None;
            loop {
                let record = match shared.sweep_record(Some(id.clone())).await {
                    Ok(r) => r,
                    Err(e) => {
                        send(&tx, Err(e.into()), &shared).await;
                        return;
                    }
                };
                let status = shared.live(status_of(&record));
                if last.as_ref() != Some(&status) {
                    if send(&tx, Ok(status.clone().into()), &shared).await != Sent::Yes {
                        return;
                    }
                    last = Some(status);
                }
                if record.state.is_terminal() {
                    return;
                }
                // Wake on progress, but at least once a second; end at once
                // when the coordinator shuts down.
                tokio::select! {
                    _ = tx.closed() => return, // the client went away: stop polling for it
                    _ = shared.stopped() => {
                        leave_stop_notice(&tx).await;
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
        let record = self.shared.sweep_record(optional_id(&req.into_inner().sweep_id)?).await?;
        if record.state == SweepState::Running {
            self.shared.cancel(record.key).await?;
            tracing::info!(sweep = %record.id, "sweep cancelled");
        }
        let record = self.shared.sweep_record(Some(record.id)).await?;
        Ok(Response::new(status_of(&record).into()))
    }

    async fn drain(&self, req: Request<pb::DrainRequest>) -> Result<Response<pb::DrainReply>, Status> {
        let req = req.into_inner();
        if req.all {
            let (workers, held) = self.shared.drain_all();
            return Ok(Response::new(pb::DrainReply {
                workers: workers as u32,
                shards_held: held as u32,
                ..Default::default()
            }));
        }
        let who = req.worker;
        let most = crate::workers_service::MAX_NAME_CHARS;
        if who.is_empty() || who.chars().count() > most {
            let why = format!("DrainRequest.worker: a worker's id or name, 1 to {most} characters");
            return Err(Error::Refused(why).into());
        }
        let (worker, name, held) = self.shared.drain(&who).await?;
        Ok(Response::new(pb::DrainReply { worker_id: worker.0, name, shards_held: held as u32, workers: 1 }))
    }

    async fn remove(&self, req: Request<pb::SweepRef>) -> Result<Response<pb::RemoveReply>, Status> {
        // Named, never "the only one": a removal is not undone.
        let id = optional_id(&req.into_inner().sweep_id)?
            .ok_or_else(|| Error::Refused("SweepRef.sweep_id: name the sweep to remove".into()))?;
        Ok(Response::new(self.shared.remove(id).await?.into()))
    }

    async fn rename(&self, req: Request<pb::RenameRequest>) -> Result<Response<pb::SweepStatus>, Status> {
        let req = req.into_inner();
        let id = optional_id(&req.sweep_id)?;
        let record = self.shared.rename(id, req.name).await?;
        Ok(Response::new(self.shared.live(status_of(&record)).into()))
    }

    async fn table(&self, req: Request<pb::SweepRef>) -> Result<Response<pb::TableReply>, Status> {
        let id = optional_id(&req.into_inner().sweep_id)?;
        let table = self.shared.read(move |s| query::table(s, id.as_deref())).await?;
        Ok(Response::new(pb::TableReply { status: Some(table.status.into()), rows: table_rows(table.rows) }))
    }

    type ExportStream = ExportStream;

    async fn export(&self, req: Request<pb::SweepRef>) -> Result<Response<ExportStream>, Status> {
        let id = optional_id(&req.into_inner().sweep_id)?;
        let export = Arc::new(self.shared.read(move |s| query::export(s, id.as_deref())).await?);
        let (tx, rx) = mpsc::channel(4);
        let shared = self.shared.clone();
        tokio::spawn(async move {
            let mut after = None;
            loop {
                let export = export.clone();
                // A page per read: a client that stops reading holds no reader.
                let page = match shared.read(move |s| query::export_page(s, &export, after, EXPORT_PAGE)).await {
                    Ok(page) => page,
                    Err(e) => {
                        send(&tx, Err(e.into()), &shared).await;
                        return;
                    }
                };
                if !page.rows.is_empty() && send(&tx, Ok(export_batch(page.rows)), &shared).await != Sent::Yes {
                    return;
                }
                match page.next {
                    Some(next) => after = Some(next),
                    None => return,
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}
