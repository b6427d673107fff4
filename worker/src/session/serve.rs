//! One session's poll loop: results out, shards in, revocations and
//! drains obeyed, until shutdown or a reason to register again.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use ksweep_proto::convert::ShardWork;
use ksweep_proto::v1 as pb;
use ksweep_proto::{classify, WorkerAction, WorkerRpc};
use tokio::sync::mpsc;
use tokio::time::{sleep, sleep_until, Instant};

use super::{cause, Running, Session, SessionEnd, Target, BATCH_WINDOW, FIRST_BACKOFF, IDLE_POLL, MAX_BACKOFF};
use crate::activity::HELD_UP;
use crate::error::Error;
use crate::execute::{run_shard, Control, Event, Lease, Resources};

/// Polls for one registration: delivers results, takes shards, obeys
/// revocations and drains; ends at shutdown, when the coordinator refuses
/// the worker, or when it must register again.
pub(super) async fn serve_session(
    s: &mut Session,
    pool: &Arc<rayon::ThreadPool>,
    resources: &Resources,
    target: &Target<'_>,
    events_tx: &mpsc::UnboundedSender<Event>,
    events: &mut mpsc::UnboundedReceiver<Event>,
    shutdown: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
) -> SessionEnd {
    let threads = resources.threads;
    let mut backoff = FIRST_BACKOFF;
    loop {
        while let Ok(e) = events.try_recv() {
            s.apply(e);
        }
        // A pool whose every thread is held up by a long task (another
        // sweep's, say) would leave the shards it has not started waiting
        // for as long: they go back to run elsewhere, and no more are
        // taken until a thread is free.
        let held_up = resources.activity.held_up(HELD_UP).min(threads);
        if held_up == threads {
            s.hand_back_waiting();
        }
        // Drained, with everything delivered: leave.
        if s.draining && s.running.is_empty() && s.outbox.is_empty() {
            tracing::info!("drained: leaving");
            return SessionEnd::Shutdown;
        }
        let free = if s.draining { 0 } else { s.free_slots(threads, held_up) };
        let results: Vec<pb::ShardResults> = std::mem::take(&mut s.outbox).into_values().collect();
        let request = poll_request(s, resources, target, free, results.clone());
        let reply = match s.client.poll(request).await {
            Ok(r) => {
                backoff = FIRST_BACKOFF;
                s.returning.clear();
                r.into_inner()
            }
            Err(status) => {
                if let Some(end) = poll_failed(s, &status, results, target, &mut backoff, shutdown).await {
                    return end;
                }
                continue;
            }
        };
        if reply.drain && !s.draining {
            tracing::info!(held = s.running.len(), "asked to drain: finishing the shards held, then leaving");
            s.draining = true;
        }
        revoke(s, &reply.revoked);
        let got_work = !reply.shards.is_empty();
        start(s, reply.shards, pool, resources, events_tx);

        // Wait for results (then gather a batch), the next heartbeat, or shutdown.
        let room = s.free_slots(threads, held_up) > 0;
        let wait = if got_work && room {
            Duration::ZERO
        } else if s.running.is_empty() {
            IDLE_POLL.min(s.poll_every)
        } else {
            s.poll_every
        };
        if let Some(end) = wait_for_events(s, events, shutdown, wait).await {
            return end;
        }
    }
}

/// A poll of this session: its leases and hand-backs, `results`, and room
/// for `free` more shards.
fn poll_request(
    s: &Session,
    resources: &Resources,
    target: &Target<'_>,
    free: usize,
    results: Vec<pb::ShardResults>,
) -> tonic::Request<pb::PollRequest> {
    let request = pb::PollRequest {
        worker_id: s.worker_id,
        coordinator_nonce: s.nonce,
        free_slots: free as u32,
        running: s.leases(),
        results,
        session_secret: s.secret.clone(),
        returned: s.returning.clone(),
        task_polls: resources.activity.polls().load(Ordering::Relaxed),
        lifetime_left_millis: target
            .options
            .end
            .map(|e| e.saturating_duration_since(std::time::Instant::now()).as_millis() as u64),
    };
    s.request(request)
}

