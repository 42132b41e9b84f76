//! Answering the server's requests: what a persona responds when the server asks
//! something of a client — a canned sampling message, an elicitation answer generated
//! from `requestedSchema`, the persona's roots. The same responses serve legacy
//! server→client requests and modern `inputRequests` (MRTR). Anything not declared gets
//! -32601, as the spec says.

use crate::plan::{ElicitationReply, ReplyPolicy};
use crate::protocol::jsonrpc::codes;
use crate::protocol::{methods, RpcError};
use rand::distr::Distribution;
use rand::Rng;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// The persona's response to one request from the server, and how long it waits before
/// giving it (its configured "thinking" delay).
#[derive(Debug)]
pub struct Response {
    pub result: Result<Value, RpcError>,
    pub delay: Duration,
}

impl Response {
    fn now(result: Result<Value, RpcError>) -> Response {
        Response {
            result,
            delay: Duration::ZERO,
        }
    }
}

/// Respond to the server's `method` request as the persona's answer settings say.
pub fn respond(
    replies: &ReplyPolicy,
    method: &str,
    params: Option<&Value>,
    rng: &mut impl Rng,
) -> Response {
    match method {
        methods::PING => Response::now(Ok(json!({}))),
        methods::SAMPLING_CREATE_MESSAGE => match &replies.sampling {
            Some(s) => Response {
                result: Ok(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": s.text},
                    "model": s.model,
                    "stopReason": "endTurn",
                })),
                delay: s.delay,
            },
            None => Response::now(Err(not_declared(method))),
        },
        methods::ELICITATION_CREATE => match &replies.elicitation {
            Some(e) => elicit(e, params, rng),
            None => Response::now(Err(not_declared(method))),
        },
        methods::ROOTS_LIST => match &replies.roots {
            Some(roots) => Response::now(Ok(json!({"roots": roots}))),
            None => Response::now(Err(not_declared(method))),
        },
        _ => Response::now(Err(not_declared(method))),
    }
}

/// An elicitation: an action drawn by the persona's weights; accepted forms are filled
/// from `requestedSchema`.
fn elicit(e: &ElicitationReply, params: Option<&Value>, rng: &mut impl Rng) -> Response {
    let mode = params
        .and_then(|p| p.get("mode"))
        .and_then(Value::as_str)
        .unwrap_or("form");
    if mode == "url" && !e.url_mode {
        return Response::now(Err(RpcError {
            code: codes::INVALID_PARAMS,
            message: "URL-mode elicitation was not declared".into(),
            data: None,
        }));
    }
    let action = ["accept", "decline", "cancel"][e.actions.sample(rng)];
    let result = match (action, mode) {
        ("accept", "url") => json!({"action": "accept"}),
        ("accept", _) => {
            let schema = params.and_then(|p| p.get("requestedSchema"));
            json!({"action": "accept", "content": fill_form(schema, rng)})
        }
        (other, _) => json!({"action": other}),
    };
    Response {
        result: Ok(result),
        delay: e.delay,
    }
}

fn not_declared(method: &str) -> RpcError {
    RpcError {
        code: codes::METHOD_NOT_FOUND,
        message: format!("Method not found: {method}"),
        data: None,
    }
}

/// Content for an elicitation form: a value for every property of the (flat) requested
/// schema, respecting types, enums, ranges and string lengths.
pub fn fill_form(schema: Option<&Value>, rng: &mut impl Rng) -> Value {
    let mut out = Map::new();
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    for (name, prop) in props.into_iter().flatten() {
        if let Some(v) = value_for(prop, rng) {
            out.insert(name.clone(), v);
        }
    }
    Value::Object(out)
}

