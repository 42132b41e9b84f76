//! `mcp-fleet inspect`: one session, any transport, era and persona, shown the way the
//! MCP Inspector shows it — the handshake, the server's capabilities, every tool,
//! resource and prompt, the timings and the findings. It runs the ordinary session
//! (`client::run_session`) with a transcript observer, then reads the transcript.

mod render;

use crate::cli::InspectArgs;
use crate::client::StopSignals;
use crate::client::{self, SessionContext};
use crate::conformance::Tracker;
use crate::metrics::{Collector, Phase, SessionOutcome};
use crate::plan::{Overrides, Plan, Scenario, Source, Step};
use crate::protocol::meta::{META, META_SERVER_INFO};
use crate::protocol::methods;
use crate::report::summary::{findings, FindingSummary};
use crate::session::{Direction, Entry, ResponseCache, Transcript};
use anyhow::Context;
use rand::SeedableRng;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// Everything `inspect` learnt, as `--json` prints it.
#[derive(Debug, Serialize)]
pub struct Inspection {
    pub target: String,
    pub transport: String,
    pub persona: String,
    /// `legacy` or `modern`: what the session spoke.
    pub era: String,
    /// What the handshake settled on (the `_meta` version in the modern era).
    pub protocol_version: Option<String>,
    pub offered_version: Option<String>,
    pub session_id: Option<String>,
    pub server_info: Value,
    pub capabilities: Value,
    pub instructions: Option<String>,
    pub tools: Vec<Value>,
    pub resources: Vec<Value>,
    pub resource_templates: Vec<Value>,
    pub prompts: Vec<Value>,
    /// One row per phase: how many, how long.
    pub timings: Vec<Timing>,
    /// `completed` or `failed`, with the failures seen.
    pub outcome: String,
    pub failures: Vec<String>,
    pub findings: Vec<FindingSummary>,
    /// Every message, sent and received (`--raw` prints it; `--json` always has it).
    pub transcript: Vec<Entry>,
}

#[derive(Debug, Serialize)]
pub struct Timing {
    pub phase: &'static str,
    pub count: u64,
    pub errors: u64,
    /// Mean service time of the successful samples, milliseconds.
    pub mean_ms: f64,
}

/// The list steps `inspect` always runs (undeclared ones are skipped, as in a run).
fn scenario() -> Scenario {
    let list = |phase, method| Step::List { phase, method };
    Scenario {
        name: "inspect".into(),
        weight: 1,
        steps: vec![
            list(Phase::ToolsList, methods::TOOLS_LIST),
            list(Phase::ResourcesList, methods::RESOURCES_LIST),
            list(
                Phase::ResourcesTemplatesList,
                methods::RESOURCES_TEMPLATES_LIST,
            ),
            list(Phase::PromptsList, methods::PROMPTS_LIST),
        ],
    }
}

/// `mcp-fleet inspect`: run the session, then print text or JSON.
pub async fn run(args: InspectArgs) -> anyhow::Result<String> {
    let inspection = inspect(&args).await?;
    if args.json {
        let mut text = serde_json::to_string_pretty(&inspection)?;
        text.push('\n');
        return Ok(text);
    }
    Ok(render::text(&inspection, args.raw))
}

/// Run one session against the target and gather what it showed.
pub async fn inspect(args: &InspectArgs) -> anyhow::Result<Inspection> {
    // One client, one session: the plan of a run that stops after it.
    let overrides = Overrides {
        target: args.target.clone(),
        stdio: args.stdio.clone(),
        clients: Some(1),
        sessions: Some(1),
        client: args.client.clone(),
        ..Overrides::default()
    };
    let source = Source::choose(args.profile.as_deref(), &overrides);
    let plan = Plan::from_source(&source, &overrides)?;
    let persona = match &args.persona {
        Some(name) => plan
            .personas
            .iter()
            .find(|p| &p.name == name)
            .with_context(|| {
                let names: Vec<&str> = plan.personas.iter().map(|p| p.name.as_str()).collect();
                format!("no persona {name:?}; the profile has {}", names.join(", "))
            })?,
        None => plan.personas.first().context("the plan has no persona")?,
    };
    let targets = crate::targets::resolve(&plan, None).await?;
    let transcript = Transcript::default();
    let (outcome, stats) = one_session(&plan, persona, &targets, &transcript, args).await?;
    let target = targets.description.trim().to_string();
    let transport = persona.route.transport.name().to_string();
    targets.shutdown().await;

    let entries = transcript.entries();
    let seen = Seen::read(&entries);
    let era = stats
        .by_era
        .keys()
        .last()
        .map_or("legacy", |e| e.name())
        .to_string();
    let handshake = seen
        .result(methods::INITIALIZE)
        .or_else(|| seen.result(methods::SERVER_DISCOVER));
    let field = |k: &str| handshake.and_then(|h| h.get(k)).cloned();
    let server_info = field("serverInfo")
        .or_else(|| {
            handshake
                .and_then(|h| h.get(META))
                .and_then(|m| m.get(META_SERVER_INFO))
                .cloned()
        })
        .unwrap_or(Value::Null);
    let protocol_version = match era.as_str() {
        "modern" => Some(persona.modern_version.as_str().to_string()),
        _ => field("protocolVersion").and_then(|v| v.as_str().map(String::from)),
    };
    Ok(Inspection {
        target,
        transport,
        persona: persona.name.clone(),
        offered_version: seen.offered.clone(),
        protocol_version,
        session_id: seen.session_id.clone(),
        server_info,
        capabilities: field("capabilities").unwrap_or(Value::Null),
        instructions: field("instructions").and_then(|v| v.as_str().map(String::from)),
        tools: seen.items(methods::TOOLS_LIST, "tools"),
        resources: seen.items(methods::RESOURCES_LIST, "resources"),
        resource_templates: seen.items(methods::RESOURCES_TEMPLATES_LIST, "resourceTemplates"),
        prompts: seen.items(methods::PROMPTS_LIST, "prompts"),
        era,
        timings: timings(&stats),
        outcome: match outcome {
            SessionOutcome::Completed => "completed",
            SessionOutcome::Failed => "failed",
            SessionOutcome::Interrupted => "interrupted",
            SessionOutcome::Unreachable => "unreachable",
        }
        .to_string(),
        failures: failures(&stats),
        findings: findings(&stats),
        transcript: entries,
    })
}

