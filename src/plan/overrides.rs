//! Command-line values that override the profile: one clap group, flattened into `run`
//! (and built by `inspect`), applied to the profile before it is resolved so the results
//! folder's `profile.toml` shows what actually ran. The flag names and help texts are a
//! contract (users and scripts rely on them), like the rest of `cli.rs`.

use super::error::PlanError;
use super::session_kind::EraMode;
use crate::profile::{self, Profile, StageSection};
use crate::protocol::TransportKind;
use clap::builder::PossibleValue;
use clap::Args;
use serde_json::{json, Value};

/// Values from the command line that win over the profile (all optional). The
/// `display_order`s here and on `RunArgs` keep `run --help` in its historical order.
#[derive(Debug, Clone, Default, Args)]
pub struct Overrides {
    /// Server URL: http:// or https:// → Streamable HTTP (legacy HTTP+SSE with
    /// --transport sse), ws:// or wss:// → WebSocket. Default: the profile's, else the
    /// built-in server.
    #[arg(long, value_name = "URL", conflicts_with = "stdio")]
    pub target: Option<String>,
    /// Spawn this command per session and speak stdio to it.
    #[arg(long, value_name = "\"CMD ARGS...\"")]
    pub stdio: Option<String>,
    /// Concurrent virtual clients (closed model). Default: the profile's, else 10.
    #[arg(long, short = 'c', value_name = "N", allow_negative_numbers = true, value_parser = count::<u32>)]
    pub clients: Option<u32>,
    /// Stop after N sessions in total. Default: the profile's, else 100 when no
    /// duration is given (a run with --target and no profile: 10s instead).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = count::<u64>)]
    pub sessions: Option<u64>,
    /// Stop after this long, e.g. 30s (-z as in oha). Default: the profile's, else no
    /// time limit.
    #[arg(long, short = 'd', short_alias = 'z', value_name = "DURATION")]
    pub duration: Option<String>,
    /// Open model: sessions arrive at this rate, e.g. 500/s (with --duration).
    #[arg(long, short = 'r', value_name = "N/s", conflicts_with_all = ["clients", "ramp"])]
    pub rate: Option<String>,
    /// Long-lived sessions: scenario iterations a second across the whole fleet, e.g.
    /// 200/s (oha's -q; with a one-request scenario, requests a second). Each iteration
    /// takes the next slot of one schedule and is timed from it, so a server that falls
    /// behind shows as response time. Without a profile: each client holds one session
    /// and lists tools at that rate.
    #[arg(long, short = 'q', value_name = "N/s")]
    pub iteration_rate: Option<String>,
    /// Open model: most sessions in flight; arrivals beyond are counted as dropped.
    /// Default 10000.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = count::<u32>)]
    pub max_in_flight: Option<u32>,
    /// Closed model in stages, 'CLIENTS:DURATION,...' (linear from 0), e.g. '50:30s,50:1m,0:10s'.
    #[arg(long, value_name = "STAGES", conflicts_with = "clients")]
    pub ramp: Option<String>,
    /// Pause between a client's sessions: 100ms, a range 100ms..1s, or exp:200ms.
    /// Default 0ms.
    #[arg(long, value_name = "DURATION")]
    pub think: Option<String>,
    /// After a session that could not reach the target, a client waits FIRST, then twice
    /// as long each time up to CAP (jittered), before its next; 'off' reconnects at once.
    /// Default 100ms..5s.
    #[arg(long, value_name = "FIRST..CAP")]
    pub reconnect_backoff: Option<String>,
    /// Stop the run (exit 2, results written) when the target has been unreachable this
    /// long, e.g. 30s. Default: never.
    #[arg(long, value_name = "DURATION")]
    pub abort_on_unreachable: Option<String>,
    /// Connect from these local addresses in turn (127.0.0.1-127.0.0.8 or a comma
    /// list), beyond one address's ephemeral ports.
    #[arg(long, value_name = "ADDRS")]
    pub source_addresses: Option<String>,
    /// Streamable HTTP: reuse connections across sessions (a pooled HTTP agent, as the
    /// TypeScript SDK on Node's fetch has) instead of one set per session.
    #[arg(long)]
    pub keep_alive: bool,
    /// Seed for every random choice. Default: the profile's, else a random one (the
    /// summary shows it, to repeat a run).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub client: ClientArgs,
    /// Pass/fail rule checked after the run (repeatable), e.g. 'p99(initialize) < 50ms',
    /// 'error_rate < 0.1%', 'rate(sessions) > 500', 'p99(tools/call, persona=NAME) < 20ms'.
    /// A failed one makes the exit code 1.
    #[arg(long = "threshold", value_name = "EXPR", display_order = 102)]
    pub thresholds: Vec<String>,
    /// Stop the run as soon as the live figures lose a threshold (k6's abortOnFail):
    /// the results are written, the summary says which and when, exit 1. With
    /// =DELAY (e.g. --abort-on-fail=10s) the first DELAY of the run is not judged.
    /// Applies to every threshold but the soak forms.
    #[arg(
        long,
        value_name = "DELAY",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "0s",
        display_order = 103
    )]
    pub abort_on_fail: Option<String>,
    /// Length of the intervals in the .hlog and CSV files and the live view, e.g. 1s.
    /// Default: 1s.
    #[arg(long, value_name = "DURATION", display_order = 104)]
    pub interval: Option<String>,
    /// Soak: the start of the run left out of the leak slopes and drift, a share of the
    /// run or a duration, e.g. 10% (the default) or 2m.
    #[arg(long, value_name = "SHARE|DURATION", display_order = 105)]
    pub warmup: Option<String>,
    /// Soak: the length of the first and last steady windows drift compares, a share of
    /// the steady part or a duration, e.g. 10% or 5m (default 10% of the run).
    #[arg(long, value_name = "SHARE|DURATION", display_order = 106)]
    pub drift_window: Option<String>,
    /// Watch this server process (repeatable): RSS, CPU, open FDs, threads from /proc,
    /// one point per interval in resources.csv and summary.json.
    #[arg(long = "server-pid", value_name = "PID", display_order = 110)]
    pub server_pids: Vec<u32>,
    /// Watch the server's cgroup v2 folder (memory.current, cpu.stat, pids.current).
    #[arg(long, value_name = "PATH", display_order = 111)]
    pub server_cgroup: Option<String>,
    /// Scrape the server's Prometheus endpoint every interval, e.g.
    /// http://127.0.0.1:9090/metrics (process_* metrics and the profile's [watch] series).
    #[arg(long, value_name = "URL", display_order = 112)]
    pub server_metrics: Option<String>,
    /// Rewrite summary.json, summary.txt, report.html and thresholds.xml from the figures
    /// so far this often, so a killed run leaves results, e.g. 1m; 'off'. Default: 1m
    /// for runs over 5 minutes or without a duration.
    #[arg(long, value_name = "DURATION|off", display_order = 107)]
    pub checkpoint: Option<String>,
    /// Push the figures as the run goes (repeatable): KIND=URL, e.g.
    /// prometheus-rw=http://127.0.0.1:9090/api/v1/write (remote write with native
    /// histograms) or otlp=http://127.0.0.1:4318/v1/metrics (OTLP/HTTP, exponential
    /// histograms). A receiver that is down is a warning, never a failed run.
    #[arg(long, value_name = "KIND=URL", display_order = 113)]
    pub push: Vec<String>,
    /// How often to push, e.g. 5s (the default).
    #[arg(long, value_name = "DURATION", display_order = 114)]
    pub push_every: Option<String>,
    /// The `run` label of pushed series. Default: the profile's name and the start time.
    #[arg(long, value_name = "LABEL", display_order = 115)]
    pub run_label: Option<String>,
    /// Write every timed request (phase sample) of the run to FILE, one JSON record a
    /// line (zstd-compressed when FILE ends in .zst), relative to the current directory;
    /// `mcp-fleet report --from-requests FILE` reads it back.
    #[arg(long, value_name = "FILE", display_order = 116)]
    pub requests: Option<std::path::PathBuf>,
}

