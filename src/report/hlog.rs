//! HdrHistogram interval logs: one `.hlog` file per phase in the results folder, in the
//! standard V2 compressed format that HdrHistogram's own tools read
//! (HistogramLogProcessor, HistogramLogAnalyzer), one histogram of service times (µs) per
//! interval. File names are made safe (`tools/list` → `tools_list.hlog`); the real phase
//! name is each interval's tag and is in the header comment.

use crate::metrics::{IntervalRow, IntervalSink, Phase, LATENCY_BOUND_US};
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// `tools/list` → `tools_list.hlog`.
pub fn file_name(phase: Phase) -> String {
    format!("{}.hlog", phase.name().replace('/', "_"))
}

/// One phase's log, written under its final name and flushed after every interval: an
/// append-only log whose last line may be cut is what HdrHistogram's tools expect, and
/// [`read_log`] leaves such a line out.
struct PhaseLog {
    out: BufWriter<File>,
}

/// Writes each phase's intervals to its own log, creating the file when the phase first
/// has samples.
pub struct HlogSink {
    dir: PathBuf,
    started_at: SystemTime,
    logs: Vec<Option<PhaseLog>>,
    serializer: V2DeflateSerializer,
}

impl std::fmt::Debug for HlogSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HlogSink").field("dir", &self.dir).finish()
    }
}

impl HlogSink {
    /// `started_at` is the run's start: interval timestamps are offsets from it.
    pub fn new(dir: &Path, started_at: SystemTime) -> HlogSink {
        HlogSink {
            dir: dir.to_path_buf(),
            started_at,
            logs: (0..Phase::COUNT).map(|_| None).collect(),
            serializer: V2DeflateSerializer::new(),
        }
    }

    fn open(&self, phase: Phase) -> std::io::Result<PhaseLog> {
        let path = self.dir.join(file_name(phase));
        let mut out = BufWriter::new(File::create(&path)?);
        let mut header = Vec::new();
        IntervalLogWriterBuilder::new()
            .add_comment(&format!(
                "mcp-fleet {} phase {}: service time of successful samples, microseconds",
                env!("CARGO_PKG_VERSION"),
                phase.name()
            ))
            .add_comment("[Histogram log format version 1.3]")
            .with_start_time(self.started_at)
            .with_base_time(self.started_at)
            .begin_log_with(&mut header, &mut V2DeflateSerializer::new())?;
        out.write_all(&header)?;
        out.write_all(
            b"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
        )?;
        Ok(PhaseLog { out })
    }
}

impl IntervalSink for HlogSink {
    fn interval(&mut self, row: &IntervalRow, hist: &Histogram<u64>) -> std::io::Result<()> {
        let i = row.phase.index();
        if self.logs[i].is_none() {
            self.logs[i] = Some(self.open(row.phase)?);
        }
        let Some(log) = self.logs[i].as_mut() else {
            return Ok(());
        };
        // The crate's writer borrows its output; a header-less builder per interval
        // writes exactly one interval line.
        IntervalLogWriterBuilder::new()
            .begin_log_with(&mut log.out, &mut self.serializer)?
            .write_histogram(
                hist,
                Duration::from_secs_f64(row.start_s),
                Duration::from_secs_f64(row.len_s),
                Tag::new(row.phase.name()),
            )
            .map_err(|e| std::io::Error::other(e.to_string()))
    }

    fn end_of_interval(&mut self) -> std::io::Result<()> {
        for log in self.logs.iter_mut().flatten() {
            log.out.flush()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> std::io::Result<()> {
        for mut log in self.logs.iter_mut().filter_map(Option::take) {
            log.out.flush()?;
        }
        Ok(())
    }
}

/// One interval read back from a log.
#[derive(Debug, Clone)]
pub struct LoggedInterval {
    pub tag: Option<String>,
    pub start: Duration,
    pub length: Duration,
    pub histogram: Histogram<u64>,
}

/// A log that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HlogError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not an interval log at byte {offset}")]
    Parse { path: PathBuf, offset: usize },
    #[error("{path}: a histogram does not decode: {detail}")]
    Decode { path: PathBuf, detail: String },
}

/// One interval of a log as written: its histogram still encoded (a few hundred bytes
/// where the decoded one takes its whole range), for readers that hold many.
#[derive(Debug, Clone)]
pub struct RawInterval {
    pub tag: Option<String>,
    pub start: Duration,
    pub length: Duration,
    /// Base64 of the V2 compressed histogram.
    pub encoded: String,
}

impl RawInterval {
    /// The histogram, decoded.
    pub fn decode(
        &self,
        deserializer: &mut Deserializer,
        path: &Path,
    ) -> Result<Histogram<u64>, HlogError> {
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &self.encoded)
            .map_err(|e| e.to_string())
            .and_then(|raw| {
                deserializer
                    .deserialize::<u64, _>(&mut raw.as_slice())
                    .map_err(|e| e.to_string())
            })
            .map_err(|detail| HlogError::Decode {
                path: path.to_path_buf(),
                detail,
            })
    }
}

