//! One interval's sampling: every source read, turned into named values, appended to
//! the series and the CSV. CPU figures are rates: the CPU time used since the previous
//! sample over the time between them.

use super::generator::{usable_cores, LagProbe};
use super::resources_csv::ResourcesCsv;
use super::{cgroup, procfs, scrape, Latest, Sources};
use crate::metrics::resources::{Series, SeriesUnit};
use std::collections::{HashMap, VecDeque};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How many intervals the bottleneck note looks back on.
const RECENT: usize = 3;
/// CPU share at or above which the generator is the bottleneck.
const BUSY_SHARE: f64 = 0.9;
/// Scheduler lag above which, while growing, the generator is the bottleneck.
const LATE: f64 = 0.010;
/// Under this CPU share and above this machine pressure, late wake-ups are other work's.
use super::generator::{BUSY_PRESSURE, LOW_SHARE};

/// The scraped names that stand for `server.*` when nothing local is watched.
const STANDARD: &[(&str, &str, SeriesUnit)] = &[
    (
        "process_resident_memory_bytes",
        "server.rss",
        SeriesUnit::Bytes,
    ),
    ("process_open_fds", "server.fds", SeriesUnit::Count),
    ("process_threads", "server.threads", SeriesUnit::Count),
];
const SCRAPED_CPU: &str = "process_cpu_seconds_total";

type Row = (String, SeriesUnit, f64);

pub(super) struct Sampler {
    sources: Sources,
    series: Vec<Series>,
    csv: ResourcesCsv,
    lag: LagProbe,
    cores: f64,
    scrape_timeout: Duration,
    last_t: f64,
    /// CPU seconds of each watched process at the previous sample.
    prev_cpu: HashMap<u32, f64>,
    prev_self_cpu: Option<f64>,
    prev_cgroup_cpu: Option<f64>,
    prev_scraped_cpu: Option<(f64, f64)>,
    prev_machine: Option<super::machine::MachineSample>,
    scrape_failures: u64,
    recent_share: VecDeque<f64>,
    recent_lag: VecDeque<f64>,
    /// The machine's CPU pressure over the latest interval.
    recent_pressure: f64,
}

impl Sampler {
    pub(super) fn new(
        sources: Sources,
        interval: Duration,
        csv: ResourcesCsv,
        done: CancellationToken,
    ) -> Sampler {
        let mut s = Sampler {
            scrape_timeout: interval.clamp(Duration::from_millis(200), Duration::from_secs(5)),
            sources,
            series: Vec::new(),
            csv,
            lag: LagProbe::start(done),
            cores: usable_cores(),
            last_t: 0.0,
            prev_cpu: HashMap::new(),
            prev_self_cpu: procfs::sample("self").map(|s| s.cpu_seconds),
            prev_cgroup_cpu: None,
            prev_scraped_cpu: None,
            prev_machine: super::machine::sample(),
            scrape_failures: 0,
            recent_share: VecDeque::new(),
            recent_lag: VecDeque::new(),
            recent_pressure: 0.0,
        };
        // The baseline, so the first interval's CPU is a rate over that interval.
        for (pid, p) in sample_pids(&s.pids()) {
            s.prev_cpu.insert(pid, p.cpu_seconds);
        }
        s.prev_cgroup_cpu = s
            .sources
            .cgroup
            .as_deref()
            .and_then(|c| cgroup::sample(c).cpu_seconds);
        s
    }

