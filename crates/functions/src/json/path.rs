//! MySQL's JSON path language, as the `json_*` functions take it: `$` the document,
//! `.key` / `."quoted key"` an object member, `[n]` / `[last]` / `[last-n]` an array element,
//! `.*` every member, `[*]` every element, `**` every descendant. A path without wildcards
//! names at most one value.

use super::node::JsonNode;
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

    /// Every value the path names in `doc`, in document order (of either form of document).
    pub fn select<N: JsonNode>(&self, doc: N) -> Vec<N> {
        let mut current = vec![doc];
        for leg in &self.legs {
            let mut next = Vec::new();
            for v in current {
                match leg {
                    Leg::Member(name) => next.extend(v.member(name)),
                    Leg::AnyMember => next.extend(v.members().unwrap_or_default()),
                    Leg::Element { from_end, offset } => match v.elements() {
                        Some(a) => {
                            let index = if *from_end {
                                a.len().checked_sub(1 + offset)
                            } else {
                                Some(*offset)
                            };
                            next.extend(index.and_then(|i| a.get(i).copied()));
                        }
                        // MySQL: a scalar or object is an array of one for [0] and [last].
                        None if *offset == 0 => next.push(v),
                        None => {}
                    },
                    Leg::AnyElement => next.extend(v.elements().unwrap_or_default()),
                    Leg::Descendants => descendants(v, &mut next),
                }
            }
            current = next;
        }
        current
    }

    /// The value a path without wildcards names, if the document has it (with wildcards: the
    /// first value it names).
    pub fn get<N: JsonNode>(&self, doc: N) -> Option<N> {
        if self.has_wildcards() {
            return self.select(doc).into_iter().next();
        }
        // One value at each step: walked without collecting.
        let mut v = doc;
        for leg in &self.legs {
            v = match leg {
                Leg::Member(name) => v.member(name)?,
                Leg::Element { from_end, offset } => match v.elements() {
                    Some(a) => {
                        let index = if *from_end {
                            a.len().checked_sub(1 + offset)?
                        } else {
                            *offset
                        };
                        a.get(index).copied()?
                    }
                    None if *offset == 0 => v,
                    None => return None,
                },
                Leg::AnyMember | Leg::AnyElement | Leg::Descendants => return None,
            };
        }
        Some(v)
    }
}

/// The last leg of a path that names one place: a member or an array cell.
#[derive(Debug, Clone, PartialEq)]
pub enum LastLeg {
    Member(String),
    Element { from_end: bool, offset: usize },
}

impl LastLeg {
    /// The index an element leg names in an array of `len` (None before the start).
    pub fn index(from_end: bool, offset: usize, len: usize) -> Option<usize> {
        if from_end {
            len.checked_sub(1 + offset)
        } else {
            Some(offset)
        }
    }
}

impl JsonPath {
    /// The path without its last leg, and that leg; None for `$` or a last leg that is a
    /// wildcard.
    pub fn split_last(&self) -> Option<(JsonPath, LastLeg)> {
        let (last, parent) = self.legs.split_last()?;
        let last = match last {
            Leg::Member(name) => LastLeg::Member(name.clone()),
            Leg::Element { from_end, offset } => LastLeg::Element {
                from_end: *from_end,
                offset: *offset,
            },
            _ => return None,
        };
        Some((
            JsonPath {
                legs: parent.to_vec(),
            },
            last,
        ))
    }

    /// The value a path without wildcards names, to change in place.
    pub fn get_mut<'a>(&self, doc: &'a mut Value) -> Option<&'a mut Value> {
        let mut current = doc;
        for leg in &self.legs {
            current = match (leg, current) {
                (Leg::Member(name), Value::Object(m)) => m.get_mut(name)?,
                (Leg::Element { from_end, offset }, Value::Array(a)) => {
                    let i = LastLeg::index(*from_end, *offset, a.len())?;
                    a.get_mut(i)?
                }
                (Leg::Element { offset: 0, .. }, other) => other,
                _ => return None,
            };
        }
        Some(current)
    }

    /// Every value the path names with the path that names just it (`$.a[1]`), in
    /// document order.
    pub fn select_located<'a>(&self, doc: &'a Value) -> Vec<(String, &'a Value)> {
        let mut current = vec![("$".to_string(), doc)];
        for leg in &self.legs {
            let mut next = Vec::new();
            for (at, v) in current {
                match (leg, v) {
                    (Leg::Member(name), Value::Object(m)) => {
                        if let Some(c) = m.get(name) {
                            next.push((member_path(&at, name), c));
                        }
                    }
                    (Leg::AnyMember, Value::Object(m)) => {
                        next.extend(m.iter().map(|(k, c)| (member_path(&at, k), c)))
                    }
                    (Leg::Element { from_end, offset }, Value::Array(a)) => {
                        if let Some(i) = LastLeg::index(*from_end, *offset, a.len()) {
                            if let Some(c) = a.get(i) {
                                next.push((format!("{at}[{i}]"), c));
                            }
                        }
                    }
                    (Leg::Element { offset: 0, .. }, other) => next.push((at, other)),
                    (Leg::AnyElement, Value::Array(a)) => {
                        next.extend(a.iter().enumerate().map(|(i, c)| (format!("{at}[{i}]"), c)))
                    }
                    (Leg::Descendants, v) => located_descendants(at, v, &mut next),
                    _ => {}
                }
            }
            current = next;
        }
        current
    }
}

/// `at.name`, the name quoted when it is not a plain identifier (MySQL's path output).
pub fn member_path(at: &str, name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    if plain {
        format!("{at}.{name}")
    } else {
        format!("{at}.{}", Value::String(name.to_string()))
    }
}

fn located_descendants<'a>(at: String, v: &'a Value, out: &mut Vec<(String, &'a Value)>) {
    out.push((at.clone(), v));
    match v {
        Value::Object(m) => m
            .iter()
            .for_each(|(k, c)| located_descendants(member_path(&at, k), c, out)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, c)| located_descendants(format!("{at}[{i}]"), c, out)),
        _ => {}
    }
}

fn descendants<N: JsonNode>(v: N, out: &mut Vec<N>) {
    out.push(v);
    for c in v.members().or_else(|| v.elements()).unwrap_or_default() {
        descendants(c, out);
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

    #[test]
    fn located_values_carry_their_paths() {
        let doc = json!({"a": [1, {"b": "x"}], "c d": "x"});
        let root = JsonPath::parse("$").unwrap().select_located(&doc);
        assert_eq!(root, vec![("$".to_string(), &doc)]);
        let all = JsonPath::parse("$**.b").unwrap().select_located(&doc);
        assert_eq!(all, vec![("$.a[1].b".to_string(), &json!("x"))]);
        let quoted = JsonPath::parse("$.*").unwrap().select_located(&doc);
        assert_eq!(quoted[1].0, "$.\"c d\"");
        let mut doc = doc;
        let (parent, last) = JsonPath::parse("$.a[last]").unwrap().split_last().unwrap();
        assert_eq!(
            last,
            LastLeg::Element {
                from_end: true,
                offset: 0
            }
        );
        assert!(parent.get_mut(&mut doc).unwrap().is_array());
    }
}
