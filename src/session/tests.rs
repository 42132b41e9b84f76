//! The session's small classifiers: destructive tools told apart, and which list a
//! `list_changed` notification refreshes.

use super::exchange::list_for;
use super::*;
use serde_json::json;

#[test]
fn destructive_tools_are_told_apart() {
    let t = |a: Value| json!({"name": "x", "inputSchema": {"type": "object"}, "annotations": a});
    assert!(is_destructive(&t(json!({"destructiveHint": true}))));
    assert!(!is_destructive(&t(
        json!({"destructiveHint": true, "readOnlyHint": true})
    )));
    assert!(!is_destructive(&t(json!({"destructiveHint": false}))));
    assert!(!is_destructive(&json!({"name": "x"})));
    assert!(!is_destructive(&t(json!({"destructiveHint": "yes"}))));
}

#[test]
fn list_changed_maps_to_its_list() {
    assert_eq!(
        list_for("notifications/tools/list_changed"),
        Some("tools/list")
    );
    assert_eq!(
        list_for("notifications/resources/list_changed"),
        Some("resources/list")
    );
    assert_eq!(list_for("notifications/progress"), None);
}
