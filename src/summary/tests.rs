//! The contract against its committed schema: the names the code writes are exactly
//! the ones `summary.schema.json` lists.

use super::SUMMARY_SCHEMA;
use crate::metrics::{Counter, LeftOut};
use serde_json::Value;
use std::collections::BTreeSet;

/// The left-out reasons in the schema are exactly the enum's names.
#[test]
fn the_schema_lists_exactly_the_left_out_reasons() {
    let schema: Value = serde_json::from_str(SUMMARY_SCHEMA).expect("JSON");
    let names = &schema["properties"]["tool_acceptance"]["additionalProperties"]["properties"]
        ["left_out"]["propertyNames"]["enum"];
    let in_schema: BTreeSet<&str> = names
        .as_array()
        .expect("enum")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let in_code: BTreeSet<&str> = LeftOut::ALL.into_iter().map(LeftOut::name).collect();
    assert_eq!(in_schema, in_code);
}
/// The counters are a results contract: the schema lists exactly the enum's names,
/// each documented, and refuses any other.
#[test]
fn the_schema_lists_exactly_the_counters() {
    let schema: Value = serde_json::from_str(SUMMARY_SCHEMA).expect("JSON");
    let counters = &schema["properties"]["counters"];
    assert_eq!(counters["additionalProperties"], Value::Bool(false));
    let listed = counters["properties"].as_object().expect("properties");
    let in_schema: BTreeSet<&str> = listed.keys().map(String::as_str).collect();
    let in_code: BTreeSet<&str> = Counter::ALL.into_iter().map(Counter::name).collect();
    assert_eq!(in_schema, in_code);
    for (name, p) in listed {
        let text = p["description"].as_str().unwrap_or_default();
        assert!(!text.is_empty(), "{name} has no description");
    }
}
