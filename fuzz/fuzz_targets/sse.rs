//! Fuzz target: the SSE event parser fed in pieces (the first byte picks the piece
//! size). No panic, never more buffered than the limit, and for UTF-8 input the same
//! events as when fed whole.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_fleet::transport::sse::{SseEvent, SseParser};

const LIMIT: usize = 4096;

fn parse<'a>(pieces: impl Iterator<Item = &'a [u8]>) -> (Vec<SseEvent>, bool) {
    let mut parser = SseParser::with_limit(LIMIT);
    let mut events = Vec::new();
    for piece in pieces {
        if parser.feed(piece, &mut events).is_err() {
            return (events, false);
        }
        assert!(parser.buffered() <= LIMIT);
    }
    (events, true)
}

fuzz_target!(|data: &[u8]| {
    let Some((&size, stream)) = data.split_first() else {
        return;
    };
    let pieces = parse(stream.chunks(usize::from(size).max(1)));
    if std::str::from_utf8(stream).is_ok() && pieces.1 {
        assert_eq!(parse(std::iter::once(stream)), pieces);
    }
});
