//! Architecture test: the modules of `src/` use each other only down the pipeline.
//!
//! It reads every `src/**/*.rs` (not `main.rs`, the binary), finds the top-level module
//! each path names (`crate::plan::…`, `crate::{plan, fleet}`, `super::…` that climbs to the
//! crate root, and in `lib.rs` a bare `plan::…`), and checks each edge against the table.
//!
//! Test code is not counted, so unit tests may use the reference server as a peer: files
//! named `tests.rs` or `*_tests.rs`, a `#[cfg(test)]` item that is a `mod …;` declaration,
//! and a `#[cfg(test)] mod … {` block, which is taken to run to the end of its file (unit
//! tests sit at the end of a file). Comments are not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The pipeline, bottom to top. A module may use the modules of any lower layer, never
/// one of its own layer or above.
const LAYERS: &[&[&str]] = &[
    // Printing to stdout and stderr that stops quietly on a closed pipe: everything that
    // prints uses it.
    &["console"],
    // What may be shown of values that carry secrets (URLs, header values): everything
    // that renders them uses it.
    &["redact"],
    // Shared vocabulary: JSON-RPC and MCP words, the profile file's serde mirror.
    &["protocol", "profile"],
    // HTTP/1.1 on a socket: a connection's read buffer and body framing, shared by the
    // Streamable HTTP client and the reference server.
    &["http1"],
    // Phases, failures, ids, samples and the collector: measurement vocabulary.
    &["metrics"],
    // Shards of a run (I/N, `--shard auto`, `--start-at`): vocabulary the plan's pools,
    // the fleet and the results use.
    &["shard"],
    &["plan"],
    &["transport"],
    // The resource watcher: the server's processes (the stdio children the transport
    // lists), cgroup and /metrics, and the generator itself.
    &["watch"],
    &["conformance"],
    &["session"],
    &["client"],
    // The results contract: the shape of `summary.json`, which every report reads.
    &["summary"],
    // The fleet, and what a run leaves behind: neither uses the other (an output never
    // imports the scheduler; what both need, the live counters, is in `metrics`).
    &["fleet", "report"],
    // The edge: command line, the targets a run starts (the reference server), and why a
    // run stops (signals, the fleet's end).
    &["cli", "targets", "stop"],
    // What watches a run: collector, live views, signal handlers.
    &["instruments"],
    // The exact report of a sharded run: the raw state every run writes, read back and
    // added (`mcp-fleet merge`).
    &["merge"],
    // The results of a run, written at its end and at every checkpoint.
    &["results"],
    // `run --processes`: local shard processes, then their merge.
    &["processes"],
    // The crate root: `run`, `serve`, `validate`, `report`, `compare`.
    &["lib"],
    // `inspect` reuses the root's way from the command line to a plan.
    &["inspect"],
];

/// The reference server is its own stack beside the pipeline: it uses only these…
const SERVER_USES: &[&str] = &["protocol", "http1"];
/// …and only the edge starts it.
const SERVER_USED_BY: &[&str] = &["cli", "targets", "lib"];

/// Edges that another change of the same reshaping step removes (the threshold grammar
/// and the load curves move into `plan/`). Delete this list when it has landed.
const TEMPORARILY_ALLOWED: &[(&str, &str)] = &[];

/// Upward edges known and not yet fixed, each with where it should go. Outside the files
/// of the change that wrote this test; the list should only shrink.
const KNOWN_UPWARD: &[(&str, &str)] = &[];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Whether `from` may use `to`.
fn allowed(from: &str, to: &str) -> bool {
    if from == to || TEMPORARILY_ALLOWED.contains(&(from, to)) || KNOWN_UPWARD.contains(&(from, to))
    {
        return true;
    }
    if from == "server" {
        return SERVER_USES.contains(&to);
    }
    if to == "server" {
        return SERVER_USED_BY.contains(&from);
    }
    match (layer_of(from), layer_of(to)) {
        (Some(f), Some(t)) => t < f,
        _ => false,
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file below `src/`: `src/server/http/tests.rs` → server, http, tests.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

fn is_test_file(path: &Path) -> bool {
    let name = path.file_stem().map(|s| s.to_string_lossy().to_string());
    name.is_some_and(|n| n == "tests" || n.ends_with("_tests"))
}

/// The file's code without comments and without test code (see the module doc).
fn production_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            // Skip further attributes, then the item.
            let item = lines.by_ref().find(|l| !l.trim_start().starts_with("#["));
            match item {
                Some(item) if item.trim_end().ends_with(';') => continue,
                _ => break,
            }
        }
        let code = line.split("//").next().unwrap_or_default();
        out.push(code);
    }
    out
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first segments of the paths that start at the crate root in `code`.
fn root_paths(code: &str, depth: usize, is_root: bool, out: &mut BTreeSet<String>) {
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if !boundary || !bytes[i].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let rest = &code[i..];
        let word = ident_at(rest);
        let after = &rest[word.len()..];
        if word == "crate" && after.starts_with("::") {
            first_segments(&after[2..], out);
        } else if word == "super" && after.starts_with("::") {
            // Climb: `super::super::x` from depth 2 reaches the root.
            let mut ups = 1;
            let mut tail = &after[2..];
            while let Some(t) = tail.strip_prefix("super::") {
                ups += 1;
                tail = t;
            }
            if ups >= depth {
                first_segments(tail, out);
            }
            i += word.len() + 2 + tail.as_ptr() as usize - after[2..].as_ptr() as usize;
            continue;
        } else if is_root && after.starts_with("::") && bytes.get(i.wrapping_sub(1)) != Some(&b':')
        {
            out.insert(word.to_string());
        }
        i += word.len().max(1);
    }
}

