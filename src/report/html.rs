//! `report.html`: one self-contained page (no CDN, no fetched script) a person can open
//! offline. Tables are rendered here; the charts are drawn on canvases by a small script
//! of ours (`report.js`, embedded) from a JSON blob in the page. Timelines are cut down
//! to at most [`MAX_POINTS`] points per series with min/max buckets, so hours of data
//! stay small and fast while peaks stay visible.

use crate::metrics::IntervalRow;
use crate::summary::Summary;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

mod acceptance;
mod body;
mod charts;
mod faults;
mod phases;
mod soak;
#[cfg(test)]
mod tests;

use body::body;
use charts::chart_data;
pub(crate) use charts::decimate;
pub use charts::{IN_FLIGHT, MAX_POINTS};

pub const FILE_NAME: &str = "report.html";
const TEMPLATE: &str = include_str!("report.html");
const SCRIPT: &str = include_str!("report.js");
/// What the live page (`run --dashboard`) adds: it follows the run's events.
const LIVE_SCRIPT: &str = include_str!("live.js");

/// Everything the page shows.
#[derive(Debug)]
pub struct ReportInput<'a> {
    pub summary: &'a Summary,
    /// Every interval row (any order).
    pub timeline: &'a [IntervalRow],
    /// The whole run's service-time histogram per phase, for the percentile plot.
    pub histograms: BTreeMap<String, Histogram<u64>>,
    /// The effective profile, shown with the parameters.
    pub profile_toml: Option<String>,
}

/// Escape text for HTML.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page.
pub fn render(input: &ReportInput<'_>) -> String {
    let charts = chart_data(input);
    // `<` is escaped so no string in the data can close the script element.
    let data = charts.to_string().replace('<', "\\u003c");
    let s = input.summary;
    let ranges = phases::ranges(s, &input.histograms);
    fill(
        TEMPLATE,
        &[
            ("{{TITLE}}", &esc(&format!("mcp-fleet · {}", title(s)))),
            (
                "{{BODY}}",
                &body(s, input.profile_toml.as_deref(), &charts, &ranges),
            ),
            ("{{SCRIPT}}", SCRIPT),
            ("{{DATA}}", &data),
        ],
    )
}

/// The inner HTML of a rendered page's `<main>` and the text of its chart data: what
/// the live page swaps in on each update. `None` for a page not made by [`render`].
pub fn parts(page: &str) -> Option<(String, String)> {
    let main = page.split_once("<main>\n")?.1.rsplit_once("\n</main>")?.0;
    let data = page
        .split_once(r#"<script type="application/json" id="chart-data">"#)?
        .1
        .split_once("</script>")?
        .0;
    Some((main.to_string(), data.to_string()))
}

/// The live page: a rendered page's `main` and chart `data` (from [`parts`]), a status
/// line, and the script that follows the run's events.
pub fn live_page(main: &str, data: &str, status: &str) -> String {
    // `<` escaped: no status text can close the script element.
    let status = serde_json::to_string(status)
        .unwrap_or_default()
        .replace('<', "\\u003c");
    let script = format!(
        "{SCRIPT}\n</script>\n<script>\nwindow.mcpFleetLive = {{ status: {status} }};\n{LIVE_SCRIPT}"
    );
    fill(
        TEMPLATE,
        &[
            ("{{TITLE}}", "mcp-fleet · live"),
            ("{{BODY}}", main),
            ("{{SCRIPT}}", &script),
            ("{{DATA}}", if data.is_empty() { "{}" } else { data }),
        ],
    )
}

/// A page of this style around `body` (HTML, no charts of the script): `ceiling`'s
/// report, whose pictures are inline SVG.
pub(crate) fn page(title: &str, body: &str) -> String {
    fill(
        TEMPLATE,
        &[
            ("{{TITLE}}", &esc(title)),
            ("{{BODY}}", body),
            ("{{SCRIPT}}", ""),
            ("{{DATA}}", "{}"),
        ],
    )
}

/// What the run is called on the page: the profile's name, or the target when the
/// profile kept the default name ("run" says nothing). The target is redacted already.
pub(crate) fn title(s: &Summary) -> &str {
    if s.run.name.is_empty() || s.run.name == "run" {
        &s.run.target
    } else {
        &s.run.name
    }
}

/// Substitute each placeholder once, in one pass over the template, so text from the
/// run (a profile, an error message) that happens to contain a placeholder stays as is.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|v| v.1.len()).sum::<usize>());
    let mut rest = template;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        match values.iter().find(|(k, _)| rest[at..].starts_with(k)) {
            Some((k, v)) => {
                out.push_str(v);
                rest = &rest[at + k.len()..];
            }
            None => {
                out.push_str("{{");
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(rest);
    out
}
