//! The results folder's reports: interval logs read back with HdrHistogram's own log
//! reader and matched to summary.json, the CSV, the HTML page, JUnit, thresholds and exit
//! codes, `report DIR` and `compare`.

use crate::support::{check_schema, fleet_command, write_profile, Finished, FleetRun};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use mcp_fleet::cli::RunArgs;
use std::path::Path;

/// Sum every interval of one `.hlog`, with the crate's own reader; also the tags seen.
fn read_hlog(path: &Path) -> (Histogram<u64>, Vec<String>, usize) {
    let bytes = std::fs::read(path).expect("hlog written");
    let mut total = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).expect("bounds");
    let mut tags = Vec::new();
    let mut intervals = 0;
    let mut de = Deserializer::new();
    for entry in IntervalLogIterator::new(&bytes) {
        if let LogEntry::Interval(i) = entry.expect("a valid interval log") {
            let raw = base64::Engine::decode(
                &base64::engine::general_purpose::STANDARD,
                i.encoded_histogram(),
            )
            .expect("base64");
            let h: Histogram<u64> = de.deserialize(&mut raw.as_slice()).expect("V2 histogram");
            total.add(&h).expect("same bounds");
            tags.extend(i.tag().map(|t| t.as_str().to_string()));
            intervals += 1;
        }
    }
    (total, tags, intervals)
}

#[tokio::test]
async fn the_quickstart_folder_holds_every_report_and_the_hlogs_match_the_summary() {
    let Finished { summary, json, dir } = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            interval: Some("100ms".into()),
            thresholds: vec![
                "p99(initialize) < 10s".into(),
                "error_rate < 0.1%".into(),
                "rate(sessions) > 1000000".into(),
            ],
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await;
    check_schema(&json);
    assert_eq!(json["schema_version"], 17);
    assert!(!summary.passed(), "one threshold cannot hold");
    // The quickstart profile's two thresholds come first, then the --threshold ones.
    let verdicts: Vec<bool> = summary.thresholds.iter().map(|t| t.passed).collect();
    assert_eq!(verdicts, [true, true, true, true, false]);
    assert_eq!(
        json["thresholds"][0]["expression"],
        "p99(initialize) < 500ms"
    );
    assert_eq!(
        json["thresholds"][4]["expression"],
        "rate(sessions) > 1000000"
    );
    assert_eq!(json["run"]["interval_s"], 0.1);
    assert!(json["protocol_versions"]["2025-11-25"]["initialize"]["count"].as_u64() > Some(0));
    assert!(json["protocol_versions"]["2025-03-26"]["initialize"]["count"].as_u64() > Some(0));

    for phase in ["initialize", "tools/list", "tools/call", "session"] {
        let file = dir.path().join(format!("{}.hlog", phase.replace('/', "_")));
        let (total, tags, intervals) = read_hlog(&file);
        let p = &json["phases"][phase];
        let ok = p["count"].as_u64().unwrap_or(0) - p["errors"].as_u64().unwrap_or(0);
        assert_eq!(
            total.len(),
            ok,
            "{phase}: every successful sample is in the log"
        );
        assert_eq!(
            Some(total.value_at_quantile(0.99)),
            p["p99_us"].as_u64(),
            "{phase}"
        );
        assert_eq!(
            Some(total.value_at_quantile(0.5)),
            p["p50_us"].as_u64(),
            "{phase}"
        );
        assert_eq!(Some(total.max()), p["max_us"].as_u64(), "{phase}");
        assert!(tags.iter().all(|t| t == phase), "{phase}: tags {tags:?}");
        assert!(intervals >= 1);
        let head = std::fs::read_to_string(&file).expect("text");
        assert!(
            head.contains(&format!("phase {phase}:")),
            "header names the phase"
        );
        assert!(head.contains("#[StartTime: "));
    }

    let csv = std::fs::read_to_string(dir.path().join("intervals.csv")).expect("csv");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(mcp_fleet::report::csv::HEADER));
    let sessions: u64 = lines
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[2] == "session").then(|| f[3].parse::<u64>().expect("count"))
        })
        .sum();
    assert_eq!(sessions, 400, "the CSV's session counts add up to the run");

    let html = std::fs::read_to_string(dir.path().join("report.html")).expect("html");
    assert!(html.contains("FAIL · 1 of 5 thresholds"));
    assert!(html.contains("data-chart=distribution"));
    assert!(html.contains("data-phase=\"tools/call\""));
    assert!(html.contains("by protocol version"));
    assert!(!html.contains("src=\"http"), "no fetched script");
    assert!(!html.contains("{{"), "every placeholder filled");
    // Response-time ranges against the tightest latency threshold on initialize, the
    // quickstart's 500 ms; every successful sample within or past it.
    let row = html
        .lines()
        .find(|l| l.starts_with("<tr><td>initialize</td><td>500.00ms"))
        .expect("initialize's ranges row");
    assert!(row.contains("(p99(initialize) &lt; 500ms)"), "{row}");
    let counts: Vec<u64> = row
        .split("<td class")
        .skip(1)
        .take(3)
        .map(|c| {
            let n = c.split('>').nth(1).and_then(|t| t.split(' ').next());
            n.and_then(|t| t.parse().ok()).expect("a count")
        })
        .collect();
    let init = &json["phases"]["initialize"];
    assert_eq!(
        counts[0] + counts[1],
        init["count"].as_u64().unwrap_or(0) - counts[2]
    );
    assert_eq!(counts[2], init["errors"].as_u64().unwrap_or(u64::MAX));

    let junit = std::fs::read_to_string(dir.path().join("thresholds.xml")).expect("junit");
    assert!(junit.contains("tests=\"5\" failures=\"1\""), "{junit}");
    assert!(
        junit.contains("<failure message=\"rate(sessions) &gt; 1000000"),
        "{junit}"
    );
    let text = std::fs::read_to_string(dir.path().join("summary.txt")).expect("text");
    assert!(text.contains("thresholds: 1 of 5 FAILED"), "{text}");

    // `report DIR` rebuilds the views from the files alone.
    for f in ["report.html", "summary.txt", "thresholds.xml"] {
        std::fs::remove_file(dir.path().join(f)).expect("remove");
    }
    let again = mcp_fleet::report::regenerate(dir.path()).expect("regenerates");
    assert_eq!(again.thresholds, summary.thresholds);
    let html2 = std::fs::read_to_string(dir.path().join("report.html")).expect("html again");
    assert!(
        html2.contains("data-chart=distribution") && html2.contains("\"distribution\":{\"close\"")
    );
    assert!(dir.path().join("thresholds.xml").is_file());
}

