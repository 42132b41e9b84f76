//! `capture = { NAME = … }` of a step: where a variable's value is in the step's
//! result.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a step captures from its result into a session variable: `"/a/0/b"` (a JSON
/// pointer) or `"$.a[0].b"` / `"$.a[*].b"` (a path; `[*]` any element) into
/// `structuredContent`, else into the JSON of the text content; or a table
/// `{ regex = "id: (\\w+)", pick = "first" | "random" }` over the text content (the
/// first group, else the whole match), or `{ pointer = … }` / `{ path = … }`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum CaptureSpec {
    Text(String),
    Table(CaptureTable),
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CaptureTable {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// Which of several matches (array elements under `[*]`, regex matches): `"first"`
    /// (default) or `"random"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<String>,
}

/// Captures of one step: variable name → where its value is.
pub type Captures = BTreeMap<String, CaptureSpec>;
