//! Streamable HTTP tests: a real server on 127.0.0.1:0 and raw HTTP/1.1 through hyper's
//! client, so status codes and headers are checked exactly as a client sees them.

use super::*;
use crate::server::origin::is_local_origin;
use axum::body::Bytes;
use axum::http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const JSON: (&str, &str) = ("content-type", "application/json");
const ACCEPT_BOTH: (&str, &str) = ("accept", "application/json, text/event-stream");

struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("body is JSON")
    }
}

async fn start(sse_responses: bool) -> HttpServer {
    let opts = ServerOptions {
        sse_responses,
        ..ServerOptions::default()
    };
    let addr: SocketAddr = "127.0.0.1:0".parse().expect("addr");
    spawn_http(addr, opts).await.expect("server starts")
}

async fn send(server: &HttpServer, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(server.addr)
            .await
            .expect("connect");
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("handshake");
        tokio::spawn(conn);
        let mut req = Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", server.addr.to_string());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(Bytes::from(body.to_owned())))
            .expect("request");
        let resp = sender.send_request(req).await.expect("response");
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = resp.into_body().collect().await.expect("body").to_bytes();
        Reply {
            status,
            headers,
            body: String::from_utf8(body.to_vec()).expect("utf-8 body"),
        }
    };
    tokio::time::timeout(Duration::from_secs(5), exchange)
        .await
        .expect("exchange within 5 s")
}

async fn post(server: &HttpServer, extra: &[(&str, &str)], body: &str) -> Reply {
    let mut headers = vec![JSON, ACCEPT_BOTH];
    headers.extend_from_slice(extra);
    send(server, "POST", &headers, body).await
}

/// Initialize and return the session id.
async fn open_session(server: &HttpServer) -> String {
    let r = post(server, &[], INIT).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("session id header")
        .to_owned()
}

/// `(id, event, data)` per SSE event.
fn sse_events(body: &str) -> Vec<(Option<String>, Option<String>, String)> {
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|event| {
            let (mut id, mut name, mut data) = (None, None, Vec::new());
            for line in event.lines() {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "id" => id = Some(value.to_owned()),
                    "event" => name = Some(value.to_owned()),
                    "data" => data.push(value),
                    _ => {}
                }
            }
            (id, name, data.join("\n"))
        })
        .collect()
}

#[tokio::test]
async fn http_initialize_returns_a_session_id() {
    let server = start(false).await;
    let r = post(&server, &[], INIT).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    let id = r
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok());
    assert!(id.is_some_and(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())));
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25");
    let other = open_session(&server).await;
    assert_ne!(id.map(str::to_owned), Some(other));
    server.shutdown().await;
}

