//! The command line (clap derive). Names here are a contract: users and scripts rely on
//! them. Each subcommand maps onto one entry point in `lib.rs`. The flags that override
//! a profile are `plan::Overrides` (and its `ClientArgs`), flattened in here.

pub use crate::plan::{ClientArgs, Overrides};
pub use crate::report::style::ColorWhen;
use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};
pub use record::RecordArgs;
pub use replay::{ProfileArgs, ReplayArgs};
pub use serve::ServeArgs;
use std::net::SocketAddr;
use std::path::PathBuf;

pub mod record;
pub mod replay;
pub mod serve;

/// `mcp-fleet --help`'s closing lines: where to start, and the exit codes in short.
const CLI_AFTER_HELP: &str = "\
Start with `mcp-fleet run`: the 10-second quickstart against the built-in server.
Exit codes: 0 passed, 1 a threshold, --fail-if rule or --strict failed (or no session of
a run completed), 2 could not be done, 128 + N stopped by signal N (see `mcp-fleet
COMMAND --help`).";

/// `run --help`'s closing sections: what `--target` accepts and what the exit code says.
const RUN_AFTER_HELP: &str = "\
Targets:
  http://HOST/PATH, https://…   Streamable HTTP (e.g. http://127.0.0.1:3000/mcp); legacy
                                HTTP+SSE with --transport sse (e.g. http://…/sse)
  ws://HOST/PATH, wss://…       WebSocket, subprotocol mcp (e.g. ws://127.0.0.1:3000/ws)
  --stdio \"CMD ARGS\"            spawn the server once per session and speak stdio to it
  (none)                        the built-in reference server

Exit codes:
  0        the run completed: every threshold held and at least one session completed
           (sessions that failed beside it are data, not an error)
  1        a threshold (the profile's or --threshold) failed, --strict saw a finding of
           error severity, or not one session completed (every one failed)
  2        the run could not be done (a bad profile or flag, the target unreachable), or
           --abort-on-unreachable stopped it (the results so far are written)
  128 + N  stopped by signal N (130 Ctrl-C, 143 SIGTERM), after writing the results
A closed stdout or stderr (e.g. `| head`) stops the printing, not the run: the results are
written and the exit code stays as above.";

/// `report --help`'s exit codes.
const REPORT_AFTER_HELP: &str = "\
Exit codes:
  0  the views were rebuilt and the summary printed
  2  the folder holds no readable summary.json (--from-requests: the file is not a whole
     requests file this version reads)";

/// `compare --help`'s exit codes.
const COMPARE_AFTER_HELP: &str = "\
Exit codes:
  0  no --fail-if rule matched
  1  a --fail-if rule matched (a regression); the deltas say which
  2  a folder holds no readable summary.json, or a --fail-if rule does not parse";

/// `inspect --help`'s exit codes.
const INSPECT_AFTER_HELP: &str = "\
Targets: http:// or https:// (Streamable HTTP; --transport sse for legacy HTTP+SSE),
ws:// or wss:// (WebSocket), --stdio \"CMD ARGS\", or none for the built-in server.

Exit codes:
  0  the session was run and shown (its failures and findings are shown, they do not
     change the exit code)
  2  it could not be run (an unreachable target, a bad flag or profile)";

#[derive(Debug, Parser)]
#[command(
    name = "mcp-fleet",
    version,
    about = "Load-test MCP servers with a fleet of mock clients",
    after_help = CLI_AFTER_HELP
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
    Serve(Box<ServeArgs>),
    /// Check a profile and print the resolved plan.
    Validate(ValidateArgs),
    /// Rebuild report.html, summary.txt and thresholds.xml from a results folder.
    Report(ReportArgs),
    /// Compare two results folders phase by phase; optionally fail on regressions.
    Compare(CompareArgs),
    /// Find the highest session rate a server takes within its SLOs (a ladder of open-model
    /// steps, then a bisection), and say what bounds it: the server's CPU, connections,
    /// queueing, or the generator itself.
    Ceiling(Box<CeilingArgs>),
    /// Merge the results folders of a sharded run (`run --shard`) into one exact report;
    /// exit 1 when a threshold fails on the merged figures, 2 when a shard is missing.
    Merge(MergeArgs),
    /// Open one session and show it the way the MCP Inspector does: the handshake, the
    /// server's capabilities, every tool, resource and prompt, timings and findings.
    Inspect(Box<InspectArgs>),
    /// Record real clients' sessions through a transparent proxy into a trace file, for
    /// `replay` and `profile --from-trace`.
    Record(Box<RecordArgs>),
    /// Replay a recorded trace: every session as its own client, at the recorded pace or
    /// scaled (--speed, --times, --rate), with all of `run`'s results.
    Replay(Box<ReplayArgs>),
    /// Write a profile from a recorded trace (--from-trace): personas by client
    /// identity and habits, weighted as seen; scenarios from what they did.
    Profile(ProfileArgs),
    /// Print a shell completion script to stdout, e.g. `mcp-fleet completions bash >
    /// ~/.local/share/bash-completion/completions/mcp-fleet` (see the README, Install).
    Completions(CompletionsArgs),
}

#[derive(Debug, Default, Args)]
#[command(after_help = RUN_AFTER_HELP)]
pub struct RunArgs {
    /// Profile file (TOML). Without it, and without --target/--stdio: the quickstart.
    pub profile: Option<PathBuf>,
    #[command(flatten)]
    pub overrides: Overrides,
    /// Results folder. Default: results/<name>-<time>.
    #[arg(long, value_name = "DIR", display_order = 100)]
    pub out: Option<PathBuf>,
    /// Print only the results folder's path and errors (no short form: -q is the
    /// iteration rate, as in oha).
    #[arg(long, display_order = 101)]
    pub quiet: bool,
    /// Also print a latency histogram per phase (service time) after the summary.
    #[arg(long, display_order = 101)]
    pub histogram: bool,
    /// Serve the live figures for Prometheus on this loopback address (GET /metrics),
    /// e.g. 127.0.0.1:9464.
    #[arg(long, value_name = "ADDR", display_order = 103)]
    pub metrics_listen: Option<SocketAddr>,
    /// Serve the report page live on this loopback address, e.g. 127.0.0.1:8080: its
    /// charts and figures refresh every interval (server-sent events), and at the end
    /// it becomes the run's report.html. Port 0 picks a free one (printed on stderr).
    #[arg(long, value_name = "ADDR", display_order = 104)]
    pub dashboard: Option<SocketAddr>,
    /// Fail the run (exit code 1) when any conformance finding of error severity is seen.
    #[arg(long, display_order = 105)]
    pub strict: bool,
    /// Also call the list methods of capabilities the server did not declare, and
    /// expect -32601 (method not found).
    #[arg(long, display_order = 106)]
    pub probe_undeclared: bool,
    /// Run shard I of N (every arrival or virtual client k with k mod N = I), or `auto`:
    /// the index and count of a Kubernetes Indexed Job or of Slurm. Merge the shards'
    /// results folders with `mcp-fleet merge`.
    #[arg(long, value_name = "I/N|auto", display_order = 107)]
    pub shard: Option<String>,
    /// Prepare everything, wait, and start the schedule and the intervals at TIME (RFC
    /// 3339, e.g. 2026-12-02T10:00:00Z; or +90s from now, for an unsharded run only):
    /// every shard of a run starts together. A shard ready later than 1 s after TIME
    /// fails (exit 2).
    #[arg(long, value_name = "TIME", display_order = 108)]
    pub start_at: Option<String>,
    /// Run the test as N local shard processes and merge their results (past one
    /// process's open-file limit without a cluster).
    #[arg(long, value_name = "N", display_order = 109)]
    pub processes: Option<u32>,
    #[command(flatten)]
    pub view: ViewArgs,
    /// The mcp-fleet program that serves the built-in server over stdio (`PROGRAM serve
    /// --stdio`); None: this program. Not a flag: callers of the library whose own
    /// executable is something else (the integration tests) name the binary here.
    #[arg(skip)]
    pub builtin_program: Option<PathBuf>,
    /// What `--processes` hands its shard processes after `run` (None: this command's own
    /// arguments after `run`). Not a flag: `replay` runs a profile it wrote.
    #[arg(skip)]
    pub child_argv: Option<Vec<std::ffi::OsString>>,
}

/// `ceiling --help`'s closing section: what the search does and what the exit code says.
const CEILING_AFTER_HELP: &str = "\
The search: open-model steps at --from, --from × --factor, … up to --to, each held --step
after --step-warmup (left out of its figures), until one fails; then a bisection between
the last passing and the first failing rate, to --resolution (with --retries N, a failing
rate is measured again, up to N times, and passes if any try does). A step fails when an SLO
breaks, when arrivals are dropped at --max-in-flight, or when the achieved rate falls
more than 5 % short of the offered one. Every step is a `run` of its own, kept under
steps/ in the results folder beside ceiling.json and report.html.

Exit codes:
  0        a ceiling was found (or every step up to --to passed)
  1        even the lowest step failed its SLOs
  2        the search could not be done (a bad flag or profile, the target unreachable)
  128 + N  stopped by signal N (130 Ctrl-C, 143 SIGTERM), after writing the steps so far";

#[derive(Debug, Default, Args)]
#[command(after_help = CEILING_AFTER_HELP)]
pub struct CeilingArgs {
    /// Profile file (TOML): the sessions to run at each step. Without it: the default
    /// session against --target (or the built-in server, started in a process of its own).
    pub profile: Option<PathBuf>,
    /// A service level each step must meet (repeatable), in the threshold grammar, e.g.
    /// 'p99(initialize) < 50ms', 'error_rate < 1%'. Default: 'p99(session) < 500ms' and
    /// 'error_rate < 1%'.
    #[arg(long = "slo", value_name = "EXPR", display_order = 1)]
    pub slos: Vec<String>,
    /// What the ladder climbs: `rate` (open-model arrivals a second) or `clients`
    /// (closed-model virtual clients, each running sessions back to back, for servers
    /// whose users hold sessions open); --from and --to then count clients.
    #[arg(long, value_name = "rate|clients", default_value = "rate", value_parser = ["rate", "clients"], display_order = 1)]
    pub ladder: String,
    /// The first rate of the ladder, e.g. 10/s (with --ladder clients: clients, e.g. 4).
    #[arg(long, value_name = "N/s", default_value = "10/s", display_order = 2)]
    pub from: String,
    /// The highest rate the ladder tries, e.g. 10000/s (or clients, e.g. 1000).
    #[arg(long, value_name = "N/s", default_value = "10000/s", display_order = 3)]
    pub to: String,
    /// Each rung of the ladder is this many times the one below.
    #[arg(long, value_name = "X", default_value_t = 2.0, display_order = 4)]
    pub factor: f64,
    /// How long each step is measured, e.g. 10s.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration, display_order = 5)]
    pub step: std::time::Duration,
    /// Load at the step's rate before it is measured (its figures are left out), e.g. 2s;
    /// 0s for none.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = humantime::parse_duration, display_order = 6)]
    pub step_warmup: std::time::Duration,
    /// Bisect until the last passing and the first failing rate are this close, e.g. 5%.
    #[arg(long, value_name = "PCT", default_value = "5%", display_order = 7)]
    pub resolution: String,
    /// Measure a failing step again up to N times before its rate counts as failed (it
    /// passes when any try passes): on a shared or noisy machine one stalled step then
    /// does not set the ceiling. Each try is a step of its own under steps/.
    #[arg(long, value_name = "N", default_value_t = 0, display_order = 7)]
    pub retries: u32,
    /// The cores the server may use, for the CPU verdict. Default: the watched server
    /// process's CPU affinity, else this machine's cores.
    #[arg(long, value_name = "N", display_order = 8)]
    pub server_cores: Option<f64>,
    /// Run every step as N local shard processes whose merged figures decide (when one
    /// generator process is what limits the search).
    #[arg(long, value_name = "N", display_order = 9)]
    pub processes: Option<u32>,
    /// Be shard I of N of a search run on N machines (`auto`: a Kubernetes Indexed Job's
    /// or Slurm's index and count). All shards take the same options and the same --out,
    /// a shared folder; shard 0 leads, every step runs on all of them together.
    #[arg(long, value_name = "I/N|auto", display_order = 10)]
    pub shard: Option<String>,
    /// With --shard: how long shard 0 waits for the others to be ready, and for each
    /// shard's part of a step beyond its length (a shard that misses it stops the search).
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = humantime::parse_duration, display_order = 11)]
    pub shard_wait: std::time::Duration,
    #[command(flatten)]
    pub overrides: Overrides,
    /// Results folder. Default: results/ceiling-<time>.
    #[arg(long, value_name = "DIR", display_order = 100)]
    pub out: Option<PathBuf>,
    /// Print only the results folder's path and errors (no short form: -q is the
    /// iteration rate, as in oha).
    #[arg(long, display_order = 101)]
    pub quiet: bool,
    #[command(flatten)]
    pub view: ViewArgs,
    /// The mcp-fleet program that serves the built-in server (`PROGRAM serve --http`);
    /// None: this program. Not a flag (see `RunArgs::builtin_program`).
    #[arg(skip)]
    pub builtin_program: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_help = REPORT_AFTER_HELP)]
