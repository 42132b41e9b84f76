//! The plan told back to people: `validate` prints it and the run opens with it;
//! `validate` adds the rules and settings a run's banner leaves out (thresholds,
//! checkpoints, storms, soak windows, persona habits, client faults, auth and tasks).

use super::habits::Habits;
use super::load::LoadModel;
use super::scenario::Step;
use super::soak::{SoakPlan, Span};
use super::target::Target;
use super::Plan;

mod load;
mod personas;

impl Plan {
    /// What `[target]` turned on in the built-in server (`app_tools`, `tasks`, `auth`).
    fn builtin_extras(&self) -> String {
        if self.target != Target::BuiltIn {
            return String::new();
        }
        let mut on: Vec<String> = [
            (self.builtin_app_tools, "application tools"),
            (self.builtin_tasks, "task tools"),
            (self.builtin_auth, "bearer tokens required"),
        ]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, what)| what.to_string())
        .collect();
        if let Some(every) = self.builtin_change_every {
            on.push(format!(
                "tool list changed every {}",
                humantime::format_duration(every)
            ));
        }
        if on.is_empty() {
            String::new()
        } else {
            format!(" ({})", on.join(", "))
        }
    }

    /// The banner's line for a shard of a sharded run: which part of the schedule it
    /// runs, and where its seed came from when the profile names none.
    pub fn describe_shard(&self, shard: crate::shard::Shard, seed_from_profile: bool) -> String {
        let (i, n) = (shard.index, shard.count);
        let part = match self.load.model {
            LoadModel::Open { .. } | LoadModel::Arrivals { .. } => {
                format!("arrivals k with k mod {n} = {i}")
            }
            LoadModel::Closed { .. } => format!("clients j with j mod {n} = {i}"),
        };
        let seed = if seed_from_profile {
            format!(
                ", seed {} from the profile's bytes (the same on every shard)",
                self.seed
            )
        } else {
            String::new()
        };
        format!("  shard    {shard} ({part}){seed}\n")
    }

    /// A readable account of the plan (for `validate` and the run banner).
    pub fn describe(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "plan {:?}  seed {}", self.name, self.seed);
        let _ = writeln!(
            s,
            "  target   {}{}",
            self.target.describe(),
            self.builtin_extras()
        );
        let _ = write!(s, "  load     {}", self.load.describe());
        if let Some(n) = self.load.sessions {
            let _ = write!(s, ", stop after {n} sessions");
        }
        if let Some(d) = self.load.duration {
            let _ = write!(s, ", stop after {}", humantime::format_duration(d));
        }
        // Think time is a closed-model client's pause between sessions; an open model's
        // arrivals do not wait for it.
        if matches!(self.load.model, LoadModel::Closed { .. }) {
            let _ = write!(s, ", think {}", self.load.think.describe());
        }
        let _ = writeln!(
            s,
            ", request timeout {}",
            humantime::format_duration(self.connection.timeout)
        );
        let shares = self.persona_shares();
        for (p, share) in self.personas.iter().zip(shares) {
            let scen: Vec<&str> = p
                .scenarios
                .iter()
                .map(|&i| self.scenarios[i].name.as_str())
                .collect();
            let _ = writeln!(
                s,
                "  persona  {:<20} {:>5.1}%  {} {} {}  capabilities {}  scenarios {}",
                p.name,
                share * 100.0,
                p.route.transport.name(),
                p.era.name(),
                p.protocol_version,
                p.capabilities,
                scen.join(", ")
            );
            if p.route.target != self.target {
                let _ = writeln!(s, "           → {}", p.route.target.describe());
            }
        }
        match self.watch.describe() {
            Some(w) => {
                let _ = writeln!(s, "  watch    {w}");
            }
            None if self.soak.server_inside => {
                // The in-process server shares our process: its memory is ours.
                let _ = writeln!(
                    s,
                    "  watch    the generator only (the built-in HTTP server runs inside it)"
                );
            }
            None => {}
        }
        for sc in &self.scenarios {
            let steps: Vec<String> = sc.steps.iter().map(|st| st.describe(&self.pools)).collect();
            let _ = writeln!(
                s,
                "  scenario {:<20} weight {}  {}",
                sc.name,
                sc.weight,
                steps.join(" → ")
            );
        }
        s
    }
}

