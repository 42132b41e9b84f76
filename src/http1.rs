//! HTTP/1.1 on a byte stream, the pieces both ends share: a connection's read buffer,
//! which exists only while bytes are in it (a waiting connection holds its socket and
//! nothing else), and the framing of message bodies (`Content-Length`, chunked, to the
//! close). The client's exchange is `transport/http/h1.rs` (requests out, responses in),
//! the reference server's is `server/connection.rs` (requests in, responses out).

use bytes::{Buf, Bytes, BytesMut};
use futures::FutureExt;
use http::header::CONTENT_LENGTH;
use http::{HeaderMap, HeaderName, HeaderValue};
use std::io;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 8192;

thread_local! {
    /// Where plain sockets are read into, one per runtime thread.
    static SCRATCH: std::cell::RefCell<Box<[u8]>> =
        std::cell::RefCell::new(vec![0; READ_CHUNK].into_boxed_slice());
}
/// Longest chunk-size or trailer line we hold.
const MAX_CHUNK_LINE: usize = 4096;

/// Any other byte stream a connection can run over.
trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Stream for T {}

enum Io {
    /// Waited on for readiness before a read buffer exists.
    Plain(TcpStream),
    /// TLS (`https://`), or an in-memory stream (the fuzz target).
    Stream(Box<dyn Stream>),
}

/// One HTTP/1.1 connection between exchanges, or lent to one.
pub(crate) struct Conn {
    io: Io,
    /// Bytes read and not yet consumed; empty (no allocation) between exchanges.
    buf: BytesMut,
}

impl Conn {
    pub fn plain(tcp: TcpStream) -> Conn {
        Conn {
            io: Io::Plain(tcp),
            buf: BytesMut::new(),
        }
    }

    /// A connection over any byte stream.
    pub fn over(
        stream: impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    ) -> Conn {
        Conn {
            io: Io::Stream(Box::new(stream)),
            buf: BytesMut::new(),
        }
    }

    /// Read what the socket has into the buffer; 0 at the end of the stream. A plain
    /// socket is waited on before anything is allocated, so a connection that waits
    /// (the held GET stream) holds no buffer.
    pub(crate) async fn fill(&mut self) -> io::Result<usize> {
        match &mut self.io {
            Io::Plain(tcp) => {
                // Read into the thread's scratch buffer and keep only what came: a
                // 300-byte answer costs a 300-byte allocation, not a READ_CHUNK one, and
                // nothing is allocated while the socket has nothing. Through
                // `poll_read`, so that a short read clears the socket's readiness (the
                // next look at an idle connection then needs no system call).
                let buf = &mut self.buf;
                std::future::poll_fn(|cx| {
                    SCRATCH.with(|scratch| {
                        let mut scratch = scratch.borrow_mut();
                        let mut read = tokio::io::ReadBuf::new(&mut scratch[..]);
                        match std::pin::Pin::new(&mut *tcp).poll_read(cx, &mut read) {
                            std::task::Poll::Ready(Ok(())) => {
                                buf.extend_from_slice(read.filled());
                                std::task::Poll::Ready(Ok(read.filled().len()))
                            }
                            std::task::Poll::Ready(Err(e)) => std::task::Poll::Ready(Err(e)),
                            std::task::Poll::Pending => std::task::Poll::Pending,
                        }
                    })
                })
                .await
            }
            Io::Stream(stream) => {
                self.buf.reserve(READ_CHUNK);
                stream.read_buf(&mut self.buf).await
            }
        }
    }

    /// Give the buffer's memory back once it holds nothing.
    pub(crate) fn shrink(&mut self) {
        if self.buf.is_empty() && self.buf.capacity() > 0 {
            self.buf = BytesMut::new();
        }
    }

    /// End our side of the connection (its reading side stays open).
    pub(crate) async fn shutdown(&mut self) {
        let _ = match &mut self.io {
            Io::Plain(tcp) => tcp.shutdown().await,
            Io::Stream(stream) => stream.shutdown().await,
        };
    }

