//! From the plan's routes to live endpoints: start the built-in server when a persona
//! needs it, build one endpoint per distinct route (shared by every session of those
//! personas), and check each is reachable before the run, so a typo is one clear error
//! (exit 2) rather than thousands of failed sessions.

use crate::plan::{Plan, Route, Target};
use crate::protocol::TransportKind;
use crate::server::{self, HttpServer};
use crate::transport::http::HttpEndpoint;
use crate::transport::legacy_sse::SseEndpoint;
use crate::transport::stdio::{ChildRegistry, StdioCommand};
use crate::transport::ws::WsEndpoint;
use crate::transport::Endpoint;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// How long a stdio server gets at each shutdown step (stdin EOF, then SIGTERM).
const STDIO_GRACE: Duration = Duration::from_secs(2);

/// The endpoints of a run, and the built-in server if one was started.
pub struct Targets {
    /// Indexed by persona id.
    pub endpoints: Vec<Endpoint>,
    /// What the run targets, for the report (one line per distinct route).
    pub description: String,
    /// The transports in use, sorted (`http`, `sse+ws`, …).
    pub transports: String,
    pub builtin: Option<HttpServer>,
    /// The stdio servers alive now (every stdio endpoint fills it), for the watcher.
    pub children: ChildRegistry,
}

impl Targets {
    /// Stop the built-in server, if any.
    pub async fn shutdown(self) {
        if let Some(s) = self.builtin {
            s.shutdown().await;
        }
    }
}

/// Build (and check) every persona's endpoint. `builtin_program` serves the built-in
/// server over stdio (None: this program).
pub async fn resolve(plan: &Plan, builtin_program: Option<&Path>) -> anyhow::Result<Targets> {
    let needs_builtin = plan
        .personas
        .iter()
        .any(|p| p.route.target == Target::BuiltIn && p.route.transport != TransportKind::Stdio);
    let builtin = if needs_builtin {
        let server = server::spawn_http(
            std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            server::ServerOptions {
                app_tools: plan.builtin_app_tools,
                tasks: plan.builtin_tasks,
                auth: plan.builtin_auth.then(|| builtin_auth(plan)),
                change_every: plan.builtin_change_every,
                ..server::ServerOptions::default()
            },
        )
        .await
        .context("starting the built-in server")?;
        Some(server)
    } else {
        None
    };
    let children = ChildRegistry::default();
    let mut distinct: Vec<(Route, Endpoint, String)> = Vec::new();
    let mut endpoints = Vec::new();
    for persona in &plan.personas {
        if let Some((_, ep, _)) = distinct.iter().find(|(r, _, _)| *r == persona.route) {
            endpoints.push(ep.clone());
            continue;
        }
        let (ep, desc) = endpoint(
            plan,
            &persona.route,
            builtin.as_ref(),
            builtin_program,
            &children,
        )?;
        preflight(&ep, plan.connection.timeout).await?;
        distinct.push((persona.route.clone(), ep.clone(), desc));
        endpoints.push(ep);
    }
    let mut kinds: Vec<&str> = distinct
        .iter()
        .map(|(r, _, _)| r.transport.name())
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    let description = distinct
        .iter()
        .map(|(_, _, d)| d.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Targets {
        endpoints,
        description,
        transports: kinds.join("+"),
        builtin,
        children,
    })
}

/// `[target] auth`: the built-in server accepts the tokens of every persona's tokens
/// file, and mints tokens for its default client.
fn builtin_auth(plan: &Plan) -> server::auth::AuthOptions {
    let mut static_tokens: Vec<String> = Vec::new();
    for p in &plan.personas {
        if let Some(crate::plan::TokenSource::Tokens { tokens, .. }) =
            p.auth.as_ref().map(|a| &a.source)
        {
            static_tokens.extend(tokens.iter().cloned());
        }
    }
    static_tokens.sort_unstable();
    static_tokens.dedup();
    server::auth::AuthOptions {
        static_tokens,
        ..server::auth::AuthOptions::default()
    }
}