#[tokio::test]
async fn http_session_rules() {
    let server = start(false).await;
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let missing = post(&server, &[], list).await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    assert!(missing.json()["error"]["code"].is_i64());
    let unknown = post(&server, &[("mcp-session-id", "feedface")], list).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(
        unknown.json(),
        json!({"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null})
    );

    let sid = open_session(&server).await;
    let ok = post(
        &server,
        &[
            ("mcp-session-id", &sid),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        list,
    )
    .await;
    assert_eq!(ok.status, StatusCode::OK);
    assert_eq!(
        ok.json()["result"]["tools"].as_array().map(Vec::len),
        Some(9)
    );
    let no_version = post(&server, &[("mcp-session-id", &sid)], list).await;
    assert_eq!(no_version.status, StatusCode::OK);
    let bad_version = post(
        &server,
        &[
            ("mcp-session-id", &sid),
            ("mcp-protocol-version", "2026-07-28"),
        ],
        list,
    )
    .await;
    assert_eq!(bad_version.status, StatusCode::BAD_REQUEST);

    let deleted = send(&server, "DELETE", &[("mcp-session-id", &sid)], "").await;
    assert_eq!(deleted.status, StatusCode::OK);
    let gone = post(&server, &[("mcp-session-id", &sid)], list).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    let again = send(&server, "DELETE", &[("mcp-session-id", &sid)], "").await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    server.shutdown().await;
}

#[tokio::test]
async fn http_rejects_wrong_media_types_and_bodies() {
    let server = start(false).await;
    let wrong_type = send(
        &server,
        "POST",
        &[("content-type", "text/plain"), ACCEPT_BOTH],
        INIT,
    )
    .await;
    assert_eq!(wrong_type.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let json_only = send(
        &server,
        "POST",
        &[JSON, ("accept", "application/json")],
        INIT,
    )
    .await;
    assert_eq!(json_only.status, StatusCode::NOT_ACCEPTABLE);
    let garbage = post(&server, &[], "{not json").await;
    assert_eq!(garbage.status, StatusCode::BAD_REQUEST);
    assert_eq!(garbage.json()["error"]["code"], -32700);
    assert_eq!(garbage.json()["id"], Value::Null);
    let batch = post(&server, &[], &format!("[{INIT}]")).await;
    assert_eq!(batch.status, StatusCode::BAD_REQUEST);
    assert_eq!(batch.json()["error"]["code"], -32600);
    let get = send(&server, "GET", &[("accept", "text/event-stream")], "").await;
    assert_eq!(get.status, StatusCode::METHOD_NOT_ALLOWED);
    let evil = post(&server, &[("origin", "https://evil.example")], INIT).await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    let local = post(&server, &[("origin", "http://localhost:5173")], INIT).await;
    assert_eq!(local.status, StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn http_notification_gets_202() {
    let server = start(false).await;
    let sid = open_session(&server).await;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let r = post(&server, &[("mcp-session-id", &sid)], note).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert!(r.body.is_empty());
    let answer = r#"{"jsonrpc":"2.0","id":5,"result":{}}"#;
    let r = post(&server, &[("mcp-session-id", &sid)], answer).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    server.shutdown().await;
}

#[tokio::test]
async fn http_sse_responses_start_with_a_priming_event() {
    let server = start(true).await;
    let init = post(&server, &[], INIT).await;
    assert_eq!(init.status, StatusCode::OK);
    assert_eq!(
        init.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let sid = init
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("session id")
        .to_owned();
    let events = sse_events(&init.body);
    assert_eq!(events.len(), 2, "{}", init.body);
    assert!(events[0].0.is_some() && events[0].2.is_empty());
    let result: Value = serde_json::from_str(&events[1].2).expect("data is JSON");
    assert_eq!(result["result"]["protocolVersion"], "2025-11-25");

    let ping = post(
        &server,
        &[("mcp-session-id", &sid)],
        r#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#,
    )
    .await;
    let events = sse_events(&ping.body);
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].1.as_deref(), Some("message"));
    assert_ne!(
        events[0].0,
        sse_events(&init.body)[0].0,
        "event ids are unique per session"
    );
    let pong: Value = serde_json::from_str(&events[1].2).expect("json");
    assert_eq!(pong, json!({"jsonrpc":"2.0","id":"x","result":{}}));
    server.shutdown().await;
}

#[tokio::test]
async fn http_progress_tool_streams_notifications_before_the_result() {
    let server = start(false).await;
    let sid = open_session(&server).await;
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progress","arguments":{"steps":3},"_meta":{"progressToken":"t1"}}}"#;
    let r = post(&server, &[("mcp-session-id", &sid)], call).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let events = sse_events(&r.body);
    assert_eq!(events.len(), 5, "{}", r.body);
    assert!(events[0].2.is_empty());
    for (i, event) in events[1..4].iter().enumerate() {
        let note: Value = serde_json::from_str(&event.2).expect("json");
        assert_eq!(note["method"], "notifications/progress");
        assert_eq!(
            note["params"],
            json!({"progressToken": "t1", "progress": i + 1, "total": 3})
        );
    }
    let last: Value = serde_json::from_str(&events[4].2).expect("json");
    assert_eq!(last["id"], 3);
    assert_eq!(last["result"]["content"][0]["text"], "completed 3 steps");
    server.shutdown().await;
}

#[tokio::test]
async fn http_slow_call_does_not_block_others() {
    let server = start(false).await;
    let sid = open_session(&server).await;
    let slow = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":500}}}"#;
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let started = tokio::time::Instant::now();
    let with_session = [("mcp-session-id", sid.as_str())];
    let (s, p) = tokio::join!(post(&server, &with_session, slow), async {
        let r = post(&server, &with_session, ping).await;
        (r, started.elapsed())
    });
    assert_eq!(s.json()["result"]["content"][0]["text"], "slept 500 ms");
    assert_eq!(p.0.json()["result"], json!({}));
    assert!(p.1 < Duration::from_millis(400), "ping waited {:?}", p.1);
    server.shutdown().await;
}

#[test]
fn origin_hosts() {
    assert!(is_local_origin("http://localhost"));
    assert!(is_local_origin("http://127.0.0.1:8080"));
    assert!(is_local_origin("http://[::1]:3000"));
    assert!(!is_local_origin("http://localhost.evil.com"));
    assert!(!is_local_origin("null"));
}

// ---- streaming reads, for the GET stream and SSE answers read while they run ----

/// A response whose body is read as it arrives.
struct Live {
    status: StatusCode,
    headers: HeaderMap,
    body: hyper::body::Incoming,
    text: String,
}

async fn open(server: &HttpServer, method: &str, headers: &[(&str, &str)], body: &str) -> Live {
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(server.addr)
            .await
            .expect("connect");
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("handshake");
        tokio::spawn(conn);
        let mut req = Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", server.addr.to_string());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(Bytes::from(body.to_owned())))
            .expect("request");
        sender.send_request(req).await.expect("response")
    };
    let resp = tokio::time::timeout(Duration::from_secs(5), exchange)
        .await
        .expect("headers within 5 s");
    Live {
        status: resp.status(),
        headers: resp.headers().clone(),
        body: resp.into_body(),
        text: String::new(),
    }
}

impl Live {
    /// Read until the body so far contains `needle`; returns everything read so far.
    async fn until(&mut self, needle: &str) -> String {
        let read = async {
            while !self.text.contains(needle) {
                let frame = self.body.frame().await.expect("stream ended early");
                let frame = frame.expect("frame");
                if let Some(data) = frame.data_ref() {
                    self.text
                        .push_str(std::str::from_utf8(data).expect("utf-8"));
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(2), read)
            .await
            .unwrap_or_else(|_| panic!("no {needle:?} within 2 s; got {:?}", self.text));
        self.text.clone()
    }

    /// Read to the end of the body.
    async fn rest(mut self) -> String {
        let read = async {
            while let Some(frame) = self.body.frame().await {
                if let Some(data) = frame.expect("frame").data_ref() {
                    self.text
                        .push_str(std::str::from_utf8(data).expect("utf-8"));
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(2), read)
            .await
            .expect("body ends within 2 s");
        self.text
    }
}

fn messages(body: &str) -> Vec<Value> {
    sse_events(body)
        .into_iter()
        .filter(|e| !e.2.is_empty())
        .map(|e| serde_json::from_str(&e.2).expect("data is JSON"))
        .collect()
}

async fn start_with(opts: ServerOptions) -> HttpServer {
    let addr: SocketAddr = "127.0.0.1:0".parse().expect("addr");
    spawn_http(addr, opts).await.expect("server starts")
}

// ---- 2026-07-28 over HTTP ----

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}"#;

fn modern_body(method: &str, params: &str) -> String {
    let sep = if params.is_empty() { "" } else { "," };
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}{sep}{META}}}}}"#)
}

async fn post_modern(server: &HttpServer, method: &str, name: Option<&str>, params: &str) -> Reply {
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ];
    if let Some(name) = name {
        headers.push(("mcp-name", name));
    }
    // `echo` marks `message` with x-mcp-header: mirror it, as a modern client does.
    let body = modern_body(method, params);
    let message = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| {
            v["params"]["arguments"]["message"]
                .as_str()
                .map(String::from)
        });
    if let (Some("echo"), Some(m)) = (name, message.as_deref()) {
        headers.push(("mcp-param-message", m));
    }
    post(server, &headers, &body).await
}