/// How every persona speaks, shared by `run` and `inspect`.
#[derive(Debug, Clone, Default, Args)]
pub struct ClientArgs {
    /// Transport for every persona: stdio, http (Streamable HTTP), sse (legacy HTTP+SSE),
    /// ws (WebSocket). Default: from the URL scheme.
    #[arg(long, value_name = "KIND")]
    pub transport: Option<TransportKind>,
    /// Protocol era for every persona: legacy (initialize), modern (2026-07-28,
    /// stateless), auto (probe with server/discover). Default: the profile's, else from
    /// the protocol version (legacy for the 2024–2025 ones).
    #[arg(long, value_name = "ERA")]
    pub era: Option<EraMode>,
    /// Protocol version every persona offers (any string). Default: the profile's, else
    /// the latest of the era (2025-11-25 legacy, 2026-07-28 modern).
    #[arg(long, value_name = "V")]
    pub protocol_version: Option<String>,
    /// clientInfo.name for every persona. Default: the profile's, else mcp-fleet.
    #[arg(long, value_name = "NAME")]
    pub client_name: Option<String>,
    /// Declare a client capability on every persona, KEY=JSON (repeatable), e.g.
    /// --capability sampling={} --capability 'roots={"listChanged":true}'.
    #[arg(long = "capability", value_name = "KEY=JSON")]
    pub capabilities: Vec<String>,
    /// Extra HTTP header, 'Name: value' (repeatable; also on WebSocket upgrades). The
    /// value may name environment variables, 'Authorization: Bearer ${MCP_TOKEN}';
    /// '@FILE' reads 'Name: value' lines from a file. Values are never written out.
    #[arg(long = "header", value_name = "'K: V'|@FILE")]
    pub headers: Vec<String>,
    /// Accept any TLS certificate (https://, wss://).
    #[arg(long)]
    pub insecure: bool,
    /// Per-request timeout, e.g. 30s. Default: 10s.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Largest message a server may send (a body, an SSE event, a stdio line, a
    /// WebSocket message), in bytes or with a KiB/MiB suffix; larger fails the session
    /// as message_too_large. Default 16MiB.
    #[arg(long, value_name = "BYTES")]
    pub max_message_size: Option<String>,
}

