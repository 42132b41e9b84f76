//! What reading one large answer costs the generator on each transport's framing: the
//! bytes arrive in socket-sized reads and go through the same decoder a session uses (a
//! JSON body, an SSE event, a stdout line, a WebSocket text frame), then become a
//! message. The cost per MiB must not grow with the size (issue 33: SSE was quadratic).
//!
//! `cargo bench --bench parse_cost` (see results/BENCHMARKS.md for the figures).

use bytes::BytesMut;
use mcp_fleet::transport::sse::SseParser;
use mcp_fleet::transport::stdio::lines::StdoutLines;
use mcp_fleet::transport::{classify, ws::socket_config, Carrier, Received};
use std::io::{Cursor, Read, Write};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocket};
use tokio_util::codec::Decoder;

/// What one socket read hands over (a loopback read of a large answer).
const READ: usize = 64 << 10;
const MIB: usize = 1 << 20;

/// A `tools/call` answer whose text makes it `size` bytes long.
fn answer(size: usize) -> Vec<u8> {
    let head = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#;
    let tail = br#""}]}}"#;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(head);
    out.resize(size - tail.len(), b'x');
    out.extend_from_slice(tail);
    out
}

fn is_answer(r: &Received) -> bool {
    matches!(r, Received::Message(_))
}

fn json_body(msg: &[u8], limit: usize) -> bool {
    let mut body = BytesMut::new();
    for chunk in msg.chunks(READ) {
        body.extend_from_slice(chunk);
        assert!(body.len() <= limit);
    }
    is_answer(&classify(&body, Carrier::JsonBody))
}

fn sse_event(msg: &[u8], limit: usize) -> bool {
    let mut wire = b"event: message\ndata: ".to_vec();
    wire.extend_from_slice(msg);
    wire.extend_from_slice(b"\n\n");
    let mut parser = SseParser::with_limit(limit);
    let mut events = Vec::new();
    for chunk in wire.chunks(READ) {
        parser.feed(chunk, &mut events).expect("under the limit");
    }
    events.len() == 1 && is_answer(&classify(events[0].data.as_bytes(), Carrier::SseEvent))
}

fn stdio_line(msg: &[u8], limit: usize) -> bool {
    let mut lines = StdoutLines::new(limit);
    let mut buf = BytesMut::new();
    let mut got = None;
    let mut wire = msg.to_vec();
    wire.push(b'\n');
    for chunk in wire.chunks(READ) {
        buf.extend_from_slice(chunk);
        if let Some(r) = lines.decode(&mut buf).expect("decodes") {
            got = Some(r);
        }
    }
    got.as_ref().is_some_and(is_answer)
}

/// A socket that hands over at most one read's worth at a time; writes go nowhere.
struct Reads(Cursor<Vec<u8>>);

impl Read for Reads {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(READ);
        self.0.read(&mut buf[..n])
    }
}

impl Write for Reads {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn ws_frame(msg: &[u8], limit: usize) -> bool {
    // A server's frame is not masked: FIN + text, 127 and a 64-bit length (RFC 6455 5.2).
    let mut wire = vec![0x81, 127];
    wire.extend_from_slice(&(msg.len() as u64).to_be_bytes());
    wire.extend_from_slice(msg);
    let mut ws = WebSocket::from_raw_socket(
        Reads(Cursor::new(wire)),
        Role::Client,
        Some(socket_config(limit)),
    );
    let text = ws.read().expect("one text frame").into_data();
    is_answer(&classify(&text, Carrier::WsText))
}

/// The fastest of `rounds` (the least disturbed by other work on the machine).
fn best(rounds: u32, f: impl Fn() -> bool) -> Duration {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            assert!(f(), "the answer was not read as a message");
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let limit = 128 * MIB;
    let sizes = [MIB, 4 * MIB, 16 * MIB, 64 * MIB];
    type Framing = fn(&[u8], usize) -> bool;
    let framings: [(&str, Framing); 4] = [
        ("JSON body", json_body),
        ("SSE event", sse_event),
        ("stdio line", stdio_line),
        ("WebSocket frame", ws_frame),
    ];
    println!("| framing | 1 MiB | 4 MiB | 16 MiB | 64 MiB | ms per MiB at 64 MiB ÷ at 16 MiB |");
    println!("|---|---|---|---|---|---|");
    for (name, framing) in framings {
        let per_mib: Vec<f64> = sizes
            .iter()
            .map(|&size| {
                let msg = answer(size);
                let t = best(3, || framing(&msg, limit));
                t.as_secs_f64() * 1e3 / (size / MIB) as f64
            })
            .collect();
        let cells: Vec<String> = per_mib.iter().map(|ms| format!("{ms:.2} ms/MiB")).collect();
        println!(
            "| {name} | {} | {:.2} |",
            cells.join(" | "),
            per_mib[3] / per_mib[2]
        );
    }
}
