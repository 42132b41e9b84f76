//! Tests of the WebSocket client transport: sessions against the reference server, and
//! scripted servers for refused upgrades, a missing subprotocol, binary and close frames,
//! timeouts and `wss://` with a self-signed certificate.

use super::*;
use crate::protocol::jsonrpc::{encode_notification, encode_request};
use crate::protocol::{Incoming, RequestId};
use crate::server::{spawn_http, ServerOptions};
use rustls::pki_types::PrivateKeyDer;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};

/// Bound on every wait in these tests.
const LIMIT: Duration = Duration::from_secs(5);

fn endpoint(url: &str, insecure: bool) -> Arc<WsEndpoint> {
    let connection = Connection {
        headers: vec![(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer test"),
        )],
        timeout: Duration::from_secs(2),
        insecure,
        ..Connection::default()
    };
    Arc::new(WsEndpoint::new(url.parse().expect("test URL"), connection))
}

async fn connect(ep: Arc<WsEndpoint>) -> Result<WsTransport, TransportError> {
    tokio::time::timeout(LIMIT, WsTransport::connect(ep, None))
        .await
        .expect("connect returns within its own timeout")
}

async fn next(t: &mut WsTransport) -> Received {
    tokio::time::timeout(LIMIT, t.recv())
        .await
        .expect("a message within 5 s")
}

/// The result of our request `want`, or a panic naming what came instead.
async fn result_of(t: &mut WsTransport, want: i64) -> Value {
    match next(t).await {
        Received::Message(Incoming::Response {
            id: Some(RequestId::Number(id)),
            outcome: Ok(v),
        }) if id == want => v.into_value(),
        other => panic!("expected the result of request {want}, got {other:?}"),
    }
}

async fn listener() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("ws://{}/ws", l.local_addr().expect("local addr"));
    (l, url)
}

/// A test server's upgrade callback that selects `mcp`, as a conforming server does.
#[allow(clippy::result_large_err)] // the signature tungstenite asks for
fn select_mcp(req: &Request, mut resp: Response) -> Result<Response, ErrorResponse> {
    let offered = req
        .headers()
        .get("sec-websocket-protocol")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert_eq!(offered, "mcp");
    assert_eq!(
        req.headers().get("authorization").map(|v| v.as_bytes()),
        Some(&b"Bearer test"[..])
    );
    resp.headers_mut().insert(
        "sec-websocket-protocol",
        HeaderValue::from_static(WS_SUBPROTOCOL),
    );
    Ok(resp)
}

#[tokio::test]
async fn ws_full_session_against_the_reference_server() {
    let server = spawn_http(
        "127.0.0.1:0".parse().expect("addr"),
        ServerOptions::default(),
    )
    .await
    .expect("reference server");
    let url = format!("ws://{}/ws", server.addr);
    let mut t = connect(endpoint(&url, false)).await.expect("connect");

    let init = json!({"protocolVersion":"2025-11-25","capabilities":{},
                      "clientInfo":{"name":"t","version":"1"}});
    t.send(encode_request(1, "initialize", Some(&init)))
        .await
        .expect("send initialize");
    let r = result_of(&mut t, 1).await;
    assert_eq!(r["protocolVersion"], "2025-11-25");
    t.send(encode_notification("notifications/initialized", None))
        .await
        .expect("send initialized");

    t.send(encode_request(2, "tools/list", None))
        .await
        .expect("send tools/list");
    let tools = result_of(&mut t, 2).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .expect("tools array")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");

    let call = json!({"name":"echo","arguments":{"message":"hello over ws"}});
    t.send(encode_request(3, "tools/call", Some(&call)))
        .await
        .expect("send tools/call");
    let r = result_of(&mut t, 3).await;
    assert_eq!(r["content"][0]["text"], "hello over ws");

    // Notifications of a request interleave with responses on the one socket.
    let call = json!({"name":"progress","arguments":{"steps":2},
                      "_meta":{"progressToken":"tok"}});
    t.send(encode_request(4, "tools/call", Some(&call)))
        .await
        .expect("send progress call");
    for _ in 0..2 {
        match next(&mut t).await {
            Received::Message(Incoming::Notification { method, .. }) => {
                assert_eq!(method, "notifications/progress")
            }
            other => panic!("expected progress, got {other:?}"),
        }
    }
    result_of(&mut t, 4).await;

    tokio::time::timeout(LIMIT, t.close())
        .await
        .expect("close is bounded")
        .expect("the server answers our close frame");
    server.shutdown().await;
}

