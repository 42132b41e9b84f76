//! The live view during a run: on a terminal, a progress bar with its ETA (time, session
//! budget, or a spinner until stopped) over a small block redrawn every second
//! (elapsed and remaining time, target and achieved rate, sessions in flight, each
//! phase's p50/p99 of the last interval, errors by kind, and "target unreachable since
//! …" while the latest sessions all fail to connect); when stderr is not a terminal (CI
//! logs), one line every few seconds; nothing with `--quiet`.

use crate::metrics::LiveCounters;
use crate::metrics::{LiveFigures, Phase};
use crate::report::soak_traffic::live_notes;
use crate::report::text::format_us;
use crate::watch::Latest;
use std::fmt::Write as _;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

mod bar;

/// How the view is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Redraw a block in place.
    Terminal,
    /// Append one line per `every`.
    Lines { every: Duration },
}

/// What the run is aiming for, for "remaining" and "target".
#[derive(Debug, Clone)]
pub struct Goal {
    pub duration: Option<Duration>,
    pub sessions: Option<u64>,
    /// The load as a person says it: `8 clients`.
    pub target: String,
}

impl Goal {
    pub fn of(plan: &crate::plan::Plan) -> Goal {
        Goal {
            duration: plan.load.duration,
            sessions: plan.load.sessions,
            target: plan.load.describe(),
        }
    }
}

/// The view's state between draws.
struct View {
    goal: Goal,
    live: Arc<LiveCounters>,
    started: Instant,
    last: (Instant, u64),
    /// The watcher's latest values, taken at each draw.
    resources: Option<Arc<Latest>>,
}

impl View {
    /// Sessions that reached the server and ended: what the rate counts.
    fn ended(&self) -> u64 {
        let l = &self.live;
        l.completed.load(Ordering::Relaxed) + l.failed.load(Ordering::Relaxed)
    }

    /// Sessions the budget has paid for so far (unreachable ones too).
    fn spent(&self) -> u64 {
        self.ended() + self.live.unreachable.load(Ordering::Relaxed)
    }

    /// While the latest sessions all fail to connect: since when (run time) and for how
    /// long.
    fn unreachable(&self, now: Instant) -> Option<String> {
        let since = self.live.unreachable_since()?;
        Some(format!(
            "TARGET UNREACHABLE since {:.1}s (for {:.1}s): the latest sessions all failed to connect",
            since.saturating_duration_since(self.started).as_secs_f64(),
            now.saturating_duration_since(since).as_secs_f64()
        ))
    }

    /// Sessions per second since the previous draw.
    fn rate(&mut self, now: Instant) -> f64 {
        let ended = self.ended();
        let dt = now.duration_since(self.last.0).as_secs_f64().max(1e-9);
        let rate = ended.saturating_sub(self.last.1) as f64 / dt;
        self.last = (now, ended);
        rate
    }

    fn remaining(&self, elapsed: Duration, rate: f64) -> String {
        match (self.goal.duration, self.goal.sessions) {
            (Some(d), _) => format!("{:.0}s left", d.saturating_sub(elapsed).as_secs_f64()),
            (None, Some(n)) => {
                let left = n.saturating_sub(self.spent());
                if rate > 0.0 {
                    format!("{left} sessions left, ~{:.0}s", left as f64 / rate)
                } else {
                    format!("{left} sessions left")
                }
            }
            (None, None) => "until stopped".into(),
        }
    }

    fn headline(&mut self, now: Instant) -> String {
        let elapsed = now.duration_since(self.started);
        let rate = self.rate(now);
        format!(
            "{:.1}s ({}) · {} · {}",
            elapsed.as_secs_f64(),
            self.remaining(elapsed, rate),
            self.goal.target,
            self.status(rate)
        )
    }

