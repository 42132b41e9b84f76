//! stdio: the server is a child process we spawn per session; one JSON-RPC message per
//! line on its stdin and stdout. Its stderr is drained (a full pipe would block it) into
//! a bounded tail kept for failure reports. Shutdown follows the spec: close stdin,
//! wait, SIGTERM, wait, SIGKILL — sent to the child's whole process group, so servers
//! started through wrappers (npx, uv, sh) leave nothing behind, even when the generator
//! itself is killed by SIGKILL ([`watchdog`]).

pub mod lines;
mod watchdog;

pub use lines::StdoutLines;

use super::{Received, TransportError};
use crate::metrics::FailureKind;
use futures::StreamExt;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio_util::codec::FramedRead;

/// How much of the server's stderr is kept.
const STDERR_TAIL_BYTES: usize = 4096;

/// What to spawn; shared by every session of a run.
#[derive(Debug, Clone)]
pub struct StdioCommand {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// How long to wait at each shutdown step (after closing stdin, after SIGTERM).
    pub grace: Duration,
    /// `--max-message-size` (the plan's `Connection::max_message_bytes`): the longest
    /// line we hold; the rest of a longer one is skipped unread into memory.
    pub max_message_bytes: usize,
    /// Where the live children are listed for the resource watcher.
    pub children: ChildRegistry,
}

/// The pids of the stdio servers alive now: filled on spawn, emptied when the transport
/// is dropped (its child is then reaped or killed). One per run, shared through the
/// endpoint, so runs in one process (tests) do not see each other's children.
#[derive(Debug, Clone, Default)]
pub struct ChildRegistry(Arc<Mutex<std::collections::BTreeSet<u32>>>);

impl ChildRegistry {
    fn add(&self, pid: u32) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(pid);
    }

    fn remove(&self, pid: u32) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&pid);
    }

    /// The pids alive now, in order.
    pub fn pids(&self) -> Vec<u32> {
        let set = self.0.lock().unwrap_or_else(|e| e.into_inner());
        set.iter().copied().collect()
    }
}

pub struct StdioTransport {
    child: Child,
    /// Process group id (= the child's pid, since it leads its own group).
    pgid: Option<Pid>,
    stdin: Option<ChildStdin>,
    stdout: FramedRead<ChildStdout, StdoutLines>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    grace: Duration,
    /// The child's pid in the run's registry, removed on drop.
    registered: Option<(ChildRegistry, u32)>,
}

/// How long we wait, after the pipe broke, for the process to exit and its last stderr
/// to arrive, so the failure can say why.
const DEATH_NOTE_WAIT: Duration = Duration::from_millis(300);

impl StdioTransport {
    pub fn spawn(cmd: &StdioCommand) -> Result<StdioTransport, TransportError> {
        let mut command = Command::new(&cmd.program);
        command
            .args(&cmd.args)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| {
            TransportError::new(
                FailureKind::SpawnFailed,
                format!("cannot start {:?}: {e}", cmd.program),
            )
        })?;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let (Some(stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(TransportError::new(
                FailureKind::SpawnFailed,
                "the child's pipes are missing",
            ));
        };
        let registered = child.id().map(|pid| {
            watchdog::guard(pid); // its process group's id
            cmd.children.add(pid);
            (cmd.children.clone(), pid)
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let sink = tail.clone();
        let stderr_task = tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = sink.lock() {
                    t.extend(&buf[..n]);
                    let excess = t.len().saturating_sub(STDERR_TAIL_BYTES);
                    t.drain(..excess);
                }
            }
        });
        Ok(StdioTransport {
            child,
            pgid,
            stdin: Some(stdin),
            stdout: FramedRead::new(stdout, StdoutLines::new(cmd.max_message_bytes)),
            stderr: tail,
            stderr_task: Some(stderr_task),
            grace: cmd.grace,
            registered,
        })
    }

    pub async fn send(&mut self, mut bytes: Vec<u8>) -> Result<(), TransportError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(TransportError::new(
                FailureKind::TransportClosed,
                "stdin is closed",
            ));
        };
        bytes.push(b'\n');
        let write = async {
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        };
        if let Err(e) = write.await {
            let note = self.death_note().await;
            return Err(TransportError::new(
                FailureKind::TransportClosed,
                format!("writing to the server's stdin: {e}; {note}"),
            ));
        }
        Ok(())
    }

    pub async fn recv(&mut self) -> Received {
        match self.stdout.next().await {
            Some(Ok(received)) => received,
            Some(Err(e)) => Received::Closed {
                detail: format!("reading the server's stdout: {e}"),
            },
            None => Received::Closed {
                detail: self.death_note().await,
            },
        }
    }

    /// Why the server stopped talking: its exit status and the end of its stderr.
    async fn death_note(&mut self) -> String {
        let status = match tokio::time::timeout(DEATH_NOTE_WAIT, self.child.wait()).await {
            Ok(Ok(s)) => format!("the server exited ({s})"),
            _ => "the server closed its stdout".to_string(),
        };
        if let Some(task) = self.stderr_task.as_mut() {
            let _ = tokio::time::timeout(DEATH_NOTE_WAIT, task).await;
            self.stderr_task = None;
        }
        match self.stderr_tail() {
            Some(tail) => format!("{status}; stderr: {tail}"),
            None => status,
        }
    }

    pub fn stderr_tail(&self) -> Option<String> {
        let t = self.stderr.lock().ok()?;
        if t.is_empty() {
            return None;
        }
        let (a, b) = t.as_slices();
        let text = String::from_utf8_lossy(&[a, b].concat()).trim().to_string();
        Some(text)
    }

    /// Close stdin, wait; SIGTERM the group, wait; SIGKILL the group.
    pub async fn close(mut self) -> Result<(), TransportError> {
        drop(self.stdin.take());
        if let Ok(Ok(status)) = tokio::time::timeout(self.grace, self.child.wait()).await {
            self.signal_group(Signal::SIGKILL); // reap helpers the server may have left
            let _ = status;
            return Ok(());
        }
        self.signal_group(Signal::SIGTERM);
        if tokio::time::timeout(self.grace, self.child.wait())
            .await
            .is_ok()
        {
            self.signal_group(Signal::SIGKILL);
            return Ok(());
        }
        self.signal_group(Signal::SIGKILL);
        let _ = self.child.wait().await;
        Err(TransportError::new(
            FailureKind::Timeout,
            format!(
                "the server ignored stdin EOF and SIGTERM for {} each; killed",
                humantime::format_duration(self.grace)
            ),
        ))
    }

    fn signal_group(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (group already gone) is the normal case.
            let _ = killpg(pgid, signal);
        }
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // A session cancelled mid-way (deadline, Ctrl-C) must not leave processes behind.
        // After a clean close the group is already gone and this is a no-op.
        if self.stdin.is_some() || matches!(self.child.try_wait(), Ok(None)) {
            self.signal_group(Signal::SIGKILL);
        }
        if let Some((registry, pid)) = self.registered.take() {
            registry.remove(pid);
            watchdog::release(pid);
        }
    }
}