impl Plan {
    /// The rest of the plan, one line each, for `validate`: what the run will be judged
    /// by and the settings of long runs.
    pub fn describe_details(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for p in &self.personas {
            if let Some(h) = habits(&p.habits) {
                let _ = writeln!(s, "  habits   {:<20} {h}", p.name);
            }
            personas::lines(&mut s, p);
        }
        for e in &self.load.events {
            let what = match e.storm {
                super::load::Storm::ListChanged { count } => {
                    format!("{count} list change(s) asked of the server")
                }
                storm => format!("{} storm", storm.name()),
            };
            let _ = writeln!(
                s,
                "  event    at {}: {what}",
                humantime::format_duration(e.at)
            );
        }
        let _ = match self.checkpoint {
            Some(d) => writeln!(s, "  checkpoint every {}", humantime::format_duration(d)),
            None => writeln!(s, "  checkpoint off (the results are written at the end)"),
        };
        let default_soak = SoakPlan::default();
        if self.soak.warmup != default_soak.warmup || self.soak.window.is_some() {
            let window = match self.soak.window {
                Some(w) => span(w),
                None => "10% of the run".into(),
            };
            let _ = writeln!(
                s,
                "  soak     warm-up {}, drift window {window}",
                span(self.soak.warmup)
            );
        }
        for line in self.pools.describe() {
            let _ = writeln!(s, "  data     {line}");
        }
        if let Some(line) = self.arguments_line() {
            let _ = writeln!(s, "  arguments {line}");
        }
        if self.thresholds.is_empty() {
            let _ = writeln!(
                s,
                "  thresholds none (the exit code is 0 unless the run fails)"
            );
        }
        for t in &self.thresholds {
            let _ = writeln!(s, "  threshold {}", t.text);
        }
        s
    }
}

impl Plan {
    /// How calls get their arguments, when some are generated: the optional share and
    /// what happens to tools annotated destructive. `None` when no call generates.
    fn arguments_line(&self) -> Option<String> {
        let generating: Vec<(&str, Option<f64>)> = self
            .scenarios
            .iter()
            .flat_map(|sc| &sc.steps)
            .flat_map(|st| match st {
                Step::CallTool(c) => std::slice::from_ref(c),
                Step::Mix(m) => m.calls.as_slice(),
                _ => &[],
            })
            .filter(|c| c.generate)
            .map(|c| (c.name.as_str(), c.optional))
            .collect();
        if generating.is_empty() {
            return None;
        }
        // Calls that give arguments and ask for no optional ones (`plan/arguments.rs`).
        let required_only = if generating.iter().any(|(_, o)| *o == Some(0.0)) {
            "; calls that give arguments: only the required properties they lack"
        } else {
            ""
        };
        let mut names: Vec<&str> = generating.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        let destructive = if self.arguments.allow_destructive {
            "tools annotated destructive are called too (allow_destructive)"
        } else {
            "tools the server annotates destructiveHint are left out (allow_destructive = false)"
        };
        Some(format!(
            "generated from inputSchema for {} ({}% of optional properties{required_only}); \
             {destructive}",
            names.join(", "),
            self.arguments.optional * 100.0
        ))
    }
}

