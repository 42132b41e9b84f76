//! Values with `${…}` in them: tool arguments, a `resources/read` URI, a prompt's name
//! and arguments. Parsed once when the plan is made (unknown pools, variables no earlier
//! step captures and bad syntax are plan errors); rendered per call from what the
//! session knows. `${env.NAME}` is expanded when the plan is made.
//!
//! A string that is exactly one `${…}` takes the variable's JSON value as it is (a
//! captured number stays a number); inside a longer string a value is written as text
//! (a string without its quotes, anything else as compact JSON). `$${` is a literal `${`.

use super::data::PoolId;
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
    /// wrote it (`${resource.uri}`).
    pub fn describe(&self) -> String {
        match self {
            Template::Fixed(Value::String(s)) => s.clone(),
            Template::Fixed(v) => v.to_string(),
            Template::Var(v) => format!("${{{}}}", v.describe()),
            Template::Text(parts) => parts
                .iter()
                .map(|p| match p {
                    Part::Text(t) => t.clone(),
                    Part::Var(v) => format!("${{{}}}", v.describe()),
                })
                .collect(),
            Template::Array(_) | Template::Object(_) => "…".into(),
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
