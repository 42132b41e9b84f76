//! One POST to a receiver, over HTTP or HTTPS (the transports' TLS settings), with the
//! URL's user info as Basic auth; within a timeout. Errors are plain words that never
//! carry the URL's secrets.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use url::Url;

/// How much of a refusal's body is kept for the message.
const ERROR_BODY: usize = 4 << 10;

/// Why a push did not land.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PostError {
    /// Nothing answered, or the connection broke: worth another try.
    #[error("{0}")]
    Unreachable(String),
    /// The receiver answered with this status; 5xx and 429 are worth another try.
    #[error("status {status}: {text}")]
    Status { status: u16, text: String },
}

impl PostError {
    /// Whether sending the same body again may succeed.
    pub fn retry(&self) -> bool {
        match self {
            PostError::Unreachable(_) => true,
            PostError::Status { status, .. } => *status == 429 || *status >= 500,
        }
    }
}

/// POST `body` to `url` with `headers`, within `timeout`.
pub async fn post(
    url: &Url,
    headers: &[(&'static str, &'static str)],
    body: Vec<u8>,
    timeout: Duration,
) -> Result<(), PostError> {
    match tokio::time::timeout(timeout, send(url, headers, body)).await {
        Ok(r) => r,
        Err(_) => Err(PostError::Unreachable(format!(
            "no answer within {}",
            humantime::format_duration(timeout)
        ))),
    }
}

async fn send(
    url: &Url,
    headers: &[(&'static str, &'static str)],
    body: Vec<u8>,
) -> Result<(), PostError> {
    let host = url.host_str().unwrap_or("localhost").to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let addr = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let tcp = tokio::net::TcpStream::connect(&addr)
        .await
        .map_err(|e| PostError::Unreachable(format!("connect to {addr}: {e}")))?;
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let mut request = http::Request::post(path).header(http::header::HOST, &addr);
    for &(name, value) in headers {
        request = request.header(name, value);
    }
    if let Some(auth) = crate::watch::basic_auth(url) {
        request = request.header(http::header::AUTHORIZATION, auth);
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| PostError::Unreachable(format!("request: {e}")))?;
    if url.scheme() != "https" {
        return exchange(tcp, request).await;
    }
    let name = rustls::pki_types::ServerName::try_from(host.clone())
        .map_err(|e| PostError::Unreachable(format!("{host}: not a TLS server name: {e}")))?;
    let tls = tokio_rustls::TlsConnector::from(crate::transport::tls::client_config(false))
        .connect(name, tcp)
        .await
        .map_err(|e| PostError::Unreachable(format!("TLS with {addr}: {e}")))?;
    exchange(tls, request).await
}

async fn exchange<IO>(io: IO, request: http::Request<Full<Bytes>>) -> Result<(), PostError>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| PostError::Unreachable(format!("HTTP: {e}")))?;
    let driver = tokio::spawn(conn);
    let response = sender.send_request(request).await;
    let result = match response {
        Err(e) => Err(PostError::Unreachable(format!("HTTP: {e}"))),
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => {
            let status = r.status().as_u16();
            let text = match Limited::new(r.into_body(), ERROR_BODY).collect().await {
                Ok(b) => String::from_utf8_lossy(&b.to_bytes()).trim().to_string(),
                Err(_) => String::new(),
            };
            Err(PostError::Status { status, text })
        }
    };
    driver.abort();
    result
}
