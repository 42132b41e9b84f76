//! A persona's `listen = { lists = [...], resources = [...] }`: the `subscriptions/listen`
//! it holds open (2026-07-28), checked once against its era.

use super::error::PlanError;
use super::session_kind::EraMode;
use crate::profile::PersonaSection;
use serde_json::{json, Value};

/// What a listening persona asks to hear of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListenPlan {
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
    pub uris: Vec<String>,
}

impl ListenPlan {
    pub fn from_section(
        p: &PersonaSection,
        era: EraMode,
        key: &str,
        origin: &str,
    ) -> Result<Option<ListenPlan>, PlanError> {
        let Some(l) = &p.listen else {
            return Ok(None);
        };
        let err = |k: &str, problem: String, fix: &str| {
            PlanError::new(origin, format!("{key}.listen{k}"), problem, fix)
        };
        if era == EraMode::Legacy {
            return Err(err(
                "",
                "subscriptions/listen is 2026-07-28; this persona speaks the legacy era".into(),
                "use era = \"modern\" or \"auto\" (a legacy session hears of changes on the GET stream: get_stream = true)",
            ));
        }
        let mut plan = ListenPlan {
            uris: l.resources.clone(),
            ..ListenPlan::default()
        };
        for list in &l.lists {
            match list.as_str() {
                "tools" => plan.tools = true,
                "prompts" => plan.prompts = true,
                "resources" => plan.resources = true,
                other => {
                    return Err(err(
                        ".lists",
                        format!("{other:?} is not a list"),
                        "use \"tools\", \"prompts\" or \"resources\"",
                    ))
                }
            }
        }
        if !(plan.tools || plan.prompts || plan.resources) && plan.uris.is_empty() {
            return Err(err(
                "",
                "asks to hear of nothing".into(),
                "name lists = [\"tools\", …] or resources = [\"uri\", …]",
            ));
        }
        if let Some(u) = plan.uris.iter().find(|u| u.trim().is_empty()) {
            return Err(err(
                ".resources",
                format!("{u:?} is not a URI"),
                "name each resource by its URI",
            ));
        }
        Ok(Some(plan))
    }

    /// `params.notifications` of the listen, limited to what the server can change:
    /// a list only when its capability says `listChanged`, resources only with
    /// `resources.subscribe` (`None` when nothing is left to ask for).
    pub fn filter(&self, server_caps: Option<&Value>) -> Option<Value> {
        let flag = |cap: &str, key: &str| {
            server_caps
                .and_then(|c| c.get(cap))
                .and_then(|c| c.get(key))
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        let tools = self.tools && flag("tools", "listChanged");
        let prompts = self.prompts && flag("prompts", "listChanged");
        let resources = self.resources && flag("resources", "listChanged");
        let subscribe = !self.uris.is_empty() && flag("resources", "subscribe");
        if !(tools || prompts || resources || subscribe) {
            return None;
        }
        let mut f = json!({
            "toolsListChanged": tools,
            "promptsListChanged": prompts,
            "resourcesListChanged": resources,
        });
        if subscribe {
            f["resourceSubscriptions"] = json!(self.uris);
        }
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::ListenSection;

    fn section(lists: &[&str], resources: &[&str]) -> PersonaSection {
        PersonaSection {
            name: "p".into(),
            listen: Some(ListenSection {
                lists: lists.iter().map(|s| s.to_string()).collect(),
                resources: resources.iter().map(|s| s.to_string()).collect(),
            }),
            ..PersonaSection::default()
        }
    }

    #[test]
    fn a_listen_is_checked_against_the_era_and_its_names() {
        let ok = ListenPlan::from_section(&section(&["tools"], &[]), EraMode::Modern, "p", "t")
            .expect("valid");
        assert!(ok.is_some_and(|p| p.tools && !p.prompts));
        let legacy = ListenPlan::from_section(&section(&["tools"], &[]), EraMode::Legacy, "p", "t");
        assert!(legacy
            .expect_err("refused")
            .to_string()
            .contains("2026-07-28"));
        let bad = ListenPlan::from_section(&section(&["tool"], &[]), EraMode::Auto, "p", "t");
        assert!(bad
            .expect_err("refused")
            .to_string()
            .contains("\"tool\" is not a list"));
        let empty = ListenPlan::from_section(&section(&[], &[]), EraMode::Modern, "p", "t");
        assert!(empty.expect_err("refused").to_string().contains("nothing"));
    }

    #[test]
    fn the_filter_asks_only_for_what_the_server_can_change() {
        let plan = ListenPlan {
            tools: true,
            prompts: true,
            uris: vec!["fleet://resources/1".into()],
            ..ListenPlan::default()
        };
        let caps = json!({"tools": {"listChanged": true}, "prompts": {}, "resources": {"subscribe": true}});
        let f = plan.filter(Some(&caps)).expect("something to hear of");
        assert_eq!(f["toolsListChanged"], json!(true));
        assert_eq!(f["promptsListChanged"], json!(false));
        assert_eq!(f["resourceSubscriptions"], json!(["fleet://resources/1"]));
        assert_eq!(plan.filter(Some(&json!({"prompts": {}}))), None);
        assert_eq!(plan.filter(None), None);
    }
}
