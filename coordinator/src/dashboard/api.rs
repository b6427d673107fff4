//! The dashboard's data: JSON for the page, a long poll for changes (and
//! the older event stream),
//! downloads (results, report). Errors become the HTTP status they mean.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use sweep::{format_duration, format_eta, format_rate, Progress, SweepStatus};
use tokio_stream::wrappers::ReceiverStream;

use super::views::{self, FigureKind, Part};
use super::{Dashboard, UPDATE_EVERY};
use crate::error::Error;
use crate::export_format::{write_jsonl, CsvWriter, ExportRow, ExportRows, ParquetWriter};
use crate::ids::SweepKey;
use crate::query;
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
        "percent": s.percent_of_work(),
        "progress_text": s.progress_text(),
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

/// One sweep: status, times, tasks by method, its table sections (each
/// with its counts; the tables themselves come from [`section`]), the
/// workers whose results it holds, and the spec. The part that changes
/// only with its results is a [`views::View`] shared by every page open on
/// the sweep; the status (counts, rate, ETA, times) is fresh each time.
pub(super) async fn sweep(State(d): State<Dashboard>, Path(id): Path<String>) -> Answer<Json<Value>> {
    if let Some((at, answer)) = d.answers.lock().await.get(&id) {
        if now().saturating_duration_since(*at) < ANSWER_EVERY {
            return Ok(Json(Value::clone(answer)));
        }
    }
    let (status, view) = status_and_view(&d, id.clone()).await?;
    let status = status.with_contributors(view.contributors.to_vec());
    let mut value = status_json(&status, now_ms());
    let object = value.as_object_mut().expect("a status is an object");
    for (key, v) in view.summary.as_object().expect("a summary is an object") {
        object.insert(key.clone(), v.clone());
    }
    let mut answers = d.answers.lock().await;
    answers.retain(|_, (at, _)| now().saturating_duration_since(*at) < ANSWER_EVERY);
    answers.insert(id, (now(), Arc::new(value.clone())));
    Ok(Json(value))
}

/// A sweep's answer serves every page asking within this long: pages
/// update once a second, so however many are open, its status (counts,
/// rate, work left) is read about once a second.
const ANSWER_EVERY: Duration = Duration::from_millis(900);

/// The view a page's request for a part of sweep `id` reads: the one kept,
/// while recent, else one for a fresh status.
async fn part_view(d: &Dashboard, id: String) -> Result<Arc<views::View>, Error> {
    match views::recent_view(d, &id).await {
        Some(view) => Ok(view),
        None => Ok(status_and_view(d, id).await?.1),
    }
}

/// A sweep's live status and its current view.
async fn status_and_view(d: &Dashboard, id: String) -> Result<(SweepStatus, Arc<views::View>), Error> {
    let status = d.shared.read(move |s| query::status_without_costs(s, Some(&id))).await?;
    let status = d.shared.live(status);
    let view = views::view(d, &status).await?;
    Ok((status, view))
}

/// One section's accuracy table (with denominators and intervals), as an
/// HTML fragment: a page asks for the sections it shows open.
pub(super) async fn section(
    State(d): State<Dashboard>,
    headers: HeaderMap,
    Path((id, index)): Path<(String, usize)>,
) -> Answer<Response> {
    let view = part_view(&d, id).await?;
    Ok(match view.part(Part::Section(index)).await? {
        Some(html) => text_answer(&headers, "text/html; charset=utf-8", &html),
        None => (StatusCode::NOT_FOUND, "no such section").into_response(),
    })
}

