//! The connections of one session: opened on demand (TCP, then TLS for `https://`), and
//! lent to one exchange at a time, since an HTTP/1 connection carries one response at
//! a time and an SSE response can hold it for long. The connections are our own
//! ([`super::h1`]): between exchanges one is its socket and nothing more.

use super::endpoint::HttpEndpoint;
use super::h1::{self, Conn};
use crate::metrics::FailureKind;
use crate::transport::TransportError;
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// Idle connections shared by every session of an endpoint (`--keep-alive`): a new
/// session takes one instead of opening its own, and a closing session gives its
/// connections back — what an SDK client on a pooled HTTP agent (Node's fetch) does.
#[derive(Default)]
pub struct SharedIdle(Mutex<Vec<Conn>>);

/// Most idle connections an endpoint keeps for later sessions.
const SHARED_IDLE_MAX: usize = 4096;

impl std::fmt::Debug for SharedIdle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedIdle")
    }
}

impl SharedIdle {
    fn list(&self) -> std::sync::MutexGuard<'_, Vec<Conn>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A session's idle connections and its counters, shared with the flows that read its
/// responses (a flow may need a connection of its own to resume).
pub(super) struct Pool {
    pub endpoint: Arc<HttpEndpoint>,
    idle: Mutex<Vec<Conn>>,
    pub connections_opened: AtomicU32,
    pub resumptions: AtomicU32,
    pub get_stream_reconnects: AtomicU32,
}

impl Pool {
    pub fn new(endpoint: Arc<HttpEndpoint>) -> Arc<Pool> {
        Arc::new(Pool {
            endpoint,
            idle: Mutex::new(Vec::new()),
            connections_opened: AtomicU32::new(0),
            resumptions: AtomicU32::new(0),
            get_stream_reconnects: AtomicU32::new(0),
        })
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Conn>> {
        // The lock is never held across an await or a panic point that matters: a
        // poisoned list is still a list of connections.
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Open a connection and keep it idle (the session's `connect` phase); with
    /// keep-alive, take a ready one from the endpoint's shared pool if there is one.
    pub async fn open_idle(self: &Arc<Self>) -> Result<(), TransportError> {
        if let Some(shared) = &self.endpoint.shared_idle {
            if let Some(conn) = take_reusable(&mut shared.list()) {
                self.idle().push(conn);
                return Ok(());
            }
        }
        let conn = self.open().await?;
        self.idle().push(conn);
        Ok(())
    }

    /// The session is over: with keep-alive its idle connections go back to the
    /// endpoint's shared pool (bounded); without, they are dropped and closed.
    pub fn give_back(&self) {
        if let Some(shared) = &self.endpoint.shared_idle {
            let mut mine = self.idle();
            let mut list = shared.list();
            let room = SHARED_IDLE_MAX.saturating_sub(list.len());
            list.extend(
                mine.drain(..)
                    .filter_map(|mut c| c.is_reusable().then_some(c))
                    .take(room),
            );
        }
    }

    /// An idle connection that is ready for a request, else a new one.
    pub async fn lease(self: &Arc<Self>) -> Result<Lease, TransportError> {
        let reused = take_reusable(&mut self.idle());
        let conn = match reused {
            Some(conn) => conn,
            None => self.open().await?,
        };
        Ok(Lease {
            conn: Some(conn),
            pool: self.clone(),
        })
    }

    /// TCP connect, then the TLS handshake for https: all of it is connection setup and
    /// shares one timeout.
    async fn open(&self) -> Result<Conn, TransportError> {
        let ep = &self.endpoint;
        let setup = async {
            let tcp = crate::transport::tcp::connect(&ep.addr, &ep.sources)
                .await
                .map_err(|e| {
                    TransportError::new(
                        FailureKind::ConnectFailed,
                        format!("connect to {}: {e}", ep.addr),
                    )
                })?;
            match &ep.tls {
                None => Ok(Conn::plain(tcp)),
                Some(tls) => {
                    let connector = tokio_rustls::TlsConnector::from(tls.config.clone());
                    // Boxed: the TLS handshake's state is large, and inline every
                    // request's future would carry it (BENCHMARKS, issue 15).
                    let stream = Box::pin(connector.connect(tls.server_name.clone(), tcp))
                        .await
                        .map_err(|e| tls_error(ep, &e))?;
                    Ok(Conn::tls(stream))
                }
            }
        };
        let conn = match tokio::time::timeout(ep.connection.timeout, setup).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(TransportError::new(
                    FailureKind::Timeout,
                    format!("connect to {}: no answer", ep.addr),
                ))
            }
        };
        self.connections_opened.fetch_add(1, Ordering::Relaxed);
        Ok(conn)
    }

    fn put(&self, conn: Conn) {
        self.idle().push(conn);
    }
}

/// The newest idle connection the server has not closed; closed ones are dropped.
fn take_reusable(list: &mut Vec<Conn>) -> Option<Conn> {
    while let Some(mut conn) = list.pop() {
        if conn.is_reusable() {
            return Some(conn);
        }
    }
    None
}

/// Say plainly when the certificate was the problem: that is what `--insecure` is for.
fn tls_error(ep: &HttpEndpoint, e: &std::io::Error) -> TransportError {
    let rustls_error = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    let detail = match rustls_error {
        Some(rustls::Error::InvalidCertificate(reason)) => format!(
            "TLS handshake with {}: the server's certificate was rejected ({reason:?}); \
             pass --insecure to accept self-signed or otherwise unverifiable certificates",
            ep.addr
        ),
        _ => format!("TLS handshake with {}: {e}", ep.addr),
    };
    TransportError::new(FailureKind::ConnectFailed, detail)
}

/// A connection lent to one exchange; sending consumes it, and the response's body
/// gives the connection back once it is read to its end.
pub(super) struct Lease {
    conn: Option<Conn>,
    pool: Arc<Pool>,
}

/// A response: its head, and its body still on the connection.
pub(super) struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Body,
}

impl Lease {
    /// Send a request (its encoded bytes, [`h1::encode_request`]); the returned future
    /// owns the connection.
    pub fn send(
        mut self,
        request: Vec<u8>,
    ) -> impl Future<Output = Result<Response, TransportError>> + Send + 'static {
        let conn = self.conn.take();
        let pool = self.pool.clone();
        async move {
            let Some(conn) = conn else {
                return Err(TransportError::new(
                    FailureKind::TransportClosed,
                    "the connection was already used",
                ));
            };
            let max_head =
                crate::transport::response_head_limit(pool.endpoint.connection.max_message_bytes);
            let (head, body) = conn.exchange(&request, max_head).await?;
            Ok(Response {
                status: head.status,
                headers: head.headers,
                body: Body { body, pool },
            })
        }
    }
}

