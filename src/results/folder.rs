//! The results folder a run writes into, chosen before anything is written: never
//! another run's folder mixed with this one's files. `--out DIR` must be new, empty, or a
//! folder an earlier run wrote (whose files are then removed, and the run says so); a
//! folder holding anything else is refused. Without `--out` the folder is
//! `results/<name>-<time>`, with `-2`, `-3` … when that name is taken (runs started in the
//! same second): created exclusively, so two runs started at once never share one.

use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What an earlier run left in a folder it wrote: the files a run writes, each by name,
/// the folders and logs of `--processes` shards, and a ceiling search's `ceiling.json`
/// and `steps/` of run folders.
fn written_by_a_run(entry: &Path) -> bool {
    let Some(name) = entry.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    const FILES: [&str; 9] = [
        "ceiling.json",
        "summary.json",
        "summary.txt",
        "report.html",
        "thresholds.xml",
        "intervals.csv",
        "resources.csv",
        "state.json",
        "profile.toml",
    ];
    if entry.is_dir() && name == "steps" {
        // `ceiling`: a results folder per step.
        return std::fs::read_dir(entry).is_ok_and(|mut steps| {
            steps.all(|step| {
                step.is_ok_and(|step| {
                    let step = step.path();
                    step.is_dir()
                        && std::fs::read_dir(&step).is_ok_and(|mut inside| {
                            inside.all(|e| e.is_ok_and(|e| written_by_a_run(&e.path())))
                        })
                })
            })
        });
    }
    if entry.is_dir() {
        // `--processes`: shard-I folders, results folders themselves.
        return name
            .strip_prefix("shard-")
            .is_some_and(|i| i.parse::<u32>().is_ok())
            && std::fs::read_dir(entry).is_ok_and(|mut inside| {
                inside.all(|e| e.is_ok_and(|e| written_by_a_run(&e.path())))
            });
    }
    FILES.contains(&name)
        || name.ends_with(".hlog")
        || name.ends_with(".tmp")
        || name
            .strip_prefix("shard-")
            .and_then(|rest| rest.strip_suffix(".log"))
            .is_some_and(|i| i.parse::<u32>().is_ok())
}

/// The folder for this run's results, created; `name` names the default one.
pub fn choose(name: &str, out: Option<&Path>, quiet: bool) -> anyhow::Result<PathBuf> {
    let Some(dir) = out else {
        return create_unused(&Path::new("results").join(default_name(name, SystemTime::now())));
    };
    let cleared = clear(dir)?;
    if cleared > 0 && !quiet {
        crate::console::errln(format_args!(
            "  results folder {}: removed {cleared} files of an earlier run",
            dir.display()
        ));
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the results folder {}", dir.display()))?;
    Ok(dir.to_path_buf())
}

/// `<name>-<UTC time to the second>`.
fn default_name(name: &str, now: SystemTime) -> String {
    let stamp = humantime::format_rfc3339_seconds(now)
        .to_string()
        .replace([':', '-'], "")
        .trim_end_matches('Z')
        .to_string();
    format!("{name}-{stamp}")
}

/// `base`, or `base-2`, `base-3` …, created: the first this call made itself. Each
/// candidate is created exclusively (`create_dir` fails on an existing folder), so of
/// two runs that pick the same name at once, one moves on to the next number instead
/// of both writing into it.
fn create_unused(base: &Path) -> anyhow::Result<PathBuf> {
    if let Some(parent) = base.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating the results folder {}", parent.display()))?;
    }
    for n in 1u32.. {
        let candidate = if n == 1 {
            base.to_path_buf()
        } else {
            PathBuf::from(format!("{}-{n}", base.display()))
        };
        match std::fs::create_dir(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("creating the results folder {}", candidate.display())
                })
            }
        }
    }
    anyhow::bail!("no unused name for the results folder {}", base.display())
}