    fn pids(&self) -> Vec<u32> {
        let mut pids = self.sources.pids.clone();
        pids.extend(self.sources.children.pids());
        if let Some(c) = &self.sources.cgroup {
            pids.extend(cgroup::processes(c));
        }
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    pub(super) async fn tick(&mut self, t_s: f64) -> Latest {
        let dt = (t_s - self.last_t).max(1e-6);
        self.last_t = t_s;
        let mut rows = Vec::new();
        if self.sources.local {
            let pids = self.pids();
            let samples = tokio::task::spawn_blocking(move || sample_pids(&pids))
                .await
                .unwrap_or_default();
            self.processes(&samples, dt, &mut rows);
        }
        if let Some(dir) = self.sources.cgroup.clone() {
            let c = tokio::task::spawn_blocking(move || cgroup::sample(&dir))
                .await
                .ok();
            if let Some(c) = c {
                self.cgroup(c, dt, &mut rows);
            }
        }
        if let Some(url) = self.sources.metrics.clone() {
            self.scrape(&url, t_s, &mut rows).await;
        }
        self.generator(dt, &mut rows);
        self.machine(&mut rows);
        for g in &self.sources.gauges {
            rows.push(row(g.name, g.unit, (g.read)()));
        }
        let bottleneck = self.bottleneck();
        self.csv.write(t_s, &rows);
        for (name, unit, value) in &rows {
            self.push(name, *unit, t_s, *value);
        }
        Latest {
            t_s,
            values: rows,
            scrape_failures: self.scrape_failures,
            bottleneck,
        }
    }

    fn processes(&mut self, samples: &[(u32, procfs::ProcSample)], dt: f64, rows: &mut Vec<Row>) {
        let mut cpu = 0.0;
        let mut next = HashMap::with_capacity(samples.len());
        for (pid, s) in samples {
            // A process born since the last sample used all its CPU time in this interval.
            let before = self.prev_cpu.get(pid).copied().unwrap_or(0.0);
            cpu += (s.cpu_seconds - before).max(0.0);
            next.insert(*pid, s.cpu_seconds);
        }
        self.prev_cpu = next;
        let mut rss: Vec<u64> = samples.iter().map(|(_, s)| s.rss_bytes).collect();
        rss.sort_unstable();
        let sum = |f: fn(&procfs::ProcSample) -> u64| -> f64 {
            samples.iter().map(|(_, s)| f(s)).sum::<u64>() as f64
        };
        if !self.sources.cgroup_only {
            rows.push(row(
                "server.rss",
                SeriesUnit::Bytes,
                rss.iter().sum::<u64>() as f64,
            ));
            rows.push(row("server.cpu", SeriesUnit::Cores, cpu / dt));
            rows.push(row("server.threads", SeriesUnit::Count, sum(|s| s.threads)));
        }
        rows.push(row(
            "server.fds",
            SeriesUnit::Count,
            sum(|s| s.fds.unwrap_or(0)),
        ));
        rows.push(row(
            "server.processes",
            SeriesUnit::Count,
            samples.len() as f64,
        ));
        // One process: its open-file limit, which a leak of descriptors ends at.
        if let [(pid, _)] = samples {
            if let Some(limit) = procfs::open_files_limit(*pid) {
                rows.push(row("server.fds.limit", SeriesUnit::Count, limit as f64));
            }
        }
        if !rss.is_empty() {
            let rank =
                |q: f64| rss[((q * rss.len() as f64).ceil() as usize).clamp(1, rss.len()) - 1];
            rows.push(row(
                "server.rss.max",
                SeriesUnit::Bytes,
                rss[rss.len() - 1] as f64,
            ));
            rows.push(row("server.rss.p50", SeriesUnit::Bytes, rank(0.50) as f64));
            rows.push(row("server.rss.p99", SeriesUnit::Bytes, rank(0.99) as f64));
        }
    }

    /// The cgroup's own figures: `server.*` when it alone stands for the server,
    /// `server.cgroup.*` beside the processes' figures otherwise.
    fn cgroup(&mut self, c: cgroup::CgroupSample, dt: f64, rows: &mut Vec<Row>) {
        let (memory, cpu, tasks) = if self.sources.cgroup_only {
            ("server.rss", "server.cpu", "server.threads")
        } else {
            (
                "server.cgroup.memory",
                "server.cgroup.cpu",
                "server.cgroup.tasks",
            )
        };
        if let Some(m) = c.memory_bytes {
            rows.push(row(memory, SeriesUnit::Bytes, m as f64));
        }
        if let Some(now) = c.cpu_seconds {
            let before = self.prev_cgroup_cpu.replace(now).unwrap_or(now);
            rows.push(row(cpu, SeriesUnit::Cores, (now - before).max(0.0) / dt));
        }
        if let Some(t) = c.tasks {
            rows.push(row(tasks, SeriesUnit::Count, t as f64));
        }
    }

    async fn scrape(&mut self, url: &url::Url, t_s: f64, rows: &mut Vec<Row>) {
        match scrape::scrape(url, self.scrape_timeout).await {
            Ok(values) => {
                let local = self.sources.local;
                let name_of = |standard: &str, metric: &str| {
                    if local {
                        format!("scrape.{metric}")
                    } else {
                        standard.to_string()
                    }
                };
                for &(metric, standard, unit) in STANDARD {
                    if let Some(&v) = values.get(metric) {
                        rows.push((name_of(standard, metric), unit, v));
                    }
                }
                if let Some(&now) = values.get(SCRAPED_CPU) {
                    if let Some((before, t0)) = self.prev_scraped_cpu {
                        let rate = (now - before).max(0.0) / (t_s - t0).max(1e-6);
                        rows.push((name_of("server.cpu", SCRAPED_CPU), SeriesUnit::Cores, rate));
                    }
                    self.prev_scraped_cpu = Some((now, t_s));
                }
                for name in &self.sources.series {
                    let key = format!("scrape.{name}");
                    if rows.iter().any(|(n, _, _)| *n == key) {
                        continue;
                    }
                    if let Some(&v) = values.get(name) {
                        rows.push((key, unit_by_name(name), v));
                    }
                }
            }
            Err(e) => {
                self.scrape_failures += 1;
                tracing::debug!("scraping {} failed: {e}", crate::redact::url(url.as_str()));
            }
        }
        rows.push(row(
            "scrape.failures",
            SeriesUnit::Count,
            self.scrape_failures as f64,
        ));
    }

    fn generator(&mut self, dt: f64, rows: &mut Vec<Row>) {
        let lag = self.lag.take();
        if let Some(me) = procfs::sample("self") {
            let before = self
                .prev_self_cpu
                .replace(me.cpu_seconds)
                .unwrap_or(me.cpu_seconds);
            let cores = (me.cpu_seconds - before).max(0.0) / dt;
            let share = (cores / self.cores).min(1.0);
            rows.push(row("generator.rss", SeriesUnit::Bytes, me.rss_bytes as f64));
            rows.push(row("generator.cpu", SeriesUnit::Cores, cores));
            rows.push(row("generator.cpu_share", SeriesUnit::Count, share));
            remember(&mut self.recent_share, share);
        }
        rows.push(row("generator.lag", SeriesUnit::Seconds, lag));
        remember(&mut self.recent_lag, lag);
    }

    /// The machine's CPU pressure (share of the interval in which a runnable task waited
    /// for a CPU) and the cores everything on it used.
    fn machine(&mut self, rows: &mut Vec<Row>) {
        let Some(now) = super::machine::sample() else {
            return;
        };
        if let Some(before) = self.prev_machine.replace(now) {
            let wall = (now.busy_s + now.idle_s - before.busy_s - before.idle_s).max(1e-9);
            let busy = (now.busy_s - before.busy_s).max(0.0);
            // The CPU seconds of all CPUs over their sum, as a number of busy cores.
            let cpus = now.cpus;
            rows.push(row(
                "machine.cpu_busy",
                SeriesUnit::Cores,
                busy / wall * cpus,
            ));
            if let (Some(a), Some(b)) = (before.pressure_s, now.pressure_s) {
                let secs = wall / cpus;
                let share = ((b - a) / secs).clamp(0.0, 1.0);
                rows.push(row("machine.cpu_pressure", SeriesUnit::Count, share));
                self.recent_pressure = share;
            }
        }
    }

    /// Whether the generator limited the latest intervals, in plain words.
    fn bottleneck(&self) -> Option<String> {
        let full = |q: &VecDeque<f64>| q.len() == RECENT;
        if full(&self.recent_share) && self.recent_share.iter().all(|&s| s >= BUSY_SHARE) {
            let last = self.recent_share.back().copied().unwrap_or(1.0);
            return Some(format!(
                "the generator is at {:.0} % CPU: figures describe mcp-fleet, not the server",
                last * 100.0
            ));
        }
        let lags: Vec<f64> = self.recent_lag.iter().copied().collect();
        if full(&self.recent_lag)
            && lags.iter().all(|&l| l > LATE)
            && lags.windows(2).all(|w| w[1] >= w[0])
        {
            let share = self.recent_share.back().copied().unwrap_or(1.0);
            if share < LOW_SHARE && self.recent_pressure >= BUSY_PRESSURE {
                return Some(format!(
                    "the machine is busy with other work (tasks waited for a CPU {:.0} % of the time, the generator used {:.0} %): timings include that delay",
                    self.recent_pressure * 100.0,
                    share * 100.0
                ));
            }
            return Some(format!(
                "the generator's scheduler wakes {:.0} ms late and growing: figures describe mcp-fleet, not the server",
                lags[lags.len() - 1] * 1e3
            ));
        }
        None
    }

    fn push(&mut self, name: &str, unit: SeriesUnit, t_s: f64, value: f64) {
        match self.series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.push(t_s, value),
            None => {
                let mut s = Series::new(name, unit);
                s.push(t_s, value);
                self.series.push(s);
            }
        }
    }

    pub(super) fn into_series(self) -> Vec<Series> {
        self.series
    }
}

fn row(name: &str, unit: SeriesUnit, value: f64) -> Row {
    (name.to_string(), unit, value)
}

fn remember(q: &mut VecDeque<f64>, v: f64) {
    if q.len() == RECENT {
        q.pop_front();
    }
    q.push_back(v);
}

/// A scraped metric's unit, by the naming convention's suffix.
fn unit_by_name(name: &str) -> SeriesUnit {
    if name.ends_with("_bytes") {
        SeriesUnit::Bytes
    } else if name.ends_with("_seconds") {
        SeriesUnit::Seconds
    } else {
        SeriesUnit::Count
    }
}

fn sample_pids(pids: &[u32]) -> Vec<(u32, procfs::ProcSample)> {
    pids.iter()
        .filter_map(|&pid| procfs::sample(&pid.to_string()).map(|s| (pid, s)))
        .collect()
}
