//! Bearer tokens on the wire: the `Authorization` value a session's requests carry
//! (marked sensitive, so no debug output shows it) and the server's challenge read from
//! a 401 or 403, for the failure's example. A challenge never holds the client's token.

use ::http::header::WWW_AUTHENTICATE;
use ::http::{HeaderMap, HeaderValue, StatusCode};

/// `Bearer TOKEN`, sensitive; `None` when the token cannot be a header value.
pub fn bearer(token: &str) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
    v.set_sensitive(true);
    Some(v)
}

/// The server's `WWW-Authenticate` on a 401 or 403 (bounded), for the failure detail.
pub fn challenge(status: StatusCode, headers: &HeaderMap) -> Option<String> {
    if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
        return None;
    }
    let v = headers.get(WWW_AUTHENTICATE)?;
    Some(super::excerpt(v.as_bytes()))
}

/// `detail` with the challenge, when there is one.
pub fn with_challenge(detail: String, challenge: Option<&str>) -> String {
    match challenge {
        Some(c) => format!("{detail} (WWW-Authenticate: {c})"),
        None => detail,
    }
}

/// What one auth exchange (a probe, a metadata GET, a token POST) got back.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

/// The most of an auth answer's body we read: metadata and token answers are small.
const MAX_AUTH_BODY: usize = 64 * 1024;

/// One HTTP/1.1 request on a connection of its own, answered within `limit`: the
/// discovery's probes and metadata, and the token endpoint. Failures are typed like
/// the transports' (connect, timeout, closed).
pub async fn exchange(
    url: &url::Url,
    method: ::http::Method,
    headers: &[(::http::HeaderName, HeaderValue)],
    body: Vec<u8>,
    limit: std::time::Duration,
    insecure: bool,
) -> Result<Answer, super::TransportError> {
    use crate::metrics::FailureKind;
    use http_body_util::BodyExt;
    let target = super::legacy_sse::conn::Target::new(url)
        .map_err(|e| super::TransportError::new(FailureKind::ConnectFailed, e))?;
    let steps = async {
        let sources = super::tcp::SourceAddrs::default();
        let mut sender =
            super::legacy_sse::conn::open(&target, insecure, &sources, MAX_AUTH_BODY).await?;
        let req = target.request(method, body, headers);
        let resp = sender.send_request(req).await.map_err(|e| {
            super::TransportError::new(FailureKind::TransportClosed, format!("{e}"))
        })?;
        let (parts, body) = resp.into_parts();
        let bytes = http_body_util::Limited::new(body, MAX_AUTH_BODY)
            .collect()
            .await
            .map_err(|e| super::TransportError::new(FailureKind::TransportClosed, format!("{e}")))?
            .to_bytes();
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
            body: bytes.to_vec(),
        })
    };
    match tokio::time::timeout(limit, steps).await {
        Ok(r) => r,
        Err(_) => Err(super::TransportError::new(
            FailureKind::Timeout,
            format!(
                "{} did not answer within {limit:?}",
                crate::redact::url(url)
            ),
        )),
    }
}
