//! How every session connects, whatever its persona: the rest of `[target]` (headers,
//! timeout, message limit, TLS, source addresses, keep-alive), resolved once into the
//! one [`Connection`] the plan carries and every transport endpoint embeds.

use super::error::PlanError;
use super::quantity::{parse_duration, parse_size};
use super::secrets::{expand, header_file, refuse_masked};
use crate::profile::TargetSection;
use crate::redact;
use std::net::IpAddr;
use std::time::Duration;

/// The default `timeout`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The default `--max-message-size`: the most bytes of one server message (a JSON body,
/// an SSE event, a stdio line, a WebSocket message) a session holds. Larger answers fail
/// as `message_too_large` and end the session instead of growing memory.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How every session connects, whatever its persona. One name per setting, from the plan
/// down to the transports.
#[derive(Debug, Clone)]
pub struct Connection {
    /// Extra HTTP headers (name, value), validated (`headers`, `header_files`,
    /// `--header`); on every HTTP request and WebSocket upgrade.
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,
    /// How long a connection's setup, or a request, may take (`timeout`, `--timeout`).
    pub timeout: Duration,
    /// The largest server message a session holds (`max_message_size`,
    /// `--max-message-size`).
    pub max_message_bytes: usize,
    /// Accept any TLS certificate (`insecure`, `--insecure`).
    pub insecure: bool,
    /// Local addresses to connect from, in turn (empty: the system's choice;
    /// `source_addresses`, `--source-addresses`).
    pub source_addresses: Vec<IpAddr>,
    /// Streamable HTTP connections outlive sessions and are reused (`keep_alive`,
    /// `--keep-alive`).
    pub keep_alive: bool,
}

impl Default for Connection {
    /// What an empty `[target]` resolves to.
    fn default() -> Connection {
        Connection {
            headers: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            insecure: false,
            source_addresses: Vec::new(),
            keep_alive: false,
        }
    }
}

impl Connection {
    pub fn from_section(t: &TargetSection, origin: &str) -> Result<Connection, PlanError> {
        let default = Connection::default();
        let timeout = match &t.timeout {
            Some(text) => parse_duration(text, "target.timeout", origin)?,
            None => default.timeout,
        };
        if timeout.is_zero() {
            return Err(PlanError::new(
                origin,
                "target.timeout",
                "must be more than zero",
                "use e.g. timeout = \"10s\"",
            ));
        }
        let max_message_bytes = match &t.max_message_size {
            Some(text) => parse_size(text, "target.max_message_size", origin)?,
            None => default.max_message_bytes,
        };
        Ok(Connection {
            headers: headers(t, origin)?,
            timeout,
            max_message_bytes,
            insecure: t.insecure.unwrap_or(default.insecure),
            source_addresses: source_addresses(&t.source_addresses, origin)?,
            keep_alive: t.keep_alive.unwrap_or(default.keep_alive),
        })
    }
}

/// `[target].headers` (`${VAR}`s expanded), then the lines of the `header_files`; a
/// later header replaces an earlier one of the same name.
fn headers(
    t: &TargetSection,
    origin: &str,
) -> Result<Vec<(http::HeaderName, http::HeaderValue)>, PlanError> {
    let mut out: Vec<(http::HeaderName, http::HeaderValue)> = Vec::new();
    for (name, value) in &t.headers {
        let key = format!("target.headers.{name}");
        refuse_masked(value == redact::MASK, &key, origin)?;
        let value = expand(value, &key, origin)?;
        out.push(header(name, &value, &key, origin)?);
    }
    for (i, path) in t.header_files.iter().enumerate() {
        let key = format!("target.header_files[{i}]");
        for (name, value) in header_file(path, &key, origin)? {
            let h = header(&name, &value, &key, origin)?;
            out.retain(|(n, _)| *n != h.0);
            out.push(h);
        }
    }
    Ok(out)
}

/// One header, checked; its value is marked sensitive so that no `Debug` shows it.
fn header(
    name: &str,
    value: &str,
    key: &str,
    origin: &str,
) -> Result<(http::HeaderName, http::HeaderValue), PlanError> {
    let n = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
        PlanError::new(
            origin,
            key,
            "not a valid HTTP header name",
            "use letters, digits and '-' only",
        )
    })?;
    let mut v = http::HeaderValue::from_str(value).map_err(|_| {
        PlanError::new(
            origin,
            key,
            "not a valid HTTP header value",
            "use visible ASCII characters only",
        )
    })?;
    v.set_sensitive(true);
    Ok((n, v))
}

/// Check the profile's source addresses.
fn source_addresses(list: &[String], origin: &str) -> Result<Vec<IpAddr>, PlanError> {
    list.iter()
        .enumerate()
        .map(|(i, a)| {
            a.parse().map_err(|_| {
                PlanError::new(
                    origin,
                    format!("target.source_addresses[{i}]"),
                    format!("{a:?} is not an IP address"),
                    "use addresses like \"127.0.0.2\" (all of 127.0.0.0/8 is loopback)",
                )
            })
        })
        .collect()
}
