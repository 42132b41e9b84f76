//! How the terminal views look: colour or not (`--color`, `NO_COLOR`, `TERM=dumb`, a
//! terminal or a pipe), and the few styles they use (✓/✗, red for failures, yellow for
//! warnings, dim for what is secondary). Files (`summary.txt`) are always plain.
//!
//! anstyle renders the escape codes and anstream decides "auto" (a terminal, `NO_COLOR`,
//! `CLICOLOR_FORCE`, `TERM=dumb`): clap already depends on both, so they cost nothing.

use anstyle::{AnsiColor, Effects};

/// `--color`: when to colour what is printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColorWhen {
    /// Never: plain text.
    Never,
    /// When the stream is a terminal, `NO_COLOR` is unset or empty and `TERM` is not
    /// `dumb`.
    #[default]
    Auto,
    /// Always, even into a pipe or a file (and despite `NO_COLOR`: the flag is the
    /// user's word for this one command).
    Always,
}

impl ColorWhen {
    pub const ALL: [ColorWhen; 3] = [ColorWhen::Never, ColorWhen::Auto, ColorWhen::Always];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ColorWhen::Never => "never",
            ColorWhen::Auto => "auto",
            ColorWhen::Always => "always",
        }
    }

    /// Whether to colour, `auto` answered by `auto` (the stream's own verdict).
    pub fn resolve(self, auto: impl FnOnce() -> bool) -> bool {
        match self {
            ColorWhen::Never => false,
            ColorWhen::Always => true,
            ColorWhen::Auto => auto(),
        }
    }
}

/// The styles of one output stream: all of them empty when it is plain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    color: bool,
}

impl Style {
    /// No escape codes at all (files, tests, pipes).
    pub const PLAIN: Style = Style { color: false };
    /// Escape codes whatever the stream.
    pub const COLOR: Style = Style { color: true };

    /// For what goes to stdout (the summary).
    pub fn stdout(when: ColorWhen) -> Style {
        Style {
            color: when.resolve(|| auto(&std::io::stdout())),
        }
    }

    /// For what goes to stderr (the live view).
    pub fn stderr(when: ColorWhen) -> Style {
        Style {
            color: when.resolve(|| auto(&std::io::stderr())),
        }
    }

    pub fn is_color(self) -> bool {
        self.color
    }

    fn paint(self, text: &str, style: anstyle::Style) -> String {
        if self.color {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    }

    /// Something that went well.
    pub fn good(self, text: &str) -> String {
        self.paint(text, AnsiColor::Green.on_default())
    }

    /// Failures and errors.
    pub fn bad(self, text: &str) -> String {
        self.paint(text, AnsiColor::Red.on_default() | Effects::BOLD)
    }

    /// Warnings.
    pub fn warn(self, text: &str) -> String {
        self.paint(text, AnsiColor::Yellow.on_default())
    }

    /// Secondary text: hints, examples, spec references.
    pub fn dim(self, text: &str) -> String {
        self.paint(text, anstyle::Style::new().effects(Effects::DIMMED))
    }

    /// Headings.
    pub fn bold(self, text: &str) -> String {
        self.paint(text, anstyle::Style::new().effects(Effects::BOLD))
    }

    /// A verdict mark: a green ✓ or a red ✗ (the marks stay in plain text).
    pub fn mark(self, passed: bool) -> String {
        if passed {
            self.good("✓")
        } else {
            self.bad("✗")
        }
    }

    /// A count, already padded, red when it is not zero.
    pub fn count(self, padded: &str, n: u64) -> String {
        if n > 0 {
            self.bad(padded)
        } else {
            padded.to_string()
        }
    }
}

/// anstream's verdict for a stream: a terminal that supports colour, `NO_COLOR` unset
/// or empty, or `CLICOLOR_FORCE` set.
fn auto<S: anstream::stream::RawStream>(stream: &S) -> bool {
    !matches!(
        anstream::AutoStream::choice(stream),
        anstream::ColorChoice::Never
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_has_no_escape_codes_and_color_has() {
        assert_eq!(Style::PLAIN.bad("x"), "x");
        assert_eq!(Style::PLAIN.mark(true), "✓");
        assert_eq!(Style::PLAIN.mark(false), "✗");
        assert!(Style::COLOR.bad("x").contains("\x1b["));
        assert!(Style::COLOR.mark(true).contains('✓'));
        assert_eq!(Style::COLOR.count("0", 0), "0");
        assert!(Style::COLOR.count("3", 3).contains("\x1b["));
    }

    #[test]
    fn the_flag_decides_before_the_stream() {
        assert!(!ColorWhen::Never.resolve(|| true));
        assert!(ColorWhen::Always.resolve(|| false));
        assert!(ColorWhen::Auto.resolve(|| true));
        assert!(!ColorWhen::Auto.resolve(|| false));
    }
}
