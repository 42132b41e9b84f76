//! What a run leaves behind: the summary assembled from its figures ([`assemble`], into
//! the results contract of `crate::summary`), diagnosed and judged by its thresholds, and
//! shown in the terminal and the results folder (`summary.json`, `summary.txt`, the
//! effective `profile.toml`, per-phase `.hlog` interval logs, `intervals.csv`,
//! `report.html`, `thresholds.xml`), plus run-to-run comparison. Files are written
//! atomically. The views of a run still going (the live view, `/metrics`) are
//! `instruments`'.

pub mod assemble;
pub mod compare;
pub mod csv;
pub mod diagnosis;
pub mod hlog;
pub mod html;
pub mod junit;
pub mod requests;
pub mod soak;
pub mod soak_traffic;
pub mod style;
pub mod text;
pub mod threshold;

use crate::metrics::IntervalRow;
use crate::summary::Summary;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Write `bytes` to `path` via a temporary file (`NAME.tmp` beside it) and a rename, so
/// a reader never sees a half-written file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temporary(path);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Where [`write_atomically`] writes before its rename.
fn temporary(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// The files [`write_results`] writes atomically: a run killed during a checkpoint may
/// leave one of their temporaries behind.
const ATOMIC_FILES: [&str; 6] = [
    "summary.json",
    // `merge::STATE_FILE`, written by `results::write` with these.
    "state.json",
    "profile.toml",
    "summary.txt",
    html::FILE_NAME,
    junit::FILE_NAME,
];

/// Remove the temporaries a killed run left (they are never the newest figures: the
/// rename had not happened).
fn remove_stale_temporaries(dir: &Path) {
    for name in ATOMIC_FILES {
        let _ = std::fs::remove_file(temporary(&dir.join(name)));
    }
}

/// Write the results folder's summary files (the interval files are written while the
/// run goes); returns the paths written.
pub fn write_results(
    dir: &Path,
    summary: &Summary,
    profile_toml: &str,
    timeline: &[IntervalRow],
    histograms: BTreeMap<String, Histogram<u64>>,
) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_vec_pretty(summary).map_err(std::io::Error::other)?;
    let summary_path = dir.join("summary.json");
    write_atomically(&summary_path, &json)?;
    let profile_path = dir.join("profile.toml");
    write_atomically(&profile_path, profile_toml.as_bytes())?;
    let mut written = vec![summary_path, profile_path];
    written.extend(write_views(
        dir,
        &html::ReportInput {
            summary,
            timeline,
            histograms,
            profile_toml: Some(profile_toml.to_string()),
        },
    )?);
    Ok(written)
}

/// The files made from the others: text summary, HTML report, JUnit thresholds.
fn write_views(dir: &Path, input: &html::ReportInput<'_>) -> std::io::Result<Vec<PathBuf>> {
    let text_path = dir.join("summary.txt");
    write_atomically(&text_path, text::render(input.summary).as_bytes())?;
    let html_path = dir.join(html::FILE_NAME);
    write_atomically(&html_path, html::render(input).as_bytes())?;
    let junit_path = dir.join(junit::FILE_NAME);
    write_atomically(&junit_path, junit::render(input.summary).as_bytes())?;
    Ok(vec![text_path, html_path, junit_path])
}

/// A results folder that cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("cannot read {path}: {source}\nfix: give the results folder of a run (it holds summary.json)")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not an mcp-fleet summary: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{dir} has the interval files of a run ({csv}, .hlog) but no summary.json: the run was stopped hard before its first checkpoint\nfix: the interval files are readable as they are; to have a summary from a run killed hard, run with --checkpoint (e.g. --checkpoint 1m) so it rewrites its results as it goes", csv = csv::FILE_NAME)]
    NoCheckpoint { dir: PathBuf },
    #[error(transparent)]
    Csv(#[from] csv::CsvError),
    #[error(transparent)]
    Hlog(#[from] hlog::HlogError),
}

/// Read `summary.json` from a results folder.
pub fn load_summary(dir: &Path) -> Result<Summary, ResultsError> {
    let path = dir.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|source| ResultsError::Read {
        path: path.clone(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| ResultsError::Json { path, source })
}

/// `mcp-fleet report DIR`: rebuild the text summary, the HTML report and the JUnit file
/// from a results folder's `summary.json`, `intervals.csv` and `.hlog` files.
pub fn regenerate(dir: &Path) -> Result<Summary, ResultsError> {
    let mut summary = load_summary(dir).map_err(|e| match e {
        ResultsError::Read { .. } if dir.join(csv::FILE_NAME).is_file() => {
            ResultsError::NoCheckpoint {
                dir: dir.to_path_buf(),
            }
        }
        e => e,
    })?;
    remove_stale_temporaries(dir);
    let csv_path = dir.join(csv::FILE_NAME);
    let timeline = if csv_path.is_file() {
        csv::read(&csv_path)?
    } else {
        Vec::new()
    };
    let histograms = hlog::read_totals(dir)?;
    let profile_toml = std::fs::read_to_string(dir.join("profile.toml")).ok();
    if soak::refresh(&mut summary, dir, &timeline, profile_toml.as_deref()) {
        let json = serde_json::to_vec_pretty(&summary).map_err(std::io::Error::other);
        json.and_then(|j| write_atomically(&dir.join("summary.json"), &j))
            .map_err(|source| ResultsError::Read {
                path: dir.join("summary.json"),
                source,
            })?;
    }
    let input = html::ReportInput {
        summary: &summary,
        timeline: &timeline,
        histograms,
        profile_toml,
    };
    write_views(dir, &input).map_err(|source| ResultsError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    Ok(summary)
}
