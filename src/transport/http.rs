//! Streamable HTTP (2025-03-26 and later), client side, on HTTP/1.1 connections of our
//! own ([`h1`]).
//!
//! Each session owns its connections, as a real client process would: the first one is
//! opened by [`HttpTransport::connect`] (timed as the `connect` phase), more are opened
//! only while all are busy (an SSE response, the GET stream or a parallel request holds
//! one). `https://` runs the same code over rustls. Every client message is its own
//! POST; a request's answer comes back as one JSON body or an SSE stream, and each of
//! those, like the optional standalone GET stream, becomes a [`flow`] of [`Received`]
//! items that `recv` polls together, so server requests and notifications can
//! interleave with responses. Flows that lose their SSE stream resume it with `GET` +
//! `Last-Event-ID`.
//!
//! We use our own connections rather than reqwest's or hyper's because the session must
//! see connection setup as its own phase and must own its connections (a shared client
//! pool hides both), and because hyper's fixed cost per connection (~29 KiB, a driver
//! task) was most of a long-lived session's memory.
//!
//! Beside this file: [`endpoint`] (where sessions connect, resolved once per run),
//! [`conn`] (a session's connections), [`request`] (one request, encoded), [`flow`]
//! (one answer's items), [`answer`] (what an answer means) and [`h1`] (HTTP/1.1).

mod answer;
mod conn;
mod endpoint;
mod flow;
pub(crate) mod h1;
mod request;

pub use answer::exchange_over;
pub use endpoint::HttpEndpoint;

use super::{Received, TransportError};
use crate::metrics::FailureKind;
use answer::{status_error, too_large_or_default, within};
use conn::Pool;
use flow::{Flow, Item};
use futures::stream::{BoxStream, SelectAll};
use futures::StreamExt;
use http::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use http::{Method, StatusCode};
use request::{build_request, SessionHeaders};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What the standalone GET stream request found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetStream {
    /// The stream is open; its messages arrive through `recv`.
    Open,
    /// The server answered 405: it offers no GET stream.
    NotOffered,
}

/// Connection and stream counts of one session, for its report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpStats {
    pub connections_opened: u32,
    /// POST response streams resumed with `GET` + `Last-Event-ID`.
    pub resumptions: u32,
    /// Times the standalone GET stream was reopened after it ended or broke.
    pub get_stream_reconnects: u32,
}

pub struct HttpTransport {
    pool: Arc<Pool>,
    streams: SelectAll<BoxStream<'static, (Item, Option<u64>)>>,
    /// The request whose stream carried the last message `recv` returned (none: the GET
    /// stream).
    last_via: Option<u64>,
    session: SessionHeaders,
    /// The last POSTed notification or response that was accepted with something other
    /// than a bare 202 (for the conformance checks; taken by the session).
    unusual_ack: Option<PostAck>,
}

/// How the server accepted a POSTed notification or response, when it was not the bare
/// 202 the spec asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostAck {
    pub status: u16,
    pub body: Vec<u8>,
}

impl HttpTransport {
    /// Open the first connection.
    pub async fn connect(endpoint: Arc<HttpEndpoint>) -> Result<HttpTransport, TransportError> {
        let pool = Pool::new(endpoint);
        pool.open_idle().await?;
        Ok(HttpTransport {
            pool,
            streams: SelectAll::new(),
            last_via: None,
            session: SessionHeaders::default(),
            unusual_ack: None,
        })
    }

    /// A request to the endpoint with this session's headers, encoded.
    fn request(&self, method: Method, body: &[u8], extra: &[(HeaderName, HeaderValue)]) -> Vec<u8> {
        build_request(
            &self.pool.endpoint,
            method,
            body,
            &self.session,
            None,
            extra,
        )
    }

    /// How the last POSTed notification or response was accepted, if not with a bare 202.
    pub fn take_unusual_ack(&mut self) -> Option<PostAck> {
        self.unusual_ack.take()
    }

    /// The `Authorization` value of every later request (GET stream reconnects too).
    pub fn set_bearer(&mut self, bearer: Option<HeaderValue>) {
        self.session.auth = bearer;
    }

    pub fn set_protocol_version(&mut self, version: Option<&str>) {
        self.session.version = version.and_then(|v| HeaderValue::from_str(v).ok());
    }

