//! Arrays generated from a schema: tuples (`prefixItems`, an `items` list), item
//! counts, `contains`, and unique items.

use std::borrow::Cow;

use rand::Rng;
use serde_json::{json, Value};

use super::schema::same;
use super::{Gen, STEPS};

impl<R: Rng> Gen<'_, R> {
    /// An array: a tuple's prefix, then items of `items` (or `contains` first), as many
    /// as the bounds allow and few inside recursion, unique when asked.
    pub(super) fn array(&mut self, s: &Value) -> Value {
        let count = |k: &str| {
            s.get(k)
                .and_then(Value::as_u64)
                .map(|n| n.min(1024) as usize)
        };
        let min = count("minItems").unwrap_or(0);
        let mut max = count("maxItems").unwrap_or(min.max(1) + 2).max(min);
        let prefix: &[Value] = s
            .get("prefixItems")
            .or_else(|| s.get("items").filter(|i| i.is_array()))
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        let rest = match (s.get("prefixItems"), s.get("items")) {
            (Some(_), rest) => rest,
            (None, Some(Value::Array(_))) => s.get("additionalItems"),
            (None, rest) => rest,
        };
        if rest == Some(&Value::Bool(false)) {
            max = max.min(prefix.len().max(min));
        }
        let lo = if self.shallow() {
            min
        } else {
            min.max(1).min(max)
        };
        // Inside a recursive model each level adds fewer items, so a tree stays small.
        let spread = if self.refs > 1 { 1 } else { 3 };
        let hi = if self.shallow() {
            lo
        } else {
            max.min(lo + spread)
        };
        let n = self.rng.random_range(lo..=hi.max(lo));
        let unique = s.get("uniqueItems") == Some(&Value::Bool(true));
        let any = json!({});
        let mut out: Vec<Value> = Vec::with_capacity(n);
        // `contains`: the first items (past a tuple's) are drawn from it.
        let contains = s.get("contains").filter(|c| c.is_object());
        let wanted = contains.map_or(0, |_| count("minContains").unwrap_or(1).min(max));
        let n = n
            .max(prefix.len().min(max))
            .max((prefix.len() + wanted).min(max));
        for i in 0..n {
            let item = match contains {
                Some(c) if i >= prefix.len() && i < prefix.len() + wanted => match rest {
                    Some(r @ Value::Object(_)) => Cow::Owned(json!({"allOf": [r, c]})),
                    _ => Cow::Borrowed(c),
                },
                _ => Cow::Borrowed(prefix.get(i).or(rest).unwrap_or(&any)),
            };
            let item = item.as_ref();
            let mut v = self.value(item, None);
            if unique {
                let mut tries = 0;
                while out.iter().any(|o| same(o, &v)) && tries < 16 && self.steps <= STEPS {
                    v = self.value(item, None);
                    tries += 1;
                }
                if out.iter().any(|o| same(o, &v)) {
                    break;
                }
            }
            out.push(v);
        }
        Value::Array(out)
    }
}
