//! How a persona replies when the server asks something of a client (sampling,
//! elicitation, roots), resolved from the persona's section and checked against the
//! capabilities it declares.

use super::error::PlanError;
use super::quantity::parse_duration;
use crate::profile::{self, PersonaSection};
use rand::distr::weighted::WeightedIndex;
use serde_json::{json, Value};
use std::time::Duration;

/// How the persona replies to `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingReply {
    pub text: String,
    pub model: String,
    pub delay: Duration,
}

/// How the persona replies to `elicitation/create`: weights of accept, decline, cancel.
#[derive(Debug, Clone)]
pub struct ElicitationReply {
    pub actions: WeightedIndex<u32>,
    pub delay: Duration,
    /// URL-mode elicitation was declared (`elicitation.url`).
    pub url_mode: bool,
}

/// Everything the persona can reply to; `None` = not declared, answered with -32601.
#[derive(Debug, Clone, Default)]
pub struct ReplyPolicy {
    pub sampling: Option<SamplingReply>,
    pub elicitation: Option<ElicitationReply>,
    pub roots: Option<Value>,
}

impl ReplyPolicy {
    /// `key` is the persona's key (`persona[0]`); `capabilities` what it declares.
    pub fn from_section(
        p: &PersonaSection,
        capabilities: &Value,
        key: &str,
        origin: &str,
    ) -> Result<ReplyPolicy, PlanError> {
        let declared = |c: &str| capabilities.get(c).is_some();
        for (what, configured) in [
            ("sampling", p.sampling.is_some()),
            ("elicitation", p.elicitation.is_some()),
            ("roots", p.roots.is_some()),
        ] {
            if configured && !declared(what) {
                return Err(PlanError::new(
                    origin,
                    format!("{key}.{what}"),
                    format!("configures answers to {what}, but the persona does not declare it"),
                    format!(
                        "add `{what} = {{}}` to the persona's capabilities, or remove this key"
                    ),
                ));
            }
        }
        let sampling = declared("sampling")
            .then(|| sampling(p, key, origin))
            .transpose()?;
        let elicitation = declared("elicitation")
            .then(|| elicitation(p, capabilities, key, origin))
            .transpose()?;
        let roots = declared("roots")
            .then(|| roots(p, key, origin))
            .transpose()?;
        Ok(ReplyPolicy {
            sampling,
            elicitation,
            roots,
        })
    }
}

fn delay(d: &Option<String>, key: &str, what: &str, origin: &str) -> Result<Duration, PlanError> {
    d.as_deref()
        .map(|d| parse_duration(d, &format!("{key}.{what}.delay"), origin))
        .transpose()
        .map(Option::unwrap_or_default)
}

fn sampling(p: &PersonaSection, key: &str, origin: &str) -> Result<SamplingReply, PlanError> {
    let s = p.sampling.clone().unwrap_or_default();
    Ok(SamplingReply {
        text: s
            .text
            .unwrap_or_else(|| "This is a canned answer from mcp-fleet.".into()),
        model: s.model.unwrap_or_else(|| "mcp-fleet-mock".into()),
        delay: delay(&s.delay, key, "sampling", origin)?,
    })
}

fn elicitation(
    p: &PersonaSection,
    capabilities: &Value,
    key: &str,
    origin: &str,
) -> Result<ElicitationReply, PlanError> {
    let e = p.elicitation.clone().unwrap_or_default();
    let weights = [
        e.accept.unwrap_or(1),
        e.decline.unwrap_or(0),
        e.cancel.unwrap_or(0),
    ];
    let actions = WeightedIndex::new(weights).map_err(|_| {
        PlanError::new(
            origin,
            format!("{key}.elicitation"),
            "accept, decline and cancel are all 0",
            "give at least one action a weight above 0",
        )
    })?;
    Ok(ElicitationReply {
        actions,
        delay: delay(&e.delay, key, "elicitation", origin)?,
        url_mode: capabilities
            .get("elicitation")
            .and_then(|e| e.get("url"))
            .is_some(),
    })
}

fn roots(p: &PersonaSection, key: &str, origin: &str) -> Result<Value, PlanError> {
    let list: Vec<profile::RootSection> = p.roots.clone().unwrap_or_else(|| {
        vec![profile::RootSection {
            uri: "file:///workspace".into(),
            name: Some("workspace".into()),
        }]
    });
    let mut out = Vec::new();
    for (i, r) in list.iter().enumerate() {
        if !r.uri.starts_with("file://") {
            return Err(PlanError::new(
                origin,
                format!("{key}.roots[{i}].uri"),
                format!("{:?} is not a file:// URI", r.uri),
                "roots must be file:// URIs, e.g. \"file:///home/me/project\"",
            ));
        }
        let mut root = json!({"uri": r.uri});
        if let Some(n) = &r.name {
            root["name"] = json!(n);
        }
        out.push(root);
    }
    Ok(Value::Array(out))
}
