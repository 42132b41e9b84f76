//! The exactness of `merge`: one fixed sample set (sessions k = 0..K with fixed times
//! under a paused clock: several personas, tools, failures, examples, findings,
//! counters, client faults, intervals) fed once to one collector and once split over N
//! collectors by k mod N; each written as a results folder by the run's own writer;
//! the N merged. `summary.json`, every `.hlog` interval and `intervals.csv` must equal
//! the whole run's. Also: the state round-trips, and folders that are not one whole
//! run are refused by name.

use super::state::{Part, State, StatsState};
use super::*;
use crate::conformance::Check;
use crate::metrics::LiveCounters;
use crate::metrics::{
    ClientFault, Collector, Counter, Event, FailureKind, IntervalSink, LeftOut, Origin, Outcome,
    Phase, Recorder, Sample, SessionOutcome, Span, Stats, Verdict,
};
use crate::plan::{Overrides, Plan, Source};
use crate::protocol::{Era, VersionId};
use crate::report::{csv, hlog};
use crate::results::{self, Moment, Run};
use crate::shard::Shard;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::time::Instant;

const SESSIONS: u64 = 30;
const EVERY: Duration = Duration::from_secs(1);
/// Past the last session (k = 29 starts at 100 + 170·29 ms = 5.03 s).
const END: Duration = Duration::from_millis(5_600);

fn start() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_790_000_000)
}

fn plan(threshold: Option<&str>) -> Arc<Plan> {
    let overrides = Overrides {
        seed: Some(7),
        thresholds: threshold.into_iter().map(String::from).collect(),
        ..Overrides::default()
    };
    Arc::new(Plan::from_source(&Source::Quickstart, &overrides).expect("the quickstart resolves"))
}

/// Session k's events, all sent at its start (never near an interval boundary).
fn session(k: u64, plan: &Plan, t0: Instant) -> (Duration, Vec<Event>) {
    let at = Duration::from_millis(100 + 170 * k);
    let personas = plan.personas.len() as u64;
    let tools = plan.tools.len().max(1) as u64;
    let persona = (k % personas) as u16;
    let origin = Origin {
        session: k + 1,
        persona,
        era: if k % 3 == 0 { Era::Modern } else { Era::Legacy },
        version: VersionId::of(if k % 2 == 0 {
            "2025-11-25"
        } else {
            "2025-06-18"
        }),
    };
    let begin = t0 + at;
    let ms = |n: u64| begin + Duration::from_micros(n * 137 + k * 911);
    let sample = |phase, tool, from: u64, to: u64, outcome| {
        Event::Sample(Sample::new(
            phase,
            origin,
            tool,
            Span {
                intended: begin,
                started: ms(from),
                finished: ms(to),
            },
            outcome,
        ))
    };
    let tool = (k % tools) as u16;
    let call = match k {
        _ if k % 4 == 0 => Outcome::ToolError,
        _ if k % 6 == 1 => Outcome::Failed(FailureKind::RpcError(-32602)),
        _ if k % 11 == 7 => Outcome::Failed(FailureKind::Timeout),
        _ => Outcome::Ok,
    };
    let init_fails = k % 7 == 3;
    let mut e = vec![
        Event::SessionStarted { persona },
        sample(Phase::Connect, None, 0, 1 + k % 5, Outcome::Ok),
        sample(
            Phase::Initialize,
            None,
            2,
            9 + k * 3,
            if init_fails {
                Outcome::Failed(FailureKind::HttpStatus(503))
            } else {
                Outcome::Ok
            },
        ),
    ];
    if init_fails {
        e.push(Event::Example {
            kind: FailureKind::HttpStatus(503),
            text: format!("503 Service Unavailable ({})", k % 2),
        });
        e.push(Event::SessionEnded {
            session: k + 1,
            persona,
            outcome: SessionOutcome::Failed,
        });
        return (at, e);
    }
    e.push(sample(Phase::ToolsList, None, 10, 20 + k, Outcome::Ok));
    e.push(sample(Phase::ToolsCall, Some(tool), 30, 40 + 17 * k, call));
    e.push(Event::Generated {
        tool,
        outcome: call,
    });
    match call {
        Outcome::ToolError => e.push(Event::ToolError {
            tool,
            text: "the tool said no".into(),
        }),
        Outcome::Failed(kind) => e.push(Event::Example {
            kind,
            text: format!("{} example {}", kind.name(), k % 2),
        }),
        Outcome::Ok => {}
    }
    if k % 9 == 0 {
        e.push(Event::LeftOut {
            tool,
            reason: LeftOut::Destructive,
        });
    }
    if k % 5 == 0 {
        e.push(Event::Skipped {
            persona,
            phase: Phase::PromptsList,
        });
    }
    e.push(Event::Count {
        counter: Counter::ALL[(k % 3) as usize],
        n: k + 1,
    });
    e.push(Event::ServerMessage {
        method: if k % 2 == 0 {
            "notifications/message".into()
        } else {
            "ping".into()
        },
    });
    e.push(Event::Finding {
        check: Check::ALL[(k % 2) as usize].id(),
        example: Some(format!("seen first by a session of {persona}")),
    });
    e.push(Event::ClientFault {
        persona,
        fault: ClientFault::ALL[(k % 2) as usize],
        verdict: Verdict::ALL[(k % 3) as usize],
        detail: Some("the server answered -32700".into()),
    });
    e.push(Event::Traced {
        phase: Phase::ToolsCall,
        latency_us: 1000 + k * 37,
        trace: u128::from(k) + 1,
        span: k + 1,
    });
    e.push(Event::Extension {
        id: "io.modelcontextprotocol/ui".into(),
        verdict: crate::metrics::ExtensionVerdict::ALL[(k % 4) as usize],
    });
    if k % 8 == 5 {
        e.push(Event::Malformed {
            persona,
            text: "not JSON".into(),
        });
    }
    e.push(Event::Sample(Sample::new(
        Phase::Lag,
        Origin::FLEET,
        None,
        Span {
            intended: begin,
            started: begin,
            finished: begin + Duration::from_micros(50 + k * 13),
        },
        Outcome::Ok,
    )));
    e.push(sample(Phase::Close, None, 200, 201 + k, Outcome::Ok));
    e.push(sample(Phase::Session, None, 0, 300 + 29 * k, Outcome::Ok));
    e.push(Event::SessionEnded {
        session: k + 1,
        persona,
        outcome: SessionOutcome::Completed,
    });
    (at, e)
}