/// `abandon 25%, ping every 30s, idle 1s..5s, lifetime 2m..10m`; None without habits.
fn habits(h: &Habits) -> Option<String> {
    let mut parts = Vec::new();
    if h.abandon > 0.0 {
        parts.push(format!("abandon {}%", h.abandon * 100.0));
    }
    if let Some(d) = h.ping_every {
        parts.push(format!("ping every {}", humantime::format_duration(d)));
    }
    if let Some(t) = &h.idle {
        parts.push(format!("idle {}", t.describe()));
    }
    if let Some(t) = &h.lifetime {
        parts.push(format!("lifetime {}", t.describe()));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// `10%` or `2m`.
fn span(s: Span) -> String {
    match s {
        Span::Share(f) => format!("{}%", f * 100.0),
        Span::Fixed(d) => humantime::format_duration(d).to_string(),
    }
}

impl Step {
    /// `tools/call(echo)`, `mix[echo×3 add×1] ×10 (2 at a time)`, `pause 1s`, …
    pub fn describe(&self, pools: &super::data::Pools) -> String {
        match self {
            Step::List { method, .. } => (*method).to_string(),
            Step::CallTool(c) => format!("tools/call({})", c.name),
            Step::ReadResource { uri, .. } => {
                format!("resources/read({})", uri.describe_with(pools))
            }
            Step::GetPrompt { name, .. } => format!("prompts/get({})", name.describe_with(pools)),
            Step::Mix(m) => {
                let names: Vec<String> = m
                    .calls
                    .iter()
                    .zip(&m.weights)
                    .map(|(c, w)| format!("{}×{w}", c.name))
                    .collect();
                format!(
                    "mix[{}] ×{} ({} at a time)",
                    names.join(" "),
                    m.count,
                    m.parallel
                )
            }
            Step::Ping => "ping".into(),
            Step::Request(r) if r.phase == r.method => r.method.clone(),
            Step::Request(r) => format!("{} as {}", r.method, r.phase),
            Step::Pause(d) => format!("pause {}", d.describe()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Overrides, Plan, Source};
    use std::time::Duration;

    #[test]
    fn a_shard_says_which_part_it_runs_and_where_its_seed_came_from() {
        let p = Plan::from_source(&Source::Quickstart, &Overrides::default()).expect("resolves");
        let shard = crate::shard::Shard { index: 1, count: 4 };
        assert_eq!(
            p.describe_shard(shard, false),
            "  shard    1/4 (clients j with j mod 4 = 1)\n"
        );
        let derived = p.describe_shard(shard, true);
        assert!(
            derived.ends_with(&format!(
                ", seed {} from the profile's bytes (the same on every shard)\n",
                p.seed
            )),
            "{derived}"
        );
    }

    #[test]
    fn the_quickstart_lasts_ten_seconds_and_validate_shows_its_thresholds() {
        let p = Plan::from_source(&Source::Quickstart, &Overrides::default()).expect("resolves");
        // Long enough for the live view and the report's time series; no session budget
        // cuts it short.
        assert_eq!(p.load.duration, Some(Duration::from_secs(10)));
        assert_eq!(p.load.sessions, None);
        assert!(!p.load.think.is_zero());
        let text = p.describe_details();
        assert!(
            text.contains("  threshold p99(initialize) < 500ms\n"),
            "{text}"
        );
        assert!(text.contains("  threshold error_rate < 1%\n"), "{text}");
        assert!(text.contains("checkpoint off"), "{text}");
        assert!(
            !text.contains("soak"),
            "default soak settings are not told: {text}"
        );
    }

    #[test]
    fn validate_says_which_calls_generate_and_what_becomes_of_destructive_tools() {
        let p = Plan::from_source(
            &Source::File("profiles/app-tools.toml".into()),
            &Overrides::default(),
        )
        .expect("resolves");
        let text = p.describe_details();
        assert!(
            text.contains("  data     titles: ") && text.contains("sequential"),
            "{text}"
        );
        assert!(
            text.contains("generated from inputSchema for feature_choice, "),
            "{text}"
        );
        assert!(text.contains("(50% of optional properties)"), "{text}");
        assert!(text.contains("called too (allow_destructive)"), "{text}");
        let strict = super::super::Plan::resolve(
            crate::profile::Profile::parse(
                "[[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/call\", tool = \"x\" }, \
                 { op = \"tools/call\", tool = \"y\", arguments = { a = 1 } }]\n",
                "p.toml",
            )
            .expect("parses"),
            &Overrides::default(),
            "p.toml",
        )
        .expect("resolves");
        let text = strict.describe_details();
        assert!(
            text.contains("are left out (allow_destructive = false)"),
            "{text}"
        );
        assert!(
            text.contains("(50% of optional properties; calls that give arguments: only the required properties they lack)"),
            "{text}"
        );
        let exact = super::super::Plan::resolve(
            crate::profile::Profile::parse(
                "[[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/call\", tool = \"x\", generate = false }]\n",
                "p.toml",
            )
            .expect("parses"),
            &Overrides::default(),
            "p.toml",
        )
        .expect("resolves");
        assert!(
            !exact.describe_details().contains("arguments"),
            "nothing generated"
        );
    }
}