/// A response body being read; [`Body::release`] gives its connection back to the
/// session once it is read to its end, and dropping it before closes the connection.
pub(super) struct Body {
    body: h1::Body,
    pool: Arc<Pool>,
}

impl Body {
    pub fn declared_len(&self) -> Option<u64> {
        self.body.declared_len()
    }

    /// The next piece of the body, `None` at its end.
    pub async fn frame(&mut self) -> Option<Result<Bytes, TransportError>> {
        self.body.frame().await
    }

    /// The body is read to its end: its connection can carry the next request.
    pub fn release(&mut self) {
        if let Some(conn) = self.body.take_reusable() {
            self.pool.put(conn);
        }
    }

    /// Read the whole body, holding at most `limit` bytes: a `Content-Length` over the
    /// limit fails before anything is read, a body that grows past it as soon as it
    /// does. The connection is given back when the body was read whole.
    pub async fn read_all(mut self, limit: usize) -> Result<Vec<u8>, TransportError> {
        let too_large = || {
            TransportError::new(
                FailureKind::MessageTooLarge,
                format!("a response body larger than the {limit}-byte limit (--max-message-size)"),
            )
        };
        if self
            .declared_len()
            .is_some_and(|n| n > u64::try_from(limit).unwrap_or(u64::MAX))
        {
            return Err(too_large());
        }
        let mut out = Vec::new();
        while let Some(frame) = self.frame().await {
            let data = frame?;
            if out.len() + data.len() > limit {
                return Err(too_large());
            }
            out.extend_from_slice(&data);
        }
        self.release();
        Ok(out)
    }
}
