//! The ceiling's `report.html`: the answer and its verdict, the step table, and the
//! pictures — per phase, p50/p95/p99 against the achieved rate across the steps with the
//! knee and the SLO lines; offered against achieved; the server's and the generator's
//! CPU per step. In the style of the run reports (`report::html::page`), with the
//! pictures drawn as inline SVG here: a handful of points per line needs no script.

use super::file::{self, CeilingFile};
use super::step::StepFigures;
use crate::plan::threshold::{Metric, Subject, Threshold};
use crate::report::html::{esc, page};
use crate::report::text::format_us;
use std::fmt::Write;
use std::path::Path;

const W: f64 = 560.0;
const H: f64 = 260.0;
/// Left, right, top, bottom margins of the plot area.
const M: (f64, f64, f64, f64) = (62.0, 16.0, 26.0, 40.0);
/// Colour-blind-safe (Okabe–Ito), as the run reports use.
const COLOURS: [&str; 4] = ["#0072B2", "#E69F00", "#D55E00", "#009E73"];

/// One line of a chart: its name and its points.
struct Line {
    name: String,
    points: Vec<(f64, f64)>,
}

/// A marker across the plot: a vertical (x) or horizontal (y) line with a label.
enum Mark {
    X(f64, String),
    Y(f64, String),
}

/// Write `report.html` into `dir`.
pub fn write(f: &CeilingFile, dir: &Path) -> anyhow::Result<()> {
    let path = dir.join(crate::report::html::FILE_NAME);
    std::fs::write(&path, render(f)).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))
}

/// The page.
pub fn render(f: &CeilingFile) -> String {
    let mut b = String::new();
    let steps: Vec<&StepFigures> = {
        let mut v: Vec<&StepFigures> = f.steps.iter().filter(|s| !s.interrupted).collect();
        v.sort_by(|a, b| a.offered_per_s.total_cmp(&b.offered_per_s));
        v
    };
    let _ = write!(
        b,
        "<header><h1>Ceiling · {}</h1><p class=\"sub\">SLOs: {} · {} steps of {} s</p></header>",
        esc(&f.settings.target),
        esc(&f.settings.slos.join(", ")),
        f.steps.len(),
        f.settings.step_s
    );
    if let Some(a) = &f.answer {
        let _ = write!(
            b,
            "<h2>Answer</h2><pre style=\"white-space:pre-wrap\">{}</pre>",
            esc(&file::verdict_text(a, f.settings.ladder == "clients"))
        );
    }
    b.push_str("<h2>Latency against throughput</h2><div class=\"grid2\">");
    let slos: Vec<Threshold> = f
        .settings
        .slos
        .iter()
        .filter_map(|t| Threshold::parse(t).ok())
        .collect();
    let knee = f.answer.as_ref().and_then(|a| a.knee_per_s);
    for phase in phases(&steps) {
        b.push_str(&latency_chart(&steps, &phase, &slos, knee));
    }
    b.push_str("</div><h2>Rate and CPU per step</h2><div class=\"grid2\">");
    let offered: Vec<(f64, f64)> = steps
        .iter()
        .map(|s| (s.offered_per_s, s.offered_per_s))
        .collect();
    let achieved: Vec<(f64, f64)> = steps
        .iter()
        .map(|s| (s.offered_per_s, s.achieved_per_s))
        .collect();
    b.push_str(&chart(
        "Offered and achieved sessions/s",
        "offered sessions/s",
        &[
            Line {
                name: "offered".into(),
                points: offered,
            },
            Line {
                name: "achieved".into(),
                points: achieved,
            },
        ],
        &[],
        |v| format!("{v:.0}"),
    ));
    let server: Vec<(f64, f64)> = steps
        .iter()
        .filter_map(|s| s.server.cpu_cores.map(|c| (s.offered_per_s, c)))
        .collect();
    let generator: Vec<(f64, f64)> = steps
        .iter()
        .filter_map(|s| s.generator.cpu_share_max.map(|c| (s.offered_per_s, c)))
        .collect();
    let mut marks = Vec::new();
    if let Some(c) = f.settings.server_cores {
        marks.push(Mark::Y(c, format!("server's {c} cores")));
    }
    b.push_str(&chart(
        "Server CPU (cores, mean) and generator CPU (share of its cores, max)",
        "offered sessions/s",
        &[
            Line {
                name: "server cores".into(),
                points: server,
            },
            Line {
                name: "generator share".into(),
                points: generator,
            },
        ],
        &marks,
        |v| format!("{v:.2}"),
    ));
    b.push_str("</div><h2>Steps</h2><table><thead><tr><th class=\"n\">step</th><th>stage</th><th class=\"n\">offered/s</th><th class=\"n\">achieved/s</th><th>verdict</th><th>folder</th></tr></thead><tbody>");
    for s in &f.steps {
        let verdict = if s.interrupted {
            "stopped".to_string()
        } else if s.passed {
            "ok".to_string()
        } else {
            s.reasons.join("; ")
        };
        let _ = write!(
            b,
            "<tr{}><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1}</td><td>{}</td><td><a href=\"{}/report.html\">{}</a></td></tr>",
            if s.passed { "" } else { " class=\"bad\"" },
            s.index,
            esc(&s.stage),
            s.offered_per_s,
            s.achieved_per_s,
            esc(&verdict),
            esc(&s.dir),
            esc(&s.dir)
        );
    }
    b.push_str("</tbody></table>");
    page(&format!("mcp-fleet · ceiling · {}", f.settings.target), &b)
}

