//! `run --requests FILE`: every timed request of a run, one JSON record a line (plain or
//! zstd), counted here independently of mcp-fleet's reader and held against the run's
//! `summary.json` — sessions, phases, failures by kind, personas, tools, request steps —
//! exactly; `report --from-requests` rebuilds the same counts; a cut, corrupt or newer
//! file is refused with exit 2; in an open model no request starts before it was meant to.

use crate::support::{check_schema, fleet_command, write_profile};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Two personas (one with a name that needs escaping), a call that succeeds, one that
/// answers `isError`, and a request the server does not have (`rpc_error:-32601`).
const PROFILE: &str = r#"
name = "requests"
[load]
clients = 4
sessions = 60

[[persona]]
name = "plain"
transport = "http"
protocol_version = "2025-11-25"
trace = true
[[persona]]
name = "ws \"quoted\" \\ one"
transport = "ws"
protocol_version = "2025-06-18"

[[scenario]]
name = "mixed"
steps = [
  { op = "tools/list" },
  { op = "tools/call", tool = "add", arguments = { a = 1, b = 2 } },
  { op = "tools/call", tool = "fail", arguments = {} },
  { op = "request", method = "acme/stats" },
]
"#;

/// A run of `profile` with `--requests <dir>/<file>` and these extra flags; its
/// `summary.json` and the requests file's path.
fn run(dir: &Path, profile: &str, file: &str, extra: &[&str]) -> (Value, PathBuf) {
    let profile = write_profile(dir, profile);
    let out = dir.join("results");
    let requests = dir.join(file);
    let status = fleet_command()
        .arg("run")
        .arg(&profile)
        .args(["--seed", "1", "--quiet", "--out"])
        .arg(&out)
        .arg("--requests")
        .arg(&requests)
        .args(extra)
        .output()
        .expect("mcp-fleet runs");
    assert!(
        status.status.success(),
        "run: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    let json: Value = serde_json::from_str(&text).expect("JSON");
    check_schema(&json);
    (json, requests)
}

/// The file's lines as JSON (a `.zst` file decompressed by the zstd crate).
fn lines(path: &Path) -> Vec<Value> {
    let bytes = std::fs::read(path).expect("requests file");
    let text = if path.extension().is_some_and(|e| e == "zst") {
        zstd::stream::decode_all(&bytes[..]).expect("one whole zstd frame")
    } else {
        bytes
    };
    String::from_utf8(text)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

/// What the records count, in `summary.json`'s words.
#[derive(Debug, Default, PartialEq)]
struct Counts {
    sessions: BTreeSet<u64>,
    /// phase → (count, errors, tool_errors)
    phases: BTreeMap<String, (u64, u64, u64)>,
    failures: BTreeMap<String, u64>,
    /// persona → (sessions, phase → count)
    personas: BTreeMap<String, (BTreeSet<u64>, BTreeMap<String, u64>)>,
    tools: BTreeMap<String, u64>,
    requests: BTreeMap<String, u64>,
}

fn count_records(lines: &[Value]) -> Counts {
    let header = &lines[0];
    assert_eq!(header["mcp_fleet_requests"], 1, "{header}");
    assert!(header["run"].is_string() && header["started_at"].is_string());
    assert_eq!(header["shard"], "0/1");
    let footer = lines.last().expect("a footer");
    assert_eq!(footer["mcp_fleet_requests_end"], 1);
    assert_eq!(footer["records"], lines.len() as u64 - 2);
    let mut c = Counts::default();
    for r in &lines[1..lines.len() - 1] {
        let session = r["session"].as_u64().expect("a session number");
        if session > 0 {
            c.sessions.insert(session);
        }
        let persona = r["persona"].as_str().map(str::to_string);
        if let Some(p) = &persona {
            c.personas.entry(p.clone()).or_default().0.insert(session);
        }
        if r.get("end").is_some() {
            continue;
        }
        let phase = r["phase"].as_str().expect("a phase").to_string();
        let outcome = r["outcome"].as_str().expect("an outcome");
        let e = c.phases.entry(phase.clone()).or_default();
        e.0 += 1;
        match outcome {
            "ok" => assert!(r.get("kind").is_none()),
            "tool_error" => e.2 += 1,
            "failed" => {
                e.1 += 1;
                let kind = r["kind"].as_str().expect("a failure's kind").to_string();
                if phase != "session" {
                    *c.failures.entry(kind).or_default() += 1;
                }
            }
            other => panic!("outcome {other}"),
        }
        if let Some(p) = &persona {
            *c.personas
                .get_mut(p)
                .expect("seen")
                .1
                .entry(phase.clone())
                .or_default() += 1;
            assert!(
                matches!(r["era"].as_str(), Some("legacy" | "modern")),
                "{r}"
            );
            assert!(r["version"].is_string(), "{r}");
        }
        let (intended, start) = (&r["intended_us"], &r["start_us"]);
        assert!(
            intended.is_u64() && start.is_u64() && r["latency_us"].is_u64(),
            "{r}"
        );
        if let Some(tool) = r["tool"].as_str() {
            let table = match phase.as_str() {
                "tools/call" => &mut c.tools,
                _ => &mut c.requests,
            };
            *table.entry(tool.to_string()).or_default() += 1;
        }
    }
    c
}

/// What `summary.json` counts, the same way.
fn count_summary(json: &Value) -> Counts {
    let mut c = Counts::default();
    let started = json["sessions"]["started"].as_u64().expect("started");
    c.sessions = (1..=started).collect();
    for (name, p) in json["phases"].as_object().expect("phases") {
        let n = |k: &str| p[k].as_u64().unwrap_or(0);
        if n("count") > 0 {
            c.phases
                .insert(name.clone(), (n("count"), n("errors"), n("tool_errors")));
        }
    }
    for (k, v) in json["failures"].as_object().expect("failures") {
        c.failures.insert(k.clone(), v.as_u64().expect("n"));
    }
    for (name, p) in json["personas"].as_object().expect("personas") {
        let phases = p["phases"]
            .as_object()
            .expect("phases")
            .iter()
            .filter(|(_, s)| s["count"].as_u64() > Some(0))
            .map(|(k, s)| (k.clone(), s["count"].as_u64().unwrap_or(0)))
            .collect();
        let n = p["sessions"].as_u64().expect("sessions") as usize;
        c.personas
            .insert(name.clone(), ((0..n as u64).collect(), phases));
    }
    for (table, out) in [("tools", &mut c.tools), ("requests", &mut c.requests)] {
        // An empty table may be left out of summary.json.
        for (name, s) in json[table].as_object().into_iter().flatten() {
            out.insert(name.clone(), s["count"].as_u64().unwrap_or(0));
        }
    }
    c
}

/// The records' counts equal the summary's: per-persona session sets are compared by
/// size (the summary has no session numbers).
fn assert_same(records: &Counts, summary: &Counts) {
    assert_eq!(records.sessions.len(), summary.sessions.len(), "sessions");
    assert_eq!(records.phases, summary.phases, "phases");
    assert_eq!(records.failures, summary.failures, "failures");
    assert_eq!(records.tools, summary.tools, "tools");
    assert_eq!(records.requests, summary.requests, "request steps");
    let shape = |c: &Counts| -> BTreeMap<String, (usize, BTreeMap<String, u64>)> {
        c.personas
            .iter()
            .map(|(k, (s, p))| (k.clone(), (s.len(), p.clone())))
            .collect()
    };
    assert_eq!(shape(records), shape(summary), "personas");
}

/// `report --from-requests FILE --out DIR`: exit 0 and its summary.json.
fn rebuilt(file: &Path, out: &Path) -> Value {
    let o = fleet_command()
        .arg("report")
        .arg("--from-requests")
        .arg(file)
        .arg("--out")
        .arg(out)
        .args(["--color", "never"])
        .output()
        .expect("mcp-fleet runs");
    assert!(
        o.status.success(),
        "report: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("sessions"));
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("JSON")
}

#[test]
fn every_request_is_in_the_file_and_the_counts_are_the_summarys() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (json, file) = run(dir.path(), PROFILE, "requests.ndjson", &[]);
    assert_eq!(json["sessions"]["started"], 60);
    assert!(
        json["failures"]["rpc_error:-32601"].as_u64() > Some(0),
        "{}",
        json["failures"]
    );
    assert!(json["phases"]["tools/call"]["tool_errors"].as_u64() > Some(0));
    let lines = lines(&file);
    let records = count_records(&lines);
    assert_eq!(records.personas.len(), 2, "both personas ran");
    assert!(records.personas.contains_key("ws \"quoted\" \\ one"));
    assert_same(&records, &count_summary(&json));
    // A request step's record names its phase as `tool`, and session numbers are unique
    // per session: each number has exactly one `session` record.
    assert!(
        records.requests.contains_key("acme/stats"),
        "{:?}",
        records.requests
    );
    let mut session_records = BTreeMap::<u64, u32>::new();
    for r in lines.iter().filter(|r| r["phase"] == "session") {
        *session_records
            .entry(r["session"].as_u64().unwrap_or(0))
            .or_default() += 1;
    }
    assert_eq!(session_records.len(), 60);
    assert!(session_records.values().all(|n| *n == 1));

    // The traced persona's requests name their session's trace id (one per session; not
    // the connect, which carries no request); the other persona's never do; and the
    // slowest traced requests of summary.json are among them.
    let mut traces = BTreeMap::<u64, BTreeSet<String>>::new();
    for r in lines.iter().filter(|r| r.get("phase").is_some()) {
        let trace = r["trace"].as_str();
        let traced = r["persona"] == "plain" && r["phase"] != "connect";
        assert_eq!(trace.is_some(), traced, "{r}");
        if let Some(t) = trace {
            assert!(
                t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit()),
                "{t}"
            );
            let session = r["session"].as_u64().unwrap_or(0);
            traces.entry(session).or_default().insert(t.to_string());
        }
    }
    assert!(!traces.is_empty() && traces.values().all(|t| t.len() == 1));
    let all: BTreeSet<&String> = traces.values().flatten().collect();
    let slowest = json["slowest_traces"].as_object().expect("slowest_traces");
    for t in slowest
        .values()
        .flat_map(|v| v.as_array().into_iter().flatten())
    {
        let id = t["trace_id"].as_str().expect("trace_id").to_string();
        assert!(all.contains(&id), "{id} of summary.json is in the file");
    }

    // `report --from-requests` rebuilds the same counts from the file alone.
    let again = rebuilt(&file, &dir.path().join("rebuilt"));
    assert_same(&count_summary(&again), &count_summary(&json));
    for k in [
        "started",
        "completed",
        "failed",
        "interrupted",
        "unreachable",
    ] {
        assert_eq!(again["sessions"][k], json["sessions"][k], "sessions.{k}");
    }
    assert_eq!(
        again["eras"].as_object().map(|e| e.len()),
        json["eras"].as_object().map(|e| e.len())
    );
    assert_eq!(
        again["transports"]["ws"]["session"]["count"],
        json["transports"]["ws"]["session"]["count"]
    );
}

#[test]
fn a_zst_file_is_compressed_and_reads_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (json, file) = run(dir.path(), PROFILE, "requests.ndjson.zst", &[]);
    let bytes = std::fs::read(&file).expect("file");
    assert_eq!(bytes[..4], [0x28, 0xb5, 0x2f, 0xfd], "a zstd frame");
    assert_same(&count_records(&lines(&file)), &count_summary(&json));
    let again = rebuilt(&file, &dir.path().join("rebuilt"));
    assert_same(&count_summary(&again), &count_summary(&json));
}

