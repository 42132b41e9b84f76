//! Request reading: a request head parsed with `httparse` (bounded in size and fields),
//! its framing decided as RFC 9112 says, and its body read whole (Content-Length or
//! chunked, bounded), or why the request gets no normal answer.

use bytes::{Bytes, BytesMut};
use http::header::{CONNECTION, CONTENT_LENGTH, EXPECT, TRANSFER_ENCODING, UPGRADE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, Version};

use super::READ_TIMEOUT;
use crate::http1::{self as h1, Conn, Decoder, Framing};

/// Largest request head, and most header fields in one (hyper's field limit too).
const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 100;
/// Largest request body read; the handlers' extractors refuse above 2 MB anyway (413).
const MAX_BODY: u64 = 16 * 1024 * 1024;

/// A request head as the connection needs it.
pub(super) struct Head {
    pub(super) method: Method,
    pub(super) uri: Uri,
    pub(super) version: Version,
    pub(super) headers: HeaderMap,
    pub(super) framing: Framing,
    pub(super) keep_alive: bool,
    pub(super) expect_continue: bool,
    pub(super) upgrade: bool,
}

/// Why a request gets no normal answer: an error status to send before closing, or
/// nothing (the client is gone or too slow).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    Answer(StatusCode),
    Gone,
}

/// The next request head and its length, `None` when the client closed the connection
/// between requests. The head's bytes stay buffered (an upgrade hands them on).
pub(super) async fn read_head(conn: &mut Conn) -> Result<Option<(Head, usize)>, Refusal> {
    let mut deadline = None;
    loop {
        if !conn.buffered().is_empty() {
            if let Some(head) = parse_head(conn.buffered())? {
                return Ok(Some(head));
            }
        }
        let more = if conn.buffered().is_empty() {
            conn.fill().await
        } else {
            let until = *deadline.get_or_insert_with(|| tokio::time::Instant::now() + READ_TIMEOUT);
            tokio::time::timeout_at(until, conn.fill())
                .await
                .map_err(|_| Refusal::Gone)?
        };
        match more {
            Ok(0) if conn.buffered().is_empty() => return Ok(None),
            Ok(0) | Err(_) => return Err(Refusal::Gone),
            Ok(_) => {}
        }
    }
}

/// The head at the start of `buf` and its length, `None` when more bytes are needed.
fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, Refusal> {
    let bad = Refusal::Answer(StatusCode::BAD_REQUEST);
    let too_large = Refusal::Answer(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut fields);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => return Err(too_large),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(too_large),
        Err(_) => return Err(bad),
    };
    if len > MAX_HEAD {
        return Err(too_large);
    }
    let method = Method::from_bytes(req.method.unwrap_or("").as_bytes()).map_err(|_| bad_req())?;
    let uri = Uri::try_from(req.path.unwrap_or("")).map_err(|_| bad_req())?;
    let version = match req.version {
        Some(1) => Version::HTTP_11,
        _ => Version::HTTP_10,
    };
    let mut headers = HeaderMap::with_capacity(req.headers.len());
    for f in req.headers.iter() {
        let name = HeaderName::from_bytes(f.name.as_bytes()).map_err(|_| bad_req())?;
        let value = HeaderValue::from_bytes(f.value).map_err(|_| bad_req())?;
        headers.append(name, value);
    }
    let upgrade = headers.contains_key(UPGRADE);
    let framing = if upgrade {
        Framing::Empty
    } else {
        request_framing(&headers)?
    };
    let connection = h1::tokens(&headers, CONNECTION);
    let keep_alive = if version == Version::HTTP_11 {
        !connection.iter().any(|t| t == "close")
    } else {
        connection.iter().any(|t| t == "keep-alive")
    };
    let expect_continue = headers
        .get(EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    let head = Head {
        method,
        uri,
        version,
        headers,
        framing,
        keep_alive,
        expect_continue,
        upgrade,
    };
    Ok(Some((head, len)))
}

fn bad_req() -> Refusal {
    Refusal::Answer(StatusCode::BAD_REQUEST)
}

/// How a request's body is delimited (RFC 9112, 6.3): chunked, a length, or none.
fn request_framing(headers: &HeaderMap) -> Result<Framing, Refusal> {
    let codings = h1::tokens(headers, TRANSFER_ENCODING);
    if !codings.is_empty() {
        // A body whose end cannot be known, or two framings (a smuggling attempt):
        // RFC 9112 says 400 and close.
        if codings.last().map(String::as_str) != Some("chunked")
            || headers.contains_key(CONTENT_LENGTH)
        {
            return Err(bad_req());
        }
        return Ok(Framing::Chunked);
    }
    match h1::content_length(headers) {
        Ok(None | Some(0)) => Ok(Framing::Empty),
        Ok(Some(n)) if n > MAX_BODY => Err(Refusal::Answer(StatusCode::PAYLOAD_TOO_LARGE)),
        Ok(Some(n)) => Ok(Framing::Length(n)),
        Err(_) => Err(bad_req()),
    }
}

/// The whole request body.
pub(super) async fn read_body(conn: &mut Conn, head: &Head) -> Result<Bytes, Refusal> {
    if head.framing == Framing::Empty {
        return Ok(Bytes::new());
    }
    if head.expect_continue {
        conn.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await
            .map_err(|_| Refusal::Gone)?;
    }
    let mut decoder = Decoder::new(head.framing);
    let mut whole = BytesMut::new();
    let mut first = None;
    while let Some(piece) = decoder.next(conn).await.map_err(|_| bad_req())? {
        let total = whole.len() + first.as_ref().map_or(0, Bytes::len) + piece.len();
        if total as u64 > MAX_BODY {
            return Err(Refusal::Answer(StatusCode::PAYLOAD_TOO_LARGE));
        }
        // Usually the body is one piece, which is passed on without a copy.
        match first.take() {
            None if whole.is_empty() => first = Some(piece),
            Some(one) => {
                whole.extend_from_slice(&one);
                whole.extend_from_slice(&piece);
            }
            None => whole.extend_from_slice(&piece),
        }
    }
    Ok(first.unwrap_or_else(|| whole.freeze()))
}
