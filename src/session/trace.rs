//! W3C trace context (persona `trace = true`): every request of the session carries
//! `traceparent` / `tracestate` in `params._meta` (the keys 2026-07-28 reserves for
//! them; any era's `_meta` may carry them) and, over HTTP, as headers. One trace id per
//! session, one span id per request (derived from the trace and the request's id, so
//! nothing is stored per request); each answered request reports its latency with its
//! ids, and the run keeps the slowest per phase, so a server's own traces can be found
//! for its worst samples.

use http::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

use crate::metrics::Phase;
use crate::protocol::meta::META;
use crate::protocol::methods;

pub const TRACEPARENT: &str = "traceparent";
pub const TRACESTATE: &str = "tracestate";

/// A session's trace.
#[derive(Debug, Clone)]
pub(crate) struct Trace {
    pub(crate) id: u128,
    state: String,
}

/// `traceparent` of a span: version 00, sampled.
pub fn traceparent(trace: u128, span: u64) -> String {
    format!("00-{trace:032x}-{span:016x}-01")
}

/// The phase a traced request's latency is kept under.
pub(crate) fn phase_of(method: &str) -> Phase {
    match method {
        methods::SERVER_DISCOVER => Phase::Discover,
        m => Phase::from_name(m).unwrap_or(Phase::Request),
    }
}

impl Trace {
    /// A fresh trace for a session of persona `persona` (its index).
    pub(crate) fn new(persona: u16) -> Trace {
        let mut id: u128 = rand::random();
        if id == 0 {
            id = 1; // all-zero trace ids are invalid
        }
        Trace {
            id,
            state: format!("mcp-fleet=persona:{persona}"),
        }
    }

    /// Request `request`'s span id: a SplitMix64 step of the trace and the id, never 0.
    pub(crate) fn span(&self, request: u64) -> u64 {
        let mut z = (self.id as u64) ^ request.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)).max(1)
    }

    fn entries(&self, request: u64) -> [(&'static str, String); 2] {
        [
            (TRACEPARENT, traceparent(self.id, self.span(request))),
            (TRACESTATE, self.state.clone()),
        ]
    }

    /// `params` with the trace context in its `_meta`.
    pub(crate) fn params(&self, params: Option<&Value>, request: u64) -> Value {
        let mut p = match params {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        let meta = p.entry(META).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            for (k, v) in self.entries(request) {
                meta.insert(k.into(), Value::String(v));
            }
        }
        Value::Object(p)
    }

    /// Params encoded ahead (a persona's `initialize`), with the trace context: parsed,
    /// decorated and encoded again (only traced sessions pay for it).
    pub(crate) fn encoded(&self, encoded: &str, request: u64) -> String {
        let parsed: Option<Value> = serde_json::from_str(encoded).ok();
        self.params(parsed.as_ref(), request).to_string()
    }

    /// The request's HTTP headers plus the trace context.
    pub(crate) fn headers(
        &self,
        base: &[(HeaderName, HeaderValue)],
        request: u64,
    ) -> Vec<(HeaderName, HeaderValue)> {
        let mut h = base.to_vec();
        for (k, v) in self.entries(request) {
            if let Ok(v) = HeaderValue::from_str(&v) {
                h.push((HeaderName::from_static(k), v));
            }
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_request_gets_its_own_span_in_one_trace() {
        let t = Trace::new(3);
        let a = t.params(
            Some(&json!({"name": "echo", "_meta": {"progressToken": 1}})),
            1,
        );
        let b = t.params(None, 2);
        let pa = a["_meta"][TRACEPARENT]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let pb = b["_meta"][TRACEPARENT]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert_eq!(a["_meta"]["progressToken"], 1, "the caller's _meta stays");
        assert_eq!(a["name"], "echo");
        assert_eq!(pa.len(), 55, "{pa}");
        assert!(pa.starts_with("00-") && pa.ends_with("-01"));
        assert_eq!(pa[3..35], pb[3..35], "one trace id per session");
        assert_ne!(pa[36..52], pb[36..52], "one span id per request");
        assert_eq!(a["_meta"][TRACESTATE], "mcp-fleet=persona:3");
        let h = t.headers(&[], 1);
        assert_eq!(h[0].1.to_str().ok(), Some(pa.as_str()));
        let init = t.encoded(r#"{"protocolVersion":"2025-11-25"}"#, 1);
        assert!(init.contains(&pa) && init.contains("protocolVersion"));
    }
}
