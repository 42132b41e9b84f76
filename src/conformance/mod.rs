//! Conformance: turn what a session saw into findings — protocol mistakes of the server
//! that latency numbers hide (a wrong version answer, a capability that lies, a message
//! that is not JSON-RPC …). Sessions report them as `metrics::Event::Finding`; the
//! collector counts them with a first example; reports list them by stable code.

mod checks;
mod finding;
mod tracker;

pub use checks::{
    capability_of, fingerprint, handshake, input_schema_ok, list_result, malformed, post_ack,
    session_id_ok, structured_content, ToolListing,
};
pub use finding::{Check, CheckInfo, Severity};
pub use tracker::Tracker;

use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// What one session keeps for its checks. Empty until something unusual happens.
#[derive(Debug, Default)]
pub struct SessionChecks {
    /// One bit per [`Check`] already reported with an example by this session.
    reported: u64,
    pub tracker: Option<Arc<Tracker>>,
    /// Legacy era: between `initialize` and `notifications/initialized`.
    pub handshaking: bool,
    /// Each listed tool's `outputSchema`, to check `structuredContent` (shared between
    /// sessions: `session/shared.rs`).
    pub output_schemas: HashMap<String, Arc<Value>>,
}

impl SessionChecks {
    /// True the first time this session sees `check` (it then sends an example).
    pub fn first(&mut self, check: Check) -> bool {
        let new = self.reported & check.bit() == 0;
        self.reported |= check.bit();
        new
    }
}
