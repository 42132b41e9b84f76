//! Per-connection plumbing: the legacy [`Session`] (negotiated version, client
//! capabilities, server→client requests awaiting their answer, the standalone stream).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::protocol::jsonrpc::encode_request;
use crate::protocol::{RequestId, RpcError};
use crate::server::notifier::Notifier;

/// How long a legacy `ask_*` tool waits for the client's answer: below the fleet's default request timeout (10 s), so a client that never answers gets
/// its tool call ended (an isError result) rather than left hanging.
pub(super) const ASK_TIMEOUT: Duration = Duration::from_secs(5);

pub(super) type Answered = Result<Value, RpcError>;

/// Lifecycle state of one client connection (a stdio process or an HTTP session): the
/// negotiated version and capabilities, written once by `initialize`, and the server's own
/// requests to the client that await an answer.
#[derive(Debug, Default)]
pub struct Session {
    pub(super) version: OnceLock<&'static str>,
    pub(super) client_capabilities: OnceLock<Value>,
    pub(super) client_initialized: AtomicBool,
    next_event_id: AtomicU64,
    next_request_id: AtomicU64,
    /// Server→client requests in flight, by the id the server gave them.
    pending: Mutex<HashMap<u64, oneshot::Sender<Answered>>>,
    /// The stream for messages unrelated to any request (the HTTP standalone GET stream).
    standalone: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
    /// The `era-lock` fault: whether the connection's first request was a modern one.
    pub(crate) first_modern: OnceLock<bool>,
    /// Open `subscriptions/listen` requests of this connection (stdio, ws), by their id's
    /// JSON: `notifications/cancelled` naming one ends it.
    listens: Mutex<HashMap<String, oneshot::Sender<()>>>,
}

/// A listen's entry in its connection's registry; dropping it leaves the registry.
pub(super) struct ListenEntry<'a> {
    session: &'a Session,
    key: String,
    /// Resolves when the client cancels the listen.
    pub(super) cancelled: oneshot::Receiver<()>,
}

impl Drop for ListenEntry<'_> {
    fn drop(&mut self) {
        lock(&self.session.listens).remove(&self.key);
    }
}

/// Why a server→client request got no result.
pub(super) enum AskFailure {
    /// The client answered with a JSON-RPC error.
    Client(RpcError),
    Timeout,
    /// No way to reach the client (no stream, or it went away).
    Unreachable,
}

impl Session {
    pub fn new() -> Session {
        Session::default()
    }

    /// The negotiated protocol version, once `initialize` has been answered.
    pub fn version(&self) -> Option<&'static str> {
        self.version.get().copied()
    }

    /// Whether the client has sent `notifications/initialized`.
    pub fn client_initialized(&self) -> bool {
        self.client_initialized.load(Ordering::Relaxed)
    }

    /// A fresh number, unique within the session; HTTP numbers its SSE streams with it
    /// (event ids are `<stream>-<n>`), as resumption requires.
    pub fn next_event_id(&self) -> u64 {
        self.next_event_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Hand the client's response to the server request it answers. Returns whether a
    /// request was waiting for it (late and unknown answers are dropped).
    pub fn deliver(&self, id: Option<&RequestId>, outcome: Answered) -> bool {
        let Some(id) = id.and_then(RequestId::as_own) else {
            return false;
        };
        let waiting = lock(&self.pending).remove(&id);
        waiting.is_some_and(|tx| tx.send(outcome).is_ok())
    }

    /// Install the standalone stream; `false` if one is already open (HTTP answers 409).
    pub fn open_standalone(&self, tx: mpsc::UnboundedSender<Vec<u8>>) -> bool {
        let mut slot = lock(&self.standalone);
        if slot.as_ref().is_some_and(|open| !open.is_closed()) {
            return false;
        }
        *slot = Some(tx);
        true
    }

    /// Whether a standalone stream is open.
    pub fn has_standalone(&self) -> bool {
        lock(&self.standalone)
            .as_ref()
            .is_some_and(|tx| !tx.is_closed())
    }

    /// Send on the standalone stream; `false` if none is open.
    pub(super) fn send_standalone(&self, message: Vec<u8>) -> bool {
        lock(&self.standalone)
            .as_ref()
            .is_some_and(|tx| tx.send(message).is_ok())
    }

    /// Register the listen `id`; `None` when the connection holds
    /// [`crate::server::listen::PER_CONNECTION`] already (or the id is in use).
    pub(super) fn open_listen(&self, id: &RequestId) -> Option<ListenEntry<'_>> {
        let key = id.to_string();
        let mut listens = lock(&self.listens);
        listens.retain(|_, tx| !tx.is_closed());
        if listens.len() >= crate::server::listen::PER_CONNECTION || listens.contains_key(&key) {
            return None;
        }
        let (tx, cancelled) = oneshot::channel();
        listens.insert(key.clone(), tx);
        Some(ListenEntry {
            session: self,
            key,
            cancelled,
        })
    }

    /// `notifications/cancelled` for `request_id`: end that listen, if it is one.
    pub(super) fn cancel_listen(&self, request_id: &Value) {
        let key = match request_id {
            Value::String(s) => RequestId::String(s.clone()).to_string(),
            other => other.to_string(),
        };
        if let Some(tx) = lock(&self.listens).remove(&key) {
            let _ = tx.send(());
        }
    }

    pub(super) fn declared(&self, capability: &str) -> bool {
        self.client_capabilities
            .get()
            .is_some_and(|caps| declares(caps, capability))
    }

    /// Send a request to the client on `notifier`'s stream and wait (bounded) for the
    /// answer that comes back through [`Session::deliver`].
    pub(super) async fn ask(
        &self,
        notifier: &Notifier,
        method: &str,
        params: &Value,
    ) -> Result<Value, AskFailure> {
        let Some(tx) = &notifier.0 else {
            return Err(AskFailure::Unreachable);
        };
        let id = self.next_request_id.fetch_add(1, Ordering::Relaxed) + 1;
        let (answer_tx, answer_rx) = oneshot::channel();
        lock(&self.pending).insert(id, answer_tx);
        // Forget the request however this ends (answer, timeout, the caller going away).
        struct Forget<'a>(&'a Session, u64);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                lock(&self.0.pending).remove(&self.1);
            }
        }
        let _forget = Forget(self, id);
        if tx.send(encode_request(id, method, Some(params))).is_err() {
            return Err(AskFailure::Unreachable);
        }
        match tokio::time::timeout(ASK_TIMEOUT, answer_rx).await {
            Ok(Ok(outcome)) => outcome.map_err(AskFailure::Client),
            Ok(Err(_)) => Err(AskFailure::Unreachable),
            Err(_) => Err(AskFailure::Timeout),
        }
    }
}

/// A poisoned lock only means another request panicked mid-update; the data is usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `caps` (a `ClientCapabilities` object) declares `capability`. Elicitation must
/// allow form mode: `{}` means form, `{url: {}}` alone does not.
pub(super) fn declares(caps: &Value, capability: &str) -> bool {
    match caps.get(capability) {
        Some(Value::Object(c)) if capability == "elicitation" => {
            c.is_empty() || c.contains_key("form")
        }
        Some(Value::Object(_)) => true,
        _ => false,
    }
}
