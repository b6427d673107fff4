//! The dashboard's data: JSON for the page, a live-update event stream,
//! downloads (results, report). Errors become the HTTP status they mean.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use figures::{Chart, ChartSpec, Figure, FigureError, Quantity};
use serde_json::{json, Value};
use sweep::{
    format_duration, format_eta, format_rate, AggregateRow, Contributor, Metric, Progress, SweepState, SweepStatus,
    TableFormat, TableLayout, TableOptions,
};
use tokio_stream::wrappers::ReceiverStream;

use super::{Dashboard, UPDATE_EVERY};
use crate::error::Error;
use crate::query;
use crate::records::{write_jsonl, CsvWriter, ParquetWriter, Record, Recorder};
use crate::state::{now, Sent};
use crate::store::now_ms;

/// Rows per page of a download.
const PAGE: usize = 8192;

/// An error as an HTTP answer: a missing sweep is 404, a bad request 400.
pub(super) struct HttpError(Error);

impl From<Error> for HttpError {
    fn from(e: Error) -> HttpError {
        HttpError(e)
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let status = match &self.0 {
            Error::SweepNotFound(_) => StatusCode::NOT_FOUND,
            Error::AmbiguousSweep(_) | Error::AmbiguousId(..) => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        (status, self.0.to_string()).into_response()
    }
}

type Answer<T> = Result<T, HttpError>;

/// A status as the page reads it; `now_ms` ends a running sweep's wall time.
fn status_json(s: &SweepStatus, now_ms: u64) -> Value {
    let progress = Progress::from(s);
    json!({
        "id": s.sweep_id,
        "name": s.name,
        "state": s.state.name(),
        "done": s.tasks_done,
        "total": s.tasks_total,
        "successes": s.successes,
        "configurations": s.configurations,
        "shards_failed": s.shards_failed,
        "created_ms": s.created_unix_ms,
        "started_ms": s.started_unix_ms,
        "finished_ms": s.finished_unix_ms,
        "cpu_micros": s.cpu_micros,
        "times": s.time_lines(now_ms).into_iter().map(|(label, text)| json!([label, text])).collect::<Vec<_>>(),
        "contributors": s.contributors.iter().map(|c| json!({
            "name": c.name, "build": c.build_label(), "host": c.host, "cpu": c.cpu,
            "features": c.features.join(" "), "tasks": c.tasks,
            "cpu_text": format_duration(Duration::from_micros(c.cpu_micros)),
        })).collect::<Vec<_>>(),
        "rate": s.rate_per_sec,
        "rate_text": s.rate_per_sec.map(format_rate),
        "eta_text": s.eta.map(format_eta),
        "warning": progress.warning(),
        "error": s.error.as_deref().unwrap_or_default(),
        "waiting": s.waiting.text(),
        "failed_shards": s.failed_shards.iter().map(|f| json!({
            "shard": f.shard_id, "board": f.board, "moves": f.moves,
            "starts": [f.start_lo, f.start_hi], "error": f.error,
        })).collect::<Vec<_>>(),
    })
}

pub(super) async fn sweeps(State(d): State<Dashboard>) -> Answer<Json<Value>> {
    let statuses = d.shared.read(query::sweeps).await?;
    let now_ms = now_ms();
    let list: Vec<Value> = statuses.into_iter().map(|s| status_json(&d.shared.live(s), now_ms)).collect();
    Ok(Json(Value::Array(list)))
}

/// A sweep's page data: the (results, state) it was computed at, when, and
/// what computing it cost.
pub(super) struct View {
    version: (u64, SweepState),
    data: Arc<Value>,
    /// The workers whose results it holds, read with the tables.
    contributors: Arc<Vec<Contributor>>,
    at: Instant,
    cost: Duration,
}

/// Fewest seconds between two computations of a running sweep's view.
const VIEW_EVERY: Duration = Duration::from_secs(2);
/// A view is computed again no sooner than this many times its cost after
/// the last: pages open on a large sweep take at most a twentieth of a core.
const VIEW_COST_SHARE: u32 = 20;

impl View {
    /// True while this view may stand for `version`: the same, or the same
    /// state with results since, within the refresh interval.
    fn serves(&self, version: (u64, SweepState), at: Instant) -> bool {
        let fresh = at.saturating_duration_since(self.at) < VIEW_EVERY.max(self.cost * VIEW_COST_SHARE);
        self.version == version || (self.version.1 == version.1 && fresh)
    }
}

/// One sweep: status, times, tasks by method, the accuracy tables (with
/// denominators and intervals), the plots as SVG, the workers whose results
/// it holds, and the spec. The heavy part (aggregating every result,
/// rendering tables and plots, the contributors and CPU time) is shared by
/// every page open on the sweep, and computed again only after VIEW_EVERY
/// or twenty times its cost, whichever is longer, while results arrive (it
/// had been computed on every event, twice a second); a change of state
/// shows at once. The status (counts, rate, ETA, times) is fresh each time.
pub(super) async fn sweep(State(d): State<Dashboard>, Path(id): Path<String>) -> Answer<Json<Value>> {
    let status = d.shared.read(move |s| query::status_without_costs(s, Some(&id))).await?;
    let status = d.shared.live(status);
    let version = (status.tasks_done, status.state);
    let mut views = d.views.lock().await;
    let (view, contributors) = match views.get(&status.sweep_id) {
        Some(view) if view.serves(version, now()) => (view.data.clone(), view.contributors.clone()),
        _ => {
            let began = now();
            let (data, contributors) = sweep_view(&d, &status).await?;
            let (data, contributors) = (Arc::new(data), Arc::new(contributors));
            let cost = now().saturating_duration_since(began);
            let view = View { version, data: data.clone(), contributors: contributors.clone(), at: began, cost };
            views.insert(status.sweep_id.clone(), view);
            (data, contributors)
        }
    };
    drop(views);
    let status = status.with_contributors(contributors.to_vec());
    let mut value = status_json(&status, now_ms());
    let object = value.as_object_mut().expect("a status is an object");
    for (key, v) in view.as_object().expect("a view is an object") {
        object.insert(key.clone(), v.clone());
    }
    Ok(Json(value))
}

/// The parts of a sweep's page that change only with its results, and its
/// contributors.
async fn sweep_view(d: &Dashboard, status: &SweepStatus) -> Result<(Value, Vec<Contributor>), Error> {
    let id = status.sweep_id.clone();
    let (rows, contributors) =
        d.shared.read(move |s| Ok((query::table(s, Some(&id))?.rows, query::contributors(s, Some(&id))?))).await?;
    let mut methods: BTreeMap<String, (u64, u64, usize)> = BTreeMap::new();
    let rank = sweep::first_appearances(rows.iter().map(|r| r.method.as_str()));
    for r in &rows {
        let entry = methods.entry(r.method.clone()).or_insert((0, 0, rank[r.method.as_str()]));
        entry.0 += r.tasks;
        entry.1 += r.successes;
    }
    let mut methods: Vec<(String, (u64, u64, usize))> = methods.into_iter().collect();
    methods.sort_by_key(|(_, (_, _, rank))| *rank);
    let methods: Vec<Value> =
        methods.into_iter().map(|(m, (tasks, ok, _))| json!({"method": m, "done": tasks, "successes": ok})).collect();
    let name = status.name.clone();
    let (tables, accuracy, time) = tokio::task::spawn_blocking(move || {
        let options = TableOptions {
            layout: TableLayout::ByMethods,
            format: TableFormat::Html,
            moves: None,
            metric: Metric::Accuracy,
            intervals: true,
            progress: None,
        };
        (sweep::render(&rows, &options), plot(&rows, &name, Quantity::Accuracy), plot(&rows, &name, Quantity::Time))
    })
    .await
    .map_err(|e| Error::Internal(format!("plotting: {e}")))?;
    let data = json!({
        "methods": methods,
        "tables": tables,
        "accuracy_svg": accuracy,
        "time_svg": time,
        "spec": status.spec_toml,
    });
    Ok((data, contributors))
}

/// A chart as SVG, or null while there is nothing to plot.
fn plot(rows: &[AggregateRow], name: &str, quantity: Quantity) -> Option<String> {
    let spec = ChartSpec {
        quantity,
        layout: TableLayout::ByMethods,
        moves: None,
        title: format!("{} · sweep {name}", quantity.title()),
        warning: None,
    };
    match Chart::new(rows, &spec).map(Figure::Chart).and_then(|f| f.svg()) {
        Ok(svg) => Some(svg),
        Err(FigureError::Empty(_)) => None,
        Err(e) => {
            tracing::warn!(error = %e, "dashboard plot failed");
            None
        }
    }
}

/// The workers: those the scheduler knows (alive, or silent past a lease)
/// and those registered before but gone since.
pub(super) async fn workers(State(d): State<Dashboard>) -> Answer<Json<Value>> {
    let names = d.shared.read(|s| s.worker_names()).await?;
    let known = d.shared.workers();
    let mut list: Vec<Value> = known
        .iter()
        .map(|(w, advertised)| {
            json!({
                "id": w.id.0,
                "name": names.get(&w.id.0).cloned().unwrap_or_default(),
                "threads": w.threads,
                "memory_bytes": advertised.memory,
                "labels": advertised.labels,
                "shards": w.shards,
                "silent_secs": w.silent.as_secs_f64(),
                "tasks": w.tasks,
                "tasks_per_sec": w.tasks_per_sec,
                "rate_text": w.tasks_per_sec.map(format_rate),
                "memory_text": advertised.memory.map(tour::format_bytes),
                "state": if w.lost { "silent" } else if w.draining { "draining" } else { "alive" },
            })
        })
        .collect();
    let mut gone: Vec<(&u64, &String)> =
        names.iter().filter(|(id, _)| !known.iter().any(|(w, _)| w.id.0 == **id)).collect();
    gone.sort();
    // The most recent gone workers; the rest are history.
    for (id, name) in gone.into_iter().rev().take(50) {
        list.push(json!({"id": id, "name": name, "state": "gone"}));
    }
    Ok(Json(json!({ "workers": list })))
}

/// Live updates: an event whenever results arrive (at most every
/// UPDATE_EVERY), and every few seconds anyway, for rates and heartbeats.
/// At most `event_streams` at once: more are answered 503 (a browser's
/// EventSource tries again a few seconds later).
pub(super) async fn events(State(d): State<Dashboard>) -> Response {
    let Ok(open) = d.streams.clone().try_acquire_owned() else {
        let busy = "too many live-update streams are open on this dashboard; try again later";
        return (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "10")], busy).into_response();
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Event, Infallible>>(4);
    let shared = d.shared.clone();
    tokio::spawn(async move {
        let _open = open;
        let mut changes = shared.subscribe();
        let mut count = 0u64;
        loop {
            count += 1;
            if shared.send(&tx, Ok(Event::default().event("change").data(count.to_string()))).await != Sent::Yes {
                return; // the page went away, or the coordinator stops
            }
            tokio::select! {
                _ = tx.closed() => return,
                _ = shared.stopped() => return,
                _ = tokio::time::timeout(Duration::from_secs(3), changes.changed()) => {}
            }
            tokio::time::sleep(UPDATE_EVERY).await;
        }
    });
    Sse::new(ReceiverStream::new(rx)).keep_alive(KeepAlive::default()).into_response()
}

