//! Doris's VARIANT: semi-structured JSON whose paths are read as values (`v['a']['b']`).
//! A VARIANT column is stored like a JSON column (compact JSON text in Arrow `Utf8`, marked
//! `arrow.json`) with one more field mark telling it from JSON, so DESCRIBE, SHOW CREATE TABLE
//! and information_schema say `variant`. A value read at a path is a VARIANT too, carried as
//! its text: a string without its quotes, any other JSON value in compact form, so it compares,
//! computes and casts as that text does (`v['n'] + 1`, `CAST(v['n'] AS INT)`). Text written into
//! a VARIANT is parsed as JSON; text that is no JSON document is NULL (Doris's loads do so).

use arrow::array::StringArray;
use arrow::datatypes::{DataType, Field};
use std::collections::HashMap;

use crate::types::{EXTENSION_NAME_KEY, JSON_EXTENSION_NAME};

/// The field metadata key marking a VARIANT value (a column, or a value read at a path).
pub const VARIANT_KEY: &str = "basalt:variant";
/// The mark's value on a VARIANT column (JSON documents).
const DOCUMENT: &str = "document";
/// The mark's value on a value read at a path (strings without quotes).
const ELEMENT: &str = "element";

/// True when a field holds VARIANT values: a column or a value read at a path.
pub fn is_variant_field(field: &Field) -> bool {
    field.metadata().contains_key(VARIANT_KEY)
}

/// True when a field holds values read from a VARIANT at a path (strings unquoted).
pub fn is_variant_element_field(field: &Field) -> bool {
    field.metadata().get(VARIANT_KEY).map(String::as_str) == Some(ELEMENT)
}

/// The metadata of a VARIANT column's field: the JSON mark and the VARIANT mark.
pub fn column_metadata() -> HashMap<String, String> {
    HashMap::from([
        (
            EXTENSION_NAME_KEY.to_string(),
            JSON_EXTENSION_NAME.to_string(),
        ),
        (VARIANT_KEY.to_string(), DOCUMENT.to_string()),
    ])
}

/// The field of values read from a VARIANT at a path.
pub fn element_field(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true).with_metadata(HashMap::from([(
        VARIANT_KEY.to_string(),
        ELEMENT.to_string(),
    )]))
}

/// Text written into a VARIANT column: each value as a compact JSON document, NULL where it is
/// no JSON document (or empty).
pub fn variant_column(strings: &StringArray) -> StringArray {
    strings
        .iter()
        .map(|v| v.and_then(|text| crate::typed_text::json_document(text).ok()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_is_no_document_is_null() {
        let input = StringArray::from(vec![
            Some(r#"{ "a" : [1, 2.5] }"#),
            Some("hello"),
            Some(""),
            None,
            Some("123"),
        ]);
        let out = variant_column(&input);
        let values: Vec<Option<&str>> = out.iter().collect();
        assert_eq!(
            values,
            [Some(r#"{"a":[1,2.5]}"#), None, None, None, Some("123")]
        );
    }

    #[test]
    fn fields_are_marked() {
        let element = element_field("v['a']");
        assert!(is_variant_field(&element) && is_variant_element_field(&element));
        let column = Field::new("v", DataType::Utf8, true).with_metadata(column_metadata());
        assert!(is_variant_field(&column) && !is_variant_element_field(&column));
        assert!(crate::is_json_field(&column) && !crate::is_json_field(&element));
        let declared = crate::SqlType::from_name("variant", &[]).unwrap();
        assert_eq!(declared, crate::SqlType::Variant);
        assert_eq!(declared.to_string(), "variant");
        assert!(!declared.can_be_key());
        assert!(is_variant_field(&declared.arrow_field("v", true)));
    }
}
