//! How a session starts, per era: the legacy handshake (`initialize`, check the answer,
//! `notifications/initialized`), the modern `server/discover`, and `auto`'s probe that
//! decides between them. Also the re-initialization after a server forgot the session.
//! A server that answers a version the persona does not accept ends the session as
//! `version_rejected`, as the spec tells a client to.

use super::modern::{discover_params, has_modern_error};
use super::{Failure, Session};
use crate::conformance::Check;
use crate::metrics::{Counter, FailureKind, Phase};
use crate::protocol::jsonrpc::codes;
use crate::protocol::meta::{META, META_SERVER_INFO};
use crate::protocol::TransportKind;
use crate::protocol::{methods, Era, ProtocolVersion, RawResult};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use tokio::time::Instant;

/// What the server said about itself (`initialize` or `server/discover`).
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub protocol_version: String,
    /// `Null` when the server did not say (a modern server without `server/discover`):
    /// then every capability is assumed, and requests find out. Shared between the
    /// sessions the server told the same (`shared.rs`).
    pub capabilities: std::sync::Arc<Value>,
    pub name: String,
    pub version: String,
}

/// An `InitializeResult` read in place: the fields a session keeps, borrowed from the
/// reply (nothing else of it is built).
#[derive(Deserialize)]
struct InitializeView<'a> {
    #[serde(rename = "protocolVersion", borrow)]
    protocol_version: Cow<'a, str>,
    #[serde(borrow)]
    capabilities: &'a RawValue,
    #[serde(rename = "serverInfo", borrow)]
    server_info: &'a RawValue,
}

#[derive(Deserialize)]
struct Implementation<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    version: Cow<'a, str>,
}

/// JSON text that is an object. (A struct also reads from an array, which the checks of
/// [`ServerInfo::from_result`] refuse.)
fn object(json: &str) -> Option<&str> {
    json.starts_with('{').then_some(json)
}

impl ServerInfo {
    /// [`ServerInfo::from_result`] of a result as it arrived, read in place: a well-formed result costs
    /// no tree, and the same server's same `capabilities` text is shared without being
    /// parsed again. Anything the fast path does not take (a missing or mistyped field,
    /// a duplicate key) goes through `from_result`, which says what is wrong.
    pub fn from_raw(raw: &RawResult) -> Result<ServerInfo, Failure> {
        let fast = || {
            let view: InitializeView = serde_json::from_str(object(raw.json())?).ok()?;
            object(view.capabilities.get())?;
            let info: Implementation =
                serde_json::from_str(object(view.server_info.get())?).ok()?;
            Some(ServerInfo {
                protocol_version: view.protocol_version.into_owned(),
                capabilities: super::shared::intern_json(view.capabilities)?,
                name: info.name.into_owned(),
                version: info.version.into_owned(),
            })
        };
        fast().map_or_else(|| ServerInfo::from_result(&raw.value()), Ok)
    }

    /// Whether the server declared capability `key` (present and an object).
    pub fn declares(&self, key: &str) -> bool {
        self.capabilities.is_null() || self.capabilities.get(key).is_some_and(Value::is_object)
    }

    /// Check the shape of an `InitializeResult`.
    pub fn from_result(result: &Value) -> Result<ServerInfo, Failure> {
        let bad = |what: &str| {
            Failure::new(
                FailureKind::InvalidResult,
                format!("initialize result: {what}"),
            )
        };
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`protocolVersion` is missing or not a string"))?;
        let capabilities = result
            .get("capabilities")
            .filter(|c| c.is_object())
            .ok_or_else(|| bad("`capabilities` is missing or not an object"))?;
        let info = result
            .get("serverInfo")
            .filter(|c| c.is_object())
            .ok_or_else(|| bad("`serverInfo` is missing or not an object"))?;
        let name = info
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`serverInfo.name` is missing or not a string"))?;
        let server_version = info
            .get("version")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`serverInfo.version` is missing or not a string"))?;
        Ok(ServerInfo {
            protocol_version: version.to_string(),
            capabilities: super::shared::intern(capabilities),
            name: name.to_string(),
            version: server_version.to_string(),
        })
    }

