//! What every integration test starts from: a run of the fleet in its own results
//! folder, the built-in server on 127.0.0.1:0 or as a stdio command, the binary as a
//! user runs it, and readers for `summary.json`.

use mcp_fleet::cli::RunArgs;
use mcp_fleet::server::{spawn_http, Fault, HttpServer, ServerOptions};
use mcp_fleet::summary::Summary;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tempfile::TempDir;

/// Upper bound on any one run in these tests; a hang fails the test instead of CI.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// The mcp-fleet binary cargo built for these tests. The test harness's own executable
/// is not mcp-fleet, so anything that spawns "this program" must be told this path.
pub fn fleet_program() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-fleet")
}

/// The binary as a user runs it (exit codes, stdout, stderr).
pub fn fleet_command() -> Command {
    Command::new(fleet_program())
}

/// The built-in server on 127.0.0.1:0: Streamable HTTP at `/mcp`, legacy SSE at `/sse`,
/// WebSocket at `/ws`.
pub async fn builtin_http(options: ServerOptions) -> HttpServer {
    spawn_http("127.0.0.1:0".parse().expect("addr"), options)
        .await
        .expect("the built-in server starts")
}

/// The built-in server as a `--stdio` command line, committing `faults`.
pub fn builtin_stdio(faults: &[Fault]) -> String {
    let mut cmd = format!("{} serve --stdio", fleet_program());
    for f in faults {
        cmd.push_str(&format!(" --fault {}", f.name()));
    }
    cmd
}

/// Write `text` as `profile.toml` in `dir`; its path.
pub fn write_profile(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("profile.toml");
    std::fs::write(&p, text).expect("write profile");
    p
}

/// One run of the fleet as `mcp_fleet::run`, set up the way every test wants it: seed 1
/// (unless the test sets one), quiet, results in a fresh temporary folder, and the
/// built-in server over stdio spawned from the mcp-fleet binary.
pub struct FleetRun {
    dir: TempDir,
    args: RunArgs,
}

/// What a finished run left: the summary it returned, its `summary.json`, and the
/// results folder (removed when dropped).
pub struct Finished {
    pub summary: Summary,
    pub json: Value,
    pub dir: TempDir,
}

impl Default for FleetRun {
    /// The quickstart against the built-in server, as `mcp-fleet run` with no options
    /// (made short: see [`shorten_quickstart`]).
    fn default() -> Self {
        FleetRun::new(RunArgs::default())
    }
}

impl FleetRun {
    /// A run with these command-line options (`..RunArgs::default()` for the rest).
    pub fn new(mut args: RunArgs) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        args.overrides.seed.get_or_insert(1);
        args.out = Some(dir.path().to_path_buf());
        args.quiet = true;
        args.builtin_program = Some(PathBuf::from(fleet_program()));
        FleetRun { dir, args }
    }

    /// Run this profile (written into the results folder; the run then replaces it with
    /// the effective profile).
    pub fn profile(mut self, text: &str) -> Self {
        self.args.profile = Some(write_profile(self.dir.path(), text));
        self
    }

    /// Run to the end; the run must be possible and finish within [`RUN_LIMIT`].
    pub async fn run(mut self) -> Finished {
        shorten_quickstart(&mut self.args);
        let outcome = tokio::time::timeout(RUN_LIMIT, mcp_fleet::run(self.args))
            .await
            .expect("the run finished in time")
            .expect("the run could be done");
        let text = std::fs::read_to_string(self.dir.path().join("summary.json"))
            .expect("summary.json written");
        let json: Value = serde_json::from_str(&text).expect("summary.json is JSON");
        Finished {
            summary: outcome.summary,
            json,
            dir: self.dir,
        }
    }

    /// Run, expecting it to be refused before it starts; the error.
    pub async fn error(mut self) -> anyhow::Error {
        shorten_quickstart(&mut self.args);
        tokio::time::timeout(RUN_LIMIT, mcp_fleet::run(self.args))
            .await
            .expect("the run gave up in time")
            .expect_err("the run cannot be done")
    }
}

/// The quickstart lasts ~10 s for people (a think time between sessions, a duration);
/// tests of it want its personas and scenarios, not its length: no think time and 400
/// sessions, unless the test sets them, and no 10 s cut on a busy machine (5 minutes:
/// still no checkpoints).
fn shorten_quickstart(args: &mut RunArgs) {
    let o = &mut args.overrides;
    let quickstart = match &args.profile {
        None => o.target.is_none() && o.stdio.is_none(),
        Some(p) => p.ends_with("profiles/quickstart.toml"),
    };
    if quickstart {
        o.think.get_or_insert_with(|| "0ms".into());
        o.sessions.get_or_insert(400);
        o.duration.get_or_insert_with(|| "5m".into());
    }
}

/// The finding codes of `summary.json`, in its order.
pub fn codes(json: &Value) -> Vec<String> {
    json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["code"].as_str().map(String::from))
        .collect()
}

/// A counter of `summary.json` (0 when it never happened).
pub fn counter(json: &Value, name: &str) -> u64 {
    json["counters"][name].as_u64().unwrap_or(0)
}

/// One phase's figures in `summary.json`.
pub fn phase<'a>(json: &'a Value, name: &str) -> &'a Value {
    &json["phases"][name]
}

/// How many samples a phase has in `summary.json` (0 when it never ran).
pub fn count(json: &Value, name: &str) -> u64 {
    phase(json, name)["count"].as_u64().unwrap_or(0)
}

/// `summary.json` keeps the schema it publishes.
pub fn check_schema(json: &Value) {
    let schema: Value =
        serde_json::from_str(mcp_fleet::summary::SUMMARY_SCHEMA).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(json)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "summary.json breaks its schema: {errors:#?}"
    );
}

/// `mcp-fleet serve --http 127.0.0.1:0 ARGS` in a process of its own, as a user runs a
/// server to watch it; killed and reaped when dropped.
pub struct Served {
    pub child: std::process::Child,
    /// `127.0.0.1:PORT`, read from its start-up line.
    pub addr: String,
}

impl Served {
    pub fn start(args: &[&str]) -> Served {
        use std::io::BufRead;
        let mut child = fleet_command()
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut line = String::new();
        std::io::BufReader::new(stderr)
            .read_line(&mut line)
            .expect("start-up line");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Served { child, addr }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its Streamable HTTP endpoint.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `text` run against `target` (the built-in server when `None`); its `summary.json`,
/// checked against the schema.
pub async fn run_profile(text: &str, target: Option<String>) -> Value {
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target,
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(text)
    .run()
    .await
    .json;
    check_schema(&json);
    json
}