/// `report --from-requests FILE` must fail with exit 2 and `why` in its message.
fn refused(file: &Path, why: &str) {
    let o = fleet_command()
        .arg("report")
        .arg("--from-requests")
        .arg(file)
        .output()
        .expect("mcp-fleet runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}: {stderr}", file.display());
    assert!(stderr.contains(why), "{why:?} not in: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_cut_corrupt_empty_or_newer_file_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = PROFILE.replace("sessions = 60", "sessions = 8");
    let (_, file) = run(dir.path(), &profile, "requests.ndjson", &[]);
    let text = std::fs::read_to_string(&file).expect("file");
    let put = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).expect("write");
        p
    };
    // Cut mid-line, and cut at a line's end (no footer).
    refused(
        &put("cut.ndjson", &text.as_bytes()[..text.len() / 2]),
        "truncated",
    );
    let whole_lines: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
    refused(&put("short.ndjson", whole_lines.as_bytes()), "cut short");
    refused(&put("empty.ndjson", b""), "empty");
    let garbage = text.replacen("\"phase\"", "\"ph\u{0}ase", 1);
    refused(
        &put("garbage.ndjson", garbage.as_bytes()),
        "is not a record",
    );
    let newer = text.replacen("\"mcp_fleet_requests\":1", "\"mcp_fleet_requests\":2", 1);
    refused(&put("newer.ndjson", newer.as_bytes()), "newer mcp-fleet");
    refused(
        &put("other.json", json!({"not": "ours"}).to_string().as_bytes()),
        "not a requests-file header",
    );
    // A compressed file cut short does not decompress.
    let (_, zst) = run(dir.path(), &profile, "requests.ndjson.zst", &[]);
    let bytes = std::fs::read(&zst).expect("zst");
    refused(&put("cut.zst", &bytes[..bytes.len() - 7]), "requests file");
}

