//! `mcp-fleet profile --from-trace`: a trace folded into a profile to edit and scale.
//! Sessions of one identity and habits are one persona, weighted by how many there were;
//! a persona's sessions with the same steps are one scenario, weighted likewise, its
//! pauses the range the sessions waited; tool arguments that vary are data pools. The
//! load is a starting point: as many clients as sessions were open at once.

use super::derive::DerivedSession;
use super::names::{ms, round_ms, Unique, MIN_PAUSE_US};
use super::pools::ArgumentPools;
use crate::profile::{PersonaSection, Profile, ScenarioSection, Step};
use crate::trace::Trace;
use std::collections::BTreeMap;

/// A profile inferred from a trace, the data files its pools read (paths relative to
/// the profile's folder, contents), and what a person should know about it.
#[derive(Debug, Clone)]
pub struct DerivedProfile {
    pub profile: Profile,
    pub data: Vec<(String, String)>,
    pub notes: Vec<String>,
}

/// Fold `trace` (read from `source_name`) into personas, scenarios and pools. A trace
/// in which no client got past connecting gives a profile without personas, and a note.
pub fn grouped_profile(trace: &Trace, source_name: &str) -> DerivedProfile {
    let (derived, mut notes) = super::derive_all(trace);
    if derived.is_empty() {
        notes.push(format!(
            "no session of {source_name} got past connecting: the profile has no persona"
        ));
    }
    let stem = super::stem(source_name);
    let mut pools = ArgumentPools::default();
    for step in derived.iter().flat_map(|d| &d.steps) {
        pools.add(step);
    }
    let made = pools.make(&stem);
    notes.extend(made.notes);
    let mut profile = Profile {
        name: Some(stem.clone()),
        description: Some(format!(
            "Inferred from the trace {source_name}: {} session(s) of {}, recorded {}.",
            derived.len(),
            trace.header.upstream,
            trace.header.started
        )),
        data: made.sections,
        ..Profile::default()
    };
    profile.load.clients = Some(peak(&derived).max(1));
    profile.load.duration = Some("30s".into());
    let mut persona_names = Unique::default();
    let mut scenario_names = Unique::default();
    for members in by(&derived, |d| identity(&d.persona)) {
        let name = persona_names.take(&members[0].label);
        let sequences = by(members.iter().copied(), |d| sequence(&d.steps));
        let mut own = Vec::new();
        for (k, group) in sequences.iter().enumerate() {
            let scenario = if sequences.len() == 1 {
                scenario_names.take(&name)
            } else {
                scenario_names.take(&format!("{name}-{}", k + 1))
            };
            let mut steps = group[0].steps.clone();
            steps.iter_mut().for_each(|s| pools.rewrite(s));
            profile.scenarios.push(ScenarioSection {
                name: scenario.clone(),
                weight: Some(count(group.len())),
                steps: with_ranges(&steps, group),
                on_error: Some("continue".into()),
            });
            own.push(scenario);
        }
        notes.extend(session_notes(&name, &members));
        profile.personas.push(merged(name, &members, own));
    }
    DerivedProfile {
        profile,
        data: made.files,
        notes,
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `items` grouped by `key`, groups in the order of their first member.
fn by<T: Copy>(items: impl IntoIterator<Item = T>, key: impl Fn(T) -> String) -> Vec<Vec<T>> {
    let mut keys: Vec<String> = Vec::new();
    let mut groups: Vec<Vec<T>> = Vec::new();
    for item in items {
        let k = key(item);
        match keys.iter().position(|x| *x == k) {
            Some(i) => groups[i].push(item),
            None => {
                keys.push(k);
                groups.push(vec![item]);
            }
        }
    }
    groups
}

/// What makes sessions one persona: identity and habits.
fn identity(p: &PersonaSection) -> String {
    let key = PersonaSection {
        era: p.era.clone(),
        protocol_version: p.protocol_version.clone(),
        legacy_version: p.legacy_version.clone(),
        client_info: p.client_info.clone(),
        capabilities: p.capabilities.clone(),
        extensions: p.extensions.clone(),
        transport: p.transport.clone(),
        url: p.url.clone(),
        get_stream: p.get_stream,
        listen: p.listen.clone(),
        ..PersonaSection::default()
    };
    serde_json::to_string(&key).unwrap_or_default()
}

/// What makes sessions one scenario: their steps, a tool call by its tool, argument
/// names and captures (the values may differ: they become a pool).
fn sequence(steps: &[Step]) -> String {
    let keys: Vec<serde_json::Value> = steps
        .iter()
        .map(|s| match s {
            Step::ToolsCall {
                tool,
                arguments,
                capture,
                ..
            } => {
                let names: Option<Vec<(&String, bool)>> = arguments.as_ref().map(|a| {
                    a.as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, v)| (k, super::pools::passes_capture(v)))
                        .collect()
                });
                let captured: Vec<&serde_json::Value> = arguments
                    .iter()
                    .flat_map(|a| a.as_object().into_iter().flatten())
                    .map(|(_, v)| v)
                    .filter(|v| super::pools::passes_capture(v))
                    .collect();
                serde_json::json!({"tool": tool, "names": names, "captured": captured, "capture": capture})
            }
            other => serde_json::to_value(other).unwrap_or_default(),
        })
        .collect();
    serde_json::Value::Array(keys).to_string()
}

