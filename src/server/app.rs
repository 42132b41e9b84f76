//! Application tools of the reference server (`serve --app-tools`): tools whose input
//! schemas use one JSON Schema feature each (so a benchmark reads acceptance per
//! feature), and a small stateful note store for captures. Unlike the default tools,
//! each one validates its arguments strictly against its own `inputSchema` (formats
//! included) and refuses an invalid call as the TypeScript SDK does: JSON-RPC -32602
//! "Invalid params: …" naming the first error.

mod notes;
#[cfg(test)]
mod tests;

use serde_json::{json, Map, Value};

use crate::protocol::jsonrpc::codes;
use crate::protocol::RpcError;
pub use notes::{Note, NoteStore, ID_PREFIX, MAX_NOTES};

/// Most characters of the validation error an invalid call is told.
pub const MAX_ERROR_CHARS: usize = 300;
/// Most notes `note_list` shows.
pub const MAX_LIST: u64 = 100;
const DEFAULT_LIST: u64 = 20;

/// The application tools, a closed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppTool {
    /// A pydantic-style model: `$defs` / `$ref`, an enum through `$ref`, an
    /// `Optional[int] = None`, a bounded recursive list.
    FeatureRef,
    /// `pattern`.
    FeaturePattern,
    /// `format`: date-time, date, time, duration, email, uri, uuid, ipv4, ipv6, hostname.
    FeatureFormats,
    /// `multipleOf`, `exclusiveMinimum` / `exclusiveMaximum`, integer vs number.
    FeatureNumbers,
    /// `minLength` / `maxLength`, `minItems` / `maxItems` / `uniqueItems`.
    FeatureLengths,
    /// `anyOf` / `oneOf` / `allOf`, `const`, nullable.
    FeatureChoice,
    /// `additionalProperties: false`, nested objects, `default` / `examples`, maps.
    FeatureObjects,
    NoteCreate,
    NoteGet,
    NoteList,
    NoteDelete,
}

impl AppTool {
    pub const ALL: [AppTool; 11] = [
        AppTool::FeatureRef,
        AppTool::FeaturePattern,
        AppTool::FeatureFormats,
        AppTool::FeatureNumbers,
        AppTool::FeatureLengths,
        AppTool::FeatureChoice,
        AppTool::FeatureObjects,
        AppTool::NoteCreate,
        AppTool::NoteGet,
        AppTool::NoteList,
        AppTool::NoteDelete,
    ];

