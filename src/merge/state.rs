//! `state.json`: the raw state of a run, written beside its summary at the end and at
//! every checkpoint. It holds what `merge` needs to add shards exactly and nothing a
//! report shows that the state could not rebuild: every histogram raw (HdrHistogram V2
//! deflate, base64), every count, the bounded examples (the same texts `summary.json`
//! shows, so nothing secret), the parts of the plan the summary reads, the plan's hash,
//! the shard, the start (to the nanosecond) and the version. Versioned by [`FORMAT`].
//!
//! Keys are the stable names the reports use (`tools/call`, `rpc_error:-32601`,
//! `legacy`, `2025-11-25`), so the file reads by itself.

use crate::metrics::{
    ClientFault, Counter, FailureKind, FaultCounts, FindingCount, LeftOut, PersonaId, PhaseTable,
    Series, SessionCounts, Stats, ToolCounts, ToolId, Verdict,
};
use crate::protocol::{TransportKind, VersionId};
use crate::report::assemble::PlanBasis;
use crate::report::assemble::RunFacts;
use crate::shard::Shard;
use crate::summary::soak::Soak;
use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod codec;

pub use codec::add;
use codec::{by_name, era_of, phase_state, phase_stats, phase_table, table_state};

/// The version of the state's shape; a reader refuses any other.
pub const FORMAT: u32 = 1;

/// Which part of the run a state is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Part {
    /// One shard (`{"index": 1, "count": 4}`; an unsharded run is 0 of 1).
    Shard(Shard),
    /// `"merged"`: made by `mcp-fleet merge` from `shards` shards.
    Merged(String),
}

/// The [`Part::Merged`] text.
pub const MERGED: &str = "merged";

/// The raw state of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// [`FORMAT`].
    pub format: u32,
    /// The mcp-fleet version that wrote it.
    pub mcp_fleet: String,
    /// [`plan_hash`] of the run's plan.
    pub plan_hash: String,
    pub shard: Part,
    /// How many shards the run has (1 unsharded; N in a merged state).
    pub shards: u32,
    /// The start of the run (the shared `--start-at` of a sharded one), ns since the
    /// Unix epoch.
    pub started_at_ns: u64,
    pub finished_at_ns: u64,
    pub duration_ns: u64,
    /// A checkpoint's state: the run was still going.
    pub checkpoint: bool,
    /// What the summary reads of the plan.
    pub plan: PlanBasis,
    pub run: RunState,
    pub stats: StatsState,
}

/// The run's facts besides its figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunState {
    pub target: String,
    pub transport: String,
    pub stopped_by: String,
    /// The resource series this process sampled.
    pub resources: Vec<Series>,
    /// Its soak verdicts, outages and storms.
    pub soak: Soak,
    /// How late after `--start-at` this shard's schedule began, µs (a merged state: the
    /// latest shard's). The spread of the shards' values is the run's start skew.
    #[serde(default)]
    pub start_late_us: u64,
}

