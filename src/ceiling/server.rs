//! The server a ceiling search measures. Without a target, the built-in server runs in a
//! process of its own (`mcp-fleet serve --http 127.0.0.1:0`), never inside the
//! generator: its CPU is then watched apart from the generator's, at every step. And
//! what procfs says of a watched server process: the cores it may use and its open-file
//! limit, for the verdicts.

use anyhow::Context;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long the built-in server gets to say where it listens.
const START_LIMIT: Duration = Duration::from_secs(10);

/// The built-in server, in its own process; killed when dropped.
pub struct BuiltIn {
    child: Child,
    /// Its Streamable HTTP endpoint.
    pub url: String,
    pub pid: u32,
}

impl BuiltIn {
    /// Start `program serve --http 127.0.0.1:0 FLAGS` (None: this program).
    pub async fn start(program: Option<&Path>, flags: &[&str]) -> anyhow::Result<BuiltIn> {
        let program = match program {
            Some(p) => p.to_path_buf(),
            None => std::env::current_exe().context("finding this program")?,
        };
        let mut child = Command::new(&program)
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting the built-in server ({})", program.display()))?;
        let pid = child.id().context("the built-in server exited at once")?;
        let stderr = child
            .stderr
            .take()
            .context("the built-in server's stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        let first = tokio::time::timeout(START_LIMIT, lines.next_line())
            .await
            .context("the built-in server did not start in 10 s")?
            .context("reading the built-in server's start-up line")?
            .context("the built-in server exited before it listened")?;
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://") && w.ends_with("/mcp"))
            .with_context(|| format!("no URL in the built-in server's line {first:?}"))?
            .to_string();
        // Keep reading its stderr, so a chatty server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(BuiltIn { child, url, pid })
    }

    /// Stop it.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// The CPUs process `pid` may run on (`Cpus_allowed_list` of /proc/PID/status).
pub fn cores_of(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    count_cpus(list.trim()).map(|n| n as f64)
}

/// CPUs in a list such as `0-3,6,8-9`.
pub fn count_cpus(list: &str) -> Option<u32> {
    let mut n = 0;
    for part in list.split(',').filter(|p| !p.is_empty()) {
        n += match part.split_once('-') {
            Some((a, b)) => b.trim().parse::<u32>().ok()? - a.trim().parse::<u32>().ok()? + 1,
            None => {
                part.trim().parse::<u32>().ok()?;
                1
            }
        };
    }
    (n > 0).then_some(n)
}

/// The soft open-file limit of process `pid` (/proc/PID/limits).
pub fn fd_limit_of(pid: u32) -> Option<u64> {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.trim_start_matches("Max open files")
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The CPUs of this machine that are online (/sys), else those this process may use.
pub fn machine_cores() -> f64 {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|l| count_cpus(l.trim()))
        .map_or_else(
            || std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64),
            f64::from,
        )
}
