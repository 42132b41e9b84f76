//! The SSE streams of a Streamable HTTP session: event ids `<stream>-<n>`, the bounded
//! replay buffers behind `Last-Event-ID` resumption, the standalone GET stream, and the
//! `sse_drop_after` fault that cuts a stream's first connection.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use tokio::sync::mpsc;

use super::super::handler::Session;

/// Events kept for replay per stream, and streams kept per session (oldest forgotten
/// first; the standalone stream is never forgotten).
const REPLAY_EVENTS: usize = 256;
const KEPT_STREAMS: usize = 64;
/// Reconnect delay announced in the priming event when the drop fault will cut a stream.
const DROP_RETRY_MS: u64 = 200;

/// One Streamable HTTP session: the handler's session plus what only HTTP has, the SSE
/// streams with their replay buffers and the request count of the expiry fault.
#[derive(Debug, Default)]
pub(super) struct HttpSession {
    pub(super) core: Session,
    pub(super) requests: AtomicU32,
    streams: Mutex<Streams>,
    /// When a request last named the session, ms from the server's start (the
    /// `--session-ttl` sweep drops the idle ones).
    pub(super) last_seen_ms: std::sync::atomic::AtomicU64,
}

#[derive(Debug, Default)]
struct Streams {
    logs: BTreeMap<u64, Arc<Mutex<StreamLog>>>,
    standalone: Option<u64>,
}

/// One SSE stream of a session: every event it carried (bounded), for `Last-Event-ID`, and
/// the connection currently receiving it, if any. Event ids are `<stream>-<n>`; the
/// priming event is `<stream>-0`.
#[derive(Debug)]
pub(super) struct StreamLog {
    stream: u64,
    next: u64,
    events: VecDeque<(u64, Bytes)>,
    /// The final response is logged: the stream ends after it is delivered.
    done: bool,
    live: Option<mpsc::UnboundedSender<Bytes>>,
    /// The drop fault: how many more messages the first connection may carry.
    budget: Option<usize>,
}

/// Why a GET cannot have the stream it asks for.
pub(super) enum Refusal {
    Conflict,
    UnknownEvent,
}

impl StreamLog {
    /// Log a message and deliver it to the live connection, unless the drop fault cuts
    /// the connection first (it never lets the final response through).
    pub(super) fn push(&mut self, msg: Vec<u8>, last: bool) {
        self.next += 1;
        let n = self.next;
        let event = frame_event(Some(&format!("{}-{n}", self.stream)), &msg);
        self.events.push_back((n, event.clone()));
        if self.events.len() > REPLAY_EVENTS {
            self.events.pop_front();
        }
        if self.live.is_none() {
            return;
        }
        if let Some(budget) = self.budget {
            if last || budget == 0 {
                self.live = None;
                return;
            }
            self.budget = Some(budget - 1);
        }
        if let Some(live) = &self.live {
            // A gone client keeps the stream going: it may resume.
            let _ = live.send(event);
        }
        if self.budget == Some(0) {
            self.live = None;
        }
    }

    pub(super) fn finish(&mut self) {
        self.done = true;
        self.live = None;
    }

    /// Continue the stream on a new connection: replay what followed event `after`, then
    /// go on live unless the stream is complete.
    fn attach(&mut self, live: mpsc::UnboundedSender<Bytes>, after: u64) -> Result<(), Refusal> {
        if self.live.as_ref().is_some_and(|l| !l.is_closed()) {
            return Err(Refusal::Conflict);
        }
        for (_, event) in self.events.iter().filter(|(n, _)| *n > after) {
            let _ = live.send(event.clone());
        }
        // The fault cuts the first connection only.
        self.budget = None;
        self.live = (!self.done).then_some(live);
        Ok(())
    }
}

