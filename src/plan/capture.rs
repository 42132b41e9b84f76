//! `capture = { NAME = … }`: values a step takes from its result into the session's
//! variables, for later steps' `${NAME}`.

/// Where in a result a value is.
#[derive(Debug, Clone)]
pub enum Source {
    /// Path segments into `structuredContent` (else the JSON of the text content);
    /// `None` is `[*]`, any element of an array.
    Path(Vec<Option<String>>),
    /// Over the text content: the first group, else the whole match.
    Regex(regex::Regex),
}

/// Which of several matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    First,
    Random,
}

#[derive(Debug, Clone)]
pub struct Capture {
    pub var: String,
    pub source: Source,
    pub pick: Pick,
}

impl PartialEq for Capture {
    fn eq(&self, other: &Capture) -> bool {
        let same_source = match (&self.source, &other.source) {
            (Source::Path(a), Source::Path(b)) => a == b,
            (Source::Regex(a), Source::Regex(b)) => a.as_str() == b.as_str(),
            _ => false,
        };
        self.var == other.var && self.pick == other.pick && same_source
    }
}
