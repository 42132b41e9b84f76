//! The persona a recorded session plays: its identity (era, version, clientInfo,
//! capabilities and extensions), its transport habits (GET stream, listen, vanishing
//! without a DELETE) and how it answered the server (roots, sampling, elicitation), as
//! the profile's `[[persona]]` keys say them.

use super::derive::Habits;
use super::exchange::{Answer, Exchanges};
use super::names::{ms, round_ms};
use crate::profile::{
    ClientInfoSection, ElicitationSection, ListenSection, PersonaSection, RootSection,
    SamplingSection, TasksSection,
};
use crate::protocol::meta::META_PROTOCOL_VERSION;
use crate::protocol::methods;
use crate::trace::{ClosedBy, RecordedSession, Summary, Transport};
use serde_json::{Map, Value};

/// The persona of `session` (no name, no scenarios yet).
pub(super) fn persona(
    session: &RecordedSession,
    summary: &Summary,
    exchanges: &Exchanges,
    habits: &Habits,
    notes: &mut Vec<String>,
) -> PersonaSection {
    let mut p = PersonaSection {
        era: Some(
            if summary.probed {
                "auto"
            } else {
                summary.era.as_str()
            }
            .to_string(),
        ),
        protocol_version: summary.protocol_version.clone(),
        client_info: summary.client_info.as_ref().map(|i| client_info(i, notes)),
        transport: Some(session.transport.name().to_string()),
        // The path it used, resolved against the run's target: one --target serves the
        // personas of every transport (/mcp, /sse, /ws on the reference server).
        url: session.http.first().map(|(_, h)| h.path.clone()),
        get_stream: summary.habits.get_stream.then_some(true),
        // Every list it fetched is a step of its own: a change announced must not make
        // the replay fetch one more than the client did.
        list_changed: Some("ignore".into()),
        ..PersonaSection::default()
    };
    if summary.probed {
        // The probe carried the modern version; `initialize` offered the legacy one.
        let probe = exchanges
            .requests
            .iter()
            .find(|r| r.method == methods::SERVER_DISCOVER)
            .and_then(|r| r.params)
            .and_then(|p| {
                p.pointer(&format!(
                    "/_meta/{}",
                    META_PROTOCOL_VERSION.replace('/', "~1")
                ))
            })
            .and_then(Value::as_str);
        if let Some(modern) = probe {
            p.legacy_version = p.protocol_version.take();
            p.protocol_version = Some(modern.to_string());
        }
    }
    let (capabilities, extensions) = split_extensions(summary.capabilities.as_ref(), notes);
    p.capabilities = capabilities;
    p.extensions = extensions;
    let legacy_http = session.transport == Transport::Http
        && summary.era == "legacy"
        && summary.habits.session_header;
    let closed_by_client = matches!(session.closed, Some((_, ClosedBy::Client, _)));
    if legacy_http && closed_by_client && !summary.habits.delete {
        // It had a session to end and let its connection go without a DELETE: what
        // the fleet calls abandoning a session.
        p.abandon = Some(1.0);
        notes.push("it ended its HTTP session without a DELETE: abandon = 1".into());
    }
    // Only the 2026-07-28 era listens (an `auto` persona in it).
    let modern = summary.era == "modern" || summary.probed;
    p.listen = habits.listen.filter(|_| modern).and_then(listen);
    if habits.task_calls > 0 {
        let cancel = habits.tasks_cancelled as f64 / habits.task_calls as f64;
        p.tasks = Some(TasksSection {
            call: Some("allowed".into()),
            cancel: (cancel > 0.0).then_some(cancel.min(1.0)),
            ..TasksSection::default()
        });
        notes.push(format!(
            "{} tool call(s) were made as tasks: tasks = {{ call = \"allowed\" }} (the \
             persona calls every tool that allows a task as one)",
            habits.task_calls
        ));
    }
    answers(&mut p, &exchanges.answers, notes);
    p
}

fn client_info(info: &Value, notes: &mut Vec<String>) -> ClientInfoSection {
    let field = |k: &str| info.get(k).and_then(Value::as_str).map(str::to_string);
    let known = ["name", "version", "title", "description", "websiteUrl"];
    if let Some(o) = info.as_object() {
        let other: Vec<&str> = o
            .keys()
            .map(String::as_str)
            .filter(|k| !known.contains(k))
            .collect();
        if !other.is_empty() {
            notes.push(format!(
                "clientInfo fields a persona does not send: {}",
                other.join(", ")
            ));
        }
    }
    ClientInfoSection {
        name: field("name"),
        version: field("version"),
        title: field("title"),
        description: field("description"),
        website_url: field("websiteUrl"),
    }
}

