//! Values with `${…}` in them: tool arguments, a `resources/read` URI, a prompt's name
//! and arguments. Parsed once when the plan is made (unknown pools, variables no earlier
//! step captures and bad syntax are plan errors); rendered per call from what the
//! session knows. `${env.NAME}` is expanded when the plan is made.
//!
//! A string that is exactly one `${…}` takes the variable's JSON value as it is (a
//! captured number stays a number); inside a longer string a value is written as text
//! (a string without its quotes, anything else as compact JSON). `$${` is a literal `${`.

use super::data::{PoolId, Pools};
use super::error::PlanError;
use serde_json::Value;

/// What a `${…}` names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Var {
    /// `${pool.NAME}` (`field: None`: the pool's default field) or `${pool.NAME.FIELD}`.
    Pool { pool: PoolId, field: Option<String> },
    /// `${resource.uri}`: a URI from the session's `resources/list` (listed first if
    /// the session has not).
    ResourceUri,
    /// `${prompt.name}`: a name from the session's `prompts/list`.
    PromptName,
    /// `${NAME}`: a value an earlier step of the scenario captured.
    Captured(String),
}

impl Var {
    /// As written between `${` and `}` (a pool by its index: the plan knows its name).
    pub fn describe(&self) -> String {
        match self {
            Var::Pool { pool, field: None } => format!("pool#{pool}"),
            Var::Pool {
                pool,
                field: Some(f),
            } => format!("pool#{pool}.{f}"),
            Var::ResourceUri => "resource.uri".into(),
            Var::PromptName => "prompt.name".into(),
            Var::Captured(name) => name.clone(),
        }
    }

    /// As written between `${` and `}`, pools by name (`pool.tz.city`).
    pub fn describe_with(&self, pools: &Pools) -> String {
        match self {
            Var::Pool { pool, field } => {
                let name = pools
                    .0
                    .get(usize::from(*pool))
                    .map_or("?", |p| p.name.as_str());
                match field {
                    Some(f) => format!("pool.{name}.{f}"),
                    None => format!("pool.{name}"),
                }
            }
            other => other.describe(),
        }
    }
}

/// A piece of a string with variables in it.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Text(String),
    Var(Var),
}

/// A JSON value with `${…}` in some of its strings.
#[derive(Debug, Clone, PartialEq)]
pub enum Template {
    /// No variables anywhere below: sent as it is.
    Fixed(Value),
    /// A string that is exactly one variable: its value, whatever its type.
    Var(Var),
    /// A string of text and variables.
    Text(Vec<Part>),
    Array(Vec<Template>),
    Object(Vec<(String, Template)>),
}

/// Where a render finds the values of variables; the session implements it. `Err` says
/// why a variable has no value (`"${note} was not captured"`, `"pool ids is used up"`).
pub trait Lookup {
    fn value(&mut self, var: &Var) -> Result<Value, String>;
}

impl Template {
    /// An empty object (a call without arguments).
    pub fn empty_object() -> Template {
        Template::Fixed(Value::Object(serde_json::Map::new()))
    }

    /// How a step names it: a fixed string as it is, anything else as the profile
    /// wrote it (`${resource.uri}`, `${pool.uris}`).
    pub fn describe_with(&self, pools: &Pools) -> String {
        let var = |v: &Var| format!("${{{}}}", v.describe_with(pools));
        match self {
            Template::Fixed(Value::String(s)) => s.clone(),
            Template::Fixed(v) => v.to_string(),
            Template::Var(v) => var(v),
            Template::Text(parts) => parts
                .iter()
                .map(|p| match p {
                    Part::Text(t) => t.clone(),
                    Part::Var(v) => var(v),
                })
                .collect(),
            Template::Array(_) | Template::Object(_) => "…".into(),
        }
    }

