//! The connections of a legacy SSE session: a URL taken apart for hyper ([`Target`]), and
//! TCP (+ TLS for `https://`) + HTTP/1.1 handshakes, whose failures are `connect` failures.

use crate::metrics::FailureKind;
use crate::transport::TransportError;
use bytes::Bytes;
use http::header::HOST;
use http::{HeaderName, HeaderValue, Method, Request};
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
use tokio::io::{AsyncRead, AsyncWrite};

/// One URL taken apart for hyper: where to connect, what to say in `Host`, what to ask for.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    https: bool,
    /// Host name for TLS SNI and certificate checks (no IPv6 brackets).
    host: String,
    /// host:port to connect to.
    pub(super) addr: String,
    authority: HeaderValue,
    /// Request target in origin form (path and query).
    pub(super) path: http::Uri,
}

impl Target {
    pub(crate) fn new(url: &url::Url) -> Result<Target, String> {
        let a = crate::transport::address::Address::parse(url, ("http", "https"))?;
        Ok(Target {
            https: a.secure,
            host: a.host,
            addr: a.connect,
            authority: a.authority,
            path: a.path,
        })
    }

    pub(crate) fn request(
        &self,
        method: Method,
        body: Vec<u8>,
        extra: &[(HeaderName, HeaderValue)],
    ) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(Bytes::from(body)));
        *req.method_mut() = method;
        *req.uri_mut() = self.path.clone();
        let h = req.headers_mut();
        h.insert(HOST, self.authority.clone());
        for (k, v) in extra {
            h.insert(k.clone(), v.clone());
        }
        req
    }
}

pub(super) fn connect_failed(detail: String) -> TransportError {
    TransportError::new(FailureKind::ConnectFailed, detail)
}

/// TCP (+ TLS) + HTTP/1.1 handshake; the connection's driver runs in its own task.
pub(crate) async fn open(
    target: &Target,
    insecure: bool,
    sources: &crate::transport::tcp::SourceAddrs,
    max_message_bytes: usize,
) -> Result<SendRequest<Full<Bytes>>, TransportError> {
    let tcp = crate::transport::tcp::connect(&target.addr, sources)
        .await
        .map_err(|e| connect_failed(format!("connect to {}: {e}", target.addr)))?;
    if !target.https {
        return handshake(tcp, max_message_bytes).await;
    }
    let name = rustls::pki_types::ServerName::try_from(target.host.clone())
        .map_err(|e| connect_failed(format!("{}: not a TLS server name: {e}", target.host)))?;
    let tls = tokio_rustls::TlsConnector::from(crate::transport::tls::client_config(insecure))
        .connect(name, tcp)
        .await
        .map_err(|e| connect_failed(format!("TLS with {}: {e}", target.addr)))?;
    handshake(tls, max_message_bytes).await
}

/// The driver task ends when the server closes or the sender and every response body
/// are dropped; the head size is bounded by the message limit, as for Streamable HTTP.
async fn handshake<IO>(
    io: IO,
    max_message_bytes: usize,
) -> Result<SendRequest<Full<Bytes>>, TransportError>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    http1_handshake(io, max_message_bytes)
        .await
        .map_err(|e| connect_failed(format!("HTTP handshake: {e}")))
}

/// The HTTP/1 client handshake. The read buffer, and so the largest response head a
/// server can make us hold, is bounded by the message limit (within hyper's bounds); a
/// larger head fails the request as `message_too_large`. (Streamable HTTP has its own
/// connection, `transport/http/h1.rs`; a legacy session holds one connection, so hyper's
/// per-connection cost matters less here.)
async fn http1_handshake<IO>(
    io: IO,
    max_message_bytes: usize,
) -> hyper::Result<SendRequest<Full<Bytes>>>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = hyper::client::conn::http1::Builder::new()
        .max_buf_size(crate::transport::response_head_limit(max_message_bytes))
        .handshake(hyper_util::rt::TokioIo::new(io))
        .await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// What a failed exchange on a connection is: a response head over the limit, or the
/// connection lost.
pub(super) fn send_failed(e: &hyper::Error) -> TransportError {
    if e.is_parse_too_large() {
        return TransportError::new(
            FailureKind::MessageTooLarge,
            format!("the response head is too large: {e}"),
        );
    }
    TransportError::new(FailureKind::TransportClosed, e.to_string())
}
