//! What a run leaves behind: the terminal summary and the results folder
//! (`summary.json`, the effective `profile.toml`). Files are written atomically.

pub mod summary;
pub mod text;

pub use summary::{RunFacts, Summary, SCHEMA_VERSION};

use std::path::{Path, PathBuf};

/// The committed JSON schema of `summary.json`.
pub const SUMMARY_SCHEMA: &str = include_str!("summary.schema.json");

/// Write `bytes` to `path` via a temporary file and a rename, so a reader never sees a
/// half-written file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Write the results folder; returns the paths written.
pub fn write_results(
    dir: &Path,
    summary: &Summary,
    profile_toml: &str,
) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_vec_pretty(summary).map_err(std::io::Error::other)?;
    let summary_path = dir.join("summary.json");
    write_atomically(&summary_path, &json)?;
    let profile_path = dir.join("profile.toml");
    write_atomically(&profile_path, profile_toml.as_bytes())?;
    let text_path = dir.join("summary.txt");
    write_atomically(&text_path, text::render(summary).as_bytes())?;
    Ok(vec![summary_path, profile_path, text_path])
}