fn collector(plan: &Plan, dir: &Path) -> (tokio::task::JoinHandle<Stats>, Recorder) {
    let transports = plan.personas.iter().map(|p| p.route.transport).collect();
    let (c, rec) = Collector::new(transports, plan.tools.len());
    let sinks: Vec<Box<dyn IntervalSink>> = vec![
        Box::new(hlog::HlogSink::new(dir, start())),
        Box::new(csv::CsvSink::create(dir).expect("intervals.csv")),
    ];
    (tokio::spawn(c.with_intervals(EVERY, sinks).run()), rec)
}

fn write(plan: &Arc<Plan>, dir: &Path, shard: Shard, stats: &Stats) -> crate::summary::Summary {
    let run = Run {
        plan: plan.clone(),
        dir: dir.to_path_buf(),
        target: "built-in (stdio)".into(),
        transport: "stdio".into(),
        started_at: start(),
        live: Arc::new(LiveCounters::default()),
        shard,
        start_late_us: 0,
        stopped_because: Default::default(),
    };
    let moment = Moment {
        at: start() + END,
        elapsed: END,
        stopped_by: "sessions".into(),
        checkpoint: false,
    };
    let facts = results::facts(&run, stats, &moment, Vec::new());
    results::write(&run, stats, &facts).expect("results written")
}

