//! The `[target]` section resolved: what the fleet connects to (a URL, a command, or the
//! built-in server), and each persona's own route to it. How it connects (headers,
//! timeout, TLS, …) is the rest of the section: `connection.rs`.

use super::error::PlanError;
use super::secrets::{expand, refuse_masked, url_is_masked};
use crate::profile::{self, PersonaSection, TargetSection};
use crate::protocol::TransportKind;
use crate::redact;
use url::Url;

/// What the fleet connects to.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// An HTTP(S) or WebSocket URL; the persona's transport says how it is spoken to.
    Url(Url),
    /// A command spawned once per session.
    Stdio {
        program: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// The built-in reference server, started by the run on a loopback port.
    BuiltIn,
}

impl Target {
    /// The target as people and files see it: a URL's secrets redacted.
    pub fn describe(&self) -> String {
        match self {
            Target::Url(url) => redact::url(url),
            Target::Stdio { program, args, .. } => {
                shell_words::join(std::iter::once(program).chain(args))
            }
            Target::BuiltIn => "built-in reference server".into(),
        }
    }

    /// A results folder's name for a run against this target: the built-in server and
    /// its transport, a URL's host and port (never its user, password, path or query:
    /// secrets stay out of file names), a command's program name (never its arguments).
    pub fn folder_label(&self, transport: Option<TransportKind>) -> String {
        let label = match self {
            Target::BuiltIn => match transport {
                Some(t) => format!("builtin-{}", t.name()),
                None => "builtin".into(),
            },
            Target::Url(url) => match (url.host_str(), url.port()) {
                (Some(host), Some(port)) => format!("{host}-{port}"),
                (Some(host), None) => host.to_string(),
                (None, _) => url.scheme().to_string(),
            },
            Target::Stdio { program, .. } => {
                let name = std::path::Path::new(program)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                format!("stdio-{name}")
            }
        };
        // Only characters every file system takes: an IPv6 host's brackets and colons
        // become hyphens.
        let label: String = label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let label = label.trim_matches('-');
        if label.is_empty() {
            "run".into()
        } else {
            label.to_string()
        }
    }

    /// `[target]`: a `url`, a `command` (with its `env`), or neither (the built-in server).
    pub fn from_section(t: &TargetSection, origin: &str) -> Result<Target, PlanError> {
        match (&t.url, &t.command) {
            (Some(_), Some(_)) => Err(PlanError::new(
                origin,
                "target",
                "both `url` and `command` are set",
                "keep one: `url` for HTTP, `command` for stdio",
            )),
            (Some(raw), None) => {
                Target::from_url(&expand(raw, "target.url", origin)?, "target.url", origin)
            }
            (None, Some(cmd)) => match Target::from_command(cmd, "target.command", origin)? {
                Target::Stdio { program, args, .. } => Ok(Target::Stdio {
                    program,
                    args,
                    env: environment(t, origin)?,
                }),
                other => Ok(other),
            },
            (None, None) => Ok(Target::BuiltIn),
        }
    }

    /// A target URL (its `${VAR}`s expanded): http(s) or ws(s).
    fn from_url(text: &str, key: &str, origin: &str) -> Result<Target, PlanError> {
        let url = Url::parse(text).map_err(|e| {
            PlanError::new(
                origin,
                key,
                format!("{:?} is not a URL ({e})", redact::url(text)),
                "write it like \"http://127.0.0.1:3000/mcp\"",
            )
        })?;
        refuse_masked(url_is_masked(&url), key, origin)?;
        match url.scheme() {
            "http" | "https" | "ws" | "wss" => Ok(Target::Url(url)),
            other => Err(PlanError::new(
                origin,
                key,
                format!("scheme {other:?} is not supported"),
                "use http:// or https:// (Streamable HTTP, or legacy SSE with transport = \"sse\"), ws:// or wss:// (WebSocket), or `command` for stdio",
            )),
        }
    }

    /// A command line to spawn per session.
    fn from_command(cmd: &profile::Command, key: &str, origin: &str) -> Result<Target, PlanError> {
        let argv = match cmd {
            profile::Command::Line(line) => shell_words::split(line).map_err(|e| {
                PlanError::new(
                    origin,
                    key,
                    format!("cannot split {line:?}: {e}"),
                    "balance the quotes, or write the command as a list",
                )
            })?,
            profile::Command::Argv(v) => v.clone(),
        };
        let mut it = argv.into_iter();
        let program = it.next().filter(|p| !p.is_empty()).ok_or_else(|| {
            PlanError::new(
                origin,
                key,
                "is empty",
                "name the server program, e.g. \"npx -y @modelcontextprotocol/server-everything\"",
            )
        })?;
        Ok(Target::Stdio {
            program,
            args: it.collect(),
            env: Vec::new(),
        })
    }
}

