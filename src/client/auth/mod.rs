//! Bearer tokens of the fleet's sessions: a persona's tokens file (virtual client k gets
//! token k mod n) or its client-credentials grant (one cache a persona, shared by its
//! clients: one mint at a time, refreshed `refresh_before` ahead of expiry), and what a
//! session does on a 401 (the discovery walk, timed as `auth`, and dropping a refused
//! cached token). Authorization is optional in MCP: a server that advertises no protected
//! resource metadata and has not answered 401 gets no token (and no finding), as SDK
//! clients start the discovery only on a 401. Tokens live here and in the transports'
//! sensitive header values only.

mod discovery;
mod token;

use super::timer::Timer;
use crate::conformance::Check;
use crate::metrics::{Counter, Event, FailureKind, Phase};
use crate::plan::{AuthPlan, ClientCredentials, Persona, Plan, Route, TokenSource};
use crate::protocol::TransportKind;
use crate::session::Failure;
use crate::transport::auth::bearer;
use crate::transport::Endpoint;
use discovery::Reach;
use http::{HeaderValue, StatusCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// The audience of the wrong-audience check: a resource no server is.
const OTHER_RESOURCE: &str = "https://wrong-audience.mcp-fleet.invalid/mcp";

/// Every persona's credentials for one run, indexed by persona id.
#[derive(Debug, Default)]
pub struct Credentials {
    personas: Vec<Option<PersonaAuth>>,
    /// Targets whose wrong-audience check is done (once per run and target).
    audience_checked: Mutex<Vec<Route>>,
    /// Personas without `auth` that walked the discovery already: once per run is
    /// enough to learn what the server asks for (and its findings), and a run whose
    /// every session is refused should not add four requests to each.
    anonymous_walked: Mutex<Vec<bool>>,
    limit: Duration,
}

#[derive(Debug)]
struct PersonaAuth {
    plan: AuthPlan,
    /// Held while a token is minted: the others wait for it (single flight).
    cache: tokio::sync::Mutex<Cache>,
    /// The discovery found no protected resource metadata and no session was refused
    /// yet: sessions go without a token until the server asks for one (a 401).
    open: AtomicBool,
    /// A session of the persona was refused with 401: from then on the server does want
    /// a token, and metadata it lacks is its fault.
    refused: AtomicBool,
}

#[derive(Debug, Default)]
struct Cache {
    /// The token and when to get the next one.
    token: Option<(String, Instant)>,
    /// From the discovery, when the plan names no token endpoint.
    token_url: Option<url::Url>,
    /// The protected resource's `resource`, from the discovery.
    resource: Option<String>,
    minted_before: bool,
}

impl Credentials {
    pub fn new(plan: &Plan) -> Arc<Credentials> {
        let personas: Vec<Option<PersonaAuth>> = plan
            .personas
            .iter()
            .map(|p| {
                p.auth.clone().map(|plan| PersonaAuth {
                    plan,
                    cache: tokio::sync::Mutex::default(),
                    open: AtomicBool::new(false),
                    refused: AtomicBool::new(false),
                })
            })
            .collect();
        Arc::new(Credentials {
            anonymous_walked: Mutex::new(vec![false; personas.len()]),
            personas,
            audience_checked: Mutex::default(),
            limit: plan.connection.timeout,
        })
    }

    fn of(&self, persona: &Persona) -> Option<&PersonaAuth> {
        self.personas
            .get(usize::from(persona.id))
            .and_then(Option::as_ref)
    }

    /// The `Authorization` value of a session of virtual client `client` when it needs
    /// no request (no authorization, or fixed tokens): `None` when [`Credentials::bearer`]
    /// must fetch one. Sessions ask this first, so that the common case costs no future.
    pub fn ready(&self, persona: &Persona, client: u64) -> Option<Option<HeaderValue>> {
        let Some(auth) = self.of(persona) else {
            return Some(None);
        };
        match &auth.plan.source {
            TokenSource::Tokens { tokens, .. } => {
                let n = tokens.len() as u64;
                let i = usize::try_from(client % n.max(1)).unwrap_or(0);
                Some(tokens.get(i).and_then(|t| bearer(t)))
            }
            TokenSource::ClientCredentials(_) if auth.open.load(Ordering::Relaxed) => Some(None),
            TokenSource::ClientCredentials(_) => None,
        }
    }

    /// The `Authorization` value of a session of virtual client `client`; `Err` when
    /// none could be had (a counted `token` or `auth` failure that ends the session).
    /// `Ok(None)` when the server asks for none: no protected resource metadata, and no
    /// 401 seen.
    pub async fn bearer(
        &self,
        persona: &Persona,
        client: u64,
        endpoint: &Endpoint,
        timer: &mut Timer<'_>,
    ) -> Result<Option<HeaderValue>, FailureKind> {
        if let Some(ready) = self.ready(persona, client) {
            return Ok(ready);
        }
        let Some(auth) = self.of(persona) else {
            return Ok(None);
        };
        let TokenSource::ClientCredentials(cc) = &auth.plan.source else {
            return Ok(None);
        };
        let Some((mcp, insecure)) = endpoint.auth_target() else {
            return Ok(None);
        };
        let reach = Reach {
            limit: self.limit,
            insecure,
        };
        let mut cache = auth.cache.lock().await;
        if auth.open.load(Ordering::Relaxed) {
            return Ok(None); // found out while this session waited for the lock
        }
        if let Some((token, _)) = cache.token.as_ref().filter(|(_, at)| Instant::now() < *at) {
            return Ok(bearer(token));
        }
        let token_url = match cc.token_url.clone().or_else(|| cache.token_url.clone()) {
            Some(u) => u,
            None => {
                let t = Instant::now();
                let walked = discovery::walk(&mcp, None, &reach).await;
                let unadvertised = walked
                    .as_ref()
                    .is_err_and(|(_, w)| w.no_resource_metadata());
                if unadvertised && !auth.refused.load(Ordering::Relaxed) {
                    // Not a protected resource (or one that has not said so yet): go
                    // without a token; a 401 later starts the discovery again.
                    auth.open.store(true, Ordering::Relaxed);
                    return Ok(None);
                }
                let walk = self.finish_walk(walked, timer, t)?;
                cache.resource = walk.resource;
                let Some(u) = walk.token_endpoint else {
                    return Err(FailureKind::ProtocolViolation);
                };
                cache.token_url = Some(u.clone());
                u
            }
        };
        let resource = cc
            .resource
            .clone()
            .or_else(|| cache.resource.clone())
            .unwrap_or_else(|| mcp.to_string());
        let t = Instant::now();
        let minted = token::mint(cc, &token_url, &resource, self.limit, insecure).await;
        let minted = timer.finish(Phase::Token, None, t, minted, || None)?;
        let rec = timer.recorder();
        rec.count(Counter::TokensMinted);
        if cache.minted_before {
            rec.count(Counter::TokensRefreshed);
        }
        cache.minted_before = true;
        let life = minted.expires_in.unwrap_or(Duration::from_secs(3600));
        let ahead = match life.saturating_sub(cc.refresh_before) {
            d if d.is_zero() => life / 2,
            d => d,
        };
        let value = bearer(&minted.token);
        cache.token = Some((minted.token, Instant::now() + ahead));
        drop(cache);
        if self.first_audience_check(&persona.route) {
            let post = persona.route.transport == TransportKind::StreamableHttp;
            self.audience_check(cc, &token_url, &mcp, post, &reach, timer)
                .await;
        }
        Ok(value)
    }

    /// A session got a 401 with `sent` (connecting or in its handshake): a refused
    /// cached token is dropped (the next session mints a new one) and, when the persona
    /// discovers, the walk runs once, timed as `auth`.
    pub async fn unauthorized(
        &self,
        persona: &Persona,
        endpoint: &Endpoint,
        sent: Option<&HeaderValue>,
        timer: &mut Timer<'_>,
    ) {
        let Some((mcp, insecure)) = endpoint.auth_target() else {
            return;
        };
        let discover = match self.of(persona) {
            Some(auth) => {
                auth.open.store(false, Ordering::Relaxed);
                auth.refused.store(true, Ordering::Relaxed);
                let mut cache = auth.cache.lock().await;
                let refused = cache
                    .token
                    .as_ref()
                    .is_some_and(|(t, _)| bearer(t).as_ref() == sent);
                if refused {
                    cache.token = None;
                }
                auth.plan.discover
            }
            // Without `auth` the persona still learns what the server asks for, once.
            None => self.first_anonymous_walk(persona),
        };
        if !discover {
            return;
        }
        let reach = Reach {
            limit: self.limit,
            insecure,
        };
        let post = persona.route.transport == TransportKind::StreamableHttp;
        let t = Instant::now();
        let walked = match discovery::probe(&mcp, post, sent, &reach).await {
            Ok(a) if a.status == StatusCode::UNAUTHORIZED => {
                discovery::walk(&mcp, Some(&a.headers), &reach).await
            }
            Ok(_) => Ok(discovery::Walk::default()),
            Err(f) => Err((f, discovery::Walk::default())),
        };
        let Ok(walk) = self.finish_walk(walked, timer, t) else {
            return;
        };
        // What the 401 led to (its challenge may name metadata the well-known URLs do
        // not hold) is where the persona's next session gets its token.
        if let (Some(auth), Some(url)) = (self.of(persona), walk.token_endpoint) {
            let mut cache = auth.cache.lock().await;
            cache.token_url.get_or_insert(url);
            if cache.resource.is_none() {
                cache.resource = walk.resource;
            }
        }
    }

    /// Whether this persona (without `auth`) has not walked the discovery yet; marks it.
    fn first_anonymous_walk(&self, persona: &Persona) -> bool {
        let Ok(mut walked) = self.anonymous_walked.lock() else {
            return false;
        };
        match walked.get_mut(usize::from(persona.id)) {
            Some(done) if !*done => {
                *done = true;
                true
            }
            _ => false,
        }
    }

    /// Report a walk's findings and its `auth` sample.
    fn finish_walk(
        &self,
        walked: Result<discovery::Walk, (Failure, discovery::Walk)>,
        timer: &mut Timer<'_>,
        t: Instant,
    ) -> Result<discovery::Walk, FailureKind> {
        let (result, mut walk) = match walked {
            Ok(w) => (Ok(()), w),
            Err((f, w)) => (Err(f), w),
        };
        let findings = std::mem::take(&mut walk.findings);
        for (check, example) in findings {
            timer.recorder().send(Event::Finding {
                check: check.id(),
                example: Some(example),
            });
        }
        timer.finish(Phase::Auth, None, t, result, || None)?;
        Ok(walk)
    }

    fn first_audience_check(&self, route: &Route) -> bool {
        let mut done = self
            .audience_checked
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if done.contains(route) {
            return false;
        }
        done.push(route.clone());
        true
    }

    /// Mint a token for another resource and send one request with it: a server that
    /// lets it through does not check the audience.
    async fn audience_check(
        &self,
        cc: &ClientCredentials,
        token_url: &url::Url,
        mcp: &url::Url,
        post: bool,
        reach: &Reach,
        timer: &mut Timer<'_>,
    ) {
        let rec = timer.recorder();
        let Ok(other) =
            token::mint(cc, token_url, OTHER_RESOURCE, self.limit, reach.insecure).await
        else {
            return; // an endpoint that refuses other audiences is right to
        };
        rec.count(Counter::TokensMinted);
        let Ok(answer) = discovery::probe(mcp, post, bearer(&other.token).as_ref(), reach).await
        else {
            return;
        };
        let refused = matches!(answer.status.as_u16(), 401 | 403);
        if !refused {
            rec.send(Event::Finding {
                check: Check::AuthWrongAudienceAccepted.id(),
                example: Some(format!(
                    "a token minted for resource {OTHER_RESOURCE} was answered {} by {}",
                    answer.status,
                    crate::redact::url(mcp)
                )),
            });
        }
    }
}
