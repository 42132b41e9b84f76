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
    // Shared vocabulary: JSON-RPC and MCP words, the profile file's serde mirror, the
    // recorded trace's lines.
    &["protocol", "profile", "trace"],
    // HTTP/1.1 on a socket: a connection's read buffer and body framing, shared by the
    // Streamable HTTP client and the reference server.
    &["http1"],
    // Phases, failures, ids, samples and the collector: measurement vocabulary.
    &["metrics"],
    // Shards of a run (I/N, `--shard auto`, `--start-at`): vocabulary the plan's pools,
    // the fleet and the results use.
    &["shard"],
    &["plan"],
    // Trace → profile (`replay`, `profile --from-trace`): reads the trace and writes the
    // profile's mirror, checked against the plan's own rules (captures, phase names).
    &["replay"],
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
    // `inspect` reuses the root's way from the command line to a plan; `ceiling` runs
    // steps of the root's `run_slice`.
    &["inspect", "ceiling"],
    // `mcp-fleet record`: a proxy that writes what real clients and a server say; and the
    // commands that play its trace back (`replay` runs it, `profile --from-trace`).
    &["record"],
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

// The second rule of the house's shape: no file of `src/` is too long to read in one
// sitting (issue 32; DESIGN.md, habit 10). A file that grows past the limit is a concept
// asking for its own module.

/// Most lines of code a file of `src/` may have: its physical lines, test files
/// (`tests.rs`, `*_tests.rs`) not counted, nor an inline `#[cfg(test)] mod … { … }` block
/// at its end.
const MAX_CODE_LINES: usize = 500;

/// A file's lines of code: every physical line up to an inline `#[cfg(test)] mod … {`
/// block, which is taken to run to the end of the file (unit tests sit at the end of a
/// file). A `#[cfg(test)] mod tests;` declaration is code like any line.
fn code_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() != "#[cfg(test)]" {
            continue;
        }
        let item = lines[i + 1..]
            .iter()
            .find(|l| !l.trim_start().starts_with("#["));
        let opens_module = item.is_some_and(|l| {
            l.trim_end().ends_with('{') && l.split_whitespace().any(|w| w == "mod")
        });
        if opens_module {
            return i;
        }
    }
    lines.len()
}

/// Every production file of `src/` with its lines of code, as `src/…` paths.
fn code_line_counts() -> Vec<(String, usize)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    files
        .iter()
        .filter(|f| !is_test_file(f))
        .map(|f| {
            let rel = f.strip_prefix(root).expect("below the crate");
            let shown = rel.to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(f).expect("readable source");
            (shown, code_lines(&text))
        })
        .collect()
}

#[test]
fn no_file_has_more_than_500_lines_of_code() {
    let counts = code_line_counts();
    let over: Vec<String> = counts
        .iter()
        .filter(|(_, n)| *n > MAX_CODE_LINES)
        .map(|(file, n)| format!("{file}: {n} lines of code"))
        .collect();
    assert!(
        over.is_empty(),
        "files over {MAX_CODE_LINES} lines of code: split each by concept, and move its \
         unit tests to <module>/tests.rs (tests/README.md):\n  {}",
        over.join("\n  ")
    );
}

#[test]
fn the_line_count_sees_what_the_limit_is_about() {
    // Guards against a count that sees nothing and so passes everything.
    let text = "//! A module.\nfn f() {}\n\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\n#[allow(dead_code)]\nmod more {\n    #[test]\n    fn t() {}\n}\n";
    assert_eq!(
        code_lines(text),
        5,
        "up to the inline test block, declarations counted"
    );
    let helper = "fn f() {}\n#[cfg(test)]\nfn only_in_tests() {}\n";
    assert_eq!(
        code_lines(helper),
        3,
        "a test-only item is not a test block"
    );
    assert_eq!(
        code_lines(&"x\n".repeat(MAX_CODE_LINES + 1)),
        MAX_CODE_LINES + 1
    );
    let counts = code_line_counts();
    let lib = counts.iter().find(|(file, _)| file == "src/lib.rs");
    assert!(lib.is_some_and(|(_, n)| *n > 50), "src/lib.rs is counted");
    assert!(
        !counts.iter().any(|(file, _)| file.ends_with("/tests.rs")),
        "test files are not counted"
    );
}