    /// The session id the server assigned, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session.id.as_ref().and_then(|v| v.to_str().ok())
    }

    /// The session id as the server sent it (it may not be valid text).
    pub fn session_id_bytes(&self) -> Option<&[u8]> {
        self.session.id.as_ref().map(HeaderValue::as_bytes)
    }

    /// Forget the session (id and protocol-version header) and drop every open stream,
    /// keeping the idle connections: the way to re-initialize after a 404.
    pub fn reset_session(&mut self) {
        self.session = SessionHeaders {
            auth: self.session.auth.take(),
            ..SessionHeaders::default()
        };
        self.streams = SelectAll::new();
    }

    /// The request whose response stream carried the last message received (`None`
    /// for the standalone GET stream).
    pub fn last_via(&self) -> Option<u64> {
        self.last_via
    }

    pub fn stats(&self) -> HttpStats {
        HttpStats {
            connections_opened: self.pool.connections_opened.load(Ordering::Relaxed),
            resumptions: self.pool.resumptions.load(Ordering::Relaxed),
            get_stream_reconnects: self.pool.get_stream_reconnects.load(Ordering::Relaxed),
        }
    }

    /// POST a request; its answer is read by `recv`.
    pub async fn send_request(
        &mut self,
        id: u64,
        body: Vec<u8>,
        headers: &[(HeaderName, HeaderValue)],
    ) -> Result<(), TransportError> {
        let lease = self.pool.lease().await?;
        let req = self.request(Method::POST, &body, headers);
        let response = lease.send(req);
        let flow = Flow::post(self.pool.clone(), id, self.session.clone(), response);
        self.streams.push(flow.into_stream());
        Ok(())
    }

    /// POST a notification or a response and wait for the server's 202.
    pub async fn post_and_wait(&mut self, body: Vec<u8>) -> Result<(), TransportError> {
        let lease = self.pool.lease().await?;
        let req = self.request(Method::POST, &body, &[]);
        let resp = lease.send(req).await?;
        let status = resp.status;
        let challenge = super::auth::challenge(status, &resp.headers);
        let body = resp
            .body
            .read_all(self.pool.endpoint.connection.max_message_bytes)
            .await;
        let body = too_large_or_default(body)?;
        match status {
            StatusCode::ACCEPTED | StatusCode::OK | StatusCode::NO_CONTENT => {
                if status != StatusCode::ACCEPTED || !body.is_empty() {
                    self.unusual_ack = Some(PostAck {
                        status: status.as_u16(),
                        body,
                    });
                }
                Ok(())
            }
            s => Err(status_error(
                s,
                self.session.id.is_some(),
                challenge.as_deref(),
                &body,
            )),
        }
    }

    /// Open the standalone GET stream on a connection of its own. Its messages (server
    /// requests and notifications) arrive through `recv`; if it ends or breaks it is
    /// reopened with `Last-Event-ID`, up to three times in a row. A server that sits on
    /// the response head (or drips a refusal's body) is given the request timeout.
    pub async fn open_get_stream(&mut self) -> Result<GetStream, TransportError> {
        let limit = self.pool.endpoint.connection.timeout;
        within(limit, "the GET stream", self.get_stream()).await
    }

    async fn get_stream(&mut self) -> Result<GetStream, TransportError> {
        let lease = self.pool.lease().await?;
        let req = self.request(Method::GET, &[], &[]);
        let resp = lease.send(req).await?;
        let status = resp.status;
        if status == StatusCode::OK && flow::is_event_stream(&resp.headers) {
            let flow = Flow::listen(self.pool.clone(), self.session.clone(), resp.body);
            self.streams.push(flow.into_stream());
            return Ok(GetStream::Open);
        }
        let content_type = resp.headers.get(CONTENT_TYPE).cloned();
        let challenge = super::auth::challenge(status, &resp.headers);
        let body = resp
            .body
            .read_all(self.pool.endpoint.connection.max_message_bytes)
            .await;
        let body = too_large_or_default(body)?;
        match status {
            StatusCode::METHOD_NOT_ALLOWED => Ok(GetStream::NotOffered),
            StatusCode::OK => Err(TransportError::new(
                FailureKind::ProtocolViolation,
                format!("the GET stream answered 200 with Content-Type {content_type:?}, not text/event-stream"),
            )),
            s => Err(status_error(
                s,
                self.session.id.is_some(),
                challenge.as_deref(),
                &body,
            )),
        }
    }

    pub async fn recv(&mut self) -> Received {
        loop {
            match self.streams.next().await {
                Some((Item::SessionId(id), _)) => self.session.id = Some(id),
                Some((Item::Received(r), via)) => {
                    self.last_via = via;
                    return r;
                }
                // Nothing outstanding: wait until the caller's timeout (a server message
                // cannot arrive without an open stream).
                None => std::future::pending::<()>().await,
            }
        }
    }

    /// DELETE the session (405 means the server does not allow it: fine), within the
    /// request timeout: a server that never answers or drips the body cannot hold the
    /// client.
    pub async fn close(mut self) -> Result<(), TransportError> {
        self.streams = SelectAll::new();
        if self.session.id.is_none() {
            self.pool.give_back();
            return Ok(());
        }
        let limit = self.pool.endpoint.connection.timeout;
        within(limit, "the DELETE", self.delete()).await
    }

    async fn delete(&mut self) -> Result<(), TransportError> {
        let lease = self.pool.lease().await?;
        let req = self.request(Method::DELETE, &[], &[]);
        let resp = lease.send(req).await?;
        let status = resp.status;
        let _ = resp
            .body
            .read_all(self.pool.endpoint.connection.max_message_bytes)
            .await;
        self.pool.give_back();
        if status.is_success() || status == StatusCode::METHOD_NOT_ALLOWED {
            Ok(())
        } else {
            Err(TransportError::new(
                FailureKind::HttpStatus(status.as_u16()),
                format!("DELETE answered {status}"),
            ))
        }
    }
}

#[cfg(test)]
mod tests;
