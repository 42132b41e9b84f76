//! stdio framing: the server's stdout cut into lines, each classified into what the
//! session receives. Lines are bytes, not text: a line that is not UTF-8 is a malformed
//! message like any other, not the end of the stream. A line longer than the limit is
//! never held: it becomes one `message_too_large` and the rest of it is skipped up to
//! its newline.

use crate::transport::{classify, too_large, Carrier, Received};
use bytes::BytesMut;
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, Decoder};

/// A [`Decoder`] of stdout (for `FramedRead`): one [`Received`] per non-blank line.
#[derive(Debug)]
pub struct StdoutLines {
    lines: AnyDelimiterCodec,
    limit: usize,
}

impl StdoutLines {
    /// Lines up to `limit` bytes (`--max-message-size`).
    pub fn new(limit: usize) -> StdoutLines {
        StdoutLines {
            lines: AnyDelimiterCodec::new_with_max_length(b"\n".to_vec(), b"\n".to_vec(), limit),
            limit,
        }
    }

    fn next(
        &mut self,
        buf: &mut BytesMut,
        at_eof: bool,
    ) -> Result<Option<Received>, std::io::Error> {
        loop {
            let line = if at_eof {
                self.lines.decode_eof(buf)
            } else {
                self.lines.decode(buf)
            };
            return match line {
                // Blank lines (and the CR of CRLF endings) carry nothing.
                Ok(Some(line)) if line.iter().all(u8::is_ascii_whitespace) => continue,
                Ok(Some(line)) => Ok(Some(classify(&line, Carrier::StdioLine))),
                Ok(None) => Ok(None),
                Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => {
                    Ok(Some(too_large(None, "a line on stdout", self.limit)))
                }
                Err(AnyDelimiterCodecError::Io(e)) => Err(e),
            };
        }
    }
}

impl Decoder for StdoutLines {
    type Item = Received;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Received>, std::io::Error> {
        self.next(buf, false)
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Received>, std::io::Error> {
        self.next(buf, true)
    }
}
