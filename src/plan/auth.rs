//! `auth = {...}` of a persona resolved: where its virtual clients get bearer tokens
//! (a tokens file, or the client-credentials grant) and whether a 401 walks the
//! discovery. Secrets stay in memory: nothing here is ever rendered in clear.

use super::error::PlanError;
use crate::profile::PersonaSection;
use crate::protocol::TransportKind;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How a persona authenticates.
#[derive(Debug, Clone)]
pub struct AuthPlan {
    pub source: TokenSource,
    /// Walk `WWW-Authenticate` → protected resource metadata → authorization server
    /// metadata on a session's first 401 (phase `auth`).
    pub discover: bool,
}

/// Where tokens come from.
#[derive(Debug, Clone)]
pub enum TokenSource {
    /// One token a line from a file, handed to virtual clients round-robin.
    Tokens {
        /// The file as the profile names it (`data/tokens.txt`), for `validate`.
        file: String,
        tokens: Arc<Vec<String>>,
    },
    /// The client-credentials grant; tokens cached and refreshed before they expire.
    ClientCredentials(Arc<ClientCredentials>),
}

/// The client-credentials grant's settings.
#[derive(Debug, Clone)]
pub struct ClientCredentials {
    /// `None`: the token endpoint of the authorization server metadata (found through
    /// the discovery).
    pub token_url: Option<url::Url>,
    pub client_id: String,
    pub client_secret: String,
    pub scope: Option<String>,
    /// `None`: the URL the persona connects to.
    pub resource: Option<String>,
    pub refresh_before: Duration,
}

/// `refresh_before` when the profile does not say.
const DEFAULT_REFRESH_BEFORE: Duration = Duration::from_secs(30);

impl AuthPlan {
    /// Resolve `auth = {...}` (`None` when the persona does not authenticate).
    /// `transport` is the persona's: stdio has no HTTP request to carry a token.
    pub fn from_section(
        p: &PersonaSection,
        transport: TransportKind,
        key: &str,
        origin: &str,
    ) -> Result<Option<AuthPlan>, PlanError> {
        let Some(a) = &p.auth else {
            return Ok(None);
        };
        let err = |k: &str, problem: String, fix: &str| {
            PlanError::new(origin, format!("{key}.auth{k}"), problem, fix)
        };
        if transport == TransportKind::Stdio {
            return Err(err(
                "",
                "is set on a stdio persona: stdio has no HTTP request to carry a token".into(),
                "remove `auth`, or give the persona an http, sse or ws target",
            ));
        }
        let source = match (&a.tokens, &a.client_credentials) {
            (Some(spec), None) => TokenSource::Tokens {
                file: spec.strip_prefix("file:").unwrap_or(spec).to_string(),
                tokens: Arc::new(tokens_file(spec, &format!("{key}.auth.tokens"), origin)?),
            },
            (None, Some(cc)) => {
                let k = |name: &str| format!("{key}.auth.client_credentials.{name}");
                let token_url = match &cc.token_url {
                    None => None,
                    Some(text) => Some(url::Url::parse(text).map_err(|e| {
                        PlanError::new(
                            origin,
                            k("token_url"),
                            format!("{text:?} is not a URL ({e})"),
                            "write the token endpoint, e.g. \"https://auth.example/token\"",
                        )
                    })?),
                };
                if cc.client_id.is_empty() {
                    return Err(PlanError::new(
                        origin,
                        k("client_id"),
                        "is empty",
                        "give the client id the authorization server registered",
                    ));
                }
                super::secrets::refuse_masked(
                    cc.client_secret == crate::redact::MASK,
                    &k("client_secret"),
                    origin,
                )?;
                let client_secret =
                    super::secrets::expand(&cc.client_secret, &k("client_secret"), origin)?;
                let refresh_before = match &cc.refresh_before {
                    None => DEFAULT_REFRESH_BEFORE,
                    Some(t) => super::quantity::parse_duration(t, &k("refresh_before"), origin)?,
                };
                TokenSource::ClientCredentials(Arc::new(ClientCredentials {
                    token_url,
                    client_id: cc.client_id.clone(),
                    client_secret,
                    scope: cc.scope.clone(),
                    resource: cc.resource.clone(),
                    refresh_before,
                }))
            }
            (Some(_), Some(_)) | (None, None) => {
                return Err(err(
                    "",
                    "needs exactly one of `tokens` and `client_credentials`".into(),
                    "write auth = { tokens = \"file:tokens.txt\" } or \
                     auth = { client_credentials = { client_id = \"…\", client_secret = \"${SECRET}\" } }",
                ))
            }
        };
        Ok(Some(AuthPlan {
            source,
            discover: a.discover.unwrap_or(true),
        }))
    }
}

/// The tokens of `file:PATH` (relative to the profile's folder): one a line, blank
/// lines and `#` lines skipped. Errors name the file and the line, never a token.
fn tokens_file(spec: &str, key: &str, origin: &str) -> Result<Vec<String>, PlanError> {
    let path = spec.strip_prefix("file:").ok_or_else(|| {
        PlanError::new(
            origin,
            key,
            "is not `file:PATH`",
            "keep tokens in a file and write tokens = \"file:tokens.txt\"",
        )
    })?;
    let path = super::data::base_folder(origin).join(Path::new(path));
    let text = std::fs::read_to_string(&path).map_err(|e| {
        PlanError::new(
            origin,
            key,
            format!("cannot read {}: {e}", path.display()),
            "name a file holding one bearer token a line",
        )
    })?;
    let mut tokens = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if http::HeaderValue::from_str(&format!("Bearer {line}")).is_err() || line.contains(' ') {
            return Err(PlanError::new(
                origin,
                key,
                format!("line {} of {} is not a bearer token", n + 1, path.display()),
                "write one token a line, without `Bearer ` and without spaces",
            ));
        }
        tokens.push(line.to_string());
    }
    if tokens.is_empty() {
        return Err(PlanError::new(
            origin,
            key,
            format!("{} holds no token", path.display()),
            "write one bearer token a line in it",
        ));
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests;
