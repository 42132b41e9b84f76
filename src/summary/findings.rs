//! What the server did wrong, in `summary.json`: conformance findings by stable code,
//! and how it took each client fault the buggy personas committed.

use crate::conformance::Severity;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One conformance finding in the report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FindingSummary {
    pub code: String,
    pub severity: Severity,
    pub count: u64,
    /// What is wrong and how to fix it.
    pub message: String,
    /// The first occurrence, as seen (may be empty when none was kept).
    pub example: String,
    /// The spec section it rests on.
    pub spec: String,
}

/// How the server took one persona's commits of one client fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientFaultSummary {
    pub persona: String,
    /// `metrics::ClientFault` name, e.g. `invalid-json`.
    pub fault: String,
    /// What the client did wrong.
    pub description: String,
    /// What a correct server does.
    pub expected: String,
    /// Sessions that committed it.
    pub sessions: u64,
    /// Sessions by verdict (`handled`, `wrong_error`, `crashed`, `hung`, `accepted`);
    /// every verdict is present, 0 included.
    pub verdicts: BTreeMap<String, u64>,
    /// What was seen, for the first few of each verdict other than `handled` first.
    pub examples: Vec<ClientFaultExample>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientFaultExample {
    pub verdict: String,
    pub text: String,
}