/// The command's environment, `${VAR}`s expanded.
fn environment(t: &TargetSection, origin: &str) -> Result<Vec<(String, String)>, PlanError> {
    t.env
        .iter()
        .map(|(name, value)| {
            let key = format!("target.env.{name}");
            refuse_masked(value == redact::MASK, &key, origin)?;
            Ok((name.clone(), expand(value, &key, origin)?))
        })
        .collect()
}

/// Where a persona's sessions go and over what.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub transport: TransportKind,
    pub target: Target,
}

impl Route {
    /// The persona's `url`/`command`/`transport` against the run's `default_target`.
    pub fn from_section(
        p: &PersonaSection,
        default_target: &Target,
        key: &str,
        origin: &str,
    ) -> Result<Route, PlanError> {
        let err = |k: &str, problem: String, fix: &str| {
            PlanError::new(origin, format!("{key}.{k}"), problem, fix)
        };
        let url = match &p.url {
            Some(raw) => Some(expand(raw, &format!("{key}.url"), origin)?),
            None => None,
        };
        let relative = url.as_deref().is_some_and(|u| u.starts_with('/'));
        let target = match (&url, &p.command) {
            (Some(_), Some(_)) => {
                return Err(err(
                    "url",
                    "both `url` and `command` are set".into(),
                    "keep one: `url` for HTTP/WebSocket, `command` for stdio",
                ))
            }
            // A path (`url = "/ws"`) is resolved against the run's target, so one `--target`
            // serves personas of every transport; the built-in server knows its own paths.
            (Some(path), None) if relative => match default_target {
                Target::Url(base) => Target::Url(base.join(path).map_err(|e| {
                    err(
                        "url",
                        format!(
                            "{:?} does not resolve against {}: {e}",
                            redact::url(path),
                            redact::url(base)
                        ),
                        "write a path like \"/ws\"",
                    )
                })?),
                other => other.clone(),
            },
            (Some(url), None) => Target::from_url(url, &format!("{key}.url"), origin)?,
            (None, Some(cmd)) => Target::from_command(cmd, &format!("{key}.command"), origin)?,
            (None, None) => default_target.clone(),
        };
        let transport = match p.transport.as_deref() {
            Some(name) => TransportKind::from_name(name).ok_or_else(|| {
                err(
                    "transport",
                    format!("{name:?} is not a transport"),
                    "use \"stdio\", \"http\", \"sse\" or \"ws\"",
                )
            })?,
            None => match &target {
                Target::Url(u) if matches!(u.scheme(), "ws" | "wss") => TransportKind::WebSocket,
                Target::Url(_) | Target::BuiltIn => TransportKind::StreamableHttp,
                Target::Stdio { .. } => TransportKind::Stdio,
            },
        };
        let target = match target {
            Target::Url(u) if relative => Target::Url(scheme_for(u, transport)),
            t => t,
        };
        if !reaches(&target, transport) {
            return Err(err(
                "transport",
                format!(
                    "transport {:?} cannot reach {}",
                    transport.name(),
                    target.describe()
                ),
                "use ws:// URLs for \"ws\", http(s):// for \"http\"/\"sse\", a command for \"stdio\"",
            ));
        }
        Ok(Route { transport, target })
    }
}

/// A relative persona URL keeps the target's scheme: switch http ↔ ws to match the
/// persona's transport.
fn scheme_for(mut u: Url, kind: TransportKind) -> Url {
    let scheme = match (kind, u.scheme()) {
        (TransportKind::WebSocket, "https" | "wss") => "wss",
        (TransportKind::WebSocket, _) => "ws",
        (_, "wss" | "https") => "https",
        _ => "http",
    };
    let _ = u.set_scheme(scheme);
    u
}

fn reaches(target: &Target, transport: TransportKind) -> bool {
    match (target, transport) {
        (Target::BuiltIn, _) => true,
        (Target::Stdio { .. }, k) => k == TransportKind::Stdio,
        (Target::Url(u), TransportKind::WebSocket) => matches!(u.scheme(), "ws" | "wss"),
        (Target::Url(u), TransportKind::StreamableHttp | TransportKind::Sse) => {
            matches!(u.scheme(), "http" | "https")
        }
        (Target::Url(_), TransportKind::Stdio) => false,
    }
}
