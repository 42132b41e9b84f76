//! A derived profile as a person reads it: a header that says where it came from and
//! what was inferred, then the TOML, each scenario's steps one inline table a line as
//! the documentation writes them (not a `[[scenario.steps]]` block each).

use super::group::DerivedProfile;
use crate::profile::{Profile, ScenarioSection};
use serde::Serialize;
use std::fmt::Write as _;

/// `profile` as TOML, its steps one a line. Falls back to [`Profile::to_toml`] should a
/// step not render inline.
pub fn profile_toml(profile: &Profile) -> String {
    let mut rest = Profile {
        scenarios: Vec::new(),
        ..profile.clone()
    };
    let arrivals = rest.load.arrivals.take();
    let mut out = rest.to_toml();
    if let Some(arrivals) = arrivals {
        // The `[load]` table's keys follow its header line; arrivals join them.
        let mut list = String::from("arrivals = [\n");
        for a in &arrivals {
            let Some(a) = inline(a) else {
                return profile.to_toml();
            };
            let _ = writeln!(list, "  {a},");
        }
        list.push_str("]\n");
        match out.find("\n[load]\n") {
            Some(at) => out.insert_str(at + "\n[load]\n".len(), &list),
            None => return profile.to_toml(),
        }
    }
    for s in &profile.scenarios {
        match scenario(s) {
            Some(text) => out.push_str(&text),
            None => return profile.to_toml(),
        }
    }
    out
}

fn scenario(s: &ScenarioSection) -> Option<String> {
    let mut out = String::from("\n[[scenario]]\n");
    let _ = writeln!(out, "name = {}", inline(&s.name)?);
    if let Some(w) = s.weight {
        let _ = writeln!(out, "weight = {w}");
    }
    if let Some(e) = &s.on_error {
        let _ = writeln!(out, "on_error = {}", inline(e)?);
    }
    out.push_str("steps = [\n");
    for step in &s.steps {
        let _ = writeln!(out, "  {},", inline(step)?);
    }
    out.push_str("]\n");
    Some(out)
}

fn inline(v: &impl Serialize) -> Option<String> {
    let mut out = String::new();
    v.serialize(toml::ser::ValueSerializer::new(&mut out))
        .ok()?;
    Some(out)
}

/// The profile as TOML, under a header that says where it came from and what was
/// inferred, for the person who edits it next.
pub fn render(derived: &DerivedProfile, source_name: &str) -> String {
    let p = &derived.profile;
    let mut h = String::new();
    let line = |h: &mut String, text: &str| {
        let _ = if text.is_empty() {
            writeln!(h, "#")
        } else {
            writeln!(h, "# {text}")
        };
    };
    line(
        &mut h,
        &format!(
            "Inferred by mcp-fleet {} from the trace {source_name}.",
            env!("CARGO_PKG_VERSION")
        ),
    );
    if let Some(d) = &p.description {
        line(&mut h, d);
    }
    let sessions: u32 = p.personas.iter().filter_map(|x| x.weight).sum();
    line(&mut h, "");
    line(
        &mut h,
        &format!(
            "{sessions} session(s) → {} persona(s) by identity and habits, {} scenario(s) by steps:",
            p.personas.len(),
            p.scenarios.len()
        ),
    );
    for persona in &p.personas {
        let weight = |s: &String| {
            let w = p
                .scenarios
                .iter()
                .find(|x| &x.name == s)
                .and_then(|x| x.weight);
            format!("{s} ×{}", w.unwrap_or(1))
        };
        let scenarios: Vec<String> = persona.scenarios.iter().flatten().map(weight).collect();
        let era = persona.era.as_deref().unwrap_or("?");
        let version = persona.protocol_version.as_deref().unwrap_or("?");
        let transport = persona.transport.as_deref().unwrap_or("?");
        line(
            &mut h,
            &format!(
                "  persona {} ×{}: {era} {version} over {transport}; scenarios {}",
                persona.name,
                persona.weight.unwrap_or(1),
                scenarios.join(", ")
            ),
        );
    }
    for (name, d) in &p.data {
        line(
            &mut h,
            &format!(
                "  pool {name}: the distinct arguments its tool was called with, in {}",
                d.file
            ),
        );
    }
    for text in [
        "",
        "Pauses are what the sessions waited; a range \"min..max\" is drawn uniformly.",
        "A value quoted back from an earlier answer is captured (`capture`) and passed on as ${v…}.",
        "Tool calls send exactly the recorded arguments (generate = false).",
    ] {
        line(&mut h, text);
    }
    line(
        &mut h,
        &format!(
            "[load] is a starting point: {} client(s) (the most sessions open at once) for 30s.",
            p.load.clients.unwrap_or(1)
        ),
    );
    line(
        &mut h,
        "[target] is yours to set (url or command), or pass --target / --stdio.",
    );
    if !derived.notes.is_empty() {
        line(&mut h, "");
        line(&mut h, "Notes:");
        for n in &derived.notes {
            line(&mut h, &format!("- {n}"));
        }
    }
    h.push('\n');
    h.push_str(&profile_toml(p));
    h
}
