//! The authorization discovery a client walks on a 401 (MCP authorization, RFC 9728,
//! RFC 8414): the challenge's `resource_metadata`, else the well-known protected
//! resource metadata URLs (with the MCP path, then the root), then the authorization
//! server's metadata (path insertion, then OpenID discovery). What is missing or
//! malformed on the way becomes a finding.

use crate::conformance::Check;
use crate::metrics::FailureKind;
use crate::session::Failure;
use crate::transport::auth::{exchange, Answer};
use http::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, Method, StatusCode};
use serde_json::Value;
use std::time::Duration;

/// What a walk found.
#[derive(Debug, Default)]
pub struct Walk {
    /// The authorization server's token endpoint.
    pub token_endpoint: Option<url::Url>,
    /// The protected resource's own name for itself (`resource`).
    pub resource: Option<String>,
    pub findings: Vec<(Check, String)>,
}

impl Walk {
    /// The walk stopped at its start: no protected resource metadata anywhere it looked
    /// (a server that does not use OAuth, unless it answered 401).
    pub fn no_resource_metadata(&self) -> bool {
        self.findings
            .iter()
            .any(|(c, _)| *c == Check::AuthResourceMetadataMissing)
    }
}

/// How to reach the server beside the session.
#[derive(Debug, Clone)]
pub struct Reach {
    pub limit: Duration,
    pub insecure: bool,
}

impl Reach {
    async fn get(&self, url: &url::Url) -> Result<Answer, Failure> {
        let accept = [(ACCEPT, HeaderValue::from_static("application/json"))];
        exchange(
            url,
            Method::GET,
            &accept,
            Vec::new(),
            self.limit,
            self.insecure,
        )
        .await
        .map_err(Failure::from)
    }
}

/// One unauthenticated-or-not request to the MCP endpoint, as a session would start:
/// a POST of `ping` for Streamable HTTP, a GET for the others (SSE stream, WebSocket
/// upgrade URL over HTTP). Its status and challenge are what the walk starts from.
pub async fn probe(
    mcp: &url::Url,
    post: bool,
    bearer: Option<&HeaderValue>,
    reach: &Reach,
) -> Result<Answer, Failure> {
    let url = over_http(mcp);
    let mut headers = vec![(
        ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    )];
    if let Some(b) = bearer {
        headers.push((http::header::AUTHORIZATION, b.clone()));
    }
    let (method, body) = if post {
        headers.push((CONTENT_TYPE, HeaderValue::from_static("application/json")));
        let ping = br#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#.to_vec();
        (Method::POST, ping)
    } else {
        (Method::GET, Vec::new())
    };
    exchange(&url, method, &headers, body, reach.limit, reach.insecure)
        .await
        .map_err(Failure::from)
}

/// Walk from a 401's headers (`None`: no 401 seen yet, start at the well-known URLs).
pub async fn walk(
    mcp: &url::Url,
    unauthorized: Option<&http::HeaderMap>,
    reach: &Reach,
) -> Result<Walk, (Failure, Walk)> {
    let mcp = &over_http(mcp);
    let mut walk = Walk::default();
    let mut from_header = None;
    if let Some(headers) = unauthorized {
        match headers.get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()) {
            Some(c) => from_header = param(c, "resource_metadata"),
            None => walk.findings.push((
                Check::Auth401WithoutChallenge,
                format!(
                    "401 from {} without WWW-Authenticate",
                    crate::redact::url(mcp)
                ),
            )),
        }
    }
    let mut candidates: Vec<url::Url> = from_header
        .and_then(|u| url::Url::parse(&u).ok())
        .into_iter()
        .collect();
    candidates.extend(well_known(mcp, "oauth-protected-resource", true));
    let Some((url, prm)) = first_json(&candidates, reach).await else {
        walk.findings.push((
            Check::AuthResourceMetadataMissing,
            format!("no protected resource metadata at {}", names(&candidates)),
        ));
        let f = Failure::new(
            FailureKind::HttpStatus(404),
            "no protected resource metadata",
        );
        return Err((f, walk));
    };
    walk.resource = prm
        .get("resource")
        .and_then(Value::as_str)
        .map(str::to_string);
    let servers: Vec<&str> = prm
        .get("authorization_servers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(issuer) = servers.first().and_then(|s| url::Url::parse(s).ok()) else {
        walk.findings.push((
            Check::AuthMetadataMalformed,
            format!(
                "the protected resource metadata at {} names no authorization_servers",
                crate::redact::url(&url)
            ),
        ));
        let f = Failure::new(FailureKind::ProtocolViolation, "no authorization_servers");
        return Err((f, walk));
    };
    if walk.resource.is_none() {
        walk.findings.push((
            Check::AuthMetadataMalformed,
            format!(
                "the protected resource metadata at {} has no resource",
                crate::redact::url(&url)
            ),
        ));
    }
    let mut as_urls = well_known(&issuer, "oauth-authorization-server", false);
    as_urls.extend(well_known(&issuer, "openid-configuration", false));
    let Some((as_url, meta)) = first_json(&as_urls, reach).await else {
        walk.findings.push((
            Check::AuthMetadataMalformed,
            format!("no authorization server metadata at {}", names(&as_urls)),
        ));
        let f = Failure::new(
            FailureKind::HttpStatus(404),
            "no authorization server metadata",
        );
        return Err((f, walk));
    };
    walk.token_endpoint = meta
        .get("token_endpoint")
        .and_then(Value::as_str)
        .and_then(|t| url::Url::parse(t).ok());
    if walk.token_endpoint.is_none() || meta.get("issuer").and_then(Value::as_str).is_none() {
        walk.findings.push((
            Check::AuthMetadataMalformed,
            format!(
                "the authorization server metadata at {} lacks issuer or token_endpoint",
                crate::redact::url(&as_url)
            ),
        ));
    }
    Ok(walk)
}

