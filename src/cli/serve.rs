//! `mcp-fleet serve`'s command line: the reference server's switches, its endpoints in
//! the help, and its eras and faults by the names users type; and the server started
//! from them ([`run`]).

use crate::console;
use crate::server::{self, Eras, Fault};
use anyhow::Context;
use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use std::net::SocketAddr;
use std::path::PathBuf;

/// `serve --help`'s list of what the HTTP server answers.
const SERVE_AFTER_HELP: &str = "\
Endpoints of --http ADDR (one port, both eras unless --era says otherwise):
  POST/GET/DELETE /mcp   Streamable HTTP: requests, the GET notification stream
                         (resumable with Last-Event-ID), DELETE ends a session
  GET  /sse              legacy HTTP+SSE (2024-11-05): the event stream, whose first event
                         names the POST address
  POST /messages         legacy HTTP+SSE: the client's messages (?sessionId=…)
  GET  /ws               WebSocket upgrade, subprotocol mcp
  GET  /metrics          Prometheus text: process_resident_memory_bytes, process_open_fds,
                         process_cpu_seconds_total, process_threads, mcp_active_sessions,
                         mcp_sessions_total
With --auth, /mcp, /sse, /messages and /ws want Authorization: Bearer (else 401 with
WWW-Authenticate naming the metadata), and these answer without a token:
  GET  /.well-known/oauth-protected-resource[/mcp]  protected resource metadata (RFC 9728)
  GET  /.well-known/oauth-authorization-server      authorization server metadata (RFC 8414)
  POST /token            client-credentials grant (form: grant_type, client_id,
                         client_secret or HTTP Basic, scope, resource); tokens are bound
                         to the resource asked for (default: this server's /mcp)
--stdio serves one session on stdin/stdout instead.";

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["http", "stdio"])))]
#[command(after_help = SERVE_AFTER_HELP)]
pub struct ServeArgs {
    /// Serve Streamable HTTP on this address (path /mcp), e.g. 127.0.0.1:3000 (port 0:
    /// any free one); also legacy SSE (/sse, /messages), WebSocket (/ws) and Prometheus
    /// metrics of the server's process and sessions (/metrics). See Endpoints below.
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
    #[arg(long, default_value = "both")]
    pub era: Eras,
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
    /// Drop Streamable HTTP sessions no request named for this long (they answer 404
    /// after), e.g. 30s; 0 keeps them until DELETE. Default 10m.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub session_ttl: Option<std::time::Duration>,
    /// Fault: make a protocol mistake on purpose, to test conformance checks
    /// (repeatable), e.g. --fault wrong-jsonrpc --fault echo-version.
    #[arg(long = "fault", value_name = "NAME")]
    pub faults: Vec<Fault>,
    /// Add application tools: one per JSON Schema feature (feature_*), validating their
    /// arguments strictly (-32602 otherwise), and notes (note_create/get/list/delete).
    #[arg(long)]
    pub app_tools: bool,
    /// Require OAuth bearer tokens on every MCP endpoint, with protected resource and
    /// authorization server metadata and a client-credentials token endpoint (/token).
    #[arg(long, requires = "http")]
    pub auth: bool,
    /// With --auth: also accept the tokens of this file (one a line), for any resource.
    #[arg(long, value_name = "FILE", requires = "auth")]
    pub auth_tokens: Option<PathBuf>,
    /// With --auth: the client the token endpoint knows (default mcp-fleet:mcp-fleet-secret).
    #[arg(long, value_name = "ID:SECRET", requires = "auth")]
    pub auth_client: Option<String>,
    /// With --auth: how long a minted token lives (its expires_in), e.g. 2s. Default 1h.
    #[arg(long, value_name = "DURATION", requires = "auth", value_parser = humantime::parse_duration)]
    pub token_ttl: Option<std::time::Duration>,
    /// Serve task tools (protocol 2025-11-25): slow_report must be called as a task,
    /// quick_report may be; tasks/get, tasks/result, tasks/cancel, tasks/list.
    #[arg(long)]
    pub tasks: bool,
    /// Listen with SO_REUSEPORT (with --http): several server processes share one port
    /// and the kernel spreads connections over them. A Streamable HTTP session lives in
    /// one process, so this suits WebSocket sessions (one connection each).
    #[arg(long, requires = "http")]
    pub reuse_port: bool,
    /// Capacity knob: handshakes (initialize, server/discover) wait for one of N workers
    /// and hold it for --service-time, so the server takes at most N / T handshakes a
    /// second whatever the CPU (a known answer for `ceiling`).
    #[arg(long, value_name = "N", requires = "service_time", value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: Option<u32>,
    /// With --workers: how long each handshake holds its worker, e.g. 20ms (no CPU
    /// burnt: it waits).
    #[arg(long, value_name = "DURATION", requires = "workers", value_parser = humantime::parse_duration)]
    pub service_time: Option<std::time::Duration>,
    /// The tool list changes this often (2026-07-28): every open `subscriptions/listen`
    /// that asked for tool-list changes gets `notifications/tools/list_changed`, stamped
    /// with its time (the fleet's `fanout` phase), e.g. 5s. The `notify_list_changed`
    /// tool makes a change on demand.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub change_every: Option<std::time::Duration>,
    /// End each `subscriptions/listen` this long after it opened, with its final
    /// `complete` response (clients re-listen), e.g. 30s. Default: held until the client
    /// goes.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub listen_lifetime: Option<std::time::Duration>,
    /// How the server ends a listen: its final `complete` response, or
    /// `notifications/cancelled` naming it (the spec describes both).
    #[arg(long, value_name = "HOW", value_parser = ["complete", "cancelled"], default_value = "complete")]
    pub listen_end: String,
    /// Listens held at once over every connection; more are refused (-32603).
    #[arg(long, value_name = "N", default_value_t = crate::server::DEFAULT_MAX_LISTENS)]
    pub max_listens: usize,
    /// Declare a protocol extension (SEP-2133) in capabilities.extensions, e.g.
    /// io.modelcontextprotocol/ui (repeatable).
    #[arg(long = "extension", value_name = "ID")]
    pub extensions: Vec<String>,
    /// Declare an extension and refuse every tools/call of a client that did not declare
    /// it (-32602 naming it), as a server that needs it would (repeatable).
    #[arg(long = "require-extension", value_name = "ID")]
    pub require_extensions: Vec<String>,
}

