//! The server the recorder forwards to: its URL taken apart once, and a fresh HTTP/1.1
//! connection to it (TLS for https/wss) for each client connection, so the server sees
//! the client's own connection habits (keep-alive, one connection per stream).

use crate::transport::address::Address;
use crate::transport::tcp::{connect, SourceAddrs};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

/// A request body to the upstream.
pub type UpBody = BoxBody<Bytes, std::io::Error>;

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

#[derive(Debug)]
pub struct Upstream {
    pub address: Address,
    /// `http://host:port` or `https://…` as the client would write it: an absolute
    /// endpoint a legacy SSE server names is rewritten from this to the proxy's origin.
    pub origin: String,
    /// The URL, secrets redacted: for the trace header and messages.
    pub shown: String,
    tls: Option<Arc<rustls::ClientConfig>>,
    sources: SourceAddrs,
}

impl Upstream {
    /// `url`: http(s):// or ws(s):// (the same server: WebSocket upgrades and HTTP
    /// requests go to its host, each on the path the client asked for).
    pub fn parse(url: &str, insecure: bool) -> Result<Upstream, String> {
        let parsed = url::Url::parse(url).map_err(|e| format!("--upstream {url:?}: {e}"))?;
        let schemes = match parsed.scheme() {
            "ws" | "wss" => ("ws", "wss"),
            _ => ("http", "https"),
        };
        let address = Address::parse(&parsed, schemes).map_err(|e| format!("--upstream: {e}"))?;
        let scheme = if address.secure { "https" } else { "http" };
        let origin = format!(
            "{scheme}://{}",
            address.authority.to_str().unwrap_or(&address.connect)
        );
        Ok(Upstream {
            tls: address
                .secure
                .then(|| crate::transport::tls::client_config(insecure)),
            origin,
            shown: crate::redact::url(url),
            address,
            sources: SourceAddrs::default(),
        })
    }

    /// A new HTTP/1.1 connection (upgrades allowed), driven by its own task.
    pub async fn connect(&self) -> std::io::Result<SendRequest<UpBody>> {
        let tcp = connect(&self.address.connect, &self.sources).await?;
        let io: Box<dyn Io> = match &self.tls {
            None => Box::new(tcp),
            Some(config) => {
                let name = self.address.server_name().map_err(std::io::Error::other)?;
                let tls = tokio_rustls::TlsConnector::from(config.clone());
                Box::new(tls.connect(name, tcp).await?)
            }
        };
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
            .await
            .map_err(std::io::Error::other)?;
        tokio::spawn(async move {
            // Its end (the server closed it, or the client's side dropped) is seen by the
            // requests on it.
            let _ = conn.with_upgrades().await;
        });
        Ok(sender)
    }
}
