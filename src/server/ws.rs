//! WebSocket for the reference server (`GET /ws`, subprotocol `mcp`): one JSON-RPC
//! message per text frame around [`super::channel::serve_messages`], one session per
//! socket. Not a spec transport; this follows the SDK convention (TypeScript v1 client,
//! Python v1 server): the server must select `mcp`, binary frames are refused with close
//! code 1003 (SEP-1288), and closing the socket ends the session.

use std::sync::Arc;

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::header::{HeaderMap, CONTENT_TYPE, ORIGIN};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio::sync::mpsc;

use super::channel::serve_messages;
use super::handler::{error_without_id, Handler};
use super::origin::is_local_origin;
use crate::protocol::headers::WS_SUBPROTOCOL;
use crate::protocol::jsonrpc::codes;

/// The path the upgrade is served on.
pub const PATH: &str = "/ws";

/// Read buffer per socket, as the client's: tungstenite's default (128 KiB) made tens of
/// thousands of held sessions cost gigabytes; MCP messages are small and a larger one
/// grows the buffer. 8 → 2 KiB took 6 KiB off each held session (issue 12).
const READ_BUFFER_BYTES: usize = 2 * 1024;

/// Routes to merge into the server's router.
pub fn routes(handler: Arc<Handler>) -> Router {
    Router::new().route(PATH, get(upgrade)).with_state(handler)
}

async fn upgrade(
    State(handler): State<Arc<Handler>>,
    headers: HeaderMap,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    // Origin first: a foreign page learns nothing, not even that this is a WebSocket.
    if headers
        .get(ORIGIN)
        .is_some_and(|o| !o.to_str().is_ok_and(is_local_origin))
    {
        return refuse(StatusCode::FORBIDDEN, "Forbidden: Origin not allowed");
    }
    let ws = match ws {
        Ok(ws) => ws.protocols([WS_SUBPROTOCOL]),
        Err(rejection) => return rejection.into_response(),
    };
    if ws.selected_protocol().is_none() {
        return refuse(
            StatusCode::BAD_REQUEST,
            "Bad Request: MCP over WebSocket needs the `mcp` subprotocol \
             (send Sec-WebSocket-Protocol: mcp)",
        );
    }
    ws.read_buffer_size(READ_BUFFER_BYTES)
        .on_upgrade(move |socket| serve_socket(handler, socket))
}

/// An HTTP refusal whose body is an id-less JSON-RPC error, as on `/mcp`.
fn refuse(status: StatusCode, message: &str) -> Response {
    (
        status,
        [(CONTENT_TYPE, "application/json")],
        error_without_id(codes::SERVER_ERROR, message),
    )
        .into_response()
}

/// One session: text frames in, the session's messages out as text frames, until either
/// side closes. One loop owns the socket, so frames never interleave; both awaited
/// futures (`recv` on the socket and on the queue) are cancel-safe.
async fn serve_socket(handler: Arc<Handler>, mut socket: WebSocket) {
    let _open = super::process_metrics::OpenSession::new(handler.clone());
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let (in_tx, in_rx) = mpsc::channel::<Vec<u8>>(64);
    let session = tokio::spawn(serve_messages(handler, in_rx, out_tx));
    // Our close frame; None when the client closed first (then sending a close only
    // flushes the reply tungstenite queued for it).
    let mut goodbye = None;
    loop {
        tokio::select! {
            frame = socket.recv() => match frame {
                Some(Ok(Message::Text(text))) => {
                    if in_tx.send(text.as_str().as_bytes().to_vec()).await.is_err() {
                        break; // the session ended on its own
                    }
                }
                Some(Ok(Message::Binary(_))) => {
                    goodbye = Some(CloseFrame {
                        code: close_code::UNSUPPORTED,
                        reason: "MCP over WebSocket uses text frames only".into(),
                    });
                    break;
                }
                // axum answers pings itself.
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                // Nothing can be sent after the client's close: the session ends now.
                Some(Ok(Message::Close(_)) | Err(_)) | None => break,
            },
            out = out_rx.recv() => match out {
                Some(bytes) => {
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    if socket.send(Message::text(text)).await.is_err() {
                        break;
                    }
                }
                None => {
                    goodbye = Some(CloseFrame {
                        code: close_code::NORMAL,
                        reason: "".into(),
                    });
                    break;
                }
            },
        }
    }
    // Requests still running see a closed queue and stop being answered.
    drop((in_tx, out_rx));
    // Errors mean the client is already gone, which is what we want anyway.
    let _ = socket.send(Message::Close(goodbye)).await;
    drop(socket);
    let _ = session.await;
}

