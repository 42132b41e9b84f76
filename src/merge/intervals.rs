//! The merged interval files. Every shard's intervals are nominal (interval k starts at
//! kΔ from the shared start), so interval k of the whole run is the sum of interval k of
//! every shard: its histogram (read back from each shard's `.hlog`) and its errors (from
//! each shard's `intervals.csv`). The merged files are written by the run's own sinks.
//! The histograms are held encoded (as the logs keep them) until their interval is
//! written: a long run has many intervals, and a decoded histogram spans its whole range.

use super::state::add;
use crate::metrics::{IntervalRow, IntervalSink, Phase, LATENCY_BOUND_US};
use crate::report::{csv, hlog};
use anyhow::Context;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One merged interval of one phase: the shards' histograms (encoded, with the log they
/// come from), their errors, its length.
#[derive(Default)]
struct Slot {
    hists: Vec<(hlog::RawInterval, usize)>,
    errors: u64,
    len_s: f64,
}

fn empty() -> anyhow::Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, LATENCY_BOUND_US, 3).context("a histogram")
}

/// Interval k of a start `start_s` seconds in.
fn index(start_s: f64, every_s: f64) -> u64 {
    // Non-negative and finite by construction; a broken file gives interval 0.
    let k = (start_s / every_s).round();
    if k.is_finite() && k >= 0.0 {
        k as u64
    } else {
        0
    }
}

/// One shard's folder and, for a checkpoint's state, when its figures end (seconds
/// in): the interval files of a run killed after its checkpoint go on past it.
#[derive(Debug, Clone)]
pub struct ShardFiles {
    pub dir: PathBuf,
    pub until_s: Option<f64>,
}

/// Add the intervals of `shards` and write them to `out` (started at `started_at`, of
/// `every_s` seconds); the merged rows, in time order.
pub fn merge(
    shards: &[ShardFiles],
    out: &Path,
    started_at: SystemTime,
    every_s: f64,
) -> anyhow::Result<Vec<IntervalRow>> {
    let mut slots: BTreeMap<(u64, usize), Slot> = BTreeMap::new();
    let mut paths = Vec::new();
    for shard in shards {
        read_shard(shard, every_s, &mut slots, &mut paths)?;
    }
    let mut deserializer = hdrhistogram::serialization::Deserializer::new();
    let mut hist = empty()?;
    let mut sinks: Vec<Box<dyn IntervalSink>> = vec![
        Box::new(hlog::HlogSink::new(out, started_at)),
        Box::new(
            csv::CsvSink::create(out)
                .with_context(|| format!("creating {}", out.join(csv::FILE_NAME).display()))?,
        ),
    ];
    let mut rows = Vec::new();
    let mut current = None;
    for (&(k, phase), slot) in &slots {
        if current.is_some_and(|c| c != k) {
            for sink in &mut sinks {
                sink.end_of_interval()?;
            }
        }
        current = Some(k);
        hist.reset();
        for (raw, from) in &slot.hists {
            let path: &PathBuf = &paths[*from];
            let decoded = raw.decode(&mut deserializer, path)?;
            add(&mut hist, &decoded).with_context(|| format!("{}", path.display()))?;
        }
        let row = row_of(k as f64 * every_s, Phase::ALL[phase], &hist, slot);
        for sink in &mut sinks {
            sink.interval(&row, &hist)
                .with_context(|| format!("writing the merged intervals to {}", out.display()))?;
        }
        rows.push(row);
    }
    for sink in &mut sinks {
        sink.end_of_interval()?;
        sink.finish()?;
    }
    Ok(rows)
}

/// The row of one merged interval, its percentiles from the added histogram (as the
/// collector makes a row of its own).
fn row_of(start_s: f64, phase: Phase, h: &Histogram<u64>, slot: &Slot) -> IntervalRow {
    IntervalRow::of(start_s, slot.len_s, phase, h, slot.errors)
}

/// Add one shard's intervals into `slots`.
fn read_shard(
    shard: &ShardFiles,
    every_s: f64,
    slots: &mut BTreeMap<(u64, usize), Slot>,
    paths: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
    let dir = &shard.dir;
    // Intervals that ended by the checkpoint (to the millisecond the files keep).
    let within = |start_s: f64, len_s: f64| {
        shard
            .until_s
            .is_none_or(|until| start_s + len_s <= until + 0.001)
    };
    let csv_path = dir.join(csv::FILE_NAME);
    let rows = if csv_path.is_file() {
        csv::read(&csv_path)?
    } else {
        Vec::new()
    };
    for r in rows.into_iter().filter(|r| within(r.start_s, r.len_s)) {
        let slot = slots
            .entry((index(r.start_s, every_s), r.phase.index()))
            .or_default();
        slot.errors += r.errors;
        slot.len_s = slot.len_s.max(r.len_s);
    }
    for phase in Phase::ALL {
        let path = dir.join(hlog::file_name(phase));
        if !path.is_file() {
            continue;
        }
        let from = paths.len();
        for logged in hlog::read_log_raw(&path)? {
            let (start_s, len_s) = (logged.start.as_secs_f64(), logged.length.as_secs_f64());
            if !within(start_s, len_s) {
                continue;
            }
            let slot = slots
                .entry((index(start_s, every_s), phase.index()))
                .or_default();
            slot.len_s = slot.len_s.max(len_s);
            slot.hists.push((logged, from));
        }
        paths.push(path);
    }
    Ok(())
}
