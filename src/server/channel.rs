//! One client session over a message channel, whatever frames the messages: stdio lines,
//! WebSocket text frames, legacy HTTP+SSE (POST in, SSE out). Requests run concurrently
//! (a slow `sleep` must not hold up `ping`); every reply and notification leaves through
//! one outbound queue, so the framing side never interleaves messages. The client's
//! answers to the server's own requests (`ask_*` tools) come back on the same inbound
//! channel and are routed to the request awaiting them, by the id the server gave it.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::handler::{malformed_reply, too_large_reply, Handler, Session};
use super::notifier::Notifier;
use crate::protocol::methods as m;
use crate::protocol::{Incoming, RawResult};

/// How long requests still running when the client goes away may finish (and be
/// answered) before the session ends anyway; the grace SDK clients give before SIGTERM.
const EOF_GRACE: Duration = Duration::from_secs(2);

/// The largest client message served; a larger one is refused (-32600), not parsed.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// Serve messages from `inbound` (one JSON-RPC message per item) until it closes; every
/// outgoing message is pushed to `outbound`.
pub async fn serve_messages(
    handler: Arc<Handler>,
    mut inbound: mpsc::Receiver<Vec<u8>>,
    outbound: mpsc::UnboundedSender<Vec<u8>>,
) {
    let session = Arc::new(Session::new());
    let mut inflight = JoinSet::new();
    while let Some(bytes) = inbound.recv().await {
        if outbound.is_closed() {
            break; // the client's side of the framing is gone
        }
        // Reap finished requests so a long session does not accumulate handles.
        while inflight.try_join_next().is_some() {}
        if bytes.len() > MAX_MESSAGE_BYTES {
            let _ = outbound.send(too_large_reply(MAX_MESSAGE_BYTES));
            continue;
        }
        let msg = match Incoming::parse(&bytes) {
            Ok(msg) => msg,
            Err(e) if handler.faults().crash_on(&e) => {
                // A crash: no grace for requests in flight.
                inflight.abort_all();
                return;
            }
            Err(e) => {
                let _ = outbound.send(malformed_reply(&e));
                continue;
            }
        };
        if let Incoming::Response { id, outcome } = msg {
            session.deliver(id.as_ref(), outcome.map(RawResult::into_value));
            continue;
        }
        let concurrent =
            matches!(&msg, Incoming::Request { method, .. } if method != m::INITIALIZE);
        let notifier = Notifier::new(outbound.clone());
        if concurrent {
            let (handler, session, tx) = (handler.clone(), session.clone(), outbound.clone());
            inflight.spawn(async move {
                if let Some(reply) = handler.handle(&session, msg, &notifier).await {
                    let _ = tx.send(reply);
                }
            });
        } else if let Some(reply) = handler.handle(&session, msg, &notifier).await {
            // `initialize` and notifications are instant and run in order, so a request
            // sent right after `initialize` always sees the negotiated version.
            let _ = outbound.send(reply);
        }
    }
    let _ = tokio::time::timeout(EOF_GRACE, async {
        while inflight.join_next().await.is_some() {}
    })
    .await;
    inflight.abort_all();
}
