//! JSON documents in binary form (how segments store a JSON column): a document is the BSON
//! document `{"": value}` (BSON's root must be a document), written and read with the `bson`
//! crate. BSON keeps object members in their order and gives every value its length, so a path
//! lookup walks only the members and elements on its way (no full parse); the text form comes
//! back byte for byte as the compact text JSON columns have always shown.
//!
//! Values: objects are embedded documents, arrays BSON arrays, strings, booleans and null their
//! BSON kinds. A number is an Int32/Int64 or a Double when it prints back exactly as written;
//! any other number (`2.50`, `1e2`, `-0`, integers past i64) keeps its text as BSON binary of
//! user subtype [`NUMBER_TEXT`]. A document BSON cannot hold (an object key with a NUL
//! character) keeps its whole text as binary of user subtype [`DOCUMENT_TEXT`].

use arrow::array::{Array, BinaryArray, StringArray, StringBuilder};
use arrow::datatypes::{DataType, Field};
use bson::raw::{CStr, RawArray, RawArrayBuf, RawBinaryRef, RawBsonRef, RawDocument};
use bson::spec::BinarySubtype;
use bson::RawDocumentBuf;
use serde_json::{Map, Number, Value};

/// Field metadata key naming how a JSON column's values are encoded (absent: text).
pub const JSON_ENCODING_KEY: &str = "basalt:json_encoding";
/// [`JSON_ENCODING_KEY`]'s value for documents in this module's binary form.
pub const BSON_ENCODING: &str = "bson";

/// True for a column (of a segment, or of a scan's output) that holds binary JSON documents.
pub fn is_binary_json(field: &Field) -> bool {
    field.data_type() == &DataType::Binary
        && field
            .metadata()
            .get(JSON_ENCODING_KEY)
            .is_some_and(|e| e == BSON_ENCODING)
}

/// The binary form of a JSON text field: Arrow Binary, marked with [`JSON_ENCODING_KEY`].
pub fn binary_field(field: &Field) -> Field {
    let mut metadata = field.metadata().clone();
    metadata.insert(JSON_ENCODING_KEY.to_string(), BSON_ENCODING.to_string());
    field
        .clone()
        .with_data_type(DataType::Binary)
        .with_metadata(metadata)
}

/// BSON binary subtype of a number kept as its JSON text.
pub const NUMBER_TEXT: u8 = 0x80;
/// BSON binary subtype of a whole document kept as its JSON text.
pub const DOCUMENT_TEXT: u8 = 0x81;

/// The key of the root value.
const ROOT: &str = "";

/// A binary document's root: a BSON value, or a document that is kept as text.
pub enum Root<'a> {
    Value(RawBsonRef<'a>),
    Text(&'a str),
}

/// The binary form of JSON text, or why the text is no JSON document.
pub fn encode_text(text: &str) -> Result<Vec<u8>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(encode_value(&value))
}

/// The binary form of a JSON value.
pub fn encode_value(value: &Value) -> Vec<u8> {
    let mut doc = RawDocumentBuf::new();
    let root = <&CStr>::try_from(ROOT).expect("the empty key has no NUL");
    match bson_value(value) {
        Some(Encoded::Document(d)) => doc.append(root, d),
        Some(Encoded::Array(a)) => doc.append(root, a),
        Some(Encoded::Scalar(s)) => doc.append(root, s.as_ref()),
        None => {
            let text = value.to_string();
            doc.append(root, binary(DOCUMENT_TEXT, text.as_bytes()));
        }
    }
    doc.into_bytes()
}

/// One encoded value: containers are built bottom up.
enum Encoded {
    Document(RawDocumentBuf),
    Array(RawArrayBuf),
    Scalar(Scalar),
}

enum Scalar {
    Null,
    Bool(bool),
    Int32(i32),
    Int64(i64),
    Double(f64),
    String(String),
    NumberText(String),
}

impl Scalar {
    fn as_ref(&self) -> RawBsonRef<'_> {
        match self {
            Scalar::Null => RawBsonRef::Null,
            Scalar::Bool(b) => RawBsonRef::Boolean(*b),
            Scalar::Int32(i) => RawBsonRef::Int32(*i),
            Scalar::Int64(i) => RawBsonRef::Int64(*i),
            Scalar::Double(d) => RawBsonRef::Double(*d),
            Scalar::String(s) => RawBsonRef::String(s),
            Scalar::NumberText(t) => binary(NUMBER_TEXT, t.as_bytes()),
        }
    }
}

