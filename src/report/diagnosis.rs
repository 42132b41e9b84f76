//! Why most sessions failed, or why most tool calls with generated arguments were
//! rejected: the likeliest cause read from a summary's failure kinds, examples, target
//! and per-tool acceptance, in words, with what to do. `assemble::summary` fills
//! `Summary.diagnosis` with it; the terminal and the HTML report lead with it.

use crate::metrics::Phase;
use crate::summary::{Diagnosis, PhaseSummary, Summary, ToolAcceptance, INVALID_PARAMS};
use std::collections::BTreeMap;

/// The stable cause codes, as they appear in `summary.json` (`diagnosis.cause`).
pub mod cause {
    pub const SERVER_DOWN: &str = "server_down";
    pub const WRONG_PATH: &str = "wrong_path";
    pub const WRONG_TRANSPORT: &str = "wrong_transport";
    pub const VERSION_REJECTED: &str = "version_rejected";
    pub const AUTH_REQUIRED: &str = "auth_required";
    pub const TIMEOUTS: &str = "timeouts";
    pub const SERVER_ERRORS: &str = "server_errors";
    pub const SPAWN_FAILED: &str = "spawn_failed";
    /// Most calls with generated arguments came back `isError` or -32602.
    pub const ARGUMENTS_REJECTED: &str = "arguments_rejected";
    /// What the server sent is not JSON-RPC where the transport is the right one.
    pub const MALFORMED: &str = "malformed_messages";
    pub const UNKNOWN: &str = "unknown";
}

/// What a diagnosis is made from: the parts of a summary that tell why sessions failed.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// Sessions that ended: completed + failed + unreachable.
    pub ended: u64,
    /// Sessions that failed or never reached the server.
    pub failed: u64,
    pub phases: &'a BTreeMap<String, PhaseSummary>,
    pub failures: &'a BTreeMap<String, u64>,
    pub examples: &'a BTreeMap<String, Vec<String>>,
    /// The target as the summary shows it (already redacted).
    pub target: &'a str,
    /// `http`, `sse`, `ws`, `stdio` (several joined by commas when personas differ).
    pub transport: &'a str,
    /// Per tool: how the server took its calls (`tool_acceptance`).
    pub tools: &'a BTreeMap<String, ToolAcceptance>,
}

