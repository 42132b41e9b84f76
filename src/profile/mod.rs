//! The profile file, mirrored by serde: every section and key a user can write, with
//! `deny_unknown_fields` so a typo is an error, and no logic. `plan/` gives it meaning.
//!
//! One file per section, as `plan/` has; this one holds the whole file's [`Profile`],
//! reading it, and the re-exports through which the rest of the crate names every
//! section.

mod arguments;
mod auth;
mod capture;
mod check;
mod data;
mod load;
mod outputs;
mod persona;
mod scenario;
mod soak;
mod target;
mod tasks;
mod threshold;
mod watch;

pub use arguments::ArgumentsSection;
pub use auth::{AuthSection, ClientCredentialsSection};
pub use capture::{CaptureSpec, CaptureTable, Captures};
pub use check::CheckSpec;
pub use data::DataSection;
pub use load::{ArrivalSection, EventSection, LoadSection, StageSection};
pub use outputs::OutputsSection;
pub use persona::{
    ClientInfoSection, ElicitationSection, FaultSection, ListenSection, PersonaSection,
    RootSection, SamplingSection,
};
pub use scenario::{MixCall, ScenarioSection, Step};
pub use soak::SoakSection;
pub use target::{Command, TargetSection};
pub use tasks::TasksSection;
pub use threshold::{ThresholdEntry, ThresholdTable};
pub use watch::WatchSection;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A whole profile file.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// A short name, used for the results folder.
    pub name: Option<String>,
    pub description: Option<String>,
    /// Seed for every random choice; random when absent (and printed).
    pub seed: Option<u64>,
    /// Pass/fail rules checked after the run, e.g. `["p99(initialize) < 50ms"]`; a failed
    /// one makes the exit code 1 (see `plan::threshold` for the forms). A table entry
    /// may stop the run early when the rule is lost (`abort_on_fail`, `delay`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<ThresholdEntry>,
    #[serde(default)]
    pub target: TargetSection,
    #[serde(default)]
    pub load: LoadSection,
    #[serde(default, rename = "persona", skip_serializing_if = "Vec::is_empty")]
    pub personas: Vec<PersonaSection>,
    #[serde(default, rename = "scenario", skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<ScenarioSection>,
    #[serde(default, skip_serializing_if = "SoakSection::is_empty")]
    pub soak: SoakSection,
    #[serde(default, skip_serializing_if = "WatchSection::is_empty")]
    pub watch: WatchSection,
    /// `[data.NAME]`: pools of values that arguments draw with `${pool.NAME}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, DataSection>,
    /// `[arguments]`: how arguments are generated from `inputSchema`s.
    #[serde(default, skip_serializing_if = "ArgumentsSection::is_empty")]
    pub arguments: ArgumentsSection,
    /// `[outputs]`: where the run pushes its figures as it goes.
    #[serde(default, skip_serializing_if = "OutputsSection::is_empty")]
    pub outputs: OutputsSection,
}

/// A profile that could not be read or parsed; the message names the file.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot read profile {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
}

impl Profile {
    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Profile::parse(&text, &path.display().to_string())
    }

    /// Parse profile text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Profile, ProfileError> {
        toml::from_str(text).map_err(|e| ProfileError::Parse {
            path: origin.to_string(),
            message: explain_toml_error(&e),
        })
    }

    /// The profile as TOML (for the results folder).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_else(|e| format!("# could not render: {e}\n"))
    }
}

/// toml's message already carries line, column and a caret; add the fix for the common
/// mistakes.
fn explain_toml_error(e: &toml::de::Error) -> String {
    let msg = e.message();
    let fix = if msg.contains("unknown field") {
        "\nfix: remove or rename the key; the expected keys are listed above"
    } else if msg.contains("unknown variant") {
        "\nfix: `op` must be one of the step kinds listed above"
    } else if msg.contains("missing field") {
        "\nfix: add the key named above"
    } else {
        ""
    };
    format!("{}{fix}", e.to_string().trim_end())
}

#[cfg(test)]
mod tests;
