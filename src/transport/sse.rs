//! An incremental `text/event-stream` parser (the WHATWG rules that MCP relies on):
//! events end at a blank line, `data:` lines join with `\n`, `:` lines are comments,
//! `id:` and `retry:` are kept, and CR, LF or CRLF all end a line. Feed it body chunks
//! as they arrive; it yields whole events.

use bytes::{Buf, BytesMut};

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// `event:` field; `message` when absent.
    pub event: Option<String>,
    pub data: String,
    pub id: Option<String>,
    pub retry_ms: Option<u64>,
}

impl SseEvent {
    pub fn event_type(&self) -> &str {
        self.event.as_deref().unwrap_or("message")
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SseError {
    /// An event (or a line not yet ended) outgrew the limit; the parser dropped what it
    /// held and the stream must not be read further.
    #[error("an SSE event exceeds {limit} bytes")]
    TooLarge { limit: usize },
    #[error("an SSE line is not UTF-8")]
    NotUtf8,
}

#[derive(Debug)]
pub struct SseParser {
    buf: BytesMut,
    current: SseEvent,
    has_data: bool,
    has_fields: bool,
    /// A CR ended the last line; a following LF belongs to it.
    after_cr: bool,
    /// Most bytes of one event (its data so far plus the line not yet ended) we hold.
    limit: usize,
    /// Bytes at the start of `buf` already searched for a line end and found to have
    /// none: a long line that arrives in many chunks is searched once, not once per
    /// chunk (which made an 8 MiB event cost seconds of CPU).
    scanned: usize,
    /// Bytes searched for line ends since the parser was made: linear in the input.
    #[cfg(test)]
    examined: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::with_limit(crate::plan::DEFAULT_MAX_MESSAGE_BYTES)
    }
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// A parser that refuses events larger than `limit` bytes (`--max-message-size`).
    pub fn with_limit(limit: usize) -> Self {
        SseParser {
            buf: BytesMut::new(),
            current: SseEvent::default(),
            has_data: false,
            has_fields: false,
            after_cr: false,
            limit,
            scanned: 0,
            #[cfg(test)]
            examined: 0,
        }
    }

    /// Bytes held between calls: the event being built and the line not yet ended.
    /// After a successful `feed` this never exceeds the limit.
    pub fn buffered(&self) -> usize {
        self.buf.len() + self.current.data.len()
    }

    /// Add bytes; complete events are pushed to `out`. A hostile stream cannot make the
    /// parser hold more than its limit: past it, the parser empties itself and fails.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        self.buf.extend_from_slice(chunk);
        loop {
            // The LF of a CRLF may come in the next chunk: keep the flag until a byte
            // arrives to check, or a CRLF split between two reads is read as a blank line
            // and dispatches the event early.
            if self.after_cr {
                match self.buf.first() {
                    None => break,
                    Some(b'\n') => self.buf.advance(1),
                    Some(_) => {}
                }
                self.after_cr = false;
            }
            let unsearched = &self.buf[self.scanned..];
            #[cfg(test)]
            {
                self.examined += unsearched.len();
            }
            let Some(end) = memchr::memchr2(b'\n', b'\r', unsearched).map(|i| i + self.scanned)
            else {
                self.scanned = self.buf.len();
                break;
            };
            self.scanned = 0;
            let line = self.buf.split_to(end);
            let terminator = self.buf[0];
            self.buf.advance(1);
            self.after_cr = terminator == b'\r';
            if line.len() + self.current.data.len() > self.limit {
                return Err(self.too_large());
            }
            self.line(&line, out)?;
        }
        if self.buffered() > self.limit {
            return Err(self.too_large());
        }
        Ok(())
    }

