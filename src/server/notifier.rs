//! The [`Notifier`]: where a running request writes its messages to the client. The
//! handler, its operations and the faults all write to it; the transports create it.

use tokio::sync::mpsc;

/// Where a request's messages to the client go while it runs (progress notifications,
/// server→client requests): the outbound queue on stdio/ws/sse, the request's SSE stream
/// on HTTP, or nowhere (plain JSON responses).
#[derive(Debug, Clone, Default)]
pub struct Notifier(pub(super) Option<mpsc::UnboundedSender<Vec<u8>>>);

impl Notifier {
    pub fn new(tx: mpsc::UnboundedSender<Vec<u8>>) -> Notifier {
        Notifier(Some(tx))
    }

    pub fn none() -> Notifier {
        Notifier(None)
    }

    /// Resolves when the client can no longer be reached (its stream or connection
    /// closed); never for `none`.
    pub(crate) async fn closed(&self) {
        match &self.0 {
            Some(tx) => tx.closed().await,
            None => std::future::pending().await,
        }
    }

    pub(crate) fn send(&self, message: Vec<u8>) {
        if let Some(tx) = &self.0 {
            // A closed receiver means the client went away; the result is dropped anyway.
            let _ = tx.send(message);
        }
    }
}
