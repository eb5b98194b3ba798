//! Values of JSON and nested columns read from text (a CSV field, a string in INSERT, a JSON
//! load's sub-document): JSON documents are validated and kept in compact form; Doris's
//! ARRAY/MAP/STRUCT literals (`[1, 2]`, `{"k": 1}`, `{"f": 1}` for a struct's named fields, also
//! with single quotes or bare map keys: `['a']`, `{1: 'x'}`) are decoded into Arrow arrays of
//! the column's type by arrow-json. A struct written by position (`{1, 'x'}`) is not read.

use arrow::array::{Array, ArrayRef, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::json::ReaderBuilder;
use std::sync::Arc;

/// A JSON document in compact form (object keys keep their order), or why it is not one.
pub fn json_document(text: &str) -> Result<String, String> {
    serde_json::from_str::<serde_json::Value>(text)
        .map(|v| v.to_string())
        .map_err(|e| e.to_string())
}

/// Every value of `strings` as a compact JSON document; rows that are not JSON become NULL and
/// are listed with their reason.
pub fn json_column(strings: &StringArray) -> (StringArray, Vec<(usize, String)>) {
    let mut failed = Vec::new();
    let out: StringArray = strings
        .iter()
        .enumerate()
        .map(|(row, v)| {
            v.and_then(|text| match json_document(text) {
                Ok(doc) => Some(doc),
                Err(reason) => {
                    failed.push((row, reason));
                    None
                }
            })
        })
        .collect();
    (out, failed)
}

/// Decodes each text value into `target` (a List, Map or Struct type); rows that do not read
/// as a value of that type become NULL and are listed with their reason.
pub fn nested_column(
    strings: &StringArray,
    target: &DataType,
) -> Result<(ArrayRef, Vec<(usize, String)>), String> {
    let mut failed = Vec::new();
    let mut documents: Vec<Option<String>> = Vec::with_capacity(strings.len());
    for (row, v) in strings.iter().enumerate() {
        documents.push(match v {
            None => None,
            Some(text) => match doris_literal_as_json(text) {
                Ok(doc) => Some(doc),
                Err(reason) => {
                    failed.push((row, reason));
                    None
                }
            },
        });
    }
    match decode(&documents, target) {
        Ok(array) => Ok((array, failed)),
        Err(_) => {
            // Some row has the wrong shape: decode row by row to name the culprits.
            let mut rows: Vec<ArrayRef> = Vec::with_capacity(documents.len());
            for (row, doc) in documents.iter().enumerate() {
                let one = match decode(std::slice::from_ref(doc), target) {
                    Ok(a) => a,
                    Err(reason) => {
                        failed.push((row, reason));
                        decode(&[None], target)?
                    }
                };
                rows.push(one);
            }
            let refs: Vec<&dyn Array> = rows.iter().map(|a| a.as_ref()).collect();
            let array = arrow::compute::concat(&refs).map_err(|e| e.to_string())?;
            failed.sort_by_key(|(row, _)| *row);
            Ok((array, failed))
        }
    }
}

/// Decodes JSON documents (None = NULL) into one array of `target` type.
fn decode(documents: &[Option<String>], target: &DataType) -> Result<ArrayRef, String> {
    // TIMEs are decoded as text, then read as MySQL's spans (past 24 hours, negative).
    if let Some(text) = crate::nested_times::times_as_text(target) {
        let array = decode(documents, &text)?;
        return crate::nested_times::text_as_times(&array, target);
    }
    let schema = Arc::new(Schema::new(vec![Field::new("v", target.clone(), true)]));
    let mut decoder = ReaderBuilder::new(schema)
        .with_batch_size(documents.len().max(1))
        .with_strict_mode(true)
        .build_decoder()
        .map_err(|e| e.to_string())?;
    let mut lines = String::new();
    for doc in documents {
        match doc {
            Some(d) => {
                lines.push_str("{\"v\":");
                lines.push_str(d);
                lines.push_str("}\n");
            }
            None => lines.push_str("{}\n"),
        }
    }
    decoder
        .decode(lines.as_bytes())
        .map_err(|e| e.to_string())?;
    let batch = decoder
        .flush()
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "no value".to_string())?;
    if batch.num_rows() != documents.len() {
        return Err(format!(
            "expected {} values, read {}",
            documents.len(),
            batch.num_rows()
        ));
    }
    Ok(batch.column(0).clone())
}

