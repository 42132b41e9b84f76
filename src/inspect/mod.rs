//! `mcp-fleet inspect`: one session, any transport, era and persona, shown the way the
//! MCP Inspector shows it — the handshake, the server's capabilities, every tool,
//! resource and prompt, the timings and the findings. It runs the ordinary session
//! (`client::run_session`) with a transcript observer, then reads the transcript.
//! `--call`, `--read` and `--get-prompt` become steps after the listings, in the same
//! session; their answers are read back from the transcript too.

mod answer;
mod ask;
mod client_fault;
mod content;
mod render;

pub use answer::{Answer, ServerEvent};
pub use ask::{Ask, AskError};
pub use client_fault::FaultShown;

use crate::cli::InspectArgs;
use crate::client::StopSignals;
use crate::client::{self, SessionContext};
use crate::conformance::Tracker;
use crate::metrics::{Collector, Phase, SessionOutcome};
use crate::plan::{Overrides, Plan, Scenario, Source, Step};
use crate::protocol::meta::{META, META_SERVER_INFO};
use crate::protocol::methods;
use crate::report::assemble::findings;
use crate::session::{Direction, Entry, Transcript};
use crate::summary::FindingSummary;
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
    /// Whether the handshake was answered (`initialize` or `server/discover`).
    pub connected: bool,
    /// The answers to `--call`, `--read` and `--get-prompt`, in the order they ran.
    pub answers: Vec<Answer>,
    /// One row per phase: how many, how long.
    pub timings: Vec<Timing>,
    /// `completed` or `failed`, with the failures seen.
    pub outcome: String,
    pub failures: Vec<String>,
    pub findings: Vec<FindingSummary>,
    /// Every message, sent and received (`--raw` prints it; `--json` always has it).
    pub transcript: Vec<Entry>,
    /// `--client-fault`: the fault committed and the server's verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_fault: Option<FaultShown>,
}

#[derive(Debug, Serialize)]
pub struct Timing {
    pub phase: &'static str,
    pub count: u64,
    pub errors: u64,
    /// Mean service time of the successful samples, milliseconds.
    pub mean_ms: f64,
}

/// The list steps `inspect` always runs (undeclared ones are skipped, as in a run), then
/// the requests the user asked for.
fn scenario(asks: &[Ask]) -> Scenario {
    let list = |phase, method| Step::List { phase, method };
    let mut calls: crate::metrics::ToolId = 0;
    let asked = asks.iter().map(|a| {
        let step = a.step(calls);
        if matches!(a, Ask::Call { .. }) {
            calls = calls.saturating_add(1);
        }
        step
    });
    Scenario {
        name: "inspect".into(),
        weight: 1,
        on_error: crate::plan::OnError::Continue,
        steps: [
            list(Phase::ToolsList, methods::TOOLS_LIST),
            list(Phase::ResourcesList, methods::RESOURCES_LIST),
            list(
                Phase::ResourcesTemplatesList,
                methods::RESOURCES_TEMPLATES_LIST,
            ),
            list(Phase::PromptsList, methods::PROMPTS_LIST),
        ]
        .into_iter()
        .chain(asked)
        .collect(),
    }
}

/// What `mcp-fleet inspect` prints, and whether every requested call, read and prompt
/// was answered (a tool's `isError: true` is an answer; a JSON-RPC error is not).
#[derive(Debug)]
pub struct Shown {
    pub text: String,
    pub passed: bool,
    /// Why not, in one line, for stderr.
    pub problem: Option<String>,
    /// No session could be opened (exit 2); `--json` still prints what was seen.
    pub could_not_connect: bool,
}

/// `mcp-fleet inspect`: run the session, then print text or JSON. `Err` (exit 2) when
/// the session could not be made at all.
pub async fn run(args: InspectArgs) -> anyhow::Result<Shown> {
    let inspection = inspect(&args).await?;
    if let Some(f) = &inspection.client_fault {
        // A handshake fault may leave no handshake to show: the verdict is the answer.
        let mut text = if args.json {
            serde_json::to_string_pretty(&inspection)? + "\n"
        } else {
            render::text(&inspection, args.raw)
        };
        if !args.json {
            text.push_str(&f.text());
        }
        return Ok(Shown {
            text,
            passed: f.handled(),
            problem: f.problem(),
            could_not_connect: false,
        });
    }
    if !inspection.connected {
        let why = match inspection.failures.as_slice() {
            [] => format!("the session ended as {}", inspection.outcome),
            list => list.join("; "),
        };
        let problem = format!("could not open a session with {}: {why}", inspection.target);
        if !args.json {
            anyhow::bail!(problem);
        }
        // A CI job reads the JSON (`| jq`): the transcript and the findings of a session
        // that failed are what it needs most.
        return Ok(Shown {
            text: serde_json::to_string_pretty(&inspection)? + "\n",
            passed: false,
            problem: Some(problem),
            could_not_connect: true,
        });
    }
    let unanswered: Vec<String> = inspection
        .answers
        .iter()
        .filter(|a| !a.answered())
        .map(|a| {
            let why = match a.status {
                "error" => "a JSON-RPC error",
                "skipped" => "not sent, capability undeclared",
                "not_sent" => "not sent, the session ended first",
                _ => "no response",
            };
            format!("{} {} ({why})", a.kind, a.name)
        })
        .collect();
    let problem = (!unanswered.is_empty()).then(|| {
        format!(
            "{} of {} requests got no result: {}",
            unanswered.len(),
            inspection.answers.len(),
            unanswered.join(", ")
        )
    });
    let text = if args.json {
        let mut text = serde_json::to_string_pretty(&inspection)?;
        text.push('\n');
        text
    } else {
        render::text(&inspection, args.raw)
    };
    Ok(Shown {
        text,
        passed: problem.is_none(),
        problem,
        could_not_connect: false,
    })
}