pub struct ReportArgs {
    /// A results folder (holds summary.json).
    #[arg(required_unless_present = "from_requests")]
    pub dir: Option<PathBuf>,
    /// Rebuild the summary's counts from a requests file (`run --requests FILE`, plain
    /// or .zst) instead of a results folder, and print it.
    #[arg(long, value_name = "FILE", conflicts_with = "dir")]
    pub from_requests: Option<PathBuf>,
    /// With --from-requests: also write the rebuilt summary.json and summary.txt here.
    #[arg(long, value_name = "DIR", requires = "from_requests")]
    pub out: Option<PathBuf>,
    /// Also print a latency histogram per phase (service time) after the summary, as
    /// `run --histogram` does.
    #[arg(long)]
    pub histogram: bool,
    #[command(flatten)]
    pub view: ViewArgs,
}

impl ReportArgs {
    /// The results folder (clap requires one unless `--from-requests` is given).
    pub fn folder(&self) -> &std::path::Path {
        self.dir.as_deref().unwrap_or(std::path::Path::new("."))
    }
}

/// How the summary is printed: `--verbose`, `--color` (run and report).
#[derive(Debug, Default, Clone, Copy, Args)]
pub struct ViewArgs {
    /// Also print the breakdowns (by persona, transport, era, protocol version, tool;
    /// counted events, messages from the server). summary.txt and report.html always
    /// hold them.
    #[arg(long, short, display_order = 120)]
    pub verbose: bool,
    /// Colour and ✓/✗ marks: auto (only on a terminal, unless NO_COLOR is set or
    /// TERM=dumb), always, never.
    #[arg(long, value_name = "WHEN", default_value = "auto", display_order = 121)]
    pub color: ColorWhen,
}

