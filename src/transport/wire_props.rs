//! Property tests of the parsers that only run on a live connection: HTTP status and
//! header handling (our HTTP/1.1 connection under our limits, then our flow), the legacy SSE stream, and
//! WebSocket frames (tungstenite under our socket config, then our message handling).
//! Each case is a raw loopback server on 127.0.0.1:0 that answers with random or mutated
//! bytes (seeds from `tests/corpus/http` and `tests/corpus/ws`) and then hangs up; the
//! transport must not panic, must end, and must never hand out a message over the limit.

use super::http::{HttpEndpoint, HttpTransport};
use super::legacy_sse::{SseEndpoint, SseTransport};
use super::ws::{WsEndpoint, WsTransport};
use super::Received;
use crate::metrics::FailureKind;
use crate::plan::Connection;
use crate::protocol::jsonrpc::encode_request;
use proptest::prelude::*;
use proptest::sample::Index;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const LIMIT: usize = 1024;
const TIMEOUT: Duration = Duration::from_millis(500);

/// The connection the tests set: the small limit and the short timeout.
fn limited() -> Connection {
    Connection {
        timeout: TIMEOUT,
        max_message_bytes: LIMIT,
        ..Connection::default()
    }
}
/// Most items one case reads before it must have ended.
const MAX_ITEMS: usize = 64;

fn corpus(parser: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(parser);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).expect("corpus file"))
        .collect()
}

/// A seed with a few random byte edits (flip, insert, delete, truncate).
fn mutated(parser: &str) -> impl Strategy<Value = Vec<u8>> {
    let edit = (0u8..4, any::<Index>(), any::<u8>());
    (
        prop::sample::select(corpus(parser)),
        prop::collection::vec(edit, 0..5),
    )
        .prop_map(|(mut bytes, edits)| {
            for (op, at, byte) in edits {
                let len = bytes.len();
                match op {
                    0 if len > 0 => bytes[at.index(len)] ^= byte | 1,
                    1 => bytes.insert(at.index(len + 1), byte),
                    2 if len > 0 => {
                        bytes.remove(at.index(len));
                    }
                    _ => bytes.truncate(at.index(len + 1)),
                }
            }
            bytes
        })
}

fn case(f: impl std::future::Future<Output = ()>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(10), f)
            .await
            .expect("the transport ended on its own");
    });
}

/// A request head (its body, if announced, is not needed: we hang up anyway).
async fn read_head(tcp: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match tcp.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// Answers every connection with `answer(head)` and hangs up.
async fn one_shot(answer: impl Fn(&str) -> Vec<u8> + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let head = read_head(&mut tcp).await;
                let _ = tcp.write_all(&answer(&head)).await;
                let _ = tcp.shutdown().await;
            });
        }
    });
    addr
}

async fn http_case(response: Vec<u8>) {
    let addr = one_shot(move |_| response.clone()).await;
    let url = url::Url::parse(&format!("http://{addr}/mcp")).expect("url");
    let ep = HttpEndpoint::new(&url, limited()).expect("endpoint");
    let Ok(mut t) = HttpTransport::connect(Arc::new(ep)).await else {
        return;
    };
    if t.send_request(1, encode_request(1, "ping", None), &[])
        .await
        .is_err()
    {
        return;
    }
    // A POST's flow yields its items and ends; one answer (or failure) is all we wait for.
    let first = tokio::time::timeout(TIMEOUT * 4, t.recv()).await;
    assert!(
        first.is_ok(),
        "the answer to one POST never came nor failed"
    );
    let _ = tokio::time::timeout(TIMEOUT * 4, t.close()).await;
}

/// The 101 answer to a WebSocket upgrade request, selecting `mcp`.
fn upgrade(head: &str) -> Vec<u8> {
    let key = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("sec-websocket-key")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_default();
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
    format!(
        "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\
         sec-websocket-accept: {accept}\r\nsec-websocket-protocol: mcp\r\n\r\n"
    )
    .into_bytes()
}

async fn ws_case(frames: Vec<u8>) -> Vec<Received> {
    let addr = one_shot(move |head| [upgrade(head), frames.clone()].concat()).await;
    let url = format!("ws://{addr}/ws").parse().expect("url");
    let ep = Arc::new(WsEndpoint::new(url, limited()));
    let mut t = WsTransport::connect(ep, None)
        .await
        .expect("the upgrade is valid");
    let mut seen = Vec::new();
    for _ in 0..MAX_ITEMS {
        let r = t.recv().await;
        let over = matches!(r, Received::Closed { .. });
        seen.push(r);
        if over {
            break;
        }
    }
    seen
}

async fn legacy_case(stream: Vec<u8>) {
    let addr = one_shot(move |head| {
        if head.starts_with("POST") {
            return b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_vec();
        }
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n\
                    event: endpoint\ndata: /messages\n\n";
        [head.as_bytes(), &stream].concat()
    })
    .await;
    let url = format!("http://{addr}/sse").parse().expect("url");
    let ep = Arc::new(SseEndpoint::new(url, limited()));
    let Ok(mut t) = SseTransport::connect(ep, None).await else {
        return;
    };
    // The server hung up after its bytes: the stream must end, whatever they were.
    for _ in 0..MAX_ITEMS {
        if let Received::Closed { .. } = t.recv().await {
            return;
        }
    }
    panic!("the stream never ended");
}

#[test]
fn ws_corpus_frames_over_the_limit_or_broken_end_the_session() {
    let huge = corpus("ws")
        .into_iter()
        .find(|b| b.len() == 10 && b[1] == 127)
        .expect("declared-huge-length.bin");
    case(async {
        let seen = ws_case(huge).await;
        assert!(
            matches!(
                seen[0],
                Received::Failed {
                    kind: FailureKind::MessageTooLarge,
                    ..
                }
            ),
            "{seen:?}"
        );
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn http_responses_never_panic_and_always_end(
        bytes in prop_oneof![mutated("http"), prop::collection::vec(any::<u8>(), 0..200)],
    ) {
        case(http_case(bytes));
    }

    #[test]
    fn ws_frames_never_panic_and_always_end(
        bytes in prop_oneof![mutated("ws"), prop::collection::vec(any::<u8>(), 0..200)],
    ) {
        case(async {
            let seen = ws_case(bytes).await;
            assert!(seen.len() < MAX_ITEMS, "{seen:?}");
        });
    }

    #[test]
    fn legacy_sse_streams_never_panic_and_always_end(
        bytes in prop_oneof![mutated("sse"), prop::collection::vec(any::<u8>(), 0..200)],
    ) {
        case(legacy_case(bytes));
    }
}
