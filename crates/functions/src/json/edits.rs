//! The value rules of MySQL's JSON functions that combine or compare whole documents:
//! JSON_OVERLAPS, JSON_MERGE_PRESERVE (JSON_MERGE), JSON_MERGE_PATCH (RFC 7396), JSON_DEPTH,
//! and the LIKE matching JSON_SEARCH uses.

use serde_json::{Map, Value};

/// JSON equality as MySQL compares values: numbers by value (`1` equals `1.0`).
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, xv)| y.get(k).is_some_and(|yv| json_equal(xv, yv)))
        }
        (x, y) => x == y,
    }
}

/// JSON_OVERLAPS: two arrays share an element, two objects a member (key and value), an array
/// holds the other (non-array) value, or two scalars are equal. An object and a scalar never
/// overlap.
pub fn overlaps(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.iter().any(|xv| y.iter().any(|yv| json_equal(xv, yv)))
        }
        (Value::Array(x), other) | (other, Value::Array(x)) => {
            x.iter().any(|xv| json_equal(xv, other))
        }
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .any(|(k, xv)| y.get(k).is_some_and(|yv| json_equal(xv, yv))),
        (Value::Object(_), _) | (_, Value::Object(_)) => false,
        (x, y) => json_equal(x, y),
    }
}

/// JSON_MERGE_PRESERVE of two documents: two objects merge member by member (a key in both
/// merges its two values), anything else becomes arrays (a non-array wrapped as one) joined.
pub fn merge_preserve(a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::Object(mut x), Value::Object(y)) => {
            for (k, yv) in y {
                match x.get_mut(&k) {
                    Some(xv) => {
                        let merged = merge_preserve(std::mem::take(xv), yv);
                        *xv = merged;
                    }
                    None => {
                        x.insert(k, yv);
                    }
                }
            }
            Value::Object(x)
        }
        (a, b) => {
            let mut items = into_array(a);
            items.extend(into_array(b));
            Value::Array(items)
        }
    }
}

fn into_array(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items,
        other => vec![other],
    }
}

/// JSON_MERGE_PATCH of two documents (RFC 7396): a patch that is not an object replaces the
/// target; an object patch sets its members on the target (an object, or `{}` in place of
/// anything else), a null member removing the key.
pub fn merge_patch(target: Value, patch: Value) -> Value {
    let Value::Object(patch) = patch else {
        return patch;
    };
    let mut target = match target {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    for (k, pv) in patch {
        if pv.is_null() {
            target.shift_remove(&k);
        } else if let Some(tv) = target.get_mut(&k) {
            let merged = merge_patch(std::mem::take(tv), pv);
            *tv = merged;
        } else {
            target.insert(k, merge_patch(Value::Null, pv));
        }
    }
    Value::Object(target)
}

/// JSON_DEPTH: 1 for a scalar or an empty array or object, else one more than the deepest
/// value inside.
pub fn depth(v: &Value) -> i64 {
    let inner = match v {
        Value::Array(a) => a.iter().map(depth).max(),
        Value::Object(m) => m.values().map(depth).max(),
        _ => None,
    };
    inner.map_or(1, |d| d + 1)
}

/// `text LIKE pattern ESCAPE escape`: `%` any run of characters, `_` one character, the
/// escape character making the next one literal.
pub fn like(text: &str, pattern: &str, escape: char) -> bool {
    let text: Vec<char> = text.chars().collect();
    let pattern: Vec<char> = pattern.chars().collect();
    like_from(&text, &pattern, escape)
}

fn like_from(text: &[char], pattern: &[char], escape: char) -> bool {
    let Some((&p, rest)) = pattern.split_first() else {
        return text.is_empty();
    };
    match p {
        '%' => (0..=text.len()).any(|skip| like_from(&text[skip..], rest, escape)),
        '_' => !text.is_empty() && like_from(&text[1..], rest, escape),
        c if c == escape && !rest.is_empty() => {
            text.first() == Some(&rest[0]) && like_from(&text[1..], &rest[1..], escape)
        }
        c => text.first() == Some(&c) && like_from(&text[1..], rest, escape),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn overlaps_as_mysql() {
        assert!(overlaps(&json!([1, 3, 5]), &json!([2, 5])));
        assert!(overlaps(&json!({"a": 1, "b": 2}), &json!({"b": 2})));
        assert!(overlaps(&json!(5), &json!([4, 5])));
        assert!(!overlaps(&json!([[1, 2]]), &json!([1, 2])));
        assert!(overlaps(&json!([{"a": 1}]), &json!({"a": 1})));
        assert!(overlaps(&json!(1), &json!(1.0)));
        assert!(!overlaps(&json!({"a": 1}), &json!(1)));
    }

    #[test]
    fn merges_as_mysql() {
        assert_eq!(
            merge_preserve(json!({"a": 1}), json!({"a": [2]})),
            json!({"a": [1, 2]})
        );
        assert_eq!(merge_preserve(json!(1), json!(2)), json!([1, 2]));
        let kept = merge_preserve(json!({"a": 1, "b": 2}), json!({"a": 3}));
        assert_eq!(kept.to_string(), r#"{"a":[1,3],"b":2}"#);
        assert_eq!(
            merge_patch(
                json!({"a": {"x": 1, "y": 2}}),
                json!({"a": {"x": null, "z": 3}})
            ),
            json!({"a": {"y": 2, "z": 3}})
        );
        assert_eq!(
            merge_patch(json!([1]), json!({"b": null, "c": 2})),
            json!({"c": 2})
        );
    }

    #[test]
    fn depth_and_like() {
        assert_eq!(depth(&json!([])), 1);
        assert_eq!(depth(&json!([1, [2]])), 3);
        assert!(like("abc", "%b%", '\\'));
        assert!(like("a%c", "a|%c", '|'));
        assert!(!like("abc", "a|%c", '|'));
        assert!(like("abc", "a_c", '\\'));
    }
}