/// The plan's fingerprint: SHA-256 of the written (redacted) profile and the seed.
/// Shards of one run have the same; anything else that differs makes another run.
pub fn plan_hash(profile_toml: &str, seed: u64) -> String {
    let mut h = sha2::Sha256::new();
    h.update(profile_toml.as_bytes());
    h.update(format!("\nseed={seed}\n").as_bytes());
    let digest = h.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// A time from [`State::started_at_ns`] and the like.
pub fn time_of(ns: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(ns)
}

impl State {
    /// The state of a run (or a checkpoint) of `plan` as `shard`.
    pub fn of(
        plan: &crate::plan::Plan,
        shard: Shard,
        stats: &Stats,
        facts: &RunFacts,
    ) -> anyhow::Result<State> {
        Ok(State {
            format: FORMAT,
            mcp_fleet: env!("CARGO_PKG_VERSION").into(),
            plan_hash: plan_hash(&plan.profile_toml(), plan.seed),
            shard: Part::Shard(shard),
            shards: shard.count,
            started_at_ns: ns(facts.started_at),
            finished_at_ns: ns(facts.finished_at),
            duration_ns: u64::try_from(facts.duration.as_nanos()).unwrap_or(u64::MAX),
            checkpoint: facts.checkpoint_at.is_some(),
            plan: PlanBasis::of(plan),
            run: RunState {
                target: facts.target.clone(),
                transport: facts.transport.clone(),
                stopped_by: facts.stopped_by.clone(),
                resources: facts.resources.clone(),
                soak: facts.soak.clone(),
                start_late_us: 0,
            },
            stats: StatsState::of(stats)?,
        })
    }

    /// The shard, `None` for a merged state.
    pub fn part(&self) -> Option<Shard> {
        match &self.shard {
            Part::Shard(s) => Some(*s),
            Part::Merged(_) => None,
        }
    }

    /// Write to `dir`/[`super::STATE_FILE`] atomically.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let json = serde_json::to_vec(self).context("encoding the run's state")?;
        let path = dir.join(super::STATE_FILE);
        crate::report::write_atomically(&path, &json)
            .with_context(|| format!("writing {}", path.display()))
    }

    /// Read `dir`/[`super::STATE_FILE`].
    pub fn read(dir: &Path) -> anyhow::Result<State> {
        let path = dir.join(super::STATE_FILE);
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
                "{} has no {}: it is not the results folder of a run (or one written before \
                 mcp-fleet kept its state)\nfix: give the results folders of the shards \
                 (each holds {})",
                dir.display(),
                super::STATE_FILE,
                super::STATE_FILE
            ),
            Err(e) => bail!("cannot read {}: {e}", path.display()),
        };
        #[derive(Deserialize)]
        struct Format {
            format: Option<u32>,
        }
        let format = serde_json::from_slice::<Format>(&text)
            .ok()
            .and_then(|f| f.format);
        if format != Some(FORMAT) {
            bail!(
                "{} is not a state this mcp-fleet reads (format {}, expected {FORMAT})\n\
                 fix: merge with the mcp-fleet version that ran the shards",
                path.display(),
                format.map_or_else(|| "unknown".to_string(), |f| f.to_string())
            );
        }
        serde_json::from_slice(&text).with_context(|| {
            format!(
                "{} does not parse\nfix: it was cut or edited; run the shard again",
                path.display()
            )
        })
    }
}

/// One phase's figures, its histograms raw.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseState {
    pub service: String,
    pub response: String,
    pub ok: u64,
    pub tool_errors: u64,
    pub clamped: u64,
    pub skipped: u64,
    pub failures: BTreeMap<String, u64>,
}