/// The whole run in `root/whole`, its N shards in `root/shard-I`.
async fn runs(root: &Path, n: u32, plan: &Arc<Plan>) -> (PathBuf, Vec<PathBuf>) {
    let whole_dir = root.join("whole");
    let shard_dirs: Vec<PathBuf> = (0..n).map(|i| root.join(format!("shard-{i}"))).collect();
    for d in shard_dirs.iter().chain([&whole_dir]) {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let t0 = Instant::now();
    let (whole, whole_rec) = collector(plan, &whole_dir);
    let (parts, part_recs): (Vec<_>, Vec<_>) =
        shard_dirs.iter().map(|d| collector(plan, d)).unzip();
    for k in 0..SESSIONS {
        let (at, events) = session(k, plan, t0);
        tokio::time::sleep_until(t0 + at).await;
        let (_, again) = session(k, plan, t0);
        for (a, b) in events.into_iter().zip(again) {
            whole_rec.send(a);
            part_recs[(k % u64::from(n)) as usize].send(b);
        }
    }
    tokio::time::sleep_until(t0 + END).await;
    drop(whole_rec);
    drop(part_recs);
    let whole = whole.await.expect("the whole collector");
    write(plan, &whole_dir, Shard::ONE, &whole);
    for (i, (p, d)) in parts.into_iter().zip(&shard_dirs).enumerate() {
        let stats = p.await.expect("a shard's collector");
        let summary = write(
            plan,
            d,
            Shard {
                index: i as u32,
                count: n,
            },
            &stats,
        );
        assert_eq!(summary.run.shard.as_deref(), Some(&*format!("{i}/{n}")));
    }
    (whole_dir, shard_dirs)
}

/// `summary.json` with its example lists in one order.
fn examples_sorted(mut v: Value) -> Value {
    let sort = |list: &mut Value| {
        if let Some(a) = list.as_array_mut() {
            a.sort_by_key(|x| x.to_string());
        }
    };
    for key in ["failure_examples", "tool_error_examples"] {
        if let Some(m) = v[key].as_object_mut() {
            m.values_mut().for_each(sort);
        }
    }
    if let Some(faults) = v["client_faults"].as_array_mut() {
        faults.iter_mut().for_each(|f| sort(&mut f["examples"]));
    }
    v
}

/// The paths where `a` and `b` differ, with both values.
fn differences(a: &Value, b: &Value, at: &str) -> Vec<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter()
                .flat_map(|k| {
                    let none = Value::Null;
                    let (l, r) = (x.get(k).unwrap_or(&none), y.get(k).unwrap_or(&none));
                    differences(l, r, &format!("{at}.{k}"))
                })
                .collect()
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .flat_map(|(i, (l, r))| differences(l, r, &format!("{at}[{i}]")))
            .collect(),
        _ if a == b => Vec::new(),
        _ => vec![format!("{at}: merged {a} whole {b}")],
    }
}

fn json(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("JSON")
}

async fn merged_equals_the_whole_run(n: u32) {
    let root = tempfile::tempdir().expect("tempdir");
    let plan = plan(None);
    let (whole, shards) = runs(root.path(), n, &plan).await;
    let out = root.path().join("merged");
    let merged = merge_dirs(&shards, &out).expect("the shards merge");
    assert_eq!(merged.summary.run.shards, Some(n));

    let mut got = json(&out);
    let want = json(&whole);
    assert_eq!(got["run"]["shards"], n, "a merged report says so");
    if let Some(run) = got["run"].as_object_mut() {
        run.remove("shards");
    }
    assert!(want["sessions"]["started"].as_u64() == Some(SESSIONS));
    assert!(
        want["phases"]["tools/call"]["p99_us"].as_u64() > Some(0),
        "real latencies"
    );
    assert!(!want["findings"].as_array().expect("findings").is_empty());
    assert!(!want["client_faults"].as_array().expect("faults").is_empty());
    assert_eq!(
        want["slowest_traces"]["tools/call"]
            .as_array()
            .map(Vec::len),
        Some(5)
    );
    assert!(want["extensions"]["io.modelcontextprotocol/ui"]["required"].as_u64() > Some(0));
    // Examples are kept in shard order (one process keeps them in time order): the same
    // texts, within the bounds, in another order.
    let (got, want) = (examples_sorted(got), examples_sorted(want.clone()));
    let diff = differences(&got, &want, "");
    assert!(
        diff.is_empty(),
        "summary.json of {n} merged shards differs from the whole run's at: {diff:#?}"
    );

    let csv_of = |d: &Path| std::fs::read_to_string(d.join(csv::FILE_NAME)).expect("csv");
    assert!(csv_of(&whole).lines().count() > 10, "several intervals");
    assert_eq!(csv_of(&out), csv_of(&whole), "intervals.csv");

    let mut logs = 0;
    for phase in Phase::ALL {
        let name = hlog::file_name(phase);
        assert_eq!(
            out.join(&name).is_file(),
            whole.join(&name).is_file(),
            "{name}"
        );
        if !whole.join(&name).is_file() {
            continue;
        }
        let (a, b) = (
            hlog::read_log(&out.join(&name)).expect("merged hlog"),
            hlog::read_log(&whole.join(&name)).expect("whole hlog"),
        );
        assert_eq!(a.len(), b.len(), "{name}: intervals");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((&x.tag, x.start, x.length), (&y.tag, y.start, y.length));
            assert!(x.histogram == y.histogram, "{name} at {:?}", x.start);
        }
        logs += 1;
    }
    assert!(logs >= 5, "every phase's log: {logs}");

    // The merged folder is a results folder like any other.
    let again = crate::report::regenerate(&out).expect("report DIR reads it");
    assert_eq!(again.sessions.started, SESSIONS);
    let text = std::fs::read_to_string(out.join("summary.txt")).expect("summary.txt");
    assert!(text.contains(&format!("merged from {n} shards")), "{text}");
    let state = State::read(&out).expect("a merged state");
    assert_eq!(state.shard, Part::Merged(state::MERGED.into()));
    let shard_text = std::fs::read_to_string(shards[1].join("summary.txt")).expect("txt");
    assert!(
        shard_text.contains(&format!("shard 1/{n}: a part of the run")),
        "{shard_text}"
    );
    let html = std::fs::read_to_string(shards[1].join("report.html")).expect("html");
    assert!(html.contains(&format!("shard 1/{n}: a part of the run")));
}

