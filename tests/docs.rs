//! The documentation's promises, checked offline: every relative link in README.md and
//! docs/ leads to a file (and, with `#anchor`, to a heading) that exists, and every
//! `mcp-fleet …` command shown in a shell block parses with the program's own command
//! line; `run` and `validate` commands also resolve their profile to a plan. Nothing is
//! started and nothing connects: a command that parses and plans is one a reader can run.

use clap::Parser;
use mcp_fleet::cli::{Cli, Command};
use mcp_fleet::plan::{Plan, Source};
use mcp_fleet::shard::{Shard, StartAt};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The repository's root: integration tests run there, and every path in the docs is
/// relative to a file in it.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/, as (path, text): the pages whose
/// commands are checked.
fn documents() -> Vec<(PathBuf, String)> {
    markdown_under(&["docs"])
}

/// The documents, and the measured figures with their history: the pages whose links
/// are checked (the figures cite results folders that git does not keep; a link to one
/// would be broken on every other machine).
fn linked_documents() -> Vec<(PathBuf, String)> {
    markdown_under(&["docs", "results"])
}

/// README.md and every Markdown file under `folders`, as (path, text).
fn markdown_under(folders: &[&str]) -> Vec<(PathBuf, String)> {
    let mut paths = vec![root().join("README.md")];
    let mut folders: Vec<PathBuf> = folders.iter().map(|f| root().join(f)).collect();
    while let Some(folder) = folders.pop() {
        let entries =
            std::fs::read_dir(&folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
        for entry in entries {
            let path = entry.expect("a readable folder entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .collect()
}

/// A path as the repository names it, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A fenced code block: its info string (`sh`, `console`, `toml` …) and its lines.
struct Block {
    info: String,
    first_line: usize,
    lines: Vec<String>,
}

/// A Markdown text split into its prose lines (with their numbers) and its fenced blocks.
struct Parsed {
    prose: Vec<(usize, String)>,
    blocks: Vec<Block>,
}

fn parse_markdown(text: &str) -> Parsed {
    let mut prose = Vec::new();
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        let fence = line.trim_start().starts_with("```");
        match open.take() {
            Some(block) if fence => blocks.push(block),
            Some(mut block) => {
                block.lines.push(line.to_string());
                open = Some(block);
            }
            None if fence => {
                open = Some(Block {
                    info: line.trim_start().trim_start_matches('`').trim().to_string(),
                    first_line: number + 1,
                    lines: Vec::new(),
                })
            }
            None => prose.push((number, line.to_string())),
        }
    }
    assert!(open.is_none(), "a fenced code block is not closed");
    Parsed { prose, blocks }
}

/// A line without its inline code spans, where brackets are code, not links.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The targets of the inline links and images `[text](target)` of a prose line.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut targets = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        targets.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    targets
}

/// A heading's anchor by GitHub's rules: the text as shown (code marks and link targets
/// gone), lower case, spaces to hyphens, punctuation other than `-` and `_` dropped.
fn slug(heading: &str) -> String {
    let mut shown = String::new();
    let mut rest = heading;
    // `[text](target)` shows as `text`.
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|c| open + c) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|e| close + e) else {
            break;
        };
        shown.push_str(&rest[..open]);
        shown.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    shown.push_str(rest);
    shown
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every anchor a Markdown text's headings make, repeated names numbered as GitHub does
/// (`name`, `name-1`, `name-2` …).
fn anchors(text: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (_, line) in parse_markdown(text).prose {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let n = seen.entry(base.clone()).or_insert(0);
        out.push(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// Whether git ignores `path` (untracked, and a `.gitignore` rule covers it): the file is
/// here but a fresh clone would not have it (results folders, a page not yet added).
/// None when git cannot tell (no git, not a checkout).
fn ignored_by_git(path: &Path) -> Option<bool> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root())
        .args(["check-ignore", "--quiet"])
        .arg(path)
        .output()
        .ok()?;
    match out.status.code() {
        Some(0) => Some(true),
        Some(1) => Some(false),
        _ => None,
    }
}

/// What is wrong with the relative links of `text` (a file at `path`), one line each.
fn broken_links(path: &Path, text: &str) -> Vec<String> {
    let folder = path.parent().expect("a file in a folder");
    let mut broken = Vec::new();
    for (number, line) in parse_markdown(text).prose {
        for target in link_targets(&line) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let where_ = format!("{}:{number}: ({target})", shown(path));
            if file.is_empty() {
                // An anchor in this very text.
                if !anchors(text).iter().any(|h| Some(h.as_str()) == anchor) {
                    broken.push(format!(
                        "{where_}: no heading makes #{}",
                        anchor.unwrap_or("")
                    ));
                }
                continue;
            }
            let linked = folder.join(file);
            let Ok(linked) = linked.canonicalize() else {
                broken.push(format!("{where_}: no such file or folder"));
                continue;
            };
            if !linked.starts_with(root()) || linked.starts_with(root().join("target")) {
                broken.push(format!("{where_}: outside the repository's files"));
                continue;
            }
            if ignored_by_git(&linked) == Some(true) {
                broken.push(format!("{where_}: ignored by git, so not in a fresh clone"));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            let headings = match std::fs::read_to_string(&linked) {
                Ok(text) if linked.extension().is_some_and(|e| e == "md") => anchors(&text),
                _ => {
                    broken.push(format!(
                        "{where_}: an anchor into a file that is not Markdown"
                    ));
                    continue;
                }
            };
            if !headings.iter().any(|h| h == anchor) {
                broken.push(format!("{where_}: no heading makes #{anchor}"));
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    let mut links = 0;
    for (path, text) in linked_documents() {
        links += parse_markdown(&text)
            .prose
            .iter()
            .map(|(_, l)| link_targets(l).len())
            .sum::<usize>();
        broken.extend(broken_links(&path, &text));
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // README's contents list alone holds more; zero would mean the parser sees nothing.
    assert!(
        links >= 20,
        "only {links} links found: is the link parser broken?"
    );
}

/// A shell line cut into its commands at `&&`, `||`, `;` and `|` (outside quotes), each
/// without a `# comment`, a redirection (`>`) or a trailing `&`.
fn shell_commands(line: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut cut = false; // after `>`, `&` or `#`: the rest of this command is not its words
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') if !cut => {
                quote = Some(c);
                current.push(c);
            }
            (None, '#') if current.is_empty() || current.ends_with(char::is_whitespace) => break,
            (None, ';') => {
                commands.push(std::mem::take(&mut current));
                cut = false;
            }
            (None, '|') => {
                chars.next_if_eq(&'|');
                commands.push(std::mem::take(&mut current));
                cut = false;
            }
            (None, '&') if chars.peek() == Some(&'&') => {
                chars.next();
                commands.push(std::mem::take(&mut current));
                cut = false;
            }
            (None, '>' | '&') => cut = true,
            (None, c) if !cut => current.push(c),
            (None, _) => {}
        }
    }
    commands.push(current);
    commands
        .into_iter()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

/// The command lines of a shell block: `\` continuations joined; in a `console` block only
/// the lines after a `$ ` prompt (the others are output).
fn block_lines(block: &Block) -> Vec<(usize, String)> {
    let console = block.info == "console";
    let mut lines = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in block.lines.iter().enumerate() {
        let number = block.first_line + i;
        let (start, text) = match pending.take() {
            Some((start, before)) => (start, format!("{before} {}", raw.trim())),
            None if console => match raw.trim_start().strip_prefix("$ ") {
                Some(command) => (number, command.to_string()),
                None => continue,
            },
            None => (number, raw.trim().to_string()),
        };
        match text.strip_suffix('\\') {
            Some(open) => pending = Some((start, open.trim_end().to_string())),
            None => lines.push((start, text)),
        }
    }
    lines.extend(pending);
    lines
}

/// Shell values the docs use, and what stands for them here (a process id, a time).
const SHELL_VALUES: &[(&str, &str)] = &[("$!", "4242"), ("$at", "2026-12-04T12:00:00Z")];

/// What became of one command line.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// Parsed, and its profile (if any) resolved to a plan.
    Checked,
    /// Not checkable as written; the reason is counted.
    Skipped(&'static str),
}

/// The arguments after the program of an `mcp-fleet …` (or `cargo run --release -- …`)
/// command, or None for any other command.
fn fleet_arguments(command: &str) -> Option<&str> {
    let words = command.trim_start();
    if let Some(rest) = words.strip_prefix("cargo run --release --") {
        return Some(rest);
    }
    if words == "mcp-fleet" {
        return Some("");
    }
    words.strip_prefix("mcp-fleet ")
}

/// `<owner>`, `<run>`: a word in angle brackets stands for something the reader fills in
/// (a `<` in a threshold expression does not).
fn has_angle_placeholder(line: &str) -> bool {
    line.match_indices('<').any(|(at, _)| {
        let word: String = line[at + 1..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_'))
            .collect();
        !word.is_empty() && line[at + 1 + word.len()..].starts_with('>')
    })
}

/// A `$` the shell would expand (outside single quotes, where mcp-fleet itself reads
/// `${VAR}`).
fn has_shell_expansion(line: &str) -> bool {
    let mut single = false;
    line.chars().any(|c| {
        if c == '\'' {
            single = !single;
        }
        c == '$' && !single
    })
}

/// Parse one `mcp-fleet` command the way the program does, then plan what it would run.
fn check_command(arguments: &str) -> Result<Verdict, String> {
    if arguments.contains('…') || has_angle_placeholder(arguments) {
        return Ok(Verdict::Skipped("a placeholder (… or <…>)"));
    }
    let mut line = arguments.to_string();
    for (shell, value) in SHELL_VALUES {
        line = line
            .replace(&format!("\"{shell}\""), value)
            .replace(shell, value);
    }
    if has_shell_expansion(&line) {
        return Ok(Verdict::Skipped("a shell expansion"));
    }
    let words = shell_words::split(&line).map_err(|e| format!("not a shell line: {e}"))?;
    let cli = match Cli::try_parse_from(std::iter::once("mcp-fleet".to_string()).chain(words)) {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => return Ok(Verdict::Checked),
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayVersion => {
            return Ok(Verdict::Checked)
        }
        Err(e) => return Err(e.render().to_string()),
    };
    match cli.command {
        Command::Run(args) => {
            if let Some(profile) = &args.profile {
                profile_exists(profile)?;
            }
            // The steps `run` takes before it starts anything: the shard, the start time,
            // the plan.
            if let Some(shard) = &args.shard {
                Shard::parse(shard).map_err(|e| format!("--shard {shard}: {e}"))?;
            }
            if let Some(at) = &args.start_at {
                StartAt::parse(at, SystemTime::now())
                    .map_err(|e| format!("--start-at {at}: {e}"))?;
            }
            let source = Source::choose(args.profile.as_deref(), &args.overrides);
            Plan::from_source(&source, &args.overrides)
                .map_err(|e| format!("does not plan: {e}"))?;
        }
        Command::Validate(args) => {
            profile_exists(&args.profile)?;
            mcp_fleet::validate(&args).map_err(|e| format!("does not validate: {e:#}"))?;
        }
        Command::Inspect(args) => {
            if let Some(profile) = &args.profile {
                profile_exists(profile)?;
            }
        }
        _ => {}
    }
    Ok(Verdict::Checked)
}

/// A profile a command names must be in the repository (commands run from its root).
fn profile_exists(profile: &Path) -> Result<(), String> {
    match root().join(profile).is_file() {
        true => Ok(()),
        false => Err(format!(
            "{}: no such profile in the repository",
            profile.display()
        )),
    }
}

/// Every `mcp-fleet` command of a document's shell blocks, with its line and verdict.
fn commands_of(path: &Path, text: &str) -> Vec<(String, Result<Verdict, String>)> {
    let mut out = Vec::new();
    for block in parse_markdown(text).blocks {
        if !matches!(block.info.as_str(), "sh" | "console" | "bash" | "shell") {
            continue;
        }
        for (number, line) in block_lines(&block) {
            for command in shell_commands(&line) {
                if let Some(arguments) = fleet_arguments(&command) {
                    let at = format!("{}:{number}: {command}", shown(path));
                    out.push((at, check_command(arguments)));
                }
            }
        }
    }
    out
}

#[test]
fn every_command_shown_parses_and_plans() {
    let mut failed = Vec::new();
    let mut checked = 0;
    let mut skipped: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    for (path, text) in documents() {
        for (at, verdict) in commands_of(&path, &text) {
            match verdict {
                Ok(Verdict::Checked) => checked += 1,
                Ok(Verdict::Skipped(reason)) => skipped.entry(reason).or_default().push(at),
                Err(e) => failed.push(format!("{at}\n    {}", e.trim().replace('\n', "\n    "))),
            }
        }
    }
    for (reason, lines) in &skipped {
        eprintln!("skipped, {reason}: {}", lines.len());
        for line in lines {
            eprintln!("  {line}");
        }
    }
    eprintln!("{checked} commands parsed and planned");
    assert!(
        failed.is_empty(),
        "commands that do not run as shown:\n{}",
        failed.join("\n")
    );
    // Placeholders stay rare: a command a reader cannot paste is a command nobody checks.
    let skips: usize = skipped.values().map(Vec::len).sum();
    assert!(
        skips <= 5,
        "{skips} commands skipped; write them as commands that run"
    );
    assert!(
        checked >= 40,
        "only {checked} commands found: is the extractor broken?"
    );
}

// The checks above must be able to fail: each is shown a broken case here.

#[test]
fn a_broken_link_and_a_missing_heading_are_reported() {
    let path = root().join("README.md");
    let text = "# Title\n\nSee [gone](docs/no-such-page.md), [here](#title), [there](#nowhere).\n\
                ```sh\n[not a link](in-code.md)\n```\n";
    let broken = broken_links(&path, text);
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(broken[0].contains("no-such-page.md") && broken[1].contains("#nowhere"));
}

#[test]
fn an_unknown_flag_and_a_missing_profile_are_refused() {
    let text = "```sh\nmcp-fleet run --no-such-flag 3   # a comment\n\
                mcp-fleet validate profiles/no-such.toml\n\
                mcp-fleet run profiles/quickstart.toml --clients 2 | head -2\n```\n";
    let verdicts = commands_of(&root().join("README.md"), text);
    assert_eq!(verdicts.len(), 3, "{verdicts:?}");
    assert!(verdicts[0]
        .1
        .as_ref()
        .is_err_and(|e| e.contains("--no-such-flag")));
    assert!(verdicts[1]
        .1
        .as_ref()
        .is_err_and(|e| e.contains("no such profile")));
    assert_eq!(verdicts[2].1, Ok(Verdict::Checked));
}

#[test]
fn shell_lines_are_cut_into_commands() {
    assert_eq!(
        shell_commands("mkdir -p ~/.zfunc && mcp-fleet completions zsh > ~/.zfunc/_mcp-fleet"),
        ["mkdir -p ~/.zfunc", "mcp-fleet completions zsh"]
    );
    assert_eq!(
        shell_commands("mcp-fleet serve --http 127.0.0.1:3000 &   # in the background"),
        ["mcp-fleet serve --http 127.0.0.1:3000"]
    );
    assert_eq!(
        shell_commands("mcp-fleet run --threshold 'p99(x) < 5ms' --stdio \"a | b\"; echo"),
        [
            "mcp-fleet run --threshold 'p99(x) < 5ms' --stdio \"a | b\"",
            "echo"
        ]
    );
    let block = Block {
        info: "console".into(),
        first_line: 1,
        lines: vec![
            "$ mcp-fleet inspect \\".into(),
            "    --call echo".into(),
            "mcp-fleet 0.2.0 · output".into(),
        ],
    };
    assert_eq!(
        block_lines(&block),
        [(1, "mcp-fleet inspect --call echo".to_string())]
    );
}

#[test]
fn anchors_follow_github() {
    assert_eq!(
        slug(" Buggy clients: `faults = [...]`"),
        "buggy-clients-faults--"
    );
    assert_eq!(
        slug(" Scaling out: shards, one exact merged report"),
        "scaling-out-shards-one-exact-merged-report"
    );
    assert_eq!(slug(" See [the plan](plan.md) — now"), "see-the-plan--now");
    assert_eq!(
        anchors("# A\n## A\n```\n# not a heading\n```\n## A"),
        ["a", "a-1", "a-2"]
    );
}
