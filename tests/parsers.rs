//! Property tests of the parsers that read what servers send, on stable Rust: JSON-RPC
//! classification, the SSE event parser and stdio line framing. Inputs are random bytes,
//! random well-formed messages, and mutations of the committed seed corpus
//! (`tests/corpus/<parser>/`, real and broken server output), which is also replayed as
//! is. Properties: no panic, nothing buffered past the limit, and round trips (a message
//! serialized and parsed back is equal; a stream split anywhere parses the same). The
//! WebSocket and HTTP parsers run over real loopback connections, in
//! `src/transport/wire_props.rs`; `fuzz/` has cargo-fuzz targets for all of them. The
//! last test checks that `--max-message-size` reaches the transports, end to end.

use bytes::BytesMut;
use mcp_fleet::metrics::FailureKind;
use mcp_fleet::protocol::jsonrpc::{
    encode_notification, encode_request, encode_response, Malformed,
};
use mcp_fleet::protocol::{Incoming, RawResult, RequestId, RpcError};
use mcp_fleet::transport::sse::{SseError, SseEvent, SseParser};
use mcp_fleet::transport::stdio::StdoutLines;
use mcp_fleet::transport::{classify, Carrier, Received};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;
use std::path::PathBuf;
use tokio_util::codec::Decoder;

// ---- the corpus and its mutations ----

/// Every file of `tests/corpus/<parser>/`, sorted by name.
fn corpus(parser: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(parser);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("corpus entry").path();
            let name = path
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read(&path).expect("corpus file"))
        })
        .collect();
    files.sort();
    assert!(files.len() >= 5, "the {parser} corpus is missing");
    files
}

fn seed(parser: &str, name: &str) -> Vec<u8> {
    corpus(parser)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("no {parser}/{name} in the corpus"))
}

/// One edit of a seed, the way a fuzzer mutates.
#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(Index, u8),
    Insert(Index, u8),
    Delete(Index),
    Truncate(Index),
    Duplicate(Index, Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<Index>().prop_map(Mutation::Delete),
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::Duplicate(a, b)),
    ]
}

fn mutate(mut bytes: Vec<u8>, edits: &[Mutation]) -> Vec<u8> {
    for edit in edits {
        if bytes.is_empty() {
            bytes.push(b'{');
        }
        let len = bytes.len();
        match edit {
            Mutation::FlipBit(i, bit) => bytes[i.index(len)] ^= 1 << bit,
            Mutation::Insert(i, b) => bytes.insert(i.index(len + 1), *b),
            Mutation::Delete(i) => {
                bytes.remove(i.index(len));
            }
            Mutation::Truncate(i) => bytes.truncate(i.index(len + 1)),
            Mutation::Duplicate(a, b) => {
                let (start, end) = (a.index(len), b.index(len));
                let span = bytes[start.min(end)..=start.max(end)].to_vec();
                let at = start.max(end) + 1;
                bytes.splice(at..at, span);
            }
        }
    }
    bytes
}

/// A seed of `parser`'s corpus with a few mutations.
fn mutated(parser: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let seeds: Vec<Vec<u8>> = corpus(parser).into_iter().map(|(_, b)| b).collect();
    (
        prop::sample::select(seeds),
        prop::collection::vec(mutation(), 1..6),
    )
        .prop_map(|(seed, edits)| mutate(seed, &edits))
}

/// Cut `bytes` at the given points (any byte boundary).
fn split(bytes: &[u8], cuts: &[Index]) -> Vec<Vec<u8>> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
    at.push(0);
    at.push(bytes.len());
    at.sort_unstable();
    at.windows(2).map(|w| bytes[w[0]..w[1]].to_vec()).collect()
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---- JSON-RPC classification ----

/// Any JSON value, bounded in depth and size.
fn json_value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u32>().prop_map(|n| Value::from(f64::from(n) / 8.0)),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::Number),
        ".{0,16}".prop_map(RequestId::String),
    ]
}

fn rpc_error() -> impl Strategy<Value = RpcError> {
    let data = prop::option::of(json_value()).prop_map(|d| d.filter(|v| !v.is_null()));
    (any::<i64>(), ".{0,24}", data).prop_map(|(code, message, data)| RpcError {
        code,
        message,
        data,
    })
}