/// A figure (`accuracy` or `time`) as SVG; 204 while there is nothing to plot.
pub(super) async fn figure(
    State(d): State<Dashboard>,
    headers: HeaderMap,
    Path((id, name)): Path<(String, String)>,
) -> Answer<Response> {
    let Some(kind) = FigureKind::parse(name.trim_end_matches(".svg")) else {
        return Ok((StatusCode::NOT_FOUND, "figures: accuracy, time").into_response());
    };
    let view = part_view(&d, id).await?;
    Ok(match view.part(Part::Figure(kind)).await? {
        Some(svg) => text_answer(&headers, "image/svg+xml", &svg),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}

/// `body` as `kind`, gzipped where the request takes gzip: tables and
/// figures are text of tens of KiB that shrinks several times, and an open
/// page fetches them again as a sweep runs.
fn text_answer(headers: &HeaderMap, kind: &'static str, body: &str) -> Response {
    if takes_gzip(headers) {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        if let Ok(bytes) = gz.write_all(body.as_bytes()).and_then(|()| gz.finish()) {
            let encoded =
                [(header::CONTENT_TYPE, kind), (header::CONTENT_ENCODING, "gzip"), (header::VARY, "accept-encoding")];
            return (encoded, bytes).into_response();
        }
    }
    ([(header::CONTENT_TYPE, kind), (header::VARY, "accept-encoding")], body.to_string()).into_response()
}

/// True when `Accept-Encoding` lists gzip without refusing it (`q=0`).
fn takes_gzip(headers: &HeaderMap) -> bool {
    let accepted = headers.get_all(header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok());
    accepted.flat_map(|v| v.split(',')).any(|coding| {
        let mut parts = coding.split(';').map(str::trim);
        let name = parts.next().unwrap_or_default();
        let refused = parts.any(|p| p.strip_prefix("q=").and_then(|q| q.parse::<f64>().ok()) == Some(0.0));
        name.eq_ignore_ascii_case("gzip") && !refused
    })
}

/// The workers: those the scheduler knows (alive, or silent past a lease),
/// each with its memory budget and the boards it is running, and the most
/// recent of those registered before but gone since, with the tasks and
/// CPU time their results hold (a restarted `ksweep run` leaves its earlier
/// embedded workers so).
pub(super) async fn workers(State(d): State<Dashboard>) -> Answer<Json<Value>> {
    let (names, hosts) = d.shared.read(|s| Ok((s.worker_names()?, s.worker_hosts()?))).await?;
    let known = d.shared.workers();
    let mut held: Vec<(SweepKey, u32)> = known.iter().flat_map(|(w, _)| w.boards.iter().copied()).collect();
    held.sort();
    held.dedup();
    let boards = d.shared.read(move |s| query::held_boards(s, &held)).await?;
    let mut list: Vec<Value> = known
        .iter()
        .map(|(w, advertised)| {
            let running: Vec<&query::HeldBoard> = w.boards.iter().filter_map(|b| boards.get(b)).collect();
            json!({
                "id": w.id.0,
                "name": names.get(&w.id.0).cloned().unwrap_or_default(),
                "host": hosts.get(&w.id.0).cloned().unwrap_or_default(),
                "threads": w.threads,
                "memory_bytes": advertised.memory,
                "labels": advertised.labels,
                "shards": w.shards,
                "boards": running.iter().map(|b| json!({"sweep": b.sweep, "moves": b.moves, "shape": b.shape})).collect::<Vec<_>>(),
                "silent_secs": w.silent.as_secs_f64(),
                "tasks": w.tasks,
                "tasks_per_sec": w.tasks_per_sec,
                "cpu_micros": w.micros,
                "cpu_text": format_duration(Duration::from_micros(w.micros)),
                "rate_text": w.tasks_per_sec.map(format_rate),
                "memory_text": advertised.memory.map(tour::format_bytes),
                "state": if w.lost { "silent" } else if w.draining { "draining" } else { "alive" },
            })
        })
        .collect();
    let mut gone: Vec<u64> = names.keys().copied().filter(|id| !known.iter().any(|(w, _)| w.id.0 == *id)).collect();
    gone.sort();
    // The most recent gone workers; the rest are history.
    let gone: Vec<u64> = gone.into_iter().rev().take(GONE_SHOWN).collect();
    let totals = gone_totals(&d, &gone).await?;
    for id in gone {
        let (tasks, micros) = totals.get(&id).copied().unwrap_or((0, 0));
        list.push(json!({
            "id": id,
            "name": names.get(&id).cloned().unwrap_or_default(),
            "host": hosts.get(&id).cloned().unwrap_or_default(),
            "state": "gone",
            "tasks": tasks,
            "cpu_micros": micros,
            "cpu_text": format_duration(Duration::from_micros(micros)),
        }));
    }
    Ok(Json(json!({ "workers": list })))
}

/// Gone workers listed on the workers page, the most recent first.
const GONE_SHOWN: usize = 50;

/// The stored (tasks, CPU µs) of the gone workers `ids`. A gone worker's
/// results no longer change, so they are read (one pass over the results)
/// only when the set of gone workers does, not on every refresh.
async fn gone_totals(d: &Dashboard, ids: &[u64]) -> Result<Arc<HashMap<u64, (u64, u64)>>, Error> {
    let mut kept = d.gone.lock().await;
    if kept.0 != ids {
        let list = ids.to_vec();
        let totals = d.shared.read(move |s| s.lifetime_totals(&list)).await?;
        *kept = (ids.to_vec(), Arc::new(totals));
    }
    Ok(kept.1.clone())
}

/// Seconds a change poll waits for a change unless it asks for less.
const CHANGES_WAIT: Duration = Duration::from_secs(20);

/// What a page's poll for changes says.
#[derive(serde::Deserialize)]
pub(super) struct ChangesQuery {
    /// The version the page last saw; without it the answer is at once.
    since: Option<u64>,
    /// Seconds to wait at most (up to CHANGES_WAIT).
    timeout: Option<u64>,
}

/// Live updates as a long poll: answers `{"version": N}` as soon as the
/// coordinator's change count differs from `since`, or when the wait ends.
/// Every answer ends, so a headless browser (`--virtual-time-budget`)
/// can settle on a live page, which it never did on an event stream; the
/// page waits a second between two updates. At most `event_streams` polls
/// wait at once: more are answered 503.
pub(super) async fn changes(State(d): State<Dashboard>, Query(q): Query<ChangesQuery>) -> Response {
    let Ok(_open) = d.streams.clone().try_acquire_owned() else {
        let busy = "too many pages are waiting for changes on this dashboard; try again later";
        return (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "10")], busy).into_response();
    };
    let mut changes = d.shared.subscribe();
    if let Some(since) = q.since {
        let wait = q.timeout.map_or(CHANGES_WAIT, |s| Duration::from_secs(s).min(CHANGES_WAIT));
        let changed = async {
            while *changes.borrow_and_update() == since {
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::select! {
            _ = tokio::time::timeout(wait, changed) => {}
            _ = d.shared.stopped() => {}
        }
    }
    let version = *changes.borrow();
    ([(header::CACHE_CONTROL, "no-store")], Json(json!({ "version": version }))).into_response()
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
        let mut exporter = ExportRows::new(export.sweep(), &export.status.sweep_id, &state);
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
                let line = exporter.row(row);
                let _ = if csv { CsvWriter::write(&line, &mut bytes) } else { write_jsonl(&line, &mut bytes) };
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
            let mut exporter = ExportRows::new(export.sweep(), &export.status.sweep_id, &state);
            let mut writer = ParquetWriter::new(Vec::new())?;
            let mut after = None;
            loop {
                let page = query::export_page(s, &export, after.take(), PAGE)?;
                let rows: Vec<ExportRow> = page.rows.into_iter().map(|r| exporter.row(r)).collect();
                writer.write(&rows)?;
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

    fn accepting(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT_ENCODING, value.parse().unwrap());
        headers
    }

    #[test]
    fn parts_are_gzipped_only_for_a_browser_that_takes_gzip() {
        assert!(takes_gzip(&accepting("gzip, deflate, br")));
        assert!(takes_gzip(&accepting("br;q=1.0, GZIP;q=0.5")));
        assert!(!takes_gzip(&accepting("gzip;q=0, br")));
        assert!(!takes_gzip(&accepting("identity")) && !takes_gzip(&HeaderMap::new()));
        let body = "<svg>".repeat(1000);
        let answer = text_answer(&accepting("gzip"), "image/svg+xml", &body);
        assert_eq!(answer.headers()[header::CONTENT_ENCODING], "gzip");
        let plain = text_answer(&HeaderMap::new(), "image/svg+xml", &body);
        assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
    }
}
