//! The machine the generator runs on, as the kernel counts it: CPU pressure
//! (`/proc/pressure/cpu`, `some` total: microseconds in which at least one runnable task
//! waited for a CPU) and the CPU time all processes used (`/proc/stat`'s first line).
//! With the generator's own share they tell a saturated generator from a machine busy
//! with other work.

/// Cumulative counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineSample {
    /// `some` stall time, seconds; `None` without PSI (kernels before 4.20, or off).
    pub pressure_s: Option<f64>,
    /// CPU seconds used by everything (user, nice, system, irq, softirq, steal) and
    /// idle (idle, iowait), summed over the CPUs.
    pub busy_s: f64,
    pub idle_s: f64,
    /// The CPUs those are summed over (`cpuN` lines).
    pub cpus: f64,
}

/// Read both files now; `None` when `/proc/stat` cannot be read.
pub fn sample() -> Option<MachineSample> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let (busy_s, idle_s) = parse_stat(&stat)?;
    let cpus = stat
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count()
        .max(1) as f64;
    let pressure_s = std::fs::read_to_string("/proc/pressure/cpu")
        .ok()
        .and_then(|t| parse_pressure(&t));
    Some(MachineSample {
        pressure_s,
        busy_s,
        idle_s,
        cpus,
    })
}

/// `some avg10=… total=MICROSECONDS` → seconds.
fn parse_pressure(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    let total = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("total="))?;
    Some(total.parse::<f64>().ok()? / 1e6)
}

/// `cpu user nice system idle iowait irq softirq steal …` (in USER_HZ ticks) →
/// (busy, idle) seconds. Guest time is already inside user and nice.
fn parse_stat(text: &str) -> Option<(f64, f64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse::<f64>().unwrap_or(0.0))
        .collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0.0);
    let busy = at(0) + at(1) + at(2) + at(5) + at(6) + at(7);
    let idle = at(3) + at(4);
    // USER_HZ is 100 on every Linux ABI.
    Some((busy / 100.0, idle / 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_files_parse() {
        let psi = "some avg10=87.93 avg60=51.26 avg300=32.11 total=5072502613\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_pressure(psi), Some(5072.502613));
        assert_eq!(parse_pressure("full total=1\n"), None);
        let stat = "cpu  1000 200 300 4000 500 60 70 80 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        assert_eq!(parse_stat(stat), Some((17.1, 45.0)));
        let now = sample().expect("/proc/stat");
        assert!(
            now.busy_s > 0.0 && now.idle_s >= 0.0 && now.cpus >= 1.0,
            "{now:?}"
        );
    }
}
