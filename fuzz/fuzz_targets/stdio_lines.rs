//! Fuzz target: stdio line framing fed in pieces. No panic, never more held than the
//! limit plus one read, and the same items as when fed whole.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use mcp_fleet::transport::stdio::StdoutLines;
use tokio_util::codec::Decoder;

const LIMIT: usize = 1024;

fn frame<'a>(pieces: impl Iterator<Item = &'a [u8]>) -> Vec<String> {
    let mut lines = StdoutLines::new(LIMIT);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in pieces {
        buf.extend_from_slice(piece);
        while let Ok(Some(r)) = lines.decode(&mut buf) {
            out.push(format!("{r:?}"));
        }
        assert!(buf.len() <= LIMIT + piece.len());
    }
    while let Ok(Some(r)) = lines.decode_eof(&mut buf) {
        out.push(format!("{r:?}"));
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&size, stream)) = data.split_first() else {
        return;
    };
    let pieces = frame(stream.chunks(usize::from(size).max(1)));
    assert_eq!(frame(std::iter::once(stream)), pieces);
});
