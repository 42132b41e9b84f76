//! `run --requests FILE`: every phase sample of the run as one JSON record a line
//! (NDJSON; zstd-compressed when FILE ends in `.zst`), written by the collector as it
//! folds the sample, so the file holds exactly what `summary.json` counts. The first
//! line is a header (the format's version, the run, its start and shard, the personas
//! with their transports, the tool and request-step names), the last a footer with the number of records, so a reader
//! tells a whole file from a cut one; a session that ended unreachable or interrupted
//! has an end record of its own (completed and failed sessions have their `session`
//! sample). Records are formatted by hand into one reused buffer: no allocation per
//! sample. A write error never stops the run: writing stops, and the error is kept
//! ([`super::Stats::requests_error`]).

use super::histogram::micros;
use super::{Outcome, PersonaId, Phase, Sample, SessionOutcome};
use crate::protocol::TransportKind;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use tokio::time::Instant;

/// The format's version, in the header's [`HEADER_KEY`]. A reader refuses newer ones.
pub const FORMAT: u64 = 1;
/// The header's key, whose value is [`FORMAT`].
pub const HEADER_KEY: &str = "mcp_fleet_requests";
/// The footer's key (its value is [`FORMAT`] too); the footer's `records` counts the
/// lines between the header and it.
pub const END_KEY: &str = "mcp_fleet_requests_end";

/// Buffered before each write to the file (or the compressor).
const BUFFER: usize = 1 << 20;
/// zstd's level: fast, the file is for reading back, not for archiving.
const ZSTD_LEVEL: i32 = 3;

/// What the header says, and the names records are written with (indexed by the ids
/// samples carry).
#[derive(Debug, Clone, Default)]
pub struct Header {
    pub run: String,
    /// RFC 3339, the run's start.
    pub started_at: String,
    /// `I/N`.
    pub shard: String,
    /// Each persona's name and transport, by [`PersonaId`].
    pub personas: Vec<(String, TransportKind)>,
    /// The interned tool names (`Sample::tool` of a `tools/call`).
    pub tools: Vec<String>,
    /// The phase names of `request` steps (`Sample::tool` of a `request` sample).
    pub requests: Vec<String>,
}

enum Out {
    Plain(BufWriter<File>),
    Zstd(BufWriter<zstd::stream::write::Encoder<'static, File>>),
}

impl Out {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Out::Plain(w) => w.write_all(bytes),
            Out::Zstd(w) => w.write_all(bytes),
        }
    }

    /// Flush everything, and end the zstd frame.
    fn finish(self) -> io::Result<()> {
        match self {
            Out::Plain(mut w) => w.flush(),
            Out::Zstd(w) => {
                let encoder = w.into_inner().map_err(|e| e.into_error())?;
                encoder.finish()?.flush()
            }
        }
    }
}

/// The writer of one run's requests file.
pub struct RequestsSink {
    path: PathBuf,
    /// `None` once a write failed: the rest is counted as lost.
    out: Option<Out>,
    /// The run's start: `intended_us` and `start_us` count from it.
    base: Instant,
    /// Names as JSON strings, quotes and escapes included.
    personas: Vec<String>,
    tools: Vec<String>,
    requests: Vec<String>,
    line: Vec<u8>,
    /// The trace id of each traced session still going ([`RequestsSink::traced`]).
    traces: HashMap<u64, u128>,
    records: u64,
    lost: u64,
    error: Option<io::Error>,
}

impl RequestsSink {
    /// Create `path` (truncating it) and write the header; `base` is the run's start on
    /// the clock samples are taken on.
    pub fn create(path: &Path, header: &Header, base: Instant) -> io::Result<RequestsSink> {
        let file = File::create(path)?;
        let zst = path.extension().is_some_and(|e| e == "zst");
        let out = if zst {
            let encoder = zstd::stream::write::Encoder::new(file, ZSTD_LEVEL)?;
            Out::Zstd(BufWriter::with_capacity(BUFFER, encoder))
        } else {
            Out::Plain(BufWriter::with_capacity(BUFFER, file))
        };
        let quoted = |names: &[String]| names.iter().map(|n| json_string(n)).collect();
        let mut sink = RequestsSink {
            path: path.to_path_buf(),
            out: Some(out),
            base,
            personas: header
                .personas
                .iter()
                .map(|(n, _)| json_string(n))
                .collect(),
            tools: quoted(&header.tools),
            requests: quoted(&header.requests),
            line: Vec::with_capacity(512),
            traces: HashMap::new(),
            records: 0,
            lost: 0,
            error: None,
        };
        let personas: Vec<serde_json::Value> = header
            .personas
            .iter()
            .map(|(name, t)| serde_json::json!({"name": name, "transport": t.name()}))
            .collect();
        let head = serde_json::json!({
            HEADER_KEY: FORMAT,
            "run": header.run,
            "started_at": header.started_at,
            "shard": header.shard,
            "personas": personas,
            "tools": header.tools,
            "requests": header.requests,
        });
        sink.line = head.to_string().into_bytes();
        sink.line.push(b'\n');
        sink.flush_line();
        if let Some(e) = sink.error.take() {
            return Err(e);
        }
        Ok(sink)
    }

    /// Write one record of `s`.
    pub fn sample(&mut self, s: &Sample) {
        self.records += 1;
        if self.out.is_none() {
            self.lost += 1;
            return;
        }
        self.line.clear();
        let names = Names {
            personas: &self.personas,
            tools: &self.tools,
            requests: &self.requests,
        };
        let trace = if self.traces.is_empty() {
            None
        } else {
            self.traces.get(&s.session).copied()
        };
        format_sample(&mut self.line, s, self.base, names, trace);
        self.flush_line();
    }