/// `serve --era`: the server's eras by the names the help lists.
impl ValueEnum for Eras {
    fn value_variants<'a>() -> &'a [Self] {
        &[Eras::Legacy, Eras::Modern, Eras::Both]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(match self {
            Eras::Legacy => "legacy",
            Eras::Modern => "modern",
            Eras::Both => "both",
        }))
    }
}

/// `serve --fault NAME`: the faults by their stable names.
impl ValueEnum for Fault {
    fn value_variants<'a>() -> &'a [Self] {
        &Fault::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}

/// `serve --auth` and its options.
fn server_auth(args: &ServeArgs) -> anyhow::Result<Option<server::auth::AuthOptions>> {
    if !args.auth {
        return Ok(None);
    }
    let mut opts = server::auth::AuthOptions::default();
    if let Some(path) = &args.auth_tokens {
        opts.static_tokens = server::auth::read_tokens(path)?;
    }
    if let Some(pair) = &args.auth_client {
        let (id, secret) = pair
            .split_once(':')
            .filter(|(id, _)| !id.is_empty())
            .context("--auth-client wants ID:SECRET")?;
        (opts.client_id, opts.client_secret) = (id.to_string(), secret.to_string());
    }
    if let Some(ttl) = args.token_ttl {
        opts.token_ttl = ttl;
    }
    Ok(Some(opts))
}

/// `mcp-fleet serve`: start the server its flags describe; HTTP until Ctrl-C, stdio
/// until stdin ends.
pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let auth = server_auth(&args)?;
    let opts = server::ServerOptions {
        page_size: args.page_size.max(1),
        sse_responses: args.sse_responses,
        eras: args.era,
        expire_sessions_after: args.expire_sessions_after,
        sse_drop_after: args.sse_drop_after,
        faults: args.faults,
        stall: args.stall_at.zip(args.stall_for),
        session_ttl: Some(args.session_ttl.unwrap_or(server::DEFAULT_SESSION_TTL)),
        app_tools: args.app_tools,
        auth,
        tasks: args.tasks,
        reuse_port: args.reuse_port,
        capacity: args.workers.zip(args.service_time),
        change_every: args.change_every,
        listen_lifetime: args.listen_lifetime,
        listen_end_cancelled: args.listen_end == "cancelled",
        max_listens: args.max_listens,
        extensions: args.extensions,
        require_extensions: args.require_extensions,
        ..Default::default()
    };
    match args.http {
        Some(addr) => {
            let capacity = opts.capacity;
            let change_every = opts.change_every;
            let server = server::spawn_http(addr, opts)
                .await
                .with_context(|| format!("cannot serve on {addr}"))?;
            console::errln(format_args!(
                "mcp-fleet reference server: {} (Streamable HTTP), http://{}/sse (legacy SSE), ws://{}/ws (WebSocket), http://{}/metrics (Prometheus)",
                server.url(),
                server.addr,
                server.addr,
                server.addr
            ));
            if let Some((n, t)) = capacity {
                let per_s = server::capacity::Capacity::new(n, t).per_s();
                console::errln(format_args!(
                    "  capacity: {n} workers × {} per handshake = {per_s:.0} handshakes/s",
                    humantime::format_duration(t)
                ));
            }
            if let Some(every) = change_every {
                console::errln(format_args!(
                    "  listens: the tool list changes every {}, fanned out to every subscriptions/listen",
                    humantime::format_duration(every)
                ));
            }
            let _ = tokio::signal::ctrl_c().await;
            server.shutdown().await;
            Ok(())
        }
        None => server::serve_stdio(opts).await,
    }
}
