//! `serve --auth`: the reference server as an OAuth 2.1 protected resource with its own
//! little authorization server, for tests. Every MCP endpoint (`/mcp`, `/sse`,
//! `/messages`, `/ws`) wants `Authorization: Bearer`; a 401 names the protected resource
//! metadata (RFC 9728), which names the authorization server (RFC 8414), whose `/token`
//! mints tokens with the client-credentials grant (RFC 6749 §4.4) bound to the resource
//! asked for (RFC 8707). The `auth-*` faults break each step on purpose.

use super::Fault;
use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, HOST, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use base64::Engine;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The protected resource metadata's well-known path (RFC 9728 §3).
pub const PRM_PATH: &str = "/.well-known/oauth-protected-resource";
/// The authorization server metadata's well-known path (RFC 8414 §3).
pub const AS_PATH: &str = "/.well-known/oauth-authorization-server";
/// The token endpoint.
pub const TOKEN_PATH: &str = "/token";
/// Minted tokens held at most (older ones are dropped first when full).
const MAX_MINTED: usize = 100_000;

/// `serve --auth` settings.
#[derive(Debug, Clone)]
pub struct AuthOptions {
    /// Tokens accepted as they are, for any resource (`--auth-tokens FILE`).
    pub static_tokens: Vec<String>,
    pub client_id: String,
    pub client_secret: String,
    /// `expires_in` of a minted token (`--token-ttl`).
    pub token_ttl: Duration,
}

impl Default for AuthOptions {
    fn default() -> Self {
        AuthOptions {
            static_tokens: Vec::new(),
            client_id: "mcp-fleet".into(),
            client_secret: "mcp-fleet-secret".into(),
            token_ttl: Duration::from_secs(3600),
        }
    }
}

/// A minted token: the resource it is for, and when it expires.
#[derive(Debug)]
struct Grant {
    resource: String,
    expires: Instant,
}

/// What the middleware and the endpoints share.
#[derive(Debug)]
pub struct AuthState {
    opts: AuthOptions,
    faults: Vec<Fault>,
    minted: Mutex<HashMap<String, Grant>>,
}

impl AuthState {
    pub fn new(opts: AuthOptions, faults: &[Fault]) -> Arc<AuthState> {
        Arc::new(AuthState {
            opts,
            faults: faults.to_vec(),
            minted: Mutex::new(HashMap::new()),
        })
    }

    fn has(&self, f: Fault) -> bool {
        self.faults.contains(&f)
    }

    /// Whether `token` opens this server, reached as `host`.
    fn accepts(&self, token: &str, host: &str) -> bool {
        if self.opts.static_tokens.iter().any(|t| t == token) {
            return true;
        }
        let map = self.minted.lock().unwrap_or_else(|e| e.into_inner());
        let Some(grant) = map.get(token) else {
            return false;
        };
        grant.expires > Instant::now()
            && (self.has(Fault::AuthAnyAudience) || is_own_resource(&grant.resource, host))
    }
}

/// The resources one server is: its origin and each MCP endpoint's URL.
fn is_own_resource(resource: &str, host: &str) -> bool {
    let r = resource.trim_end_matches('/');
    [
        "http://{h}",
        "http://{h}/mcp",
        "http://{h}/sse",
        "http://{h}/ws",
        "ws://{h}/ws",
    ]
    .iter()
    .any(|shape| shape.replace("{h}", host) == r)
}

fn host_of(headers: &HeaderMap) -> String {
    headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost")
        .to_string()
}

/// The bearer token of a request, if it has one.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// Middleware on the MCP endpoints: no valid bearer token, a 401 with the challenge.
pub async fn require_bearer(
    State(state): State<Arc<AuthState>>,
    request: Request,
    next: Next,
) -> Response {
    let host = host_of(request.headers());
    let token = bearer(request.headers());
    if token.is_some_and(|t| state.accepts(t, &host)) {
        return next.run(request).await;
    }
    let mut challenge = format!("Bearer resource_metadata=\"http://{host}{PRM_PATH}/mcp\"");
    if token.is_some() {
        challenge.push_str(", error=\"invalid_token\"");
    }
    let mut response = (
        StatusCode::UNAUTHORIZED,
        axum::Json(json!({
            "error": if token.is_some() { "invalid_token" } else { "invalid_request" },
            "error_description": if token.is_some() {
                "the bearer token is unknown, expired or for another resource"
            } else {
                "this MCP server requires Authorization: Bearer"
            },
        })),
    )
        .into_response();
    if !state.has(Fault::AuthNoChallenge) {
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            response.headers_mut().insert(WWW_AUTHENTICATE, v);
        }
    }
    response
}

