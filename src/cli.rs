//! The command line (clap derive). Names here are a contract: users and scripts rely on
//! them. Each subcommand maps onto one entry point in `lib.rs`.

use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "mcp-fleet",
    version,
    about = "Load-test MCP servers with a fleet of mock clients"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a load test. Without a profile or a target: the quickstart against the
    /// built-in server.
    Run(Box<RunArgs>),
    /// Run the built-in reference MCP server.
    Serve(ServeArgs),
    /// Check a profile and print the resolved plan.
    Validate(ValidateArgs),
    /// Rebuild report.html, summary.txt and thresholds.xml from a results folder.
    Report(ReportArgs),
    /// Compare two results folders phase by phase; optionally fail on regressions.
    Compare(CompareArgs),
    /// Open one session and show it the way the MCP Inspector does: the handshake, the
    /// server's capabilities, every tool, resource and prompt, timings and findings.
    Inspect(Box<InspectArgs>),
}

#[derive(Debug, Default, Args)]
pub struct RunArgs {
    /// Profile file (TOML). Without it, and without --target/--stdio: the quickstart.
    pub profile: Option<PathBuf>,
    /// Server URL; http:// or https:// → Streamable HTTP.
    #[arg(long, value_name = "URL", conflicts_with = "stdio")]
    pub target: Option<String>,
    /// Spawn this command per session and speak stdio to it.
    #[arg(long, value_name = "\"CMD ARGS...\"")]
    pub stdio: Option<String>,
    /// Concurrent virtual clients.
    #[arg(long, value_name = "N")]
    pub clients: Option<u32>,
    /// Stop after N sessions in total.
    #[arg(long, value_name = "N")]
    pub sessions: Option<u64>,
    /// Stop after this long, e.g. 30s.
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<String>,
    /// Open model: sessions arrive at this rate, e.g. 500/s (with --duration).
    #[arg(long, value_name = "N/s", conflicts_with_all = ["clients", "ramp"])]
    pub rate: Option<String>,
    /// Open model: most sessions in flight; arrivals beyond are counted as dropped.
    #[arg(long, value_name = "N")]
    pub max_in_flight: Option<u32>,
    /// Closed model in stages, 'CLIENTS:DURATION,...' (linear from 0), e.g. '50:30s,50:1m,0:10s'.
    #[arg(long, value_name = "STAGES", conflicts_with = "clients")]
    pub ramp: Option<String>,
    /// Pause between a client's sessions: 100ms, a range 100ms..1s, or exp:200ms.
    #[arg(long, value_name = "DURATION")]
    pub think: Option<String>,
    /// Connect from these local addresses in turn (127.0.0.1-127.0.0.8 or a comma
    /// list), beyond one address's ephemeral ports.
    #[arg(long, value_name = "ADDRS")]
    pub source_addresses: Option<String>,
    /// Streamable HTTP: reuse connections across sessions (a pooled HTTP agent, as the
    /// TypeScript SDK on Node's fetch has) instead of one set per session.
    #[arg(long)]
    pub keep_alive: bool,
    /// Seed for every random choice.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub client: ClientArgs,
    /// Results folder (default: results/<name>-<time>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print only the results folder's path and errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// Pass/fail rule checked after the run (repeatable), e.g. 'p99(initialize) < 50ms',
    /// 'error_rate < 0.1%', 'rate(sessions) > 500', 'p99(tools/call, persona=NAME) < 20ms'.
    /// A failed one makes the exit code 1.
    #[arg(long = "threshold", value_name = "EXPR")]
    pub thresholds: Vec<String>,
    /// Serve the live figures for Prometheus on this loopback address (GET /metrics),
    /// e.g. 127.0.0.1:9464.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    /// Length of the intervals in the .hlog and CSV files and the live view, e.g. 1s.
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<String>,
    /// Fail the run (exit code 1) when any conformance finding of error severity is seen.
    #[arg(long)]
    pub strict: bool,
    /// Also call the list methods of capabilities the server did not declare, and
    /// expect -32601 (method not found).
    #[arg(long)]
    pub probe_undeclared: bool,
}