#[tokio::test]
async fn http_modern_param_headers_must_mirror_their_arguments() {
    let server = start(false).await;
    let call = |message: &'static str, header: Option<&'static str>| {
        let server = &server;
        async move {
            let mut headers = vec![
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "echo"),
            ];
            if let Some(h) = header {
                headers.push(("mcp-param-message", h));
            }
            let params = format!(r#""name":"echo","arguments":{{"message":"{message}"}}"#);
            post(server, &headers, &modern_body("tools/call", &params)).await
        }
    };
    assert_eq!(call("hi", Some("hi")).await.status, StatusCode::OK);
    // Non-ASCII travels base64 in the sentinel.
    assert_eq!(
        call("Zürich", Some("=?base64?WsO8cmljaA==?=")).await.status,
        StatusCode::OK
    );
    for (message, header) in [("hi", None), ("hi", Some("ho")), ("Zürich", Some("Zurich"))] {
        let r = call(message, header).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{message} {header:?}");
        assert_eq!(r.json()["error"]["code"], -32020);
    }
}

#[tokio::test]
async fn http_modern_requests_need_no_session() {
    let server = start(false).await;
    let d = post_modern(&server, "server/discover", None, "").await;
    assert_eq!(d.status, StatusCode::OK, "{}", d.body);
    assert!(d.headers.get("mcp-session-id").is_none());
    assert_eq!(d.json()["result"]["resultType"], "complete");
    assert_eq!(d.json()["result"]["cacheScope"], "public");
    let list = post_modern(&server, "tools/list", None, "").await;
    assert_eq!(
        list.json()["result"]["tools"].as_array().map(Vec::len),
        Some(9)
    );
    let echo = post_modern(
        &server,
        "tools/call",
        Some("echo"),
        r#""name":"echo","arguments":{"message":"hi"}"#,
    )
    .await;
    assert_eq!(echo.status, StatusCode::OK);
    assert_eq!(echo.json()["result"]["content"][0]["text"], "hi");
    let read = post_modern(
        &server,
        "resources/read",
        Some("fleet://resources/1"),
        r#""uri":"fleet://resources/1""#,
    )
    .await;
    assert_eq!(read.json()["result"]["ttlMs"], 60_000);
    let missing = post_modern(
        &server,
        "resources/read",
        Some("fleet://resources/0"),
        r#""uri":"fleet://resources/0""#,
    )
    .await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    assert_eq!(missing.json()["error"]["code"], -32602);

    let no_meta = post(
        &server,
        &[("mcp-method", "server/discover")],
        r#"{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}}"#,
    )
    .await;
    assert_eq!(no_meta.status, StatusCode::BAD_REQUEST);
    assert_eq!(no_meta.json()["error"]["code"], -32602);
    let future = post(
        &server,
        &[
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "server/discover"),
        ],
        r#"{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    )
    .await;
    assert_eq!(future.status, StatusCode::BAD_REQUEST);
    let error = &future.json()["error"];
    assert_eq!(error["code"], -32022);
    assert_eq!(error["data"]["requested"], "2099-01-01");
    assert_eq!(error["data"]["supported"][0], "2026-07-28");
    let unknown = post_modern(&server, "ping", None, "").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.json()["error"]["code"], -32601);
    server.shutdown().await;
}

