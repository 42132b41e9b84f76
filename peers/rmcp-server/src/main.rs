//! rmcp-peer: an independent MCP server, built on the official Rust SDK (rmcp), that mcp-fleet's tests load-test against.
//!
//! Usage:
//!   rmcp-peer --stdio
//!   rmcp-peer --http ADDR [--stateless [--json-response]] [--exit-on-stdin-eof]
//!
//! In `--http` mode the server prints exactly one line, `listening on http://ADDR/mcp`,
//! once the socket is bound, then serves until SIGTERM/SIGINT (or, with
//! `--exit-on-stdin-eof`, until stdin is closed).

use std::{io::Write, net::SocketAddr, process::ExitCode, sync::Arc};

use anyhow::{bail, Context as _};
use rmcp::{
    handler::server::{
        router::{prompt::PromptRouter, tool::ToolRouter},
        wrapper::Parameters,
    },
    model::{
        CallToolResult, ContentBlock, Implementation, ListResourcesResult, PaginatedRequestParams,
        PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
        Resource, ResourceContents, Role, ServerCapabilities, ServerConfig,
    },
    prompt, prompt_handler, prompt_router,
    service::{RequestContext, ServerInitializeError},
    tool, tool_handler, tool_router,
    transport::{
        stdio, streamable_http_server::session::local::LocalSessionManager,
        StreamableHttpServerConfig, StreamableHttpService,
    },
    ErrorData, RoleServer, ServerHandler, ServiceExt,
};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::{
    io::AsyncReadExt,
    signal::unix::{signal, SignalKind},
};

/// The two static text resources the server offers.
const RESOURCES: [(&str, &str, &str); 2] = [
    (
        "mem://peer/readme",
        "readme",
        "rmcp-peer: a test peer for mcp-fleet.",
    ),
    ("mem://peer/numbers", "numbers", "1 2 3 5 8 13"),
];

#[derive(Debug, Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct AddArgs {
    /// First addend.
    a: f64,
    /// Second addend.
    b: f64,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct GreetingArgs {
    /// Who to greet.
    name: String,
}

#[derive(Clone)]
struct Peer {
    tool_router: ToolRouter<Self>,
    prompt_router: PromptRouter<Self>,
}

impl Peer {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
            prompt_router: Self::prompt_router(),
        }
    }
}

#[tool_router]
impl Peer {
    #[tool(description = "Return the given message unchanged")]
    fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        args.message
    }

    #[tool(description = "Add two numbers and return the sum as text")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }

    #[tool(description = "Always fail with a tool-level error (isError: true)")]
    fn fail(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text("this tool always fails")])
    }
}

#[prompt_router]
impl Peer {
    #[prompt(description = "A one-line greeting for the given name")]
    fn greeting(&self, Parameters(args): Parameters<GreetingArgs>) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(
            Role::User,
            format!("Say hello to {}.", args.name),
        )]
    }
}

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        // The protocol version is left at rmcp's default so that rmcp negotiates it.
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_prompts()
                .enable_resources()
                .enable_tools()
                .build(),
        )
        .with_server_info(Implementation::new("rmcp-peer", env!("CARGO_PKG_VERSION")))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = RESOURCES
            .iter()
            .map(|(uri, name, _)| Resource::new(*uri, *name).with_mime_type("text/plain"))
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match RESOURCES.iter().find(|(uri, _, _)| *uri == request.uri) {
            Some((uri, _, text)) => {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(*text, *uri)]).into())
            }
            None => Err(ErrorData::resource_not_found(
                format!("no such resource: {}", request.uri),
                None,
            )),
        }
    }
}

enum Mode {
    Stdio,
    Http(HttpOptions),
}

struct HttpOptions {
    addr: SocketAddr,
    stateless: bool,
    json_response: bool,
    exit_on_stdin_eof: bool,
    nagle: bool,
}

fn parse_args() -> anyhow::Result<Mode> {
    let mut stdio = false;
    let mut http: Option<SocketAddr> = None;
    let mut stateless = false;
    let mut json_response = false;
    let mut exit_on_stdin_eof = false;
    let mut nagle = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stdio" => stdio = true,
            "--http" => {
                let value = args.next().context("--http needs an address")?;
                http = Some(
                    value
                        .parse()
                        .with_context(|| format!("bad address {value}"))?,
                );
            }
            "--stateless" => stateless = true,
            "--json-response" => json_response = true,
            "--exit-on-stdin-eof" => exit_on_stdin_eof = true,
            "--nagle" => nagle = true,
            other => bail!("unknown argument {other}"),
        }
    }
    match (stdio, http) {
        (true, None) if !stateless && !json_response && !exit_on_stdin_eof && !nagle => {
            Ok(Mode::Stdio)
        }
        // rmcp honours json_response only in stateless mode.
        (false, Some(addr)) if stateless || !json_response => Ok(Mode::Http(HttpOptions {
            addr,
            stateless,
            json_response,
            exit_on_stdin_eof,
            nagle,
        })),
        _ => bail!(
            "usage: rmcp-peer --stdio | rmcp-peer --http ADDR [--stateless [--json-response]] [--exit-on-stdin-eof] [--nagle]"
        ),
    }
}

async fn run_stdio() -> anyhow::Result<()> {
    let running = match Peer::new().serve(stdio()).await {
        Ok(running) => running,
        // stdin closed before a session began: a normal way to end.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    running.waiting().await?;
    Ok(())
}

async fn run_http(options: HttpOptions) -> anyhow::Result<()> {
    let HttpOptions {
        addr,
        stateless,
        json_response,
        exit_on_stdin_eof,
        nagle,
    } = options;
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!stateless)
        .with_json_response(json_response);
    let shutdown = config.cancellation_token.clone();
    let service = StreamableHttpService::new(
        || Ok(Peer::new()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("bind {addr}"))?;
    let local = listener.local_addr()?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{local}/mcp")?;
        out.flush()?;
    }
    // No graceful drain: open SSE streams would hold it up, and tests just want the process gone.
    tokio::select! {
        // TCP_NODELAY, as a server should: without it, rmcp's SSE responses (priming event,
        // then the message, in separate writes) meet the client's delayed ACK and take
        // ~40 ms on loopback. `--nagle` keeps Nagle on to show that effect.
        served = axum::serve(
            axum::serve::ListenerExt::tap_io(listener, move |tcp| {
                let _ = tcp.set_nodelay(!nagle);
            }),
            app,
        ) => served?,
        () = shutdown_signal(exit_on_stdin_eof) => shutdown.cancel(),
    }
    Ok(())
}

/// Resolves on SIGINT, SIGTERM, or (when asked) end of stdin.
async fn shutdown_signal(exit_on_stdin_eof: bool) {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    let stdin_eof = async {
        if !exit_on_stdin_eof {
            return std::future::pending().await;
        }
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 256];
        while let Ok(n) = stdin.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    };
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
        _ = stdin_eof => {}
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("rmcp-peer: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let mode = parse_args()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = match mode {
        Mode::Stdio => runtime.block_on(run_stdio()),
        Mode::Http(options) => runtime.block_on(run_http(options)),
    };
    // A pending blocking read of stdin must not keep the process alive.
    runtime.shutdown_background();
    result
}