impl<'a> Evidence<'a> {
    pub fn of(s: &'a Summary) -> Evidence<'a> {
        let failed = s.sessions.failed + s.sessions.unreachable;
        Evidence {
            ended: s.sessions.completed + failed,
            failed,
            phases: &s.phases,
            failures: &s.failures,
            examples: &s.failure_examples,
            target: &s.run.target,
            transport: &s.run.transport,
            tools: &s.tool_acceptance,
        }
    }
}

/// How many calls with generated arguments a run needs before their rejection is a
/// diagnosis (fewer say little).
pub const MIN_GENERATED: u64 = 20;

/// The diagnosis of `s`: when more than half of the sessions that ended failed, or when
/// most calls with generated arguments were rejected.
pub fn diagnose(s: &Summary) -> Option<Diagnosis> {
    diagnose_evidence(&Evidence::of(s))
}

/// [`diagnose`] on its inputs. Rejected arguments win when sessions did not mostly fail,
/// or when every failure was a rejected tool call (-32602); a run whose sessions failed
/// for another reason (the server down, timeouts …) is diagnosed by that reason.
pub fn diagnose_evidence(e: &Evidence<'_>) -> Option<Diagnosis> {
    let failed_share = if e.ended == 0 {
        0.0
    } else {
        ((e.failed as f64 / e.ended as f64) * 1000.0).round() / 1000.0
    };
    let rejected = || {
        arguments_rejected(e.tools).map(|(message, fix)| Diagnosis {
            cause: cause::ARGUMENTS_REJECTED.into(),
            failed_share,
            message,
            fix,
        })
    };
    if e.ended == 0 || e.failed * 2 <= e.ended {
        return rejected();
    }
    if only_rejections(e) {
        if let Some(d) = rejected() {
            return Some(d);
        }
    }
    let Some((kind, count, phase)) = main_failure(e) else {
        return Some(Diagnosis {
            cause: cause::UNKNOWN.into(),
            failed_share,
            message: format!(
                "{} of {} sessions failed, with no failure recorded",
                e.failed, e.ended
            ),
            fix: "run `mcp-fleet inspect TARGET` to watch one session".into(),
        });
    };
    let example = e
        .examples
        .get(&kind)
        .and_then(|v| v.first())
        .map(String::as_str)
        .unwrap_or("");
    let seen = Seen {
        kind: &kind,
        count,
        phase: &phase,
        example,
        every: count >= e.failed,
    };
    let (code, what, fix) = classify(&seen, e);
    Some(Diagnosis {
        cause: code.into(),
        failed_share,
        message: format!("{} of {} sessions failed: {what}", e.failed, e.ended),
        fix,
    })
}

/// When calls with generated arguments were mostly rejected (at least
/// [`MIN_GENERATED`] of them, under half accepted): what was seen, naming the worst
/// tools with their accepted shares, and the fix.
fn arguments_rejected(tools: &BTreeMap<String, ToolAcceptance>) -> Option<(String, String)> {
    let generated: u64 = tools.values().map(|t| t.generated).sum();
    let accepted: u64 = tools
        .values()
        .map(|t| t.generated_accepted.min(t.generated))
        .sum();
    if generated < MIN_GENERATED || accepted * 2 >= generated {
        return None;
    }
    let mut worst: Vec<(&String, f64, u64)> = tools
        .iter()
        .filter_map(|(name, t)| Some((name, t.generated_share()?, t.generated)))
        .filter(|(_, share, _)| *share < 0.5)
        .collect();
    worst.sort_by(|a, b| a.1.total_cmp(&b.1).then(b.2.cmp(&a.2)).then(a.0.cmp(b.0)));
    let named: Vec<String> = worst
        .iter()
        .take(WORST_NAMED)
        .map(|(name, share, _)| format!("{name} {:.0} %", (share * 100.0).floor()))
        .collect();
    let more = worst.len().saturating_sub(WORST_NAMED);
    let message = format!(
        "generated arguments were rejected in {} of {generated} calls: {}{}",
        generated - accepted,
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    );
    let fix = "pin real values (`arguments = { timezone = \"Europe/Paris\" }`), draw them from a `[data]` pool, or capture them from an earlier step; see README › Arguments".to_string();
    Some((message, fix))
}

/// How many of the worst tools the `arguments_rejected` message names.
const WORST_NAMED: usize = 3;

/// Whether every recorded failure is a tool call the server refused as invalid params.
fn only_rejections(e: &Evidence<'_>) -> bool {
    let invalid = format!("rpc_error:{INVALID_PARAMS}");
    let phases_ok = e
        .phases
        .iter()
        .filter(|(name, p)| !p.failures.is_empty() && !matches!(name.as_str(), "session" | "lag"))
        .all(|(name, p)| name == "tools/call" && p.failures.keys().all(|k| *k == invalid));
    phases_ok && e.failures.keys().all(|k| *k == invalid)
}

/// The failure that ended most sessions: the most frequent kind in the phase that fails
/// first in a session's order (connect before initialize before calls), with its count.
fn main_failure(e: &Evidence<'_>) -> Option<(String, u64, String)> {
    let mut phases: Vec<(Phase, &PhaseSummary)> = e
        .phases
        .iter()
        .filter_map(|(name, p)| Some((Phase::from_name(name)?, p)))
        .filter(|(p, s)| !matches!(p, Phase::Session | Phase::Lag) && !s.failures.is_empty())
        .collect();
    phases.sort_by_key(|(p, _)| p.index());
    if let Some((phase, s)) = phases.first() {
        let (kind, n) = s
            .failures
            .iter()
            .max_by_key(|(k, n)| (**n, std::cmp::Reverse(*k)))?;
        return Some((kind.clone(), *n, phase.name().to_string()));
    }
    let (kind, n) = e
        .failures
        .iter()
        .max_by_key(|(k, n)| (**n, std::cmp::Reverse(*k)))?;
    Some((kind.clone(), *n, "session".into()))
}

/// The main failure as seen.
struct Seen<'a> {
    kind: &'a str,
    count: u64,
    phase: &'a str,
    example: &'a str,
    /// Whether every failed session had it.
    every: bool,
}

impl Seen<'_> {
    /// "every initialize" or "37 initialize requests".
    fn how_many(&self) -> String {
        if self.every {
            format!("every {}", self.phase)
        } else {
            format!("{} {} requests", self.count, self.phase)
        }
    }

    fn mentions(&self, words: &[&str]) -> bool {
        let text = self.example.to_ascii_lowercase();
        words.iter().any(|w| text.contains(w))
    }
}

