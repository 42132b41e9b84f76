//! Persona resolution: era, versions, identity, capabilities, where it connects and how,
//! and how it answers the server — all checked here once and pre-built for the hot path.

use super::{parse_duration, PlanError, Scenario, Target};
use crate::metrics::PersonaId;
use crate::profile::{self, PersonaSection};
use crate::protocol::meta::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
use crate::protocol::version::{legacy_versions, Era, LATEST_LEGACY, LATEST_MODERN};
use crate::protocol::ProtocolVersion;
use crate::protocol::TransportKind;
use rand::distr::weighted::WeightedIndex;
use serde_json::{json, Value};
use std::time::Duration;

/// Which handshake a persona uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EraMode {
    /// `initialize` → `notifications/initialized` (≤ 2025-11-25).
    Legacy,
    /// `server/discover` and per-request `_meta` (2026-07-28).
    Modern,
    /// Probe with `server/discover`, fall back to the handshake.
    Auto,
}

impl EraMode {
    pub fn name(self) -> &'static str {
        match self {
            EraMode::Legacy => "legacy",
            EraMode::Modern => "modern",
            EraMode::Auto => "auto",
        }
    }

    pub fn from_name(s: &str) -> Option<EraMode> {
        match s {
            "legacy" => Some(EraMode::Legacy),
            "modern" => Some(EraMode::Modern),
            "auto" => Some(EraMode::Auto),
            _ => None,
        }
    }
}

/// Where a persona's sessions go and over what.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub transport: TransportKind,
    pub target: Target,
}

/// How a persona's sessions live.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Open, run the scenario once, close (handshake throughput).
    Churn,
    /// Stay open for the whole run, repeating the scenario; `pace` iterations per second
    /// per session (`None`: back to back, with the load's think time between).
    LongLived { pace: Option<f64> },
}

/// How the persona answers `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingAnswer {
    pub text: String,
    pub model: String,
    pub delay: Duration,
}

/// How the persona answers `elicitation/create`: weights of accept, decline, cancel.
#[derive(Debug, Clone)]
pub struct ElicitationAnswer {
    pub actions: WeightedIndex<u32>,
    pub delay: Duration,
    /// URL-mode elicitation was declared (`elicitation.url`).
    pub url_mode: bool,
}

/// Everything the persona can answer; `None` = not declared, answered with -32601.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    pub sampling: Option<SamplingAnswer>,
    pub elicitation: Option<ElicitationAnswer>,
    pub roots: Option<Value>,
}

/// A resolved persona: everything a session needs, pre-built.
#[derive(Debug, Clone)]
pub struct Persona {
    pub id: PersonaId,
    pub name: String,
    pub weight: u32,
    pub era: EraMode,
    /// What the persona was told to offer (reports show this).
    pub protocol_version: ProtocolVersion,
    /// The version modern requests carry in `_meta` (auto's probe too).
    pub modern_version: ProtocolVersion,
    /// The version `initialize` offers (= `protocol_version` for legacy personas).
    pub legacy_version: ProtocolVersion,
    pub accept_versions: Vec<String>,
    pub capabilities: Value,
    pub client_info: Value,
    /// `params` of `initialize`, built once.
    pub initialize_params: Value,
    pub route: Route,
    pub get_stream: bool,
    pub refetch_on_list_changed: bool,
    pub cache: bool,
    pub max_input_rounds: u32,
    pub reinitialize: bool,
    pub shape: Shape,
    pub answers: Answers,
    /// Indices into [`super::Plan::scenarios`] and their weights.
    pub scenarios: Vec<usize>,
    pub scenario_weights: WeightedIndex<u32>,
}

impl Persona {
    /// The `_meta` a modern request carries, for `version`.
    pub fn modern_meta(&self, version: &str) -> Value {
        json!({
            META_PROTOCOL_VERSION: version,
            META_CLIENT_CAPABILITIES: self.capabilities,
            META_CLIENT_INFO: self.client_info,
        })
    }

    pub fn accepts(&self, version: &str) -> bool {
        self.accept_versions.iter().any(|v| v == version)
    }

    pub fn declares(&self, capability: &str) -> bool {
        self.capabilities.get(capability).is_some()
    }
}

