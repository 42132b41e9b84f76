use super::*;
use crate::metrics::{FailureKind, Origin, Span};
use crate::protocol::{Era, VersionId};
use std::time::Duration;

fn names() -> (Vec<String>, Vec<String>, Vec<String>) {
    (
        vec![
            json_string("plain"),
            json_string("quote\" back\\slash\nnew\u{1}line ☃"),
        ],
        vec![json_string("echo \"it\"")],
        vec![json_string("custom/ping")],
    )
}

fn line_of(s: &Sample, base: Instant) -> serde_json::Value {
    let (personas, tools, requests) = names();
    let mut l = Vec::new();
    format_sample(
        &mut l,
        s,
        base,
        Names {
            personas: &personas,
            tools: &tools,
            requests: &requests,
        },
        (s.session == 7).then_some(0xabc_u128),
    );
    assert_eq!(l.last(), Some(&b'\n'), "one line");
    assert_eq!(
        l.iter().filter(|b| **b == b'\n').count(),
        1,
        "no raw newline inside"
    );
    serde_json::from_slice(&l).expect("valid JSON")
}

#[test]
fn names_are_escaped_and_every_field_is_there() {
    let base = Instant::now();
    let origin = Origin {
        session: 42,
        persona: 1,
        era: Era::Modern,
        version: VersionId::of("2025-06-18"),
    };
    let span = Span {
        intended: base + Duration::from_micros(100),
        started: base + Duration::from_micros(250),
        finished: base + Duration::from_micros(1_250),
    };
    let failed = Outcome::Failed(FailureKind::RpcError(-32601));
    let v = line_of(
        &Sample::new(Phase::ToolsCall, origin, Some(0), span, failed),
        base,
    );
    assert_eq!(v["session"], 42);
    assert_eq!(v["persona"], "quote\" back\\slash\nnew\u{1}line ☃");
    assert_eq!(v["era"], "modern");
    assert_eq!(v["version"], "2025-06-18");
    assert_eq!(v["phase"], "tools/call");
    assert_eq!(v["tool"], "echo \"it\"");
    assert_eq!(v["intended_us"], 100);
    assert_eq!(v["start_us"], 250);
    assert_eq!(v["latency_us"], 1_000);
    assert_eq!(v["outcome"], "failed");
    assert_eq!(v["kind"], "rpc_error:-32601");
    assert!(v.get("trace").is_none() && v.get("bytes").is_none());
}

#[test]
fn a_request_step_names_its_phase_and_fleet_samples_have_no_persona() {
    let base = Instant::now();
    let origin = Origin {
        session: 3,
        persona: 0,
        era: Era::Legacy,
        version: VersionId::of("2025-03-26"),
    };
    let request = Sample::new(
        Phase::Request,
        origin,
        Some(0),
        Span::since(base),
        Outcome::ToolError,
    );
    let v = line_of(&request, base);
    assert_eq!(
        (v["tool"].as_str(), v["outcome"].as_str()),
        (Some("custom/ping"), Some("tool_error"))
    );
    assert!(v.get("kind").is_none());
    // A traced session's records name its trace id, in the W3C form.
    let traced = Sample::new(
        Phase::Initialize,
        Origin {
            session: 7,
            ..origin
        },
        None,
        Span::since(base),
        Outcome::Ok,
    );
    assert_eq!(
        line_of(&traced, base)["trace"],
        "00000000000000000000000000000abc"
    );
    let lag = Sample::new(
        Phase::Lag,
        Origin::FLEET,
        None,
        Span::since(base),
        Outcome::Ok,
    );
    let v = line_of(&lag, base);
    assert_eq!(v["session"], 0);
    assert!(v["persona"].is_null() && v["era"].is_null() && v["version"].is_null());
    assert!(v.get("tool").is_none());
}

#[test]
fn the_file_has_a_header_the_records_and_a_footer_plain_or_compressed() {
    let dir = tempfile::tempdir().expect("temp dir");
    for name in ["r.ndjson", "r.ndjson.zst"] {
        let path = dir.path().join(name);
        let header = Header {
            run: "a \"run\"".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            shard: "1/2".into(),
            personas: vec![("p".into(), TransportKind::StreamableHttp)],
            tools: vec!["t".into()],
            requests: Vec::new(),
        };
        let base = Instant::now();
        let mut sink = RequestsSink::create(&path, &header, base).expect("created");
        let origin = Origin {
            session: 1,
            persona: 0,
            era: Era::Legacy,
            version: VersionId::of("2025-03-26"),
        };
        sink.sample(&Sample::new(
            Phase::Connect,
            origin,
            None,
            Span::since(base),
            Outcome::Ok,
        ));
        sink.ended(1, 0, SessionOutcome::Unreachable);
        sink.ended(2, 0, SessionOutcome::Completed);
        assert_eq!(sink.finish(), Ok(2));
        let bytes = std::fs::read(&path).expect("read");
        let text = if name.ends_with(".zst") {
            zstd::stream::decode_all(&bytes[..]).expect("a whole zstd frame")
        } else {
            bytes
        };
        let lines: Vec<serde_json::Value> = text
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).expect("JSON line"))
            .collect();
        assert_eq!(lines.len(), 4, "{name}");
        assert_eq!(lines[0][HEADER_KEY], FORMAT);
        assert_eq!(lines[0]["run"], "a \"run\"");
        assert_eq!(lines[0]["shard"], "1/2");
        assert_eq!(lines[0]["personas"][0]["transport"], "http");
        assert_eq!(lines[2]["end"], "unreachable");
        assert_eq!(lines[3][END_KEY], FORMAT);
        assert_eq!(lines[3]["records"], 2);
    }
}