    /// The bytes read and not yet consumed.
    pub(crate) fn buffered(&self) -> &[u8] {
        &self.buf
    }

    /// Drop the first `n` buffered bytes (a head that was parsed).
    pub(crate) fn consume(&mut self, n: usize) {
        self.buf.advance(n);
        self.shrink();
    }

    /// The plain socket and the bytes read off it and not consumed (to hand the
    /// connection to another reader); `None` over any other stream.
    pub(crate) fn into_plain(self) -> Option<(TcpStream, Bytes)> {
        match self.io {
            Io::Plain(tcp) => Some((tcp, self.buf.freeze())),
            Io::Stream(_) => None,
        }
    }

    /// Whether an idle connection can carry another exchange: nothing unasked-for
    /// arrived and the server has not closed it. Looks without waiting.
    pub fn is_reusable(&mut self) -> bool {
        if !self.buf.is_empty() {
            return false;
        }
        let quiet = self.fill().now_or_never().is_none();
        self.shrink();
        quiet && self.buf.is_empty()
    }

    pub(crate) async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.io {
            Io::Plain(tcp) => tcp.write_all(bytes).await,
            Io::Stream(stream) => {
                stream.write_all(bytes).await?;
                stream.flush().await
            }
        }
    }
}

/// How the body of a message is delimited (RFC 9112, 6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    Empty,
    Length(u64),
    Chunked,
    Close,
}

/// The comma-separated tokens of every field `name`, lower-cased.
pub(crate) fn tokens(headers: &HeaderMap, name: HeaderName) -> Vec<String> {
    tokens_of(headers.get_all(name).iter().map(HeaderValue::as_bytes))
}

/// The comma-separated tokens of some field values, lower-cased (a value that is not
/// visible ASCII has none).
pub(crate) fn tokens_of<'a>(values: impl Iterator<Item = &'a [u8]>) -> Vec<String> {
    values
        .filter_map(visible)
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The `Content-Length` of a head, if it has one; an error when it is not a number or
/// the head gives two different ones.
pub(crate) fn content_length(headers: &HeaderMap) -> Result<Option<u64>, String> {
    content_length_of(
        headers
            .get_all(CONTENT_LENGTH)
            .iter()
            .map(HeaderValue::as_bytes),
    )
}

/// [`content_length`] of the values of a head's `Content-Length` fields.
pub(crate) fn content_length_of<'a>(
    values: impl Iterator<Item = &'a [u8]>,
) -> Result<Option<u64>, String> {
    let mut length: Option<u64> = None;
    for v in values {
        for part in visible(v).unwrap_or("x").split(',') {
            let part = part.trim();
            let n = part
                .parse::<u64>()
                .ok()
                .filter(|_| part.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| format!("Content-Length {part:?}"))?;
            if length.is_some_and(|l| l != n) {
                return Err("two different Content-Length values".into());
            }
            length = Some(n);
        }
    }
    Ok(length)
}

