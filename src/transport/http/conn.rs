//! The connections of one session: opened on demand (TCP, then TLS for `https://`), and
//! lent to one exchange at a time, since an HTTP/1 connection carries one response at
//! a time and an SSE response can hold it for long.

use super::HttpEndpoint;
use crate::metrics::FailureKind;
use crate::transport::TransportError;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite};

/// The sending half of one HTTP/1 connection.
pub type Sender = SendRequest<Full<Bytes>>;

/// Idle connections shared by every session of an endpoint (`--keep-alive`): a new
/// session takes one instead of opening its own, and a closing session gives its
/// connections back — what an SDK client on a pooled HTTP agent (Node's fetch) does.
#[derive(Default)]
pub struct SharedIdle(Mutex<Vec<Sender>>);

/// Most idle connections an endpoint keeps for later sessions.
const SHARED_IDLE_MAX: usize = 4096;

impl std::fmt::Debug for SharedIdle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedIdle")
    }
}

impl SharedIdle {
    fn list(&self) -> std::sync::MutexGuard<'_, Vec<Sender>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A session's idle connections and its counters, shared with the flows that read its
/// responses (a flow may need a connection of its own to resume).
pub(super) struct Pool {
    pub endpoint: Arc<HttpEndpoint>,
    idle: Mutex<Vec<Sender>>,
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

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Sender>> {
        // The lock is never held across an await or a panic point that matters: a
        // poisoned list is still a list of connections.
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Open a connection and keep it idle (the session's `connect` phase); with
    /// keep-alive, take a ready one from the endpoint's shared pool if there is one.
    pub async fn open_idle(self: &Arc<Self>) -> Result<(), TransportError> {
        if let Some(shared) = &self.endpoint.keep_alive {
            loop {
                let candidate = shared.list().pop();
                let Some(mut sender) = candidate else { break };
                if sender.ready().await.is_ok() {
                    self.idle().push(sender);
                    return Ok(());
                }
            }
        }
        let sender = self.open().await?;
        self.idle().push(sender);
        Ok(())
    }

    /// The session is over: with keep-alive its idle connections go back to the
    /// endpoint's shared pool (bounded); without, they are dropped and closed.
    pub fn give_back(&self) {
        if let Some(shared) = &self.endpoint.keep_alive {
            let mut mine = self.idle();
            let mut list = shared.list();
            let room = SHARED_IDLE_MAX.saturating_sub(list.len());
            list.extend(mine.drain(..).filter(|s| !s.is_closed()).take(room));
        }
    }

    /// An idle connection that is ready for a request, else a new one.
    pub async fn lease(self: &Arc<Self>) -> Result<Lease, TransportError> {
        loop {
            let candidate = self.idle().pop();
            let Some(mut sender) = candidate else { break };
            if sender.ready().await.is_ok() {
                return Ok(Lease {
                    sender: Some(sender),
                    pool: self.clone(),
                });
            }
        }
        let sender = self.open().await?;
        Ok(Lease {
            sender: Some(sender),
            pool: self.clone(),
        })
    }

    /// TCP connect, the TLS handshake for https, the HTTP/1 handshake: all of it is
    /// connection setup and shares one timeout.
    async fn open(&self) -> Result<Sender, TransportError> {
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
                None => handshake(tcp, ep.max_message).await,
                Some(tls) => {
                    let connector = tokio_rustls::TlsConnector::from(tls.config.clone());
                    let stream = connector
                        .connect(tls.server_name.clone(), tcp)
                        .await
                        .map_err(|e| tls_error(ep, &e))?;
                    handshake(stream, ep.max_message).await
                }
            }
        };
        let sender = match tokio::time::timeout(ep.connect_timeout, setup).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(TransportError::new(
                    FailureKind::Timeout,
                    format!("connect to {}: no answer", ep.addr),
                ))
            }
        };
        self.connections_opened.fetch_add(1, Ordering::Relaxed);
        Ok(sender)
    }
}

/// One connection and the hyper task that drives it; the task ends when the server
/// closes or the sender is dropped. Generic so that http and https share everything
/// above the byte stream.
async fn handshake<IO>(io: IO, max_message: usize) -> Result<Sender, TransportError>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    http1_handshake(io, max_message)
        .await
        .map_err(|e| TransportError::new(FailureKind::ConnectFailed, e.to_string()))
}

/// hyper refuses a read buffer smaller than this.
const MIN_READ_BUFFER: usize = 8192;
/// hyper's own default read buffer (8 KiB + 100 headers of 4 KiB): a response head
/// larger than this is refused even under a larger `--max-message-size`.
const MAX_HEAD_BYTES: usize = 8192 + 4096 * 100;

/// The HTTP/1 client handshake both HTTP transports use. The read buffer, and so the
/// largest response head a server can make us hold, is bounded by the message limit
/// (within hyper's bounds); a larger head fails the request as `message_too_large`.
pub async fn http1_handshake<IO>(io: IO, max_message: usize) -> hyper::Result<Sender>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = hyper::client::conn::http1::Builder::new()
        .max_buf_size(max_message.clamp(MIN_READ_BUFFER, MAX_HEAD_BYTES))
        .handshake(TokioIo::new(io))
        .await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// What a failed exchange on a connection is: a response head over the limit, or the
/// connection lost.
pub(crate) fn send_failed(e: &hyper::Error) -> TransportError {
    if e.is_parse_too_large() {
        return TransportError::new(
            FailureKind::MessageTooLarge,
            format!("the response head is too large: {e}"),
        );
    }
    TransportError::new(FailureKind::TransportClosed, e.to_string())
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

/// A connection lent to one exchange. [`Lease::release`] gives it back once the response
/// is fully read; dropped without that, the connection is closed (an unread body makes
/// an HTTP/1 connection unusable).
pub(super) struct Lease {
    sender: Option<Sender>,
    pool: Arc<Pool>,
}

impl Lease {
    /// Send a request; the returned future owns nothing of the lease.
    pub fn send(
        &mut self,
        req: http::Request<Full<Bytes>>,
    ) -> impl Future<Output = Result<http::Response<Incoming>, TransportError>> + Send + 'static
    {
        let sent = self.sender.as_mut().map(|s| s.send_request(req));
        async move {
            match sent {
                Some(fut) => fut.await.map_err(|e| send_failed(&e)),
                None => Err(TransportError::new(
                    FailureKind::TransportClosed,
                    "the connection was already given back",
                )),
            }
        }
    }

    /// The response is fully read: the connection can carry the next request.
    pub fn release(&mut self) {
        if let Some(sender) = self.sender.take() {
            if !sender.is_closed() {
                self.pool.idle().push(sender);
            }
        }
    }
}
