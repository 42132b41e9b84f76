//! `intervals.csv`: the per-interval figures of every phase, one row per phase per
//! interval, for spreadsheets and scripts (and the HTML report's timelines when it is
//! regenerated from a results folder). Written by hand: the fields never need quoting
//! (phase names are `[a-z/]`).
//!
//! `length_s` is the interval's real length: every interval but the last lasts
//! `run.interval_s`; the last, partial one ends with the run and is shorter. A rate
//! read from a row is `count / length_s`, never `count / interval_s`.

use crate::metrics::{IntervalRow, IntervalSink, Phase};
use hdrhistogram::Histogram;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "intervals.csv";
pub const HEADER: &str = "time_s,length_s,phase,count,errors,p50_us,p90_us,p95_us,p99_us,max_us";
/// The header before `p95_us` (results of mcp-fleet before schema 8): still readable,
/// with p95 unknown (0).
const HEADER_V7: &str = "time_s,length_s,phase,count,errors,p50_us,p90_us,p99_us,max_us";

/// Appends rows as intervals finish, flushed after each interval, to the final name (a
/// run killed hard leaves every finished interval; the reader skips a cut last line).
pub struct CsvSink {
    out: BufWriter<File>,
    path: PathBuf,
}

impl std::fmt::Debug for CsvSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CsvSink").field("path", &self.path).finish()
    }
}

impl CsvSink {
    pub fn create(dir: &Path) -> std::io::Result<CsvSink> {
        let path = dir.join(FILE_NAME);
        let mut out = BufWriter::new(File::create(&path)?);
        writeln!(out, "{HEADER}")?;
        out.flush()?;
        Ok(CsvSink { out, path })
    }
}

/// One row as written.
pub fn format_row(r: &IntervalRow) -> String {
    format!(
        "{:.3},{:.3},{},{},{},{},{},{},{},{}",
        r.start_s,
        r.len_s,
        r.phase.name(),
        r.count,
        r.errors,
        r.p50_us,
        r.p90_us,
        r.p95_us,
        r.p99_us,
        r.max_us
    )
}

impl IntervalSink for CsvSink {
    fn interval(&mut self, row: &IntervalRow, _: &Histogram<u64>) -> std::io::Result<()> {
        writeln!(self.out, "{}", format_row(row))
    }

    fn end_of_interval(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A line of `intervals.csv` that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("{path}:{line}: {problem}")]
pub struct CsvError {
    pub path: PathBuf,
    pub line: usize,
    pub problem: String,
}

/// Read `intervals.csv` back into rows.
pub fn read(path: &Path) -> Result<Vec<IntervalRow>, CsvError> {
    let err = |line: usize, problem: String| CsvError {
        path: path.to_path_buf(),
        line,
        problem,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(0, e.to_string()))?;
    // A line without its newline is one a killed run was writing: leave it out.
    let whole = match text.rfind('\n') {
        Some(end) => &text[..=end],
        None => "",
    };
    let old = whole.lines().next().is_some_and(|h| h.trim() == HEADER_V7);
    let (fields, header) = if old { (9, HEADER_V7) } else { (10, HEADER) };
    let mut rows = Vec::new();
    for (i, line) in whole.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let mut f: Vec<&str> = line.split(',').collect();
        if f.len() != fields {
            return Err(err(
                i + 1,
                format!("{} fields, expected {fields} ({header})", f.len()),
            ));
        }
        if old {
            f.insert(7, "0");
        }
        let num = |k: usize| -> Result<u64, CsvError> {
            f[k].parse()
                .map_err(|_| err(i + 1, format!("`{}` is not a whole number", f[k])))
        };
        let secs = |k: usize| -> Result<f64, CsvError> {
            f[k].parse()
                .map_err(|_| err(i + 1, format!("`{}` is not a number", f[k])))
        };
        rows.push(IntervalRow {
            start_s: secs(0)?,
            len_s: secs(1)?,
            phase: Phase::from_name(f[2])
                .ok_or_else(|| err(i + 1, format!("unknown phase `{}`", f[2])))?,
            count: num(3)?,
            errors: num(4)?,
            p50_us: num(5)?,
            p90_us: num(6)?,
            p95_us: num(7)?,
            p99_us: num(8)?,
            max_us: num(9)?,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_readable_after_each_interval_and_a_cut_last_line_is_left_out() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut sink = CsvSink::create(dir.path()).expect("created");
        let row = IntervalRow {
            start_s: 0.0,
            len_s: 1.0,
            phase: Phase::ToolsCall,
            count: 3,
            errors: 1,
            p50_us: 10,
            p90_us: 20,
            p95_us: 25,
            p99_us: 30,
            max_us: 40,
        };
        sink.interval(&row, &Histogram::new(3).expect("histogram"))
            .expect("written");
        sink.end_of_interval().expect("flushed");
        let path = dir.path().join(FILE_NAME);
        assert_eq!(read(&path).expect("parses"), vec![row]);
        let mut text = std::fs::read_to_string(&path).expect("read");
        text.push_str("1.000,1.000,tools/ca");
        std::fs::write(&path, text).expect("write");
        assert_eq!(read(&path).expect("the cut line is left out"), vec![row]);
    }
}
