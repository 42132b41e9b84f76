//! Where a run's Streamable HTTP sessions connect: the endpoint's address and TLS
//! target, and the plan's [`Connection`] they connect with; resolved once per run and
//! shared by every session.

use super::conn::SharedIdle;
use crate::metrics::FailureKind;
use crate::plan::Connection;
use crate::transport::tcp::SourceAddrs;
use crate::transport::TransportError;
use http::header::HeaderValue;
use rustls::pki_types::ServerName;
use std::sync::Arc;

/// Where and how to reach the endpoint; shared by every session of a run.
#[derive(Debug)]
pub struct HttpEndpoint {
    /// host:port to connect to.
    pub addr: String,
    /// Host header value.
    pub authority: HeaderValue,
    /// Request target in origin form (path and query).
    pub path: http::Uri,
    /// How sessions connect: headers, timeout, message limit (the largest body, SSE
    /// event or response head we hold), `--insecure`, source addresses, keep-alive.
    pub connection: Connection,
    /// `connection.source_addresses`, taken in turn.
    pub sources: SourceAddrs,
    /// With `connection.keep_alive`: the idle connections that outlive sessions and are
    /// reused by later ones.
    pub shared_idle: Option<Arc<SharedIdle>>,
    /// Set for `https://`.
    pub(super) tls: Option<TlsTarget>,
}

/// What every TLS handshake of an endpoint needs; the config is built once.
#[derive(Debug)]
pub(super) struct TlsTarget {
    pub(super) config: Arc<rustls::ClientConfig>,
    pub(super) server_name: ServerName<'static>,
}

impl HttpEndpoint {
    /// `connection.insecure` accepts any server certificate; only used for https.
    pub fn new(url: &url::Url, connection: Connection) -> Result<HttpEndpoint, TransportError> {
        let bad = |what: String| TransportError::new(FailureKind::ConnectFailed, what);
        let address =
            crate::transport::address::Address::parse(url, ("http", "https")).map_err(bad)?;
        let tls = if address.secure {
            Some(TlsTarget {
                config: crate::transport::tls::client_config(connection.insecure),
                server_name: address
                    .server_name()
                    .map_err(|e| bad(format!("{}: {e}", crate::redact::url(url))))?,
            })
        } else {
            None
        };
        Ok(HttpEndpoint {
            addr: address.connect,
            authority: address.authority,
            path: address.path,
            sources: SourceAddrs::new(connection.source_addresses.clone()),
            shared_idle: connection.keep_alive.then(Arc::default),
            connection,
            tls,
        })
    }

    /// The endpoint's URL (the resource a token is for) and `--insecure`.
    pub fn url(&self) -> Option<(url::Url, bool)> {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let text = format!("{scheme}://{}{}", self.authority.to_str().ok()?, self.path);
        Some((url::Url::parse(&text).ok()?, self.connection.insecure))
    }
}