#[test]
fn in_an_open_model_no_request_starts_before_it_was_meant_to() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = r#"
name = "open"
[[persona]]
name = "p"
transport = "http"
[[scenario]]
name = "s"
steps = [{ op = "tools/call", tool = "add", arguments = { a = 1, b = 2 } }]
"#;
    let (json, file) = run(
        dir.path(),
        profile,
        "open.ndjson",
        &["--rate", "200/s", "--sessions", "200"],
    );
    assert_eq!(json["sessions"]["started"], 200);
    let lines = lines(&file);
    let records = count_records(&lines);
    assert_same(&records, &count_summary(&json));
    for r in &lines[1..lines.len() - 1] {
        let (intended, start) = (r["intended_us"].as_u64(), r["start_us"].as_u64());
        assert!(intended <= start, "{r}");
        if r["phase"] == "lag" {
            assert!(r["persona"].is_null() && r["session"] == 0, "{r}");
        }
    }
    // Sessions are meant to start 5 ms apart: their intended starts spread over a second.
    let intended: BTreeSet<u64> = lines
        .iter()
        .filter(|r| r["phase"] == "session")
        .filter_map(|r| r["intended_us"].as_u64())
        .collect();
    assert!(
        intended.len() > 150,
        "{} distinct intended starts",
        intended.len()
    );
    let span = intended.last().unwrap_or(&0) - intended.first().unwrap_or(&0);
    assert!(span > 900_000, "intended starts span {span} µs");
}