pub(super) fn resolve_persona(
    p: &PersonaSection,
    id: PersonaId,
    scenarios: &[Scenario],
    default_target: &Target,
    key: &str,
    origin: &str,
) -> Result<Persona, PlanError> {
    let err = |k: &str, problem: String, fix: &str| PlanError {
        origin: origin.to_string(),
        key: format!("{key}.{k}"),
        problem,
        fix: fix.to_string(),
    };
    let weight = p.weight.unwrap_or(1);
    let offered = p.protocol_version.as_deref();
    let era = match p.era.as_deref() {
        Some(e) => EraMode::from_name(e).ok_or_else(|| {
            err(
                "era",
                format!("{e:?} is not an era"),
                "use \"legacy\", \"modern\" or \"auto\"",
            )
        })?,
        None => match offered.map(|v| ProtocolVersion::new(v).era()) {
            Some(Era::Modern) => EraMode::Modern,
            _ => EraMode::Legacy,
        },
    };
    let default_version = match era {
        EraMode::Legacy => LATEST_LEGACY,
        EraMode::Modern | EraMode::Auto => LATEST_MODERN,
    };
    let protocol_version = ProtocolVersion::new(offered.unwrap_or(default_version));
    // An `auto` persona given a legacy version (as `--era auto --protocol-version
    // 2025-03-26` does) probes at the latest modern version and falls back to the one
    // it was given.
    let offered_is_legacy = protocol_version.is_known() && protocol_version.era() == Era::Legacy;
    let modern_version = match era {
        EraMode::Auto if offered_is_legacy => ProtocolVersion::new(LATEST_MODERN),
        EraMode::Legacy => ProtocolVersion::new(LATEST_MODERN),
        _ => protocol_version.clone(),
    };
    let legacy_version = match (era, &p.legacy_version) {
        (EraMode::Legacy, Some(_)) => {
            return Err(err(
                "legacy_version",
                "only applies to era = \"auto\"".into(),
                "remove it, or set era = \"auto\"",
            ))
        }
        (EraMode::Legacy, None) => protocol_version.clone(),
        (_, Some(v)) => ProtocolVersion::new(v.clone()),
        (EraMode::Auto, None) if offered_is_legacy => protocol_version.clone(),
        (_, None) => ProtocolVersion::new(LATEST_LEGACY),
    };
    let accept_versions = match &p.accept_versions {
        Some(v) if v.is_empty() => {
            return Err(err(
                "accept_versions",
                "is empty, so every answer would be rejected".into(),
                "list at least one version, or leave the key out to accept every known version",
            ))
        }
        Some(v) => v.clone(),
        None => {
            let mut v: Vec<String> = legacy_versions().map(String::from).collect();
            v.insert(0, LATEST_MODERN.to_string());
            v
        }
    };
    let capabilities = match &p.capabilities {
        None => json!({}),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => {
            return Err(err(
                "capabilities",
                "is not a table".into(),
                "write capabilities = { sampling = {}, roots = { listChanged = true } }",
            ))
        }
    };
    let info = p.client_info.clone().unwrap_or_default();
    let mut client_info = json!({
        "name": info.name.unwrap_or_else(|| "mcp-fleet".into()),
        "version": info.version.unwrap_or_else(|| env!("CARGO_PKG_VERSION").into()),
    });
    for (k, v) in [
        ("title", info.title),
        ("description", info.description),
        ("websiteUrl", info.website_url),
    ] {
        if let Some(v) = v {
            client_info[k] = Value::String(v);
        }
    }
    let initialize_params = json!({
        "protocolVersion": legacy_version.as_str(),
        "capabilities": capabilities,
        "clientInfo": client_info,
    });
    let route = resolve_route(p, default_target, key, origin)?;
    let answers = resolve_answers(p, &capabilities, key, origin)?;
    let list_changed = match p.list_changed.as_deref() {
        None | Some("refetch") => true,
        Some("ignore") => false,
        Some(other) => {
            return Err(err(
                "list_changed",
                format!("{other:?} is not a behaviour"),
                "use \"refetch\" or \"ignore\"",
            ))
        }
    };
    let pace = p
        .pace
        .as_deref()
        .map(|r| super::load::parse_rate(r, &format!("{key}.pace"), origin))
        .transpose()?;
    let shape = match p.shape.as_deref() {
        None | Some("churn") if pace.is_some() => {
            return Err(err(
                "pace",
                "only applies to shape = \"long-lived\"".into(),
                "add shape = \"long-lived\", or remove pace",
            ))
        }
        None | Some("churn") => Shape::Churn,
        Some("long-lived") => Shape::LongLived {
            pace: pace.filter(|r| *r > 0.0),
        },
        Some(other) => {
            return Err(err(
                "shape",
                format!("{other:?} is not a session shape"),
                "use \"churn\" or \"long-lived\"",
            ))
        }
    };
    let max_input_rounds = p.max_input_rounds.unwrap_or(8);
    if max_input_rounds == 0 {
        return Err(err(
            "max_input_rounds",
            "is 0, so no input_required request could complete".into(),
            "use 1 or more (default 8)",
        ));
    }
    let chosen: Vec<usize> = match &p.scenarios {
        None => (0..scenarios.len()).collect(),
        Some(names) => {
            let mut out = Vec::new();
            for n in names {
                let i = scenarios.iter().position(|s| &s.name == n).ok_or_else(|| {
                    let known: Vec<&str> = scenarios.iter().map(|s| s.name.as_str()).collect();
                    err(
                        "scenarios",
                        format!("no scenario is named {n:?}"),
                        &format!("use one of: {}", known.join(", ")),
                    )
                })?;
                out.push(i);
            }
            out
        }
    };
    let scenario_weights = WeightedIndex::new(chosen.iter().map(|&i| scenarios[i].weight))
        .map_err(|_| {
            err(
                "scenarios",
                "none of this persona's scenarios has a weight above 0".into(),
                "give one of them weight = 1 or more",
            )
        })?;
    Ok(Persona {
        id,
        name: p.name.clone(),
        weight,
        era,
        protocol_version,
        modern_version,
        legacy_version,
        accept_versions,
        capabilities,
        client_info,
        initialize_params,
        route,
        get_stream: p.get_stream.unwrap_or(false),
        refetch_on_list_changed: list_changed,
        cache: p.cache.unwrap_or(false),
        max_input_rounds,
        reinitialize: p.reinitialize.unwrap_or(true),
        shape,
        answers,
        scenarios: chosen,
        scenario_weights,
    })
}

