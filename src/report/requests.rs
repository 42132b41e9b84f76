//! `mcp-fleet report --from-requests FILE`: a run's requests file (`run --requests`,
//! plain or zstd) read back and folded by the collector the way the run folded its
//! samples, into a summary whose counts — sessions, phases, failures by kind, personas,
//! tools, request steps, eras, versions, transports — are the run's `summary.json`'s.
//! Latencies are rebuilt from whole microseconds, so percentiles can differ from the
//! run's by a microsecond; skipped steps, counters, findings and examples are not in
//! the file. A file this version cannot read — a newer format, a line that is not a
//! record, no footer (cut short) — is an error, never a partial summary.

use crate::metrics::requests::{FORMAT, HEADER_KEY};
use crate::metrics::{
    Collector, Event, FailureKind, Outcome, PersonaId, Phase, Sample, SessionOutcome, Span,
};
use crate::protocol::{Era, TransportKind, VersionId};
use crate::summary::{LoadInfo, Summary};
use anyhow::{bail, Context};
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::{Duration, SystemTime};
use tokio::time::Instant;

/// The four bytes a zstd frame starts with.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

#[derive(Deserialize)]
struct Header {
    run: String,
    started_at: String,
    shard: String,
    personas: Vec<PersonaEntry>,
    #[serde(default)]
    tools: Vec<String>,
    #[serde(default)]
    requests: Vec<String>,
}

#[derive(Deserialize)]
struct PersonaEntry {
    name: String,
    transport: String,
}

/// One line after the header: a sample, a session's end, or the footer.
#[derive(Deserialize)]
struct Record<'a> {
    session: Option<u64>,
    #[serde(borrow)]
    persona: Option<Cow<'a, str>>,
    era: Option<&'a str>,
    version: Option<&'a str>,
    phase: Option<&'a str>,
    #[serde(borrow)]
    tool: Option<Cow<'a, str>>,
    intended_us: Option<u64>,
    start_us: Option<u64>,
    latency_us: Option<u64>,
    outcome: Option<&'a str>,
    kind: Option<&'a str>,
    end: Option<&'a str>,
    #[serde(rename = "mcp_fleet_requests_end")]
    footer: Option<u64>,
    records: Option<u64>,
}

/// `report --from-requests FILE [--out DIR]`: print the summary `path` rebuilds (in
/// `view`); with `out`, also write it there as `summary.json` and `summary.txt`.
pub fn command(path: &Path, out: Option<&Path>, view: super::text::View) -> anyhow::Result<()> {
    let summary = summary(path)?;
    crate::console::outln(format_args!("{}", super::text::render_view(&summary, view)));
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let json = serde_json::to_vec_pretty(&summary)?;
        let written = super::write_atomically(&dir.join("summary.json"), &json).and_then(|()| {
            let text = super::text::render(&summary);
            super::write_atomically(&dir.join("summary.txt"), text.as_bytes())
        });
        written.with_context(|| format!("writing to {}", dir.display()))?;
        crate::console::outln(format_args!(
            "summary: {}",
            dir.join("summary.json").display()
        ));
    }
    Ok(())
}

/// The summary `path` rebuilds.
pub fn summary(path: &Path) -> anyhow::Result<Summary> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("reading the requests file {}", path.display()))?;
    let mut raw = BufReader::with_capacity(1 << 20, file);
    let zst = raw.fill_buf().map(|b| b.starts_with(&ZSTD_MAGIC))?;
    let reader: Box<dyn BufRead> = if zst {
        Box::new(BufReader::with_capacity(
            1 << 20,
            zstd::stream::read::Decoder::with_buffer(raw)?,
        ))
    } else {
        Box::new(raw)
    };
    read(reader).with_context(|| format!("the requests file {}", path.display()))
}