/// The names `src/plan/mod.rs` re-exports for outsiders: `pub use sibling::{A, B as C};`
/// gives A and C.
fn plan_reexports(mod_rs: &str) -> BTreeSet<String> {
    let code = production_lines(mod_rs).join("\n");
    let mut names = BTreeSet::new();
    for statement in code.split(';') {
        let Some(at) = statement.find("pub use ") else {
            continue;
        };
        let path = &statement[at + "pub use ".len()..];
        let list = match path.find('{') {
            Some(open) => path[open + 1..].replace(['{', '}'], ""),
            None => path.to_string(),
        };
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let name = match item.split_once(" as ") {
                Some((_, alias)) => alias,
                None => item.rsplit("::").next().unwrap_or(item),
            };
            names.insert(name.trim().to_string());
        }
    }
    names
}

/// The first segments of the paths in `code` that reach `plan/` itself from a file whose
/// module path has `depth` parts: `super::X` from `plan/a.rs`, `super::super::X` from
/// `plan/a/b.rs`, and `crate::plan::X` from anywhere.
fn paths_into_plan(code: &str, depth: usize, out: &mut BTreeSet<String>) {
    let starts = |i: usize| {
        i == 0 || {
            let b = code.as_bytes()[i - 1];
            !(b.is_ascii_alphanumeric() || b == b'_' || b == b':')
        }
    };
    for (i, _) in code.match_indices("crate::plan::") {
        if starts(i) {
            first_segments(&code[i + "crate::plan::".len()..], out);
        }
    }
    for (i, _) in code.match_indices("super::") {
        if !starts(i) {
            continue;
        }
        let mut ups = 1;
        let mut tail = &code[i + "super::".len()..];
        while let Some(t) = tail.strip_prefix("super::") {
            ups += 1;
            tail = t;
        }
        if ups + 1 == depth {
            first_segments(tail, out);
        }
    }
}

#[test]
fn plan_siblings_import_siblings_not_the_re_exports() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mod_rs = std::fs::read_to_string(src.join("plan/mod.rs")).expect("plan/mod.rs");
    let reexports = plan_reexports(&mod_rs);
    assert!(
        reexports.contains("PlanError") && reexports.contains("Persona"),
        "the scanner finds plan/mod.rs's re-exports: {reexports:?}"
    );
    let mut files = Vec::new();
    rust_files(&src.join("plan"), &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("below src");
        if rel == Path::new("plan/mod.rs") || is_test_file(file) {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("readable source");
        let mut used = BTreeSet::new();
        for line in production_lines(&text) {
            paths_into_plan(line, module_path(rel).len(), &mut used);
        }
        for name in used.intersection(&reexports) {
            wrong.push(format!(
                "src/{} uses {name} through plan/mod.rs",
                rel.display()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "inside plan/, import a sibling's item from the sibling (super::error::PlanError); \
         mod.rs re-exports are for outsiders:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn the_re_export_scanner_sees_what_it_is_about() {
    let names = plan_reexports(
        "mod a;\n/// docs\npub use a::{B, C as D};\npub use e::F;\npub use g::{\n    H,\n    i::{J, K},\n};\n",
    );
    let want = ["B", "D", "F", "H", "J", "K"];
    assert_eq!(names, want.iter().map(|s| s.to_string()).collect());
    let mut used = BTreeSet::new();
    paths_into_plan("use super::{error::PlanError, Habits};", 2, &mut used);
    paths_into_plan("let p = super::super::Persona::default();", 3, &mut used);
    paths_into_plan("use crate::plan::Target;", 3, &mut used);
    // Climbs past plan/ to the crate root: not a path into plan/.
    paths_into_plan("use super::super::report::X;", 2, &mut used);
    let want = ["Habits", "Persona", "Target", "error"];
    assert_eq!(used, want.iter().map(|s| s.to_string()).collect());
}