impl ViewArgs {
    /// The summary's view for stdout.
    pub fn summary_view(&self) -> crate::report::text::View {
        crate::report::text::View {
            verbose: self.verbose,
            style: crate::report::style::Style::stdout(self.color),
        }
    }
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' results folders (each holds state.json), one per shard, in any order.
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// The merged results folder (created).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Print only the merged folder's path and errors.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub view: ViewArgs,
}

#[derive(Debug, Args)]
#[command(after_help = COMPARE_AFTER_HELP)]
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

#[derive(Debug, Default, Args)]
#[command(after_help = INSPECT_AFTER_HELP)]
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
    /// After discovery, call this tool with these JSON arguments, e.g. --call echo
    /// '{"message":"hi"}'; without them, arguments generated from the tool's
    /// inputSchema as a run makes them (the transcript shows them). Repeatable: the calls run in order in the one
    /// session. Exit 1 when one is answered with a JSON-RPC error.
    #[arg(long, value_names = ["NAME", "JSON"], num_args = 1..=2)]
    pub call: Vec<String>,
    /// After the calls, read this resource (resources/read). Repeatable.
    #[arg(long, value_name = "URI")]
    pub read: Vec<String>,
    /// After the reads, get this prompt with these JSON arguments (default {}), e.g.
    /// --get-prompt review '{"code":"x = 1"}'. Repeatable.
    #[arg(long, value_names = ["NAME", "JSON"], num_args = 1..=2)]
    pub get_prompt: Vec<String>,
    /// Commit this client fault in the session (e.g. invalid-json, unknown-tool) and show
    /// how the server took it. Exit 1 when it was not handled.
    #[arg(long, value_name = "NAME")]
    pub client_fault: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The completion script of `shell` for this command line.
pub fn completions(shell: clap_complete::Shell) -> String {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let mut script = Vec::new();
    // Into memory, not stdout: clap_complete panics on a failed write, and a closed pipe
    // must end quietly (see `console`).
    clap_complete::generate(shell, &mut cmd, "mcp-fleet", &mut script);
    let script = String::from_utf8_lossy(&script).into_owned();
    match shell {
        // clap_complete's bash script tracks the subcommand as `mcp__fleet__subcmd__run`
        // but names its case arms `mcp__subcmd__fleet__subcmd__run` (it turns the
        // binary name's hyphen into `__subcmd__` there only), so no flag after a
        // subcommand ever completed. One spelling for both makes them match.
        clap_complete::Shell::Bash => script.replace("mcp__subcmd__fleet", "mcp__fleet"),
        _ => script,
    }
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Profile file (TOML).
    pub profile: PathBuf,
}

/// `--color WHEN`.
impl ValueEnum for ColorWhen {
    fn value_variants<'a>() -> &'a [Self] {
        &ColorWhen::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}