#[tokio::test(start_paused = true)]
async fn two_shards_merge_to_exactly_the_whole_run() {
    merged_equals_the_whole_run(2).await;
}

#[tokio::test(start_paused = true)]
async fn three_shards_merge_to_exactly_the_whole_run() {
    merged_equals_the_whole_run(3).await;
}

#[tokio::test(start_paused = true)]
async fn the_state_holds_every_figure_and_reads_back_the_same() {
    let root = tempfile::tempdir().expect("tempdir");
    let plan = plan(None);
    let (whole, _) = runs(root.path(), 2, &plan).await;
    let state = State::read(&whole).expect("state.json");
    assert_eq!(state.format, state::FORMAT);
    assert_eq!(state.shard, Part::Shard(Shard::ONE));
    assert_eq!(state.started_at_ns, 1_790_000_000 * 1_000_000_000);
    assert_eq!(state.duration_ns, END.as_nanos() as u64);
    assert!(state.plan_hash.starts_with("sha256:"));
    let stats = state.stats.stats().expect("decodes");
    let again = StatsState::of(&stats).expect("encodes");
    assert_eq!(
        serde_json::to_value(&again).expect("json"),
        serde_json::to_value(&state.stats).expect("json"),
        "lossless"
    );
    // A different seed is a different plan.
    let other = Plan::from_source(
        &Source::Quickstart,
        &Overrides {
            seed: Some(8),
            ..Overrides::default()
        },
    )
    .expect("plan");
    assert_ne!(
        state::plan_hash(&other.profile_toml(), other.seed),
        state.plan_hash
    );
}

/// The error of merging `dirs`.
fn refused(dirs: &[PathBuf], out: &Path) -> String {
    format!(
        "{:#}",
        merge_dirs(dirs, out).expect_err("not one whole run")
    )
}

#[tokio::test(start_paused = true)]
async fn folders_that_are_not_one_whole_run_are_refused_by_name() {
    let root = tempfile::tempdir().expect("tempdir");
    let plan = plan(None);
    let (whole, shards) = runs(root.path(), 3, &plan).await;
    let out = root.path().join("out");
    let e = refused(&shards[..2], &out);
    assert!(e.starts_with("shard 2/3 is missing"), "{e}");
    let e = refused(
        &[shards[0].clone(), shards[1].clone(), shards[1].clone()],
        &out,
    );
    assert!(
        e.contains(&format!(
            "shard 1/3 is given twice: {}, {}",
            shards[1].display(),
            shards[1].display()
        )),
        "{e}"
    );
    let e = refused(&[shards[0].clone(), whole.clone()], &out);
    assert!(e.contains("one of 1 shards"), "{e}");
    let empty = root.path().join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let e = refused(&[shards[0].clone(), empty.clone()], &out);
    assert!(e.contains("has no state.json") && e.contains("fix:"), "{e}");
    // Another plan: the same shard of a run with another threshold.
    let mut state = State::read(&shards[2]).expect("state");
    state.plan_hash = state::plan_hash("name = \"other\"", 7);
    state.write(&shards[2]).expect("written");
    let e = refused(&shards, &out);
    assert!(e.contains("is a shard of another run"), "{e}");
    let mut state = State::read(&shards[1]).expect("state");
    state.stats.interval_s = 2.0;
    state.write(&shards[1]).expect("written");
    let e = refused(&shards[..2], &out);
    assert!(
        e.contains("has intervals of 2s") && e.contains("--interval"),
        "{e}"
    );
    let e = refused(&shards[..1], &shards[0]);
    assert!(e.contains("shard 1/3 is missing"), "{e}");
    // A merged folder is not a shard.
    let (_, two) = runs(&root.path().join("two"), 2, &plan).await;
    let merged = root.path().join("merged");
    let stale = merged.join(hlog::file_name(Phase::PromptsGet));
    std::fs::create_dir_all(&merged).expect("mkdir");
    std::fs::write(&stale, "an old merge's log").expect("write");
    merge_dirs(&two, &merged).expect("merges");
    assert!(!stale.exists(), "a log this merge has no phase for is gone");
    let e = refused(&[merged.clone(), two[1].clone()], &out);
    assert!(e.contains("is a merged report, not a shard"), "{e}");
    let e = refused(&two, &two[0]);
    assert!(e.contains("is one of the shards' folders"), "{e}");
}