/// Make `dir` ready for a run: nothing to do when it is new or empty; the files of an
/// earlier run removed (how many); refused when it holds anything a run does not write.
fn clear(dir: &Path) -> anyhow::Result<usize> {
    if !dir.exists() {
        return Ok(0);
    }
    if !dir.is_dir() {
        anyhow::bail!(
            "--out {}: not a folder\nfix: give a new or empty folder",
            dir.display()
        );
    }
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading the results folder {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .with_context(|| format!("reading the results folder {}", dir.display()))?;
    if let Some(foreign) = entries.iter().find(|e| !written_by_a_run(e)) {
        anyhow::bail!(
            "--out {}: the folder holds {}, which no run wrote; a run writes only into a new, empty or earlier results folder\nfix: give a new folder (or empty this one)",
            dir.display(),
            foreign.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    for entry in &entries {
        let removed = if entry.is_dir() {
            std::fs::remove_dir_all(entry)
        } else {
            std::fs::remove_file(entry)
        };
        removed.with_context(|| format!("removing {} of an earlier run", entry.display()))?;
    }
    Ok(entries.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_earlier_runs_files_are_removed_and_other_files_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("run");
        assert_eq!(clear(&out).expect("new"), 0);
        std::fs::create_dir_all(out.join("shard-0")).expect("mkdir");
        for f in [
            "summary.json",
            "connect.hlog",
            "shard-0.log",
            "shard-0/state.json",
        ] {
            std::fs::write(out.join(f), "x").expect("write");
        }
        assert_eq!(clear(&out).expect("an earlier run's"), 4);
        // A ceiling search's folder: ceiling.json and a run folder per step.
        std::fs::create_dir_all(out.join("steps/01-10")).expect("mkdir");
        for f in ["ceiling.json", "report.html", "steps/01-10/summary.json"] {
            std::fs::write(out.join(f), "x").expect("write");
        }
        assert_eq!(clear(&out).expect("an earlier search's"), 3);
        std::fs::create_dir_all(out.join("steps/01-10")).expect("mkdir");
        std::fs::write(out.join("steps/01-10/notes.md"), "mine").expect("write");
        assert!(
            clear(&out).is_err(),
            "a step folder with a file no run wrote"
        );
        std::fs::remove_dir_all(out.join("steps")).expect("rm");
        assert_eq!(std::fs::read_dir(&out).expect("read").count(), 0);
        std::fs::write(out.join("notes.md"), "mine").expect("write");
        std::fs::write(out.join("summary.json"), "x").expect("write");
        let refused = clear(&out).expect_err("not a results folder").to_string();
        assert!(refused.contains("notes.md"), "{refused}");
        assert!(
            out.join("notes.md").exists(),
            "nothing removed when refused"
        );
        assert!(
            out.join("summary.json").exists(),
            "nothing removed when refused"
        );
    }

    #[test]
    fn a_default_name_taken_in_the_same_second_gets_a_number() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().join("quickstart-20261204T204037");
        assert_eq!(create_unused(&base).expect("first"), base);
        assert!(base.is_dir(), "created");
        let second = create_unused(&base).expect("second");
        assert_eq!(second, dir.path().join("quickstart-20261204T204037-2"));
        assert_eq!(
            create_unused(&base).expect("third"),
            dir.path().join("quickstart-20261204T204037-3")
        );
        // Eight at once, as runs started together: eight different folders.
        let racers: Vec<_> = (0..8)
            .map(|_| {
                let base = dir.path().join("race-20261204T204037");
                std::thread::spawn(move || create_unused(&base).expect("created"))
            })
            .collect();
        let mut made: Vec<PathBuf> = racers
            .into_iter()
            .map(|t| t.join().expect("joins"))
            .collect();
        made.sort();
        made.dedup();
        assert_eq!(made.len(), 8, "{made:?}");
        let name = default_name("run", SystemTime::UNIX_EPOCH);
        assert_eq!(name, "run-19700101T000000");
    }
}