fn endpoint(
    plan: &Plan,
    route: &Route,
    builtin: Option<&HttpServer>,
    builtin_program: Option<&Path>,
    children: &ChildRegistry,
) -> anyhow::Result<(Endpoint, String)> {
    let url = match &route.target {
        Target::Url(u) => u.clone(),
        Target::BuiltIn if route.transport == TransportKind::Stdio => {
            // The built-in server over stdio is this program run as `serve --stdio`,
            // unless the caller names another build of it (tests do: their own
            // executable is the test harness, not mcp-fleet).
            let exe = match builtin_program {
                Some(p) => p.to_path_buf(),
                None => std::env::current_exe().context("locating this program")?,
            };
            let mut args = vec!["serve".to_string(), "--stdio".to_string()];
            if plan.builtin_app_tools {
                args.push("--app-tools".into());
            }
            if plan.builtin_tasks {
                args.push("--tasks".into());
            }
            if let Some(every) = plan.builtin_change_every {
                args.push("--change-every".into());
                args.push(format!("{}ms", every.as_millis().max(1)));
            }
            let cmd = StdioCommand {
                program: exe.display().to_string(),
                args,
                env: Vec::new(),
                grace: STDIO_GRACE,
                max_message_bytes: plan.connection.max_message_bytes,
                children: children.clone(),
            };
            return Ok((Endpoint::Stdio(Arc::new(cmd)), "built-in (stdio)".into()));
        }
        Target::BuiltIn => {
            let addr = builtin
                .map(|s| s.addr)
                .context("the built-in server is not running")?;
            let (scheme, path) = match route.transport {
                TransportKind::WebSocket => ("ws", "/ws"),
                TransportKind::Sse => ("http", "/sse"),
                _ => ("http", "/mcp"),
            };
            Url::parse(&format!("{scheme}://{addr}{path}"))?
        }
        Target::Stdio { program, args, env } => {
            let cmd = StdioCommand {
                program: program.clone(),
                args: args.clone(),
                env: env.clone(),
                grace: STDIO_GRACE,
                max_message_bytes: plan.connection.max_message_bytes,
                children: children.clone(),
            };
            return Ok((Endpoint::Stdio(Arc::new(cmd)), route.target.describe()));
        }
    };
    let builtin_note = if route.target == Target::BuiltIn {
        " (built-in)"
    } else {
        ""
    };
    let desc = format!("{}{builtin_note}", crate::redact::url(&url));
    // Every network endpoint embeds the plan's one connection config.
    let connection = plan.connection.clone();
    let ep = match route.transport {
        TransportKind::StreamableHttp => {
            Endpoint::Http(Arc::new(HttpEndpoint::new(&url, connection)?))
        }
        TransportKind::Sse => Endpoint::Sse(Arc::new(SseEndpoint::new(url, connection))),
        TransportKind::WebSocket => Endpoint::Ws(Arc::new(WsEndpoint::new(url, connection))),
        TransportKind::Stdio => bail!("a URL cannot be reached over stdio"),
    };
    Ok((ep, desc))
}

/// Can the target be reached at all? TCP for URLs; the program exists for stdio.
async fn preflight(endpoint: &Endpoint, timeout: Duration) -> anyhow::Result<()> {
    let url = match endpoint {
        Endpoint::Http(ep) => return reach(&ep.addr, timeout).await,
        Endpoint::Sse(ep) => &ep.url,
        Endpoint::Ws(ep) => &ep.url,
        Endpoint::Stdio(cmd) => {
            if find_program(&cmd.program).is_none() {
                bail!(
                    "cannot find the program {:?} (not a file, and not on PATH)",
                    cmd.program
                );
            }
            return Ok(());
        }
    };
    let host = url.host_str().unwrap_or("localhost");
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = url.port_or_known_default().unwrap_or(80);
    let addr = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    reach(&addr, timeout).await
}

async fn reach(addr: &str, timeout: Duration) -> anyhow::Result<()> {
    match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => bail!("cannot reach {addr}: {e} — is the server running?"),
        Err(_) => bail!("cannot reach {addr}: no answer within {timeout:?}"),
    }
}

fn find_program(program: &str) -> Option<PathBuf> {
    let p = std::path::Path::new(program);
    if program.contains('/') {
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|c| c.is_file())
    })
}
