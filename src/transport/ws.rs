//! WebSocket (not a spec transport; the TypeScript v1 / Python v1 SDK convention):
//! subprotocol `mcp`, one JSON-RPC message per UTF-8 text frame, the legacy handshake over
//! the socket, a close frame ends the session.
//!
//! The connection is built in three timed-together steps (TCP, TLS for `wss://`, the HTTP
//! upgrade) so each failure names the step that failed; the connect timeout bounds all
//! three. Binary frames are refused with close code 1003, as SEP-1288 drafts say.

use super::{classify, Received, TransportError};
use crate::metrics::FailureKind;
use futures::{SinkExt, StreamExt};
use http::{HeaderName, HeaderValue};
use rustls::pki_types::ServerName;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::error::{Error as WsError, ProtocolError};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The subprotocol every SDK that speaks MCP over WebSocket asks for.
pub const SUBPROTOCOL: &str = "mcp";
/// How long `close` (and the refusal of a binary frame) waits for the server's side of
/// the closing handshake.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Where and how to reach a WebSocket endpoint; shared by every session of a run.
#[derive(Debug)]
pub struct WsEndpoint {
    /// `ws://` or `wss://`.
    pub url: url::Url,
    /// Extra headers on the upgrade request (e.g. Authorization).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub connect_timeout: Duration,
    /// Skip TLS certificate verification (`--insecure`).
    pub insecure: bool,
}

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub struct WsTransport {
    /// Boxed: a TLS session is large and `Transport` holds every variant inline; one
    /// allocation per session is nothing next to a handshake.
    ws: Box<Socket>,
    /// Something `recv` took off the socket but has not handed out yet, because it first
    /// had to answer it (a binary frame is answered with close 1003). Kept here so a
    /// cancelled `recv` loses nothing.
    pending: Option<Received>,
    /// Set once the socket reported its end; later `recv`s repeat it without polling.
    ended: Option<String>,
}

impl WsTransport {
    /// TCP (nodelay), TLS for `wss://`, then the upgrade asking for subprotocol `mcp`.
    pub async fn connect(ep: Arc<WsEndpoint>) -> Result<WsTransport, TransportError> {
        let target = Target::of(&ep.url)?;
        let request = upgrade_request(&ep)?;
        let steps = async {
            let tcp = TcpStream::connect((target.host.as_str(), target.port))
                .await
                .map_err(|e| connect_failed(format!("connect to {}: {e}", target.addr())))?;
            tcp.set_nodelay(true)
                .map_err(|e| connect_failed(format!("TCP_NODELAY: {e}")))?;
            let stream = match &target.tls {
                None => MaybeTlsStream::Plain(tcp),
                Some(name) => {
                    let tls = tokio_rustls::TlsConnector::from(client_config(ep.insecure))
                        .connect(name.clone(), tcp)
                        .await
                        .map_err(|e| {
                            connect_failed(format!("TLS handshake with {}: {e}", target.addr()))
                        })?;
                    MaybeTlsStream::Rustls(tls)
                }
            };
            tokio_tungstenite::client_async(request, stream)
                .await
                .map_err(|e| upgrade_failed(&ep.url, e))
        };
        let (ws, response) = match tokio::time::timeout(ep.connect_timeout, steps).await {
            Ok(result) => result?,
            Err(_) => {
                return Err(TransportError::new(
                    FailureKind::Timeout,
                    format!(
                        "no WebSocket session with {} within {} ({})",
                        ep.url,
                        humantime::format_duration(ep.connect_timeout),
                        if target.tls.is_some() {
                            "TCP, TLS and upgrade"
                        } else {
                            "TCP and upgrade"
                        }
                    ),
                ))
            }
        };
        // tungstenite already refuses an answer without a subprotocol or with one we did
        // not offer; this guards against a future change of that behaviour.
        let selected = response.headers().get("sec-websocket-protocol");
        if selected.is_none_or(|v| v.as_bytes() != SUBPROTOCOL.as_bytes()) {
            return Err(no_subprotocol(&ep.url, "it selected another one"));
        }
        Ok(WsTransport {
            ws: Box::new(ws),
            pending: None,
            ended: None,
        })
    }