/// Whether sessions got tokens (a `token` phase) or walked the discovery (`auth`): a
/// 401 then means the tokens were refused, not that none were sent.
fn authenticates(e: &Evidence<'_>) -> bool {
    ["token", "auth"]
        .iter()
        .any(|p| e.phases.get(*p).is_some_and(|x| x.count > 0))
}

/// The cause, what was seen and the fix.
fn classify(s: &Seen<'_>, e: &Evidence<'_>) -> (&'static str, String, String) {
    let path = url_path(e.target);
    let from = path
        .as_deref()
        .map(|p| format!(" from {p}"))
        .unwrap_or_default();
    let kind = s.kind;
    let status = kind
        .strip_prefix("http_status:")
        .and_then(|c| c.parse::<u16>().ok());
    let rpc = kind
        .strip_prefix("rpc_error:")
        .and_then(|c| c.parse::<i64>().ok());
    let version_words = ["version"];
    match (kind, status, rpc) {
        ("spawn_failed", _, _) => (
            cause::SPAWN_FAILED,
            format!("the server command could not be started ({})", s.example),
            "check the command and its PATH: run it by hand to see it start".into(),
        ),
        // The stdio transport's own wait at close (EOF, then SIGTERM): --timeout plays
        // no part in it.
        ("timeout", _, _) if s.phase == "close" && s.mentions(&["ignored stdin eof"]) => (
            cause::TIMEOUTS,
            format!(
                "{}: the server did not exit when its stdin closed, nor on SIGTERM, and was killed",
                s.how_many()
            ),
            "make the server exit when stdin closes (the stdio transport's shutdown); --timeout does not change this wait"
                .into(),
        ),
        ("timeout", _, _) => (
            cause::TIMEOUTS,
            format!("{} got no answer within the timeout", s.how_many()),
            "the server is overloaded or stalled: lower --clients/--rate, or raise --timeout"
                .into(),
        ),
        ("version_rejected", _, _) => version_rejected(s),
        ("connect_failed", _, _) if s.mentions(&["upgrade with http 404"]) => wrong_path(s, &from),
        ("connect_failed", _, _) if s.mentions(&["upgrade with http"]) => {
            wrong_transport(e, "the WebSocket upgrade was refused")
        }
        ("connect_failed", _, _) if s.mentions(&["certificate", "tls"]) => (
            cause::UNKNOWN,
            format!("the TLS handshake failed ({})", s.example),
            "pass --insecure for a self-signed certificate, or check the host name".into(),
        ),
        ("connect_failed", _, _) => (
            cause::SERVER_DOWN,
            format!(
                "{} could not connect to {}",
                s.how_many(),
                host_of(e.target)
            ),
            "start the server, or check the host and port of --target".into(),
        ),
        (_, Some(404), _) => wrong_path(s, &from),
        (_, Some(401 | 403), _) if authenticates(e) => (
            cause::AUTH_REQUIRED,
            format!(
                "{} got {}{from}, though the persona authenticates",
                s.how_many(),
                status_text(kind)
            ),
            "the tokens were refused: check they are not expired, are meant for this server (audience, resource) and carry the scope it wants; for client_credentials check client_id, client_secret and token_url"
                .into(),
        ),
        (_, Some(401 | 403), _) => (
            cause::AUTH_REQUIRED,
            format!("{} got {}{from}", s.how_many(), status_text(kind)),
            "give the persona auth = { tokens = \"file:tokens.txt\" } (or client_credentials = { token_url, client_id, … }), or pass --header 'Authorization: Bearer ${TOKEN}'"
                .into(),
        ),
        (_, Some(_), _) if s.mentions(&["upgrade with http"]) => {
            wrong_transport(e, "the WebSocket upgrade was refused")
        }
        (_, Some(400), _) if s.mentions(&version_words) => version_rejected(s),
        (_, Some(405 | 406 | 415), _) => {
            wrong_transport(e, &format!("{} got {}", s.how_many(), status_text(kind)))
        }
        (_, Some(500..=599), _) | (_, _, Some(-32603)) => (
            cause::SERVER_ERRORS,
            format!("{} got a server error ({kind})", s.how_many()),
            "the server failed internally: read its log".into(),
        ),
        // A 404 whose body is a JSON-RPC error: still the wrong path.
        (_, _, Some(_)) if s.mentions(&["http 404"]) => wrong_path(s, &from),
        (_, _, Some(-32022 | -32020)) => version_rejected(s),
        (_, _, Some(_)) if s.mentions(&version_words) => version_rejected(s),
        // An HTML page or the wrong framing over HTTP: the URL or transport is wrong.
        ("protocol_violation", _, _)
            if e.transport != "stdio"
                && s.mentions(&["text/html", "content-type", "event-stream"]) =>
        {
            wrong_transport(
                e,
                &format!("{} got an answer that is not MCP", s.how_many()),
            )
        }
        // Bytes that are not a JSON-RPC message where one belongs (a banner on stdout,
        // invalid UTF-8, nesting or numbers past what JSON parsers take): the transport
        // is right, the server's output is not.
        ("protocol_violation", _, _) => (
            cause::MALFORMED,
            format!(
                "{} got messages that are not valid JSON-RPC ({})",
                s.how_many(),
                s.example
            ),
            if e.transport == "stdio" {
                "every line a stdio server writes on stdout must be one JSON-RPC message (logs and banners belong on stderr): `mcp-fleet inspect --raw --stdio …` shows them"
            } else {
                "the server's answers are not valid JSON-RPC: `mcp-fleet inspect --raw URL` shows them"
            }
            .into(),
        ),
        _ => (
            cause::UNKNOWN,
            format!(
                "{} failed with {kind}{}",
                s.how_many(),
                if s.example.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", s.example)
                }
            ),
            "run `mcp-fleet inspect TARGET` to watch one session".into(),
        ),
    }
}