    /// `value` as written in the profile at `key`: its strings' `${…}` parsed (pools and
    /// their fields checked against `ctx`, `${env.NAME}` expanded), subtrees without
    /// variables collapsed to one [`Template::Fixed`].
    pub fn parse(
        value: &Value,
        ctx: &mut TemplateContext,
        key: &str,
        origin: &str,
    ) -> Result<Template, PlanError> {
        match value {
            Value::String(s) => parse_string(s, ctx, key, origin),
            Value::Array(items) => {
                let items = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| Template::parse(v, ctx, &format!("{key}[{i}]"), origin))
                    .collect::<Result<Vec<_>, _>>()?;
                if items.iter().all(Template::is_fixed) {
                    Ok(Template::Fixed(Value::Array(
                        items.into_iter().map(Template::into_fixed).collect(),
                    )))
                } else {
                    Ok(Template::Array(items))
                }
            }
            Value::Object(fields) => {
                let fields = fields
                    .iter()
                    .map(|(k, v)| {
                        Template::parse(v, ctx, &format!("{key}.{k}"), origin)
                            .map(|t| (k.clone(), t))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if fields.iter().all(|(_, t)| t.is_fixed()) {
                    Ok(Template::Fixed(Value::Object(
                        fields
                            .into_iter()
                            .map(|(k, t)| (k, t.into_fixed()))
                            .collect(),
                    )))
                } else {
                    Ok(Template::Object(fields))
                }
            }
            other => Ok(Template::Fixed(other.clone())),
        }
    }

    /// The value to send: variables looked up in `lookup` (the first `Err` is returned).
    pub fn render(&self, lookup: &mut impl Lookup) -> Result<Value, String> {
        match self {
            Template::Fixed(v) => Ok(v.clone()),
            Template::Var(var) => lookup.value(var),
            Template::Text(parts) => {
                let mut out = String::new();
                for p in parts {
                    match p {
                        Part::Text(t) => out.push_str(t),
                        Part::Var(var) => match lookup.value(var)? {
                            Value::String(s) => out.push_str(&s),
                            other => out.push_str(&other.to_string()),
                        },
                    }
                }
                Ok(Value::String(out))
            }
            Template::Array(items) => items
                .iter()
                .map(|t| t.render(lookup))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            Template::Object(fields) => {
                let mut out = serde_json::Map::with_capacity(fields.len());
                for (k, t) in fields {
                    out.insert(k.clone(), t.render(lookup)?);
                }
                Ok(Value::Object(out))
            }
        }
    }

    /// The names of the captured variables (`${NAME}`) it uses, in the order written.
    pub fn captured(&self) -> Vec<&str> {
        self.vars()
            .into_iter()
            .filter_map(|v| match v {
                Var::Captured(name) => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The value of a `Fixed` (only called on one).
    fn into_fixed(self) -> Value {
        match self {
            Template::Fixed(v) => v,
            _ => Value::Null,
        }
    }

    /// Whether no variable occurs in it.
    pub fn is_fixed(&self) -> bool {
        matches!(self, Template::Fixed(_))
    }

    /// Every variable, in the order written.
    pub fn vars(&self) -> Vec<&Var> {
        let mut out = Vec::new();
        self.collect_vars(&mut out);
        out
    }

    fn collect_vars<'a>(&'a self, out: &mut Vec<&'a Var>) {
        match self {
            Template::Fixed(_) => {}
            Template::Var(v) => out.push(v),
            Template::Text(parts) => out.extend(parts.iter().filter_map(|p| match p {
                Part::Var(v) => Some(v),
                Part::Text(_) => None,
            })),
            Template::Array(items) => items.iter().for_each(|t| t.collect_vars(out)),
            Template::Object(fields) => fields.iter().for_each(|(_, t)| t.collect_vars(out)),
        }
    }
}

/// What parsing a template needs to know: the plan's pools (names, CSV headers) and the
/// environment `${env.NAME}` reads.
pub struct TemplateContext<'a> {
    pools: &'a Pools,
    env: &'a dyn Fn(&str) -> Option<String>,
}

impl std::fmt::Debug for TemplateContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TemplateContext")
            .field("pools", &self.pools)
            .finish_non_exhaustive()
    }
}

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl<'a> TemplateContext<'a> {
    /// Pools of the plan; `${env.NAME}` from the process's environment.
    pub fn new(pools: &'a Pools) -> TemplateContext<'a> {
        TemplateContext {
            pools,
            env: &process_env,
        }
    }

    /// With another environment (tests).
    pub fn with_env(
        pools: &'a Pools,
        env: &'a dyn Fn(&str) -> Option<String>,
    ) -> TemplateContext<'a> {
        TemplateContext { pools, env }
    }
}

/// `NAME` of a captured variable or an environment variable: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

const SYNTAX: &str = "write ${pool.NAME}, ${pool.NAME.FIELD}, ${resource.uri}, ${prompt.name}, \
                      ${env.NAME} or a captured ${NAME} (and $${ for a literal ${)";