fn binary(subtype: u8, bytes: &[u8]) -> RawBsonRef<'_> {
    RawBsonRef::Binary(RawBinaryRef {
        subtype: BinarySubtype::UserDefined(subtype),
        bytes,
    })
}

/// `None` when the value has an object key BSON cannot hold.
fn bson_value(value: &Value) -> Option<Encoded> {
    Some(match value {
        Value::Null => Encoded::Scalar(Scalar::Null),
        Value::Bool(b) => Encoded::Scalar(Scalar::Bool(*b)),
        Value::String(s) => Encoded::Scalar(Scalar::String(s.clone())),
        Value::Number(n) => Encoded::Scalar(number(n)),
        Value::Array(items) => {
            let mut a = RawArrayBuf::new();
            for item in items {
                match bson_value(item)? {
                    Encoded::Document(d) => a.push(d),
                    Encoded::Array(inner) => a.push(inner),
                    Encoded::Scalar(s) => a.push(s.as_ref()),
                }
            }
            Encoded::Array(a)
        }
        Value::Object(members) => {
            let mut d = RawDocumentBuf::new();
            for (key, member) in members {
                let key = <&CStr>::try_from(key.as_str()).ok()?;
                match bson_value(member)? {
                    Encoded::Document(inner) => d.append(key, inner),
                    Encoded::Array(a) => d.append(key, a),
                    Encoded::Scalar(s) => d.append(key, s.as_ref()),
                }
            }
            Encoded::Document(d)
        }
    })
}

/// A number as a BSON number when it prints back as written, else as its text.
fn number(n: &Number) -> Scalar {
    let text = n.to_string();
    if let Some(i) = n.as_i64() {
        if i.to_string() == text {
            return match i32::try_from(i) {
                Ok(small) => Scalar::Int32(small),
                Err(_) => Scalar::Int64(i),
            };
        }
    } else if let Some(f) = n.as_f64() {
        if !n.is_u64() && Number::from_f64(f).is_some_and(|back| back.to_string() == text) {
            return Scalar::Double(f);
        }
    }
    Scalar::NumberText(text)
}

/// The root of a binary document.
pub fn root(bytes: &[u8]) -> Result<Root<'_>, String> {
    let doc = RawDocument::from_bytes(bytes).map_err(|e| e.to_string())?;
    match doc.get(ROOT).map_err(|e| e.to_string())? {
        Some(RawBsonRef::Binary(b)) if b.subtype == BinarySubtype::UserDefined(DOCUMENT_TEXT) => {
            std::str::from_utf8(b.bytes)
                .map(Root::Text)
                .map_err(|e| e.to_string())
        }
        Some(v) => Ok(Root::Value(v)),
        None => Err("binary JSON document without its root value".into()),
    }
}

/// A binary document as a JSON value.
pub fn decode_value(bytes: &[u8]) -> Result<Value, String> {
    match root(bytes)? {
        Root::Value(v) => to_value(v),
        Root::Text(text) => serde_json::from_str(text).map_err(|e| e.to_string()),
    }
}

/// A binary document as its compact JSON text (what the text form of the same document is).
pub fn decode_text(bytes: &[u8]) -> Result<String, String> {
    let mut out = String::with_capacity(bytes.len());
    match root(bytes)? {
        Root::Value(v) => write_text(v, &mut out)?,
        Root::Text(text) => out.push_str(text),
    }
    Ok(out)
}

/// A column of binary documents as their compact text (NULLs kept).
pub fn text_column(docs: &BinaryArray) -> Result<StringArray, String> {
    let mut out = StringBuilder::with_capacity(docs.len(), docs.value_data().len());
    for doc in docs.iter() {
        match doc {
            None => out.append_null(),
            Some(bytes) => out.append_value(decode_text(bytes)?),
        }
    }
    Ok(out.finish())
}

