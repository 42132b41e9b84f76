//! The faults a client commits once the session is established: each sends its faulty
//! request(s), reads what comes back, and checks that the server still serves (this
//! session with a `ping`, or a new session where this one is gone or being starved).

use super::classify::{Health, Seen};
use super::{message, wire};
use crate::metrics::{ClientFault, Recorder};
use crate::plan::Persona;
use crate::protocol::headers::MCP_PROTOCOL_VERSION;
use crate::protocol::{methods, Era};
use crate::session::Session;
use http::{HeaderName, HeaderValue};
use serde_json::{json, Value};
use std::time::Duration;

/// What a committed fault showed; None when this session could not commit it.
pub struct Committed {
    pub seen: Seen,
    pub health: Health,
    /// The session's connection is still usable for the scenario.
    pub usable: bool,
}

/// How long a slow reader leaves its stream unread.
const SLOW_READ: Duration = Duration::from_secs(1);

/// A request's bytes and headers, decorated for the session's era.
fn build(
    session: &Session<'_>,
    id: u64,
    method: &str,
    params: Value,
) -> (Vec<u8>, Vec<(HeaderName, HeaderValue)>) {
    match session.era() {
        Era::Modern => {
            let (p, h) = session.decorated(method, Some(params));
            (message::request(id, method, &p), h)
        }
        Era::Legacy => (message::request(id, method, &params), Vec::new()),
    }
}

/// One request, its answer, and a `ping` after it.
async fn one(session: &mut Session<'_>, method: &str, params: Value) -> Committed {
    let id = session.fresh_id();
    let (bytes, headers) = build(session, id, method, params);
    let wait = session.timeout();
    let seen = wire::exchange(session, id, bytes, &headers, wait).await;
    after(session, seen).await
}

async fn after(session: &mut Session<'_>, seen: Seen) -> Committed {
    if matches!(seen, Seen::Closed(_) | Seen::Silence) {
        return Committed {
            seen,
            health: Health::Serves,
            usable: false,
        };
    }
    let health = wire::ping(session).await;
    let usable = health == Health::Serves;
    Committed {
        seen,
        health,
        usable,
    }
}

/// The tools the server lists (first page), as (name, inputSchema).
async fn tools(session: &mut Session<'_>) -> Vec<(String, Value)> {
    let Ok(page) = session.request(methods::TOOLS_LIST, None).await else {
        return Vec::new();
    };
    page.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let name = t.get("name")?.as_str()?.to_string();
            Some((name, t.get("inputSchema").cloned().unwrap_or(Value::Null)))
        })
        .collect()
}