#[tokio::test]
async fn ws_recv_is_cancel_safe() {
    let server = spawn_http(
        "127.0.0.1:0".parse().expect("addr"),
        ServerOptions::default(),
    )
    .await
    .expect("reference server");
    let url = format!("ws://{}/ws", server.addr);
    let mut t = connect(endpoint(&url, false)).await.expect("connect");
    let init = json!({"protocolVersion":"2025-11-25","capabilities":{},
                      "clientInfo":{"name":"t","version":"1"}});
    t.send(encode_request(1, "initialize", Some(&init)))
        .await
        .expect("send initialize");
    result_of(&mut t, 1).await;
    let call = json!({"name":"sleep","arguments":{"ms":300}});
    t.send(encode_request(2, "tools/call", Some(&call)))
        .await
        .expect("send sleep");
    // Time out (drop) several recv futures before the answer comes; it must survive.
    let mut timeouts = 0;
    loop {
        match tokio::time::timeout(Duration::from_millis(50), t.recv()).await {
            Err(_) => timeouts += 1,
            Ok(Received::Message(Incoming::Response { id, outcome: Ok(_) })) => {
                assert_eq!(id, Some(RequestId::Number(2)));
                break;
            }
            Ok(other) => panic!("unexpected {other:?}"),
        }
        assert!(timeouts < 100, "no answer to the sleep call");
    }
    assert!(timeouts >= 2, "recv was cancelled {timeouts} times");
    t.close().await.expect("close");
    server.shutdown().await;
}

#[tokio::test]
async fn ws_refused_upgrade_names_the_status() {
    let server = spawn_http(
        "127.0.0.1:0".parse().expect("addr"),
        ServerOptions::default(),
    )
    .await
    .expect("reference server");
    let url = format!("ws://{}/no-such-path", server.addr);
    let e = connect(endpoint(&url, false)).await.err().expect("a 404");
    // The server answered: a failed session, not an unreachable one.
    assert_eq!(e.kind, FailureKind::HttpStatus(404));
    assert!(e.detail.contains("404"), "{}", e.detail);
    server.shutdown().await;
}

#[tokio::test]
async fn ws_server_without_the_mcp_subprotocol_is_refused() {
    let (l, url) = listener().await;
    let server = tokio::spawn(async move {
        let (tcp, _) = l.accept().await.expect("accept");
        // A plain WebSocket server: it selects no subprotocol.
        let ws = tokio_tungstenite::accept_async(tcp).await;
        drop(ws);
    });
    let e = connect(endpoint(&url, false)).await.err().expect("refused");
    assert_eq!(e.kind, FailureKind::ConnectFailed);
    assert!(
        e.detail
            .contains("the server did not accept the `mcp` subprotocol"),
        "{}",
        e.detail
    );
    let _ = tokio::time::timeout(LIMIT, server).await;
}

#[tokio::test]
async fn ws_binary_frame_is_a_protocol_violation_closed_with_1003() {
    let (l, url) = listener().await;
    let (code_tx, code_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (tcp, _) = l.accept().await.expect("accept");
        let mut ws = tokio_tungstenite::accept_hdr_async(tcp, select_mcp)
            .await
            .expect("upgrade");
        ws.send(Message::binary(vec![1u8, 2, 3]))
            .await
            .expect("send binary");
        let mut code_tx = Some(code_tx);
        // Keep reading after the close: that is when tungstenite sends its answer.
        while let Some(Ok(msg)) = ws.next().await {
            if let (Message::Close(frame), Some(tx)) = (msg, code_tx.take()) {
                let _ = tx.send(frame.map(|f| u16::from(f.code)));
            }
        }
    });
    let mut t = connect(endpoint(&url, false)).await.expect("connect");
    match next(&mut t).await {
        Received::Failed {
            request: None,
            kind: FailureKind::ProtocolViolation,
            detail,
        } => assert!(detail.contains("binary"), "{detail}"),
        other => panic!("expected a protocol violation, got {other:?}"),
    }
    let code = tokio::time::timeout(LIMIT, code_rx)
        .await
        .expect("the server sees our close")
        .expect("close code");
    assert_eq!(code, Some(1003));
    // The server answers our close; after that the socket reports its end.
    match next(&mut t).await {
        Received::Closed { detail } => assert!(detail.contains("1003"), "{detail}"),
        other => panic!("expected the end, got {other:?}"),
    }
}

