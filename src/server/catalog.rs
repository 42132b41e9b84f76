//! What the reference server offers: its tools, resources and prompts, with every static
//! answer (list pages, resource bodies) serialized once at startup so the hot path only
//! splices pre-built JSON into a response.

use serde_json::{json, Value};

use crate::protocol::headers::X_MCP_HEADER;

/// Number of text resources; 25 makes `resources/list` span 3 pages at the default size.
pub const RESOURCE_COUNT: usize = 25;
/// URI prefix of every resource; the suffix is the resource number 1..=RESOURCE_COUNT.
pub const RESOURCE_PREFIX: &str = "fleet://resources/";
pub const RESOURCE_MIME: &str = "text/plain";

/// The tools, a closed set: `tools/call` dispatches on this enum, not on strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Echo,
    Add,
    Sleep,
    Fail,
    Progress,
    /// Asks the client's model (`sampling/createMessage`).
    AskSampling,
    /// Asks the user through the client (`elicitation/create`, form mode).
    AskElicitation,
    /// Asks the client for its roots (`roots/list`).
    AskRoots,
    /// Emits `notifications/<list>/list_changed`.
    NotifyListChanged,
}

impl Tool {
    pub const ALL: [Tool; 9] = [
        Tool::Echo,
        Tool::Add,
        Tool::Sleep,
        Tool::Fail,
        Tool::Progress,
        Tool::AskSampling,
        Tool::AskElicitation,
        Tool::AskRoots,
        Tool::NotifyListChanged,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Tool::Echo => "echo",
            Tool::Add => "add",
            Tool::Sleep => "sleep",
            Tool::Fail => "fail",
            Tool::Progress => "progress",
            Tool::AskSampling => "ask_sampling",
            Tool::AskElicitation => "ask_elicitation",
            Tool::AskRoots => "ask_roots",
            Tool::NotifyListChanged => "notify_list_changed",
        }
    }

    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Arguments a modern client must mirror in `Mcp-Param-{Name}` headers
    /// (`x-mcp-header` in the input schema): (argument, header name).
    pub fn header_params(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Tool::Echo => &[("message", "mcp-param-message")],
            _ => &[],
        }
    }

    /// The `Tool` object advertised by `tools/list`.
    fn definition(self) -> Value {
        // All tools are side-effect free and closed-world; the hints say so, so clients
        // that gate on `destructiveHint` never prompt for them.
        let hints = |title: &str| {
            json!({"title": title, "readOnlyHint": true, "destructiveHint": false,
                   "idempotentHint": true, "openWorldHint": false})
        };
        match self {
            Tool::Echo => json!({
                "name": "echo", "title": "Echo",
                "description": "Returns the given message unchanged as text.",
                // `x-mcp-header`: 2026-07-28 clients also send the message as the
                // `Mcp-Param-Message` header (SEP-2243), which the server checks.
                "inputSchema": {"type": "object",
                    "properties": {"message": {"type": "string", "description": "Text to echo back",
                                               X_MCP_HEADER: "Message"}},
                    "required": ["message"]},
                "annotations": hints("Echo"),
            }),
            Tool::Add => json!({
                "name": "add", "title": "Add",
                "description": "Adds two numbers; the sum comes as text and as structured content.",
                "inputSchema": {"type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]},
                "outputSchema": {"type": "object",
                    "properties": {"sum": {"type": "number"}},
                    "required": ["sum"]},
                "annotations": hints("Add"),
            }),
            Tool::Sleep => json!({
                "name": "sleep", "title": "Sleep",
                "description": "Waits the given number of milliseconds, then answers; simulates a slow tool.",
                "inputSchema": {"type": "object",
                    "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 60000,
                                          "description": "Milliseconds to wait"}},
                    "required": ["ms"]},
                "annotations": hints("Sleep"),
            }),
            Tool::Fail => json!({
                "name": "fail", "title": "Fail",
                "description": "Always returns a tool execution error (isError: true).",
                "inputSchema": {"type": "object", "properties": {}, "required": []},
                "annotations": hints("Fail"),
            }),
            Tool::Progress => json!({
                "name": "progress", "title": "Progress",
                "description": "Reports progress for each step when the request carries a progressToken, then answers.",
                "inputSchema": {"type": "object",
                    "properties": {"steps": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3}},
                    "required": []},
                "annotations": hints("Progress"),
            }),
            Tool::AskSampling => json!({
                "name": "ask_sampling", "title": "Ask the model",
                "description": "Asks the client's model (sampling/createMessage) and returns its reply text. Needs the client's `sampling` capability.",
                "inputSchema": {"type": "object",
                    "properties": {"prompt": {"type": "string", "description": "What to ask"}},
                    "required": ["prompt"]},
                "annotations": hints("Ask the model"),
            }),
            Tool::AskElicitation => json!({
                "name": "ask_elicitation", "title": "Ask the user",
                "description": "Asks the user for a form (elicitation/create) and returns the action and content. Needs the client's `elicitation` capability (form mode).",
                "inputSchema": {"type": "object",
                    "properties": {"message": {"type": "string", "description": "Text shown to the user"}},
                    "required": []},
                "annotations": hints("Ask the user"),
            }),
            Tool::AskRoots => json!({
                "name": "ask_roots", "title": "Ask for roots",
                "description": "Asks the client for its roots (roots/list) and returns their number and URIs. Needs the client's `roots` capability.",
                "inputSchema": {"type": "object", "properties": {}, "required": []},
                "annotations": hints("Ask for roots"),
            }),
            Tool::NotifyListChanged => json!({
                "name": "notify_list_changed", "title": "Notify list changed",
                "description": "Sends notifications/<list>/list_changed to the client (the lists do not actually change).",
                "inputSchema": {"type": "object",
                    "properties": {"list": {"type": "string", "enum": ["tools", "prompts", "resources"],
                                            "default": "tools"}},
                    "required": []},
                "annotations": hints("Notify list changed"),
            }),
        }
    }
}