fn resolve_route(
    p: &PersonaSection,
    default_target: &Target,
    key: &str,
    origin: &str,
) -> Result<Route, PlanError> {
    let err = |k: &str, problem: String, fix: &str| PlanError {
        origin: origin.to_string(),
        key: format!("{key}.{k}"),
        problem,
        fix: fix.to_string(),
    };
    let target = match (&p.url, &p.command) {
        (Some(_), Some(_)) => {
            return Err(err(
                "url",
                "both `url` and `command` are set".into(),
                "keep one: `url` for HTTP/WebSocket, `command` for stdio",
            ))
        }
        // A path (`url = "/ws"`) is resolved against the run's target, so one `--target`
        // serves personas of every transport; the built-in server knows its own paths.
        (Some(path), None) if path.starts_with('/') => match default_target {
            Target::Url(base) => Target::Url(base.join(path).map_err(|e| {
                err(
                    "url",
                    format!("{path:?} does not resolve against {base}: {e}"),
                    "write a path like \"/ws\"",
                )
            })?),
            other => other.clone(),
        },
        (Some(url), None) => super::parse_url(url, &format!("{key}.url"), origin)?,
        (None, Some(cmd)) => super::parse_command(cmd, &format!("{key}.command"), origin)?,
        (None, None) => default_target.clone(),
    };
    let transport = match p.transport.as_deref() {
        Some(name) => TransportKind::from_name(name).ok_or_else(|| {
            err(
                "transport",
                format!("{name:?} is not a transport"),
                "use \"stdio\", \"http\", \"sse\" or \"ws\"",
            )
        })?,
        None => match &target {
            Target::Url(u) if matches!(u.scheme(), "ws" | "wss") => TransportKind::WebSocket,
            Target::Url(_) | Target::BuiltIn => TransportKind::StreamableHttp,
            Target::Stdio { .. } => TransportKind::Stdio,
        },
    };
    // A relative persona URL keeps the target's scheme: switch http ↔ ws to match the
    // persona's transport.
    let target = match (target, transport) {
        (Target::Url(mut u), kind) if p.url.as_deref().is_some_and(|u| u.starts_with('/')) => {
            let scheme = match (kind, u.scheme()) {
                (TransportKind::WebSocket, "https" | "wss") => "wss",
                (TransportKind::WebSocket, _) => "ws",
                (_, "wss" | "https") => "https",
                _ => "http",
            };
            let _ = u.set_scheme(scheme);
            Target::Url(u)
        }
        (t, _) => t,
    };
    let fits = match (&target, transport) {
        (Target::BuiltIn, _) => true,
        (Target::Stdio { .. }, k) => k == TransportKind::Stdio,
        (Target::Url(u), TransportKind::WebSocket) => matches!(u.scheme(), "ws" | "wss"),
        (Target::Url(u), TransportKind::StreamableHttp | TransportKind::Sse) => {
            matches!(u.scheme(), "http" | "https")
        }
        (Target::Url(_), TransportKind::Stdio) => false,
    };
    if !fits {
        return Err(err(
            "transport",
            format!(
                "transport {:?} cannot reach {}",
                transport.name(),
                target.describe()
            ),
            "use ws:// URLs for \"ws\", http(s):// for \"http\"/\"sse\", a command for \"stdio\"",
        ));
    }
    Ok(Route { transport, target })
}