/// The steps of a scenario with the pauses its sessions took: at each place the range
/// from the shortest to the longest wait (a wait not taken counts as none).
fn with_ranges(steps: &[Step], group: &[&DerivedSession]) -> Vec<Step> {
    let pause = |i: usize| {
        let waits: Vec<u64> = group
            .iter()
            .map(|d| d.gaps.get(i).copied().flatten().unwrap_or(0))
            .collect();
        let (lo, hi) = (waits.iter().min()?, waits.iter().max()?);
        if *hi < MIN_PAUSE_US {
            return None;
        }
        let (lo, hi) = (round_ms(*lo as f64), round_ms(*hi as f64));
        let duration = if lo == hi {
            ms(lo)
        } else {
            format!("{}..{}", ms(lo), ms(hi))
        };
        Some(Step::Pause { duration })
    };
    let mut out = Vec::with_capacity(steps.len() * 2 + 1);
    for (i, s) in steps.iter().enumerate() {
        out.extend(pause(i));
        out.push(s.clone());
    }
    out.extend(pause(steps.len()));
    out
}

/// One persona for sessions of one identity: the first one's, weighted by their number,
/// with the share that abandoned and the answers any of them gave.
fn merged(name: String, members: &[&DerivedSession], scenarios: Vec<String>) -> PersonaSection {
    let n = members.len();
    let mut p = members[0].persona.clone();
    p.name = name;
    p.weight = Some(count(n));
    p.scenarios = Some(scenarios);
    let abandoned = members
        .iter()
        .filter(|m| m.persona.abandon.is_some())
        .count();
    p.abandon = (abandoned > 0).then(|| (abandoned as f64 / n as f64 * 1000.0).round() / 1000.0);
    let first =
        |f: &dyn Fn(&PersonaSection) -> bool| members.iter().map(|m| &m.persona).find(|p| f(p));
    p.roots = first(&|p| p.roots.is_some()).and_then(|p| p.roots.clone());
    p.sampling = first(&|p| p.sampling.is_some()).and_then(|p| p.sampling.clone());
    p.tasks = first(&|p| p.tasks.is_some()).and_then(|p| p.tasks.clone());
    let answered: Vec<_> = members
        .iter()
        .filter_map(|m| m.persona.elicitation.as_ref())
        .collect();
    if let Some(e) = answered.first() {
        let sum = |f: fn(&crate::profile::ElicitationSection) -> Option<u32>| {
            Some(answered.iter().filter_map(|e| f(e)).sum())
        };
        p.elicitation = Some(crate::profile::ElicitationSection {
            accept: sum(|e| e.accept),
            decline: sum(|e| e.decline),
            cancel: sum(|e| e.cancel),
            delay: e.delay.clone(),
        });
    }
    p
}

/// The sessions' notes, each once, with the sessions it is about.
fn session_notes(persona: &str, members: &[&DerivedSession]) -> Vec<String> {
    let mut seen: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut order = Vec::new();
    for m in members {
        for note in &m.notes {
            let ids = seen.entry(note).or_insert_with(|| {
                order.push(note.as_str());
                Vec::new()
            });
            ids.push(m.id);
        }
    }
    order
        .into_iter()
        .map(|note| {
            let ids: Vec<String> = seen[note].iter().map(u64::to_string).collect();
            format!("{persona}: {note} (session {})", ids.join(", "))
        })
        .collect()
}

/// The most sessions open at once (a session open at the end counts until its last
/// event).
fn peak(derived: &[DerivedSession]) -> u32 {
    let mut edges: Vec<(u64, i32)> = Vec::new();
    for d in derived {
        edges.push((d.opened, 1));
        edges.push((d.closed.unwrap_or(u64::MAX), -1));
    }
    // At one instant, a close before an open.
    edges.sort_unstable();
    let (mut open, mut most) = (0i32, 0i32);
    for (_, e) in edges {
        open += e;
        most = most.max(open);
    }
    u32::try_from(most).unwrap_or(0)
}
