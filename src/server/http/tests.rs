//! Streamable HTTP tests: a real server on 127.0.0.1:0 and raw HTTP/1.1 through hyper's
//! client, so status codes and headers are checked exactly as a client sees them.

use super::*;
use axum::http::Request;
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