/// `--transport` takes the names profiles and reports use.
impl clap::ValueEnum for TransportKind {
    fn value_variants<'a>() -> &'a [Self] {
        &TransportKind::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}

/// `--era` takes the names profiles use.
impl clap::ValueEnum for EraMode {
    fn value_variants<'a>() -> &'a [Self] {
        &EraMode::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}

impl Overrides {
    /// Write the overrides into the profile; `origin` names it in errors. The
    /// `--threshold`s are not written here: they are resolved under their own name.
    pub fn apply(&self, p: &mut Profile, origin: &str) -> Result<(), PlanError> {
        self.apply_target(p, origin)?;
        self.apply_load(p, origin)?;
        self.apply_watch(p);
        self.apply_outputs(p);
        if let Some(s) = self.seed {
            p.seed = Some(s);
        }
        if let Some(w) = &self.warmup {
            p.soak.warmup = Some(w.clone());
        }
        if let Some(w) = &self.drift_window {
            p.soak.window = Some(w.clone());
        }
        self.client.apply(p, origin)
    }

    fn apply_target(&self, p: &mut Profile, origin: &str) -> Result<(), PlanError> {
        if let Some(url) = &self.target {
            p.target.url = Some(url.clone());
            p.target.command = None;
        }
        if let Some(cmd) = &self.stdio {
            p.target.command = Some(profile::Command::Line(cmd.clone()));
            p.target.url = None;
        }
        if let Some(a) = &self.source_addresses {
            p.target.source_addresses = parse_source_list(a, origin)?;
        }
        if self.keep_alive {
            p.target.keep_alive = Some(true);
        }
        Ok(())
    }

    fn apply_outputs(&self, p: &mut Profile) {
        let o = &mut p.outputs;
        o.push.extend(self.push.iter().cloned());
        if let Some(e) = &self.push_every {
            o.push_every = Some(e.clone());
        }
        if let Some(l) = &self.run_label {
            o.run_label = Some(l.clone());
        }
    }

    fn apply_watch(&self, p: &mut Profile) {
        let w = &mut p.watch;
        if !self.server_pids.is_empty() {
            w.server_pid = self.server_pids.clone();
        }
        if let Some(c) = &self.server_cgroup {
            w.server_cgroup = Some(c.clone());
        }
        if let Some(u) = &self.server_metrics {
            w.server_metrics = Some(u.clone());
        }
    }

