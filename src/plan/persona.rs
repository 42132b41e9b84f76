//! `[[persona]]` sections resolved: era, versions, identity, capabilities, route and
//! replies — all checked here once and pre-built for the hot path.

use super::auth::AuthPlan;
use super::client_faults::FaultMix;
use super::error::PlanError;
use super::habits::Habits;
use super::quantity::parse_rate;
use super::reply::ReplyPolicy;
use super::scenario::Scenario;
use super::session_kind::{EraMode, Shape};
use super::target::{Route, Target};
use super::tasks::TaskPolicy;
use crate::metrics::PersonaId;
use crate::profile::PersonaSection;
use crate::protocol::meta::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
use crate::protocol::version::{legacy_versions, Era, LATEST_LEGACY, LATEST_MODERN};
use crate::protocol::ProtocolVersion;
use rand::distr::weighted::WeightedIndex;
use serde_json::{json, Value};

mod choice;

pub use choice::{names, weights};

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
    /// The same, encoded once: every session sends these bytes.
    pub initialize_json: Box<str>,
    pub route: Route,
    pub get_stream: bool,
    pub refetch_on_list_changed: bool,
    pub cache: bool,
    pub max_input_rounds: u32,
    pub reinitialize: bool,
    pub shape: Shape,
    pub replies: ReplyPolicy,
    /// Indices into [`super::Plan::scenarios`] and their weights.
    pub scenarios: Vec<usize>,
    pub scenario_weights: WeightedIndex<u32>,
    /// Abandoned sessions, keep-alive pings, idle pauses.
    pub habits: Habits,
    /// Client-side faults a share of the sessions commit (`faults = [...]`).
    pub faults: FaultMix,
    /// Bearer tokens on HTTP transports (`auth = {...}`).
    pub auth: Option<AuthPlan>,
    /// Task-augmented tool calls (`tasks = {...}`).
    pub tasks: TaskPolicy,
    /// Modern era: the `subscriptions/listen` the session holds open (`listen = {...}`).
    pub listen: Option<super::listen::ListenPlan>,
    /// W3C trace context on every request (`trace = true`).
    pub trace: bool,
    /// Extension ids declared in `capabilities.extensions`, sorted.
    pub extensions: Vec<String>,
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

    /// The persona a profile without one plays: a generic modern-SDK-like client.
    pub fn default_section() -> PersonaSection {
        PersonaSection {
            name: choice::DEFAULT_NAME.into(),
            ..Default::default()
        }
    }

    /// Every `[[persona]]` (names unique, ids in order).
    pub fn all_from_sections(
        sections: &[PersonaSection],
        scenarios: &[Scenario],
        target: &Target,
        origin: &str,
    ) -> Result<Vec<Persona>, PlanError> {
        let mut personas: Vec<Persona> = Vec::new();
        for (i, p) in sections.iter().enumerate() {
            let key = format!("persona[{i}]");
            let used_twice = personas.iter().any(|o| o.name == p.name);
            if p.name.is_empty() || used_twice {
                let (problem, fix) = if used_twice {
                    let problem = format!("persona name {:?} is used twice", p.name);
                    (problem, "give each persona its own name")
                } else {
                    ("is empty".to_string(), "give the persona a name")
                };
                return Err(PlanError::new(origin, format!("{key}.name"), problem, fix));
            }
            let id = PersonaId::try_from(i).map_err(|_| {
                PlanError::new(
                    origin,
                    "persona",
                    "too many personas",
                    "use at most 65535 personas",
                )
            })?;
            personas.push(Persona::from_section(
                p, id, scenarios, target, &key, origin,
            )?);
        }
        Ok(personas)
    }

    pub fn from_section(
        p: &PersonaSection,
        id: PersonaId,
        scenarios: &[Scenario],
        default_target: &Target,
        key: &str,
        origin: &str,
    ) -> Result<Persona, PlanError> {
        let err = |k: &str, problem: String, fix: &str| {
            PlanError::new(origin, format!("{key}.{k}"), problem, fix)
        };
        let versions = Versions::from_section(p, key, origin)?;
        let accept_versions = accept_versions(p, key, origin)?;
        let mut capabilities = capabilities(p, key, origin)?;
        let extensions =
            super::extensions::declare(p.extensions.as_ref(), &mut capabilities, key, origin)?;
        let client_info = client_info(p);
        let tasks = TaskPolicy::from_section(p, key, origin)?;
        let mut initialize_params = json!({
            "protocolVersion": versions.legacy.as_str(),
            "capabilities": capabilities,
            "clientInfo": client_info,
        });
        tasks.declare(
            p,
            versions.legacy.as_str(),
            &mut initialize_params["capabilities"],
        );
        let route = Route::from_section(p, default_target, key, origin)?;
        let replies = ReplyPolicy::from_section(p, &capabilities, key, origin)?;
        let refetch_on_list_changed = match p.list_changed.as_deref() {
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
        let shape = shape(p, key, origin)?;
        let habits = Habits::from_section(p, versions.era, shape, key, origin)?;
        let max_input_rounds = p.max_input_rounds.unwrap_or(8);
        if max_input_rounds == 0 {
            return Err(err(
                "max_input_rounds",
                "is 0, so no input_required request could complete".into(),
                "use 1 or more (default 8)",
            ));
        }
        let (chosen, scenario_weights) = chosen_scenarios(p, scenarios, key, origin)?;
        let faults =
            FaultMix::from_section(p, versions.era, route.transport, &capabilities, key, origin)?;
        let auth = AuthPlan::from_section(p, route.transport, key, origin)?;
        let listen = super::listen::ListenPlan::from_section(p, versions.era, key, origin)?;
        Ok(Persona {
            id,
            name: p.name.clone(),
            weight: p.weight.unwrap_or(1),
            era: versions.era,
            protocol_version: versions.offered,
            modern_version: versions.modern,
            legacy_version: versions.legacy,
            accept_versions,
            capabilities,
            client_info,
            initialize_json: initialize_params.to_string().into_boxed_str(),
            initialize_params,
            route,
            get_stream: p.get_stream.unwrap_or(false),
            refetch_on_list_changed,
            cache: p.cache.unwrap_or(false),
            max_input_rounds,
            reinitialize: p.reinitialize.unwrap_or(true),
            shape,
            replies,
            scenarios: chosen,
            scenario_weights,
            habits,
            faults,
            auth,
            tasks,
            listen,
            trace: p.trace.unwrap_or(false),
            extensions,
        })
    }
}