/// Rewrites Doris's literal forms as JSON: single-quoted strings become double-quoted, and a
/// bare key before `:` (a number, `true`, an unquoted word) is quoted. Text that is already
/// JSON is returned unchanged.
pub fn doris_literal_as_json(text: &str) -> Result<String, String> {
    let trimmed = text.trim();
    if serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok() {
        return Ok(trimmed.to_string());
    }
    let chars: Vec<char> = trimmed.chars().collect();
    let mut out = String::with_capacity(trimmed.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' | '"' => {
                let (s, next) = quoted(&chars, i)?;
                out.push_str(&serde_json::Value::String(s).to_string());
                i = next;
            }
            c if c.is_alphanumeric() || c == '-' || c == '+' || c == '.' || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || "-+._".contains(chars[i])) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let mut j = i;
                while j < chars.len() && chars[j].is_whitespace() {
                    j += 1;
                }
                let is_key = j < chars.len() && chars[j] == ':';
                let lower = word.to_ascii_lowercase();
                if is_key {
                    out.push_str(&serde_json::Value::String(word).to_string());
                } else if lower == "null" || lower == "true" || lower == "false" {
                    out.push_str(&lower);
                } else {
                    out.push_str(&word);
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    serde_json::from_str::<serde::de::IgnoredAny>(&out)
        .map(|_| out)
        .map_err(|e| format!("'{trimmed}' is not an ARRAY, MAP or STRUCT value: {e}"))
}

/// The string quoted at `chars[start]` (by ' or "), with backslash escapes and a doubled quote
/// read as one; and the index after its closing quote.
fn quoted(chars: &[char], start: usize) -> Result<(String, usize), String> {
    let q = chars[start];
    let mut s = String::new();
    let mut i = start + 1;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            let e = chars[i + 1];
            s.push(match e {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                '0' => '\0',
                other => other,
            });
            i += 2;
        } else if c == q {
            if i + 1 < chars.len() && chars[i + 1] == q {
                s.push(q);
                i += 2;
            } else {
                return Ok((s, i + 1));
            }
        } else {
            s.push(c);
            i += 1;
        }
    }
    Err("unterminated string".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::AsArray;
    use arrow::datatypes::{Fields, Int32Type};

    #[test]
    fn json_documents_are_compact_and_keep_key_order() {
        assert_eq!(
            json_document(r#"{ "b" : 1, "a" : [1, 2 ] }"#).unwrap(),
            r#"{"b":1,"a":[1,2]}"#
        );
        assert!(json_document("{a:1}").is_err());
        let (out, failed) = json_column(&StringArray::from(vec![Some("1"), Some("x"), None]));
        assert_eq!(out.value(0), "1");
        assert!(out.is_null(1) && out.is_null(2));
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].0, 1);
    }

    #[test]
    fn doris_literals_read_as_json() {
        assert_eq!(
            doris_literal_as_json("['a', 'b''c']").unwrap(),
            r#"["a", "b'c"]"#
        );
        assert_eq!(
            doris_literal_as_json("{1:2, 3:NULL}").unwrap(),
            r#"{"1":2, "3":null}"#
        );
        assert_eq!(doris_literal_as_json(" [1,2] ").unwrap(), "[1,2]");
        assert!(doris_literal_as_json("[1,2").is_err());
    }

    #[test]
    fn arrays_maps_and_structs_decode_with_bad_rows_named() {
        let list = DataType::List(Arc::new(Field::new("item", DataType::Int32, true)));
        let strings = StringArray::from(vec![
            Some("[1, null, 3]"),
            Some("[\"x\"]"),
            None,
            Some("[]"),
        ]);
        let (array, failed) = nested_column(&strings, &list).unwrap();
        assert_eq!(array.len(), 4);
        assert_eq!(failed.iter().map(|f| f.0).collect::<Vec<_>>(), vec![1]);
        let first = array.as_list::<i32>().value(0);
        let ints = first.as_primitive::<Int32Type>();
        assert_eq!(
            (ints.value(0), ints.is_null(1), ints.value(2)),
            (1, true, 3)
        );
        assert!(array.is_null(1) && array.is_null(2) && array.is_valid(3));

        let entries = Field::new(
            "entries",
            DataType::Struct(Fields::from(vec![
                Field::new("key", DataType::Int32, false),
                Field::new("value", DataType::Utf8, true),
            ])),
            false,
        );
        let map = DataType::Map(Arc::new(entries), false);
        let (array, failed) =
            nested_column(&StringArray::from(vec!["{1:'a', 2:null}"]), &map).unwrap();
        assert!(failed.is_empty());
        assert_eq!(array.as_map().value(0).len(), 2);

        let st = DataType::Struct(Fields::from(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Utf8, true),
        ]));
        let (array, failed) =
            nested_column(&StringArray::from(vec![r#"{"a": 1, "b": "x"}"#]), &st).unwrap();
        assert!(failed.is_empty());
        assert_eq!(array.as_struct().column(1).as_string::<i32>().value(0), "x");
    }
}
