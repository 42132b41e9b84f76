//! Writing a trace as it is recorded: the proxy's tasks hand events to one writer thread
//! (a channel, so no task waits on the disk), which redacts, writes a line each, flushes
//! at least every 200 ms, and writes each session's summary on its `close` line.

use super::format::{ClosedBy, Event, From, Header, HttpExchange, Transport, FORMAT, VERSION};
use super::read::RecordedSession;
use super::Summary;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What is taken out of messages before they are written.
#[derive(Debug, Clone, Default)]
pub struct Redaction {
    /// JSON pointers into every message (`/params/arguments/password`): the value there
    /// becomes `"[redacted]"`.
    pub pointers: Vec<String>,
    /// Tools whose `tools/call` arguments are all redacted (their names kept), and the
    /// texts and structured content of their results (which may echo them).
    pub tools: Vec<String>,
}

/// Written in place of a redacted value.
pub const REDACTED: &str = "[redacted]";

impl Redaction {
    /// Redact `message` of `session`; `calls` remembers the redacted tools' calls in
    /// flight, whose answers (which may echo the arguments) are redacted in turn.
    fn apply(&self, message: &mut Value, session: u64, calls: &mut HashSet<(u64, String)>) {
        for p in &self.pointers {
            if let Some(v) = message.pointer_mut(p) {
                *v = Value::String(REDACTED.into());
            }
        }
        if self.tools.is_empty() {
            return;
        }
        let id = message.get("id").map(Value::to_string);
        if let Some(result) = message.get_mut("result") {
            if id.is_some_and(|id| calls.remove(&(session, id))) {
                redact_result(result);
            }
            return;
        }
        if message.get("method").and_then(Value::as_str) != Some("tools/call") {
            return;
        }
        let Some(params) = message.get_mut("params") else {
            return;
        };
        let named = params
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| self.tools.iter().any(|t| t == n));
        if !named {
            return;
        }
        if let Some(Value::Object(args)) = params.get_mut("arguments") {
            for v in args.values_mut() {
                *v = Value::String(REDACTED.into());
            }
        }
        if let Some(id) = id {
            calls.insert((session, id));
        }
    }
}

/// A redacted tool's result: its texts and structured content go, its shape stays.
fn redact_result(result: &mut Value) {
    if let Some(Value::Array(blocks)) = result.get_mut("content") {
        for b in blocks.iter_mut().filter_map(Value::as_object_mut) {
            for key in ["text", "data", "blob"] {
                if let Some(v) = b.get_mut(key) {
                    *v = Value::String(REDACTED.into());
                }
            }
            if let Some(Value::Object(r)) = b.get_mut("resource") {
                for key in ["text", "blob"] {
                    if let Some(v) = r.get_mut(key) {
                        *v = Value::String(REDACTED.into());
                    }
                }
            }
        }
    }
    if let Some(v) = result.get_mut("structuredContent") {
        *v = Value::String(REDACTED.into());
    }
}

enum Cmd {
    Event(Event),
    Finish(mpsc::Sender<std::io::Result<u64>>),
}

/// The recording side of a trace: cheap to share between the proxy's tasks.
#[derive(Debug)]
pub struct TraceWriter {
    tx: mpsc::Sender<Cmd>,
    start: Instant,
    next_session: AtomicU64,
    thread: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl std::fmt::Debug for Cmd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cmd")
    }
}

impl TraceWriter {
    /// Create `path` (replacing it) and write the header.
    pub fn create(
        path: &Path,
        mode: &str,
        upstream: &str,
        redaction: Redaction,
    ) -> std::io::Result<TraceWriter> {
        let file = std::fs::File::create(path)?;
        let mut out = std::io::BufWriter::new(file);
        let header = Header {
            format: FORMAT.into(),
            version: VERSION,
            recorder: format!("mcp-fleet {}", env!("CARGO_PKG_VERSION")),
            started: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            mode: mode.into(),
            upstream: upstream.into(),
        };
        line(&mut out, &header)?;
        out.flush()?;
        let (tx, rx) = mpsc::channel();
        let start = Instant::now();
        let thread = std::thread::Builder::new()
            .name("trace-writer".into())
            .spawn(move || write_loop(out, rx, redaction, start))?;
        Ok(TraceWriter {
            tx,
            start,
            next_session: AtomicU64::new(1),
            thread: std::sync::Mutex::new(Some(thread)),
        })
    }

