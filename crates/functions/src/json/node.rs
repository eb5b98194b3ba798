//! A JSON value as the path language walks it, in either form a document comes in: parsed
//! text (`serde_json::Value`) or a value inside a binary document
//! ([`basalt_common::json_binary`]), which is read where the path leads and nowhere else.

use basalt_common::json_binary;
use bson::raw::RawBsonRef;
use serde_json::Value;

/// One JSON value: what [`super::path::JsonPath::select`] walks and the functions that read
/// only what a path names give back.
pub trait JsonNode: Copy {
    /// Member `name` of an object (None for other values or a missing member).
    fn member(self, name: &str) -> Option<Self>;
    /// The values of an object's members in order; None for other values.
    fn members(self) -> Option<Vec<Self>>;
    /// The elements of an array in order; None for other values.
    fn elements(self) -> Option<Vec<Self>>;
    /// JSON's `null`.
    fn is_null(self) -> bool;
    /// The value, parsed.
    fn to_value(self) -> Result<Value, String>;
    /// The value's compact text (as `serde_json` writes it).
    fn to_text(self) -> Result<String, String>;
    /// MySQL's JSON_LENGTH: an object's members, an array's elements, 1 for a scalar.
    fn length(self) -> usize;
    /// An object's member names in order; None for other values.
    fn keys(self) -> Option<Vec<String>>;
    /// MySQL's JSON_TYPE name of the value.
    fn type_name(self) -> Result<&'static str, String>;
}

/// MySQL's JSON_TYPE name of a parsed value.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NULL",
        Value::Bool(_) => "BOOLEAN",
        Value::Number(n) if n.is_i64() => "INTEGER",
        Value::Number(n) if n.is_u64() => "UNSIGNED INTEGER",
        Value::Number(_) => "DOUBLE",
        Value::String(_) => "STRING",
        Value::Array(_) => "ARRAY",
        Value::Object(_) => "OBJECT",
    }
}

impl JsonNode for &Value {
    fn member(self, name: &str) -> Option<Self> {
        self.as_object()?.get(name)
    }

    fn members(self) -> Option<Vec<Self>> {
        Some(self.as_object()?.values().collect())
    }

    fn elements(self) -> Option<Vec<Self>> {
        Some(self.as_array()?.iter().collect())
    }

    fn is_null(self) -> bool {
        Value::is_null(self)
    }

    fn to_value(self) -> Result<Value, String> {
        Ok(self.clone())
    }

    fn to_text(self) -> Result<String, String> {
        Ok(self.to_string())
    }

    fn length(self) -> usize {
        match self {
            Value::Object(m) => m.len(),
            Value::Array(a) => a.len(),
            _ => 1,
        }
    }

    fn keys(self) -> Option<Vec<String>> {
        Some(self.as_object()?.keys().cloned().collect())
    }

    fn type_name(self) -> Result<&'static str, String> {
        Ok(type_name(self))
    }
}

/// A value inside a binary JSON document.
#[derive(Debug, Clone, Copy)]
pub struct BinaryNode<'a>(pub RawBsonRef<'a>);

impl JsonNode for BinaryNode<'_> {
    fn member(self, name: &str) -> Option<Self> {
        json_binary::member(self.0, name).map(BinaryNode)
    }

    fn members(self) -> Option<Vec<Self>> {
        match self.0 {
            RawBsonRef::Document(d) => Some(
                d.into_iter()
                    .filter_map(Result::ok)
                    .map(|(_, v)| BinaryNode(v))
                    .collect(),
            ),
            _ => None,
        }
    }

    fn elements(self) -> Option<Vec<Self>> {
        match self.0 {
            RawBsonRef::Array(_) => Some(
                json_binary::elements(self.0)
                    .into_iter()
                    .map(BinaryNode)
                    .collect(),
            ),
            _ => None,
        }
    }

    fn is_null(self) -> bool {
        matches!(self.0, RawBsonRef::Null)
    }

    fn to_value(self) -> Result<Value, String> {
        json_binary::to_value(self.0)
    }

    fn to_text(self) -> Result<String, String> {
        let mut out = String::new();
        json_binary::write_text(self.0, &mut out)?;
        Ok(out)
    }

    fn length(self) -> usize {
        match self.0 {
            RawBsonRef::Document(d) => d.into_iter().count(),
            RawBsonRef::Array(a) => a.into_iter().count(),
            _ => 1,
        }
    }

    fn keys(self) -> Option<Vec<String>> {
        match self.0 {
            RawBsonRef::Document(d) => Some(
                d.into_iter()
                    .filter_map(Result::ok)
                    .map(|(k, _)| k.to_string())
                    .collect(),
            ),
            _ => None,
        }
    }

    fn type_name(self) -> Result<&'static str, String> {
        Ok(match self.0 {
            RawBsonRef::Document(_) => "OBJECT",
            RawBsonRef::Array(_) => "ARRAY",
            // A scalar: as its parsed value says (a number kept as written has its kind in
            // its text).
            scalar => type_name(&json_binary::to_value(scalar)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::path::JsonPath;

    /// Every path gives the same values from a document's text and from its binary form.
    #[test]
    fn both_forms_select_the_same_values() {
        let text = r#"{"a":{"b":[1,2.5,{"c":null}],"d":"x"},"e":[[3],4],"f":12345678901234}"#;
        let parsed: Value = serde_json::from_str(text).unwrap();
        let bytes = json_binary::encode_text(text).unwrap();
        let json_binary::Root::Value(root) = json_binary::root(&bytes).unwrap() else {
            panic!("a document without NUL keys has a binary root");
        };
        for path in [
            "$",
            "$.a",
            "$.a.b",
            "$.a.b[1]",
            "$.a.b[last]",
            "$.a.b[last-2].c",
            "$.a.d[0]",
            "$.a.*",
            "$.e[*]",
            "$**.c",
            "$.e[0][0]",
            "$.f",
            "$.missing",
            "$.a.b[9]",
            "$[0].a",
        ] {
            let p = JsonPath::parse(path).unwrap();
            let from_text: Vec<String> = p.select(&parsed).iter().map(|v| v.to_string()).collect();
            let from_binary: Vec<String> = p
                .select(BinaryNode(root))
                .iter()
                .map(|v| v.to_text().unwrap())
                .collect();
            assert_eq!(from_text, from_binary, "{path}");
        }
        for path in [
            "$",
            "$.a",
            "$.a.b",
            "$.a.d",
            "$.a.b[2].c",
            "$.f",
            "$.a.b[1]",
        ] {
            let p = JsonPath::parse(path).unwrap();
            let (t, b) = (p.get(&parsed).unwrap(), p.get(BinaryNode(root)).unwrap());
            assert_eq!(t.length(), b.length(), "{path}");
            assert_eq!(t.keys(), b.keys(), "{path}");
            assert_eq!(t.type_name(), b.type_name(), "{path}");
        }
        let null = JsonPath::parse("$.a.b[2].c").unwrap();
        assert!(null.get(BinaryNode(root)).unwrap().is_null());
    }
}