    fn apply_load(&self, p: &mut Profile, origin: &str) -> Result<(), PlanError> {
        let l = &mut p.load;
        if let Some(n) = self.clients {
            l.clients = Some(n);
        }
        if let Some(n) = self.sessions {
            l.sessions = Some(n);
        }
        if let Some(d) = &self.duration {
            l.duration = Some(d.clone());
        }
        if let Some(r) = &self.rate {
            l.rate = Some(r.clone());
            l.clients = None;
            l.stages = None;
        }
        if let Some(r) = &self.ramp {
            l.stages = Some(parse_ramp(r, origin)?);
            l.clients = None;
            l.rate = None;
        }
        if self.clients.is_some() {
            l.rate = None;
            l.stages = None;
        }
        // A load model on the command line replaces the profile's, set arrivals too (its
        // personas are then drawn by weight).
        if self.clients.is_some() || self.rate.is_some() || self.ramp.is_some() {
            l.arrivals = None;
        }
        if let Some(t) = &self.think {
            l.think = Some(t.clone());
        }
        if let Some(n) = self.max_in_flight {
            l.max_in_flight = Some(n);
        }
        if let Some(r) = &self.iteration_rate {
            l.iteration_rate = Some(r.clone());
        }
        if let Some(b) = &self.reconnect_backoff {
            l.reconnect_backoff = Some(b.clone());
        }
        if let Some(d) = &self.abort_on_unreachable {
            l.abort_on_unreachable = Some(d.clone());
        }
        if let Some(c) = &self.checkpoint {
            l.checkpoint = Some(c.clone());
        }
        Ok(())
    }
}

impl ClientArgs {
    /// Every persona (a default one if the profile has none) speaks as told.
    fn apply(&self, p: &mut Profile, origin: &str) -> Result<(), PlanError> {
        if let Some(t) = &self.timeout {
            p.target.timeout = Some(t.clone());
        }
        if let Some(s) = &self.max_message_size {
            p.target.max_message_size = Some(s.clone());
        }
        if self.insecure {
            p.target.insecure = Some(true);
        }
        let capabilities = parse_capabilities(&self.capabilities, origin)?;
        let touches_personas = self.transport.is_some()
            || self.era.is_some()
            || self.protocol_version.is_some()
            || self.client_name.is_some()
            || !capabilities.is_empty();
        if p.personas.is_empty() && touches_personas {
            p.personas.push(super::persona::Persona::default_section());
        }
        for persona in &mut p.personas {
            self.apply_to_persona(persona, &capabilities);
        }
        for h in &self.headers {
            // `@FILE`: the header lines stay in the file; the profile names it.
            if let Some(path) = h.strip_prefix('@') {
                p.target.header_files.push(path.trim().to_string());
                continue;
            }
            let Some((name, value)) = h.split_once(':') else {
                return Err(PlanError::new(
                    origin,
                    "--header",
                    "has no ':'",
                    "write it as 'Name: value' (or @FILE to read it from a file)",
                ));
            };
            p.target
                .headers
                .insert(name.trim().to_string(), value.trim().to_string());
        }
        Ok(())
    }

    fn apply_to_persona(&self, persona: &mut profile::PersonaSection, caps: &[(String, Value)]) {
        if let Some(t) = self.transport {
            persona.transport = Some(t.name().to_string());
        }
        if let Some(e) = self.era {
            persona.era = Some(e.name().to_string());
        }
        if let Some(v) = &self.protocol_version {
            persona.protocol_version = Some(v.clone());
            // An explicit version is sent as is: accept whatever is sent back by default.
            if self.era != Some(EraMode::Auto) {
                persona.legacy_version = None;
            }
        }
        if let Some(n) = &self.client_name {
            let mut info = persona.client_info.clone().unwrap_or_default();
            info.name = Some(n.clone());
            persona.client_info = Some(info);
        }
        if !caps.is_empty() {
            let mut declared = persona
                .capabilities
                .clone()
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({}));
            for (k, v) in caps {
                declared[k] = v.clone();
            }
            persona.capabilities = Some(declared);
        }
    }
}

/// `--capability KEY=JSON` (the value defaults to `{}`).
/// A count on the command line: `--clients -1` says what is wrong with it, instead of
/// clap's tip to pass `-1` after `--` (which would make it the PROFILE argument).
fn count<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    match text.trim().parse::<i128>() {
        Ok(n) if n < 0 => Err("must be 1 or more".into()),
        Ok(_) => text.trim().parse().map_err(|_| "is too large".into()),
        Err(_) => Err("not a whole number (e.g. 8)".into()),
    }
}