/// A well-formed message as a server sends it, and what it must parse to.
fn message() -> impl Strategy<Value = (Vec<u8>, Incoming)> {
    let method = || "[a-z/_]{1,24}".prop_map(String::from);
    // `"params": null` is read as no params (it may only be an object or an array).
    let params = || prop::option::of(json_value()).prop_map(|p| p.filter(|v| !v.is_null()));
    prop_oneof![
        (0..=i64::MAX as u64, method(), params()).prop_map(|(id, method, params)| {
            let bytes = encode_request(id, &method, params.as_ref());
            let id = RequestId::Number(i64::try_from(id).expect("in range"));
            (bytes, Incoming::Request { id, method, params })
        }),
        (method(), params()).prop_map(|(method, params)| {
            let bytes = encode_notification(&method, params.as_ref());
            (bytes, Incoming::Notification { method, params })
        }),
        (request_id(), json_value()).prop_map(|(id, result)| {
            let bytes = encode_response(&id, Ok(&result));
            let outcome = Ok(RawResult::from(result));
            let id = Some(id);
            (bytes, Incoming::Response { id, outcome })
        }),
        (request_id(), rpc_error()).prop_map(|(id, error)| {
            let bytes = encode_response(&id, Err(&error));
            let (id, outcome) = (Some(id), Err(error));
            (bytes, Incoming::Response { id, outcome })
        }),
    ]
}

#[test]
fn jsonrpc_corpus_replays() {
    for (name, bytes) in corpus("jsonrpc") {
        let parsed = Incoming::parse(&bytes);
        let valid = [
            "initialize-result.json",
            "tools-list.json",
            "tool-call-string-id.json",
            "error-with-data.json",
            "parse-error-null-id.json",
            "server-request.json",
            "notification.json",
        ];
        assert_eq!(
            parsed.is_ok(),
            valid.contains(&name.as_str()),
            "{name}: {parsed:?}"
        );
    }
    let batch = Incoming::parse(&seed("jsonrpc", "batch.json"));
    assert_eq!(batch, Err(Malformed::Batch));
    let old = Incoming::parse(&seed("jsonrpc", "wrong-version.json"));
    assert_eq!(old, Err(Malformed::WrongVersion));
    // serde_json's recursion limit turns a hostile nesting into an error, not a stack
    // overflow.
    let deep = Incoming::parse(&seed("jsonrpc", "deep-nesting.json"));
    assert!(matches!(deep, Err(Malformed::NotJson(_))), "{deep:?}");
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn jsonrpc_round_trips((bytes, want) in message()) {
        prop_assert!(!bytes.contains(&b'\n'), "stdio framing needs one line");
        prop_assert_eq!(Incoming::parse(&bytes), Ok(want));
    }

    #[test]
    fn jsonrpc_never_panics_on_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = Incoming::parse(&bytes);
        if let Received::Malformed { excerpt, .. } = classify(&bytes, Carrier::StdioLine) {
            prop_assert!(excerpt.chars().count() <= 201);
        }
    }

    #[test]
    fn jsonrpc_never_panics_on_mutated_seeds(bytes in mutated("jsonrpc")) {
        let _ = classify(&bytes, Carrier::StdioLine);
    }
}

// ---- SSE ----

fn parse_sse(chunks: &[Vec<u8>], limit: usize) -> (Vec<SseEvent>, Option<SseError>) {
    let mut parser = SseParser::with_limit(limit);
    let mut events = Vec::new();
    for chunk in chunks {
        if let Err(e) = parser.feed(chunk, &mut events) {
            return (events, Some(e));
        }
        assert!(parser.buffered() <= limit);
    }
    (events, None)
}

/// Text made mostly of SSE syntax, so that random streams hit every branch.
fn sse_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("data:".to_string()),
        Just("data: ".to_string()),
        Just("event: message".to_string()),
        Just("event:endpoint".to_string()),
        Just("id: 7".to_string()),
        Just("id".to_string()),
        Just("retry: 1500".to_string()),
        Just(":".to_string()),
        Just("\n".to_string()),
        Just("\r".to_string()),
        Just("\r\n".to_string()),
        Just("\n\n".to_string()),
        "[ -~é😀]{0,12}",
    ];
    prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
}