#[tokio::test]
async fn http_modern_header_mismatch_is_400_32020() {
    let server = start(false).await;
    let list = modern_body("tools/list", "");
    let call = modern_body("tools/call", r#""name":"echo","arguments":{"message":"x"}"#);
    let cases: [(&[(&str, &str)], &str); 5] = [
        (&[("mcp-method", "tools/list")], &list),
        (
            &[
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-method", "tools/list"),
            ],
            &list,
        ),
        (&[("mcp-protocol-version", "2026-07-28")], &list),
        (
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
            ],
            &call,
        ),
        (
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "add"),
            ],
            &call,
        ),
    ];
    for (headers, body) in cases {
        let r = post(&server, headers, body).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{headers:?}");
        assert_eq!(r.json()["error"]["code"], -32020, "{headers:?}");
        assert_eq!(r.json()["id"], 1);
    }
    server.shutdown().await;
}

#[tokio::test]
async fn http_legacy_and_modern_share_the_endpoint() {
    let server = start(false).await;
    let sid = open_session(&server).await;
    let with_sid = [("mcp-session-id", sid.as_str())];
    let (legacy, modern) = tokio::join!(
        post(
            &server,
            &with_sid,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        ),
        post_modern(&server, "tools/list", None, ""),
    );
    assert!(legacy.json()["result"].get("resultType").is_none());
    assert_eq!(modern.json()["result"]["resultType"], "complete");
    // A session id on a modern request is ignored.
    let with_sid = post(
        &server,
        &[
            ("mcp-session-id", "not-a-session"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        &modern_body("tools/list", ""),
    )
    .await;
    assert_eq!(with_sid.status, StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn http_legacy_only_and_modern_only() {
    let legacy = start_with(ServerOptions {
        eras: Eras::Legacy,
        ..ServerOptions::default()
    })
    .await;
    let d = post_modern(&legacy, "server/discover", None, "").await;
    assert_eq!(d.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        d.json()["error"]["code"],
        -32000,
        "a legacy, non-modern error"
    );
    open_session(&legacy).await;
    legacy.shutdown().await;

    let modern = start_with(ServerOptions {
        eras: Eras::Modern,
        ..ServerOptions::default()
    })
    .await;
    let init = post(&modern, &[], INIT).await;
    assert_eq!(init.status, StatusCode::BAD_REQUEST);
    assert_eq!(init.json()["error"]["code"], -32600);
    assert!(init.headers.get("mcp-session-id").is_none());
    let d = post_modern(&modern, "server/discover", None, "").await;
    assert_eq!(
        d.json()["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    let get = send(&modern, "GET", &[("accept", "text/event-stream")], "").await;
    assert_eq!(get.status, StatusCode::METHOD_NOT_ALLOWED);
    modern.shutdown().await;
}

#[tokio::test]
async fn http_modern_ask_is_input_required_or_32021() {
    let server = start(false).await;
    let r = post_modern(
        &server,
        "tools/call",
        Some("ask_roots"),
        r#""name":"ask_roots""#,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["result"]["resultType"], "input_required");
    assert_eq!(
        r.json()["result"]["inputRequests"]["roots"]["method"],
        "roots/list"
    );
    let r = post_modern(
        &server,
        "tools/call",
        Some("ask_sampling"),
        r#""name":"ask_sampling","arguments":{"prompt":"x"}"#,
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.json()["error"]["code"], -32021);
    server.shutdown().await;
}

// ---- legacy server→client requests, the GET stream, resumption, expiry ----

async fn open_session_with(server: &HttpServer, caps: &str) -> String {
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{caps},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    );
    let r = post(server, &[], &init).await;
    r.headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("session id")
        .to_owned()
}

#[tokio::test]
async fn http_ask_sampling_round_trips_through_a_separate_post() {
    let server = start(false).await;
    let sid = open_session_with(&server, r#"{"sampling":{}}"#).await;
    let headers = [JSON, ACCEPT_BOTH, ("mcp-session-id", sid.as_str())];
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask_sampling","arguments":{"prompt":"hi?"}}}"#;
    let mut live = open(&server, "POST", &headers, call).await;
    assert_eq!(live.status, StatusCode::OK);
    let so_far = live.until("sampling/createMessage").await;
    let request = messages(&so_far).pop().expect("the server's request");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"],
        "result": {"role": "assistant", "content": {"type": "text", "text": "hello"},
                   "model": "m", "stopReason": "endTurn"}});
    let r = post(&server, &[("mcp-session-id", &sid)], &answer.to_string()).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    let body = live.rest().await;
    let last = messages(&body).pop().expect("final response");
    assert_eq!(last["id"], 5);
    assert_eq!(last["result"]["content"][0]["text"], "hello");

    // Without the capability the tool says so and asks nothing.
    let sid = open_session(&server).await;
    let r = post(&server, &[("mcp-session-id", &sid)], call).await;
    let msgs = messages(&r.body);
    assert_eq!(msgs.len(), 1, "{}", r.body);
    assert_eq!(msgs[0]["result"]["isError"], true);
    server.shutdown().await;
}

#[tokio::test]
async fn http_get_stream_carries_list_changed_and_a_second_get_is_409() {
    let server = start(false).await;
    let sid = open_session(&server).await;
    let get_headers = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", sid.as_str()),
    ];
    let mut stream = open(&server, "GET", &get_headers, "").await;
    assert_eq!(stream.status, StatusCode::OK);
    assert_eq!(
        stream
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let priming = stream.until("\n\n").await;
    let events = sse_events(&priming);
    assert!(events[0].0.is_some() && events[0].2.is_empty(), "{priming}");
    let second = send(&server, "GET", &get_headers, "").await;
    assert_eq!(second.status, StatusCode::CONFLICT);

    let call = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"notify_list_changed","arguments":{"list":"resources"}}}"#;
    let r = post(&server, &[("mcp-session-id", &sid)], call).await;
    let msgs = messages(&r.body);
    assert_eq!(
        msgs.len(),
        1,
        "only the response on the POST stream: {}",
        r.body
    );
    assert_eq!(msgs[0]["result"]["content"][0]["text"], "sent");
    let text = stream.until("list_changed").await;
    let notes = messages(&text);
    assert_eq!(notes[0]["method"], "notifications/resources/list_changed");
    let ids: Vec<_> = sse_events(&text).into_iter().filter_map(|e| e.0).collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    drop(stream); // an open GET stream would hold graceful shutdown until its grace ends
    server.shutdown().await;
}

#[tokio::test]
async fn http_dropped_stream_resumes_with_last_event_id() {
    let server = start_with(ServerOptions {
        sse_drop_after: Some(1),
        ..ServerOptions::default()
    })
    .await;
    let sid = open_session(&server).await;
    let call = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"progress","arguments":{"steps":3},"_meta":{"progressToken":"t"}}}"#;
    let cut = post(&server, &[("mcp-session-id", &sid)], call).await;
    assert_eq!(cut.status, StatusCode::OK);
    assert!(cut.body.contains("retry: 200"), "{}", cut.body);
    let events = sse_events(&cut.body);
    assert_eq!(events.len(), 2, "priming + one message: {}", cut.body);
    assert!(messages(&cut.body).iter().all(|m| m.get("id").is_none()));
    let last_id = events[1].0.clone().expect("event id");

    let resumed = send(
        &server,
        "GET",
        &[
            ("accept", "text/event-stream"),
            ("mcp-session-id", &sid),
            ("last-event-id", &last_id),
        ],
        "",
    )
    .await;
    assert_eq!(resumed.status, StatusCode::OK);
    let msgs = messages(&resumed.body);
    assert_eq!(msgs.len(), 3, "{}", resumed.body);
    assert_eq!(msgs[0]["params"]["progress"], 2);
    assert_eq!(msgs[1]["params"]["progress"], 3);
    assert_eq!(msgs[2]["id"], 8);
    assert_eq!(msgs[2]["result"]["content"][0]["text"], "completed 3 steps");
    let unknown = send(
        &server,
        "GET",
        &[
            ("accept", "text/event-stream"),
            ("mcp-session-id", &sid),
            ("last-event-id", "999-1"),
        ],
        "",
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    server.shutdown().await;
}

#[tokio::test]
async fn http_sessions_expire_after_n_requests() {
    let server = start_with(ServerOptions {
        expire_sessions_after: Some(2),
        ..ServerOptions::default()
    })
    .await;
    let sid = open_session(&server).await;
    let with_sid = [("mcp-session-id", sid.as_str())];
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        post(&server, &with_sid, note).await.status,
        StatusCode::ACCEPTED
    );
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    assert_eq!(post(&server, &with_sid, list).await.status, StatusCode::OK);
    let gone = post(&server, &with_sid, list).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    assert_eq!(gone.json()["error"]["message"], "Session not found");
    open_session(&server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn idle_sessions_expire_after_the_ttl_and_answer_404() {
    let server = start_with(ServerOptions {
        session_ttl: Some(Duration::from_millis(200)),
        ..ServerOptions::default()
    })
    .await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(open_session(&server).await);
    }
    // The published count starts at 0: first see the sweep count all three, so that
    // the wait below sees them go rather than a count not yet taken.
    let mut waited = 0;
    while server.live_sessions() != 3 && waited < 100 {
        tokio::time::sleep(Duration::from_millis(10)).await;
        waited += 1;
    }
    // Abandoned: never deleted. Bounded wait for the sweep.
    let mut waited = 0;
    while server.live_sessions() != 0 && waited < 100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    assert_eq!(server.live_sessions(), 0, "the sweep dropped them");
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let r = post(&server, &[("mcp-session-id", ids[0].as_str())], ping).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
}

#[tokio::test]
async fn without_a_ttl_sessions_stay_until_deleted() {
    let server = start_with(ServerOptions {
        session_ttl: None,
        ..ServerOptions::default()
    })
    .await;
    let id = open_session(&server).await;
    let mut waited = 0;
    while server.live_sessions() != 1 && waited < 100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    assert_eq!(server.live_sessions(), 1);
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let r = post(&server, &[("mcp-session-id", id.as_str())], ping).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[tokio::test]
async fn two_servers_share_a_port_only_with_reuse_port() {
    let reuse = || ServerOptions {
        reuse_port: true,
        ..ServerOptions::default()
    };
    let any: SocketAddr = "127.0.0.1:0".parse().expect("addr");
    let first = spawn_http(any, reuse()).await.expect("first server starts");
    // Without the flag the port is taken: a clear error that says what to do.
    let taken = spawn_http(first.addr, ServerOptions::default())
        .await
        .expect_err("the port is taken");
    assert!(format!("{taken:#}").contains("fix:"), "{taken:#}");
    let second = spawn_http(first.addr, reuse())
        .await
        .expect("a second --reuse-port server binds the same port");
    assert_eq!(first.addr, second.addr);
    // Both serve: with one of them gone, the port still answers.
    let reply = send(&second, "POST", &[JSON, ACCEPT_BOTH], INIT).await;
    assert_eq!(reply.status, StatusCode::OK);
    first.shutdown().await;
    for _ in 0..4 {
        let reply = send(&second, "POST", &[JSON, ACCEPT_BOTH], INIT).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }
    second.shutdown().await;
}
