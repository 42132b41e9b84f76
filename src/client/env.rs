//! What a session's steps draw on besides the session itself: the run's `[data]` pools
//! and `[arguments]` policy, the client's memory (response cache, pool cursors), and the
//! session's variables (values captured by earlier steps, the URIs and prompt names its
//! listings found). [`Env::arguments`] turns a step's call into the arguments sent.

use super::arguments::{self, Generation};
use super::memory::ClientMemory;
use crate::metrics::LeftOut;
use crate::plan::capture::Capture;
use crate::plan::data::{Order, PoolId, Pools};
use crate::plan::template::{Lookup, Template, Var};
use crate::plan::{ArgumentPolicy, Call};
use crate::session::ResponseCache;
use rand::rngs::SmallRng;
use rand::Rng;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// The run's data for calls: pools and how arguments are generated.
#[derive(Debug, Clone, Default)]
pub struct CallData {
    pub pools: std::sync::Arc<Pools>,
    pub policy: ArgumentPolicy,
}

/// One session's environment for its steps.
pub struct Env<'a> {
    pub data: &'a CallData,
    pub memory: &'a mut ClientMemory,
    pub vars: Vars,
}

/// A session's variables.
#[derive(Debug, Default)]
pub struct Vars {
    /// Captured values; `Err` says why the last capture found nothing.
    captured: HashMap<String, Result<Value, String>>,
    /// URIs from `resources/list`, when a step asks for `${resource.uri}`.
    pub resources: Option<Vec<String>>,
    /// Names from `prompts/list`, when a step asks for `${prompt.name}`.
    pub prompts: Option<Vec<String>>,
    /// Which of the two lists this session has fetched (or tried to).
    listed: [bool; 2],
    /// The tool names of this session's last complete `tools/list`.
    tools: Option<HashSet<String>>,
}

impl Vars {
    /// A session that will use `${resource.uri}` / `${prompt.name}` keeps what its
    /// listings say (and only then: other sessions allocate nothing for it).
    pub fn for_steps<'s>(vars: impl Iterator<Item = &'s Var>) -> Vars {
        let mut out = Vars::default();
        for v in vars {
            match v {
                Var::ResourceUri => out.resources = Some(Vec::new()),
                Var::PromptName => out.prompts = Some(Vec::new()),
                _ => {}
            }
        }
        out
    }

    /// Remember what a list page names, if this session asked to.
    pub fn learn(&mut self, method: &str, page: &Value) {
        let (list, key, field) = match method {
            crate::protocol::methods::RESOURCES_LIST => {
                self.listed[0] = true;
                (&mut self.resources, "resources", "uri")
            }
            crate::protocol::methods::PROMPTS_LIST => {
                self.listed[1] = true;
                (&mut self.prompts, "prompts", "name")
            }
            _ => return,
        };
        let Some(list) = list.as_mut() else {
            return;
        };
        let found = page
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| e.get(field).and_then(Value::as_str));
        for name in found {
            if !list.iter().any(|n| n == name) {
                list.push(name.to_string());
            }
        }
    }

    /// The listing `var` needs that this session has not made (or tried) yet.
    pub fn needs_listing(&self, var: &Var) -> Option<&'static str> {
        match var {
            Var::ResourceUri if !self.listed[0] => Some(crate::protocol::methods::RESOURCES_LIST),
            Var::PromptName if !self.listed[1] => Some(crate::protocol::methods::PROMPTS_LIST),
            _ => None,
        }
    }

    /// The session listed every page of `tools/list` and these names were on them.
    pub fn tools_listed(&mut self, names: HashSet<String>) {
        self.tools = Some(names);
    }

    /// Whether the session's complete `tools/list` lacked `tool` (`false` when the
    /// session has no complete listing: then nothing is known).
    pub fn unlisted(&self, tool: &str) -> bool {
        self.tools.as_ref().is_some_and(|t| !t.contains(tool))
    }

    /// A listing was tried and failed: do not try again for every call.
    pub fn listing_tried(&mut self, method: &str) {
        match method {
            crate::protocol::methods::RESOURCES_LIST => self.listed[0] = true,
            crate::protocol::methods::PROMPTS_LIST => self.listed[1] = true,
            _ => {}
        }
    }

    /// Run a step's captures over its result.
    pub fn capture(&mut self, captures: &[Capture], result: &Value, rng: &mut SmallRng) {
        for c in captures {
            let got = c.extract(result, rng).ok_or_else(|| {
                format!(
                    "${{{}}} has no value: the capture found nothing in the result",
                    c.var
                )
            });
            self.captured.insert(c.var.clone(), got);
        }
    }

    /// A step whose result is an error captures nothing: later uses say so.
    pub fn capture_failed(&mut self, captures: &[Capture], why: &str) {
        for c in captures {
            self.captured.insert(
                c.var.clone(),
                Err(format!(
                    "${{{}}} has no value: the step that captures it failed ({why})",
                    c.var
                )),
            );
        }
    }
}

/// Why a call was not sent.
#[derive(Debug, Clone, PartialEq)]
pub enum NotSent {
    /// A `${…}` had no value (counted as a `no_value` failure of the call).
    NoValue(String),
    /// Left out on purpose (counted as left out, not as a failure).
    LeftOut(LeftOut),
}

/// The arguments of one call, and whether some of them were generated.
#[derive(Debug, Clone, PartialEq)]
pub struct Arguments {
    pub value: Value,
    pub generated: bool,
}

/// What the session knows of a tool from its listing.
#[derive(Debug, Clone, Copy)]
pub struct ToolFacts<'s> {
    pub schema: Option<&'s Value>,
    pub destructive: bool,
}

