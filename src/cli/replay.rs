//! `mcp-fleet replay` and `mcp-fleet profile --from-trace`: a recorded trace played back
//! as a run, or turned into a profile.

use super::RunArgs;
use clap::Args;
use std::path::PathBuf;

const REPLAY_AFTER_HELP: &str = "\
Each recorded session is replayed as its own client: its identity (clientInfo, protocol
version, capabilities), transport and habits, its requests in order with their pauses,
what the server assigns (session ids, request ids, cursors, values quoted back) taken
from the live answers. Timing:
  (default)      each session starts at its recorded offset, pauses as recorded
  --speed 2x     twice as fast (offsets and pauses halved); 0.5x: half speed
  --times 3      three times the recorded arrival rate (the schedule overlaid 3 times)
  --rate 20/s    sessions arrive at this rate, taking the recorded ones in turn
                 (--sessions or --duration says how many; default one pass)
Targets: --target URL (each session keeps its recorded path: /mcp, /sse, /ws …; default:
the recorded upstream), --stdio \"CMD\" for recorded stdio sessions. Every `run` option
works (thresholds, --out, --shard, --push …); the results folder's profile.toml is the
replay as a profile.

Exit codes: as `mcp-fleet run`; 2 also for a trace that cannot be used (a newer format
version, corrupt or truncated without --partial, no sessions).";

#[derive(Debug, Args)]
#[command(after_help = REPLAY_AFTER_HELP)]
pub struct ReplayArgs {
    /// The trace, from `mcp-fleet record`.
    pub trace: PathBuf,
    /// Play faster or slower: `2x` (or `2`) halves arrival offsets and pauses.
    #[arg(long, value_name = "X", display_order = 1)]
    pub speed: Option<String>,
    /// N times the recorded arrival rate: the recorded schedule overlaid N times, each
    /// copy shifted by 1/N of its length.
    #[arg(long, value_name = "N", display_order = 2)]
    pub times: Option<u32>,
    /// Use a trace that stops early (no `end` line, or a last line cut short).
    #[arg(long, display_order = 3)]
    pub partial: bool,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Derive a profile from this trace (from `mcp-fleet record`).
    #[arg(long, value_name = "TRACE")]
    pub from_trace: PathBuf,
    /// Write the profile here; tool argument pools go beside it, in `<name>.data/`.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Use a trace that stops early (no `end` line, or a last line cut short).
    #[arg(long)]
    pub partial: bool,
}
