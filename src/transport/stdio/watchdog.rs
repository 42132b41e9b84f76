//! The stdio servers' last guard: one small `sh` per generator process, started with the
//! first stdio server, told the process group of every server we spawn and reap. A
//! generator killed by SIGKILL (or the OOM killer) runs no cleanup of its own; the kernel
//! then closes our end of the watchdog's socket, and on that end of input the watchdog
//! kills every process group it still holds: the servers and the helpers they started.
//!
//! Why not `PR_SET_PDEATHSIG` in the server, or a subreaper? The death signal is cleared
//! in the server's own children (`sh -c '… sleep N & exec …'`, npx, uv), so they would
//! still be orphaned; a subreaper only adopts orphans while it lives, and here the
//! generator is what died. Both need the generator's process to do the work after its
//! death, which only another process can. Setting the death signal would also need
//! `pre_exec` (unsafe code, and a full `fork` of the generator instead of the `vfork`
//! that `posix_spawn` gives, per session). The watchdog needs neither: it is in its own
//! process group (a Ctrl-C or `kill -- -PGID` aimed at the generator leaves it standing
//! to do its work), ignores the usual termination signals, and knows only process group
//! ids, so it kills nothing that is not a group we started and still hold.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The watchdog: read `+ PGID` (guard) and `- PGID` (release) lines until the end of
/// input, then SIGKILL every group still held. Builtins only (no PATH needed, nothing to
/// fail to start at the one moment it matters); a group is a variable `gPGID`, so adding
/// and removing one costs the same whatever the number of servers alive.
const SCRIPT: &str = r#"trap '' HUP INT QUIT TERM PIPE
while read -r op pid; do
  case $pid in ''|*[!0-9]*) continue ;; esac
  case $op in
    +) eval "g$pid=1" ;;
    -) unset "g$pid" ;;
  esac
done
set | while IFS='=' read -r name _; do
  case $name in g[0-9]*) kill -s KILL -- "-${name#g}" 2>/dev/null ;; esac
done"#;

/// How long a line may wait for the watchdog to read (it reads at once; this only
/// bounds a stopped or wedged watchdog, which then misses the line).
const WRITE_LIMIT: Duration = Duration::from_millis(100);

/// Our end of the watchdog's input: `None` when it could not be started (no `/bin/sh`),
/// which leaves the servers as they were without it.
static WATCHDOG: OnceLock<Option<Watchdog>> = OnceLock::new();

/// A running watchdog, by our end of its input.
#[derive(Debug)]
pub struct Watchdog {
    input: Mutex<UnixStream>,
}

impl Watchdog {
    /// Start one. The child is never waited for: it outlives this process by design, and
    /// ends when its input does.
    pub fn start() -> std::io::Result<Watchdog> {
        let (ours, theirs) = UnixStream::pair()?;
        Command::new("/bin/sh")
            .arg("-c")
            .arg(SCRIPT)
            .env_clear()
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        ours.set_write_timeout(Some(WRITE_LIMIT))?;
        Ok(Watchdog {
            input: Mutex::new(ours),
        })
    }

    /// Kill process group `pgid` if this process dies before [`Watchdog::release`].
    pub fn guard(&self, pgid: u32) {
        self.tell('+', pgid);
    }

    /// Group `pgid` is ours no more (killed and reaped): forget it, so that its number,
    /// once reused, is never killed.
    pub fn release(&self, pgid: u32) {
        self.tell('-', pgid);
    }

    fn tell(&self, op: char, pgid: u32) {
        let line = format!("{op} {pgid}\n");
        let mut input = self.input.lock().unwrap_or_else(|e| e.into_inner());
        // A dead or wedged watchdog costs its protection, never the run.
        let _ = input.write_all(line.as_bytes());
    }
}

/// This process's watchdog, started on first use.
fn shared() -> Option<&'static Watchdog> {
    WATCHDOG
        .get_or_init(|| match Watchdog::start() {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!(
                    "cannot start the stdio watchdog (/bin/sh: {e}): stdio servers will \
                     outlive a generator killed by SIGKILL"
                );
                None
            }
        })
        .as_ref()
}

/// [`Watchdog::guard`] on this process's watchdog.
pub fn guard(pgid: u32) {
    if let Some(w) = shared() {
        w.guard(pgid);
    }
}

/// [`Watchdog::release`] on this process's watchdog.
pub fn release(pgid: u32) {
    if let Some(w) = shared() {
        w.release(pgid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Child;
    use std::time::Instant;

    /// A `sleep` leading its own process group, as a stdio server does.
    fn group_leader() -> Child {
        Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("sleep")
    }

    /// Whether `child` ended within a few seconds (reaping it).
    fn ends(child: &mut Child) -> bool {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(5) {
            if child.try_wait().expect("wait").is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn the_end_of_its_input_kills_the_groups_it_holds_and_no_other() {
        let mut held = group_leader();
        let mut released = group_leader();
        let watchdog = Watchdog::start().expect("watchdog");
        watchdog.guard(held.id());
        watchdog.guard(released.id());
        watchdog.release(released.id());
        // What the kernel does to our end when the generator dies.
        drop(watchdog);
        assert!(ends(&mut held), "a held group is killed");
        // The watchdog kills the groups it holds one after another: give it the time
        // it would take to reach the released one by mistake.
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            released.try_wait().expect("wait").is_none(),
            "a released group is left alone"
        );
        let _ = released.kill();
        let _ = released.wait();
    }
}