/// How every persona speaks, shared by `run` and `inspect`.
#[derive(Debug, Clone, Default, Args)]
pub struct ClientArgs {
    /// Transport for every persona: stdio, http (Streamable HTTP), sse (legacy HTTP+SSE),
    /// ws (WebSocket). Default: from the URL scheme.
    #[arg(long, value_name = "KIND", value_parser = ["stdio", "http", "sse", "ws"])]
    pub transport: Option<String>,
    /// Protocol era for every persona: legacy (initialize), modern (2026-07-28,
    /// stateless), auto (probe with server/discover).
    #[arg(long, value_name = "ERA", value_parser = ["legacy", "modern", "auto"])]
    pub era: Option<String>,
    /// Protocol version every persona offers (any string).
    #[arg(long, value_name = "V")]
    pub protocol_version: Option<String>,
    /// clientInfo.name for every persona.
    #[arg(long, value_name = "NAME")]
    pub client_name: Option<String>,
    /// Declare a client capability on every persona, KEY=JSON (repeatable), e.g.
    /// --capability sampling={} --capability 'roots={"listChanged":true}'.
    #[arg(long = "capability", value_name = "KEY=JSON")]
    pub capabilities: Vec<String>,
    /// Extra HTTP header, 'Name: value' (repeatable; also on WebSocket upgrades).
    #[arg(long = "header", value_name = "'K: V'")]
    pub headers: Vec<String>,
    /// Accept any TLS certificate (https://, wss://).
    #[arg(long)]
    pub insecure: bool,
    /// Per-request timeout, e.g. 10s.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Largest message a server may send (a body, an SSE event, a stdio line, a
    /// WebSocket message), in bytes or with a KiB/MiB suffix; larger fails the session
    /// as message_too_large. Default 16MiB.
    #[arg(long, value_name = "BYTES")]
    pub max_message_size: Option<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A results folder (holds summary.json).
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The results folder to compare against.
    pub base: PathBuf,
    /// The results folder of the newer run.
    pub new: PathBuf,
    /// Exit 1 when a phase changed this much (repeatable), e.g. 'p99 > +10%',
    /// 'p99(initialize) > +5ms', 'rate < -20%'.
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<String>,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["http", "stdio"])))]
pub struct ServeArgs {
    /// Serve Streamable HTTP on this address (path /mcp), e.g. 127.0.0.1:3000.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// Serve one session on stdin/stdout.
    #[arg(long)]
    pub stdio: bool,
    /// Items per list page.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub page_size: usize,
    /// Answer every HTTP request as an SSE stream instead of JSON.
    #[arg(long)]
    pub sse_responses: bool,
    /// Which protocol eras to serve: legacy, modern or both (one endpoint, as the
    /// TypeScript v2 and Python v2 SDK servers do).
    #[arg(long, default_value = "both", value_parser = ["legacy", "modern", "both"])]
    pub era: String,
    /// Fault: forget a Streamable HTTP session after N requests (clients must
    /// re-initialize after the 404).
    #[arg(long, value_name = "N")]
    pub expire_sessions_after: Option<u32>,
    /// Fault: cut a tool call's SSE stream after N messages (clients must resume with
    /// Last-Event-ID).
    #[arg(long, value_name = "N")]
    pub sse_drop_after: Option<usize>,
    /// Fault: from this long after start (e.g. 5s), every message waits until
    /// --stall-for has passed.
    #[arg(long, value_name = "DURATION", requires = "stall_for", value_parser = humantime::parse_duration)]
    pub stall_at: Option<std::time::Duration>,
    /// Fault: how long the server stalls (with --stall-at), e.g. 1s.
    #[arg(long, value_name = "DURATION", requires = "stall_at", value_parser = humantime::parse_duration)]
    pub stall_for: Option<std::time::Duration>,
    /// Fault: make a protocol mistake on purpose, to test conformance checks
    /// (repeatable), e.g. --fault wrong-jsonrpc --fault echo-version.
    #[arg(long = "fault", value_name = "NAME",
          value_parser = clap::builder::PossibleValuesParser::new(crate::server::Fault::names()))]
    pub faults: Vec<String>,
}

#[derive(Debug, Default, Args)]
pub struct InspectArgs {
    /// Server URL (http(s)://, ws(s)://). Without it and without --stdio: the built-in
    /// server.
    #[arg(value_name = "URL", conflicts_with = "stdio")]
    pub target: Option<String>,
    /// Spawn this command and speak stdio to it.
    #[arg(long, value_name = "\"CMD ARGS...\"")]
    pub stdio: Option<String>,
    /// Take the persona from this profile (its target too, unless given here).
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// The profile's persona to play (default: the first).
    #[arg(long, value_name = "NAME")]
    pub persona: Option<String>,
    #[command(flatten)]
    pub client: ClientArgs,
    /// Also call the list methods of undeclared capabilities and expect -32601.
    #[arg(long)]
    pub probe_undeclared: bool,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also print every wire message.
    #[arg(long)]
    pub raw: bool,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Profile file (TOML).
    pub profile: PathBuf,
}