impl Env<'_> {
    /// Render `template` against the session's variables, the pools and the rng.
    pub fn render(&mut self, template: &Template, rng: &mut SmallRng) -> Result<Value, String> {
        if let Template::Fixed(v) = template {
            return Ok(v.clone());
        }
        let mut lookup = EnvLookup {
            env: self,
            rng,
            rows: Vec::new(),
        };
        template.render(&mut lookup)
    }

    /// The arguments `call` sends: its pins rendered, and (unless `generate = false`)
    /// the rest generated from the tool's `inputSchema`, optional properties by the
    /// call's share (`plan/arguments.rs`: none for a call that gives arguments, unless
    /// asked). A tool annotated destructive
    /// is left out unless the profile allows it or nothing is generated.
    pub fn arguments(
        &mut self,
        call: &Call,
        tool: ToolFacts<'_>,
        rng: &mut SmallRng,
    ) -> Result<Arguments, NotSent> {
        if call.generate && tool.destructive && !self.data.policy.allow_destructive {
            return Err(NotSent::LeftOut(LeftOut::Destructive));
        }
        let pins = self
            .render(&call.arguments, rng)
            .map_err(NotSent::NoValue)?;
        let pins = match pins {
            Value::Object(o) => o,
            _ => Map::new(), // the plan allows only tables
        };
        let schema = match tool.schema {
            Some(s) if call.generate => s,
            // Exactly these; or a tool the server does not list: send what we have and
            // let the server say what it thinks of it.
            _ => {
                return Ok(Arguments {
                    value: Value::Object(pins),
                    generated: false,
                })
            }
        };
        let gen = Generation {
            optional: call.optional.unwrap_or(self.data.policy.optional),
        };
        let value = arguments::generate_with(schema, &pins, &gen, rng);
        let generated = value
            .as_object()
            .is_some_and(|o| o.keys().any(|k| !pins.contains_key(k)));
        Ok(Arguments { value, generated })
    }

    pub fn cache(&mut self) -> &mut ResponseCache {
        &mut self.memory.cache
    }
}

/// Values for one render: the rows drawn from each pool are kept, so that all the
/// references to a pool in one call take the same row.
struct EnvLookup<'e, 'a, 'r> {
    env: &'e mut Env<'a>,
    rng: &'r mut SmallRng,
    rows: Vec<(PoolId, Value)>,
}

impl Lookup for EnvLookup<'_, '_, '_> {
    fn value(&mut self, var: &Var) -> Result<Value, String> {
        match var {
            Var::Pool { pool, field } => {
                let pools = &self.env.data.pools;
                let p = pools.get(*pool);
                let row = match self.rows.iter().find(|(id, _)| id == pool) {
                    Some((_, row)) => row.clone(),
                    None => {
                        let row = p
                            .draw(self.env.memory.cursor(*pool), self.rng)
                            .cloned()
                            .ok_or_else(|| match p.order {
                                Order::Unique => format!(
                                    "pool {:?} is used up (unique, {} rows)",
                                    p.name,
                                    p.rows.len()
                                ),
                                _ => format!("pool {:?} has no rows", p.name),
                            })?;
                        self.rows.push((*pool, row.clone()));
                        row
                    }
                };
                p.field(&row, field.as_deref()).cloned().ok_or_else(|| {
                    let f = field.as_deref().or(p.default_field.as_deref());
                    format!(
                        "pool {:?}: a row has no field {:?}",
                        p.name,
                        f.unwrap_or("")
                    )
                })
            }
            Var::ResourceUri => pick(
                self.env.vars.resources.as_deref(),
                self.rng,
                "${resource.uri} has no value: resources/list listed no resource",
            ),
            Var::PromptName => pick(
                self.env.vars.prompts.as_deref(),
                self.rng,
                "${prompt.name} has no value: prompts/list listed no prompt",
            ),
            Var::Captured(name) => match self.env.vars.captured.get(name) {
                Some(Ok(v)) => Ok(v.clone()),
                Some(Err(why)) => Err(why.clone()),
                None => Err(format!(
                    "${{{name}}} has no value: no step of this session captured it yet"
                )),
            },
        }
    }
}

fn pick(list: Option<&[String]>, rng: &mut SmallRng, none: &str) -> Result<Value, String> {
    match list {
        Some(l) if !l.is_empty() => Ok(Value::String(l[rng.random_range(0..l.len())].clone())),
        _ => Err(none.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use serde_json::json;

    #[test]
    fn listings_are_kept_only_when_asked_for() {
        let page = json!({"resources": [{"uri": "a://1"}, {"uri": "a://2"}, {"uri": "a://1"}]});
        let mut none = Vars::default();
        none.learn(crate::protocol::methods::RESOURCES_LIST, &page);
        assert_eq!(none.resources, None);
        let mut some = Vars::for_steps([Var::ResourceUri].iter());
        assert_eq!(
            some.needs_listing(&Var::ResourceUri),
            Some(crate::protocol::methods::RESOURCES_LIST)
        );
        some.learn(crate::protocol::methods::RESOURCES_LIST, &page);
        assert_eq!(
            some.resources.as_deref(),
            Some(&["a://1".to_string(), "a://2".to_string()][..])
        );
        assert_eq!(some.needs_listing(&Var::ResourceUri), None);
        let mut rng = SmallRng::seed_from_u64(1);
        let v = pick(some.resources.as_deref(), &mut rng, "none").expect("a uri");
        assert!(v == "a://1" || v == "a://2");
        assert_eq!(pick(Some(&[]), &mut rng, "none"), Err("none".to_string()));
    }
}