/// A WebSocket URL as the HTTP URL its upgrade is sent to.
fn over_http(url: &url::Url) -> url::Url {
    let mut url = url.clone();
    let scheme = match url.scheme() {
        "ws" => Some("http"),
        "wss" => Some("https"),
        _ => None,
    };
    if let Some(s) = scheme {
        let _ = url.set_scheme(s);
    }
    url
}

/// `/.well-known/NAME` with the URL's path inserted after it (RFC 8414 §3.1, RFC 9728
/// §3.1), then (when `root_too`, or the path is empty) at the root; for OpenID, also
/// appended to the issuer's path.
fn well_known(base: &url::Url, name: &str, root_too: bool) -> Vec<url::Url> {
    let mut out = Vec::new();
    let path = base.path().trim_end_matches('/');
    let mut push = |p: String| {
        let mut u = base.clone();
        u.set_path(&p);
        u.set_query(None);
        if !out.contains(&u) {
            out.push(u);
        }
    };
    if !path.is_empty() {
        push(format!("/.well-known/{name}{path}"));
    }
    if root_too || path.is_empty() {
        push(format!("/.well-known/{name}"));
    }
    if name == "openid-configuration" && !path.is_empty() {
        push(format!("{path}/.well-known/{name}"));
    }
    out
}

/// The first URL answering 200 with a JSON object.
async fn first_json(urls: &[url::Url], reach: &Reach) -> Option<(url::Url, Value)> {
    for u in urls {
        let Ok(answer) = reach.get(u).await else {
            continue;
        };
        if answer.status != StatusCode::OK {
            continue;
        }
        if let Ok(v @ Value::Object(_)) = serde_json::from_slice::<Value>(&answer.body) {
            return Some((u.clone(), v));
        }
    }
    None
}

fn names(urls: &[url::Url]) -> String {
    let v: Vec<String> = urls.iter().map(crate::redact::url).collect();
    v.join(", ")
}

/// An auth-param of a `Bearer` challenge (`name="value"` or `name=token`).
pub fn param(challenge: &str, name: &str) -> Option<String> {
    let mut rest = challenge;
    while let Some(i) = rest.find(name) {
        let before = rest[..i].chars().last();
        let after = &rest[i + name.len()..];
        let boundary = before.is_none_or(|c| c == ' ' || c == ',');
        if let (true, Some(value)) = (boundary, after.trim_start().strip_prefix('=')) {
            let value = value.trim_start();
            return Some(match value.strip_prefix('"') {
                Some(q) => q.split('"').next().unwrap_or_default().to_string(),
                None => value
                    .split([',', ' '])
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            });
        }
        rest = after;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_params_and_well_known_urls() {
        let c = r#"Bearer error="invalid_token", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp""#;
        assert_eq!(
            param(c, "resource_metadata").as_deref(),
            Some("http://h/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(param(c, "error").as_deref(), Some("invalid_token"));
        assert_eq!(
            param("Bearer realm=x, scope=mcp", "scope").as_deref(),
            Some("mcp")
        );
        assert_eq!(
            param("Bearer xresource_metadata=1", "resource_metadata"),
            None
        );
        let mcp = url::Url::parse("http://h:1/mcp").expect("url");
        let got: Vec<String> = well_known(&mcp, "oauth-protected-resource", true)
            .iter()
            .map(url::Url::to_string)
            .collect();
        assert_eq!(
            got,
            [
                "http://h:1/.well-known/oauth-protected-resource/mcp",
                "http://h:1/.well-known/oauth-protected-resource"
            ]
        );
        let issuer = url::Url::parse("https://as/tenant").expect("url");
        let mut got = well_known(&issuer, "oauth-authorization-server", false);
        got.extend(well_known(&issuer, "openid-configuration", false));
        let got: Vec<String> = got.iter().map(url::Url::to_string).collect();
        assert_eq!(
            got,
            [
                "https://as/.well-known/oauth-authorization-server/tenant",
                "https://as/.well-known/openid-configuration/tenant",
                "https://as/tenant/.well-known/openid-configuration"
            ]
        );
    }
}
