//! Legacy HTTP+SSE for the reference server (2024-11-05): `GET /sse` opens the stream and
//! announces `endpoint`, `POST /messages?sessionId=…` carries client messages (202), all
//! server messages flow on the stream, around [`super::channel::serve_messages`].
//!
//! One session per GET stream. The stream owns a guard that removes the session from the
//! map when the client goes away, which closes the session's inbound channel and so ends
//! `serve_messages`; its outbound sender going away in turn ends the stream.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{HeaderMap, CACHE_CONTROL, CONTENT_TYPE, ORIGIN};
use axum::http::{HeaderName, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use futures::StreamExt;
use tokio::sync::mpsc;

use super::channel::serve_messages;
use super::handler::{error_without_id, Handler};
use super::origin::is_local_origin;
use crate::protocol::jsonrpc::codes;

/// Where clients POST; the session id rides in the query, as in the TypeScript SDK.
const MESSAGES_PATH: &str = "/messages";
const SESSION_PARAM: &str = "sessionId";
/// Reverse proxies (nginx) must not buffer the stream.
const X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");
/// Client messages queued per session before a POST waits (backpressure, not loss).
const INBOUND_QUEUE: usize = 64;
const PARSE_ERROR: &str = "Parse error";

type Sessions = Mutex<HashMap<String, mpsc::Sender<Vec<u8>>>>;

struct SseState {
    handler: Arc<Handler>,
    sessions: Sessions,
}

impl SseState {
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::Sender<Vec<u8>>>> {
        // A poisoned lock only means a request panicked mid-update; the map is still usable.
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Routes to merge into the server's router.
pub fn routes(handler: Arc<Handler>) -> Router {
    let state = Arc::new(SseState {
        handler,
        sessions: Mutex::new(HashMap::new()),
    });
    Router::new()
        .route("/sse", get(open_stream))
        .route(MESSAGES_PATH, post(post_message))
        .with_state(state)
}

/// Removes the session when the stream is dropped (client gone or server shutting down).
struct SessionGuard {
    state: Arc<SseState>,
    id: String,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        if self.state.sessions().remove(&self.id).is_some() {
            self.state.handler.sessions.closed();
        }
    }
}

async fn open_stream(State(state): State<Arc<SseState>>, headers: HeaderMap) -> Response {
    if let Some(refused) = origin_refusal(&headers) {
        return refused;
    }
    let id = format!("{:032x}", rand::random::<u128>());
    let (in_tx, in_rx) = mpsc::channel::<Vec<u8>>(INBOUND_QUEUE);
    let (out_tx, out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    state.sessions().insert(id.clone(), in_tx);
    state.handler.sessions.opened();
    tokio::spawn(serve_messages(state.handler.clone(), in_rx, out_tx));

    let mut first = Vec::new();
    push_event(
        &mut first,
        "endpoint",
        format!("{MESSAGES_PATH}?{SESSION_PARAM}={id}").as_bytes(),
    );
    let guard = SessionGuard { state, id };
    let messages = futures::stream::unfold((out_rx, guard), |(mut rx, guard)| async move {
        let msg = rx.recv().await?;
        let mut event = Vec::with_capacity(msg.len() + 24);
        push_event(&mut event, "message", &msg);
        // Whatever else is already queued leaves in the same chunk.
        while let Ok(more) = rx.try_recv() {
            push_event(&mut event, "message", &more);
        }
        Some((Ok::<_, Infallible>(Bytes::from(event)), (rx, guard)))
    });
    let first = futures::stream::once(async move { Ok::<_, Infallible>(Bytes::from(first)) });
    (
        StatusCode::OK,
        [
            (CONTENT_TYPE, "text/event-stream"),
            (CACHE_CONTROL, "no-cache"),
            (X_ACCEL_BUFFERING, "no"),
        ],
        Body::from_stream(first.chain(messages)),
    )
        .into_response()
}

/// Append one SSE event; a payload with line breaks becomes several `data:` lines, which
/// the client joins back with `\n`.
fn push_event(out: &mut Vec<u8>, name: &str, data: &[u8]) {
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(name.as_bytes());
    out.push(b'\n');
    for line in data.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out.push(b'\n');
}

async fn post_message(
    State(state): State<Arc<SseState>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(refused) = origin_refusal(&headers) {
        return refused;
    }
    let id = url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
        .find(|(k, _)| k == SESSION_PARAM)
        .map(|(_, v)| v.into_owned());
    let Some(id) = id else {
        return error(
            StatusCode::BAD_REQUEST,
            "Bad Request: sessionId is required",
        );
    };
    let Some(inbound) = state.sessions().get(&id).cloned() else {
        return error(StatusCode::NOT_FOUND, "Session not found");
    };
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if !content_type.starts_with("application/json") {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: Content-Type must be application/json",
        );
    }
    // JSON that is not valid JSON-RPC is the session's business (it answers on the
    // stream); bytes that are not JSON at all are refused here.
    if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_err() {
        return error(StatusCode::BAD_REQUEST, PARSE_ERROR);
    }
    if inbound.send(body.to_vec()).await.is_err() {
        return error(StatusCode::NOT_FOUND, "Session not found");
    }
    (StatusCode::ACCEPTED, "Accepted").into_response()
}

/// An HTTP error whose body is an id-less JSON-RPC error, as SDK clients expect.
fn error(status: StatusCode, message: &str) -> Response {
    let code = if status == StatusCode::BAD_REQUEST && message == PARSE_ERROR {
        codes::PARSE_ERROR
    } else {
        codes::SERVER_ERROR
    };
    (
        status,
        [(CONTENT_TYPE, "application/json")],
        error_without_id(code, message),
    )
        .into_response()
}

/// DNS-rebinding defence, as for Streamable HTTP: a browser page from another host must
/// not reach a local server. Returns the 403 to send, if any.
fn origin_refusal(headers: &HeaderMap) -> Option<Response> {
    let origin = headers.get(ORIGIN)?;
    let local = origin.to_str().is_ok_and(is_local_origin);
    (!local).then(|| error(StatusCode::FORBIDDEN, "Forbidden: Origin not allowed"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{spawn_http, HttpServer, ServerOptions};
    use http_body_util::{BodyExt, Full};
    use hyper_util::rt::TokioIo;
    use std::time::Duration;

    async fn start() -> HttpServer {
        let addr = "127.0.0.1:0".parse().expect("addr");
        spawn_http(addr, ServerOptions::default())
            .await
            .expect("server starts")
    }

    async fn send(
        server: &HttpServer,
        method: &str,
        uri: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> hyper::Response<hyper::body::Incoming> {
        let stream = tokio::net::TcpStream::connect(server.addr)
            .await
            .expect("connect");
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("handshake");
        tokio::spawn(conn);
        let mut req = axum::http::Request::builder()
            .method(method)
            .uri(uri)
            .header("host", server.addr.to_string());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(Bytes::from(body.to_owned())))
            .expect("request");
        tokio::time::timeout(Duration::from_secs(5), sender.send_request(req))
            .await
            .expect("answer within 5 s")
            .expect("response")
    }

    async fn text(resp: hyper::Response<hyper::body::Incoming>) -> String {
        let body = tokio::time::timeout(Duration::from_secs(5), resp.into_body().collect())
            .await
            .expect("body within 5 s")
            .expect("body");
        String::from_utf8(body.to_bytes().to_vec()).expect("utf-8")
    }

    /// Read the stream until `want` appears; returns everything read.
    async fn read_until(body: &mut hyper::body::Incoming, seen: &mut String, want: &str) {
        while !seen.contains(want) {
            let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
                .await
                .expect("event within 5 s")
                .expect("stream still open")
                .expect("frame");
            if let Ok(data) = frame.into_data() {
                seen.push_str(std::str::from_utf8(&data).expect("utf-8"));
            }
        }
    }

    const JSON: (&str, &str) = ("content-type", "application/json");

    #[tokio::test]
    async fn legacy_sse_stream_headers_endpoint_and_post_statuses() {
        let server = start().await;
        let resp = send(
            &server,
            "GET",
            "/sse",
            &[("accept", "text/event-stream")],
            "",
        )
        .await;
        assert_eq!(resp.status(), StatusCode::OK);
        let h = resp.headers();
        assert_eq!(h["content-type"], "text/event-stream");
        assert_eq!(h["cache-control"], "no-cache");
        assert_eq!(h["x-accel-buffering"], "no");
        let mut body = resp.into_body();
        let mut seen = String::new();
        read_until(&mut body, &mut seen, "\n\n").await;
        let data = seen
            .strip_prefix("event: endpoint\ndata: ")
            .and_then(|s| s.strip_suffix("\n\n"))
            .expect("first event is endpoint")
            .to_owned();
        let data = data.as_str();
        let id = data
            .strip_prefix("/messages?sessionId=")
            .expect("endpoint path");
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));

        let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
        let r = send(&server, "POST", "/messages?sessionId=0123", &[JSON], ping).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
        let r = send(&server, "POST", "/messages", &[JSON], ping).await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        let r = send(
            &server,
            "POST",
            data,
            &[("content-type", "text/plain")],
            ping,
        )
        .await;
        assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let r = send(&server, "POST", data, &[JSON], "{not json").await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        let evil = ("origin", "https://evil.example");
        let r = send(&server, "POST", data, &[JSON, evil], ping).await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        let r = send(&server, "GET", "/sse", &[evil], "").await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN);

        let local = ("origin", "http://localhost:3000");
        let r = send(&server, "POST", data, &[JSON, local], ping).await;
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        assert_eq!(text(r).await, "Accepted");
        read_until(&mut body, &mut seen, "\"id\":5").await;
        assert!(seen.contains("event: message\ndata: {"), "{seen}");

        // The client drops the stream: the session goes away.
        drop(body);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
        loop {
            let r = send(&server, "POST", data, &[JSON], ping).await;
            if r.status() == StatusCode::NOT_FOUND {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "session outlived its stream"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[test]
    fn multi_line_payload_becomes_several_data_lines() {
        let mut out = Vec::new();
        push_event(&mut out, "message", b"{\r\n\"a\":1\n}");
        assert_eq!(out, b"event: message\ndata: {\ndata: \"a\":1\ndata: }\n\n");
    }

    #[test]
    fn local_origins() {
        for ok in [
            "http://localhost:1",
            "http://127.0.0.1",
            "http://[::1]:8080",
        ] {
            assert!(is_local_origin(ok), "{ok}");
        }
        for bad in [
            "https://evil.example",
            "null",
            "http://localhost.evil.example",
        ] {
            assert!(!is_local_origin(bad), "{bad}");
        }
    }
}