/// Colours offered by the elicitation form's `color` enum.
pub const ELICITATION_COLORS: [&str; 3] = ["red", "green", "blue"];
const MAX_AGE: i64 = 150;

/// The `requestedSchema` of the `ask_elicitation` form.
pub fn elicitation_schema() -> Value {
    json!({"type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer", "minimum": 0, "maximum": MAX_AGE},
            "subscribe": {"type": "boolean"},
            "color": {"type": "string", "enum": ELICITATION_COLORS},
        },
        "required": ["name"]})
}

/// Check accepted form content against [`elicitation_schema`]; the error names the first
/// field that does not fit. Unknown fields are tolerated (the schema does not forbid them).
pub fn check_elicited(content: Option<&Value>) -> Result<(), String> {
    let Some(Value::Object(fields)) = content else {
        return Err("accepted content must be an object".into());
    };
    match fields.get("name") {
        Some(Value::String(_)) => {}
        Some(_) => return Err("`name` must be a string".into()),
        None => return Err("`name` is required".into()),
    }
    if let Some(age) = fields.get("age") {
        match age.as_i64() {
            Some(n) if (0..=MAX_AGE).contains(&n) => {}
            Some(_) => return Err(format!("`age` must be between 0 and {MAX_AGE}")),
            None => return Err("`age` must be an integer".into()),
        }
    }
    if fields.get("subscribe").is_some_and(|v| !v.is_boolean()) {
        return Err("`subscribe` must be a boolean".into());
    }
    if let Some(color) = fields.get("color") {
        if !color
            .as_str()
            .is_some_and(|c| ELICITATION_COLORS.contains(&c))
        {
            return Err("`color` must be one of red, green, blue".into());
        }
    }
    Ok(())
}

/// The prompts, a closed set like the tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    Greeting,
    Review,
}

impl Prompt {
    pub const ALL: [Prompt; 2] = [Prompt::Greeting, Prompt::Review];

    pub fn name(self) -> &'static str {
        match self {
            Prompt::Greeting => "greeting",
            Prompt::Review => "review",
        }
    }

    pub fn from_name(name: &str) -> Option<Prompt> {
        Prompt::ALL.into_iter().find(|p| p.name() == name)
    }

    /// `(argument, required)` pairs, in the order they are advertised.
    pub fn arguments(self) -> &'static [(&'static str, bool)] {
        match self {
            Prompt::Greeting => &[("name", true)],
            Prompt::Review => &[("code", true), ("language", false)],
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Prompt::Greeting => "A friendly greeting for someone",
            Prompt::Review => "Asks for a review of a piece of code",
        }
    }

    fn definition(self) -> Value {
        let args: Vec<Value> = self
            .arguments()
            .iter()
            .map(|(name, required)| json!({"name": name, "required": required}))
            .collect();
        let title = match self {
            Prompt::Greeting => "Greeting",
            Prompt::Review => "Code review",
        };
        json!({"name": self.name(), "title": title, "description": self.description(),
               "arguments": args})
    }
}

/// The resource number named by `uri`, if it is one of ours.
pub fn resource_number(uri: &str) -> Option<usize> {
    let n: usize = uri.strip_prefix(RESOURCE_PREFIX)?.parse().ok()?;
    (1..=RESOURCE_COUNT).contains(&n).then_some(n)
}

/// One paginated list, pre-serialized: page `k` is the complete `result` JSON.
#[derive(Debug)]
pub struct Listing {
    pages: Vec<String>,
}

/// Cursors name a page as `p<k>`: cheap to parse and opaque enough, since clients must
/// not interpret them anyway.
const CURSOR_PREFIX: &str = "p";

impl Listing {
    fn new(key: &str, items: Vec<Value>, page_size: usize) -> Listing {
        // A page size of zero would never make progress; treat it as one.
        let size = page_size.max(1);
        let chunks: Vec<&[Value]> = if items.is_empty() {
            vec![&[]]
        } else {
            items.chunks(size).collect()
        };
        let last = chunks.len() - 1;
        let pages = chunks
            .iter()
            .enumerate()
            .map(|(k, chunk)| {
                let mut page = serde_json::Map::new();
                page.insert(key.to_owned(), Value::Array(chunk.to_vec()));
                if k < last {
                    page.insert("nextCursor".into(), Value::String(cursor_for(k + 1)));
                }
                Value::Object(page).to_string()
            })
            .collect();
        Listing { pages }
    }

