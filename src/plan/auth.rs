//! `auth = {...}` of a persona resolved: where its virtual clients get bearer tokens
//! (a tokens file, or the client-credentials grant) and whether a 401 walks the
//! discovery. Secrets stay in memory: nothing here is ever rendered in clear.

use super::PlanError;
use crate::profile::PersonaSection;
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
    Tokens(Arc<Vec<String>>),
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
    pub resource: Option<String>,
    pub refresh_before: Duration,
}

impl AuthPlan {
    /// Resolve `auth = {...}` (`None` when the persona does not authenticate).
    pub fn from_section(
        _p: &PersonaSection,
        _key: &str,
        _origin: &str,
    ) -> Result<Option<AuthPlan>, PlanError> {
        // Contract stub: the authentication part fills this in.
        Ok(None)
    }
}