#[test]
fn exit_codes_follow_thresholds_and_bad_ones_are_profile_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = |extra: &[&str], out: &str| {
        fleet_command()
            .args([
                "run",
                "--sessions",
                "8",
                "--clients",
                "2",
                "--think",
                "0ms",
                "--quiet",
                "--out",
            ])
            .arg(dir.path().join(out))
            .args(extra)
            .output()
            .expect("runs")
    };
    let o = run(
        &[
            "--threshold",
            "p99(session) < 1ms",
            "--threshold",
            "errors < 1000",
        ],
        "a",
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&["--threshold", "p99(session) < 60s"], "b");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let o = run(&["--threshold", "p99(initialise) < 50ms"], "c");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`--threshold`: `p99(initialise) < 50ms`: unknown phase `initialise`"),
        "{err}"
    );
    assert!(
        err.contains("fix: use sessions or a phase: connect"),
        "{err}"
    );
    assert!(
        !dir.path().join("c").join("summary.json").exists(),
        "nothing ran"
    );

    let profile = write_profile(
        dir.path(),
        "thresholds = [\"p99(initialize) < 50ms\", \"p99(tools/call, persona=nobody) < 1s\"]\n",
    );
    let o = fleet_command()
        .arg("validate")
        .arg(&profile)
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`thresholds[1]`") && err.contains("unknown persona `nobody`"),
        "{err}"
    );
}

#[test]
fn compare_prints_deltas_and_fails_on_regressions() {
    let dir = tempfile::tempdir().expect("tempdir");
    for out in ["base", "new"] {
        let o = fleet_command()
            .args([
                "run",
                "--sessions",
                "20",
                "--clients",
                "2",
                "--think",
                "0ms",
                "--quiet",
                "--out",
            ])
            .arg(dir.path().join(out))
            .output()
            .expect("runs");
        assert_eq!(o.status.code(), Some(0));
    }
    let compare = |rules: &[&str]| {
        let mut c = fleet_command();
        c.arg("compare")
            .arg(dir.path().join("base"))
            .arg(dir.path().join("new"));
        for r in rules {
            c.args(["--fail-if", r]);
        }
        c.output().expect("runs")
    };
    let o = compare(&[]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("p99 base → new") && text.contains("initialize"),
        "{text}"
    );
    // Two runs of the same 20 sessions: a p99 of 20 samples cannot be told from noise,
    // whatever it did, so no rule on it is a regression; the median is bounded. The rule
    // on initialize is crossed by any change at all (≥ -100 %), so it is always weighed,
    // whichever way the noise went.
    let o = compare(&["p99 > +10%", "p99(initialize) >= -100%"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("not enough data: 20 and 20 samples cannot bound a p99"),
        "{text}"
    );
    assert!(!text.contains("REGRESSIONS"), "{text}");
    let o = compare(&["p99 > +1000000%"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = compare(&["p99 > 10%"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("give it a sign"));
}

/// Open load at 100 sessions/s for 10 s against `server`, into `dir/name`: 1,000
/// samples a phase, enough to bound a p99.
fn open_run(dir: &std::path::Path, name: &str, server: &crate::support::Served) {
    let o = fleet_command()
        .args(["run", "--target", &server.url(), "--rate", "100/s"])
        .args(["--duration", "10s", "--quiet", "--out"])
        .arg(dir.join(name))
        .output()
        .expect("runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn compare_calls_a_stall_a_regression_with_the_intervals_that_tell() {
    let dir = tempfile::tempdir().expect("tempdir");
    let steady = crate::support::Served::start(&[]);
    open_run(dir.path(), "base", &steady);
    // The same load against a server that freezes for 2 s two seconds into the run: a
    // fifth of the sessions wait up to 2 s, far beyond what 1,000 samples leave to
    // chance (and beyond what a busy machine does to the steady run).
    let stalling = crate::support::Served::start(&["--stall-at", "2s", "--stall-for", "2s"]);
    open_run(dir.path(), "stalled", &stalling);
    let o = fleet_command()
        .arg("compare")
        .arg(dir.path().join("base"))
        .arg(dir.path().join("stalled"))
        .args(["--fail-if", "p99(initialize) > +10%"])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("REGRESSIONS"), "{text}");
    assert!(
        text.contains("p99(initialize) > +10%: initialize:") && text.contains("do not overlap"),
        "{text}"
    );
}

#[test]
fn report_on_a_folder_without_a_summary_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = fleet_command()
        .arg("report")
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("summary.json") && err.contains("fix: give the results folder"),
        "{err}"
    );
}