/// Fold what `reader` holds into a summary.
fn read(mut reader: Box<dyn BufRead>) -> anyhow::Result<Summary> {
    let mut line = Vec::with_capacity(512);
    if next_line(&mut reader, &mut line)? == 0 {
        bail!("it is empty: no header line (was the run killed before it started?)");
    }
    let header = header(&line)?;
    let mut fold = Fold::new(&header)?;
    let mut n = 1u64;
    loop {
        line.clear();
        if next_line(&mut reader, &mut line)? == 0 {
            bail!(
                "it ends after line {n} without its footer: cut short (a killed run, a copy \
                 still being written, a truncated download)"
            );
        }
        n += 1;
        if !line.ends_with(b"\n") {
            bail!("line {n} is cut short (no end of line): the file is truncated");
        }
        let record: Record = serde_json::from_slice(&line)
            .map_err(|e| anyhow::anyhow!("line {n} is not a record: {e}"))?;
        if let Some(format) = record.footer {
            if format != FORMAT || record.records != Some(fold.records) {
                bail!(
                    "line {n}: the footer counts {:?} records, the file has {}",
                    record.records,
                    fold.records
                );
            }
            break;
        }
        fold.record(&record).with_context(|| format!("line {n}"))?;
    }
    line.clear();
    if next_line(&mut reader, &mut line)? != 0 {
        bail!("line {}: more after the footer", n + 1);
    }
    Ok(fold.finish(&header))
}

/// The next line into `line` (its `\n` kept); 0 at the end. Bytes that do not
/// decompress are an error of their own.
fn next_line(reader: &mut Box<dyn BufRead>, line: &mut Vec<u8>) -> anyhow::Result<usize> {
    reader
        .read_until(b'\n', line)
        .context("it does not read back (a cut or corrupt zstd frame?)")
}

fn header(line: &[u8]) -> anyhow::Result<Header> {
    let value: serde_json::Value = serde_json::from_slice(line)
        .map_err(|_| anyhow::anyhow!("the first line is not a requests-file header"))?;
    let format = value.get(HEADER_KEY).and_then(serde_json::Value::as_u64);
    match format {
        None => bail!("the first line is not a requests-file header (no \"{HEADER_KEY}\")"),
        Some(f) if f > FORMAT => bail!(
            "it is of format {f}, written by a newer mcp-fleet; this one reads format {FORMAT}: \
             read it with the mcp-fleet that wrote it"
        ),
        Some(_) => {}
    }
    serde_json::from_value(value).context("its header")
}

/// The records folded so far.
struct Fold {
    collector: Collector,
    personas: HashMap<String, PersonaId>,
    tools: HashMap<String, u16>,
    requests: HashMap<String, u16>,
    sessions: HashSet<u64>,
    base: Instant,
    /// The end of the last sample, from the run's start.
    last: Duration,
    records: u64,
}

