//! Reading a trace back: the header checked (format, version), every line parsed, the
//! events grouped by session in time order. A trace this build cannot trust whole is an
//! error that names the file, the line and the fix, never a partial guess.

use super::format::{ClosedBy, Event, From, Header, HttpExchange, Transport, FORMAT, VERSION};
use super::Summary;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

/// A trace that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read trace {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is empty: not a trace (record one with `mcp-fleet record`)")]
    Empty { path: String },
    #[error(
        "{path}:1: not an mcp-fleet trace ({why}); a trace starts with \
         {{\"format\":\"{FORMAT}\",\"version\":…}} (record one with `mcp-fleet record`)"
    )]
    NotATrace { path: String, why: String },
    #[error(
        "{path}: trace format version {found} is newer than this mcp-fleet reads (≤ {VERSION}); \
         fix: use the mcp-fleet that recorded it, or a newer one"
    )]
    Newer { path: String, found: u32 },
    #[error("{path}:{line}: corrupt trace line: {why}")]
    Corrupt {
        path: String,
        line: usize,
        why: String,
    },
    #[error(
        "{path}: truncated after line {line} ({why}): the recording did not end cleanly; \
         fix: record again, or pass --partial to use the sessions it holds"
    )]
    Truncated {
        path: String,
        line: usize,
        why: String,
    },
    #[error("{path}: the trace holds no session (no client connected while it recorded)")]
    NoSessions { path: String },
}

/// One recorded session: its events in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedSession {
    /// The trace's session number.
    pub id: u64,
    pub transport: Transport,
    /// When it opened, µs since the trace's start.
    pub opened: u64,
    pub messages: Vec<(u64, From, Value)>,
    pub http: Vec<(u64, HttpExchange)>,
    /// When and how it ended; `None` in a partial trace.
    pub closed: Option<(u64, ClosedBy, Option<String>)>,
}

impl RecordedSession {
    /// A session opened at `opened`, nothing seen of it yet.
    pub fn new(id: u64, transport: Transport, opened: u64) -> RecordedSession {
        RecordedSession {
            id,
            transport,
            opened,
            messages: Vec::new(),
            http: Vec::new(),
            closed: None,
        }
    }

    /// The client's messages, in order.
    pub fn client_messages(&self) -> impl Iterator<Item = &Value> {
        self.messages
            .iter()
            .filter(|(_, f, _)| *f == From::Client)
            .map(|(_, _, m)| m)
    }

    pub fn summary(&self) -> Summary {
        Summary::of(self)
    }
}

/// A whole trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub header: Header,
    /// In the order they opened.
    pub sessions: Vec<RecordedSession>,
    /// The `end` line was there.
    pub complete: bool,
}

impl Trace {
    /// Read `path`. `partial`: accept a trace that stops early (no `end` line, or a last
    /// line cut short), keeping its whole lines.
    pub fn load(path: &Path, partial: bool) -> Result<Trace, TraceError> {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|source| TraceError::Read {
            path: name.clone(),
            source,
        })?;
        Trace::parse(std::io::BufReader::new(file), &name, partial)
    }

    /// Parse trace text; `name` names it in errors.
    pub fn parse(text: impl BufRead, name: &str, partial: bool) -> Result<Trace, TraceError> {
        let path = || name.to_string();
        let mut lines = text.lines().enumerate().peekable();
        let Some((_, first)) = lines.next() else {
            return Err(TraceError::Empty { path: path() });
        };
        let first = first.map_err(|source| TraceError::Read {
            path: path(),
            source,
        })?;
        let header = header(&first).map_err(|why| TraceError::NotATrace { path: path(), why })?;
        if header.version > VERSION {
            return Err(TraceError::Newer {
                path: path(),
                found: header.version,
            });
        }
        let mut sessions: BTreeMap<u64, RecordedSession> = BTreeMap::new();
        let mut complete = false;
        let mut last = 1;
        while let Some((i, line)) = lines.next() {
            let n = i + 1;
            last = n;
            let line = line.map_err(|source| TraceError::Read {
                path: path(),
                source,
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let is_last = lines.peek().is_none();
            let event: Event = match serde_json::from_str(&line) {
                Ok(e) => e,
                // A last line cut short is a recording that stopped mid-write.
                Err(e) if is_last && e.is_eof() => {
                    if partial {
                        break;
                    }
                    return Err(TraceError::Truncated {
                        path: path(),
                        line: n - 1,
                        why: "its last line is cut short".into(),
                    });
                }
                Err(e) => {
                    return Err(TraceError::Corrupt {
                        path: path(),
                        line: n,
                        why: e.to_string(),
                    })
                }
            };
            if complete {
                return Err(TraceError::Corrupt {
                    path: path(),
                    line: n,
                    why: "a line after the `end` line".into(),
                });
            }
            add(&mut sessions, event, &mut complete).map_err(|why| TraceError::Corrupt {
                path: path(),
                line: n,
                why,
            })?;
        }
        if !complete && !partial {
            return Err(TraceError::Truncated {
                path: path(),
                line: last,
                why: "no `end` line".into(),
            });
        }
        let mut sessions: Vec<RecordedSession> = sessions.into_values().collect();
        sessions.sort_by_key(|s| (s.opened, s.id));
        if sessions.is_empty() {
            return Err(TraceError::NoSessions { path: path() });
        }
        Ok(Trace {
            header,
            sessions,
            complete,
        })
    }
}

fn header(line: &str) -> Result<Header, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    if value.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(format!("its first line has no \"format\":\"{FORMAT}\""));
    }
    serde_json::from_value(value).map_err(|e| format!("its header: {e}"))
}

fn add(
    sessions: &mut BTreeMap<u64, RecordedSession>,
    event: Event,
    complete: &mut bool,
) -> Result<(), String> {
    let unknown = |s: u64| format!("session {s} has no `open` line before this one");
    match event {
        Event::Open {
            t,
            session,
            transport,
        } => {
            if sessions.contains_key(&session) {
                return Err(format!("session {session} is opened twice"));
            }
            sessions.insert(session, RecordedSession::new(session, transport, t));
        }
        Event::Message {
            t,
            session,
            from,
            message,
        } => {
            if !message.is_object() {
                return Err("a message that is not a JSON object".into());
            }
            let s = sessions.get_mut(&session).ok_or_else(|| unknown(session))?;
            s.messages.push((t, from, message));
        }
        Event::Http {
            t,
            session,
            exchange,
        } => {
            let s = sessions.get_mut(&session).ok_or_else(|| unknown(session))?;
            s.http.push((t, exchange));
        }
        Event::Close {
            t,
            session,
            by,
            reason,
            ..
        } => {
            let s = sessions.get_mut(&session).ok_or_else(|| unknown(session))?;
            s.closed = Some((t, by, reason));
        }
        Event::End { .. } => *complete = true,
    }
    Ok(())
}