    /// The tools that exercise one schema feature each.
    pub const FEATURES: [AppTool; 7] = [
        AppTool::FeatureRef,
        AppTool::FeaturePattern,
        AppTool::FeatureFormats,
        AppTool::FeatureNumbers,
        AppTool::FeatureLengths,
        AppTool::FeatureChoice,
        AppTool::FeatureObjects,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AppTool::FeatureRef => "feature_ref",
            AppTool::FeaturePattern => "feature_pattern",
            AppTool::FeatureFormats => "feature_formats",
            AppTool::FeatureNumbers => "feature_numbers",
            AppTool::FeatureLengths => "feature_lengths",
            AppTool::FeatureChoice => "feature_choice",
            AppTool::FeatureObjects => "feature_objects",
            AppTool::NoteCreate => "note_create",
            AppTool::NoteGet => "note_get",
            AppTool::NoteList => "note_list",
            AppTool::NoteDelete => "note_delete",
        }
    }

    pub fn from_name(name: &str) -> Option<AppTool> {
        AppTool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The JSON Schema of the tool's arguments.
    pub fn input_schema(self) -> Value {
        match self {
            AppTool::FeatureRef => json!({
                "type": "object", "title": "feature_refArguments",
                "$defs": {
                    "Priority": {"type": "string", "enum": ["low", "medium", "high"],
                                 "title": "Priority"},
                    "Task": {"type": "object", "title": "Task",
                        "properties": {
                            "title": {"type": "string", "minLength": 1, "maxLength": 80,
                                      "title": "Title"},
                            "priority": {"$ref": "#/$defs/Priority"},
                            "estimate": {"anyOf": [{"type": "integer", "minimum": 0},
                                                   {"type": "null"}],
                                         "default": null, "title": "Estimate"},
                            "subtasks": {"type": "array", "items": {"$ref": "#/$defs/Task"},
                                         "maxItems": 3, "title": "Subtasks"},
                        },
                        "required": ["title", "priority"]},
                },
                "properties": {"task": {"$ref": "#/$defs/Task"}},
                "required": ["task"],
            }),
            AppTool::FeaturePattern => json!({
                "type": "object",
                "properties": {
                    "code": {"type": "string", "pattern": r"^[A-Z]{3}-\d{4}$",
                             "description": "A booking code such as ABC-1234"},
                    "at": {"type": "string", "pattern": r"^\d{2}:\d{2}$",
                           "description": "A wall-clock time such as 09:30"},
                },
                "required": ["code", "at"],
            }),
            AppTool::FeatureFormats => {
                let formats = [
                    ("when", "date-time"),
                    ("day", "date"),
                    ("clock", "time"),
                    ("span", "duration"),
                    ("email", "email"),
                    ("link", "uri"),
                    ("uuid", "uuid"),
                    ("v4", "ipv4"),
                    ("v6", "ipv6"),
                    ("host", "hostname"),
                ];
                let properties: Map<String, Value> = formats
                    .iter()
                    .map(|(k, f)| ((*k).to_string(), json!({"type": "string", "format": f})))
                    .collect();
                let required: Vec<&str> = formats.iter().map(|(k, _)| *k).collect();
                json!({"type": "object", "properties": properties, "required": required})
            }
            AppTool::FeatureNumbers => json!({
                "type": "object",
                "properties": {
                    "quantity": {"type": "number", "multipleOf": 0.25,
                                 "minimum": 0, "maximum": 100},
                    "step": {"type": "integer", "multipleOf": 5, "minimum": 5, "maximum": 500},
                    "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                    "count": {"type": "integer", "minimum": 1, "maximum": 10},
                },
                "required": ["quantity", "step", "ratio", "count"],
            }),
            AppTool::FeatureLengths => json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 3, "maxLength": 12},
                    "tags": {"type": "array",
                             "items": {"type": "string", "minLength": 1, "maxLength": 8},
                             "minItems": 2, "maxItems": 5, "uniqueItems": true},
                    "scores": {"type": "array",
                               "items": {"type": "integer", "minimum": 0, "maximum": 3},
                               "minItems": 2, "maxItems": 4, "uniqueItems": true},
                },
                "required": ["name", "tags", "scores"],
            }),
            AppTool::FeatureChoice => json!({
                "type": "object",
                "properties": {
                    "target": {"anyOf": [{"type": "string", "format": "email"},
                                         {"type": "integer", "minimum": 1}]},
                    "shape": {"oneOf": [
                        {"type": "object",
                         "properties": {"kind": {"const": "circle"},
                                        "radius": {"type": "number", "exclusiveMinimum": 0}},
                         "required": ["kind", "radius"], "additionalProperties": false},
                        {"type": "object",
                         "properties": {"kind": {"const": "square"},
                                        "side": {"type": "number", "exclusiveMinimum": 0}},
                         "required": ["kind", "side"], "additionalProperties": false},
                    ]},
                    "level": {"allOf": [{"type": "integer", "minimum": 0},
                                        {"type": "integer", "maximum": 10}]},
                    "version": {"const": 2},
                    "comment": {"type": ["string", "null"], "maxLength": 40},
                },
                "required": ["target", "shape", "level", "version", "comment"],
            }),
            AppTool::FeatureObjects => json!({
                "type": "object",
                "properties": {
                    "config": {"type": "object",
                        "properties": {
                            "name": {"type": "string", "examples": ["alpha", "beta"]},
                            "retries": {"type": "integer", "minimum": 0, "maximum": 5,
                                        "default": 3},
                            "server": {"type": "object",
                                "properties": {
                                    "host": {"type": "string", "format": "hostname"},
                                    "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                                },
                                "required": ["host", "port"], "additionalProperties": false},
                        },
                        "required": ["name", "server"], "additionalProperties": false},
                    "labels": {"type": "object",
                               "additionalProperties": {"type": "string", "maxLength": 16},
                               "maxProperties": 4},
                },
                "required": ["config"],
                "additionalProperties": false,
            }),
            AppTool::NoteCreate => json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string", "minLength": 1, "maxLength": 100},
                    "body": {"type": "string", "maxLength": 1000},
                },
                "required": ["title", "body"],
            }),
            AppTool::NoteGet | AppTool::NoteDelete => json!({
                "type": "object",
                "properties": {"id": {"type": "string", "pattern": r"^n-\d{1,19}$",
                                      "description": "A note id from note_create or note_list"}},
                "required": ["id"],
            }),
            AppTool::NoteList => json!({
                "type": "object",
                "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIST,
                                         "default": DEFAULT_LIST}},
            }),
        }
    }

    fn output_schema(self) -> Option<Value> {
        let note = json!({"type": "object",
            "properties": {"id": {"type": "string"}, "title": {"type": "string"}},
            "required": ["id", "title"]});
        match self {
            AppTool::NoteCreate => Some(note),
            AppTool::NoteGet => Some(json!({"type": "object",
                "properties": {"id": {"type": "string"}, "title": {"type": "string"},
                               "body": {"type": "string"}},
                "required": ["id", "title", "body"]})),
            AppTool::NoteList => Some(json!({"type": "object",
                "properties": {"notes": {"type": "array", "items": note},
                               "total": {"type": "integer"}},
                "required": ["notes", "total"]})),
            _ => None,
        }
    }

    fn description(self) -> &'static str {
        match self {
            AppTool::FeatureRef => "Accepts a task model (pydantic style: $defs/$ref, an enum, an optional integer, subtasks).",
            AppTool::FeaturePattern => "Accepts a booking code and a time that match their patterns.",
            AppTool::FeatureFormats => "Accepts one string of each common format (date-time, date, time, duration, email, uri, uuid, ipv4, ipv6, hostname).",
            AppTool::FeatureNumbers => "Accepts numbers with multipleOf, exclusive bounds and integer types.",
            AppTool::FeatureLengths => "Accepts strings and arrays within their lengths, with unique items.",
            AppTool::FeatureChoice => "Accepts values chosen by anyOf, oneOf, allOf, const and a nullable string.",
            AppTool::FeatureObjects => "Accepts a nested configuration object that allows no other properties.",
            AppTool::NoteCreate => "Creates a note; its id comes as structured content and as text.",
            AppTool::NoteGet => "Returns one note by id.",
            AppTool::NoteList => "Lists the newest notes, one line each: [NOTE] id title.",
            AppTool::NoteDelete => "Deletes a note by id.",
        }
    }

    fn annotations(self) -> Value {
        let (read_only, destructive, idempotent) = match self {
            AppTool::NoteCreate => (false, false, false),
            AppTool::NoteDelete => (false, true, true),
            _ => (true, false, true),
        };
        json!({"title": self.name(), "readOnlyHint": read_only, "destructiveHint": destructive,
               "idempotentHint": idempotent, "openWorldHint": false})
    }

    /// The `Tool` object advertised by `tools/list`.
    pub fn definition(self) -> Value {
        let mut tool = json!({
            "name": self.name(),
            "title": self.name(),
            "description": self.description(),
            "inputSchema": self.input_schema(),
            "annotations": self.annotations(),
        });
        if let (Some(schema), Some(obj)) = (self.output_schema(), tool.as_object_mut()) {
            obj.insert("outputSchema".into(), schema);
        }
        tool
    }
}

