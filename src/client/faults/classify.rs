//! What the server did with a client's fault, judged: the pure table from what was seen
//! (an answer, an error, a status, silence, a closed connection, the health check after)
//! to a verdict and the words that explain it.

use crate::metrics::{ClientFault, Verdict};
use crate::protocol::jsonrpc::codes;
use crate::protocol::ProtocolVersion;
use serde_json::Value;

/// How the server answered the faulty message.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// A JSON-RPC result.
    Result(Value),
    /// A JSON-RPC error; over HTTP possibly the body of an error status, kept in
    /// `status` (for faults where the status alone is the right answer).
    Error {
        code: i64,
        detail: String,
        status: Option<u16>,
    },
    /// An HTTP status without a JSON-RPC error in its body.
    Status { status: u16, detail: String },
    /// Bytes that are not a JSON-RPC message.
    Garbled(String),
    /// The connection or the process went away.
    Closed(String),
    /// No answer within the request timeout.
    Silence,
    /// Nothing is expected back (the client vanished, or only other sessions matter).
    Nothing,
}

/// The health check after the fault: does the server still serve?
#[derive(Debug, Clone, PartialEq)]
pub enum Health {
    Serves,
    Fails(String),
}

/// The verdict on `fault`, given what was seen and the health check after it.
pub fn classify(fault: ClientFault, seen: &Seen, health: &Health) -> (Verdict, String) {
    use ClientFault as F;
    let closed_is_fine = matches!(fault, F::Oversized | F::Vanish | F::SlowReader);
    match seen {
        Seen::Closed(why) if !closed_is_fine => {
            return (Verdict::Crashed, format!("the connection went away: {why}"))
        }
        Seen::Silence => {
            return (Verdict::Hung, "no answer within the request timeout".into());
        }
        _ => {}
    }
    if let Health::Fails(why) = health {
        return (
            Verdict::Crashed,
            format!("the server stopped serving: {why}"),
        );
    }
    let said = describe(seen);
    let verdict = match (fault, seen) {
        (_, Seen::Garbled(_)) => Verdict::WrongError,
        (F::Oversized | F::Vanish | F::SlowReader, _) => match seen {
            Seen::Result(_) if fault == F::Oversized => Verdict::Accepted,
            _ => Verdict::Handled,
        },
        (F::BeforeInitialized | F::NeverInitialized | F::DuplicateId, _) => Verdict::Handled,
        (F::IgnoreServerRequests, Seen::Nothing) => Verdict::Handled,
        (F::IgnoreServerRequests, _) => Verdict::Handled,
        // The spec wants a counter-offer, not an error.
        (F::UnknownVersion, Seen::Error { .. } | Seen::Status { .. }) => Verdict::WrongError,
        (F::UnknownVersion, Seen::Result(r)) => {
            let answered = r.get("protocolVersion").and_then(Value::as_str);
            match answered {
                Some(v) if ProtocolVersion::new(v).is_known() => Verdict::Handled,
                _ => Verdict::Accepted,
            }
        }
        (F::InvalidArguments | F::UnknownTool, Seen::Result(r)) => {
            if r.get("isError").and_then(Value::as_bool) == Some(true) {
                Verdict::Handled
            } else {
                Verdict::Accepted
            }
        }
        (_, Seen::Result(_)) => Verdict::Accepted,
        (_, Seen::Error { code, status, .. }) => refusal(fault, Some(*code), *status),
        (_, Seen::Status { status, .. }) => refusal(fault, None, Some(*status)),
        (_, Seen::Nothing) => Verdict::Handled,
        (_, Seen::Closed(_) | Seen::Silence) => Verdict::Handled,
    };
    (verdict, said)
}

/// A refusal: the right code (or status) for this fault, or a wrong one. Streamable
/// HTTP asks only for an error status where a message cannot be read as JSON-RPC (its body
/// MAY carry an error): a 400 is right there whatever code its body says.
fn refusal(fault: ClientFault, code: Option<i64>, status: Option<u16>) -> Verdict {
    use ClientFault as F;
    let right: &[i64] = match fault {
        F::NoJsonrpc => &[codes::INVALID_REQUEST],
        F::WrongMethod => &[codes::METHOD_NOT_FOUND, codes::INVALID_REQUEST],
        F::CapabilitiesNotObject | F::NoClientInfo | F::NoVersion => {
            &[codes::INVALID_PARAMS, codes::INVALID_REQUEST]
        }
        F::UndeclaredCapability => &[codes::METHOD_NOT_FOUND],
        F::InvalidArguments | F::UnknownTool => &[codes::INVALID_PARAMS],
        // A server of both eras may take it for a legacy request before `initialize`.
        F::NoMeta => &[codes::INVALID_PARAMS, codes::INVALID_REQUEST],
        F::InvalidJson => &[codes::PARSE_ERROR],
        F::HeaderMismatch => &[codes::HEADER_MISMATCH],
        // Any error will do.
        _ => return Verdict::Handled,
    };
    let status_ok = matches!(fault, F::NoJsonrpc | F::InvalidJson) && status == Some(400);
    if code.is_some_and(|c| right.contains(&c)) || status_ok {
        Verdict::Handled
    } else {
        Verdict::WrongError
    }
}

