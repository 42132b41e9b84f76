//! `mcp-fleet merge DIR... --out DIR`: the exact report of a sharded run. Every run
//! writes its raw state ([`STATE_FILE`]: HdrHistograms of every slice, counts,
//! examples, findings, the plan's hash, its shard and start); `merge` checks that the
//! shards belong to one run and are all there once, adds them, and writes a normal
//! results folder whose figures equal what one process reports for the same samples.

use crate::cli::MergeArgs;
use std::path::{Path, PathBuf};

/// The raw state of a run, in its results folder.
pub const STATE_FILE: &str = "state.json";

/// What `merge` made.
#[derive(Debug)]
pub struct Merged {
    pub summary: crate::report::Summary,
    pub dir: PathBuf,
}

/// Merge the shards' results folders `dirs` into `out`. An error (exit 2) when they do
/// not make one whole run.
pub fn merge_dirs(dirs: &[PathBuf], out: &Path) -> anyhow::Result<Merged> {
    let _ = (dirs, out);
    anyhow::bail!("merge is not built yet")
}

/// `mcp-fleet merge`: merge, print the summary; false when a threshold failed.
pub fn run(args: &MergeArgs) -> anyhow::Result<bool> {
    let merged = merge_dirs(&args.dirs, &args.out)?;
    if args.quiet {
        crate::console::outln(format_args!("{}", merged.dir.display()));
    } else {
        crate::console::outln(format_args!(
            "{}",
            crate::report::text::render_view(&merged.summary, args.view.summary_view())
        ));
        crate::console::outln(format_args!("results: {}", merged.dir.display()));
    }
    Ok(merged.summary.passed())
}