    /// Check the shape of a `DiscoverResult` (2026-07-28).
    pub fn from_discover(result: &Value, version: &str) -> Result<ServerInfo, Failure> {
        let bad = |what: &str| {
            Failure::new(
                FailureKind::InvalidResult,
                format!("server/discover result: {what}"),
            )
        };
        let capabilities = result
            .get("capabilities")
            .filter(|c| c.is_object())
            .ok_or_else(|| bad("`capabilities` is missing or not an object"))?;
        result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("`supportedVersions` is missing or not an array"))?;
        let info = result
            .get(META)
            .and_then(|m| m.get(META_SERVER_INFO))
            .or_else(|| result.get("serverInfo"));
        let field = |k: &str| {
            info.and_then(|i| i.get(k))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Ok(ServerInfo {
            protocol_version: version.to_string(),
            capabilities: super::shared::intern(capabilities),
            name: field("name"),
            version: field("version"),
        })
    }
}

impl Session<'_> {
    /// `initialize` and its checks. The caller times it as the `initialize` phase.
    pub async fn initialize(&mut self) -> Result<(), Failure> {
        self.era = Era::Legacy;
        self.transport.set_protocol_version(None);
        self.checks.handshaking = true;
        let persona = self.persona;
        self.version = crate::protocol::VersionId::of(persona.legacy_version.as_str());
        // The persona's params, encoded once for the run (the legacy era: no `_meta`).
        let sent = self
            .exchange_encoded(methods::INITIALIZE, &persona.initialize_json)
            .await;
        if let Err(f) = &sent {
            self.check_failure(methods::INITIALIZE, f);
        }
        let result = match sent {
            Ok(r) => r,
            Err(f) => {
                self.check_version_error(&f);
                return Err(f);
            }
        };
        let info = match ServerInfo::from_raw(&result) {
            Ok(info) => info,
            Err(f) => {
                let check = crate::conformance::handshake(&result.value());
                self.finding(check, || f.detail.clone());
                return Err(f);
            }
        };
        self.check_negotiated(&info.protocol_version);
        if let (Some(t), Some(id)) = (&self.transcript, self.transport.session_id_bytes()) {
            t.note(format!("Mcp-Session-Id: {}", String::from_utf8_lossy(id)));
        }
        if let Some(id) = self.transport.session_id_bytes() {
            if !crate::conformance::session_id_ok(id) {
                let shown = String::from_utf8_lossy(id).into_owned();
                self.finding(Check::HttpInvalidSessionId, || {
                    format!("Mcp-Session-Id {shown:?}")
                });
            }
        }
        if !persona.accepts(&info.protocol_version) {
            return Err(Failure::new(
                FailureKind::VersionRejected,
                format!(
                    "the server answered protocol version {:?}; persona {:?} accepts {}",
                    info.protocol_version,
                    persona.name,
                    persona.accept_versions.join(", ")
                ),
            ));
        }
        let negotiated = ProtocolVersion::new(info.protocol_version.clone());
        let header = negotiated
            .sends_version_header()
            .then_some(info.protocol_version.as_str());
        self.transport.set_protocol_version(header);
        self.version = crate::protocol::VersionId::of(&info.protocol_version);
        self.server = Some(info);
        self.check_capabilities();
        Ok(())
    }

    /// `notifications/initialized`; timed as the `initialized` phase.
    pub async fn initialized(&mut self) -> Result<(), Failure> {
        let sent = self.notify(methods::INITIALIZED, None).await;
        self.checks.handshaking = false;
        sent
    }

    /// The version the server answered: one that exists, and not an echo of a version
    /// that does not.
    fn check_negotiated(&mut self, answered: &str) {
        if ProtocolVersion::new(answered).is_known() {
            return;
        }
        let offered = self
            .persona
            .initialize_params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let check = if offered == answered {
            Check::VersionEchoedUnsupported
        } else {
            Check::VersionUnknown
        };
        self.finding(check, || {
            format!("offered {offered:?}, the server answered {answered:?}")
        });
    }

    /// `initialize` answered with an error about the version, where the spec wants a
    /// result with a counter-offer. A modern-only server naming its modern version is
    /// doing what the modern era asks, not this.
    fn check_version_error(&mut self, f: &Failure) {
        if !matches!(f.kind, FailureKind::RpcError(_)) {
            return;
        }
        let data = f.data.as_ref().map(Value::to_string).unwrap_or_default();
        let text = format!("{} {data}", f.detail).to_ascii_lowercase();
        if text.contains("version") && !text.contains(crate::protocol::version::LATEST_MODERN) {
            self.finding(Check::VersionErrorInsteadOfOffer, || {
                format!("{} {data}", f.detail)
            });
        }
    }

    /// Modern handshake: `server/discover`. Returns the era to continue in: `Legacy`
    /// when the server only shares legacy versions with the persona (-32022), so the
    /// caller falls back to `initialize`. With `probing` (the `auto` era) any answer
    /// that is not a modern one also means legacy, as the spec's detection rules say.
    pub async fn discover(&mut self, probing: bool) -> Result<Era, Failure> {
        self.enter_modern();
        let outcome = self
            .request_modern(methods::SERVER_DISCOVER, Some(discover_params()))
            .await;
        let verdict = match outcome {
            Ok(result) => match ServerInfo::from_discover(&result, &self.modern_version.clone()) {
                Ok(info) => match self.listed_version(&result) {
                    listed @ (Listed::Ours | Listed::Modern(_)) => {
                        let mut info = info;
                        // Another modern version in common: go on at it.
                        if let Listed::Modern(v) = listed {
                            self.set_modern_version(&v);
                            info.protocol_version = v;
                        }
                        self.version = crate::protocol::VersionId::of(&info.protocol_version);
                        self.server = Some(info);
                        self.check_capabilities();
                        return Ok(Era::Modern);
                    }
                    // Only legacy versions in common (the Go SDK's stateful sessions list
                    // just those): the handshake, as for a -32022 (§4.3).
                    Listed::Legacy => Era::Legacy,
                    Listed::None if probing => Era::Legacy,
                    Listed::None => {
                        return Err(Failure::new(
                            FailureKind::VersionRejected,
                            format!(
                                "server/discover lists {}; no version in common with the persona",
                                result.get("supportedVersions").unwrap_or(&Value::Null)
                            ),
                        ))
                    }
                },
                // A probe answered with something that is not a DiscoverResult: not a
                // modern server (Python v2 falls back the same way).
                Err(_) if probing => Era::Legacy,
                Err(f) => {
                    self.finding(Check::DiscoverInvalidResult, || f.detail.clone());
                    return Err(f);
                }
            },
            Err(f) if f.kind == FailureKind::RpcError(codes::UNSUPPORTED_PROTOCOL_VERSION) => {
                // No modern version in common (request_modern already retried at one if
                // there was). Fall back to the handshake when a legacy one is shared;
                // a probe falls back anyway, as the SDK clients do.
                if probing || self.mutual_version(f.data.as_ref(), false).is_some() {
                    Era::Legacy
                } else {
                    return Err(Failure::new(
                        FailureKind::VersionRejected,
                        format!("{}; no version in common with the persona", f.detail),
                    ));
                }
            }
            // `--era modern` against a server that does not speak it: -32601 for
            // server/discover (stdio, ws, legacy SSE) or an HTTP refusal without a modern
            // error (Streamable HTTP). The same failure over every transport; `auto`
            // falls back instead (below).
            Err(f) if !probing && not_modern(&f) => {
                return Err(Failure::new(
                    FailureKind::VersionRejected,
                    format!(
                        "server/discover: the server does not speak the 2026-07-28 era ({}); \
                         use --era auto or legacy",
                        f.detail
                    ),
                ));
            }
            Err(f) if probing && self.looks_legacy(&f) => {
                self.probe_unanswered = f.kind == FailureKind::Timeout;
                Era::Legacy
            }
            Err(f) => return Err(f),
        };
        self.era = Era::Legacy;
        self.version = crate::protocol::VersionId::of(self.persona.legacy_version.as_str());
        self.transport.set_protocol_version(None);
        Ok(verdict)
    }

    /// Which of a `DiscoverResult`'s `supportedVersions` the session can go on with: the
    /// version it asked at, another modern one the persona accepts, only a legacy one,
    /// or none. A server may answer `server/discover` and still not serve the modern era
    /// on that endpoint; its list says so.
    fn listed_version(&self, result: &Value) -> Listed {
        let listed = result.get("supportedVersions").and_then(Value::as_array);
        let ours = self.modern_version.as_str();
        if listed.is_some_and(|l| l.iter().any(|v| v.as_str() == Some(ours))) {
            return Listed::Ours;
        }
        let data = serde_json::json!({ "supported": listed });
        if let Some(v) = self.mutual_version(Some(&data), true) {
            Listed::Modern(v)
        } else if self.mutual_version(Some(&data), false).is_some() {
            Listed::Legacy
        } else {
            Listed::None
        }
    }

    /// The spec's era detection: a JSON-RPC error that is not a modern one, an HTTP 4xx
    /// without a modern error body, or (stdio) silence means a legacy server.
    fn looks_legacy(&self, f: &Failure) -> bool {
        match f.kind {
            FailureKind::RpcError(code) => {
                !(codes::UNSUPPORTED_PROTOCOL_VERSION..=codes::HEADER_MISMATCH).contains(&code)
            }
            FailureKind::HttpStatus(400 | 404 | 405) => !has_modern_error(&f.detail),
            FailureKind::Timeout => self.transport.kind() == TransportKind::Stdio,
            _ => false,
        }
    }

    pub(super) fn can_reinitialize(&self) -> bool {
        self.persona.reinitialize && self.transport.kind() == TransportKind::StreamableHttp
    }

    /// The server forgot the session (404): start a new one, as the spec tells a client
    /// to, timed as the `reinitialize` phase.
    pub(super) async fn reinitialize(&mut self) -> Result<(), Failure> {
        self.recorder.count(Counter::SessionExpired);
        let started = Instant::now();
        self.transport.reset_session();
        let result = match Box::pin(self.initialize()).await {
            Ok(()) => self.initialized().await,
            Err(e) => Err(e),
        };
        self.sample_own(Phase::Reinitialize, started, &result);
        result
    }
}

/// What a `DiscoverResult`'s `supportedVersions` leaves the session ([`Session::listed_version`]).
enum Listed {
    Ours,
    Modern(String),
    Legacy,
    None,
}

/// A refusal of `server/discover` that says the server is not a modern one: any
/// JSON-RPC error that is not one of the modern era's own (servers answer an unknown
/// method with -32601, -32600 or -32602 alike: Python's 1.x SDK says -32602), or an
/// HTTP 400/404/405 (a legacy server wants a session first) whose body carries no
/// modern-era error. The same rule on every transport.
fn not_modern(f: &Failure) -> bool {
    match f.kind {
        // An internal error says the server failed, not which era it speaks.
        FailureKind::RpcError(code) => {
            code != codes::INTERNAL_ERROR
                && !(codes::UNSUPPORTED_PROTOCOL_VERSION..=codes::HEADER_MISMATCH).contains(&code)
        }
        FailureKind::HttpStatus(400 | 404 | 405) => !has_modern_error(&f.detail),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