fn wrong_path(s: &Seen<'_>, from: &str) -> (&'static str, String, String) {
    (
        cause::WRONG_PATH,
        format!("{} got HTTP 404 Not Found{from}", s.how_many()),
        "check the path: the reference and SDK servers serve /mcp (Streamable HTTP), /sse (legacy SSE) and /ws (WebSocket)".into(),
    )
}

fn version_rejected(s: &Seen<'_>) -> (&'static str, String, String) {
    (
        cause::VERSION_REJECTED,
        format!(
            "the server rejected the protocol version ({})",
            if s.example.is_empty() { s.kind } else { s.example }
        ),
        "offer a version the server supports: --protocol-version 2025-06-18, or the persona's accepted versions".into(),
    )
}

/// A transport that does not fit the URL: suggest the one its path or scheme names.
fn wrong_transport(e: &Evidence<'_>, what: &str) -> (&'static str, String, String) {
    let path = url_path(e.target).unwrap_or_default();
    let fits = if e.target.starts_with("ws://") || e.target.starts_with("wss://") {
        if path.ends_with("/ws") {
            None
        } else {
            Some("http")
        }
    } else if path.ends_with("/sse") {
        Some("sse")
    } else if path.ends_with("/ws") {
        Some("ws")
    } else {
        Some("http")
    };
    let fix = match fits {
        Some(t) if t == e.transport => format!(
            "the server at {path} does not speak the {t} transport: check the URL's path (/mcp Streamable HTTP, /sse legacy SSE, /ws WebSocket)"
        ),
        Some("ws") => format!("{path} is a WebSocket endpoint: use a ws:// URL (or --transport ws)"),
        Some("http") if e.target.starts_with("ws") => {
            format!("{path} is not a WebSocket endpoint: use an http:// URL with --transport http")
        }
        Some(t) => format!("use --transport {t}, which fits the path {path}"),
        None => "check the URL's path: /mcp Streamable HTTP, /sse legacy SSE, /ws WebSocket".into(),
    };
    (
        cause::WRONG_TRANSPORT,
        format!("{what} (transport {})", e.transport),
        fix,
    )
}

/// "HTTP 405" from `http_status:405`.
fn status_text(kind: &str) -> String {
    match kind.strip_prefix("http_status:") {
        Some(code) => format!("HTTP {code}"),
        None => kind.to_string(),
    }
}

/// The path of a URL target (no query: it may carry secrets), `None` for a command.
fn url_path(target: &str) -> Option<String> {
    let url = url::Url::parse(target).ok()?;
    if !matches!(url.scheme(), "http" | "https" | "ws" | "wss") {
        return None;
    }
    Some(url.path().to_string())
}

/// Host and port of a URL target (no user info), else the target's first word.
fn host_of(target: &str) -> String {
    match url::Url::parse(target) {
        Ok(url) if url.host_str().is_some() => {
            let host = url.host_str().unwrap_or_default();
            match url.port_or_known_default() {
                Some(p) => format!("{host}:{p}"),
                None => host.to_string(),
            }
        }
        _ => target
            .split_whitespace()
            .next()
            .unwrap_or(target)
            .to_string(),
    }
}

#[cfg(test)]
#[path = "diagnosis_tests.rs"]
mod tests;
