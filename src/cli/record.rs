//! `mcp-fleet record`'s command line: a recording proxy between real clients and a
//! server (HTTP transports on one port, or a stdio server wrapped).

use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;

const RECORD_AFTER_HELP: &str = "\
Two ways to record:
  HTTP (Streamable HTTP, legacy HTTP+SSE and WebSocket on one port):
    mcp-fleet record --listen 127.0.0.1:8931 --upstream http://127.0.0.1:3000/mcp --trace t.jsonl
    then point the client at http://127.0.0.1:8931/mcp (or /sse, ws://…/ws: every path
    is forwarded to the same path on the upstream's host)
  stdio (the host launches the recorder in place of the server):
    mcp-fleet record --trace t.jsonl --stdio -- npx -y @modelcontextprotocol/server-everything
Bytes pass unchanged both ways (but the Host header, and an absolute legacy SSE endpoint
that names the upstream). Header values, tokens and URL queries are never written to the
trace; --redact and --redact-tool take argument values out too. The trace format:
docs/traces.md. Ctrl-C (SIGINT), SIGTERM, --duration or --sessions end a recording; the
trace ends with its `end` line.

Exit codes:
  0  the trace was written (stdio: the server's own exit code)
  2  the recording could not start (a bad flag, the address taken, the trace not writable)";

#[derive(Debug, Args)]
#[command(after_help = RECORD_AFTER_HELP)]
pub struct RecordArgs {
    /// Write the trace here (JSON lines; replaced if it exists).
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,
    /// HTTP: listen here, e.g. 127.0.0.1:8931 (port 0: any free one, printed on stderr).
    #[arg(
        long,
        value_name = "ADDR",
        conflicts_with = "stdio",
        requires = "upstream"
    )]
    pub listen: Option<SocketAddr>,
    /// HTTP: the server, e.g. http://127.0.0.1:3000/mcp (its host; each request keeps the
    /// path the client asked for). https:// is verified unless --insecure.
    #[arg(
        long,
        value_name = "URL",
        conflicts_with = "stdio",
        requires = "listen"
    )]
    pub upstream: Option<String>,
    /// Record a stdio server: run the command after `--` and pass stdin/stdout through.
    #[arg(long, requires = "command")]
    pub stdio: bool,
    /// The stdio server's command and arguments (after `--`).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// Replace the value at this JSON pointer in every message with "[redacted]", e.g.
    /// /params/arguments/password (repeatable).
    #[arg(long, value_name = "POINTER")]
    pub redact: Vec<String>,
    /// Replace every argument value of calls to this tool with "[redacted]" (repeatable).
    #[arg(long, value_name = "TOOL")]
    pub redact_tool: Vec<String>,
    /// HTTP: stop after this many sessions have ended.
    #[arg(long, value_name = "N")]
    pub sessions: Option<u64>,
    /// HTTP: stop after this long, e.g. 10m.
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<humantime::Duration>,
    /// https upstream: do not verify its certificate.
    #[arg(long)]
    pub insecure: bool,
}