/// The phases with latencies at some step, the session first.
fn phases(steps: &[&StepFigures]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for s in steps {
        for (name, p) in &s.phases {
            if p.p99_us.is_some() && name != "lag" && !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    names.sort_by_key(|n| (n != "session", n.clone()));
    names
}

/// p50/p95/p99 of `phase` against the achieved rate, with the knee and the SLO lines.
fn latency_chart(
    steps: &[&StepFigures],
    phase: &str,
    slos: &[Threshold],
    knee: Option<f64>,
) -> String {
    let line = |name: &str, pick: fn(&super::step::PhaseFigures) -> Option<u64>| Line {
        name: name.into(),
        points: steps
            .iter()
            .filter_map(|s| {
                let p = s.phases.get(phase)?;
                pick(p).map(|us| (s.achieved_per_s, us as f64 / 1000.0))
            })
            .collect(),
    };
    let lines = [
        line("p50", |p| p.p50_us),
        line("p95", |p| p.p95_us),
        line("p99", |p| p.p99_us),
    ];
    let mut marks = Vec::new();
    if let Some(k) = knee.and_then(|k| steps.iter().find(|s| s.offered_per_s == k)) {
        marks.push(Mark::X(k.achieved_per_s, "knee".into()));
    }
    for t in slos {
        if let (Metric::Quantile(_) | Metric::Mean, Subject::Phase(p)) = (t.metric, t.subject) {
            if p.name() == phase {
                marks.push(Mark::Y(t.limit / 1000.0, format!("SLO {}", t.text)));
            }
        }
    }
    chart(
        &format!("{phase}: latency (ms) against achieved sessions/s"),
        "achieved sessions/s",
        &lines,
        &marks,
        |v| format_us(v * 1000.0),
    )
}

/// A line chart as inline SVG: linear axes from zero, points marked, a legend.
fn chart(
    title: &str,
    x_label: &str,
    lines: &[Line],
    marks: &[Mark],
    y_text: impl Fn(f64) -> String,
) -> String {
    let all = lines.iter().flat_map(|l| l.points.iter());
    let x_max = all
        .clone()
        .map(|p| p.0)
        .chain(marks.iter().filter_map(|m| match m {
            Mark::X(x, _) => Some(*x),
            Mark::Y(..) => None,
        }))
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.05;
    let y_max = all
        .map(|p| p.1)
        .chain(marks.iter().filter_map(|m| match m {
            Mark::Y(y, _) => Some(*y),
            Mark::X(..) => None,
        }))
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.1;
    let (l, r, t, bt) = M;
    let px = |x: f64| l + x / x_max * (W - l - r);
    let py = |y: f64| H - bt - y / y_max * (H - t - bt);
    let mut s = format!(
        "<figure><figcaption>{}</figcaption><svg viewBox=\"0 0 {W} {H}\" width=\"100%\" role=\"img\" aria-label=\"{}\" style=\"font:11px system-ui,sans-serif\">",
        esc(title),
        esc(title)
    );
    for i in 0..=4 {
        let (xv, yv) = (x_max * f64::from(i) / 4.0, y_max * f64::from(i) / 4.0);
        let _ = write!(
            s,
            "<line x1=\"{l}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e3e7ee\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#5d6675\">{}</text><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#5d6675\">{xv:.0}</text>",
            W - r,
            l - 4.0,
            py(yv) + 4.0,
            esc(&y_text(yv)),
            H - bt + 14.0,
            y = py(yv),
            x = px(xv)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#5d6675\">{}</text>",
        (l + W - r) / 2.0,
        H - 6.0,
        esc(x_label)
    );
    for m in marks {
        let (x1, x2, y1, y2, label, lx, ly) = match m {
            Mark::X(x, label) => (px(*x), px(*x), t, H - bt, label, px(*x) + 3.0, t + 10.0),
            Mark::Y(y, label) => (l, W - r, py(*y), py(*y), label, l + 4.0, py(*y) - 3.0),
        };
        let _ = write!(
            s,
            "<line x1=\"{x1:.1}\" x2=\"{x2:.1}\" y1=\"{y1:.1}\" y2=\"{y2:.1}\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"/><text x=\"{lx:.1}\" y=\"{ly:.1}\" fill=\"#c0392b\">{}</text>",
            esc(label)
        );
    }
    for (i, line) in lines.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let path: Vec<String> = line
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.6\" points=\"{}\"/>",
            path.join(" ")
        );
        for &(x, y) in &line.points {
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{colour}\"><title>{}: {} at {x:.1}/s</title></circle>",
                px(x),
                py(y),
                esc(&line.name),
                esc(&y_text(y))
            );
        }
        let _ = write!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"3\" fill=\"{colour}\"/><text x=\"{}\" y=\"{}\" fill=\"#1d2330\">{}</text>",
            l + 6.0 + 110.0 * i as f64,
            t - 14.0,
            l + 20.0 + 110.0 * i as f64,
            t - 10.0,
            esc(&line.name)
        );
    }
    s.push_str("</svg></figure>");
    s
}
