//! The server's own `/metrics`: one GET per interval (bounded by a timeout and a size
//! limit), the Prometheus / OpenMetrics text format parsed into one value per metric
//! name, summed over its label sets. A failed scrape is the caller's to count; it never
//! stops the run.

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;
use std::collections::BTreeMap;
use std::time::Duration;
use url::Url;

/// The largest exposition read; a bigger one is a failed scrape.
const MAX_BODY: usize = 8 << 20;

/// Metric name → the sum of its samples over label sets.
pub type Values = BTreeMap<String, f64>;

/// Parse an exposition. Comment and blank lines are skipped; a sample is
/// `name{labels} value [timestamp]`; label values may hold spaces, `}` and escaped
/// quotes; values may be `+Inf`, `-Inf` or `NaN`. Lines that do not parse are skipped.
pub fn parse(text: &str) -> Values {
    let mut out = Values::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((name, value)) = sample(line) {
            *out.entry(name.to_string()).or_insert(0.0) += value;
        }
    }
    out
}

fn sample(line: &str) -> Option<(&str, f64)> {
    let name_end = line
        .find(|c: char| c == '{' || c.is_whitespace())
        .unwrap_or(line.len());
    let name = &line[..name_end];
    let mut rest = &line[name_end..];
    if rest.starts_with('{') {
        rest = &rest[labels_end(rest)?..];
    }
    // The value, then an optional timestamp (ignored: we sample at our own ticks).
    let value = rest.split_whitespace().next()?;
    let value: f64 = value.parse().ok()?;
    (!name.is_empty()).then_some((name, value))
}

/// The byte just after the `}` closing a label set that starts `text`, skipping quoted
/// label values (with their `\"` and `\\` escapes).
fn labels_end(text: &str) -> Option<usize> {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match (quoted, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, false, '"') => quoted = !quoted,
            (false, _, '}') => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// Why a scrape gave nothing.
#[derive(Debug, thiserror::Error)]
pub enum ScrapeError {
    #[error("connecting: {0}")]
    Connect(std::io::Error),
    #[error("HTTP: {0}")]
    Http(String),
    #[error("status {0}")]
    Status(u16),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
}

/// GET `url` and parse it, within `timeout`.
pub async fn scrape(url: &Url, timeout: Duration) -> Result<Values, ScrapeError> {
    match tokio::time::timeout(timeout, fetch(url)).await {
        Ok(r) => r.map(|text| parse(&text)),
        Err(_) => Err(ScrapeError::Timeout(timeout)),
    }
}

async fn fetch(url: &Url) -> Result<String, ScrapeError> {
    let host = url.host_str().unwrap_or("localhost");
    let port = url.port_or_known_default().unwrap_or(80);
    let addr = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let stream = tokio::net::TcpStream::connect(&addr)
        .await
        .map_err(ScrapeError::Connect)?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| ScrapeError::Http(e.to_string()))?;
    let driver = tokio::spawn(conn);
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let mut request = http::Request::get(path)
        .header(http::header::HOST, &addr)
        .header(
            http::header::ACCEPT,
            "text/plain;version=0.0.4, application/openmetrics-text;q=0.5",
        );
    if let Some(auth) = basic_auth(url) {
        request = request.header(http::header::AUTHORIZATION, auth);
    }
    let request = request
        .body(Empty::<Bytes>::new())
        .map_err(|e| ScrapeError::Http(e.to_string()))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| ScrapeError::Http(e.to_string()))?;
    if !response.status().is_success() {
        driver.abort();
        return Err(ScrapeError::Status(response.status().as_u16()));
    }
    let body = Limited::new(response.into_body(), MAX_BODY)
        .collect()
        .await
        .map_err(|e| ScrapeError::Http(e.to_string()))?
        .to_bytes();
    driver.abort();
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The `Authorization: Basic …` value of a URL's user info, if it has any.
pub fn basic_auth(url: &Url) -> Option<String> {
    if url.username().is_empty() {
        return None;
    }
    let user = percent(url.username());
    let pass = url.password().map(percent).unwrap_or_default();
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
    Some(format!("Basic {token}"))
}

/// URL user info is percent-encoded; Basic auth wants it plain.
fn percent(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_looking_exposition_parses() {
        let text = r#"# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 4.2131456e+07
# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.34 1700000000000
process_open_fds 57

# A histogram, labels with quotes, braces and spaces inside.
http_request_duration_seconds_bucket{le="0.1",path="/mcp"} 10
http_request_duration_seconds_bucket{le="+Inf",path="/mcp"} 12
mcp_active_sessions{transport="http",note="a \"quoted\" } brace"} 3
mcp_active_sessions{transport="ws"} 4
weird_gauge NaN
upper +Inf
lower -Inf
not a sample line
# EOF
"#;
        let v = parse(text);
        assert_eq!(v["process_resident_memory_bytes"], 42_131_456.0);
        assert_eq!(v["process_cpu_seconds_total"], 12.34);
        assert_eq!(v["process_open_fds"], 57.0);
        assert_eq!(v["mcp_active_sessions"], 7.0);
        assert_eq!(v["http_request_duration_seconds_bucket"], 22.0);
        assert!(v["weird_gauge"].is_nan());
        assert_eq!(v["upper"], f64::INFINITY);
        assert_eq!(v["lower"], f64::NEG_INFINITY);
        assert!(!v.contains_key("not"));
    }
}