/// Events as a server writes them: the event and id fields, then data lines.
fn sse_events() -> impl Strategy<Value = Vec<SseEvent>> {
    let field = "[!-9;-~][ -9;-~é]{0,10}"; // no CR, LF, leading space or colon
    let event = (
        prop::option::of(field),
        prop::collection::vec("[^\r\n]{0,16}", 1..4),
        prop::option::of(field),
    )
        .prop_map(|(event, lines, id)| SseEvent {
            event,
            data: lines.join("\n"),
            id,
            retry_ms: None,
        });
    prop::collection::vec(event, 0..6)
}

fn write_sse(events: &[SseEvent], line_end: &str) -> String {
    let mut out = String::new();
    for ev in events {
        if let Some(e) = &ev.event {
            out.push_str(&format!("event: {e}{line_end}"));
        }
        if let Some(id) = &ev.id {
            out.push_str(&format!("id: {id}{line_end}"));
        }
        for line in ev.data.split('\n') {
            out.push_str(&format!("data: {line}{line_end}"));
        }
        out.push_str(line_end);
    }
    out
}

#[test]
fn sse_corpus_replays() {
    const BIG: usize = 1 << 20;
    for (name, bytes) in corpus("sse") {
        let whole = parse_sse(std::slice::from_ref(&bytes), BIG);
        let bytewise: Vec<Vec<u8>> = bytes.iter().map(|b| vec![*b]).collect();
        if whole.1.is_none() {
            assert_eq!(parse_sse(&bytewise, BIG), whole, "{name}");
        }
    }
    let (events, _) = parse_sse(&[seed("sse", "legacy-endpoint.txt")], BIG);
    assert_eq!(events[0].event_type(), "endpoint");
    assert_eq!(events[0].data, "/messages?sessionId=abc123");
    let (events, _) = parse_sse(&[seed("sse", "crlf-and-comments.txt")], BIG);
    assert_eq!(events.len(), 1);
    assert!(matches!(
        classify(events[0].data.as_bytes(), Carrier::SseEvent),
        Received::Message(Incoming::Notification { .. })
    ));
    let (events, err) = parse_sse(&[seed("sse", "unterminated.txt")], BIG);
    assert!(
        events.is_empty() && err.is_none(),
        "an unfinished event waits"
    );
    let (_, err) = parse_sse(&[seed("sse", "invalid-utf8.txt")], BIG);
    assert_eq!(err, Some(SseError::NotUtf8));
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn sse_split_anywhere_parses_the_same(
        text in sse_text(),
        cuts in prop::collection::vec(any::<Index>(), 0..8),
    ) {
        let bytes = text.into_bytes();
        let whole = parse_sse(std::slice::from_ref(&bytes), 1 << 20);
        prop_assert_eq!(parse_sse(&split(&bytes, &cuts), 1 << 20), whole);
    }

    #[test]
    fn sse_events_round_trip(
        events in sse_events(),
        crlf in any::<bool>(),
        cuts in prop::collection::vec(any::<Index>(), 0..6),
    ) {
        let text = write_sse(&events, if crlf { "\r\n" } else { "\n" });
        let (parsed, err) = parse_sse(&split(text.as_bytes(), &cuts), 1 << 20);
        prop_assert_eq!(err, None);
        prop_assert_eq!(parsed, events);
    }

    /// Whatever arrives, the parser holds at most its limit, and past it holds nothing.
    #[test]
    fn sse_buffers_at_most_its_limit(
        chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..96), 0..24),
        limit in 1usize..128,
    ) {
        let mut parser = SseParser::with_limit(limit);
        let mut events = Vec::new();
        for chunk in &chunks {
            match parser.feed(chunk, &mut events) {
                Ok(()) => prop_assert!(parser.buffered() <= limit),
                Err(SseError::TooLarge { .. }) => prop_assert_eq!(parser.buffered(), 0),
                Err(SseError::NotUtf8) => {}
            }
        }
        for ev in &events {
            prop_assert!(ev.data.len() <= limit);
        }
    }

    #[test]
    fn sse_never_panics_on_mutated_seeds(
        bytes in mutated("sse"),
        cuts in prop::collection::vec(any::<Index>(), 0..4),
    ) {
        let _ = parse_sse(&split(&bytes, &cuts), 256);
    }
}

// ---- stdio lines ----

