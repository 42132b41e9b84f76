//! The client-credentials grant (RFC 6749 §4.4): one POST to the token endpoint,
//! form-encoded, answered with `access_token` and `expires_in`. Failures carry the
//! endpoint's `error` code, never the secret or a token.

use crate::metrics::FailureKind;
use crate::plan::ClientCredentials;
use crate::session::Failure;
use crate::transport::auth::exchange;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderValue, Method};
use std::time::Duration;

/// A token the endpoint gave.
#[derive(Debug, Clone)]
pub struct Minted {
    pub token: String,
    pub expires_in: Option<Duration>,
}

/// Ask `token_url` for a token for `resource`.
pub async fn mint(
    cc: &ClientCredentials,
    token_url: &url::Url,
    resource: &str,
    limit: Duration,
    insecure: bool,
) -> Result<Minted, Failure> {
    let form = {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "client_credentials")
            .append_pair("client_id", &cc.client_id)
            .append_pair("client_secret", &cc.client_secret)
            .append_pair("resource", resource);
        if let Some(scope) = &cc.scope {
            form.append_pair("scope", scope);
        }
        form.finish()
    };
    let headers = [
        (
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        ),
        (ACCEPT, HeaderValue::from_static("application/json")),
    ];
    let where_ = crate::redact::url(token_url);
    let answer = exchange(
        token_url,
        Method::POST,
        &headers,
        form.into_bytes(),
        limit,
        insecure,
    )
    .await
    .map_err(|e| Failure::new(e.kind, format!("token endpoint {where_}: {}", e.detail)))?;
    let doc: Option<serde_json::Value> = serde_json::from_slice(&answer.body).ok();
    if !answer.status.is_success() {
        // Only the standard error fields: an endpoint could echo what it was sent.
        let error = doc
            .as_ref()
            .and_then(|d| d.get("error"))
            .and_then(|e| e.as_str())
            .map(|e| format!(": error {e:?}"))
            .unwrap_or_default();
        return Err(Failure::new(
            FailureKind::HttpStatus(answer.status.as_u16()),
            format!("token endpoint {where_} answered {}{error}", answer.status),
        ));
    }
    let token = doc
        .as_ref()
        .and_then(|d| d.get("access_token"))
        .and_then(|t| t.as_str())
        .filter(|t| !t.is_empty() && crate::transport::auth::bearer(t).is_some())
        .ok_or_else(|| {
            Failure::new(
                FailureKind::ProtocolViolation,
                format!("token endpoint {where_}: the answer has no usable access_token"),
            )
        })?;
    let expires_in = doc
        .as_ref()
        .and_then(|d| d.get("expires_in"))
        .and_then(serde_json::Value::as_u64)
        .map(Duration::from_secs);
    Ok(Minted {
        token: token.to_string(),
        expires_in,
    })
}
