//! The `/mcp` methods of legacy sessions: POST (session lookup, the expiry fault, inline
//! JSON or an SSE stream per request; stateless bodies go to `stateless`), GET (the
//! standalone stream or a resumption) and DELETE (end the session).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::{HeaderMap, ACCEPT, ALLOW, CONTENT_TYPE};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;

use super::super::handler::malformed_reply;
use super::super::notifier::Notifier;
use super::headers::{error_response, header_text, json_response, new_session_id};
use super::headers::{origin_refusal, session_not_found, sse_response, version_refusal};
use super::stateless::post_stateless;
use super::stream::{lock, pump, HttpSession, Refusal};
use super::AppState;
use crate::protocol::headers::{LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID};
use crate::protocol::methods as m;
use crate::protocol::Incoming;
use crate::server::Fault;

/// The `reject-version-header` fault: refuse any request that carries the negotiated
/// `MCP-Protocol-Version`.
fn fault_refusal(state: &AppState, headers: &HeaderMap) -> Option<Response> {
    let faulty = state.handler.faults().has(Fault::RejectVersionHeader);
    (faulty && headers.contains_key(MCP_PROTOCOL_VERSION)).then(|| {
        error_response(
            StatusCode::BAD_REQUEST,
            "Bad Request: MCP-Protocol-Version is not accepted",
        )
    })
}

pub(super) async fn post_mcp(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(refused) = header_refusal(&headers) {
        return refused;
    }
    if state.handler.faults().crashed() {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let msg = match Incoming::parse(&body) {
        Ok(msg) => msg,
        Err(e) if state.handler.faults().crash_on(&e) => {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
        Err(e) => return json_response(StatusCode::BAD_REQUEST, malformed_reply(&e), None),
    };
    if let Some(refused) = unknown_without_session(&msg, &headers) {
        return refused;
    }
    // A request that announces the modern version in its header but lacks `_meta` is
    // a modern one with a mistake: the modern path answers it (-32602), not the legacy
    // one (which would ask for a session).
    let modern_header = state.eras.modern()
        && headers
            .get(&MCP_PROTOCOL_VERSION)
            .is_some_and(|v| v.as_bytes() == crate::protocol::version::LATEST_MODERN.as_bytes())
        && !headers.contains_key(&MCP_SESSION_ID);
    if state.handler.is_stateless(&msg) || modern_header {
        return post_stateless(&state, &headers, msg).await;
    }
    let is_initialize = matches!(&msg, Incoming::Request { method, .. } if method == m::INITIALIZE);
    let (session, new_id) = match legacy_session(&state, &headers, is_initialize) {
        Ok(found) => found,
        Err(refused) => return *refused,
    };

    if !matches!(msg, Incoming::Request { .. }) {
        // Notifications and the client's answers to our requests (routed to the tool
        // call awaiting them): accepted, no body.
        state
            .handler
            .handle(&session.core, msg, &Notifier::none())
            .await;
        if let Some((status, body)) = state.handler.faults().post_ack() {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            return json_response(status, body, None);
        }
        return StatusCode::ACCEPTED.into_response();
    }

    let streams = state.sse_responses || state.handler.wants_stream(&msg);
    if is_initialize || !streams {
        // Answer inline: `initialize` must finish before the session id is published.
        return reply_inline(&state, &session, msg, new_id, streams).await;
    }

    let is_call = matches!(&msg, Incoming::Request { method, .. } if method == m::TOOLS_CALL);
    let (log, body) = session.open_stream(state.sse_drop_after.filter(|_| is_call));
    tokio::spawn(async move {
        let (tx, rx) = mpsc::unbounded_channel();
        let notifier = Notifier::new(tx);
        let work = async move {
            let reply = state.handler.handle(&session.core, msg, &notifier).await;
            drop(notifier); // ends the pump once everything sent is logged
            reply
        };
        let (reply, ()) = tokio::join!(work, pump(&log, rx, None));
        let mut log = lock(&log);
        if let Some(reply) = reply {
            log.push(reply, true);
        }
        // Ends the live connection, if any: the stream is complete.
        log.finish();
    });
    sse_response(body, None)
}

/// Refuse a POST whose headers are wrong whatever its body: a foreign `Origin`, an
/// `Accept` without both types, a `Content-Type` that is not JSON.
fn header_refusal(headers: &HeaderMap) -> Option<Response> {
    if let Some(refused) = origin_refusal(headers) {
        return Some(refused);
    }
    let accept = header_text(headers, &ACCEPT);
    if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
        return Some(error_response(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: Accept must list both application/json and text/event-stream",
        ));
    }
    if !header_text(headers, &CONTENT_TYPE).starts_with("application/json") {
        return Some(error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: Content-Type must be application/json",
        ));
    }
    None
}