    fn t(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    fn send(&self, e: Event) {
        // The writer only goes away at `finish` or on a disk error, already reported.
        let _ = self.tx.send(Cmd::Event(e));
    }

    /// A new session; its number.
    pub fn open(&self, transport: Transport) -> u64 {
        let session = self.next_session.fetch_add(1, Ordering::Relaxed);
        self.send(Event::Open {
            t: self.t(),
            session,
            transport,
        });
        session
    }

    pub fn message(&self, session: u64, from: From, message: Value) {
        self.send(Event::Message {
            t: self.t(),
            session,
            from,
            message,
        });
    }

    pub fn http(&self, session: u64, exchange: HttpExchange) {
        self.send(Event::Http {
            t: self.t(),
            session,
            exchange,
        });
    }

    pub fn close(&self, session: u64, by: ClosedBy, reason: Option<String>) {
        self.send(Event::Close {
            t: self.t(),
            session,
            by,
            reason,
            summary: None,
        });
    }

    /// Close the sessions still open (by the recorder), write the `end` line, flush;
    /// the number of sessions recorded.
    pub fn finish(&self) -> std::io::Result<u64> {
        let (tx, rx) = mpsc::channel();
        if self.tx.send(Cmd::Finish(tx)).is_err() {
            return Err(std::io::Error::other("the trace writer stopped early"));
        }
        let result = rx
            .recv()
            .unwrap_or_else(|_| Err(std::io::Error::other("the trace writer stopped early")));
        if let Some(t) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            let _ = t.join();
        }
        result
    }
}

fn line(out: &mut impl Write, value: &impl serde::Serialize) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")
}

fn write_loop(
    mut out: std::io::BufWriter<std::fs::File>,
    rx: mpsc::Receiver<Cmd>,
    redaction: Redaction,
    start: Instant,
) {
    let mut open: HashMap<u64, RecordedSession> = HashMap::new();
    let mut calls = HashSet::new();
    let (mut sessions, mut messages) = (0u64, 0u64);
    let mut failed: Option<std::io::Error> = None;
    let mut last_flush = Instant::now();
    loop {
        let cmd = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(cmd) => cmd,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if failed.is_none() {
                    failed = out.flush().err();
                }
                last_flush = Instant::now();
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        };
        let mut event = match cmd {
            Cmd::Event(e) => e,
            Cmd::Finish(reply) => {
                let t = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
                let mut ids: Vec<u64> = open.keys().copied().collect();
                ids.sort_unstable();
                for session in ids {
                    let mut close = Event::Close {
                        t,
                        session,
                        by: ClosedBy::Recorder,
                        reason: Some("the recording stopped".into()),
                        summary: None,
                    };
                    track(&mut open, &mut close);
                    if failed.is_none() {
                        failed = line(&mut out, &close).err();
                    }
                }
                let end = Event::End {
                    t,
                    sessions,
                    messages,
                };
                let result = match failed.take() {
                    Some(e) => Err(e),
                    None => line(&mut out, &end).and_then(|()| out.flush()),
                };
                let _ = reply.send(result.map(|()| sessions));
                return;
            }
        };
        match &mut event {
            Event::Open { .. } => sessions += 1,
            Event::Message {
                message, session, ..
            } => {
                messages += 1;
                redaction.apply(message, *session, &mut calls);
            }
            _ => {}
        }
        track(&mut open, &mut event);
        if failed.is_none() {
            failed = line(&mut out, &event).err();
            if last_flush.elapsed() >= Duration::from_millis(200) {
                failed = failed.or_else(|| out.flush().err());
                last_flush = Instant::now();
            }
        }
    }
}

/// Keep each open session's events, and give a `close` its summary.
fn track(open: &mut HashMap<u64, RecordedSession>, event: &mut Event) {
    match event {
        Event::Open {
            t,
            session,
            transport,
        } => {
            open.insert(*session, RecordedSession::new(*session, *transport, *t));
        }
        Event::Message {
            t,
            session,
            from,
            message,
        } => {
            if let Some(s) = open.get_mut(session) {
                // Only what the summary reads: the client's messages.
                if *from == From::Client {
                    s.messages.push((*t, *from, message.clone()));
                }
            }
        }
        Event::Http {
            t,
            session,
            exchange,
        } => {
            if let Some(s) = open.get_mut(session) {
                s.http.push((*t, exchange.clone()));
            }
        }
        Event::Close {
            session, summary, ..
        } => {
            if let Some(s) = open.remove(session) {
                *summary = Some(Summary::of(&s));
            }
        }
        Event::End { .. } => {}
    }
}
