//! A server URL taken apart once for the network transports: whether it is TLS, the bare
//! host (for TLS names), the `host:port` to connect to, the `Host` header, and the
//! request target in origin form.

use crate::redact::url as shown;
use http::HeaderValue;
use rustls::pki_types::ServerName;

#[derive(Debug, Clone)]
pub struct Address {
    /// `https://` or `wss://`.
    pub secure: bool,
    /// Host name without IPv6 brackets.
    pub host: String,
    /// `host:port` to connect to (brackets for IPv6).
    pub connect: String,
    /// The `Host` header: host, and the port when the URL names one.
    pub authority: HeaderValue,
    /// Path and query.
    pub path: http::Uri,
}

impl Address {
    /// Take `url` apart; `schemes` is the (plain, secure) pair this transport speaks.
    pub fn parse(url: &url::Url, schemes: (&str, &str)) -> Result<Address, String> {
        let secure = match url.scheme() {
            s if s == schemes.0 => false,
            s if s == schemes.1 => true,
            other => {
                return Err(format!(
                    "{}: scheme {other}:// is not {}:// or {}://",
                    shown(url),
                    schemes.0,
                    schemes.1
                ))
            }
        };
        let host = url
            .host_str()
            .ok_or_else(|| format!("{}: the URL has no host", shown(url)))?;
        let port = url
            .port_or_known_default()
            .unwrap_or(if secure { 443 } else { 80 });
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let connect = if bare.contains(':') {
            format!("[{bare}]:{port}")
        } else {
            format!("{bare}:{port}")
        };
        let authority = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let mut path = url.path().to_string();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        Ok(Address {
            secure,
            host: bare.to_string(),
            connect,
            authority: HeaderValue::from_str(&authority)
                .map_err(|_| format!("{}: bad host", shown(url)))?,
            path: path
                .parse()
                .map_err(|_| format!("{}: bad path", shown(url)))?,
        })
    }

    /// The name a TLS handshake checks the certificate against (a DNS name or an IP).
    pub fn server_name(&self) -> Result<ServerName<'static>, String> {
        ServerName::try_from(self.host.clone())
            .map_err(|e| format!("{:?} cannot be a TLS server name: {e}", self.host))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_urls_apart() {
        let u = |s: &str| url::Url::parse(s).expect("url");
        let a =
            Address::parse(&u("http://127.0.0.1:3000/mcp?x=1"), ("http", "https")).expect("parses");
        assert!(!a.secure);
        assert_eq!(a.connect, "127.0.0.1:3000");
        assert_eq!(a.authority, "127.0.0.1:3000");
        assert_eq!(a.path, "/mcp?x=1");
        let a = Address::parse(&u("wss://[::1]/ws"), ("ws", "wss")).expect("parses");
        assert!(a.secure);
        assert_eq!((a.host.as_str(), a.connect.as_str()), ("::1", "[::1]:443"));
        assert_eq!(a.authority, "[::1]");
        assert!(a.server_name().is_ok());
        assert!(Address::parse(&u("ftp://x/"), ("http", "https")).is_err());
    }
}