/// The phases of a slice that have anything, by name.
pub type TableState = BTreeMap<String, PhaseState>;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PersonaState {
    pub phases: TableState,
    pub sessions: SessionCounts,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolCountsState {
    pub generated: u64,
    pub generated_accepted: u64,
    pub left_out: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FaultState {
    pub persona: PersonaId,
    pub fault: String,
    pub verdicts: BTreeMap<String, u64>,
    /// (verdict, text), in the order kept.
    pub examples: Vec<(String, String)>,
}

/// Everything of [`Stats`] but the timeline (the interval files hold it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatsState {
    pub phases: TableState,
    pub personas: Vec<PersonaState>,
    /// Every interned tool, in order.
    pub tools: Vec<PhaseState>,
    pub tool_counts: Vec<ToolCountsState>,
    /// Every `request` step's phase, in `PlanBasis::requests` order (absent before
    /// they existed).
    #[serde(default)]
    pub requests: Vec<PhaseState>,
    /// Every step check in `PlanBasis::checks` order: (passes, fails, first reason).
    #[serde(default)]
    pub checks: Vec<(u64, u64, Option<String>)>,
    pub sessions: SessionCounts,
    pub examples: BTreeMap<String, Vec<String>>,
    pub tool_error_examples: BTreeMap<ToolId, Vec<String>>,
    pub server_messages: BTreeMap<String, u64>,
    pub malformed: u64,
    pub by_transport: BTreeMap<String, TableState>,
    pub by_era: BTreeMap<String, TableState>,
    pub by_version: BTreeMap<String, TableState>,
    pub interval_s: f64,
    pub interval_error: Option<String>,
    pub counters: BTreeMap<String, u64>,
    /// By check code.
    pub findings: BTreeMap<String, FindingCount>,
    pub client_faults: Vec<FaultState>,
    /// The slowest traced requests by phase name: (latency µs, trace id, span id), the
    /// ids in hex (absent when nothing was traced).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub slowest: BTreeMap<String, Vec<(u64, String, String)>>,
    /// Extension verdicts by id: sessions accepted, ignored, offered, required.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: BTreeMap<String, [u64; 4]>,
}

impl StatsState {
    pub fn of(s: &Stats) -> anyhow::Result<StatsState> {
        let tables = |m: &mut dyn Iterator<Item = (String, &PhaseTable)>| -> anyhow::Result<BTreeMap<String, TableState>> {
            m.map(|(k, t)| Ok((k, table_state(t)?))).collect()
        };
        Ok(StatsState {
            phases: table_state(&s.phases)?,
            personas: s
                .personas
                .iter()
                .map(|(t, c)| {
                    Ok(PersonaState {
                        phases: table_state(t)?,
                        sessions: *c,
                    })
                })
                .collect::<anyhow::Result<_>>()?,
            tools: s
                .tools
                .iter()
                .map(phase_state)
                .collect::<anyhow::Result<_>>()?,
            tool_counts: s
                .tool_counts
                .iter()
                .map(|t| ToolCountsState {
                    generated: t.generated,
                    generated_accepted: t.generated_accepted,
                    left_out: t
                        .left_out
                        .iter()
                        .map(|(k, v)| (k.name().to_string(), *v))
                        .collect(),
                })
                .collect(),
            requests: s
                .requests
                .iter()
                .map(phase_state)
                .collect::<anyhow::Result<_>>()?,
            checks: s
                .checks
                .iter()
                .map(|c| (c.passes, c.fails, c.example.clone()))
                .collect(),
            sessions: s.sessions,
            examples: s
                .examples
                .iter()
                .map(|(k, v)| (k.name(), v.clone()))
                .collect(),
            tool_error_examples: s.tool_error_examples.clone(),
            server_messages: s.server_messages.clone(),
            malformed: s.malformed,
            by_transport: tables(
                &mut s
                    .by_transport
                    .iter()
                    .map(|(k, t)| (k.name().to_string(), t)),
            )?,
            by_era: tables(&mut s.by_era.iter().map(|(k, t)| (k.name().to_string(), t)))?,
            by_version: tables(&mut s.by_version.iter().map(|(k, t)| (k.name().to_string(), t)))?,
            interval_s: s.interval_s,
            interval_error: s.interval_error.clone(),
            counters: s
                .counters
                .seen()
                .map(|(c, n)| (c.name().to_string(), n))
                .collect(),
            findings: s
                .findings
                .iter()
                .filter_map(|(id, f)| {
                    let check = crate::conformance::Check::from_id(*id)?;
                    Some((check.code().to_string(), f.clone()))
                })
                .collect(),
            client_faults: s
                .client_faults
                .iter()
                .map(|((persona, fault), c)| FaultState {
                    persona: *persona,
                    fault: fault.name().to_string(),
                    verdicts: Verdict::ALL
                        .into_iter()
                        .map(|v| (v.name().to_string(), c.get(v)))
                        .collect(),
                    examples: c
                        .examples
                        .iter()
                        .map(|(v, t)| (v.name().to_string(), t.clone()))
                        .collect(),
                })
                .collect(),
            slowest: s
                .slowest
                .0
                .iter()
                .map(|(p, list)| {
                    let list = list
                        .iter()
                        .map(|x| {
                            (
                                x.latency_us,
                                format!("{:032x}", x.trace),
                                format!("{:016x}", x.span),
                            )
                        })
                        .collect();
                    (p.name().to_string(), list)
                })
                .collect(),
            extensions: s.extensions.0.clone(),
        })
    }

    /// The figures again (the timeline empty).
    pub fn stats(&self) -> anyhow::Result<Stats> {
        let mut s = Stats::new(self.personas.len(), self.tools.len());
        s.phases = phase_table(&self.phases)?;
        for (mine, p) in s.personas.iter_mut().zip(&self.personas) {
            *mine = (phase_table(&p.phases)?, p.sessions);
        }
        for (mine, t) in s.tools.iter_mut().zip(&self.tools) {
            *mine = phase_stats(t)?;
        }
        s.requests = self
            .requests
            .iter()
            .map(phase_stats)
            .collect::<anyhow::Result<_>>()?;
        s.checks = self
            .checks
            .iter()
            .map(|(passes, fails, example)| crate::metrics::CheckCounts {
                passes: *passes,
                fails: *fails,
                example: example.clone(),
            })
            .collect();
        for (mine, t) in s.tool_counts.iter_mut().zip(&self.tool_counts) {
            let mut left_out = BTreeMap::new();
            for (name, n) in &t.left_out {
                let reason = by_name(LeftOut::ALL, |r| r.name().into(), name)
                    .with_context(|| format!("unknown left-out reason `{name}`"))?;
                left_out.insert(reason, *n);
            }
            *mine = ToolCounts {
                generated: t.generated,
                generated_accepted: t.generated_accepted,
                left_out,
            };
        }
        s.sessions = self.sessions;
        for (name, texts) in &self.examples {
            let kind = FailureKind::from_name(name)
                .with_context(|| format!("unknown failure kind `{name}`"))?;
            s.examples.insert(kind, texts.clone());
        }
        s.tool_error_examples.clone_from(&self.tool_error_examples);
        s.server_messages.clone_from(&self.server_messages);
        s.malformed = self.malformed;
        for (name, t) in &self.by_transport {
            let k = TransportKind::from_name(name)
                .with_context(|| format!("unknown transport `{name}`"))?;
            s.by_transport.insert(k, phase_table(t)?);
        }
        for (name, t) in &self.by_era {
            let k = era_of(name).with_context(|| format!("unknown era `{name}`"))?;
            s.by_era.insert(k, phase_table(t)?);
        }
        for (name, t) in &self.by_version {
            s.by_version.insert(VersionId::of(name), phase_table(t)?);
        }
        s.interval_s = self.interval_s;
        s.interval_error.clone_from(&self.interval_error);
        for (name, n) in &self.counters {
            let c = by_name(Counter::ALL, |c| c.name().into(), name)
                .with_context(|| format!("unknown counter `{name}`"))?;
            s.counters.add(c, *n);
        }
        for (code, f) in &self.findings {
            let check = by_name(crate::conformance::Check::ALL, |c| c.code().into(), code)
                .with_context(|| format!("unknown finding `{code}`"))?;
            s.findings.insert(check.id(), f.clone());
        }
        for f in &self.client_faults {
            let fault = ClientFault::from_name(&f.fault)
                .with_context(|| format!("unknown client fault `{}`", f.fault))?;
            let verdict = |name: &str| {
                by_name(Verdict::ALL, |v| v.name().into(), name)
                    .with_context(|| format!("unknown verdict `{name}`"))
            };
            let mut counts = FaultCounts::default();
            for (name, n) in &f.verdicts {
                counts.verdicts[verdict(name)?.index()] = *n;
            }
            for (name, text) in &f.examples {
                counts.examples.push((verdict(name)?, text.clone()));
            }
            s.client_faults.insert((f.persona, fault), counts);
        }
        s.extensions
            .merge(&crate::metrics::Extensions(self.extensions.clone()));
        for (name, list) in &self.slowest {
            let phase = crate::metrics::Phase::from_name(name)
                .with_context(|| format!("unknown phase `{name}` in slowest"))?;
            for (us, trace, span) in list {
                let trace = u128::from_str_radix(trace, 16).context("a trace id is not hex")?;
                let span = u64::from_str_radix(span, 16).context("a span id is not hex")?;
                s.slowest.keep(phase, *us, trace, span);
            }
        }
        Ok(s)
    }
}