/// The legacy session a POST belongs to: the one its `Mcp-Session-Id` names (with the
/// expiry and version-header faults), or a new one for `initialize`.
/// A request of a method no MCP version has, outside any session: -32601, which says
/// more than "a session id is required".
fn unknown_without_session(msg: &Incoming, headers: &HeaderMap) -> Option<Response> {
    let Incoming::Request { method, .. } = msg else {
        return None;
    };
    if headers.contains_key(&MCP_SESSION_ID) || m::is_client_request(method) {
        return None;
    }
    let body = super::super::handler::error_without_id(
        crate::protocol::jsonrpc::codes::METHOD_NOT_FOUND,
        "Method not found",
    );
    Some(json_response(StatusCode::BAD_REQUEST, body, None))
}

fn legacy_session(
    state: &AppState,
    headers: &HeaderMap,
    is_initialize: bool,
) -> Result<(Arc<HttpSession>, Option<String>), Box<Response>> {
    match headers.get(&MCP_SESSION_ID) {
        Some(id) => {
            let id = id.to_str().unwrap_or_default();
            let Some(session) = state.session(id) else {
                return Err(Box::new(session_not_found()));
            };
            if let Some(refused) = version_refusal(headers) {
                return Err(Box::new(refused));
            }
            if let Some(refused) = fault_refusal(state, headers) {
                return Err(Box::new(refused));
            }
            // The expiry fault: this request is still served, the next one gets 404.
            let served = session.requests.fetch_add(1, Ordering::Relaxed) + 1;
            if state
                .expire_sessions_after
                .is_some_and(|limit| served >= limit)
            {
                state.remove(id);
            }
            Ok((session, None))
        }
        None if is_initialize => {
            let id = new_session_id();
            // The fault: an id a client must reject (spaces are not visible ASCII).
            let id = if state.handler.faults().has(Fault::BadSessionId) {
                format!("fleet session {id}")
            } else {
                id
            };
            Ok((Arc::new(HttpSession::default()), Some(id)))
        }
        None => Err(Box::new(error_response(
            StatusCode::BAD_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        ))),
    }
}

/// A reply in the POST's own response: a JSON body, or a one-message SSE stream when
/// the server streams every reply; a new session is published once initialized.
async fn reply_inline(
    state: &AppState,
    session: &Arc<HttpSession>,
    msg: Incoming,
    new_id: Option<String>,
    streams: bool,
) -> Response {
    let reply = state
        .handler
        .handle(&session.core, msg, &Notifier::none())
        .await;
    let session_header = match new_id {
        Some(id) if session.core.version().is_some() => {
            state.insert(id.clone(), session.clone());
            Some(id)
        }
        _ => None,
    };
    let reply = reply.unwrap_or_default();
    if streams {
        let (log, body) = session.open_stream(None);
        lock(&log).push(reply, true);
        lock(&log).finish();
        return sse_response(body, session_header);
    }
    json_response(StatusCode::OK, reply, session_header)
}

pub(super) async fn delete_mcp(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Some(refused) = origin_refusal(&headers) {
        return refused;
    }
    if !state.eras.legacy() {
        return (StatusCode::METHOD_NOT_ALLOWED, [(ALLOW, "POST")]).into_response();
    }
    let Some(id) = headers.get(&MCP_SESSION_ID) else {
        return error_response(
            StatusCode::BAD_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        );
    };
    if id.to_str().is_ok_and(|id| state.remove(id)) {
        StatusCode::OK.into_response()
    } else {
        session_not_found()
    }
}

/// The standalone stream for server messages unrelated to a request (one per session,
/// a second → 409), or the resumption of any stream of the session with `Last-Event-ID`.
/// Without a session (a modern client, or a modern-only server) there is no GET: 405.
pub(super) async fn get_mcp(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Some(refused) = origin_refusal(&headers) {
        return refused;
    }
    let session_id = headers.get(&MCP_SESSION_ID).and_then(|v| v.to_str().ok());
    let (true, Some(id)) = (state.eras.legacy(), session_id) else {
        return (StatusCode::METHOD_NOT_ALLOWED, [(ALLOW, "POST, DELETE")]).into_response();
    };
    let Some(session) = state.session(id) else {
        return session_not_found();
    };
    if !header_text(&headers, &ACCEPT).contains("text/event-stream") {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: Accept must list text/event-stream",
        );
    }
    if let Some(refused) = version_refusal(&headers) {
        return refused;
    }
    let last = headers.get(LAST_EVENT_ID).and_then(|v| v.to_str().ok());
    let resumed = match last {
        Some(last) => session.resume(last),
        None => session.open_standalone(),
    };
    match resumed {
        Ok(body) => sse_response(body, None),
        Err(Refusal::Conflict) => error_response(
            StatusCode::CONFLICT,
            "Conflict: this stream is already open for the session",
        ),
        Err(Refusal::UnknownEvent) => error_response(
            StatusCode::NOT_FOUND,
            "Not Found: Last-Event-ID names no stream of this session",
        ),
    }
}