/// A tool and the validator of its arguments (`None` if its schema did not compile,
/// which a test rules out; such a tool answers -32603).
#[derive(Debug)]
struct Entry {
    tool: AppTool,
    validator: Option<jsonschema::Validator>,
}

/// The application tools of one server: validators compiled once, and the note store
/// every session shares.
#[derive(Debug)]
pub struct AppTools {
    entries: Vec<Entry>,
    pub notes: NoteStore,
}

impl Default for AppTools {
    fn default() -> Self {
        AppTools::new(NoteStore::default())
    }
}

/// A validator that checks formats too (JSON Schema 2020-12 only annotates them).
pub fn strict_validator(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .ok()
}

fn invalid_params(message: String, data: Option<Value>) -> RpcError {
    RpcError {
        code: codes::INVALID_PARAMS,
        message,
        data,
    }
}

/// At most `max` characters of `s`, with an ellipsis when cut.
fn bounded(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!("{}…", s.get(..at).unwrap_or_default()),
    }
}

fn text(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

fn tool_error(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

/// Text and `structuredContent` of the same object, as the spec asks of tools that
/// declare an output schema.
fn structured(text: String, content: Value) -> Value {
    json!({"content": [{"type": "text", "text": text}], "structuredContent": content})
}

/// A title on one line (titles are free text; `note_list` prints one per line).
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

impl AppTools {
    pub fn new(notes: NoteStore) -> AppTools {
        let entries = AppTool::ALL
            .into_iter()
            .map(|tool| Entry {
                tool,
                validator: strict_validator(&tool.input_schema()),
            })
            .collect();
        AppTools { entries, notes }
    }

    /// The `Tool` objects `tools/list` adds.
    pub fn definitions(&self) -> Vec<Value> {
        self.entries.iter().map(|e| e.tool.definition()).collect()
    }

    /// Answer a `tools/call` whose `params.name` is one of these tools; `None` when it
    /// names another tool (the default catalog answers it).
    pub fn call(&self, params: &Value) -> Option<Result<Value, RpcError>> {
        let name = params.get("name").and_then(Value::as_str)?;
        let entry = self.entries.iter().find(|e| e.tool.name() == name)?;
        Some(self.run(entry, params.get("arguments")))
    }

    fn run(&self, entry: &Entry, arguments: Option<&Value>) -> Result<Value, RpcError> {
        let empty = Value::Object(Map::new());
        let args = match arguments {
            None | Some(Value::Null) => &empty,
            Some(a) => a,
        };
        let Some(validator) = &entry.validator else {
            return Err(RpcError {
                code: codes::INTERNAL_ERROR,
                message: format!("the input schema of {} does not compile", entry.tool.name()),
                data: None,
            });
        };
        if let Err(e) = validator.validate(args) {
            let path = e.instance_path.as_str().to_string();
            let at = if path.is_empty() { "arguments" } else { &path };
            return Err(invalid_params(
                format!(
                    "Invalid params: {at}: {}",
                    bounded(&e.to_string(), MAX_ERROR_CHARS)
                ),
                Some(json!({"tool": entry.tool.name(), "path": path})),
            ));
        }
        let string = |key: &str| {
            args.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Ok(match entry.tool {
            AppTool::NoteCreate => {
                let title = string("title");
                let id = self.notes.create(title.clone(), string("body"));
                structured(
                    format!("created note {id}"),
                    json!({"id": id, "title": title}),
                )
            }
            AppTool::NoteGet => match self.notes.get(&string("id")) {
                Some(n) => structured(
                    format!("[NOTE] {} {}\n{}", n.id, one_line(&n.title), n.body),
                    json!({"id": n.id, "title": n.title, "body": n.body}),
                ),
                None => tool_error(&format!("no note {}", string("id"))),
            },
            AppTool::NoteDelete => {
                let id = string("id");
                if self.notes.delete(&id) {
                    text(&format!("deleted note {id}"))
                } else {
                    tool_error(&format!("no note {id}"))
                }
            }
            AppTool::NoteList => {
                let limit = args
                    .get("limit")
                    .and_then(Value::as_u64)
                    .unwrap_or(DEFAULT_LIST)
                    .clamp(1, MAX_LIST);
                let (notes, total) = self
                    .notes
                    .list(usize::try_from(limit).unwrap_or(usize::MAX));
                let lines: Vec<String> = notes
                    .iter()
                    .map(|(id, title)| format!("[NOTE] {id} {}", one_line(title)))
                    .collect();
                let body = if lines.is_empty() {
                    "no notes".to_string()
                } else {
                    lines.join("\n")
                };
                let items: Vec<Value> = notes
                    .into_iter()
                    .map(|(id, title)| json!({"id": id, "title": title}))
                    .collect();
                structured(body, json!({"notes": items, "total": total}))
            }
            tool => text(&format!(
                "{} accepted {}",
                tool.name(),
                bounded(&args.to_string(), 200)
            )),
        })
    }
}