/// Run the one session, recording its messages into `transcript`.
async fn one_session(
    plan: &Plan,
    persona: &crate::plan::Persona,
    targets: &crate::targets::Targets,
    transcript: &Transcript,
    args: &InspectArgs,
) -> anyhow::Result<(SessionOutcome, crate::metrics::Stats)> {
    let (collector, recorder) = Collector::new(
        plan.personas.iter().map(|p| p.route.transport).collect(),
        plan.tools.len(),
    );
    let collecting = tokio::spawn(collector.run());
    let ctx = SessionContext {
        endpoints: Arc::new(targets.endpoints.clone()),
        recorder,
        timeout: plan.timeout,
        conformance: Arc::new(Tracker::new(args.probe_undeclared)),
        transcript: Some(transcript.clone()),
    };
    let rng = rand::rngs::SmallRng::seed_from_u64(plan.seed);
    let mut cache = ResponseCache::default();
    let outcome = client::run_session(
        &ctx,
        persona,
        &scenario(),
        rng,
        &mut cache,
        tokio::time::Instant::now(),
        &StopSignals::default(),
    )
    .await;
    drop(ctx);
    let stats = collecting.await.context("the collector stopped")?;
    Ok((outcome, stats))
}

/// Each phase that ran: count, errors, mean service time.
fn timings(stats: &crate::metrics::Stats) -> Vec<Timing> {
    stats
        .phases
        .active()
        .filter(|(_, s)| s.count() > 0)
        .map(|(phase, s)| Timing {
            phase: phase.name(),
            count: s.count(),
            errors: s.errors(),
            mean_ms: (s.service.mean() / 10.0).round() / 100.0,
        })
        .collect()
}

/// Every failure example, prefixed with its kind.
fn failures(stats: &crate::metrics::Stats) -> Vec<String> {
    stats
        .examples
        .iter()
        .flat_map(|(k, v)| v.iter().map(move |e| format!("{}: {e}", k.name())))
        .collect()
}

/// Results by method (and whether the request named a cursor), read back from the
/// transcript.
struct Seen {
    results: Vec<(String, bool, Value)>,
    offered: Option<String>,
    session_id: Option<String>,
}

impl Seen {
    fn read(entries: &[Entry]) -> Seen {
        let mut asked: HashMap<String, (String, bool)> = HashMap::new();
        let mut results = Vec::new();
        let mut offered = None;
        let mut session_id = None;
        for e in entries {
            let m = &e.message;
            match e.direction {
                Direction::Sent => {
                    if let (Some(id), Some(method)) = (m.get("id"), m.get("method")) {
                        let method = method.as_str().unwrap_or_default().to_string();
                        if method == methods::INITIALIZE {
                            offered = m["params"]["protocolVersion"].as_str().map(String::from);
                        }
                        let paged = m["params"].get("cursor").is_some();
                        asked.insert(id.to_string(), (method, paged));
                    }
                }
                Direction::Received => {
                    let method = m.get("id").and_then(|id| asked.get(&id.to_string()));
                    if let (Some((method, paged)), Some(result)) = (method, m.get("result")) {
                        results.push((method.clone(), *paged, result.clone()));
                    }
                }
                Direction::Note => {
                    let text = m.as_str().unwrap_or_default();
                    if let Some(id) = text.strip_prefix("Mcp-Session-Id: ") {
                        session_id = Some(id.to_string());
                    }
                }
            }
        }
        Seen {
            results,
            offered,
            session_id,
        }
    }

    /// The last result of `method` (a re-fetch after list_changed replaces the first).
    fn result(&self, method: &str) -> Option<&Value> {
        self.results
            .iter()
            .rev()
            .find(|(m, _, _)| m == method)
            .map(|(_, _, r)| r)
    }

    /// Every item of the last listing of a list, as the server sent them (duplicates
    /// too); a listing starts with a request without a cursor.
    fn items(&self, method: &str, key: &str) -> Vec<Value> {
        let mut out: Vec<Value> = Vec::new();
        for (_, paged, page) in self.results.iter().filter(|(m, _, _)| m == method) {
            if !paged {
                out.clear();
            }
            let items = page.get(key).and_then(Value::as_array);
            out.extend(items.into_iter().flatten().cloned());
        }
        out
    }
}
