//! Leaving at shutdown: the last results delivered (retried within a
//! deadline), the rest handed back, and goodbye said.

use ksweep_proto::v1 as pb;
use ksweep_proto::{classify, WorkerAction, WorkerRpc};
use tokio::sync::mpsc;
use tokio::time::{sleep, Instant};

use super::{cause, Session, FIRST_BACKOFF, GOODBYE, LAST_DELIVERY, MAX_BACKOFF};
use crate::error::{Error, Result};
use crate::execute::Event;

/// Stops the running shards, delivers what finished, hands back the rest
/// and says goodbye. Err if finished results could not be delivered (they
/// are lost; their shards run again elsewhere when their leases expire).
pub(super) async fn farewell(s: &mut Session, events: &mut mpsc::UnboundedReceiver<Event>) -> Result<()> {
    s.cancel_all();
    // Results that finished since the last poll.
    while let Ok(e) = events.try_recv() {
        s.apply(e);
    }
    let deadline = Instant::now() + LAST_DELIVERY;
    let mut returned = s.leases();
    returned.append(&mut s.returning);
    let results: Vec<pb::ShardResults> = std::mem::take(&mut s.outbox).into_values().collect();
    let tasks: usize = results.iter().map(|r| r.tasks.len()).sum();
    let delivered = if results.is_empty() { Ok(()) } else { deliver_last(s, results, deadline).await };
    if let Err(why) = &delivered {
        tracing::error!(tasks, error = %why, "could not deliver the last results");
    }
    let bye = s.request(pb::GoodbyeRequest {
        worker_id: s.worker_id,
        coordinator_nonce: s.nonce,
        returned,
        session_secret: s.secret.clone(),
    });
    match tokio::time::timeout(GOODBYE, s.client.goodbye(bye)).await {
        Ok(Ok(_)) => tracing::info!("said goodbye"),
        // Not fatal: unreturned shards go back to the queue when their leases expire.
        Ok(Err(status)) => tracing::warn!(error = %cause(&status), "goodbye failed"),
        Err(_) => tracing::warn!("goodbye timed out"),
    }
    delivered.map_err(|why| Error::Undelivered { tasks, why })
}

/// The last poll: `results` only, asking for nothing, retried while the
/// classifier says so and `deadline` allows.
async fn deliver_last(s: &mut Session, results: Vec<pb::ShardResults>, deadline: Instant) -> Result<(), String> {
    let mut backoff = FIRST_BACKOFF;
    loop {
        let request = s.request(pb::PollRequest {
            worker_id: s.worker_id,
            coordinator_nonce: s.nonce,
            free_slots: 0,
            running: vec![],
            results: results.clone(),
            session_secret: s.secret.clone(),
            ..Default::default()
        });
        let status = match tokio::time::timeout_at(deadline, s.client.poll(request)).await {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(status)) => status,
            Err(_) => return Err(format!("no answer within {LAST_DELIVERY:?}")),
        };
        match classify(WorkerRpc::Poll, &status) {
            WorkerAction::RetryLater if Instant::now() + backoff < deadline => {
                tracing::warn!(error = %cause(&status), retry_in = ?backoff, "delivering the last results failed");
                sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
            action => return Err(format!("{} ({action:?})", cause(&status))),
        }
    }
}
