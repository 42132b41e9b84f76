//! The reference server's HTTP/1.1 connections, our own as the client's are
//! (`transport/http/h1.rs`), and for the same reason: hyper's server connection keeps an
//! 8–16 KiB read buffer and an 8 KiB write buffer for its whole life, and a held
//! Streamable HTTP session keeps two connections open (its GET stream, and an idle one
//! for its POSTs): ~48 of the server's ~65 KiB per held session (results/BENCHMARKS.md,
//! issue 12). Here a waiting connection holds its socket and nothing else.
//!
//! One request at a time. The head is parsed with `httparse`, the body (Content-Length
//! or chunked, bounded) is read whole, the request goes to the axum router, and the
//! response is written: a sized body in one write with its head; any other chunked
//! (close-delimited for an HTTP/1.0 client), each piece as soon as it comes. While the
//! router works and while a response streams, the socket is watched: a client that goes
//! away ends its request (the handler's future is dropped), as hyper does. A request that
//! asks to upgrade (WebSocket) is handed, with the bytes read so far, to hyper's
//! connection, which the axum WebSocket extractor needs.
//!
//! This file is the connection's loop; `request` reads, `response` writes, `upgrade`
//! hands over.

mod request;
mod response;
mod upgrade;

use std::future::Future;
use std::io;
use std::time::Duration;

use axum::body::Body;
use axum::Router;
use http::{Method, Request};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tower_service::Service;

use crate::http1::{Conn, Framing};
use request::{read_body, read_head, Head, Refusal};
use response::{refuse, respond, Out};
use upgrade::upgrade;

/// How long the rest of a started head, or a body, may take to arrive. An idle
/// connection (no byte of a next request yet) waits as long as its client likes.
const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes a client may send ahead (a pipelined request) while its request is answered;
/// beyond that the socket is no longer watched until the answer is written.
const READ_AHEAD: usize = 64 * 1024;

/// Accept connections on `listener` and serve `app` on each until `stop` resolves. Then
/// the listener closes, idle connections close, streamed responses end, and requests
/// being answered have `grace` to finish before their connections are dropped.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    stop: impl Future<Output = ()>,
    grace: Duration,
) {
    let (stopping, stop_rx) = watch::channel(false);
    let mut conns = JoinSet::new();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            biased;
            () = &mut stop => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => {
                    // Small request/response exchanges must not wait on Nagle.
                    let _ = tcp.set_nodelay(true);
                    conns.spawn(connection(tcp, app.clone(), stop_rx.clone()));
                }
                Err(e) if is_connection_error(&e) => {}
                Err(e) => {
                    // Out of file descriptors, most likely: accepting again at once
                    // would spin. axum's serve waits a second too.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::select! {
                        () = &mut stop => break,
                        () = tokio::time::sleep(Duration::from_secs(1)) => {}
                    }
                }
            },
        }
    }
    drop(listener);
    let _ = stopping.send(true);
    let drained = async { while conns.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(grace, drained).await;
    conns.shutdown().await;
}

fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Resolves once the server is stopping (or gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// One connection, request after request, until the client closes it, a request says
/// `Connection: close` or the server stops.
async fn connection(tcp: TcpStream, app: Router, mut stop: watch::Receiver<bool>) {
    let mut conn = Conn::plain(tcp);
    loop {
        let head = tokio::select! {
            biased;
            () = stopped(&mut stop) => return,
            head = read_head(&mut conn) => head,
        };
        let (head, len) = match head {
            Ok(Some(head)) => head,
            Ok(None) | Err(Refusal::Gone) => return,
            Err(Refusal::Answer(status)) => return refuse(&mut conn, status).await,
        };
        if head.upgrade {
            // hyper reads the head again from the bytes handed over.
            return Box::pin(upgrade(conn, app)).await;
        }
        conn.consume(len);
        // Boxed while it runs: its states (the router's future, a streamed body) are
        // large, and a connection waiting for its next request should not carry them.
        if !Box::pin(exchange(&mut conn, &app, head, &mut stop)).await {
            return;
        }
    }
}

/// Read the body of the request `head` begins, answer it, write the answer; whether
/// the connection can carry another request.
async fn exchange(
    conn: &mut Conn,
    app: &Router,
    head: Head,
    stop: &mut watch::Receiver<bool>,
) -> bool {
    // A small request's body came with its head: no timer for it.
    let arrived = match head.framing {
        Framing::Empty => true,
        Framing::Length(n) => conn.buffered().len() as u64 >= n,
        _ => false,
    };
    let body = if arrived {
        read_body(conn, &head).await
    } else {
        tokio::time::timeout(READ_TIMEOUT, read_body(conn, &head))
            .await
            .unwrap_or(Err(Refusal::Gone))
    };
    let body = match body {
        Ok(body) => body,
        Err(Refusal::Answer(status)) => {
            refuse(conn, status).await;
            return false;
        }
        Err(Refusal::Gone) => return false,
    };
    let mut out = Out {
        version: head.version,
        is_head: head.method == Method::HEAD,
        keep_alive: head.keep_alive,
    };
    let mut request = Request::new(Body::from(body));
    *request.method_mut() = head.method;
    *request.uri_mut() = head.uri;
    *request.version_mut() = head.version;
    *request.headers_mut() = head.headers;
    // The router is always ready (its `poll_ready` is `Ready`), so `call` directly.
    let mut router = app.clone();
    let answer = router.call(request);
    let response = tokio::select! {
        biased;
        response = answer => match response {
            Ok(response) => response,
            Err(never) => match never {},
        },
        () = peer_gone(conn) => return false,
    };
    out.keep_alive &= !*stop.borrow();
    respond(conn, response, out, stop).await
}

/// Resolves when the client is gone (the end of its stream, or an error). Bytes it
/// sends meanwhile (a pipelined request) are kept for later, up to [`READ_AHEAD`].
async fn peer_gone(conn: &mut Conn) {
    loop {
        if conn.buffered().len() >= READ_AHEAD {
            return std::future::pending().await;
        }
        match conn.fill().await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

#[cfg(test)]
mod tests;