    /// Session `session` carries this trace id: its later records name it.
    pub fn traced(&mut self, session: u64, trace: u128) {
        self.traces.insert(session, trace);
    }

    /// A session that ended without a `session` sample (unreachable, interrupted): its
    /// end record. Completed and failed sessions have their `session` sample instead.
    pub fn ended(&mut self, session: u64, persona: PersonaId, outcome: SessionOutcome) {
        self.traces.remove(&session);
        let end = match outcome {
            SessionOutcome::Unreachable => "unreachable",
            SessionOutcome::Interrupted => "interrupted",
            SessionOutcome::Completed | SessionOutcome::Failed => return,
        };
        self.records += 1;
        if self.out.is_none() {
            self.lost += 1;
            return;
        }
        let l = &mut self.line;
        l.clear();
        l.extend_from_slice(b"{\"session\":");
        l.extend_from_slice(itoa::Buffer::new().format(session).as_bytes());
        l.extend_from_slice(b",\"persona\":");
        push_name(l, &self.personas, Some(persona));
        l.extend_from_slice(b",\"end\":\"");
        l.extend_from_slice(end.as_bytes());
        l.extend_from_slice(b"\"}\n");
        self.flush_line();
    }

    /// Write the footer and close the file: `Err` says what went wrong, and how many
    /// records were lost, if anything did.
    pub fn finish(mut self) -> Result<u64, String> {
        if self.out.is_some() {
            self.line =
                format!("{{\"{END_KEY}\":{FORMAT},\"records\":{}}}\n", self.records).into_bytes();
            self.flush_line();
        }
        if let Some(out) = self.out.take() {
            if let Err(e) = out.finish() {
                self.error.get_or_insert(e);
            }
        }
        match self.error {
            None => Ok(self.records),
            Some(e) => Err(format!(
                "writing the requests file {}: {e} ({} of {} records lost)",
                self.path.display(),
                self.lost,
                self.records
            )),
        }
    }

    fn flush_line(&mut self) {
        if let Some(out) = &mut self.out {
            if let Err(e) = out.write_all(&self.line) {
                self.error = Some(e);
                self.out = None;
                self.lost += 1;
            }
        }
    }
}

/// The name tables, as JSON strings.
#[derive(Clone, Copy)]
struct Names<'a> {
    personas: &'a [String],
    tools: &'a [String],
    requests: &'a [String],
}

/// One sample's record, `\n` included, appended to `l`.
fn format_sample(
    l: &mut Vec<u8>,
    s: &Sample,
    base: Instant,
    names: Names<'_>,
    trace: Option<u128>,
) {
    let mut n = itoa::Buffer::new();
    let fleet = usize::from(s.persona) >= names.personas.len();
    l.extend_from_slice(b"{\"session\":");
    l.extend_from_slice(n.format(s.session).as_bytes());
    l.extend_from_slice(b",\"persona\":");
    push_name(l, names.personas, Some(s.persona));
    if fleet {
        // The fleet's own samples (scheduler lag) speak no era or version.
        l.extend_from_slice(b",\"era\":null,\"version\":null");
    } else {
        l.extend_from_slice(b",\"era\":\"");
        l.extend_from_slice(s.era.name().as_bytes());
        l.extend_from_slice(b"\",\"version\":\"");
        l.extend_from_slice(s.version.name().as_bytes());
        l.push(b'"');
    }
    l.extend_from_slice(b",\"phase\":\"");
    l.extend_from_slice(s.phase.name().as_bytes());
    l.push(b'"');
    if let Some(tool) = s.tool {
        l.extend_from_slice(b",\"tool\":");
        let table = match s.phase {
            Phase::Request => names.requests,
            _ => names.tools,
        };
        push_name(l, table, Some(tool));
    }
    let us = |at: Instant| micros(at.saturating_duration_since(base));
    l.extend_from_slice(b",\"intended_us\":");
    l.extend_from_slice(n.format(us(s.intended)).as_bytes());
    l.extend_from_slice(b",\"start_us\":");
    l.extend_from_slice(n.format(us(s.started)).as_bytes());
    l.extend_from_slice(b",\"latency_us\":");
    let latency = micros(s.finished.saturating_duration_since(s.started));
    l.extend_from_slice(n.format(latency).as_bytes());
    if let Some(t) = trace {
        // The W3C form: 32 lower-case hex digits.
        let _ = write!(l, ",\"trace\":\"{t:032x}\"");
    }
    match s.outcome {
        Outcome::Ok => l.extend_from_slice(b",\"outcome\":\"ok\"}\n"),
        Outcome::ToolError => l.extend_from_slice(b",\"outcome\":\"tool_error\"}\n"),
        Outcome::Failed(kind) => {
            l.extend_from_slice(b",\"outcome\":\"failed\",\"kind\":\"");
            // Kind names are ASCII without quotes (`rpc_error:-32601`).
            l.extend_from_slice(kind.name().as_bytes());
            l.extend_from_slice(b"\"}\n");
        }
    }
}

/// The JSON string of the name at `id` in `table`, or `null` (the fleet's samples, an
/// id the table does not have).
fn push_name<I: Into<usize>>(l: &mut Vec<u8>, table: &[String], id: Option<I>) {
    match id.and_then(|i| table.get(i.into())) {
        Some(quoted) => l.extend_from_slice(quoted.as_bytes()),
        None => l.extend_from_slice(b"null"),
    }
}

/// `s` as a JSON string, quotes and escapes included.
fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests;