    /// How far the run is, 0 to 1, by whichever of its duration and session budget ends
    /// first; `None` when it runs until stopped.
    fn progress(&self, elapsed: Duration) -> Option<f64> {
        let by_time = self
            .goal
            .duration
            .map(|d| elapsed.as_secs_f64() / d.as_secs_f64().max(1e-9));
        let by_sessions = self
            .goal
            .sessions
            .map(|n| self.spent() as f64 / n.max(1) as f64);
        match (by_time, by_sessions) {
            (None, None) => None,
            (t, n) => Some(t.unwrap_or(0.0).max(n.unwrap_or(0.0)).clamp(0.0, 1.0)),
        }
    }

    /// How long until the run ends: the time left, or the sessions left at the current
    /// rate, whichever is sooner; `None` when neither is known.
    fn eta(&self, elapsed: Duration, rate: f64) -> Option<Duration> {
        let by_time = self.goal.duration.map(|d| d.saturating_sub(elapsed));
        let by_sessions = self.goal.sessions.and_then(|n| {
            let left = n.saturating_sub(self.spent()) as f64;
            (rate > 0.0).then(|| Duration::from_secs_f64(left / rate))
        });
        match (by_time, by_sessions) {
            (Some(t), Some(n)) => Some(t.min(n)),
            (t, n) => t.or(n),
        }
    }

    /// Rate, in flight, ok and failed (unreachable and dropped when there are any).
    fn status(&self, rate: f64) -> String {
        let l = &self.live;
        let dropped = match l.dropped.load(Ordering::Relaxed) {
            0 => String::new(),
            n => format!(" · DROPPED {n} arrivals"),
        };
        let unreachable = match l.unreachable.load(Ordering::Relaxed) {
            0 => String::new(),
            n => format!(" {n} unreachable"),
        };
        format!(
            "{rate:.1} sessions/s · in flight {} · {} ok {} failed{unreachable}{dropped}",
            l.in_flight.load(Ordering::Relaxed),
            l.completed.load(Ordering::Relaxed),
            l.failed.load(Ordering::Relaxed),
        )
    }
}

fn errors_line(f: &LiveFigures) -> String {
    if f.failures.is_empty() {
        return "errors: none".into();
    }
    let list: Vec<String> = f.failures.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!("errors: {}", list.join(", "))
}

/// The watched resources in one line (`None` before the first sample): server RSS, CPU
/// and FDs when a server is watched, the generator's CPU and lag always.
fn resources_line(r: &Latest) -> Option<String> {
    if r.values.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if let Some(rss) = r.get("server.rss") {
        let mut server = format!("server rss {}", mebibytes(rss));
        if let Some(cpu) = r.get("server.cpu") {
            let _ = write!(server, " cpu {cpu:.2}");
        }
        if let Some(fds) = r.get("server.fds") {
            let _ = write!(server, " fds {fds:.0}");
        }
        if let Some(n) = r.get("server.processes").filter(|&n| n != 1.0) {
            let _ = write!(server, " ({n:.0} processes)");
        }
        parts.push(server);
    }
    if r.scrape_failures > 0 {
        parts.push(format!("{} failed scrapes", r.scrape_failures));
    }
    let mut generator = String::from("generator");
    if let Some(share) = r.get("generator.cpu_share") {
        let _ = write!(generator, " cpu {:.0}%", share * 100.0);
    }
    if let Some(lag) = r.get("generator.lag") {
        let _ = write!(generator, " lag {}", format_us(lag * 1e6));
    }
    parts.push(generator);
    let mut line = parts.join(" · ");
    if let Some(note) = &r.bottleneck {
        let _ = write!(line, " · WARNING: {note}");
    }
    Some(line)
}

fn mebibytes(bytes: f64) -> String {
    format!("{:.1}MiB", bytes / f64::from(1u32 << 20))
}

/// What the progress bar shows under it: the load and its status, then the details.
fn bar_message(view: &View, f: &LiveFigures, now: Instant, rate: f64) -> String {
    let mut lines = vec![format!("{} · {}", view.goal.target, view.status(rate))];
    lines.extend(details(view, f, now));
    lines.join("\n")
}