/// A BSON value (part of a binary document) as a JSON value.
pub fn to_value(v: RawBsonRef<'_>) -> Result<Value, String> {
    Ok(match v {
        RawBsonRef::Null => Value::Null,
        RawBsonRef::Boolean(b) => Value::Bool(b),
        RawBsonRef::Int32(i) => Value::from(i),
        RawBsonRef::Int64(i) => Value::from(i),
        RawBsonRef::Double(d) => Number::from_f64(d).map_or(Value::Null, Value::Number),
        RawBsonRef::String(s) => Value::String(s.to_string()),
        RawBsonRef::Binary(b) if b.subtype == BinarySubtype::UserDefined(NUMBER_TEXT) => {
            let text = std::str::from_utf8(b.bytes).map_err(|e| e.to_string())?;
            serde_json::from_str(text).map_err(|e| e.to_string())?
        }
        RawBsonRef::Array(a) => Value::Array(
            a.into_iter()
                .map(|item| to_value(item.map_err(|e| e.to_string())?))
                .collect::<Result<_, _>>()?,
        ),
        RawBsonRef::Document(d) => {
            let mut members = Map::new();
            for member in d {
                let (key, value) = member.map_err(|e| e.to_string())?;
                members.insert(key.as_str().to_string(), to_value(value)?);
            }
            Value::Object(members)
        }
        other => return Err(format!("{other:?} is no JSON value")),
    })
}

/// Writes a BSON value as compact JSON text, as `serde_json` writes the same value.
pub fn write_text(v: RawBsonRef<'_>, out: &mut String) -> Result<(), String> {
    match v {
        RawBsonRef::Null => out.push_str("null"),
        RawBsonRef::Boolean(b) => out.push_str(if b { "true" } else { "false" }),
        RawBsonRef::Int32(i) => out.push_str(&i.to_string()),
        RawBsonRef::Int64(i) => out.push_str(&i.to_string()),
        RawBsonRef::Double(d) => match Number::from_f64(d) {
            Some(n) => out.push_str(&n.to_string()),
            None => out.push_str("null"),
        },
        RawBsonRef::String(s) => write_string(s, out),
        RawBsonRef::Binary(b) if b.subtype == BinarySubtype::UserDefined(NUMBER_TEXT) => {
            out.push_str(std::str::from_utf8(b.bytes).map_err(|e| e.to_string())?)
        }
        RawBsonRef::Array(a) => write_array(a, out)?,
        RawBsonRef::Document(d) => {
            out.push('{');
            for (i, member) in d.into_iter().enumerate() {
                let (key, value) = member.map_err(|e| e.to_string())?;
                if i > 0 {
                    out.push(',');
                }
                write_string(key.as_str(), out);
                out.push(':');
                write_text(value, out)?;
            }
            out.push('}');
        }
        other => return Err(format!("{other:?} is no JSON value")),
    }
    Ok(())
}

fn write_array(a: &RawArray, out: &mut String) -> Result<(), String> {
    out.push('[');
    for (i, item) in a.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_text(item.map_err(|e| e.to_string())?, out)?;
    }
    out.push(']');
    Ok(())
}

/// A JSON string literal, escaped as `serde_json` escapes it.
fn write_string(s: &str, out: &mut String) {
    // serde_json writes valid UTF-8 into the buffer it is given.
    let mut buf = Vec::with_capacity(s.len() + 2);
    if serde_json::to_writer(&mut buf, s).is_ok() {
        out.push_str(&String::from_utf8_lossy(&buf));
    }
}

/// A member of an object value, found without reading the others' contents.
pub fn member<'a>(v: RawBsonRef<'a>, key: &str) -> Option<RawBsonRef<'a>> {
    match v {
        RawBsonRef::Document(d) => d.get(key).ok().flatten(),
        _ => None,
    }
}

/// The elements of an array value (empty for other values).
pub fn elements<'a>(v: RawBsonRef<'a>) -> Vec<RawBsonRef<'a>> {
    match v {
        RawBsonRef::Array(a) => a.into_iter().filter_map(Result::ok).collect(),
        _ => Vec::new(),
    }
}

