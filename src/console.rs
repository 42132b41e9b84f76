//! Printing to stdout and stderr that stops quietly when the reader has gone: with
//! `mcp-fleet run … | head -2` the pipe closes early, and `println!` would panic (Rust
//! ignores SIGPIPE, so the write fails with EPIPE instead of ending the process). Every
//! message of the program goes through here; a stream that failed once is not written
//! again, and the command goes on to its end and its exit code (the results of a run are
//! written before its summary is printed).
//!
//! Restoring SIGPIPE's default instead would kill the process at the first write, also
//! the live view's while the run is still going, before the results are written.

use std::fmt::Arguments;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set when a write to stdout failed: nothing more is printed there.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// Set when a write to stderr failed.
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

/// `print!` that never panics.
pub fn out(args: Arguments<'_>) {
    write_to(&mut std::io::stdout().lock(), &STDOUT_CLOSED, args, false);
}

/// `println!` that never panics.
pub fn outln(args: Arguments<'_>) {
    write_to(&mut std::io::stdout().lock(), &STDOUT_CLOSED, args, true);
}

/// `eprint!` that never panics.
pub fn err(args: Arguments<'_>) {
    write_to(&mut std::io::stderr().lock(), &STDERR_CLOSED, args, false);
}

/// `eprintln!` that never panics.
pub fn errln(args: Arguments<'_>) {
    write_to(&mut std::io::stderr().lock(), &STDERR_CLOSED, args, true);
}

/// Whether a write to stdout has failed (the reader went away).
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

fn write_to(w: &mut impl Write, closed: &AtomicBool, args: Arguments<'_>, newline: bool) {
    if closed.load(Ordering::Relaxed) {
        return;
    }
    let written = w
        .write_fmt(args)
        .and_then(|()| if newline { w.write_all(b"\n") } else { Ok(()) })
        .and_then(|()| w.flush());
    if written.is_err() {
        // EPIPE, or any other failure of the stream: a message cannot be reported about
        // the stream it failed to reach, and the command's work is not undone by it.
        closed.store(true, Ordering::Relaxed);
    }
}

/// An error and its causes on one line, each said once: a message that already quotes
/// its cause (`cannot read profile p.toml: No such file or directory (os error 2)`) is
/// not followed by the cause again, as anyhow's `{:#}` would.
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let said = cause.to_string();
        if text.contains(said.trim()) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&said);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader has gone.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_stream_is_marked_and_not_written_again() {
        let closed = AtomicBool::new(false);
        write_to(&mut Closed, &closed, format_args!("a {}", 1), true);
        assert!(closed.load(Ordering::Relaxed));
        let mut buf = Vec::new();
        write_to(&mut buf, &closed, format_args!("b"), true);
        assert!(buf.is_empty(), "nothing after the first failure");
    }

    #[test]
    fn an_open_stream_gets_the_text_and_its_newline() {
        let closed = AtomicBool::new(false);
        let mut buf = Vec::new();
        write_to(&mut buf, &closed, format_args!("x={}", 2), true);
        write_to(&mut buf, &closed, format_args!("y"), false);
        assert_eq!(buf, b"x=2\ny");
        assert!(!closed.load(Ordering::Relaxed));
    }

    #[test]
    fn a_cause_already_quoted_is_not_said_again() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file (os error 2)");
        let e = anyhow::Error::new(io).context("cannot read p.toml: No such file (os error 2)");
        assert_eq!(
            super::error_text(&e),
            "cannot read p.toml: No such file (os error 2)"
        );
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file (os error 2)");
        let e = anyhow::Error::new(io).context("cannot read p.toml");
        assert_eq!(
            super::error_text(&e),
            "cannot read p.toml: No such file (os error 2)"
        );
    }
}
