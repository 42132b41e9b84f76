//! Recorded traffic: the trace file that `mcp-fleet record` writes (real clients'
//! sessions, every message both ways with its time) and that `replay` and
//! `profile --from-trace` read. One versioned JSON-lines format, documented in
//! docs/traces.md.

mod format;
mod read;
mod summary;
mod write;

pub use format::{ClosedBy, Event, From, Header, HttpExchange, Transport, FORMAT, VERSION};
pub use read::{RecordedSession, Trace, TraceError};
pub use summary::{
    method_of, modern_meta, Habits, Summary, META_CAPABILITIES, META_CLIENT_INFO, META_VERSION,
};
pub use write::{Redaction, TraceWriter, REDACTED};

#[cfg(test)]
mod tests;
