//! WebSocket (not a spec transport; the TypeScript v1 / Python v1 SDK convention):
//! subprotocol `mcp`, one JSON-RPC message per UTF-8 text frame, the legacy handshake over
//! the socket, a close frame ends the session.
//!
//! The connection is built in three timed-together steps (TCP, TLS for `wss://`, the HTTP
//! upgrade) so each failure names the step that failed; the connect timeout bounds all
//! three. Binary frames are refused with close code 1003, as SEP-1288 drafts say.

use super::tcp::SourceAddrs;
use super::{classify, Carrier, Received, TransportError};
use crate::metrics::FailureKind;
use crate::plan::Connection;
use crate::protocol::headers::WS_SUBPROTOCOL;
use futures::{SinkExt, StreamExt};
use http::HeaderValue;
use rustls::pki_types::ServerName;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::error::{Error as WsError, ProtocolError};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long `close` (and the refusal of a binary frame) waits for the server's side of
/// the closing handshake.
const CLOSE_WAIT: Duration = Duration::from_secs(2);
/// Read buffer per connection. tungstenite's default, 128 KiB, allocated up front, made a
/// WebSocket session cost ~150 KiB of resident memory in a 5,000-session soak; MCP
/// messages are small (an echo answer is ~200 bytes) and a larger one just grows the
/// buffer, so 2 KiB: 8 KiB was a quarter of a held session's bytes (issue 12).
const READ_BUFFER_BYTES: usize = 2 * 1024;

/// Where and how to reach a WebSocket endpoint; shared by every session of a run.
#[derive(Debug)]
pub struct WsEndpoint {
    /// `ws://` or `wss://`.
    pub url: url::Url,
    /// How sessions connect: headers (on the upgrade request), timeout (TCP, TLS and
    /// upgrade together), message limit (the largest message and frame we accept;
    /// tungstenite refuses a longer frame from its header, before reading the payload),
    /// `--insecure`, source addresses.
    pub connection: Connection,
    /// `connection.source_addresses`, taken in turn.
    pub sources: SourceAddrs,
}