/// The era and the three versions a persona works with.
struct Versions {
    era: EraMode,
    offered: ProtocolVersion,
    modern: ProtocolVersion,
    legacy: ProtocolVersion,
}

impl Versions {
    fn from_section(p: &PersonaSection, key: &str, origin: &str) -> Result<Versions, PlanError> {
        let offered = p.protocol_version.as_deref();
        let era = match p.era.as_deref() {
            Some(e) => EraMode::from_name(e).ok_or_else(|| {
                PlanError::new(
                    origin,
                    format!("{key}.era"),
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
        let offered_is_legacy =
            protocol_version.is_known() && protocol_version.era() == Era::Legacy;
        let modern = match era {
            EraMode::Auto if offered_is_legacy => ProtocolVersion::new(LATEST_MODERN),
            EraMode::Legacy => ProtocolVersion::new(LATEST_MODERN),
            _ => protocol_version.clone(),
        };
        let legacy = match (era, &p.legacy_version) {
            (EraMode::Legacy, Some(_)) => {
                return Err(PlanError::new(
                    origin,
                    format!("{key}.legacy_version"),
                    "only applies to era = \"auto\"",
                    "remove it, or set era = \"auto\"",
                ))
            }
            (EraMode::Legacy, None) => protocol_version.clone(),
            (_, Some(v)) => ProtocolVersion::new(v.clone()),
            (EraMode::Auto, None) if offered_is_legacy => protocol_version.clone(),
            (_, None) => ProtocolVersion::new(LATEST_LEGACY),
        };
        Ok(Versions {
            era,
            offered: protocol_version,
            modern,
            legacy,
        })
    }
}

fn accept_versions(p: &PersonaSection, key: &str, origin: &str) -> Result<Vec<String>, PlanError> {
    match &p.accept_versions {
        Some(v) if v.is_empty() => Err(PlanError::new(
            origin,
            format!("{key}.accept_versions"),
            "is empty, so every answer would be rejected",
            "list at least one version, or leave the key out to accept every known version",
        )),
        Some(v) => Ok(v.clone()),
        None => {
            let mut v: Vec<String> = legacy_versions().map(String::from).collect();
            v.insert(0, LATEST_MODERN.to_string());
            Ok(v)
        }
    }
}

fn capabilities(p: &PersonaSection, key: &str, origin: &str) -> Result<Value, PlanError> {
    match &p.capabilities {
        None => Ok(json!({})),
        Some(v @ Value::Object(_)) => Ok(v.clone()),
        Some(_) => Err(PlanError::new(
            origin,
            format!("{key}.capabilities"),
            "is not a table",
            "write capabilities = { sampling = {}, roots = { listChanged = true } }",
        )),
    }
}

fn client_info(p: &PersonaSection) -> Value {
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
    client_info
}

fn shape(p: &PersonaSection, key: &str, origin: &str) -> Result<Shape, PlanError> {
    let pace = p
        .pace
        .as_deref()
        .map(|r| parse_rate(r, &format!("{key}.pace"), origin))
        .transpose()?;
    match p.shape.as_deref() {
        None | Some("churn") if pace.is_some() => Err(PlanError::new(
            origin,
            format!("{key}.pace"),
            "only applies to shape = \"long-lived\"",
            "add shape = \"long-lived\", or remove pace",
        )),
        None | Some("churn") => Ok(Shape::Churn),
        Some("long-lived") => Ok(Shape::LongLived {
            pace: pace.filter(|r| *r > 0.0),
        }),
        Some(other) => Err(PlanError::new(
            origin,
            format!("{key}.shape"),
            format!("{other:?} is not a session shape"),
            "use \"churn\" or \"long-lived\"",
        )),
    }
}

/// The scenarios the persona runs (default: all) and their weights.
fn chosen_scenarios(
    p: &PersonaSection,
    scenarios: &[Scenario],
    key: &str,
    origin: &str,
) -> Result<(Vec<usize>, WeightedIndex<u32>), PlanError> {
    let chosen: Vec<usize> = match &p.scenarios {
        None => (0..scenarios.len()).collect(),
        Some(names) => names
            .iter()
            .map(|n| {
                scenarios.iter().position(|s| &s.name == n).ok_or_else(|| {
                    let known: Vec<&str> = scenarios.iter().map(|s| s.name.as_str()).collect();
                    PlanError::new(
                        origin,
                        format!("{key}.scenarios"),
                        format!("no scenario is named {n:?}"),
                        format!("use one of: {}", known.join(", ")),
                    )
                })
            })
            .collect::<Result<_, _>>()?,
    };
    let weights =
        WeightedIndex::new(chosen.iter().map(|&i| scenarios[i].weight)).map_err(|_| {
            PlanError::new(
                origin,
                format!("{key}.scenarios"),
                "none of this persona's scenarios has a weight above 0",
                "give one of them weight = 1 or more",
            )
        })?;
    Ok((chosen, weights))
}

/// `[load] iteration_rate` (`-q`) paces long-lived sessions: the plan must have one, and
/// none with a pace of its own (two schedules for one session would contradict).
pub fn check_iteration_rate(
    personas: &[Persona],
    rate: Option<f64>,
    origin: &str,
) -> Result<(), PlanError> {
    if rate.is_none() {
        return Ok(());
    }
    if let Some(p) = personas
        .iter()
        .find(|p| matches!(p.shape, Shape::LongLived { pace: Some(_) }))
    {
        return Err(PlanError::new(
            origin,
            "load.iteration_rate",
            format!("and persona {:?}'s pace both pace its sessions", p.name),
            "keep one: the fleet's iteration_rate (-q), or the persona's own pace",
        ));
    }
    if !personas
        .iter()
        .any(|p| matches!(p.shape, Shape::LongLived { .. }))
    {
        return Err(PlanError::new(
            origin,
            "load.iteration_rate",
            "paces long-lived sessions, and no persona has shape = \"long-lived\"",
            "add shape = \"long-lived\" to the personas that hold their session, or use --rate for arriving sessions",
        ));
    }
    Ok(())
}
