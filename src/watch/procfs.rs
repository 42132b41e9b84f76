//! One process as `/proc/PID` shows it: resident memory (`status` VmRSS), CPU time
//! (`stat` utime + stime over the kernel's clock ticks), open descriptors (entries of
//! `fd/`) and threads (`stat` num_threads). A process that is gone reads as `None`.

use nix::unistd::{sysconf, SysconfVar};
use std::path::Path;
use std::sync::OnceLock;

/// What one process uses at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcSample {
    pub rss_bytes: u64,
    /// CPU seconds used since the process started (user + system).
    pub cpu_seconds: f64,
    /// `None` when `fd/` cannot be read (another user's process).
    pub fds: Option<u64>,
    pub threads: u64,
}

/// Clock ticks per second of `stat`'s times: asked of the system, since 100 is only
/// the usual value.
fn clock_ticks() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| match sysconf(SysconfVar::CLK_TCK) {
        Ok(Some(t)) if t > 0 => t as f64,
        _ => 100.0,
    })
}

/// Whether `/proc/PID` exists now.
pub fn exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).is_dir()
}

/// Sample `/proc/WHO` (a pid, or `self`).
pub fn sample(who: &str) -> Option<ProcSample> {
    let dir = Path::new("/proc").join(who);
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    let status = std::fs::read_to_string(dir.join("status")).ok()?;
    let (ticks, threads) = parse_stat(&stat)?;
    // A zombie has no VmRSS line: it holds no memory.
    let rss_bytes = parse_vm_rss(&status).unwrap_or(0);
    let fds = std::fs::read_dir(dir.join("fd"))
        .ok()
        .map(|entries| entries.count() as u64);
    Some(ProcSample {
        rss_bytes,
        cpu_seconds: ticks as f64 / clock_ticks(),
        fds,
        threads,
    })
}

/// The soft open-file limit of `/proc/PID` (`limits`, "Max open files"); `None` when
/// unreadable or unlimited.
pub fn open_files_limit(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
    parse_open_files(&text)
}

fn parse_open_files(limits: &str) -> Option<u64> {
    let rest = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))?;
    rest.split_whitespace().next()?.parse().ok()
}

/// `(utime + stime in ticks, num_threads)` from a `stat` line. The command name (field
/// 2) may hold spaces and parentheses, so fields are counted after its last `)`.
fn parse_stat(stat: &str) -> Option<(u64, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field n of proc(5) is at index n - 3 here (state, field 3, comes first).
    let num = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    Some((num(14)? + num(15)?, num(20)?))
}

/// `VmRSS:   1234 kB` → bytes.
fn parse_vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let line = "4242 (my (odd) server) S 1 4242 4242 0 -1 4194560 500 0 0 0 \
                    250 50 0 0 20 0 7 0 12345 100000 300 18446744073709551615";
        assert_eq!(parse_stat(line), Some((300, 7)));
        assert_eq!(
            parse_vm_rss("Name:\tx\nVmRSS:\t  2048 kB\n"),
            Some(2048 * 1024)
        );
        assert!(clock_ticks() > 0.0);
        let limits = "Limit                     Soft Limit           Hard Limit           Units\nMax open files            20000                40000                files\n";
        assert_eq!(parse_open_files(limits), Some(20000));
        assert_eq!(
            parse_open_files("Max open files  unlimited unlimited files\n"),
            None
        );
        assert!(open_files_limit(std::process::id()).is_some_and(|n| n > 0));
    }

    #[test]
    fn this_process_reads_as_itself() {
        let s = sample("self").expect("/proc/self");
        assert!(s.rss_bytes > 0 && s.threads >= 1, "{s:?}");
        assert!(s.fds.is_some_and(|n| n >= 3), "{s:?}");
        assert!(sample("0").is_none());
    }
}
