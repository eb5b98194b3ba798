//! MySQL's JSON path language, as the `json_*` functions take it: `$` the document,
//! `.key` / `."quoted key"` an object member, `[n]` / `[last]` / `[last-n]` an array element,
//! `.*` every member, `[*]` every element, `**` every descendant. A path without wildcards
//! names at most one value.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Leg {
    Member(String),
    AnyMember,
    /// An index from the start (`[n]`) or from the end (`[last-n]`).
    Element {
        from_end: bool,
        offset: usize,
    },
    AnyElement,
    /// `**`: this value and every value inside it.
    Descendants,
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    legs: Vec<Leg>,
}

impl JsonPath {
    /// Parses `text`; the error says what is wrong (MySQL's "Invalid JSON path expression").
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let bad = |at: usize| {
            format!("Invalid JSON path expression. The error is around character position {at} of '{text}'")
        };
        let chars: Vec<char> = text.trim().chars().collect();
        if chars.first() != Some(&'$') {
            return Err(bad(0));
        }
        let mut legs = Vec::new();
        let mut i = 1;
        while i < chars.len() {
            match chars[i] {
                c if c.is_whitespace() => i += 1,
                '.' => {
                    i += 1;
                    match chars.get(i) {
                        Some('*') => {
                            legs.push(Leg::AnyMember);
                            i += 1;
                        }
                        Some('"') => {
                            let mut name = String::new();
                            i += 1;
                            loop {
                                match chars.get(i) {
                                    None => return Err(bad(i)),
                                    Some('\\') => {
                                        name.push(*chars.get(i + 1).ok_or_else(|| bad(i))?);
                                        i += 2;
                                    }
                                    Some('"') => {
                                        i += 1;
                                        break;
                                    }
                                    Some(c) => {
                                        name.push(*c);
                                        i += 1;
                                    }
                                }
                            }
                            legs.push(Leg::Member(name));
                        }
                        _ => {
                            let start = i;
                            while i < chars.len()
                                && !matches!(chars[i], '.' | '[' | '*')
                                && !chars[i].is_whitespace()
                            {
                                i += 1;
                            }
                            if i == start {
                                return Err(bad(i));
                            }
                            legs.push(Leg::Member(chars[start..i].iter().collect()));
                        }
                    }
                }
                '[' => {
                    let close = chars[i..]
                        .iter()
                        .position(|c| *c == ']')
                        .map(|p| p + i)
                        .ok_or_else(|| bad(i))?;
                    let inner: String = chars[i + 1..close].iter().collect();
                    let inner = inner.trim();
                    legs.push(if inner == "*" {
                        Leg::AnyElement
                    } else if let Some(rest) = inner.strip_prefix("last") {
                        let rest = rest.trim();
                        let offset = if rest.is_empty() {
                            0
                        } else {
                            rest.strip_prefix('-')
                                .and_then(|n| n.trim().parse().ok())
                                .ok_or_else(|| bad(i))?
                        };
                        Leg::Element {
                            from_end: true,
                            offset,
                        }
                    } else {
                        Leg::Element {
                            from_end: false,
                            offset: inner.parse().map_err(|_| bad(i))?,
                        }
                    });
                    i = close + 1;
                }
                '*' if chars.get(i + 1) == Some(&'*') => {
                    legs.push(Leg::Descendants);
                    i += 2;
                }
                _ => return Err(bad(i)),
            }
        }
        if legs.last() == Some(&Leg::Descendants) {
            return Err(bad(chars.len()));
        }
        Ok(JsonPath { legs })
    }

    /// True when the path can name more than one value.
    pub fn has_wildcards(&self) -> bool {
        self.legs
            .iter()
            .any(|l| matches!(l, Leg::AnyMember | Leg::AnyElement | Leg::Descendants))
    }

    /// Every value the path names in `doc`, in document order.
    pub fn select<'a>(&self, doc: &'a Value) -> Vec<&'a Value> {
        let mut current = vec![doc];
        for leg in &self.legs {
            let mut next = Vec::new();
            for v in current {
                match (leg, v) {
                    (Leg::Member(name), Value::Object(m)) => next.extend(m.get(name)),
                    (Leg::AnyMember, Value::Object(m)) => next.extend(m.values()),
                    (Leg::Element { from_end, offset }, Value::Array(a)) => {
                        let index = if *from_end {
                            a.len().checked_sub(1 + offset)
                        } else {
                            Some(*offset)
                        };
                        next.extend(index.and_then(|i| a.get(i)));
                    }
                    // MySQL: a scalar or object is an array of one for [0] and [last].
                    (Leg::Element { offset: 0, .. }, other) => next.push(other),
                    (Leg::AnyElement, Value::Array(a)) => next.extend(a.iter()),
                    (Leg::Descendants, v) => descendants(v, &mut next),
                    _ => {}
                }
            }
            current = next;
        }
        current
    }

    /// The value a path without wildcards names, if the document has it.
    pub fn get<'a>(&self, doc: &'a Value) -> Option<&'a Value> {
        self.select(doc).into_iter().next()
    }
}

fn descendants<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    out.push(v);
    match v {
        Value::Object(m) => m.values().for_each(|c| descendants(c, out)),
        Value::Array(a) => a.iter().for_each(|c| descendants(c, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn select(path: &str, doc: &Value) -> Vec<Value> {
        JsonPath::parse(path)
            .unwrap()
            .select(doc)
            .into_iter()
            .cloned()
            .collect()
    }

    #[test]
    fn paths_name_members_elements_and_wildcards() {
        let doc = json!({"a": [1, {"b": 2}], "c d": 3, "e": {"b": 4}});
        assert_eq!(select("$.a[1].b", &doc), vec![json!(2)]);
        assert_eq!(select("$.\"c d\"", &doc), vec![json!(3)]);
        assert_eq!(select("$.a[last]", &doc), vec![json!({"b": 2})]);
        assert_eq!(select("$.a[last-1]", &doc), vec![json!(1)]);
        assert_eq!(select("$.a[5]", &doc), Vec::<Value>::new());
        assert_eq!(select("$.*.b", &doc), vec![json!(4)]);
        assert_eq!(select("$**.b", &doc), vec![json!(2), json!(4)]);
        assert_eq!(select("$.a[*]", &doc).len(), 2);
        assert_eq!(select("$", &doc), vec![doc.clone()]);
        assert!(JsonPath::parse("a.b").is_err());
        assert!(JsonPath::parse("$.").is_err());
        assert!(JsonPath::parse("$[x]").is_err());
        assert!(JsonPath::parse("$**").is_err());
        assert!(JsonPath::parse("$.*").unwrap().has_wildcards());
    }
}
