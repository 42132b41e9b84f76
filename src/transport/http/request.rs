//! One request of a session, encoded for one write: the endpoint's host and extra
//! headers, the session's own (`Mcp-Session-Id`, `MCP-Protocol-Version`,
//! `Authorization`) and the `Accept` its method asks for.

use super::endpoint::HttpEndpoint;
use super::h1;
use crate::protocol::headers::{LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID};
use http::header::{HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST};
use http::Method;

const ACCEPT_BOTH: &str = "application/json, text/event-stream";
pub(super) const ACCEPT_SSE: &str = "text/event-stream";

/// The session headers every request after `initialize` carries.
#[derive(Debug, Clone, Default)]
pub(super) struct SessionHeaders {
    pub(super) id: Option<HeaderValue>,
    pub(super) version: Option<HeaderValue>,
    /// The session's `Authorization: Bearer …` (sensitive), on every request.
    pub(super) auth: Option<HeaderValue>,
}

/// A request to the endpoint with the session's headers, encoded for one write. A GET
/// asks for an event stream, resuming after `last_event_id` when given; `extra` fields
/// come last and replace any of the same name.
pub(super) fn build_request(
    ep: &HttpEndpoint,
    method: Method,
    body: &[u8],
    session: &SessionHeaders,
    last_event_id: Option<&str>,
    extra: &[(HeaderName, HeaderValue)],
) -> Vec<u8> {
    // The fields in order, a later one replacing an earlier one of the same name (as
    // a `HeaderMap` would, without building one for every request).
    let (content_type, accept) = (CONTENT_TYPE, ACCEPT);
    let json = HeaderValue::from_static("application/json");
    let (both, sse) = (
        HeaderValue::from_static(ACCEPT_BOTH),
        HeaderValue::from_static(ACCEPT_SSE),
    );
    let (last_event, id, version, auth) = (
        LAST_EVENT_ID,
        MCP_SESSION_ID,
        MCP_PROTOCOL_VERSION,
        AUTHORIZATION,
    );
    let resume = last_event_id.and_then(|id| HeaderValue::from_str(id).ok());
    let mut h: Vec<(&HeaderName, &HeaderValue)> =
        Vec::with_capacity(6 + ep.connection.headers.len() + extra.len());
    let mut set = |k, v| match h.iter_mut().find(|(name, _)| *name == k) {
        Some(field) => field.1 = v,
        None => h.push((k, v)),
    };
    let host = HOST;
    set(&host, &ep.authority);
    if method == Method::POST {
        set(&content_type, &json);
        set(&accept, &both);
    } else if method == Method::GET {
        set(&accept, &sse);
        if let Some(v) = &resume {
            set(&last_event, v);
        }
    }
    if let Some(v) = &session.id {
        set(&id, v);
    }
    if let Some(v) = &session.version {
        set(&version, v);
    }
    for (k, v) in &ep.connection.headers {
        set(k, v);
    }
    if let Some(v) = &session.auth {
        set(&auth, v);
    }
    for (k, v) in extra {
        set(k, v);
    }
    let target = ep.path.path_and_query().map_or("/", |pq| pq.as_str());
    h1::encode_request(&method, target, &h, body)
}