/// Under the headline: unreachable, resources, traffic notes, a row per phase, errors.
fn details(view: &View, f: &LiveFigures, now: Instant) -> Vec<String> {
    let mut lines = Vec::new();
    lines.extend(view.unreachable(now));
    lines.extend(view.live.push_warning());
    lines.extend(view.resources.as_deref().and_then(resources_line));
    lines.extend(live_notes(&view.live.traffic()));
    lines.push(format!(
        "  {:<26} {:>9} {:>9} {:>9} {:>8}",
        "phase (last interval)", "p50", "p99", "per s", "errors"
    ));
    for r in &f.last {
        let ok = r.count > r.errors;
        let show = |us: u64| {
            if ok {
                format_us(us as f64)
            } else {
                "–".into()
            }
        };
        let total_errors = f.totals.get(r.phase.index()).map_or(0, |t| t.1);
        lines.push(format!(
            "  {:<26} {:>9} {:>9} {:>9.1} {:>8}",
            r.phase.name(),
            show(r.p50_us),
            show(r.p99_us),
            r.count as f64 / r.len_s.max(1e-9),
            total_errors
        ));
    }
    lines.push(errors_line(f));
    lines
}

/// The one-line form for logs.
fn line(view: &mut View, f: &LiveFigures, now: Instant) -> String {
    let mut s = format!("[mcp-fleet] {}", view.headline(now));
    if let Some(note) = view.unreachable(now) {
        let _ = write!(s, " · {note}");
    }
    if let Some(w) = view.live.push_warning() {
        let _ = write!(s, " · {w}");
    }
    if let Some(r) = view.resources.as_deref().and_then(resources_line) {
        let _ = write!(s, " · {r}");
    }
    for note in live_notes(&view.live.traffic()) {
        let _ = write!(s, " · {note}");
    }
    let key: Vec<String> = f
        .last
        .iter()
        .filter(|r| {
            r.count > r.errors
                && matches!(
                    r.phase,
                    Phase::Initialize
                        | Phase::Discover
                        | Phase::ToolsCall
                        | Phase::FanOut
                        | Phase::Session
                )
        })
        .map(|r| format!("{} {}", r.phase.name(), format_us(r.p99_us as f64)))
        .collect();
    if !key.is_empty() {
        let _ = write!(s, " · p99 {}", key.join(", "));
    }
    if !f.failures.is_empty() {
        let _ = write!(s, " · {}", errors_line(f));
    }
    s
}

/// Show the view until `done`; the terminal block is cleared at the end.
pub async fn show(
    mode: Mode,
    goal: Goal,
    live: Arc<LiveCounters>,
    figures: watch::Receiver<Arc<LiveFigures>>,
    resources: watch::Receiver<Arc<Latest>>,
    done: CancellationToken,
) {
    let started = Instant::now();
    let mut view = View {
        goal,
        live,
        started,
        last: (started, 0),
        resources: None,
    };
    let every = match mode {
        Mode::Terminal => Duration::from_secs(1),
        Mode::Lines { every } => every,
    };
    let bar = (mode == Mode::Terminal).then(|| {
        bar::Bar::new(
            view.progress(Duration::ZERO).is_some(),
            indicatif::ProgressDrawTarget::stderr(),
        )
    });
    // Just after the collector's interval tick, so each draw shows a fresh interval.
    let mut tick = tokio::time::interval_at(started + every + Duration::from_millis(100), every);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = done.cancelled() => break,
        }
        let f = figures.borrow().clone();
        view.resources = Some(resources.borrow().clone());
        let now = Instant::now();
        match &bar {
            Some(bar) => {
                let elapsed = now.duration_since(view.started);
                let rate = view.rate(now);
                bar.update(
                    view.progress(elapsed),
                    view.eta(elapsed, rate),
                    bar_message(&view, &f, now, rate),
                );
            }
            None => {
                let mut err = std::io::stderr().lock();
                // A closed stderr (a pipe whose reader left) only loses the view.
                let _ = writeln!(err, "{}", line(&mut view, &f, now));
                let _ = err.flush();
            }
        }
    }
    // Gone before the summary prints.
    if let Some(bar) = bar {
        bar.clear();
    }
}

#[cfg(test)]
mod tests;