impl WsEndpoint {
    pub fn new(url: url::Url, connection: Connection) -> WsEndpoint {
        WsEndpoint {
            url,
            sources: SourceAddrs::new(connection.source_addresses.clone()),
            connection,
        }
    }
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
    /// `bearer` is the session's `Authorization` value, on the upgrade request.
    pub async fn connect(
        ep: Arc<WsEndpoint>,
        bearer: Option<&HeaderValue>,
    ) -> Result<WsTransport, TransportError> {
        let target = Target::of(&ep.url)?;
        let mut request = upgrade_request(&ep)?;
        if let Some(v) = bearer {
            request
                .headers_mut()
                .insert(http::header::AUTHORIZATION, v.clone());
        }
        let steps = async {
            let tcp = super::tcp::connect(&target.addr(), &ep.sources)
                .await
                .map_err(|e| connect_failed(format!("connect to {}: {e}", target.addr())))?;
            let stream = match &target.tls {
                None => MaybeTlsStream::Plain(tcp),
                Some(name) => {
                    let tls = tokio_rustls::TlsConnector::from(super::tls::client_config(
                        ep.connection.insecure,
                    ))
                    .connect(name.clone(), tcp)
                    .await
                    .map_err(|e| {
                        connect_failed(format!("TLS handshake with {}: {e}", target.addr()))
                    })?;
                    MaybeTlsStream::Rustls(tls)
                }
            };
            let config = socket_config(ep.connection.max_message_bytes);
            tokio_tungstenite::client_async_with_config(request, stream, Some(config))
                .await
                .map_err(|e| upgrade_failed(&ep.url, e))
        };
        let (ws, response) = match tokio::time::timeout(ep.connection.timeout, steps).await {
            Ok(result) => result?,
            Err(_) => {
                return Err(TransportError::new(
                    FailureKind::Timeout,
                    format!(
                        "no WebSocket session with {} within {} ({})",
                        crate::redact::url(&ep.url),
                        humantime::format_duration(ep.connection.timeout),
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
        let selected = response.headers().get(http::header::SEC_WEBSOCKET_PROTOCOL);
        if selected.is_none_or(|v| v.as_bytes() != WS_SUBPROTOCOL.as_bytes()) {
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
                Some(Ok(Message::Text(text))) => return classify(text.as_bytes(), Carrier::WsText),
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
        if let WsError::Capacity(c) = &e {
            let detail = format!("a WebSocket message over the limit (--max-message-size): {c}");
            self.ended = Some(detail.clone());
            return Received::Failed {
                request: None,
                kind: FailureKind::MessageTooLarge,
                detail,
            };
        }
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

/// The socket settings of every session: a small read buffer, and messages and frames
/// up to `max_message_bytes` (tungstenite refuses a longer frame from its header, before
/// reading the payload). Public so that the parser tests and fuzz targets read frames
/// exactly as sessions do.
pub fn socket_config(max_message_bytes: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_BYTES)
        .max_message_size(Some(max_message_bytes))
        .max_frame_size(Some(max_message_bytes))
}

/// Where to connect and the TLS server name, taken from the URL once per connect.
struct Target {
    connect: String,
    tls: Option<ServerName<'static>>,
}

impl Target {
    fn of(url: &url::Url) -> Result<Target, TransportError> {
        let a = super::address::Address::parse(url, ("ws", "wss")).map_err(connect_failed)?;
        let tls = if a.secure {
            Some(
                a.server_name()
                    .map_err(|e| connect_failed(format!("{}: {e}", crate::redact::url(url))))?,
            )
        } else {
            None
        };
        Ok(Target {
            connect: a.connect,
            tls,
        })
    }

    fn addr(&self) -> String {
        self.connect.clone()
    }
}

/// The upgrade request: the URL, the user's extra headers, then our subprotocol (last,
/// so a stray `Sec-WebSocket-Protocol` among the extras cannot replace it).
fn upgrade_request(ep: &WsEndpoint) -> Result<http::Request<()>, TransportError> {
    let mut request = ep
        .url
        .as_str()
        .into_client_request()
        .map_err(|e| connect_failed(format!("{}: {e}", crate::redact::url(&ep.url))))?;
    let headers = request.headers_mut();
    for (k, v) in &ep.connection.headers {
        headers.insert(k.clone(), v.clone());
    }
    headers.insert(
        http::header::SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static(WS_SUBPROTOCOL),
    );
    Ok(request)
}

fn connect_failed(detail: String) -> TransportError {
    TransportError::new(FailureKind::ConnectFailed, detail)
}

fn no_subprotocol(url: &url::Url, why: &str) -> TransportError {
    connect_failed(format!(
        "{}: the server did not accept the `{WS_SUBPROTOCOL}` subprotocol \
         (Sec-WebSocket-Protocol): {why}",
        crate::redact::url(url)
    ))
}

/// What went wrong during the HTTP upgrade, naming the status when it was refused.
fn upgrade_failed(url: &url::Url, e: WsError) -> TransportError {
    match e {
        WsError::Http(response) => {
            let status = response.status();
            let challenge = super::auth::challenge(status, response.headers());
            let body = response
                .body()
                .as_deref()
                .map(super::excerpt)
                .filter(|b| !b.trim().is_empty())
                .map(|b| format!(": {b}"))
                .unwrap_or_default();
            let detail = super::auth::with_challenge(
                format!(
                    "{}: the server refused the WebSocket upgrade with HTTP {status}",
                    crate::redact::url(url)
                ),
                challenge.as_deref(),
            );
            // Any status is the server's answer (a refused token, a path that is not a
            // WebSocket endpoint): the session reached it and failed; it was not
            // unreachable.
            TransportError::new(
                FailureKind::HttpStatus(status.as_u16()),
                format!("{detail}{body}"),
            )
        }
        WsError::Protocol(ProtocolError::SecWebSocketSubProtocolError(why)) => {
            no_subprotocol(url, &why.to_string())
        }
        e => connect_failed(format!(
            "{}: WebSocket upgrade: {e}",
            crate::redact::url(url)
        )),
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
mod tests;
