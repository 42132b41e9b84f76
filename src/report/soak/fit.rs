//! Leak slopes: an ordinary least-squares line through each resource series over the
//! steady part, with R² and a 95 % confidence interval, and the words people read
//! ("RSS +42 MiB/h (R² 0.97)").

use crate::metrics::{Series, SeriesUnit};
use crate::summary::soak::Slope;

/// Fewer points than this give no slope (two points always fit a line exactly).
pub const MIN_POINTS: usize = 3;

/// One slope per series with at least [`MIN_POINTS`] points in `[from_s, to_s]`: levels
/// (memory, descriptors …) judged by their shape over the whole run
/// ([`super::shape::judge`]), rates (CPU) a plain line over the steady part. The run's own
/// `fleet.*` series (the load applied), the machine's and the limits are not something
/// that can leak: they get none.
pub fn slopes(resources: &[Series], from_s: f64, to_s: f64) -> Vec<Slope> {
    let mut all: Vec<Slope> = resources
        .iter()
        .filter(|s| {
            !s.name.starts_with("fleet.")
                && !s.name.starts_with("machine.")
                && !s.name.ends_with(".limit")
        })
        .filter_map(|s| {
            if super::shape::judged(s) {
                super::shape::judge(s, resources, 0.0, from_s, to_s)
            } else {
                slope(s, from_s, to_s)
            }
        })
        .collect();
    super::shape::capped_by_limits(&mut all, resources, 0.0, to_s);
    all
}

/// The least-squares line through `series` over `[from_s, to_s]`, if there are enough
/// points and they span some time.
pub fn slope(series: &Series, from_s: f64, to_s: f64) -> Option<Slope> {
    let pts = points(series, from_s, to_s);
    let l = line(&pts)?;
    let n = pts.len();
    let mut slope = Slope {
        series: series.name.clone(),
        unit: series.unit,
        per_s: l.slope,
        ci95_per_s: l.ci95,
        r2: l.r2,
        points: n as u64,
        from_s: pts[0][0],
        to_s: pts[n - 1][0],
        text: String::new(),
        per: Vec::new(),
        trend: None,
        decided_by: String::new(),
        levels_off_at_s: None,
        limit: None,
        at_limit_from_s: None,
        needs_s: None,
    };
    slope.text = describe(&slope);
    Some(slope)
}

/// The finite points of `series` in `[from_s, to_s]`.
pub fn points(series: &Series, from_s: f64, to_s: f64) -> Vec<[f64; 2]> {
    series
        .points
        .iter()
        .copied()
        .filter(|[t, v]| *t >= from_s && *t <= to_s && t.is_finite() && v.is_finite())
        .collect()
}

/// An ordinary least-squares line `y = a + slope·x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    pub slope: f64,
    /// The 95 % confidence interval of the slope.
    pub ci95: [f64; 2],
    /// Coefficient of determination (0 for a flat series).
    pub r2: f64,
    /// The residual sum of squares.
    pub sse: f64,
    pub points: usize,
}

impl Line {
    /// Half the width of the 95 % interval.
    pub fn half(&self) -> f64 {
        (self.ci95[1] - self.ci95[0]) / 2.0
    }
}