/// A field value as text when it is visible ASCII (tabs allowed), as
/// `HeaderValue::to_str` reads it.
fn visible(v: &[u8]) -> Option<&str> {
    v.iter()
        .all(|&b| b == b'\t' || (32..127).contains(&b))
        .then(|| std::str::from_utf8(v).ok())
        .flatten()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyState {
    /// Bytes left of a `Content-Length` body.
    Length(u64),
    /// The next thing is a chunk-size line.
    ChunkSize,
    /// Bytes left of the current chunk.
    ChunkData(u64),
    /// The CRLF that ends a chunk's data.
    ChunkEnd,
    /// Trailer lines up to an empty line.
    Trailers,
    /// Until the server closes.
    Close,
    Done,
    /// Broke: the connection cannot be used again.
    Failed,
}

/// Reads one message body of a known framing off a connection, piece by piece.
pub(crate) struct Decoder {
    state: BodyState,
}

impl Decoder {
    /// Whether the body was read to its end.
    pub fn is_done(&self) -> bool {
        self.state == BodyState::Done
    }

    /// The body broke (the caller saw an error): nothing more is read.
    pub fn fail(&mut self) {
        self.state = BodyState::Failed;
    }

    pub fn new(framing: Framing) -> Decoder {
        Decoder {
            state: match framing {
                Framing::Empty => BodyState::Done,
                Framing::Length(n) => BodyState::Length(n),
                Framing::Chunked => BodyState::ChunkSize,
                Framing::Close => BodyState::Close,
            },
        }
    }

    /// The next piece of the body off `conn`, `None` at its end; an error says what was
    /// wrong with the bytes (the connection cannot be used after one).
    pub async fn next(&mut self, conn: &mut Conn) -> Result<Option<Bytes>, String> {
        loop {
            match self.state {
                BodyState::Done => return Ok(None),
                BodyState::Failed => return Err("the body already broke".into()),
                BodyState::Length(0) => self.state = BodyState::Done,
                BodyState::Length(left) | BodyState::ChunkData(left) => {
                    if conn.buf.is_empty() {
                        fill(conn, "the body ended early").await?;
                    }
                    let take = conn
                        .buf
                        .len()
                        .min(usize::try_from(left).unwrap_or(usize::MAX));
                    let bytes = conn.buf.split_to(take).freeze();
                    conn.shrink();
                    let left = left - take as u64;
                    self.state = match self.state {
                        BodyState::Length(_) => BodyState::Length(left),
                        _ if left == 0 => BodyState::ChunkEnd,
                        _ => BodyState::ChunkData(left),
                    };
                    return Ok(Some(bytes));
                }
                BodyState::Close => {
                    if conn.buf.is_empty() {
                        match conn.fill().await {
                            Ok(0) => {
                                self.state = BodyState::Done;
                                return Ok(None);
                            }
                            Ok(_) => {}
                            Err(e) => return Err(e.to_string()),
                        }
                    }
                    let bytes = conn.buf.split().freeze();
                    conn.shrink();
                    return Ok(Some(bytes));
                }
                BodyState::ChunkSize => {
                    let line = line(conn).await?;
                    let digits = line.split(';').next().unwrap_or("").trim();
                    let size = u64::from_str_radix(digits, 16)
                        .ok()
                        .filter(|_| !digits.is_empty() && digits.len() <= 16)
                        .ok_or_else(|| format!("a bad chunk size {digits:?}"))?;
                    self.state = if size == 0 {
                        BodyState::Trailers
                    } else {
                        BodyState::ChunkData(size)
                    };
                }
                BodyState::ChunkEnd => {
                    let line = line(conn).await?;
                    if !line.is_empty() {
                        return Err("a chunk longer than its size".into());
                    }
                    self.state = BodyState::ChunkSize;
                }
                BodyState::Trailers => {
                    if line(conn).await?.is_empty() {
                        self.state = BodyState::Done;
                        conn.shrink();
                    }
                }
            }
        }
    }
}

/// More bytes, or the error `ended` when the stream is over.
async fn fill(conn: &mut Conn, ended: &str) -> Result<(), String> {
    match conn.fill().await {
        Ok(0) => Err(ended.to_string()),
        Ok(_) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// One CRLF- (or LF-) ended line of the chunked coding, without its end.
async fn line(conn: &mut Conn) -> Result<String, String> {
    loop {
        if let Some(end) = conn.buf.iter().position(|&b| b == b'\n') {
            let raw = conn.buf.split_to(end + 1);
            // A held stream waits for its next chunk here: with nothing left, it holds
            // no buffer while it waits.
            conn.shrink();
            let text = std::str::from_utf8(&raw[..end])
                .map_err(|_| "a chunk line that is not text".to_string())?;
            return Ok(text.strip_suffix('\r').unwrap_or(text).to_string());
        }
        if conn.buf.len() > MAX_CHUNK_LINE {
            return Err("a chunk line that does not end".into());
        }
        fill(conn, "the chunked body ended early").await?;
    }
}