impl Fold {
    fn new(h: &Header) -> anyhow::Result<Fold> {
        let transports = h
            .personas
            .iter()
            .map(|p| {
                TransportKind::from_name(&p.transport)
                    .with_context(|| format!("header: no transport {:?}", p.transport))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let (collector, recorder) = Collector::new(transports, h.tools.len());
        drop(recorder);
        let index = |names: &[String]| -> HashMap<String, u16> {
            (0u16..).zip(names).map(|(i, n)| (n.clone(), i)).collect()
        };
        let names: Vec<String> = h.personas.iter().map(|p| p.name.clone()).collect();
        Ok(Fold {
            collector,
            personas: index(&names),
            tools: index(&h.tools),
            requests: index(&h.requests),
            sessions: HashSet::new(),
            base: Instant::now(),
            last: Duration::ZERO,
            records: 0,
        })
    }

    fn record(&mut self, r: &Record<'_>) -> anyhow::Result<()> {
        self.records += 1;
        let session = r.session.context("no \"session\"")?;
        let persona = match r.persona.as_deref() {
            None => PersonaId::MAX,
            Some(name) => *self
                .personas
                .get(name)
                .with_context(|| format!("persona {name:?} is not in the header"))?,
        };
        if session > 0 && self.sessions.insert(session) {
            self.collector.add(Event::SessionStarted { persona });
        }
        if let Some(end) = r.end {
            let outcome = match end {
                "unreachable" => SessionOutcome::Unreachable,
                "interrupted" => SessionOutcome::Interrupted,
                other => bail!("a session cannot end {other:?}"),
            };
            self.end(session, persona, outcome);
            return Ok(());
        }
        let phase = r.phase.context("neither \"phase\" nor \"end\"")?;
        let phase = Phase::from_name(phase).with_context(|| format!("no phase {phase:?}"))?;
        let tool = match r.tool.as_deref() {
            None => None,
            Some(name) => {
                let table = match phase {
                    Phase::Request => &self.requests,
                    _ => &self.tools,
                };
                let id = table.get(name);
                Some(*id.with_context(|| format!("{name:?} is not in the header"))?)
            }
        };
        let outcome = match (r.outcome, r.kind) {
            (Some("ok"), _) => Outcome::Ok,
            (Some("tool_error"), _) => Outcome::ToolError,
            (Some("failed"), Some(kind)) => Outcome::Failed(
                FailureKind::from_name(kind).with_context(|| format!("no failure {kind:?}"))?,
            ),
            _ => bail!("no outcome (\"ok\", \"tool_error\", or \"failed\" with a \"kind\")"),
        };
        let us = |v: Option<u64>, name: &str| {
            v.map(Duration::from_micros)
                .with_context(|| format!("no \"{name}\""))
        };
        let started = us(r.start_us, "start_us")?;
        let intended = us(r.intended_us, "intended_us")?;
        let latency = us(r.latency_us, "latency_us")?;
        self.last = self.last.max(started + latency);
        let origin = crate::metrics::Origin {
            session,
            persona,
            era: match r.era {
                Some("modern") => Era::Modern,
                _ => Era::Legacy,
            },
            version: r.version.map_or(VersionId::OTHER, VersionId::of),
        };
        let span = Span {
            intended: self.base + intended,
            started: self.base + started,
            finished: self.base + started + latency,
        };
        let sample = Sample::new(phase, origin, tool, span, outcome);
        self.collector.add(Event::Sample(sample));
        if phase == Phase::Session {
            let ended = match outcome {
                Outcome::Failed(_) => SessionOutcome::Failed,
                _ => SessionOutcome::Completed,
            };
            self.end(session, persona, ended);
        }
        Ok(())
    }

    fn end(&mut self, session: u64, persona: PersonaId, outcome: SessionOutcome) {
        self.collector.add(Event::SessionEnded {
            session,
            persona,
            outcome,
        });
    }

    fn finish(self, h: &Header) -> Summary {
        let started_at =
            humantime::parse_rfc3339_weak(&h.started_at).unwrap_or(SystemTime::UNIX_EPOCH);
        let stats = self.collector.into_stats();
        let basis = super::assemble::PlanBasis {
            name: h.run.clone(),
            seed: 0,
            load: LoadInfo {
                model: "unknown".into(),
                clients: None,
                max_in_flight: None,
                rate_per_s: None,
                iteration_rate_per_s: None,
                sessions: None,
                duration_s: None,
                think: String::new(),
                description: "rebuilt from a requests file".into(),
                timeout_ms: 0.0,
            },
            personas: h.personas.iter().map(|p| p.name.clone()).collect(),
            tools: h.tools.clone(),
            requests: h.requests.clone(),
            checks: Vec::new(),
            thresholds: Vec::new(),
        };
        let shard = (h.shard != crate::shard::Shard::ONE.to_string()).then(|| h.shard.clone());
        let facts = super::assemble::RunFacts {
            started_at,
            finished_at: started_at + self.last,
            duration: self.last,
            target: "(rebuilt from a requests file)".into(),
            transport: String::new(),
            stopped_by: "requests file".into(),
            stopped_because: None,
            resources: Vec::new(),
            soak: Default::default(),
            checkpoint_at: None,
            shard,
            shards: None,
            outputs: Vec::new(),
        };
        super::assemble::summary_from(&basis, &[], &stats, &facts)
    }
}

#[cfg(test)]
mod tests;
