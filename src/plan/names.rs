//! The names a plan interns so that samples and events carry small ids: the tools the
//! scenarios call, the phase names of their `request` steps, and their checks' names.

use super::error::PlanError;
use crate::metrics::ToolId;

/// The tool names the scenarios call ([`ToolId`] indexes it), and the phase names of
/// their `request` steps (a `request` sample's id indexes those).
#[derive(Debug, Default)]
pub struct ToolTable(Vec<String>, Vec<String>, Vec<String>);

/// The id of `name` in `table`, adding it the first time.
fn intern_in(table: &mut Vec<String>, name: &str) -> ToolId {
    let id = match table.iter().position(|t| t == name) {
        Some(i) => i,
        None => {
            table.push(name.to_string());
            table.len() - 1
        }
    };
    ToolId::try_from(id).unwrap_or(ToolId::MAX)
}

impl ToolTable {
    /// The id of tool `name`, adding it to the table the first time.
    pub(super) fn intern(&mut self, name: &str) -> ToolId {
        intern_in(&mut self.0, name)
    }

    /// The id of request phase `name`, adding it the first time.
    pub(super) fn intern_request(&mut self, name: &str) -> ToolId {
        intern_in(&mut self.1, name)
    }

    /// The id of step check `name`, adding it the first time.
    pub(super) fn intern_check(&mut self, name: &str) -> ToolId {
        intern_in(&mut self.2, name)
    }

    /// The tool names, the request steps' phase names and the step checks' names.
    pub fn into_names(self, origin: &str) -> Result<[Vec<String>; 3], PlanError> {
        if self.0.len().max(self.1.len()).max(self.2.len()) > usize::from(ToolId::MAX) {
            return Err(PlanError::new(
                origin,
                "scenario",
                "too many distinct tools or request phases",
                "use fewer than 65535 names",
            ));
        }
        Ok([self.0, self.1, self.2])
    }
}