fn parse_capabilities(items: &[String], origin: &str) -> Result<Vec<(String, Value)>, PlanError> {
    items
        .iter()
        .map(|item| {
            let (k, v) = item.split_once('=').unwrap_or((item, "{}"));
            let value: Value = serde_json::from_str(v).map_err(|e| {
                PlanError::new(
                    origin,
                    "--capability",
                    format!("{item:?}: the value is not JSON ({e})"),
                    "write it as KEY=JSON, e.g. --capability 'roots={\"listChanged\":true}'",
                )
            })?;
            if k.is_empty() || !value.is_object() {
                return Err(PlanError::new(
                    origin,
                    "--capability",
                    format!("{item:?}: needs a name and a JSON object"),
                    "write it as KEY=JSON, e.g. --capability sampling={}",
                ));
            }
            Ok((k.to_string(), value))
        })
        .collect()
}

/// `--ramp 'CLIENTS:DURATION,...'` → closed-model stages.
fn parse_ramp(text: &str, origin: &str) -> Result<Vec<StageSection>, PlanError> {
    let bad = |problem: String| {
        PlanError::new(
            origin,
            "--ramp",
            problem,
            "write it like '50:30s,50:1m,0:10s'",
        )
    };
    text.split(',')
        .map(|part| {
            let (n, d) = part
                .trim()
                .split_once(':')
                .ok_or_else(|| bad(format!("{part:?} is not CLIENTS:DURATION")))?;
            let clients = n
                .trim()
                .parse()
                .map_err(|_| bad(format!("{n:?} is not a number of clients")))?;
            Ok(StageSection {
                clients: Some(clients),
                rate: None,
                duration: d.trim().to_string(),
            })
        })
        .collect()
}

/// `127.0.0.1-127.0.0.8` or `127.0.0.1,127.0.0.2` → the addresses, as strings.
fn parse_source_list(text: &str, origin: &str) -> Result<Vec<String>, PlanError> {
    let bad = |what: &str| {
        PlanError::new(
            origin,
            "--source-addresses",
            format!("{what:?} is not an address or a range"),
            "write '127.0.0.1-127.0.0.8' or '127.0.0.1,127.0.0.2'",
        )
    };
    if let Some((a, b)) = text.split_once('-') {
        let (a, b): (std::net::Ipv4Addr, std::net::Ipv4Addr) = (
            a.trim().parse().map_err(|_| bad(a))?,
            b.trim().parse().map_err(|_| bad(b))?,
        );
        let (lo, hi) = (u32::from(a), u32::from(b));
        if hi < lo || hi - lo > 255 {
            return Err(bad(text));
        }
        return Ok((lo..=hi)
            .map(|n| std::net::Ipv4Addr::from(n).to_string())
            .collect());
    }
    Ok(text.split(',').map(|s| s.trim().to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramps_and_source_lists_parse() {
        let r = parse_ramp("50:30s, 0:10s", "o").expect("ramp");
        assert_eq!((r[0].clients, r[1].duration.as_str()), (Some(50), "10s"));
        assert!(parse_ramp("50-30s", "o").is_err());
        assert_eq!(
            parse_source_list("127.0.0.1-127.0.0.3", "o").expect("range"),
            ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
        );
        assert!(parse_source_list("127.0.0.3-127.0.0.1", "o").is_err());
    }

    #[test]
    fn the_unreachable_flags_land_in_the_load_section() {
        let mut p = Profile::default();
        let o = Overrides {
            reconnect_backoff: Some("1s..10s".into()),
            abort_on_unreachable: Some("30s".into()),
            ..Default::default()
        };
        o.apply(&mut p, "cli").expect("applies");
        assert_eq!(p.load.reconnect_backoff.as_deref(), Some("1s..10s"));
        assert_eq!(p.load.abort_on_unreachable.as_deref(), Some("30s"));
    }

    #[test]
    fn persona_overrides_create_a_default_persona_and_merge_capabilities() {
        let mut p = Profile::default();
        let o = ClientArgs {
            transport: Some(TransportKind::WebSocket),
            era: Some(EraMode::Auto),
            capabilities: vec!["sampling".into()],
            ..Default::default()
        };
        o.apply(&mut p, "cli").expect("applies");
        assert_eq!(p.personas.len(), 1);
        assert_eq!(p.personas[0].transport.as_deref(), Some("ws"));
        assert_eq!(p.personas[0].era.as_deref(), Some("auto"));
        assert_eq!(p.personas[0].capabilities, Some(json!({"sampling": {}})));
    }
}