/// What a failed poll does: register again, stop, drop the results the
/// coordinator refused, or keep them and retry after `backoff` (doubled).
/// None to poll again.
async fn poll_failed(
    s: &mut Session,
    status: &tonic::Status,
    results: Vec<pb::ShardResults>,
    target: &Target<'_>,
    backoff: &mut Duration,
    shutdown: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
) -> Option<SessionEnd> {
    match classify(WorkerRpc::Poll, status) {
        WorkerAction::Reregister => return Some(SessionEnd::Reregister(cause(status))),
        WorkerAction::Stop => return Some(SessionEnd::Fatal(Error::Refused(status.message().into()))),
        WorkerAction::DropResults => {
            let tasks: usize = results.iter().map(|r| r.tasks.len()).sum();
            tracing::error!(tasks, error = %cause(status), "coordinator refused our results; dropping them");
        }
        WorkerAction::RetryLater if target.moved() => {
            // Its results go with the old session: the shards'
            // leases lapse and they run again wherever it is now.
            return Some(SessionEnd::Reregister("the coordinator moved or finished".into()));
        }
        WorkerAction::RetryLater => {
            for r in results {
                s.outbox.insert((r.shard_id, r.epoch), r);
            }
            tracing::warn!(error = %cause(status), retry_in = ?*backoff, "poll failed");
            tokio::select! {
                _ = &mut *shutdown => return Some(SessionEnd::Shutdown),
                _ = sleep(*backoff) => {}
            }
            *backoff = (*backoff * 2).min(MAX_BACKOFF);
        }
    }
    None
}

/// Stops the shards whose leases the coordinator revoked.
fn revoke(s: &mut Session, revoked: &[pb::LeaseRef]) {
    for lease in revoked {
        if let Some(r) = s.running.get(&lease.shard_id).filter(|r| r.epoch == lease.epoch) {
            r.control.cancelled.store(true, Ordering::Relaxed);
            s.running.remove(&lease.shard_id);
            tracing::info!(shard = lease.shard_id, "lease revoked; shard stopped");
        }
    }
}

/// Starts the shards the coordinator granted on the pool.
fn start(
    s: &mut Session,
    shards: Vec<pb::Shard>,
    pool: &Arc<rayon::ThreadPool>,
    resources: &Resources,
    events_tx: &mpsc::UnboundedSender<Event>,
) {
    for shard in shards {
        let control = Arc::new(Control::default());
        s.running.insert(shard.shard_id, Running { epoch: shard.epoch, control: control.clone() });
        let tx = events_tx.clone();
        let resources = resources.clone();
        // On the pool, under the session's span: a shard's events say
        // which session and shard they are of.
        let span = tracing::debug_span!("shard", id = shard.shard_id, epoch = shard.epoch);
        let lease = Lease { shard: shard.shard_id, epoch: shard.epoch };
        // Decoded here, so the pool sees domain types only; a shard this
        // worker cannot build fails at once with the decoder's words.
        match ShardWork::try_from(&shard) {
            Ok(work) => pool.spawn(move || span.in_scope(|| run_shard(lease, &work, control, tx, &resources))),
            Err(e) => {
                let _ = tx.send(Event::Finished { lease, error: Some(e.into()), busy: Duration::ZERO });
            }
        }
    }
}

/// Waits for results (then gathers a batch for [`BATCH_WINDOW`]), for
/// `wait` to pass, or for shutdown (Some then).
async fn wait_for_events(
    s: &mut Session,
    events: &mut mpsc::UnboundedReceiver<Event>,
    shutdown: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
    wait: Duration,
) -> Option<SessionEnd> {
    let deadline = Instant::now() + wait;
    tokio::select! {
        _ = &mut *shutdown => return Some(SessionEnd::Shutdown),
        Some(e) = events.recv() => {
            s.apply(e);
            let until = Instant::now() + BATCH_WINDOW;
            loop {
                tokio::select! {
                    Some(e) = events.recv() => s.apply(e),
                    _ = sleep_until(until) => break,
                }
            }
        }
        _ = sleep_until(deadline) => {}
    }
    None
}
