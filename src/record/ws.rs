//! WebSocket through the recorder: the upgrade is passed to the upstream as it came,
//! its answer (101, the subprotocol) back to the client, then every frame's message is
//! passed on both ways unchanged and the text ones recorded. One connection is one
//! session, as the SDKs' WebSocket transports use it.

use super::body::{record_json, DownBody};
use super::http::{send, Proxy};
use super::sessions::Sessions;
use super::upstream::UpBody;
use crate::trace::{ClosedBy, From, Transport};
use futures::{SinkExt, StreamExt};
use http::{header, HeaderMap, Request, Response};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::sync::Mutex;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

pub fn is_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

pub async fn relay(
    mut req: Request<Incoming>,
    proxy: &Proxy,
    up: &Mutex<Option<SendRequest<UpBody>>>,
    connection: u64,
) -> Result<Response<DownBody>, std::io::Error> {
    let client_side = hyper::upgrade::on(&mut req);
    let (parts, _) = req.into_parts();
    let mut record = super::http::exchange(&parts, connection);
    let mut forward = Request::from_parts(parts, Empty::new().map_err(|e| match e {}).boxed());
    forward
        .headers_mut()
        .insert(header::HOST, proxy.upstream.address.authority.clone());
    let mut response = send(up, &proxy.upstream, forward).await?;
    if response.status() != http::StatusCode::SWITCHING_PROTOCOLS {
        // Refused (401, 404 …): the client gets the server's answer as it is.
        let (head, body) = response.into_parts();
        let tap = super::body::Tap {
            sessions: proxy.sessions.clone(),
            session: None,
            reading: super::body::Reading::Nothing,
            legacy: None,
            session_is_stream: false,
        };
        return Ok(Response::from_parts(head, super::body::relay(body, tap)));
    }
    let server_side = hyper::upgrade::on(&mut response);
    let (head, _) = response.into_parts();
    let sessions = proxy.sessions.clone();
    let id = sessions.open(Transport::Ws, connection);
    record.status = head.status.as_u16();
    sessions.trace.http(id, record);
    sessions.stream_began(id);
    tokio::spawn(async move {
        let (client, server) = match tokio::try_join!(client_side, server_side) {
            Ok(pair) => pair,
            Err(e) => {
                sessions.close(id, ClosedBy::UpstreamFailed, Some(format!("upgrade: {e}")));
                return;
            }
        };
        let client =
            WebSocketStream::from_raw_socket(TokioIo::new(client), Role::Server, None).await;
        let server =
            WebSocketStream::from_raw_socket(TokioIo::new(server), Role::Client, None).await;
        let (by, reason) = pass(client, server, &sessions, id).await;
        sessions.close(id, by, Some(reason));
    });
    Ok(Response::from_parts(
        head,
        Empty::new().map_err(|e| match e {}).boxed(),
    ))
}

type Ws = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// After one side's close frame, how long the other's answer may take.
const CLOSING: std::time::Duration = std::time::Duration::from_secs(2);

/// Pass messages both ways until both sides are done; who ended it, and how.
async fn pass(client: Ws, server: Ws, sessions: &Sessions, id: u64) -> (ClosedBy, String) {
    let (mut to_client, mut from_client) = client.split();
    let (mut to_server, mut from_server) = server.split();
    // The first side to close decides who ended the session; the other side's frames
    // (its close answer) still pass for a moment.
    let mut ended: Option<(ClosedBy, String)> = None;
    let closing = tokio::time::sleep(std::time::Duration::from_secs(365 * 86_400));
    tokio::pin!(closing);
    loop {
        tokio::select! {
            () = &mut closing => break,
            m = from_client.next() => {
                let Some(Ok(m)) = m else {
                    ended.get_or_insert((ClosedBy::Client, "the client's connection ended".into()));
                    let _ = to_server.close().await;
                    break;
                };
                let close = matches!(m, Message::Close(_));
                if let Message::Text(t) = &m {
                    record_json(sessions, id, From::Client, t.as_bytes());
                }
                if to_server.send(m).await.is_err() {
                    ended.get_or_insert((ClosedBy::UpstreamFailed, "the server's connection broke".into()));
                    break;
                }
                if close && ended.is_none() {
                    ended = Some((ClosedBy::Client, "a close frame".into()));
                    closing.as_mut().reset(tokio::time::Instant::now() + CLOSING);
                }
            },
            m = from_server.next() => {
                let m = match m {
                    Some(Ok(m)) => m,
                    Some(Err(e)) => {
                        ended.get_or_insert((ClosedBy::UpstreamFailed, format!("the server's connection broke: {e}")));
                        break; // the client's connection drops, as it would have
                    }
                    None => {
                        ended.get_or_insert((ClosedBy::Server, "the server's connection ended".into()));
                        break;
                    }
                };
                let close = matches!(m, Message::Close(_));
                if let Message::Text(t) = &m {
                    record_json(sessions, id, From::Server, t.as_bytes());
                }
                if to_client.send(m).await.is_err() {
                    ended.get_or_insert((ClosedBy::Client, "the client's connection ended".into()));
                    break;
                }
                if close && ended.is_none() {
                    ended = Some((ClosedBy::Server, "a close frame".into()));
                    closing.as_mut().reset(tokio::time::Instant::now() + CLOSING);
                }
            },
        }
    }
    ended.unwrap_or((ClosedBy::Client, "a close frame".into()))
}