impl HttpSession {
    /// A new stream whose first event (priming: id, empty data) is already queued.
    pub(super) fn open_stream(&self, budget: Option<usize>) -> (Arc<Mutex<StreamLog>>, Body) {
        let stream = self.core.next_event_id();
        let (tx, rx) = mpsc::unbounded_channel();
        let retry = if budget.is_some() {
            format!("retry: {DROP_RETRY_MS}\n")
        } else {
            String::new()
        };
        let _ = tx.send(Bytes::from(format!("id: {stream}-0\n{retry}data:\n\n")));
        let log = Arc::new(Mutex::new(StreamLog {
            stream,
            next: 0,
            events: VecDeque::new(),
            done: false,
            live: (budget != Some(0)).then_some(tx),
            budget,
        }));
        let mut streams = lock(&self.streams);
        streams.logs.insert(stream, log.clone());
        while streams.logs.len() > KEPT_STREAMS {
            let standalone = streams.standalone;
            let oldest = streams
                .logs
                .keys()
                .copied()
                .find(|k| Some(*k) != standalone);
            match oldest {
                Some(k) => streams.logs.remove(&k),
                None => break,
            };
        }
        (log, body_of(rx))
    }

    /// The standalone GET stream; 409 when one is already open.
    pub(super) fn open_standalone(&self) -> Result<Body, Refusal> {
        let (tx, rx) = mpsc::unbounded_channel();
        if !self.core.open_standalone(tx) {
            return Err(Refusal::Conflict);
        }
        let (log, body) = self.open_stream(None);
        let live = lock(&log).live.clone();
        lock(&self.streams).standalone = Some(lock(&log).stream);
        tokio::spawn(async move { pump(&log, rx, live).await });
        Ok(body)
    }

    /// `GET` + `Last-Event-ID: <stream>-<n>`.
    pub(super) fn resume(&self, last_event_id: &str) -> Result<Body, Refusal> {
        let (stream, after) = last_event_id
            .trim()
            .split_once('-')
            .and_then(|(s, n)| Some((s.parse::<u64>().ok()?, n.parse::<u64>().ok()?)))
            .ok_or(Refusal::UnknownEvent)?;
        let (log, standalone) = {
            let streams = lock(&self.streams);
            let log = streams.logs.get(&stream).cloned();
            (
                log.ok_or(Refusal::UnknownEvent)?,
                streams.standalone == Some(stream),
            )
        };
        let (live, rx) = mpsc::unbounded_channel();
        if standalone {
            let (tx, messages) = mpsc::unbounded_channel();
            if !self.core.open_standalone(tx) {
                return Err(Refusal::Conflict);
            }
            lock(&log).attach(live.clone(), after)?;
            tokio::spawn(async move { pump(&log, messages, Some(live)).await });
        } else {
            lock(&log).attach(live, after)?;
        }
        Ok(body_of(rx))
    }
}

/// Move the handler's messages into `log` until their senders are gone or, when
/// `watched` is given (the standalone stream), until that connection closes, so the
/// session sees the stream as closed and list_changed falls back to request streams.
pub(super) async fn pump(
    log: &Mutex<StreamLog>,
    mut messages: mpsc::UnboundedReceiver<Vec<u8>>,
    watched: Option<mpsc::UnboundedSender<Bytes>>,
) {
    let closed = async {
        match &watched {
            Some(live) => live.closed().await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(closed);
    loop {
        tokio::select! {
            msg = messages.recv() => match msg {
                Some(msg) => lock(log).push(msg, false),
                None => break,
            },
            () = &mut closed => break,
        }
    }
}

fn body_of(rx: mpsc::UnboundedReceiver<Bytes>) -> Body {
    Body::from_stream(futures::stream::unfold(rx, |mut rx| async move {
        let event = rx.recv().await?;
        Some((Ok::<_, Infallible>(event), rx))
    }))
}

/// One SSE `message` event carrying a JSON-RPC message.
pub(super) fn frame_event(id: Option<&str>, msg: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(msg.len() + 48);
    if let Some(id) = id {
        event.extend_from_slice(b"id: ");
        event.extend_from_slice(id.as_bytes());
        event.push(b'\n');
    }
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(msg);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// A poisoned lock only means another request panicked mid-update; the data is usable.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