#[cfg(test)]
mod tests {
    use crate::server::{spawn_http, HttpServer, ServerOptions};
    use futures::{SinkExt, StreamExt};
    use std::time::Duration;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    use tokio_tungstenite::tungstenite::error::Error as WsError;
    use tokio_tungstenite::tungstenite::http::HeaderValue;
    use tokio_tungstenite::tungstenite::Message;

    const LIMIT: Duration = Duration::from_secs(5);

    async fn server() -> HttpServer {
        spawn_http(
            "127.0.0.1:0".parse().expect("addr"),
            ServerOptions::default(),
        )
        .await
        .expect("reference server")
    }

    /// A raw WebSocket client, so the server can be shown requests `WsTransport` would
    /// never make.
    async fn raw(
        server: &HttpServer,
        protocol: Option<&'static str>,
        origin: Option<&'static str>,
    ) -> Result<
        tokio_tungstenite::WebSocketStream<
            tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
        >,
        WsError,
    > {
        let mut req = format!("ws://{}/ws", server.addr)
            .into_client_request()
            .expect("request");
        if let Some(p) = protocol {
            req.headers_mut()
                .insert("sec-websocket-protocol", HeaderValue::from_static(p));
        }
        if let Some(o) = origin {
            req.headers_mut()
                .insert("origin", HeaderValue::from_static(o));
        }
        tokio::time::timeout(LIMIT, tokio_tungstenite::connect_async(req))
            .await
            .expect("upgrade answered")
            .map(|(ws, _)| ws)
    }

    fn refusal(result: Result<impl Sized, WsError>) -> (u16, String) {
        match result {
            Err(WsError::Http(resp)) => (
                resp.status().as_u16(),
                String::from_utf8_lossy(resp.body().as_deref().unwrap_or_default()).into_owned(),
            ),
            Err(e) => panic!("expected an HTTP refusal, got {e}"),
            Ok(_) => panic!("expected an HTTP refusal, got an upgrade"),
        }
    }

    #[tokio::test]
    async fn ws_upgrade_without_mcp_subprotocol_is_400() {
        let s = server().await;
        let (status, body) = refusal(raw(&s, None, None).await);
        assert_eq!(status, 400);
        assert!(body.contains("Sec-WebSocket-Protocol: mcp"), "{body}");
        let (status, _) = refusal(raw(&s, Some("graphql-ws"), None).await);
        assert_eq!(status, 400);
        s.shutdown().await;
    }

    #[tokio::test]
    async fn ws_upgrade_from_a_foreign_origin_is_403() {
        let s = server().await;
        let (status, body) = refusal(raw(&s, Some("mcp"), Some("https://evil.example")).await);
        assert_eq!(status, 403);
        assert!(body.contains("Origin"), "{body}");
        let ws = raw(&s, Some("mcp"), Some("http://localhost:3000")).await;
        assert!(ws.is_ok(), "a local origin is allowed");
        s.shutdown().await;
    }

    #[tokio::test]
    async fn ws_server_answers_text_frames_and_closes_on_binary_with_1003() {
        let s = server().await;
        let mut ws = raw(&s, Some("mcp"), None).await.expect("upgrade");
        ws.send(Message::text(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
        ))
        .await
        .expect("send");
        let reply = tokio::time::timeout(LIMIT, ws.next())
            .await
            .expect("reply in time")
            .expect("a frame")
            .expect("no error");
        let text = reply.into_text().expect("a text frame");
        assert!(!text.contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(v["result"]["protocolVersion"], "2025-06-18");

        ws.send(Message::binary(vec![0u8; 4])).await.expect("send");
        let code = loop {
            match tokio::time::timeout(LIMIT, ws.next())
                .await
                .expect("in time")
            {
                Some(Ok(Message::Close(frame))) => break frame.map(|f| u16::from(f.code)),
                Some(Ok(_)) => continue,
                other => panic!("expected a close frame, got {other:?}"),
            }
        };
        assert_eq!(code, Some(1003));
        s.shutdown().await;
    }
}