/// Run one session against the target and gather what it showed.
pub async fn inspect(args: &InspectArgs) -> anyhow::Result<Inspection> {
    // Bad JSON in a flag is the user's to fix before anything connects.
    let asks = Ask::from_args(args)?;
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
    let faulty = match &args.client_fault {
        Some(name) => Some(client_fault::persona_with(name, persona)?),
        None => None,
    };
    let persona = faulty.as_ref().map_or(persona, |(_, p)| p);
    let targets = crate::targets::resolve(&plan, None).await?;
    let transcript = Transcript::default();
    let (outcome, stats) = one_session(&plan, persona, &targets, &transcript, args, &asks).await?;
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
    let tools = seen.items(methods::TOOLS_LIST, "tools");
    let resources = seen.items(methods::RESOURCES_LIST, "resources");
    let resource_templates = seen.items(methods::RESOURCES_TEMPLATES_LIST, "resourceTemplates");
    let prompts = seen.items(methods::PROMPTS_LIST, "prompts");
    let mut answers = answer::read(&asks, &entries, |a| {
        listed(a, &tools, &resources, &resource_templates, &prompts)
    });
    // Not sent because the capability is undeclared only when the server said so; a
    // session that failed first (handshake, a list, a dead server) never got that far.
    let capabilities = field("capabilities");
    for a in answers.iter_mut().filter(|a| a.status == "skipped") {
        let declared = capabilities
            .as_ref()
            .is_some_and(|c| c.get(a.capability()).is_some());
        if capabilities.is_none() || declared {
            a.status = "not_sent";
        }
    }
    Ok(Inspection {
        target,
        connected: handshake.is_some(),
        answers,
        transport,
        persona: persona.name.clone(),
        offered_version: seen.offered.clone(),
        protocol_version,
        session_id: seen.session_id.clone(),
        server_info,
        capabilities: field("capabilities").unwrap_or(Value::Null),
        instructions: field("instructions").and_then(|v| v.as_str().map(String::from)),
        tools,
        resources,
        resource_templates,
        prompts,
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
        client_fault: faulty.map(|(f, _)| client_fault::shown(f, &stats)),
    })
}

/// Run the one session, recording its messages into `transcript`.
async fn one_session(
    plan: &Plan,
    persona: &crate::plan::Persona,
    targets: &crate::targets::Targets,
    transcript: &Transcript,
    args: &InspectArgs,
    asks: &[Ask],
) -> anyhow::Result<(SessionOutcome, crate::metrics::Stats)> {
    // The calls are indexed by their position (`scenario`), not by the plan's tools.
    let calls = asks
        .iter()
        .filter(|a| matches!(a, Ask::Call { .. }))
        .count();
    let (collector, recorder) = Collector::new(
        plan.personas.iter().map(|p| p.route.transport).collect(),
        plan.tools.len().max(calls).max(1),
    );
    let collecting = tokio::spawn(collector.run());
    let ctx = SessionContext {
        endpoints: Arc::new(targets.endpoints.clone()),
        recorder,
        timeout: plan.connection.timeout,
        conformance: Arc::new(Tracker::new(args.probe_undeclared)),
        transcript: Some(transcript.clone()),
        calls: client::CallData {
            pools: plan.pools.clone(),
            policy: plan.arguments,
        },
        auth: client::auth::Credentials::new(plan),
        pace: None,
        changes: Default::default(),
    };
    let rng = rand::rngs::SmallRng::seed_from_u64(plan.seed);
    let mut memory = client::ClientMemory::new(0);
    let outcome = client::run_session(
        &ctx,
        ctx.recorder.next_session(),
        persona,
        &scenario(asks),
        rng,
        &mut memory,
        tokio::time::Instant::now(),
        &StopSignals::default(),
        None,
    )
    .await;
    drop(ctx);
    let stats = collecting.await.context("the collector stopped")?;
    Ok((outcome, stats))
}

/// Whether the server's listing has what `ask` names; a URI also counts as listed when
/// it starts with the fixed part of a template (`fleet://resources/{id}`).
fn listed(
    ask: &Ask,
    tools: &[Value],
    resources: &[Value],
    templates: &[Value],
    prompts: &[Value],
) -> bool {
    let has = |items: &[Value], field: &str| items.iter().any(|i| i[field] == ask.key());
    match ask {
        Ask::Call { .. } => has(tools, "name"),
        Ask::Prompt { .. } => has(prompts, "name"),
        Ask::Read { uri } => {
            has(resources, "uri")
                || templates.iter().any(|t| {
                    let template = t["uriTemplate"].as_str().unwrap_or_default();
                    let fixed = template.split('{').next().unwrap_or_default();
                    template.contains('{') && !fixed.is_empty() && uri.starts_with(fixed)
                })
        }
    }
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
