//! An optional observer of one session: every message sent and received, with the time
//! since the session began. Only `inspect` creates one; a load run never allocates it.

use crate::protocol::{Incoming, RequestId};
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// Which way a transcript entry went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Sent,
    Received,
    /// Not a message: something the client noticed (a finding, a malformed message).
    Note,
}

#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// Milliseconds since the transcript began.
    pub at_ms: f64,
    pub direction: Direction,
    pub message: Value,
}

/// Shared so the caller can read it after the session is gone.
#[derive(Debug, Clone)]
pub struct Transcript {
    start: Instant,
    entries: Arc<Mutex<Vec<Entry>>>,
}

impl Default for Transcript {
    fn default() -> Self {
        Transcript {
            start: Instant::now(),
            entries: Arc::default(),
        }
    }
}

impl Transcript {
    fn push(&self, direction: Direction, message: Value) {
        let at_ms = (self.start.elapsed().as_secs_f64() * 1e6).round() / 1e3;
        let mut list = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        list.push(Entry {
            at_ms,
            direction,
            message,
        });
    }

    /// Bytes we sent (our own encoding, so always JSON).
    pub fn sent(&self, bytes: &[u8]) {
        let v = serde_json::from_slice(bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()));
        self.push(Direction::Sent, v);
    }

    /// A message as received, rebuilt from its parsed form.
    pub fn received(&self, msg: &Incoming) {
        self.push(Direction::Received, to_json(msg));
    }

    /// A body received outside the message flow (the answer to a POSTed notification),
    /// as JSON when it is, else as text.
    pub fn received_raw(&self, bytes: &[u8]) {
        let v = serde_json::from_slice(bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()));
        self.push(Direction::Received, v);
    }

    pub fn note(&self, text: impl Into<String>) {
        self.push(Direction::Note, Value::String(text.into()));
    }

    pub fn entries(&self) -> Vec<Entry> {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

fn id_json(id: Option<&RequestId>) -> Value {
    match id {
        Some(RequestId::Number(n)) => json!(n),
        Some(RequestId::String(s)) => json!(s),
        None => Value::Null,
    }
}

/// The JSON-RPC object a parsed message came from.
pub fn to_json(msg: &Incoming) -> Value {
    match msg {
        Incoming::Request { id, method, params } => {
            let mut v = json!({"jsonrpc": "2.0", "id": id_json(Some(id)), "method": method});
            if let Some(p) = params {
                v["params"] = p.clone();
            }
            v
        }
        Incoming::Notification { method, params } => {
            let mut v = json!({"jsonrpc": "2.0", "method": method});
            if let Some(p) = params {
                v["params"] = p.clone();
            }
            v
        }
        Incoming::Response { id, outcome } => match outcome {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id_json(id.as_ref()), "result": r.value()}),
            Err(e) => json!({"jsonrpc": "2.0", "id": id_json(id.as_ref()), "error": e}),
        },
    }
}