/// Every interval of one log, in order, its histograms encoded.
pub fn read_log_raw(path: &Path) -> Result<Vec<RawInterval>, HlogError> {
    let bytes = std::fs::read(path).map_err(|source| HlogError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    // A line without its newline is one a killed run was writing: leave it out.
    let whole = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(end) => &bytes[..=end],
        None => &[][..],
    };
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(whole) {
        let entry = entry.map_err(|e| HlogError::Parse {
            path: path.to_path_buf(),
            offset: match e {
                hdrhistogram::serialization::interval_log::LogIteratorError::ParseError {
                    offset,
                } => offset,
            },
        })?;
        let LogEntry::Interval(ilh) = entry else {
            continue;
        };
        out.push(RawInterval {
            tag: ilh.tag().map(|t| t.as_str().to_string()),
            start: ilh.start_timestamp(),
            length: ilh.duration(),
            encoded: ilh.encoded_histogram().to_string(),
        });
    }
    Ok(out)
}

/// Every interval of one log, in order.
pub fn read_log(path: &Path) -> Result<Vec<LoggedInterval>, HlogError> {
    let mut deserializer = Deserializer::new();
    read_log_raw(path)?
        .into_iter()
        .map(|raw| {
            Ok(LoggedInterval {
                histogram: raw.decode(&mut deserializer, path)?,
                tag: raw.tag,
                start: raw.start,
                length: raw.length,
            })
        })
        .collect()
}

/// The whole-run histogram of every phase that has a log in `dir` (the sum of its
/// intervals), by phase name.
pub fn read_totals(dir: &Path) -> Result<BTreeMap<String, Histogram<u64>>, HlogError> {
    let mut totals = BTreeMap::new();
    for phase in Phase::ALL {
        let path = dir.join(file_name(phase));
        if !path.is_file() {
            continue;
        }
        let mut total =
            Histogram::new_with_bounds(1, LATENCY_BOUND_US, 3).map_err(|e| HlogError::Decode {
                path: path.clone(),
                detail: e.to_string(),
            })?;
        for interval in read_log(&path)? {
            total
                .add(&interval.histogram)
                .map_err(|e| HlogError::Decode {
                    path: path.clone(),
                    detail: format!("{e:?}"),
                })?;
        }
        totals.insert(phase.name().to_string(), total);
    }
    Ok(totals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_is_readable_while_written_and_its_cut_last_line_is_left_out() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut sink = HlogSink::new(dir.path(), SystemTime::now());
        let mut h = Histogram::<u64>::new_with_bounds(1, LATENCY_BOUND_US, 3).expect("bounds");
        h.record(1500).expect("record");
        for k in 0..2 {
            let row = IntervalRow {
                start_s: f64::from(k),
                len_s: 1.0,
                phase: Phase::Initialize,
                count: 1,
                errors: 0,
                p50_us: 1500,
                p90_us: 1500,
                p95_us: 1500,
                p99_us: 1500,
                max_us: 1500,
            };
            sink.interval(&row, &h).expect("written");
            sink.end_of_interval().expect("flushed");
        }
        // Not finished, as in a run killed hard: the final name holds both intervals.
        let path = dir.path().join(file_name(Phase::Initialize));
        assert_eq!(read_log(&path).expect("parses").len(), 2);
        let mut bytes = std::fs::read(&path).expect("read");
        let whole = bytes.len();
        bytes.extend_from_slice(b"Tag=initialize,3.000,1.000,1.500,HISTFAAAA");
        std::fs::write(&path, &bytes).expect("write");
        assert_eq!(read_log(&path).expect("a cut line is left out").len(), 2);
        bytes.truncate(whole - 10);
        std::fs::write(&path, &bytes).expect("write");
        assert_eq!(read_log(&path).expect("cut mid-interval").len(), 1);
        drop(sink);
    }
}