/// The capabilities without `extensions`, and the extensions as the persona's
/// `extensions` table (ids a persona may declare; settings tables).
fn split_extensions(
    capabilities: Option<&Value>,
    notes: &mut Vec<String>,
) -> (Option<Value>, Option<Value>) {
    let Some(Value::Object(caps)) = capabilities else {
        return (capabilities.cloned(), None);
    };
    let mut caps = caps.clone();
    let Some(declared) = caps.remove("extensions") else {
        return (Some(Value::Object(caps)), None);
    };
    let mut out = Map::new();
    for (id, settings) in declared.as_object().into_iter().flatten() {
        if !crate::plan::is_extension_id(id) {
            notes.push(format!(
                "extension {id:?} left out: not an extension id a persona can declare"
            ));
            continue;
        }
        let settings = if settings.is_object() {
            settings.clone()
        } else {
            Value::Object(Map::new())
        };
        out.insert(id.clone(), settings);
    }
    let extensions = (!out.is_empty()).then_some(Value::Object(out));
    (Some(Value::Object(caps)), extensions)
}

/// `listen = { lists, resources }` from the params of `subscriptions/listen`.
fn listen(params: &Value) -> Option<ListenSection> {
    let n = params.get("notifications")?;
    let flag = |k: &str| n.get(k).and_then(Value::as_bool).unwrap_or(false);
    let lists: Vec<String> = [
        ("toolsListChanged", "tools"),
        ("promptsListChanged", "prompts"),
        ("resourcesListChanged", "resources"),
    ]
    .into_iter()
    .filter(|(k, _)| flag(k))
    .map(|(_, list)| list.to_string())
    .collect();
    let resources: Vec<String> = n
        .get("resourceSubscriptions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|u| !u.trim().is_empty())
        .map(str::to_string)
        .collect();
    (!lists.is_empty() || !resources.is_empty()).then_some(ListenSection { lists, resources })
}

/// The persona's answers to the server, from the client's own: the roots it listed, its
/// sampling text and model, its elicitation actions (as weights) and how long each took
/// (the mean). Only for what the persona declares: a plan refuses answers it would
/// never be asked for.
fn answers(p: &mut PersonaSection, answers: &[Answer], notes: &mut Vec<String>) {
    let declared = |c: &str| {
        p.capabilities
            .as_ref()
            .and_then(|caps| caps.get(c))
            .is_some()
    };
    let of = |m: &'static str| {
        answers
            .iter()
            .filter(move |a| a.method == m && a.result.is_some())
    };
    let mean_delay = |m: &'static str| {
        let delays: Vec<u64> = of(m).map(|a| a.delay_us).collect();
        let mean = delays.iter().sum::<u64>() as f64 / delays.len().max(1) as f64;
        let d = round_ms(mean);
        (d > 0).then(|| ms(d))
    };
    if declared("roots") {
        if let Some(roots) = of(methods::ROOTS_LIST)
            .find_map(|a| a.result.as_ref()?.get("roots")?.as_array().cloned())
        {
            let all = roots.len();
            let kept: Vec<RootSection> = roots
                .iter()
                .filter_map(|r| {
                    let uri = r.get("uri")?.as_str()?;
                    uri.starts_with("file://").then(|| RootSection {
                        uri: uri.to_string(),
                        name: r.get("name").and_then(Value::as_str).map(str::to_string),
                    })
                })
                .collect();
            if kept.len() < all {
                notes.push(format!(
                    "{} root(s) left out: a persona's roots are file:// URIs",
                    all - kept.len()
                ));
            }
            p.roots = Some(kept);
        }
    }
    if declared("sampling") {
        if let Some(result) = of(methods::SAMPLING_CREATE_MESSAGE).find_map(|a| a.result.as_ref()) {
            p.sampling = Some(SamplingSection {
                text: sampling_text(result),
                model: result
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                delay: mean_delay(methods::SAMPLING_CREATE_MESSAGE),
            });
        }
    }
    if declared("elicitation") {
        let count = |action: &str| {
            of(methods::ELICITATION_CREATE)
                .filter(|a| {
                    a.result
                        .as_ref()
                        .and_then(|r| r.get("action"))
                        .and_then(Value::as_str)
                        == Some(action)
                })
                .count() as u32
        };
        let (accept, decline, cancel) = (count("accept"), count("decline"), count("cancel"));
        if accept + decline + cancel > 0 {
            p.elicitation = Some(ElicitationSection {
                accept: Some(accept),
                decline: Some(decline),
                cancel: Some(cancel),
                delay: mean_delay(methods::ELICITATION_CREATE),
            });
        }
    }
}

/// The text of a `sampling/createMessage` result: its text content (one block, or the
/// first text block of several).
fn sampling_text(result: &Value) -> Option<String> {
    let content = result.get("content")?;
    let block = match content {
        Value::Array(blocks) => blocks
            .iter()
            .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))?,
        block => block,
    };
    block
        .get("text")
        .and_then(Value::as_str)
        .map(str::to_string)
}
