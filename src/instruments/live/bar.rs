//! The live view's progress bar on a terminal (indicatif, which draws and clears the
//! lines under it, estimates the ETA and ignores a stderr that went away): how far the
//! run is by time or by its session budget, whichever ends first; a spinner with the
//! elapsed time when the run goes on until stopped.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// The bar's length: progress in thousandths.
const STEPS: u64 = 1000;

/// A bar that knows where the run ends, and a spinner for runs that go on until stopped.
const BOUNDED: &str = "{spinner} {elapsed:>4} [{bar:40}] {percent:>3}% · ETA {prefix}\n{msg}";
const UNBOUNDED: &str =
    "{spinner} {elapsed:>4} until stopped (Ctrl-C ends the run and writes the results)\n{msg}";

/// `42s`, `3m05s`, `1h02m`.
fn eta_text(d: Duration) -> String {
    let s = d.as_secs_f64().ceil() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

pub(super) struct Bar {
    bar: ProgressBar,
}

impl Bar {
    /// A bar (`bounded`) or a spinner, drawn on `target`.
    pub(super) fn new(bounded: bool, target: ProgressDrawTarget) -> Bar {
        let (len, template) = if bounded {
            (Some(STEPS), BOUNDED)
        } else {
            (None, UNBOUNDED)
        };
        let bar = ProgressBar::with_draw_target(len, target);
        // The templates are constants; were one refused, the default style still draws.
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix("–");
        bar.enable_steady_tick(Duration::from_millis(200));
        Bar { bar }
    }

    /// Move to `progress` (0 to 1; `None` for a spinner) with `eta` (ours: indicatif's
    /// estimate knows neither the duration nor the session budget), `message` under it.
    pub(super) fn update(&self, progress: Option<f64>, eta: Option<Duration>, message: String) {
        self.bar
            .set_prefix(eta.map_or_else(|| "–".to_string(), eta_text));
        if let Some(p) = progress {
            self.bar
                .set_position((p.clamp(0.0, 1.0) * STEPS as f64).round() as u64);
        }
        self.bar.set_message(message);
    }

    /// Take the bar and its lines off the screen.
    pub(super) fn clear(self) {
        self.bar.finish_and_clear();
    }

    #[cfg(test)]
    pub(super) fn inner(&self) -> &ProgressBar {
        &self.bar
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_run_is_a_bar_and_an_open_ended_one_a_spinner() {
        let bar = Bar::new(true, ProgressDrawTarget::hidden());
        assert_eq!(bar.inner().length(), Some(STEPS));
        bar.update(
            Some(0.25),
            Some(Duration::from_secs(65)),
            "closed model, 8 clients".into(),
        );
        assert_eq!(bar.inner().prefix(), "1m05s");
        assert_eq!(bar.inner().position(), 250);
        assert_eq!(bar.inner().message(), "closed model, 8 clients");
        bar.update(Some(1.7), None, String::new());
        assert_eq!(bar.inner().prefix(), "–");
        assert_eq!(bar.inner().position(), STEPS, "never past the end");
        bar.clear();
        let spinner = Bar::new(false, ProgressDrawTarget::hidden());
        assert_eq!(spinner.inner().length(), None);
        spinner.update(None, None, "x".into());
        assert_eq!(spinner.inner().position(), 0);
    }

    #[test]
    fn etas_read_at_a_glance() {
        assert_eq!(eta_text(Duration::from_millis(4_200)), "5s");
        assert_eq!(eta_text(Duration::from_secs(185)), "3m05s");
        assert_eq!(eta_text(Duration::from_secs(3720)), "1h02m");
    }

    #[test]
    fn the_templates_are_valid() {
        assert!(ProgressStyle::with_template(BOUNDED).is_ok());
        assert!(ProgressStyle::with_template(UNBOUNDED).is_ok());
    }
}