    /// Drop everything held (memory stays flat) and say why.
    fn too_large(&mut self) -> SseError {
        #[cfg(test)]
        let examined = self.examined;
        *self = SseParser::with_limit(self.limit);
        #[cfg(test)]
        {
            self.examined = examined;
        }
        SseError::TooLarge { limit: self.limit }
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if line.is_empty() {
            if self.has_data {
                out.push(std::mem::take(&mut self.current));
            } else if self.has_fields {
                // An event without data (e.g. a priming event that only sets `id`) is not
                // dispatched, but its id and retry still count for resumption.
                let ev = std::mem::take(&mut self.current);
                out.push(SseEvent {
                    data: String::new(),
                    ..ev
                });
            }
            self.current = SseEvent::default();
            self.has_data = false;
            self.has_fields = false;
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(()); // comment / keep-alive
        }
        let line = std::str::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.current.event = Some(value.to_string()),
            "id" => {
                if !value.contains('\0') {
                    self.current.id = Some(value.to_string());
                }
            }
            "retry" => {
                if let Ok(ms) = value.parse() {
                    self.current.retry_ms = Some(ms);
                }
            }
            _ => return Ok(()), // unknown fields are ignored
        }
        self.has_fields = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, &mut out).expect("valid stream");
        }
        out
    }

    #[test]
    fn joins_data_lines_and_skips_comments() {
        let ev =
            parse_all(&[b": keep-alive\n\nevent: message\ndata: {\"a\":\ndata: 1}\nid: 7\n\n"]);
        assert_eq!(
            ev,
            vec![SseEvent {
                event: Some("message".into()),
                data: "{\"a\":\n1}".into(),
                id: Some("7".into()),
                retry_ms: None
            }]
        );
    }

    #[test]
    fn priming_event_has_empty_data_and_keeps_id_and_retry() {
        let ev = parse_all(&[b"id: abc\nretry: 1500\ndata:\n\ndata: x\n\n"]);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].data, "");
        assert_eq!(ev[0].id.as_deref(), Some("abc"));
        assert_eq!(ev[0].retry_ms, Some(1500));
        assert_eq!(ev[1].data, "x");
        assert_eq!(ev[1].event_type(), "message");
    }

    #[test]
    fn event_split_across_chunks_and_crlf_endings() {
        let ev = parse_all(&[b"da", b"ta: he", b"llo\r", b"\n\r", b"\ndata: second\r\r"]);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].data, "hello");
        assert_eq!(ev[1].data, "second");
    }

    #[test]
    fn crlf_split_between_reads_is_one_line_end() {
        // Before, the LF in the second read ended an (empty) line of its own and
        // dispatched the event before its second data line.
        let ev = parse_all(&[b"data: a\r", b"\ndata: b\r\n\r\n"]);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].data, "a\nb");
    }

    #[test]
    fn id_only_event_is_reported_without_data() {
        let ev = parse_all(&[b"id: 5\n\n"]);
        assert_eq!(ev[0].id.as_deref(), Some("5"));
        assert!(ev[0].data.is_empty());
    }

    #[test]
    fn field_without_colon_and_no_space_after_colon() {
        let ev = parse_all(&[b"data\ndata:x\n\n"]);
        assert_eq!(ev[0].data, "\nx");
    }

    #[test]
    fn incomplete_event_is_not_dispatched() {
        assert!(parse_all(&[b"data: partial\n"]).is_empty());
    }

    #[test]
    fn a_long_event_in_many_chunks_is_searched_once() {
        // 4 MiB of one data line in 4 KiB reads: each byte is searched for a line end
        // once (before, every read searched everything held again: quadratic).
        let mut p = SseParser::with_limit(8 << 20);
        let mut out = Vec::new();
        p.feed(b"data: ", &mut out).expect("valid");
        let chunk = vec![b'x'; 4096];
        for _ in 0..1024 {
            p.feed(&chunk, &mut out).expect("valid");
        }
        p.feed(b"\n\n", &mut out).expect("valid");
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), 4 << 20);
        let input = 6 + (4 << 20) + 2;
        assert!(
            p.examined <= input + 16,
            "{} bytes searched for {input}",
            p.examined
        );
    }

    #[test]
    fn an_event_over_the_limit_is_refused_as_soon_as_it_passes_it() {
        let mut p = SseParser::with_limit(1 << 20);
        let mut out = Vec::new();
        let chunk = vec![b'x'; 64 << 10];
        p.feed(b"data: ", &mut out).expect("valid");
        let mut fed = 6;
        let refused = loop {
            fed += chunk.len();
            if let Err(e) = p.feed(&chunk, &mut out) {
                break e;
            }
        };
        assert_eq!(refused, SseError::TooLarge { limit: 1 << 20 });
        assert!(
            fed <= (1 << 20) + chunk.len() + 6,
            "refused after {fed} bytes"
        );
        assert!(p.examined <= fed, "{} bytes searched for {fed}", p.examined);
        assert_eq!(p.buffered(), 0);
    }

    #[test]
    fn rejects_non_utf8() {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        assert_eq!(p.feed(b"data: \xff\n\n", &mut out), Err(SseError::NotUtf8));
    }
}
