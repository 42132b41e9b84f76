//! Strings: free text of the schema's length, values of a `format`, and text matching
//! a `pattern` (walked from the regex's syntax tree, checked with the compiled regex;
//! both kept per thread by pattern, so the hot path compiles nothing twice).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use rand::Rng;
use regex_syntax::hir::{Class, Hir, HirKind};
use serde_json::Value;

/// Patterns remembered per thread; past this many the cache starts over.
const CACHE_SIZE: usize = 256;

/// Tries to meet a pattern and the length bounds together.
const ATTEMPTS: usize = 10;

/// A compiled `pattern`: the tree to walk and the regex to check with (either is None
/// when our regex dialect cannot read it: lookaround, backreferences).
#[derive(Debug)]
pub(super) struct Pattern {
    hir: Option<Hir>,
    regex: Option<regex::Regex>,
}

thread_local! {
    static PATTERNS: RefCell<HashMap<String, Rc<Pattern>>> = RefCell::new(HashMap::new());
}

pub(super) fn pattern(source: &str) -> Rc<Pattern> {
    PATTERNS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(p) = cache.get(source) {
            return Rc::clone(p);
        }
        if cache.len() >= CACHE_SIZE {
            cache.clear();
        }
        let p = Rc::new(Pattern {
            hir: regex_syntax::ParserBuilder::new()
                .build()
                .parse(source)
                .ok(),
            regex: regex::Regex::new(source).ok(),
        });
        cache.insert(source.to_string(), Rc::clone(&p));
        p
    })
}

/// Whether `text` matches `pattern` (unanchored, as JSON Schema means it); None when the
/// pattern is beyond our regex dialect.
pub(super) fn matches(source: &str, text: &str) -> Option<bool> {
    pattern(source).regex.as_ref().map(|r| r.is_match(text))
}

/// Length bounds of a string schema, in characters; without a minimum at least one.
fn lengths(schema: &Value) -> (usize, usize) {
    let get = |k: &str| {
        schema
            .get(k)
            .and_then(Value::as_u64)
            .map(|n| n.min(4096) as usize)
    };
    let min = get("minLength").unwrap_or(1);
    let max = get("maxLength").unwrap_or(min.max(12)).max(min);
    // A degenerate empty string only when nothing else is allowed.
    let min = if min == 0 && max > 0 { 1 } else { min };
    (min, max)
}

pub(super) fn string(schema: &Value, rng: &mut impl Rng) -> Value {
    let (min, max) = lengths(schema);
    if let Some(p) = schema.get("pattern").and_then(Value::as_str) {
        // The pattern sets the length unless the schema bounds it.
        let max = schema.get("maxLength").map_or(usize::MAX, |_| max);
        if let Some(text) = patterned(&pattern(p), min, max, rng) {
            return Value::String(text);
        }
    }
    if let Some(f) = schema.get("format").and_then(Value::as_str) {
        if let Some(text) = formatted(f, rng) {
            let n = text.chars().count() as u64;
            let bound = |k: &str| schema.get(k).and_then(Value::as_u64);
            if bound("minLength").is_none_or(|m| n >= m)
                && bound("maxLength").is_none_or(|m| n <= m)
            {
                return Value::String(text);
            }
        }
    }
    Value::String(plain(min, max, rng))
}

fn plain(min: usize, max: usize, rng: &mut impl Rng) -> String {
    let len = rng.random_range(min..=max.min(min + 16));
    (0..len)
        .map(|_| char::from(b'a' + rng.random_range(0..26u8)))
        .collect()
}

/// Text that matches `p` with a length in min..=max: walked with fewer extra repeats on
/// each try, padded at the end (the match is unanchored) when short. None when the
/// pattern is unreadable; the last try when none met everything.
fn patterned(p: &Pattern, min: usize, max: usize, rng: &mut impl Rng) -> Option<String> {
    let (hir, regex) = (p.hir.as_ref()?, p.regex.as_ref()?);
    let mut last = None;
    for attempt in 0..ATTEMPTS {
        let extra = (ATTEMPTS - 1 - attempt).min(6) as u32;
        let mut text = String::new();
        walk(hir, extra, rng, &mut text, 0);
        let mut n = text.chars().count();
        if n < min {
            let pad = plain(min - n, min - n, rng);
            let (front, back) = (format!("{pad}{text}"), format!("{text}{pad}"));
            if regex.is_match(&back) {
                text = back;
            } else if regex.is_match(&front) {
                text = front;
            }
            n = text.chars().count();
        }
        if n >= min && n <= max && regex.is_match(&text) {
            return Some(text);
        }
        last = Some(text);
    }
    last
}

