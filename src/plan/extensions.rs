//! A persona's `extensions` (SEP-2133): the protocol extensions it declares, as
//! `extensions = ["io.modelcontextprotocol/ui"]` or with settings,
//! `extensions = { "io.modelcontextprotocol/ui" = { mimeTypes = ["text/html"] } }`.
//! They go into `capabilities.extensions`: of `initialize` (2025 era) and of every
//! request's `_meta` (2026-07-28). Ids are checked here: `{vendor-prefix}/{name}`, the
//! prefix a reverse domain name.

use super::error::PlanError;
use serde_json::{Map, Value};

/// Whether `id` has the form `{vendor-prefix}/{name}` (`io.modelcontextprotocol/ui`).
pub fn is_extension_id(id: &str) -> bool {
    let Some((prefix, name)) = id.split_once('/') else {
        return false;
    };
    let label = |l: &str| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    prefix.contains('.')
        && prefix.split('.').all(label)
        && !name.is_empty()
        && !name.contains('/')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// Merge `extensions` into `capabilities` (a table); the ids declared, sorted.
pub fn declare(
    extensions: Option<&Value>,
    capabilities: &mut Value,
    key: &str,
    origin: &str,
) -> Result<Vec<String>, PlanError> {
    let err = |problem: String, fix: &str| {
        PlanError::new(origin, format!("{key}.extensions"), problem, fix)
    };
    let mut add = Map::new();
    match extensions {
        None => {}
        Some(Value::Array(ids)) => {
            for id in ids {
                let Some(id) = id.as_str() else {
                    return Err(err(
                        format!("{id} is not an id"),
                        "write extension ids as strings",
                    ));
                };
                add.insert(id.to_string(), Value::Object(Map::new()));
            }
        }
        Some(Value::Object(m)) => {
            for (id, settings) in m {
                if !settings.is_object() {
                    return Err(err(
                        format!("the settings of {id:?} are not a table"),
                        "give each extension a table of settings, {} when it has none",
                    ));
                }
                add.insert(id.clone(), settings.clone());
            }
        }
        Some(_) => {
            return Err(err(
                "is neither a list of ids nor a table".into(),
                "write extensions = [\"io.modelcontextprotocol/ui\"]",
            ))
        }
    }
    if let Value::Object(caps) = capabilities {
        let declared = caps
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(declared) = declared else {
            return Err(PlanError::new(
                origin,
                format!("{key}.capabilities.extensions"),
                "is not a table",
                "write capabilities.extensions as a table of id → settings",
            ));
        };
        declared.extend(add);
        if let Some(id) = declared.keys().find(|id| !is_extension_id(id)) {
            return Err(err(
                format!("{id:?} is not an extension id"),
                "use {vendor-prefix}/{name}, e.g. \"io.modelcontextprotocol/ui\" or \"com.example/feature\"",
            ));
        }
        let ids: Vec<String> = declared.keys().cloned().collect();
        if ids.is_empty() {
            caps.remove("extensions");
        }
        return Ok(ids);
    }
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn extensions_join_the_capabilities_and_bad_ids_are_refused() {
        let mut caps = json!({"sampling": {}});
        let ids = declare(
            Some(&json!([
                "io.modelcontextprotocol/ui",
                "com.example/feature-x"
            ])),
            &mut caps,
            "persona.a",
            "t",
        )
        .expect("valid");
        assert_eq!(
            ids,
            vec!["com.example/feature-x", "io.modelcontextprotocol/ui"]
        );
        assert_eq!(caps["extensions"]["io.modelcontextprotocol/ui"], json!({}));
        let mut caps = json!({});
        let ids = declare(
            Some(&json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}})),
            &mut caps,
            "p",
            "t",
        )
        .expect("valid");
        assert_eq!(ids.len(), 1);
        assert_eq!(
            caps["extensions"]["io.modelcontextprotocol/ui"]["mimeTypes"][0],
            "text/html"
        );
        for bad in [
            json!(["ui"]),
            json!(["io/ui"]),
            json!(["io.x/a/b"]),
            json!({"io.x/a": 1}),
            json!(3),
        ] {
            assert!(
                declare(Some(&bad), &mut json!({}), "p", "t").is_err(),
                "{bad}"
            );
        }
        let mut none = json!({});
        assert_eq!(
            declare(None, &mut none, "p", "t").expect("none"),
            Vec::<String>::new()
        );
        assert_eq!(none, json!({}), "nothing added");
    }
}