    /// Send one message as one text frame.
    pub async fn send(&mut self, bytes: Vec<u8>) -> Result<(), TransportError> {
        let text = String::from_utf8(bytes).map_err(|_| {
            TransportError::new(FailureKind::Io, "an outgoing message is not UTF-8")
        })?;
        self.ws
            .send(Message::text(text))
            .await
            .map_err(|e| TransportError::new(FailureKind::TransportClosed, sending_detail(&e)))
    }

    /// The next message. Cancel-safe: `StreamExt::next` is, and whatever must be answered
    /// before it is handed out is parked in `self.pending` first.
    pub async fn recv(&mut self) -> Received {
        loop {
            if self.pending.is_some() {
                // A binary frame arrived: tell the server why we stop listening (1003,
                // "unsupported data") before reporting it. Bounded: a server that does not
                // read must not hold us here.
                let refusal = CloseFrame {
                    code: CloseCode::Unsupported,
                    reason: "MCP over WebSocket uses text frames only".into(),
                };
                let _ = tokio::time::timeout(
                    CLOSE_WAIT,
                    WebSocketStream::close(&mut self.ws, Some(refusal)),
                )
                .await;
                if let Some(r) = self.pending.take() {
                    return r;
                }
            }
            if let Some(detail) = &self.ended {
                return Received::Closed {
                    detail: detail.clone(),
                };
            }
            let received = match self.ws.next().await {
                // Pings are answered by tungstenite on the next poll; pongs and raw
                // frames carry nothing for the session.
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                Some(Ok(Message::Text(text))) => return classify(text.as_bytes()),
                Some(Ok(Message::Binary(data))) => {
                    self.pending = Some(Received::Failed {
                        request: None,
                        kind: FailureKind::ProtocolViolation,
                        detail: format!(
                            "the server sent a binary frame ({} bytes); MCP over WebSocket \
                             uses text frames only (closed with 1003)",
                            data.len()
                        ),
                    });
                    continue;
                }
                Some(Ok(Message::Close(frame))) => closed_by_server(frame.as_ref()),
                Some(Err(e)) => return self.read_error(e),
                None => "the server closed the connection without a close frame".to_string(),
            };
            self.ended = Some(received.clone());
            return Received::Closed { detail: received };
        }
    }

    fn read_error(&mut self, e: WsError) -> Received {
        // A reset is the connection ending; the other framing errors mean the server
        // broke the WebSocket rules, which is a protocol violation, not a lost line.
        let violation = match &e {
            WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake) => false,
            WsError::Protocol(_) | WsError::Utf8(_) | WsError::Capacity(_) => true,
            _ => false,
        };
        if violation {
            let detail = format!("the server broke the WebSocket framing: {e}");
            self.ended = Some(detail.clone());
            return Received::Failed {
                request: None,
                kind: FailureKind::ProtocolViolation,
                detail,
            };
        }
        let detail = format!("reading from the server: {e}");
        self.ended = Some(detail.clone());
        Received::Closed { detail }
    }

    /// Send a close frame (1000) and wait, bounded, for the server's. A server that just
    /// drops the connection is fine; one that keeps it open past the wait is a timeout.
    pub async fn close(mut self) -> Result<(), TransportError> {
        let handshake = async {
            let normal = CloseFrame {
                code: CloseCode::Normal,
                reason: "".into(),
            };
            // After the server's own close this only flushes our queued reply.
            if WebSocketStream::close(&mut self.ws, Some(normal))
                .await
                .is_err()
            {
                return;
            }
            // Drain until the server's close frame (tungstenite then ends the stream) or
            // the connection drops; messages still in flight are of no use now.
            while let Some(Ok(_)) = self.ws.next().await {}
        };
        tokio::time::timeout(CLOSE_WAIT, handshake)
            .await
            .map_err(|_| {
                TransportError::new(
                    FailureKind::Timeout,
                    format!(
                        "the server did not answer our close frame within {}",
                        humantime::format_duration(CLOSE_WAIT)
                    ),
                )
            })
    }
}

/// Host, port and TLS server name taken from the URL, checked once per connect.
struct Target {
    host: String,
    port: u16,
    tls: Option<ServerName<'static>>,
}