/// Appends a string the tree matches: `extra` more repeats at most past each minimum.
fn walk(hir: &Hir, extra: u32, rng: &mut impl Rng, out: &mut String, depth: usize) {
    if depth > 64 || out.len() > 8192 {
        return;
    }
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(lit) => out.push_str(&String::from_utf8_lossy(&lit.0)),
        HirKind::Class(Class::Unicode(class)) => {
            let ranges: Vec<(u32, u32)> = class
                .ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect();
            // Printable ASCII where the class allows it (\d is [0-9], . is not a control).
            let ascii: Vec<(u32, u32)> = ranges
                .iter()
                .filter_map(|&(a, b)| {
                    let (a, b) = (a.max(0x20), b.min(0x7e));
                    (a <= b).then_some((a, b))
                })
                .collect();
            let pool = if ascii.is_empty() { &ranges } else { &ascii };
            if let Some(c) = pick_char(pool, rng) {
                out.push(c);
            }
        }
        HirKind::Class(Class::Bytes(class)) => {
            let ranges: Vec<(u32, u32)> = class
                .ranges()
                .iter()
                .filter_map(|r| {
                    let (a, b) = (u32::from(r.start()).max(0x20), u32::from(r.end()).min(0x7e));
                    (a <= b).then_some((a, b))
                })
                .collect();
            if let Some(c) = pick_char(&ranges, rng) {
                out.push(c);
            }
        }
        HirKind::Repetition(rep) => {
            let hi = rep
                .max
                .unwrap_or(u32::MAX)
                .min(rep.min.saturating_add(extra));
            let count = rng.random_range(rep.min..=hi.max(rep.min)).min(1000);
            for _ in 0..count {
                walk(&rep.sub, extra, rng, out, depth + 1);
            }
        }
        HirKind::Capture(cap) => walk(&cap.sub, extra, rng, out, depth + 1),
        HirKind::Concat(parts) => {
            for part in parts {
                walk(part, extra, rng, out, depth + 1);
            }
        }
        HirKind::Alternation(options) => {
            if !options.is_empty() {
                let pick = &options[rng.random_range(0..options.len())];
                walk(pick, extra, rng, out, depth + 1);
            }
        }
    }
}

fn pick_char(ranges: &[(u32, u32)], rng: &mut impl Rng) -> Option<char> {
    if ranges.is_empty() {
        return None;
    }
    let (a, b) = ranges[rng.random_range(0..ranges.len())];
    let c = rng.random_range(a..=b);
    char::from_u32(c).or_else(|| char::from_u32(a))
}

/// A seeded value of a string `format` (JSON Schema's formats), or None for formats we
/// do not know (then the string is free text).
pub(super) fn formatted(format: &str, rng: &mut impl Rng) -> Option<String> {
    let n: u32 = rng.random_range(1..10_000);
    let text = match format {
        "date-time" => {
            let d = date(rng);
            format!("{d}T{}", time(rng))
        }
        "date" => date(rng),
        "time" => time(rng),
        "email" | "idn-email" => format!("fleet{n}@example.com"),
        "uri" | "url" | "iri" => format!("https://example.com/fleet/{n}"),
        "uri-reference" | "iri-reference" => format!("/fleet/{n}"),
        "uri-template" => "https://example.com/fleet/{id}".to_string(),
        "uuid" => {
            let b: [u16; 8] = std::array::from_fn(|_| rng.random());
            format!(
                "{:04x}{:04x}-{:04x}-4{:03x}-{:04x}-{:04x}{:04x}{:04x}",
                b[0],
                b[1],
                b[2],
                b[3] & 0x0fff,
                (b[4] & 0x3fff) | 0x8000,
                b[5],
                b[6],
                b[7]
            )
        }
        "ipv4" => format!("10.{}.{}.{}", n % 256, n / 256, rng.random_range(1..255u8)),
        "ipv6" => format!("fd00::{:x}:{:x}", n, rng.random::<u16>()),
        "hostname" | "idn-hostname" => format!("host{n}.example.com"),
        "duration" => match rng.random_range(0..3) {
            0 => format!("PT{n}S"),
            1 => format!("P{}D", n % 30 + 1),
            _ => format!("PT{}H{}M", n % 24, n % 60),
        },
        "json-pointer" => format!("/fleet/{n}"),
        "relative-json-pointer" => format!("0/fleet{n}"),
        "regex" => "^[a-z]+$".to_string(),
        _ => return None,
    };
    Some(text)
}

fn date(rng: &mut impl Rng) -> String {
    format!(
        "{}-{:02}-{:02}",
        rng.random_range(2000..2040u32),
        rng.random_range(1..=12u32),
        rng.random_range(1..=28u32)
    )
}

fn time(rng: &mut impl Rng) -> String {
    let offset = match rng.random_range(0..3) {
        0 => "+02:00",
        _ => "Z",
    };
    format!(
        "{:02}:{:02}:{:02}{offset}",
        rng.random_range(0..24u32),
        rng.random_range(0..60u32),
        rng.random_range(0..60u32)
    )
}