/// What was seen, in a few words.
fn describe(seen: &Seen) -> String {
    match seen {
        Seen::Result(r) => {
            let text = r.to_string();
            let short: String = text.chars().take(120).collect();
            format!("a result: {short}")
        }
        Seen::Error { code, detail, .. } => format!("error {code}: {detail}"),
        Seen::Status { status, detail } => format!("HTTP {status}: {detail}"),
        Seen::Garbled(t) => format!("not a JSON-RPC message: {t}"),
        Seen::Closed(t) => format!("the connection closed: {t}"),
        Seen::Silence => "no answer".into(),
        Seen::Nothing => "nothing expected back; the server still serves".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use ClientFault as F;
    use Verdict as V;

    fn err(code: i64) -> Seen {
        Seen::Error {
            code,
            detail: "x".into(),
            status: None,
        }
    }

    /// An error in the body of an HTTP `status`.
    fn err_in(status: u16, code: i64) -> Seen {
        Seen::Error {
            code,
            detail: "x".into(),
            status: Some(status),
        }
    }

    #[test]
    fn the_verdict_table() {
        let ok = Health::Serves;
        let down = Health::Fails("ping: connection refused".into());
        let cases: Vec<(F, Seen, &Health, V)> = vec![
            (F::NoJsonrpc, err(-32600), &ok, V::Handled),
            (
                F::NoJsonrpc,
                Seen::Status {
                    status: 400,
                    detail: "bad".into(),
                },
                &ok,
                V::Handled,
            ),
            (F::NoJsonrpc, err(-32603), &ok, V::WrongError),
            (F::NoJsonrpc, err_in(400, -32700), &ok, V::Handled),
            (F::NoJsonrpc, err_in(404, -32700), &ok, V::WrongError),
            (F::InvalidJson, err_in(400, -32000), &ok, V::Handled),
            (F::UnknownTool, err_in(400, -32603), &ok, V::WrongError),
            (F::NoJsonrpc, Seen::Result(json!({})), &ok, V::Accepted),
            (F::WrongMethod, err(-32601), &ok, V::Handled),
            (F::NoClientInfo, err(-32602), &ok, V::Handled),
            (F::NoClientInfo, Seen::Result(json!({})), &ok, V::Accepted),
            (
                F::UnknownVersion,
                Seen::Result(json!({"protocolVersion": "2025-06-18"})),
                &ok,
                V::Handled,
            ),
            (
                F::UnknownVersion,
                Seen::Result(json!({"protocolVersion": "1900-01-01"})),
                &ok,
                V::Accepted,
            ),
            (F::UnknownVersion, err(-32602), &ok, V::WrongError),
            (F::UndeclaredCapability, err(-32601), &ok, V::Handled),
            (F::UndeclaredCapability, err(-32603), &ok, V::WrongError),
            (
                F::InvalidArguments,
                Seen::Result(json!({"isError": true})),
                &ok,
                V::Handled,
            ),
            (
                F::InvalidArguments,
                Seen::Result(json!({"content": []})),
                &ok,
                V::Accepted,
            ),
            (F::UnknownTool, err(-32602), &ok, V::Handled),
            (F::UnknownTool, Seen::Silence, &ok, V::Hung),
            (F::InvalidJson, err(-32700), &ok, V::Handled),
            (F::InvalidJson, err(-32603), &ok, V::WrongError),
            (F::InvalidJson, Seen::Closed("EOF".into()), &ok, V::Crashed),
            (
                F::InvalidJson,
                Seen::Garbled("hello".into()),
                &ok,
                V::WrongError,
            ),
            (F::Oversized, Seen::Closed("reset".into()), &ok, V::Handled),
            (
                F::Oversized,
                Seen::Status {
                    status: 413,
                    detail: "".into(),
                },
                &ok,
                V::Handled,
            ),
            (F::Oversized, Seen::Result(json!({})), &ok, V::Accepted),
            (F::Vanish, Seen::Nothing, &ok, V::Handled),
            (F::Vanish, Seen::Nothing, &down, V::Crashed),
            (F::DuplicateId, err(-32600), &ok, V::Handled),
            (F::DuplicateId, Seen::Silence, &ok, V::Hung),
            (
                F::IgnoreServerRequests,
                Seen::Result(json!({"isError": true})),
                &ok,
                V::Handled,
            ),
            (F::BeforeInitialized, err(-32600), &ok, V::Handled),
            (F::NoMeta, err(-32602), &ok, V::Handled),
            (F::NoMeta, Seen::Result(json!({})), &ok, V::Accepted),
            (F::HeaderMismatch, err(-32020), &ok, V::Handled),
            (
                F::HeaderMismatch,
                Seen::Status {
                    status: 400,
                    detail: "".into(),
                },
                &ok,
                V::WrongError,
            ),
            (F::UnknownTool, err(-32602), &down, V::Crashed),
        ];
        for (fault, seen, health, want) in cases {
            let (got, detail) = classify(fault, &seen, health);
            assert_eq!(got, want, "{} {seen:?} {health:?}: {detail}", fault.name());
            assert!(!detail.is_empty());
        }
    }
}
