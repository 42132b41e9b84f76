//! `resources.csv`: `t_s,series,unit,value`, one row per interval and series, written as
//! the run goes and flushed every interval, so a killed run keeps what was sampled.

use crate::metrics::resources::{Series, SeriesUnit};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

pub struct ResourcesCsv {
    out: Option<BufWriter<File>>,
}

impl ResourcesCsv {
    pub fn create(path: &Path) -> std::io::Result<ResourcesCsv> {
        let mut out = BufWriter::new(File::create(path)?);
        writeln!(out, "t_s,series,unit,value")?;
        out.flush()?;
        Ok(ResourcesCsv { out: Some(out) })
    }

    /// Append one interval's rows. After a write error the file is left as it is (the
    /// summary still has the series).
    pub fn write(&mut self, t_s: f64, rows: &[(String, SeriesUnit, f64)]) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        let mut write = || -> std::io::Result<()> {
            for (name, unit, value) in rows {
                writeln!(out, "{t_s:.3},{name},{},{value}", unit_name(*unit))?;
            }
            out.flush()
        };
        if let Err(e) = write() {
            tracing::warn!("writing resources.csv: {e}; no more rows are written");
            self.out = None;
        }
    }
}

/// The series of a `resources.csv` (a killed run's, for `report DIR`); rows that do not
/// parse (a line cut short by the kill) are skipped.
pub fn read(path: &Path) -> std::io::Result<Vec<Series>> {
    let text = std::fs::read_to_string(path)?;
    let mut out: Vec<Series> = Vec::new();
    for line in text.lines().skip(1) {
        let mut f = line.splitn(4, ',');
        let (Some(t), Some(name), Some(unit), Some(value)) =
            (f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        let (Ok(t), Some(unit), Ok(value)) =
            (t.parse::<f64>(), unit_of(unit), value.parse::<f64>())
        else {
            continue;
        };
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.push(t, value),
            None => {
                let mut s = Series::new(name, unit);
                s.push(t, value);
                out.push(s);
            }
        }
    }
    Ok(out)
}

fn unit_of(name: &str) -> Option<SeriesUnit> {
    [
        SeriesUnit::Bytes,
        SeriesUnit::Count,
        SeriesUnit::Cores,
        SeriesUnit::Seconds,
    ]
    .into_iter()
    .find(|&u| unit_name(u) == name)
}

pub fn unit_name(unit: SeriesUnit) -> &'static str {
    match unit {
        SeriesUnit::Bytes => "bytes",
        SeriesUnit::Count => "count",
        SeriesUnit::Cores => "cores",
        SeriesUnit::Seconds => "seconds",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_written_read_back_as_series_and_a_cut_line_is_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("resources.csv");
        let mut csv = ResourcesCsv::create(&path).expect("create");
        for t in [1.0, 2.0] {
            csv.write(
                t,
                &[
                    ("server.rss".into(), SeriesUnit::Bytes, 1000.0 * t),
                    ("generator.lag".into(), SeriesUnit::Seconds, 0.001),
                ],
            );
        }
        drop(csv);
        let mut text = std::fs::read_to_string(&path).expect("read");
        text.push_str("3.000,server.rss,by");
        std::fs::write(&path, text).expect("write");
        let series = read(&path).expect("reads");
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].name, "server.rss");
        assert_eq!(series[0].unit, SeriesUnit::Bytes);
        assert_eq!(series[0].points, vec![[1.0, 1000.0], [2.0, 2000.0]]);
    }
}