fn value_for(prop: &Value, rng: &mut impl Rng) -> Option<Value> {
    if let Some(d) = prop.get("default") {
        return Some(d.clone());
    }
    let pick = |options: &Vec<Value>, rng: &mut dyn rand::RngCore| -> Option<Value> {
        if options.is_empty() {
            None
        } else {
            options.get(rng.random_range(0..options.len())).cloned()
        }
    };
    if let Some(options) = prop.get("enum").and_then(Value::as_array) {
        return pick(options, rng);
    }
    if let Some(options) = prop.get("oneOf").and_then(Value::as_array) {
        let consts: Vec<Value> = options
            .iter()
            .filter_map(|o| o.get("const").cloned())
            .collect();
        if !consts.is_empty() {
            return pick(&consts, rng);
        }
    }
    let num = |k: &str| prop.get(k).and_then(Value::as_f64);
    match prop.get("type").and_then(Value::as_str) {
        Some("boolean") => Some(Value::Bool(rng.random_bool(0.5))),
        Some("integer") => {
            let lo = num("minimum").unwrap_or(0.0).ceil() as i64;
            let hi = num("maximum").unwrap_or(lo as f64 + 100.0).floor() as i64;
            Some(json!(if hi >= lo {
                rng.random_range(lo..=hi)
            } else {
                lo
            }))
        }
        Some("number") => {
            let lo = num("minimum").unwrap_or(0.0);
            let hi = num("maximum").unwrap_or(lo + 100.0);
            Some(json!(if hi > lo {
                rng.random_range(lo..hi)
            } else {
                lo
            }))
        }
        Some("array") => {
            let items = prop
                .get("items")
                .and_then(|i| i.get("enum").or_else(|| i.get("anyOf")))
                .and_then(Value::as_array);
            let first = items
                .and_then(|v| v.first())
                .map(|v| v.get("const").cloned().unwrap_or_else(|| v.clone()));
            Some(Value::Array(first.into_iter().collect()))
        }
        // Strings, and anything without a type: a string is the safest guess.
        _ => {
            let format = prop.get("format").and_then(Value::as_str);
            let text = match format {
                Some("email") => "fleet@example.com".to_string(),
                Some("uri") => "https://example.com/fleet".to_string(),
                Some("date") => "2026-07-28".to_string(),
                Some("date-time") => "2026-07-28T12:00:00Z".to_string(),
                _ => {
                    let min = prop.get("minLength").and_then(Value::as_u64).unwrap_or(0);
                    let max = prop.get("maxLength").and_then(Value::as_u64).unwrap_or(64);
                    let mut s = String::from("fleet");
                    while (s.len() as u64) < min {
                        s.push('x');
                    }
                    s.truncate(usize::try_from(max.max(1)).unwrap_or(64));
                    s
                }
            };
            Some(Value::String(text))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{ElicitationReply, SamplingReply};
    use rand::distr::weighted::WeightedIndex;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn answers(accept: u32, decline: u32, cancel: u32) -> ReplyPolicy {
        ReplyPolicy {
            sampling: Some(SamplingReply {
                text: "hi".into(),
                model: "m".into(),
                delay: Duration::from_millis(3),
            }),
            elicitation: Some(ElicitationReply {
                actions: WeightedIndex::new([accept, decline, cancel]).expect("weights"),
                delay: Duration::ZERO,
                url_mode: false,
            }),
            roots: Some(json!([{"uri": "file:///w"}])),
        }
    }

    #[test]
    fn declared_features_answer_and_others_get_method_not_found() {
        let mut rng = SmallRng::seed_from_u64(1);
        let a = answers(1, 0, 0);
        let Response { result: r, delay } =
            respond(&a, methods::SAMPLING_CREATE_MESSAGE, None, &mut rng);
        assert_eq!(r.expect("sampling")["content"]["text"], "hi");
        assert_eq!(delay, Duration::from_millis(3));
        let r = respond(&a, methods::ROOTS_LIST, None, &mut rng).result;
        assert_eq!(r.expect("roots")["roots"][0]["uri"], "file:///w");
        let r = respond(&a, "tasks/get", None, &mut rng).result;
        assert_eq!(r.expect_err("unknown").code, -32601);
        let none = ReplyPolicy::default();
        for m in [
            methods::SAMPLING_CREATE_MESSAGE,
            methods::ELICITATION_CREATE,
            methods::ROOTS_LIST,
        ] {
            assert_eq!(
                respond(&none, m, None, &mut rng).result.expect_err(m).code,
                -32601
            );
        }
        assert_eq!(
            respond(&none, "ping", None, &mut rng).result.expect("ping"),
            json!({})
        );
    }

    #[test]
    fn elicitation_fills_the_schema_and_follows_weights() {
        let mut rng = SmallRng::seed_from_u64(7);
        let params = json!({"mode": "form", "message": "m", "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 8},
                "age": {"type": "integer", "minimum": 18, "maximum": 20},
                "ok": {"type": "boolean"},
                "color": {"type": "string", "enum": ["red", "green"]},
                "mail": {"type": "string", "format": "email"},
                "n": {"type": "number", "default": 2.5}
            }, "required": ["name"]}});
        let r = respond(
            &answers(1, 0, 0),
            methods::ELICITATION_CREATE,
            Some(&params),
            &mut rng,
        )
        .result;
        let r = r.expect("accept");
        assert_eq!(r["action"], "accept");
        let c = &r["content"];
        assert!(c["name"].as_str().expect("name").len() >= 8);
        assert!((18..=20).contains(&c["age"].as_i64().expect("age")));
        assert!(c["ok"].is_boolean());
        assert!(["red", "green"].contains(&c["color"].as_str().expect("color")));
        assert_eq!(c["mail"], "fleet@example.com");
        assert_eq!(c["n"], 2.5);
        let r = respond(
            &answers(0, 1, 0),
            methods::ELICITATION_CREATE,
            Some(&params),
            &mut rng,
        )
        .result;
        assert_eq!(r.expect("decline"), json!({"action": "decline"}));
        let r = respond(
            &answers(0, 0, 1),
            methods::ELICITATION_CREATE,
            Some(&params),
            &mut rng,
        )
        .result;
        assert_eq!(r.expect("cancel"), json!({"action": "cancel"}));
        let url = json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"});
        let r = respond(
            &answers(1, 0, 0),
            methods::ELICITATION_CREATE,
            Some(&url),
            &mut rng,
        )
        .result;
        assert_eq!(r.expect_err("url not declared").code, -32602);
    }
}
