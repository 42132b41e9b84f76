//! `auth = {…}` of a persona: bearer tokens from a file or the client-credentials
//! grant.

use serde::{Deserialize, Serialize};

/// `auth = { tokens = "file:tokens.txt" }` or
/// `auth = { client_credentials = { token_url = "…", client_id = "…", client_secret = "${SECRET}" } }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSection {
    /// `file:PATH` (relative to the profile's folder): one bearer token a line, handed
    /// to the virtual clients round-robin. The tokens are never written anywhere.
    pub tokens: Option<String>,
    /// The OAuth client-credentials grant against a token endpoint.
    pub client_credentials: Option<ClientCredentialsSection>,
    /// Walk the discovery on a session's first 401 (`WWW-Authenticate` → protected
    /// resource metadata → authorization server metadata), timed as `auth`. Default true.
    pub discover: Option<bool>,
}

/// The client-credentials grant (RFC 6749 §4.4, the MCP `oauth-client-credentials`
/// extension).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClientCredentialsSection {
    /// The token endpoint; default: the one the authorization server metadata names.
    pub token_url: Option<String>,
    pub client_id: String,
    /// A secret: write `"${ENV_NAME}"`; a literal is redacted in the copied profile.
    pub client_secret: String,
    pub scope: Option<String>,
    /// RFC 8707 `resource`; default: the target's URL.
    pub resource: Option<String>,
    /// Get a new token this long before the cached one expires. Default `"30s"`.
    pub refresh_before: Option<String>,
}