/// The metadata and token routes (not behind the middleware).
pub fn routes(state: Arc<AuthState>) -> Router {
    Router::new()
        .route(PRM_PATH, get(resource_metadata))
        .route(&format!("{PRM_PATH}/mcp"), get(resource_metadata))
        .route(AS_PATH, get(server_metadata))
        .route(TOKEN_PATH, post(token))
        .with_state(state)
}

async fn resource_metadata(State(state): State<Arc<AuthState>>, headers: HeaderMap) -> Response {
    if state.has(Fault::AuthNoMetadata) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let host = host_of(&headers);
    let mut doc = json!({
        "resource": format!("http://{host}/mcp"),
        "authorization_servers": [format!("http://{host}")],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp"],
    });
    if state.has(Fault::AuthBadMetadata) {
        if let Some(o) = doc.as_object_mut() {
            o.remove("authorization_servers");
        }
    }
    axum::Json(doc).into_response()
}

async fn server_metadata(State(state): State<Arc<AuthState>>, headers: HeaderMap) -> Response {
    if state.has(Fault::AuthNoMetadata) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let host = host_of(&headers);
    axum::Json(json!({
        "issuer": format!("http://{host}"),
        "token_endpoint": format!("http://{host}{TOKEN_PATH}"),
        "grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        "response_types_supported": ["token"],
        "scopes_supported": ["mcp"],
    }))
    .into_response()
}

fn token_error(status: StatusCode, error: &str) -> Response {
    (status, axum::Json(json!({ "error": error }))).into_response()
}

/// `POST /token`, form-encoded: `grant_type=client_credentials`, the client's id and
/// secret (in the form or HTTP Basic), `scope`, `resource`.
async fn token(State(state): State<Arc<AuthState>>, headers: HeaderMap, body: String) -> Response {
    let form_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
    if !form_type {
        return token_error(StatusCode::BAD_REQUEST, "invalid_request");
    }
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
        return token_error(StatusCode::BAD_REQUEST, "unsupported_grant_type");
    }
    let (id, secret) = match basic(&headers) {
        Some(pair) => pair,
        None => (
            form.get("client_id").cloned().unwrap_or_default(),
            form.get("client_secret").cloned().unwrap_or_default(),
        ),
    };
    if id != state.opts.client_id || secret != state.opts.client_secret {
        return token_error(StatusCode::UNAUTHORIZED, "invalid_client");
    }
    let host = host_of(&headers);
    let resource = form
        .get("resource")
        .cloned()
        .unwrap_or_else(|| format!("http://{host}/mcp"));
    let access_token = format!("{:032x}", rand::random::<u128>());
    let ttl = state.opts.token_ttl;
    {
        let mut map = state.minted.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MAX_MINTED {
            let now = Instant::now();
            map.retain(|_, g| g.expires > now);
            if map.len() >= MAX_MINTED {
                map.clear();
            }
        }
        map.insert(
            access_token.clone(),
            Grant {
                resource,
                expires: Instant::now() + ttl,
            },
        );
    }
    let mut doc = json!({
        "access_token": access_token,
        "token_type": "Bearer",
        "expires_in": ttl.as_secs().max(1),
    });
    if let Some(scope) = form.get("scope") {
        doc["scope"] = json!(scope);
    }
    (
        [(axum::http::header::CACHE_CONTROL, "no-store")],
        axum::Json(doc),
    )
        .into_response()
}

/// `Authorization: Basic` client credentials (RFC 6749 §2.3.1: each part form-encoded).
fn basic(headers: &HeaderMap) -> Option<(String, String)> {
    let v = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, b64) = v.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()?;
    let text = String::from_utf8(raw).ok()?;
    let (id, secret) = text.split_once(':')?;
    let decode = |s: &str| {
        url::form_urlencoded::parse(format!("x={s}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    Some((decode(id), decode(secret)))
}

/// `--auth-tokens FILE`: one token a line, blank and `#` lines skipped.
pub fn read_tokens(path: &std::path::Path) -> anyhow::Result<Vec<String>> {
    use anyhow::Context;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the tokens file {}", path.display()))?;
    let tokens: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    anyhow::ensure!(
        !tokens.is_empty(),
        "the tokens file {} holds no token",
        path.display()
    );
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_resources_and_bearer_parsing() {
        assert!(is_own_resource("http://h:1/mcp", "h:1"));
        assert!(is_own_resource("http://h:1/", "h:1"));
        assert!(is_own_resource("ws://h:1/ws", "h:1"));
        assert!(!is_own_resource("http://other/mcp", "h:1"));
        let mut h = HeaderMap::new();
        h.insert(AUTHORIZATION, HeaderValue::from_static("bearer abc"));
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(AUTHORIZATION, HeaderValue::from_static("Basic YTpiJTIw"));
        assert_eq!(bearer(&h), None);
        assert_eq!(basic(&h), Some(("a".into(), "b ".into())));
    }
}