#[tokio::test(start_paused = true)]
async fn thresholds_are_evaluated_on_the_merged_figures() {
    let root = tempfile::tempdir().expect("tempdir");
    // Each shard has 15 sessions and passes; the run has 30 and fails.
    let plan = plan(Some("count(sessions) < 20"));
    let (whole, shards) = runs(root.path(), 2, &plan).await;
    let verdict = |d: &Path| {
        json(d)["thresholds"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["expression"] == "count(sessions) < 20")
            .map(|t| t["passed"].clone())
    };
    for d in &shards {
        assert_eq!(verdict(d), Some(Value::Bool(true)), "{}", d.display());
    }
    assert_eq!(verdict(&whole), Some(Value::Bool(false)));
    let merged = merge_dirs(&shards, &root.path().join("merged")).expect("merges");
    assert!(!merged.summary.passed(), "the merged run fails it");
    assert_eq!(
        verdict(&root.path().join("merged")),
        Some(Value::Bool(false))
    );
    assert_eq!(
        json(&root.path().join("merged"))["thresholds"],
        json(&whole)["thresholds"]
    );
}

#[tokio::test(start_paused = true)]
async fn shards_of_different_targets_say_so_and_the_start_skew_is_their_spread() {
    let root = tempfile::tempdir().expect("tempdir");
    let plan = plan(None);
    let (_, shards) = runs(root.path(), 2, &plan).await;
    // Shard 1 had a server of its own (each shard's built-in server) and began 700 µs
    // later than shard 0's 200 µs.
    for (dir, (target, late)) in shards
        .iter()
        .zip([("built-in A", 200), ("built-in B", 900)])
    {
        let mut s = State::read(dir).expect("state.json");
        s.run.target = target.into();
        s.run.start_late_us = late;
        s.write(dir).expect("written");
    }
    let out = root.path().join("merged");
    let merged = merge_dirs(&shards, &out).expect("merged");
    assert_eq!(
        merged.summary.run.target,
        "built-in A and 1 other target, one per shard"
    );
    assert_eq!(merged.start_skew, Duration::from_micros(700));
    assert_eq!(
        State::read(&out).expect("merged state").run.start_late_us,
        900
    );
}

#[test]
fn the_fleets_running_totals_are_every_shards() {
    use crate::metrics::{Series, SeriesUnit};
    let shard = |offset: f64, per_s: f64| {
        let mut sessions = Series::new("fleet.sessions", SeriesUnit::Count);
        let mut rss = Series::new("server.rss", SeriesUnit::Bytes);
        for i in 0..5 {
            let t = f64::from(i) + offset;
            sessions.push(t, per_s * t);
            rss.push(t, 1e6);
        }
        vec![sessions, rss]
    };
    let (a, b) = (shard(0.0, 10.0), shard(0.01, 30.0));
    let merged = totals_of_all(&a, [a.as_slice(), b.as_slice()].into_iter());
    // At shard 0's t = 3: its 30, and shard 1's last value at or before (t = 2.01: 60.3).
    assert_eq!(merged[0].points[3], [3.0, 30.0 + 30.0 * 2.01]);
    // Other series stay shard 0's.
    assert_eq!(merged[1], a[1]);
}
