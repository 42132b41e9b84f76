//! The one error a plan can fail with: which file or flag, which key, what is wrong and
//! how to fix it. Every check in `plan/` builds it through [`PlanError::new`].

/// A problem in the profile or an override: where, what, and how to fix it.
#[derive(Debug, thiserror::Error)]
#[error("{origin}: `{key}`: {problem}\nfix: {fix}")]
pub struct PlanError {
    pub origin: String,
    pub key: String,
    pub problem: String,
    pub fix: String,
}

impl PlanError {
    /// `origin` names the profile (or "command line"), `key` the setting.
    pub fn new(
        origin: &str,
        key: impl Into<String>,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> PlanError {
        PlanError {
            origin: origin.to_string(),
            key: key.into(),
            problem: problem.into(),
            fix: fix.into(),
        }
    }
}

/// Why a plan could not be had from its source: the profile could not be read, or it
/// does not resolve.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error(transparent)]
    Profile(#[from] crate::profile::ProfileError),
    #[error(transparent)]
    Plan(#[from] PlanError),
}