/// Element `index` of an array value.
pub fn element(v: RawBsonRef<'_>, index: usize) -> Option<RawBsonRef<'_>> {
    match v {
        RawBsonRef::Array(a) => a.into_iter().nth(index).and_then(Result::ok),
        _ => None,
    }
}

/// `count` small JSON objects of one shape (nested object, array, numbers, strings) that
/// vary by row: the documents the ignored timing tests of binary JSON read.
#[doc(hidden)]
pub fn sample_documents(count: usize) -> Vec<String> {
    (0..count)
        .map(|i| {
            format!(
                r#"{{"a":{{"b":{},"c":"v{}"}},"x":{},"name":"user-{i}","tags":["t{}","u"],"score":{}.25}}"#,
                i % 10,
                i % 100,
                i % 7,
                i % 5,
                i % 97
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        let compact = serde_json::from_str::<Value>(text).unwrap().to_string();
        let bytes = encode_text(text).unwrap();
        let back = decode_text(&bytes).unwrap();
        assert_eq!(back, compact, "text of {text}");
        assert_eq!(decode_value(&bytes).unwrap().to_string(), compact);
        back
    }

    #[test]
    fn text_comes_back_byte_for_byte() {
        assert_eq!(
            round_trip(
                r#"{"name": "ann", "tags": ["a", "b"], "age": 31, "addr": {"city": "Oslo"}}"#
            ),
            r#"{"name":"ann","tags":["a","b"],"age":31,"addr":{"city":"Oslo"}}"#
        );
        round_trip(r#"[1, 2.5, null, true, false, "x\"y\u0001\n", {}, []]"#);
        round_trip(r#""just text""#);
        round_trip("5");
        round_trip("null");
        round_trip(r#"{"b": 1, "a": 2, "b": 3}"#);
        round_trip(r#"{"é": "ü☃", "": {"": []}}"#);
    }

    #[test]
    fn numbers_keep_their_written_form() {
        assert_eq!(
            round_trip("[2.50, 1e2, -0, 1E-7, 0.1]"),
            "[2.50,1e+2,-0,1e-7,0.1]"
        );
        assert_eq!(
            round_trip("[18446744073709551615, 123456789012345678901234567890, 9223372036854775807, -2147483649]"),
            "[18446744073709551615,123456789012345678901234567890,9223372036854775807,-2147483649]"
        );
    }

    #[test]
    fn keys_bson_cannot_hold_keep_the_text() {
        let text = r#"{"a\u0000b": 1, "c": [2]}"#;
        let bytes = encode_text(text).unwrap();
        assert!(matches!(root(&bytes).unwrap(), Root::Text(_)));
        assert_eq!(decode_text(&bytes).unwrap(), r#"{"a\u0000b":1,"c":[2]}"#);
    }

    #[test]
    fn paths_walk_members_and_elements() {
        let bytes = encode_text(r#"{"a": {"b": 5, "c": [10, {"d": "x"}]}}"#).unwrap();
        let Root::Value(doc) = root(&bytes).unwrap() else {
            panic!("a BSON root")
        };
        let a = member(doc, "a").unwrap();
        assert_eq!(to_value(member(a, "b").unwrap()).unwrap(), Value::from(5));
        let c = member(a, "c").unwrap();
        assert_eq!(elements(c).len(), 2);
        let d = member(element(c, 1).unwrap(), "d").unwrap();
        assert_eq!(to_value(d).unwrap(), Value::from("x"));
        assert!(member(a, "zz").is_none() && element(c, 2).is_none());
    }

    /// What binary documents are for: a path lookup walks the members on its way instead of
    /// parsing the whole text. `cargo test -p basalt-common --release json_binary -- --ignored
    /// --nocapture` prints both times.
    #[test]
    #[ignore]
    fn path_lookups_beat_parsing_the_text() {
        let docs = sample_documents(100_000);
        let binary: Vec<Vec<u8>> = docs.iter().map(|d| encode_text(d).unwrap()).collect();
        let started = std::time::Instant::now();
        let parsed = docs
            .iter()
            .filter(|d| {
                let v: Value = serde_json::from_str(d).unwrap();
                v["a"]["b"] == 5
            })
            .count();
        let text_time = started.elapsed();
        let started = std::time::Instant::now();
        let walked = binary
            .iter()
            .filter(|d| {
                let Ok(Root::Value(root)) = root(d) else {
                    return false;
                };
                member(root, "a")
                    .and_then(|a| member(a, "b"))
                    .is_some_and(|b| matches!(b, RawBsonRef::Int32(5)))
            })
            .count();
        let binary_time = started.elapsed();
        println!("text parse {text_time:?}, binary walk {binary_time:?}");
        assert_eq!(parsed, walked);
        assert!(binary_time < text_time);
    }

    #[test]
    fn invalid_text_and_bytes_are_errors() {
        assert!(encode_text("{a: 1}").is_err());
        assert!(decode_text(b"{\"a\":1}").is_err());
        assert!(decode_text(&[]).is_err());
    }
}