pub async fn commit(
    fault: ClientFault,
    session: &mut Session<'_>,
    endpoint: &super::Reconnect<'_>,
    persona: &Persona,
    recorder: &Recorder,
) -> Option<Committed> {
    let timeout = session.timeout();
    let era = session.era();
    Some(match fault {
        ClientFault::UndeclaredCapability => {
            let server = session.server.clone();
            let declares = |c: &str| {
                server
                    .as_ref()
                    .is_some_and(|s| s.capabilities.get(c).is_some_and(Value::is_object))
            };
            let (method, params) = message::undeclared(declares);
            one(session, method, params).await
        }
        ClientFault::InvalidArguments => {
            let listed = tools(session).await;
            let (tool, args) = listed
                .iter()
                .find_map(|(n, s)| message::breaking_arguments(s).map(|a| (n.clone(), a)))?;
            one(session, methods::TOOLS_CALL, message::call(&tool, args)).await
        }
        ClientFault::UnknownTool => {
            let params = message::call("no-such-tool-from-mcp-fleet", json!({}));
            one(session, methods::TOOLS_CALL, params).await
        }
        ClientFault::Oversized => {
            let c = one(session, methods::PING, message::oversized_params()).await;
            if matches!(c.seen, Seen::Closed(_)) {
                let health = wire::fresh_session(endpoint, persona, era, timeout, recorder).await;
                Committed { health, ..c }
            } else {
                c
            }
        }
        ClientFault::InvalidJson => {
            let id = session.fresh_id();
            let seen = wire::exchange(session, id, message::invalid_json(id), &[], timeout).await;
            after(session, seen).await
        }
        ClientFault::DuplicateId => {
            let id = session.fresh_id();
            let (first, h1) = build(session, id, methods::TOOLS_LIST, json!({}));
            let (second, h2) = build(session, id, methods::PING, json!({}));
            if let Err(seen) = wire::send(session, id, first, &h1).await {
                return Some(after(session, seen).await);
            }
            let seen = wire::exchange(session, id, second, &h2, timeout).await;
            // The other answer, if it comes soon; a late one is ignored by the session.
            let _ = wire::answer(session, id, SLOW_READ.min(timeout)).await;
            after(session, seen).await
        }
        ClientFault::Vanish => {
            let id = session.fresh_id();
            let (bytes, headers) = build(session, id, methods::TOOLS_LIST, json!({}));
            let _ = wire::send(session, id, bytes, &headers).await;
            let health = match endpoint.connect().await {
                Ok(fresh) => {
                    // The old connection is dropped with its request in flight.
                    drop(std::mem::replace(session.transport_mut(), fresh));
                    match wire::handshake(session, era).await {
                        Ok(()) => Health::Serves,
                        Err(why) => Health::Fails(why),
                    }
                }
                Err(e) => Health::Fails(format!("connect: {}", e.detail)),
            };
            let usable = health == Health::Serves;
            Committed {
                seen: Seen::Nothing,
                health,
                usable,
            }
        }
        ClientFault::SlowReader => {
            let id = session.fresh_id();
            let (bytes, headers) = build(session, id, methods::TOOLS_LIST, json!({}));
            if let Err(seen) = wire::send(session, id, bytes, &headers).await {
                return Some(after(session, seen).await);
            }
            tokio::time::sleep(SLOW_READ.min(timeout / 2)).await;
            let health = wire::fresh_session(endpoint, persona, era, timeout, recorder).await;
            let seen = wire::answer(session, id, timeout).await;
            let seen = match seen {
                Seen::Result(_) | Seen::Error { .. } => Seen::Nothing,
                other => other,
            };
            let usable = health == Health::Serves && seen == Seen::Nothing;
            Committed {
                seen,
                health,
                usable,
            }
        }
        ClientFault::IgnoreServerRequests => {
            let caps = &persona.capabilities;
            let listed = tools(session).await;
            let tool = [
                ("sampling", "ask_sampling"),
                ("elicitation", "ask_elicitation"),
                ("roots", "ask_roots"),
            ]
            .into_iter()
            .find(|(c, t)| caps.get(c).is_some() && listed.iter().any(|(n, _)| n == t))?
            .1;
            let args = match tool {
                "ask_sampling" => json!({"prompt": "never answered"}),
                "ask_elicitation" => json!({"message": "never answered"}),
                _ => json!({}),
            };
            one(session, methods::TOOLS_CALL, message::call(tool, args)).await
        }
        ClientFault::NoMeta if era == Era::Modern => {
            let id = session.fresh_id();
            let (_, headers) = session.decorated(methods::TOOLS_LIST, None);
            let bytes = message::request(id, methods::TOOLS_LIST, &json!({}));
            let seen = wire::exchange(session, id, bytes, &headers, timeout).await;
            after(session, seen).await
        }
        ClientFault::HeaderMismatch if era == Era::Modern => {
            let id = session.fresh_id();
            let (bytes, mut headers) = build(session, id, methods::TOOLS_LIST, json!({}));
            headers.retain(|(k, _)| *k != MCP_PROTOCOL_VERSION);
            headers.push((MCP_PROTOCOL_VERSION, HeaderValue::from_static("2025-06-18")));
            let seen = wire::exchange(session, id, bytes, &headers, timeout).await;
            after(session, seen).await
        }
        _ => return None,
    })
}