/// One string: text, `${…}` and `$${`.
fn parse_string(
    s: &str,
    ctx: &mut TemplateContext,
    key: &str,
    origin: &str,
) -> Result<Template, PlanError> {
    let mut parts: Vec<Part> = Vec::new();
    let mut text = String::new();
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        text.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("$${") {
            text.push_str("${");
            rest = after;
        } else if let Some(after) = tail.strip_prefix("${") {
            let end = after.find('}').ok_or_else(|| {
                PlanError::new(
                    origin,
                    key,
                    format!("a `${{` is not closed in {s:?}"),
                    format!("close it with `}}`: {SYNTAX}"),
                )
            })?;
            match parse_var(&after[..end], ctx, key, origin)? {
                Parsed::Text(t) => text.push_str(&t),
                Parsed::Var(v) => {
                    if !text.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut text)));
                    }
                    parts.push(Part::Var(v));
                }
            }
            rest = &after[end + 1..];
        } else {
            text.push('$');
            rest = &tail[1..];
        }
    }
    text.push_str(rest);
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    Ok(match parts.len() {
        0 => Template::Fixed(Value::String(String::new())),
        1 => match parts.pop() {
            Some(Part::Var(v)) => Template::Var(v),
            Some(Part::Text(t)) => Template::Fixed(Value::String(t)),
            None => Template::Fixed(Value::String(String::new())),
        },
        _ => Template::Text(parts),
    })
}

enum Parsed {
    /// Expanded at plan time (`${env.NAME}`).
    Text(String),
    Var(Var),
}

/// What is between `${` and `}`.
fn parse_var(
    name: &str,
    ctx: &mut TemplateContext,
    key: &str,
    origin: &str,
) -> Result<Parsed, PlanError> {
    let err = |problem: String, fix: String| Err(PlanError::new(origin, key, problem, fix));
    if name.trim().is_empty() {
        return err("`${}` names nothing".into(), SYNTAX.into());
    }
    let mut segments = name.splitn(3, '.');
    let first = segments.next().unwrap_or_default();
    let second = segments.next();
    let third = segments.next();
    match (first, second, third) {
        (n, None, None) if is_identifier(n) => Ok(Parsed::Var(Var::Captured(n.to_string()))),
        (n, None, None) => err(
            format!("`${{{n}}}` is not a variable name"),
            format!("a captured variable's name is letters, digits and '_'; {SYNTAX}"),
        ),
        ("env", Some(var), None) if is_identifier(var) => match (ctx.env)(var) {
            Some(v) => Ok(Parsed::Text(v)),
            None => err(
                format!("`${{env.{var}}}`: the environment variable {var} is not set"),
                format!("set it before the run (export {var}=...), or write the value itself"),
            ),
        },
        ("env", _, _) => err(
            format!("`${{{name}}}` is not an environment variable"),
            "write ${env.NAME}, NAME of letters, digits and '_'".into(),
        ),
        ("resource", Some("uri"), None) => Ok(Parsed::Var(Var::ResourceUri)),
        ("prompt", Some("name"), None) => Ok(Parsed::Var(Var::PromptName)),
        ("resource", _, _) => err(
            format!("`${{{name}}}` is not known"),
            "write ${resource.uri}".into(),
        ),
        ("prompt", _, _) => err(
            format!("`${{{name}}}` is not known"),
            "write ${prompt.name}".into(),
        ),
        ("pool", Some(pool), field) if !pool.is_empty() => {
            let Some(id) = ctx.pools.id_of(pool) else {
                let names: Vec<&str> = ctx.pools.0.iter().map(|p| p.name.as_str()).collect();
                let fix = if names.is_empty() {
                    format!("add a [data.{pool}] section with a file, or fix the name")
                } else {
                    format!(
                        "use one of: {}, or add a [data.{pool}] section",
                        names.join(", ")
                    )
                };
                return err(format!("`${{{name}}}`: no pool is named {pool:?}"), fix);
            };
            if field == Some("") {
                return err(
                    format!("`${{{name}}}` names an empty field"),
                    format!("write ${{pool.{pool}}} or ${{pool.{pool}.FIELD}}"),
                );
            }
            let p = ctx.pools.get(id);
            if let (Some(f), Some(header)) = (field, p.header.as_ref()) {
                if !header.iter().any(|h| h == f) {
                    return err(
                        format!("`${{{name}}}`: pool {pool} has no column {f:?}"),
                        format!("use one of its columns: {}", header.join(", ")),
                    );
                }
            }
            Ok(Parsed::Var(Var::Pool {
                pool: id,
                field: field.map(str::to_string),
            }))
        }
        ("pool", _, _) => err(
            format!("`${{{name}}}` names no pool"),
            "write ${pool.NAME} or ${pool.NAME.FIELD}".into(),
        ),
        (ns, Some(_), _) => err(
            format!("`${{{name}}}`: unknown namespace {ns:?}"),
            SYNTAX.into(),
        ),
        (_, None, Some(_)) => err(format!("`${{{name}}}` is not known"), SYNTAX.into()),
    }
}

#[cfg(test)]
mod tests;