#[tokio::test]
async fn ws_server_close_frame_ends_the_session_with_its_code() {
    let (l, url) = listener().await;
    tokio::spawn(async move {
        let (tcp, _) = l.accept().await.expect("accept");
        let mut ws = tokio_tungstenite::accept_hdr_async(tcp, select_mcp)
            .await
            .expect("upgrade");
        ws.send(Message::Ping(vec![7u8].into()))
            .await
            .expect("ping");
        ws.send(Message::text(
            r#"{"jsonrpc":"2.0","method":"notifications/hi"}"#,
        ))
        .await
        .expect("text");
        let bye = CloseFrame {
            code: CloseCode::Away,
            reason: "restarting".into(),
        };
        ws.close(Some(bye)).await.expect("close");
        // tungstenite answers pings while we read; keep reading until the end.
        while let Some(Ok(_)) = ws.next().await {}
    });
    let mut t = connect(endpoint(&url, false)).await.expect("connect");
    assert!(matches!(
        next(&mut t).await,
        Received::Message(Incoming::Notification { .. })
    ));
    match next(&mut t).await {
        Received::Closed { detail } => {
            assert!(
                detail.contains("1001") && detail.contains("restarting"),
                "{detail}"
            )
        }
        other => panic!("expected the end, got {other:?}"),
    }
    let e = t.send(encode_notification("x", None)).await.err();
    assert_eq!(e.map(|e| e.kind), Some(FailureKind::TransportClosed));
    tokio::time::timeout(LIMIT, t.close())
        .await
        .expect("bounded")
        .expect("closing after the server's close is fine");
}

#[tokio::test]
async fn ws_connect_timeout_and_refusal() {
    // Bound but never accepted: TCP completes in the backlog, the upgrade never does.
    let (l, url) = listener().await;
    let mut ep = endpoint(&url, false);
    if let Some(ep) = Arc::get_mut(&mut ep) {
        ep.connection.timeout = Duration::from_millis(300);
    }
    let e = connect(ep).await.err().expect("timeout");
    assert_eq!(e.kind, FailureKind::Timeout, "{}", e.detail);
    drop(l);
    let e = connect(endpoint(&url, false)).await.err().expect("refused");
    assert_eq!(e.kind, FailureKind::ConnectFailed, "{}", e.detail);
}

/// A `wss://` server with a fresh self-signed certificate for 127.0.0.1 that answers
/// every text frame with an empty result for id 1.
async fn tls_server() -> String {
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()])
            .expect("self-signed certificate");
    // *ring*, as the client side (src/transport/tls.rs).
    #[allow(deprecated)]
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        PrivateKeyDer::Pkcs8(signing_key.serialize_der().into()),
    )
    .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("wss://{}/ws", l.local_addr().expect("local addr"));
    tokio::spawn(async move {
        while let Ok((tcp, _)) = l.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return; // the verifying client hangs up
                };
                let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(tls, select_mcp).await else {
                    return;
                };
                while let Some(Ok(msg)) = ws.next().await {
                    if msg.is_text() {
                        let reply = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
                        if ws.send(Message::text(reply)).await.is_err() {
                            break;
                        }
                    }
                }
            });
        }
    });
    url
}

#[tokio::test]
async fn wss_self_signed_needs_insecure() {
    let url = tls_server().await;
    let e = connect(endpoint(&url, false))
        .await
        .err()
        .expect("a certificate error");
    assert_eq!(e.kind, FailureKind::ConnectFailed);
    assert!(e.detail.contains("certificate"), "{}", e.detail);

    let mut t = connect(endpoint(&url, true))
        .await
        .expect("insecure connect");
    t.send(encode_request(1, "ping", None)).await.expect("send");
    assert_eq!(result_of(&mut t, 1).await, json!({}));
    tokio::time::timeout(LIMIT, t.close())
        .await
        .expect("bounded")
        .expect("close");
}