    /// The page a cursor names (`None` = first page); `None` if the cursor is not ours.
    pub fn page(&self, cursor: Option<&str>) -> Option<&str> {
        let k = match cursor {
            None => 0,
            Some(c) => c.strip_prefix(CURSOR_PREFIX)?.parse::<usize>().ok()?,
        };
        self.pages.get(k).map(String::as_str)
    }

    pub fn page_count(&self) -> usize {
        self.pages.len()
    }
}

fn cursor_for(page: usize) -> String {
    format!("{CURSOR_PREFIX}{page}")
}

/// Everything static the server answers, built once per server.
#[derive(Debug)]
pub struct Catalog {
    pub tools: Listing,
    pub resources: Listing,
    pub templates: Listing,
    pub prompts: Listing,
    /// `resources/read` results, index `n - 1` for resource `n`.
    reads: Vec<String>,
}

impl Catalog {
    pub fn new(page_size: usize) -> Catalog {
        Catalog::with_tools(page_size, Vec::new())
    }

    /// The catalog with `extra` tool definitions listed after the built-in tools.
    pub fn with_tools(page_size: usize, extra: Vec<Value>) -> Catalog {
        let mut tools: Vec<Value> = Tool::ALL.iter().map(|t| t.definition()).collect();
        tools.extend(extra);
        let resources = (1..=RESOURCE_COUNT)
            .map(|n| {
                json!({"uri": format!("{RESOURCE_PREFIX}{n}"), "name": format!("resource-{n}"),
                       "title": format!("Resource {n}"), "mimeType": RESOURCE_MIME})
            })
            .collect();
        let templates = vec![json!({
            "uriTemplate": format!("{RESOURCE_PREFIX}{{id}}"), "name": "resource",
            "title": "Numbered resource",
            "description": format!("Text resource number 1 to {RESOURCE_COUNT}"),
            "mimeType": RESOURCE_MIME,
        })];
        let prompts = Prompt::ALL.iter().map(|p| p.definition()).collect();
        let reads = (1..=RESOURCE_COUNT)
            .map(|n| {
                json!({"contents": [{"uri": format!("{RESOURCE_PREFIX}{n}"),
                    "mimeType": RESOURCE_MIME,
                    "text": format!("This is resource {n} of the mcp-fleet reference server.")}]})
                .to_string()
            })
            .collect();
        Catalog {
            tools: Listing::new("tools", tools, page_size),
            resources: Listing::new("resources", resources, page_size),
            templates: Listing::new("resourceTemplates", templates, page_size),
            prompts: Listing::new("prompts", prompts, page_size),
            reads,
        }
    }

    /// The pre-serialized `resources/read` result for resource `n` (1-based).
    pub fn read(&self, n: usize) -> Option<&str> {
        self.reads.get(n.checked_sub(1)?).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_span_three_pages_at_size_ten() {
        let c = Catalog::new(10);
        assert_eq!(c.resources.page_count(), 3);
        assert_eq!(c.tools.page_count(), 1);
        let first: Value =
            serde_json::from_str(c.resources.page(None).expect("page 0")).expect("json");
        assert_eq!(first["resources"].as_array().map(Vec::len), Some(10));
        assert_eq!(first["nextCursor"], "p1");
        assert!(c.resources.page(Some("p3")).is_none());
        assert!(c.resources.page(Some("garbage")).is_none());
    }

    #[test]
    fn resource_uris_round_trip() {
        assert_eq!(resource_number("fleet://resources/1"), Some(1));
        assert_eq!(resource_number("fleet://resources/25"), Some(25));
        assert_eq!(resource_number("fleet://resources/26"), None);
        assert_eq!(resource_number("fleet://resources/0"), None);
        assert_eq!(resource_number("file:///etc/passwd"), None);
        assert!(Catalog::new(10).read(25).is_some());
    }

    #[test]
    fn every_tool_schema_is_an_object_schema() {
        for t in Tool::ALL {
            let d = t.definition();
            assert_eq!(d["inputSchema"]["type"], "object", "{}", t.name());
            assert!(d["title"].is_string() && d["description"].is_string());
            assert_eq!(Tool::from_name(t.name()), Some(t));
        }
    }

    #[test]
    fn elicited_content_is_checked_against_the_schema() {
        assert!(check_elicited(Some(&json!({"name": "Ada"}))).is_ok());
        let full = json!({"name": "Ada", "age": 36, "subscribe": true, "color": "red"});
        assert!(check_elicited(Some(&full)).is_ok());
        for bad in [
            json!({}),
            json!({"name": 3}),
            json!({"name": "Ada", "age": 151}),
            json!({"name": "Ada", "age": 1.5}),
            json!({"name": "Ada", "subscribe": "yes"}),
            json!({"name": "Ada", "color": "pink"}),
            json!("Ada"),
        ] {
            assert!(check_elicited(Some(&bad)).is_err(), "{bad}");
        }
        assert!(check_elicited(None).is_err());
        assert_eq!(elicitation_schema()["required"], json!(["name"]));
    }
}