/// The least-squares line through `pts` (`[x, y]`): at least [`MIN_POINTS`] points
/// spread over more than one x.
pub fn line(pts: &[[f64; 2]]) -> Option<Line> {
    let n = pts.len();
    if n < MIN_POINTS {
        return None;
    }
    let nf = n as f64;
    let mean_x = pts.iter().map(|p| p[0]).sum::<f64>() / nf;
    let mean_y = pts.iter().map(|p| p[1]).sum::<f64>() / nf;
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for [x, y] in pts {
        let (dx, dy) = (x - mean_x, y - mean_y);
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    // Rounding can make the residual sum a hair below zero.
    let sse = (syy - slope * sxy).max(0.0);
    let r2 = if syy > 0.0 {
        (1.0 - sse / syy).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let half = t95(n - 2) * (sse / (nf - 2.0) / sxx).sqrt();
    Some(Line {
        slope,
        ci95: [slope - half, slope + half],
        r2,
        sse,
        points: n,
    })
}

/// The two-sided 95 % critical value of Student's t for `df` degrees of freedom: the
/// exact table up to 30, then the Cornish–Fisher expansion around the normal 1.96
/// (within 0.001 of the exact value from 30 on).
pub fn t95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => {
            let z: f64 = 1.959_964;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// How people call a series in a sentence.
pub fn label(series: &str) -> String {
    match series {
        "server.rss" => "RSS".into(),
        "server.fds" => "FDs".into(),
        "server.cpu" => "CPU".into(),
        "server.threads" => "threads".into(),
        "server.processes" => "processes".into(),
        "generator.rss" => "generator RSS".into(),
        "generator.cpu" => "generator CPU".into(),
        other => other.to_string(),
    }
}

/// A change per second for people: bytes per hour in KiB/MiB/GiB, counts per minute
/// (per hour when that reads better), cores and seconds per hour.
pub fn rate_text(per_s: f64, unit: SeriesUnit) -> String {
    rate_text_like(per_s, per_s, unit)
}

/// An interval of changes per second in one unit, the one its wider end reads best in
/// (`-1.20 … +5.71 MiB/h`, never `-1.2/min … +5.71/h`).
pub fn interval_text(lo: f64, hi: f64, unit: SeriesUnit) -> String {
    let like = if lo.abs() > hi.abs() { lo } else { hi };
    format!(
        "{} … {}",
        rate_text_like(lo, like, unit),
        rate_text_like(hi, like, unit)
    )
}

/// `per_s` in the unit [`rate_text`] would choose for `like`.
fn rate_text_like(per_s: f64, like: f64, unit: SeriesUnit) -> String {
    let per_h = per_s * 3600.0;
    match unit {
        SeriesUnit::Bytes => {
            let (scale, name) = byte_scale(like * 3600.0);
            format!("{}/h", bytes_in(per_h, scale, name, true))
        }
        SeriesUnit::Count => {
            let per_min = per_s * 60.0;
            if (like * 60.0).abs() >= 0.1 || like == 0.0 {
                format!("{per_min:+.1}/min")
            } else {
                format!("{per_h:+.2}/h")
            }
        }
        SeriesUnit::Cores => format!("{per_h:+.2} cores/h"),
        SeriesUnit::Seconds => format!("{:+.2} ms/h", per_h * 1000.0),
    }
}

/// Bytes in binary units (`42 MiB`), with a sign when `signed`.
pub fn bytes_text(bytes: f64, signed: bool) -> String {
    let (scale, unit) = byte_scale(bytes);
    bytes_in(bytes, scale, unit, signed)
}

/// The binary unit `bytes` reads best in, and its size.
fn byte_scale(bytes: f64) -> (f64, &'static str) {
    match bytes.abs() {
        b if b >= 1024.0 * 1024.0 * 1024.0 => (1024.0 * 1024.0 * 1024.0, "GiB"),
        b if b >= 1024.0 * 1024.0 => (1024.0 * 1024.0, "MiB"),
        b if b >= 1024.0 => (1024.0, "KiB"),
        _ => (1.0, "B"),
    }
}

fn bytes_in(bytes: f64, scale: f64, unit: &str, signed: bool) -> String {
    let v = bytes / scale;
    let digits = if v.abs() >= 100.0 || scale == 1.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    if signed {
        format!("{v:+.digits$} {unit}")
    } else {
        format!("{v:.digits$} {unit}")
    }
}

pub fn describe(s: &Slope) -> String {
    format!(
        "{} {} (R² {:.2})",
        label(&s.series),
        rate_text(s.per_s, s.unit),
        s.r2
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(unit: SeriesUnit, f: impl Fn(f64) -> f64, n: usize) -> Series {
        let mut s = Series::new("server.rss", unit);
        for i in 0..n {
            let t = i as f64;
            s.push(t, f(t));
        }
        s
    }

    #[test]
    fn a_perfect_line_has_r2_one_and_a_tight_interval() {
        let s = series(SeriesUnit::Bytes, |t| 1e6 + 2048.0 * t, 50);
        let fit = slope(&s, 0.0, 100.0).expect("a slope");
        assert!((fit.per_s - 2048.0).abs() < 1e-6, "{fit:?}");
        assert!((fit.r2 - 1.0).abs() < 1e-9);
        assert!(fit.ci95_per_s[1] - fit.ci95_per_s[0] < 1e-6);
        assert_eq!(fit.points, 50);
        // 2 KiB/s = 7.03 MiB/h.
        assert_eq!(fit.text, "RSS +7.03 MiB/h (R² 1.00)");
    }

    #[test]
    fn a_noisy_line_is_found_within_its_interval() {
        // Deterministic noise: a pseudo-random sequence in ±50 KiB around 1 KiB/s.
        let mut x: u64 = 12345;
        let mut noise = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 100.0 * 1024.0
        };
        let mut s = Series::new("server.rss", SeriesUnit::Bytes);
        for i in 0..200 {
            let t = i as f64 * 10.0;
            s.push(t, 5e7 + 1024.0 * t + noise());
        }
        let fit = slope(&s, 0.0, 1e9).expect("a slope");
        let [lo, hi] = fit.ci95_per_s;
        assert!(lo < 1024.0 && 1024.0 < hi, "{fit:?}");
        assert!(fit.r2 > 0.9, "{fit:?}");
    }

    #[test]
    fn a_flat_series_has_no_slope_and_its_interval_holds_zero() {
        let s = series(SeriesUnit::Count, |_| 42.0, 10);
        let fit = slope(&s, 0.0, 100.0).expect("a slope");
        assert_eq!((fit.per_s, fit.r2), (0.0, 0.0));
        assert!(fit.ci95_per_s[0] <= 0.0 && fit.ci95_per_s[1] >= 0.0);
        let wobbly = series(SeriesUnit::Count, |t| 40.0 + (t as i64 % 2) as f64, 10);
        let fit = slope(&wobbly, 0.0, 100.0).expect("a slope");
        assert!(
            fit.ci95_per_s[0] <= 0.0 && fit.ci95_per_s[1] >= 0.0,
            "{fit:?}"
        );
    }

    #[test]
    fn too_few_points_or_outside_the_steady_part_give_none() {
        let s = series(SeriesUnit::Count, |t| t, 10);
        assert!(slope(&s, 0.0, 1.0).is_none(), "two points");
        assert!(slope(&s, 20.0, 30.0).is_none());
        assert_eq!(slope(&s, 2.0, 6.0).map(|f| f.points), Some(5));
    }

    #[test]
    fn words_for_people() {
        assert_eq!(rate_text(0.2, SeriesUnit::Count), "+12.0/min");
        assert_eq!(rate_text(1.0 / 3600.0, SeriesUnit::Count), "+1.00/h");
        assert_eq!(rate_text(0.02 / 3600.0, SeriesUnit::Cores), "+0.02 cores/h");
        assert_eq!(bytes_text(42.0 * 1024.0 * 1024.0, true), "+42.0 MiB");
        assert!((t95(1) - 12.706).abs() < 1e-9);
        // Exact: df 60 → 2.000, df 120 → 1.980.
        assert!((t95(60) - 2.000).abs() < 0.002, "{}", t95(60));
        assert!((t95(120) - 1.980).abs() < 0.002, "{}", t95(120));
    }

    #[test]
    fn an_interval_reads_in_one_unit() {
        // Before: `95% CI -1.2/min … +5.71/h` and `-512 B/h … +3.52 MiB/h`.
        let count = interval_text(-0.02, 0.0001, SeriesUnit::Count);
        assert_eq!(count, "-1.2/min … +0.0/min");
        let bytes = interval_text(-0.1, 1024.0, SeriesUnit::Bytes);
        assert_eq!(bytes, "-0.00 MiB/h … +3.52 MiB/h");
    }
}
