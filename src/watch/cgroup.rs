//! A cgroup v2 folder: `memory.current` (bytes charged, page cache included),
//! `cpu.stat` `usage_usec` (CPU time of every task in it) and `pids.current` (tasks);
//! `cgroup.procs` lists its processes, which are also watched one by one.

use std::path::Path;

/// The cgroup's figures at one moment; a file the controller does not provide is `None`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CgroupSample {
    pub memory_bytes: Option<u64>,
    pub cpu_seconds: Option<f64>,
    pub tasks: Option<u64>,
}

/// Why a folder cannot be watched.
#[derive(Debug, thiserror::Error)]
#[error("{0} is not a cgroup v2 folder (no readable memory.current) (--server-cgroup)\nfix: give the folder under /sys/fs/cgroup that holds the server, e.g. $(systemctl show -p ControlGroup --value my.service) under /sys/fs/cgroup")]
pub struct NotACgroup(pub String);

/// Check `dir` before the run.
pub fn check(dir: &Path) -> Result<(), NotACgroup> {
    match std::fs::read_to_string(dir.join("memory.current")) {
        Ok(text) if text.trim().parse::<u64>().is_ok() => Ok(()),
        _ => Err(NotACgroup(dir.display().to_string())),
    }
}

pub fn sample(dir: &Path) -> CgroupSample {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    CgroupSample {
        memory_bytes: read("memory.current").and_then(|t| t.trim().parse().ok()),
        cpu_seconds: read("cpu.stat").and_then(|t| usage_seconds(&t)),
        tasks: read("pids.current").and_then(|t| t.trim().parse().ok()),
    }
}

/// The processes in the cgroup now (empty when `cgroup.procs` cannot be read).
pub fn processes(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

fn usage_seconds(cpu_stat: &str) -> Option<f64> {
    let line = cpu_stat.lines().find(|l| l.starts_with("usage_usec "))?;
    let usec: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(usec as f64 / 1e6)
}

#[cfg(test)]
/// This process's own cgroup v2 folder, from `/proc/self/cgroup`'s `0::/path` line.
pub fn own() -> Option<std::path::PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(Path::new("/sys/fs/cgroup").join(path.trim().trim_start_matches('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_files_are_read_from_a_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(check(dir.path()).is_err(), "empty folder");
        std::fs::write(dir.path().join("memory.current"), "73400320\n").expect("write");
        std::fs::write(
            dir.path().join("cpu.stat"),
            "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n",
        )
        .expect("write");
        std::fs::write(dir.path().join("pids.current"), "12\n").expect("write");
        std::fs::write(dir.path().join("cgroup.procs"), "10\n11\n").expect("write");
        check(dir.path()).expect("a cgroup now");
        let s = sample(dir.path());
        assert_eq!(s.memory_bytes, Some(73_400_320));
        assert_eq!(s.cpu_seconds, Some(2.5));
        assert_eq!(s.tasks, Some(12));
        assert_eq!(processes(dir.path()), vec![10, 11]);
    }

    #[test]
    fn our_own_cgroup_reads_when_the_system_has_v2() {
        let Some(dir) = own() else { return };
        if check(&dir).is_err() {
            return; // v1, or a container that hides the controller files
        }
        let s = sample(&dir);
        assert!(s.memory_bytes.is_some_and(|m| m > 0), "{s:?}");
    }
}