/// `plan::X` → plan; `{plan, fleet::Y}` → plan, fleet.
fn first_segments(path: &str, out: &mut BTreeSet<String>) {
    if let Some(group) = path.strip_prefix('{') {
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    out.insert(ident_at(group[start..i].trim()).to_string());
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.insert(ident_at(group[start..i].trim()).to_string());
                    start = i + 1;
                }
                _ => {}
            }
        }
    } else {
        out.insert(ident_at(path).to_string());
    }
}

/// Every top-level module's uses of the others: module → (used module → first file).
fn edges() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.strip_prefix(&src).ok())
        .filter_map(|rel| rel.iter().next())
        .map(|first| first.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("below src");
        if rel == Path::new("main.rs") || is_test_file(file) {
            continue;
        }
        let path = module_path(rel);
        let from = path.first().cloned().unwrap_or_else(|| "lib".to_string());
        let text = std::fs::read_to_string(file).expect("readable source");
        let mut used = BTreeSet::new();
        for line in production_lines(&text) {
            root_paths(line, path.len(), path.is_empty(), &mut used);
        }
        for to in used {
            // A root path that names no module is an item of the crate root.
            let to = if modules.contains(&to) {
                to
            } else {
                "lib".to_string()
            };
            if to != from && to != "main" {
                let shown = rel.display().to_string();
                edges
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert(shown);
            }
        }
    }
    edges
}

#[test]
fn modules_use_only_what_stands_below_them() {
    let mut wrong = Vec::new();
    for (from, tos) in edges() {
        for (to, file) in tos {
            if !allowed(&from, &to) {
                wrong.push(format!("{from} uses {to} (first in src/{file})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that run back up the pipeline:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn every_module_has_a_place_in_the_table() {
    for from in edges().keys() {
        assert!(
            from == "server" || layer_of(from).is_some(),
            "module `{from}` is in no layer: add it to LAYERS"
        );
    }
}

#[test]
fn the_scanner_sees_what_the_rules_are_about() {
    // Guards against a scanner that finds nothing and so passes everything.
    let mut found = BTreeSet::new();
    root_paths("use crate::{plan, fleet::X};", 1, false, &mut found);
    root_paths("let x = crate::report::text::f();", 1, false, &mut found);
    root_paths("use super::super::session::Y;", 2, false, &mut found);
    root_paths("use super::sibling::Z;", 2, false, &mut found);
    root_paths("let t = targets::resolve(&p);", 0, true, &mut found);
    for line in production_lines("let u = a::b::c(); // crate::comment") {
        root_paths(line, 1, false, &mut found);
    }
    let want = ["fleet", "plan", "report", "session", "targets"];
    assert_eq!(found, want.iter().map(|s| s.to_string()).collect());
    let lines = production_lines("use crate::a;\n#[cfg(test)]\nmod tests;\nuse crate::b;\n#[cfg(test)]\nmod t {\nuse crate::c;\n}\n");
    assert_eq!(lines, ["use crate::a;", "use crate::b;"]);
    assert!(
        !allowed("fleet", "report"),
        "the live view must stay out of fleet"
    );
    assert!(!allowed("metrics", "conformance"));
    assert!(!allowed("server", "metrics"));
    assert!(!allowed("session", "server"));
    assert!(!allowed("report", "fleet"));
    let edges = edges();
    assert!(
        edges["report"].contains_key("metrics"),
        "report uses metrics"
    );
    assert!(edges["lib"].contains_key("fleet"), "lib.rs uses fleet");
}