/// Streams a sweep's results as CSV or JSON lines, page by page, each page
/// read on a reader of its own: a slow client holds no reader (nor a
/// snapshot the WAL must be kept for) between pages.
async fn results_text(d: Dashboard, id: String, csv: bool) -> Response {
    let download = match d.downloads.clone().acquire_owned().await {
        Ok(permit) => permit,
        Err(_) => return StatusCode::SERVICE_UNAVAILABLE.into_response(),
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(2);
    tokio::spawn(async move {
        let _download = download;
        let first = d.shared.read(move |s| query::export(s, Some(&id))).await;
        let export = match first {
            Ok(e) => e,
            Err(e) => {
                let _ = d.shared.send(&tx, Err(std::io::Error::other(e.to_string()))).await;
                return;
            }
        };
        let state = Progress::from(&export.status).state_label().to_string();
        let mut recorder = Recorder::new(export.sweep(), &export.status.sweep_id, &state);
        let mut bytes = Vec::new();
        if csv {
            let _ = CsvWriter::header(&mut bytes);
        }
        let mut after = None;
        loop {
            let (export_page, at) = (export.clone(), after.take());
            let page = match d.shared.read(move |s| query::export_page(s, &export_page, at, PAGE)).await {
                Ok(p) => p,
                Err(e) => {
                    let _ = d.shared.send(&tx, Err(std::io::Error::other(e.to_string()))).await;
                    return;
                }
            };
            for row in page.rows {
                let record = recorder.record(row);
                let _ = if csv { CsvWriter::write(&record, &mut bytes) } else { write_jsonl(&record, &mut bytes) };
            }
            if d.shared.send(&tx, Ok(std::mem::take(&mut bytes))).await != Sent::Yes {
                return;
            }
            match page.next {
                Some(next) => after = Some(next),
                None => return,
            }
        }
    });
    let kind = if csv { "text/csv; charset=utf-8" } else { "application/x-ndjson" };
    ([(header::CONTENT_TYPE, kind)], Body::from_stream(ReceiverStream::new(rx))).into_response()
}

pub(super) async fn results_csv(State(d): State<Dashboard>, Path(id): Path<String>) -> Response {
    results_text(d, id, true).await
}

pub(super) async fn results_jsonl(State(d): State<Dashboard>, Path(id): Path<String>) -> Response {
    results_text(d, id, false).await
}

/// Waits for a turn to build a download or report.
async fn download_turn(d: &Dashboard) -> Result<tokio::sync::OwnedSemaphorePermit, Error> {
    d.downloads.clone().acquire_owned().await.map_err(|_| Error::Internal("downloads closed".into()))
}

/// The results as one Parquet file, built in memory (it has a footer) from
/// one snapshot on a reader.
pub(super) async fn results_parquet(State(d): State<Dashboard>, Path(id): Path<String>) -> Answer<Response> {
    let _turn = download_turn(&d).await?;
    let bytes = d
        .shared
        .read(move |s| {
            let export = query::export(s, Some(&id))?;
            let state = Progress::from(&export.status).state_label().to_string();
            let mut recorder = Recorder::new(export.sweep(), &export.status.sweep_id, &state);
            let mut writer = ParquetWriter::new(Vec::new())?;
            let mut after = None;
            loop {
                let page = query::export_page(s, &export, after.take(), PAGE)?;
                let records: Vec<Record> = page.rows.into_iter().map(|r| recorder.record(r)).collect();
                writer.write(&records)?;
                match page.next {
                    Some(next) => after = Some(next),
                    None => break,
                }
            }
            writer.finish()
        })
        .await?;
    Ok(([(header::CONTENT_TYPE, "application/vnd.apache.parquet")], bytes).into_response())
}

/// The sweep's report page, as `ksweep report` writes it (without failure maps).
pub(super) async fn report(State(d): State<Dashboard>, Path(id): Path<String>) -> Answer<Html<String>> {
    let _turn = download_turn(&d).await?;
    let (status, table) =
        d.shared.read(move |s| Ok((query::status(s, Some(&id))?, query::table(s, Some(&id))?))).await?;
    let input = query::report_input(&status, table.rows, Vec::new());
    let html = tokio::task::spawn_blocking(move || figures::report::html(&input))
        .await
        .map_err(|e| Error::Internal(format!("report: {e}")))?
        .map_err(|e| Error::Internal(format!("report: {e}")))?;
    Ok(Html(html))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_is_computed_again_after_its_interval_or_at_once_on_a_change_of_state() {
        let at = Instant::now();
        let secs = |s: f64| at + Duration::from_secs_f64(s);
        let running = SweepState::Running;
        let view = View {
            version: (10, running),
            data: Arc::new(Value::Null),
            contributors: Arc::new(Vec::new()),
            at,
            cost: Duration::from_millis(50),
        };
        assert!(view.serves((10, running), secs(3600.0)), "nothing new");
        assert!(view.serves((20, running), secs(1.9)), "results since, within VIEW_EVERY");
        assert!(!view.serves((20, running), secs(2.0)));
        assert!(!view.serves((20, SweepState::Done), secs(0.1)), "a change of state shows at once");
        let slow = View { cost: Duration::from_millis(500), ..view };
        assert!(slow.serves((20, running), secs(9.9)), "twenty times its cost");
        assert!(!slow.serves((20, running), secs(10.0)));
    }
}