/// What the framing yields, as comparable text, and the most it held between reads.
fn read_lines(chunks: &[Vec<u8>], limit: usize) -> (Vec<String>, usize) {
    let mut lines = StdoutLines::new(limit);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut held = 0;
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Some(r) = lines.decode(&mut buf).expect("framing never fails") {
            out.push(format!("{r:?}"));
        }
        held = held.max(buf.len());
    }
    while let Some(r) = lines.decode_eof(&mut buf).expect("framing never fails") {
        out.push(format!("{r:?}"));
    }
    (out, held)
}

#[test]
fn stdio_corpus_replays() {
    for (name, bytes) in corpus("stdio") {
        let whole = read_lines(std::slice::from_ref(&bytes), 1 << 20);
        let bytewise: Vec<Vec<u8>> = bytes.iter().map(|b| vec![*b]).collect();
        assert_eq!(read_lines(&bytewise, 1 << 20).0, whole.0, "{name}");
    }
    let (lines, _) = read_lines(&[seed("stdio", "session.txt")], 1 << 20);
    assert_eq!(lines.len(), 4);
    assert!(lines.iter().all(|l| l.starts_with("Message(")), "{lines:?}");
    // A line that is not UTF-8 is one malformed message; the stream goes on.
    let (lines, _) = read_lines(&[seed("stdio", "invalid-utf8.txt")], 1 << 20);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("Malformed"), "{lines:?}");
    assert!(lines[1].starts_with("Message(Notification"), "{lines:?}");
    let (lines, _) = read_lines(&[seed("stdio", "no-final-newline.txt")], 1 << 20);
    assert!(lines[0].starts_with("Message(Response"), "{lines:?}");
    // A line over the limit is one message_too_large, and the next line still counts.
    let (lines, _) = read_lines(&[seed("stdio", "session.txt")], 64);
    let too_large = format!("kind: {:?}", FailureKind::MessageTooLarge);
    assert!(lines.iter().all(|l| l.contains(&too_large)), "{lines:?}");
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn stdio_split_anywhere_frames_the_same_and_holds_little(
        bytes in prop_oneof![
            mutated("stdio"),
            prop::collection::vec(prop_oneof![Just(b'\n'), any::<u8>()], 0..512),
        ],
        cuts in prop::collection::vec(any::<Index>(), 0..8),
        limit in 8usize..256,
    ) {
        let chunks = split(&bytes, &cuts);
        let (whole, _) = read_lines(std::slice::from_ref(&bytes), limit);
        let (pieces, held) = read_lines(&chunks, limit);
        prop_assert_eq!(pieces, whole);
        let largest = chunks.iter().map(Vec::len).max().unwrap_or(0);
        prop_assert!(held <= limit + largest, "held {held}");
    }

    #[test]
    fn stdio_lines_round_trip((bytes, want) in message()) {
        let mut line = bytes;
        line.push(b'\n');
        let (lines, _) = read_lines(&[line], 1 << 20);
        prop_assert_eq!(lines, vec![format!("{:?}", Received::Message(want))]);
    }
}

// ---- the limit, end to end ----

/// `--max-message-size` reaches the transports: against the built-in server over stdio,
/// a 1 KiB limit turns its first larger answer into one `message_too_large`, and the
/// session fails instead of reading it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_message_size_fails_the_session_as_message_too_large() {
    let out = tempfile::tempdir().expect("tempdir");
    let args = mcp_fleet::cli::RunArgs {
        out: Some(out.path().to_path_buf()),
        quiet: true,
        overrides: mcp_fleet::cli::Overrides {
            stdio: Some(format!("{} serve --stdio", env!("CARGO_BIN_EXE_mcp-fleet"))),
            sessions: Some(1),
            clients: Some(1),
            seed: Some(1),
            client: mcp_fleet::cli::ClientArgs {
                max_message_size: Some("1KiB".into()),
                timeout: Some("5s".into()),
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    };
    let run = mcp_fleet::run(args);
    tokio::time::timeout(std::time::Duration::from_secs(60), run)
        .await
        .expect("the run ends")
        .expect("the run could be done");
    let text = std::fs::read_to_string(out.path().join("summary.json")).expect("summary");
    let json: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(
        json["failures"]["message_too_large"], 1,
        "{}",
        json["failures"]
    );
}