impl Target {
    fn of(url: &url::Url) -> Result<Target, TransportError> {
        let tls = match url.scheme() {
            "ws" => false,
            "wss" => true,
            other => {
                return Err(connect_failed(format!(
                    "{url}: a WebSocket URL starts with ws:// or wss://, not {other}://"
                )))
            }
        };
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.to_string(),
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            None => return Err(connect_failed(format!("{url}: the URL has no host"))),
        };
        let port = url
            .port_or_known_default()
            .ok_or_else(|| connect_failed(format!("{url}: no port")))?;
        let tls = if tls {
            let name = match host.parse::<IpAddr>() {
                Ok(ip) => ServerName::IpAddress(ip.into()),
                Err(_) => ServerName::try_from(host.clone()).map_err(|e| {
                    connect_failed(format!("{url}: {host:?} is not a TLS server name: {e}"))
                })?,
            };
            Some(name)
        } else {
            None
        };
        Ok(Target { host, port, tls })
    }

    fn addr(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// The upgrade request: the URL, the user's extra headers, then our subprotocol (last,
/// so a stray `Sec-WebSocket-Protocol` among the extras cannot replace it).
fn upgrade_request(ep: &WsEndpoint) -> Result<http::Request<()>, TransportError> {
    let mut request = ep
        .url
        .as_str()
        .into_client_request()
        .map_err(|e| connect_failed(format!("{}: {e}", ep.url)))?;
    let headers = request.headers_mut();
    for (k, v) in &ep.headers {
        headers.insert(k.clone(), v.clone());
    }
    headers.insert(
        http::header::SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static(SUBPROTOCOL),
    );
    Ok(request)
}

/// One rustls config per process and verification mode: building the root store per
/// session would cost every connect, and sharing it lets sessions resume TLS like a
/// long-running client does.
fn client_config(insecure: bool) -> Arc<rustls::ClientConfig> {
    static SECURE: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    static INSECURE: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    let cell = if insecure { &INSECURE } else { &SECURE };
    cell.get_or_init(|| super::tls::client_config(insecure))
        .clone()
}

fn connect_failed(detail: String) -> TransportError {
    TransportError::new(FailureKind::ConnectFailed, detail)
}

fn no_subprotocol(url: &url::Url, why: &str) -> TransportError {
    connect_failed(format!(
        "{url}: the server did not accept the `{SUBPROTOCOL}` subprotocol \
         (Sec-WebSocket-Protocol): {why}"
    ))
}

/// What went wrong during the HTTP upgrade, naming the status when it was refused.
fn upgrade_failed(url: &url::Url, e: WsError) -> TransportError {
    match e {
        WsError::Http(response) => {
            let status = response.status();
            let body = response
                .body()
                .as_deref()
                .map(super::excerpt)
                .filter(|b| !b.trim().is_empty())
                .map(|b| format!(": {b}"))
                .unwrap_or_default();
            connect_failed(format!(
                "{url}: the server refused the WebSocket upgrade with HTTP {status}{body}"
            ))
        }
        WsError::Protocol(ProtocolError::SecWebSocketSubProtocolError(why)) => {
            no_subprotocol(url, &why.to_string())
        }
        e => connect_failed(format!("{url}: WebSocket upgrade: {e}")),
    }
}

fn closed_by_server(frame: Option<&CloseFrame>) -> String {
    match frame {
        Some(f) if f.reason.is_empty() => {
            format!(
                "the server closed the WebSocket (code {})",
                u16::from(f.code)
            )
        }
        Some(f) => format!(
            "the server closed the WebSocket (code {}: {})",
            u16::from(f.code),
            f.reason.as_str()
        ),
        None => "the server closed the WebSocket (no close code)".to_string(),
    }
}

fn sending_detail(e: &WsError) -> String {
    match e {
        WsError::ConnectionClosed | WsError::AlreadyClosed => {
            "sending on a WebSocket that is already closed".to_string()
        }
        e => format!("sending to the server: {e}"),
    }
}

#[cfg(test)]
mod tests {
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
        Arc::new(WsEndpoint {
            url: url.parse().expect("test URL"),
            headers: vec![(
                http::header::AUTHORIZATION,
                HeaderValue::from_static("Bearer test"),
            )],
            connect_timeout: Duration::from_secs(2),
            insecure,
        })
    }

    async fn connect(ep: Arc<WsEndpoint>) -> Result<WsTransport, TransportError> {
        tokio::time::timeout(LIMIT, WsTransport::connect(ep))
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
            }) if id == want => v,
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
            HeaderValue::from_static(SUBPROTOCOL),
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
        assert_eq!(e.kind, FailureKind::ConnectFailed);
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
            ep.connect_timeout = Duration::from_millis(300);
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
                    let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(tls, select_mcp).await
                    else {
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
}