fn resolve_answers(
    p: &PersonaSection,
    capabilities: &Value,
    key: &str,
    origin: &str,
) -> Result<Answers, PlanError> {
    let undeclared = |what: &str| PlanError {
        origin: origin.to_string(),
        key: format!("{key}.{what}"),
        problem: format!("configures answers to {what}, but the persona does not declare it"),
        fix: format!("add `{what} = {{}}` to the persona's capabilities, or remove this key"),
    };
    let delay = |d: &Option<String>, what: &str| -> Result<Duration, PlanError> {
        d.as_deref()
            .map(|d| parse_duration(d, &format!("{key}.{what}.delay"), origin))
            .transpose()
            .map(Option::unwrap_or_default)
    };
    let declared = |c: &str| capabilities.get(c).is_some();
    if p.sampling.is_some() && !declared("sampling") {
        return Err(undeclared("sampling"));
    }
    if p.elicitation.is_some() && !declared("elicitation") {
        return Err(undeclared("elicitation"));
    }
    if p.roots.is_some() && !declared("roots") {
        return Err(undeclared("roots"));
    }
    let sampling = if declared("sampling") {
        let s = p.sampling.clone().unwrap_or_default();
        Some(SamplingAnswer {
            text: s
                .text
                .unwrap_or_else(|| "This is a canned answer from mcp-fleet.".into()),
            model: s.model.unwrap_or_else(|| "mcp-fleet-mock".into()),
            delay: delay(&s.delay, "sampling")?,
        })
    } else {
        None
    };
    let elicitation = if declared("elicitation") {
        let e = p.elicitation.clone().unwrap_or_default();
        let weights = [
            e.accept.unwrap_or(1),
            e.decline.unwrap_or(0),
            e.cancel.unwrap_or(0),
        ];
        let actions = WeightedIndex::new(weights).map_err(|_| PlanError {
            origin: origin.to_string(),
            key: format!("{key}.elicitation"),
            problem: "accept, decline and cancel are all 0".into(),
            fix: "give at least one action a weight above 0".into(),
        })?;
        Some(ElicitationAnswer {
            actions,
            delay: delay(&e.delay, "elicitation")?,
            url_mode: capabilities
                .get("elicitation")
                .and_then(|e| e.get("url"))
                .is_some(),
        })
    } else {
        None
    };
    let roots = if declared("roots") {
        let list: Vec<profile::RootSection> = p.roots.clone().unwrap_or_else(|| {
            vec![profile::RootSection {
                uri: "file:///workspace".into(),
                name: Some("workspace".into()),
            }]
        });
        let mut out = Vec::new();
        for (i, r) in list.iter().enumerate() {
            if !r.uri.starts_with("file://") {
                return Err(PlanError {
                    origin: origin.to_string(),
                    key: format!("{key}.roots[{i}].uri"),
                    problem: format!("{:?} is not a file:// URI", r.uri),
                    fix: "roots must be file:// URIs, e.g. \"file:///home/me/project\"".into(),
                });
            }
            let mut root = json!({"uri": r.uri});
            if let Some(n) = &r.name {
                root["name"] = json!(n);
            }
            out.push(root);
        }
        Some(Value::Array(out))
    } else {
        None
    };
    Ok(Answers {
        sampling,
        elicitation,
        roots,
    })
}
