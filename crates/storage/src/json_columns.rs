//! The forms a JSON column takes in a segment file. Segments written before binary JSON hold
//! compact JSON text (Arrow Utf8 marked `arrow.json`); a segment written in binary form holds
//! each document as [`basalt_common::json_binary`] bytes (Arrow Binary, marked `arrow.json` and
//! with `basalt:json_encoding` = `bson` in the file's Arrow schema). Readers tell the
//! two apart by the file's own schema, so a tablet may mix both, and give every caller the text
//! form the table's schema declares. Binary JSON columns carry no statistics: their bytes do not
//! order like documents.

use crate::storage_err;
use arrow::array::{Array, ArrayRef, AsArray, BinaryBuilder, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use basalt_common::types::EXTENSION_NAME_KEY;
use basalt_common::{is_json_field, json_binary, BasaltError, Result};
use std::sync::Arc;

pub use basalt_common::json_binary::{is_binary_json, JSON_ENCODING_KEY};

/// How a segment writer stores JSON columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JsonForm {
    /// Compact JSON text, as every segment before binary JSON.
    #[default]
    Text,
    /// Binary documents ([`basalt_common::json_binary`]).
    Binary,
}

/// True for a JSON column (not VARIANT) held as text.
fn is_text_json(field: &Field) -> bool {
    is_json_field(field)
        && field.data_type() == &DataType::Utf8
        && !basalt_common::variant::is_variant_field(field)
}

/// The file schema a segment of `schema` is written with in `form`, and whether it differs.
pub fn file_schema(schema: &SchemaRef, form: JsonForm) -> (SchemaRef, bool) {
    if form == JsonForm::Text || !schema.fields().iter().any(|f| is_text_json(f)) {
        return (schema.clone(), false);
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            if is_text_json(f) {
                json_binary::binary_field(f)
            } else {
                f.as_ref().clone()
            }
        })
        .collect();
    (
        Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
        true,
    )
}

/// `batch` (of the table's schema) as the rows of `file_schema`: JSON text encoded where the
/// file holds binary documents.
pub fn to_file_batch(batch: &RecordBatch, file_schema: &SchemaRef) -> Result<RecordBatch> {
    let columns = batch
        .columns()
        .iter()
        .zip(file_schema.fields())
        .map(|(column, field)| {
            if is_binary_json(field) && column.data_type() == &DataType::Utf8 {
                encode_column(column, field.name())
            } else {
                Ok(column.clone())
            }
        })
        .collect::<Result<Vec<_>>>()?;
    RecordBatch::try_new(file_schema.clone(), columns).map_err(storage_err)
}

/// Text JSON documents as binary ones (an invalid one is error 3140 naming `name`).
pub fn encode_column(column: &ArrayRef, name: &str) -> Result<ArrayRef> {
    let texts = column.as_string::<i32>();
    let mut out = BinaryBuilder::with_capacity(texts.len(), texts.value_data().len() * 2);
    for text in texts.iter() {
        match text {
            None => out.append_null(),
            Some(text) => {
                let bytes =
                    json_binary::encode_text(text).map_err(|reason| BasaltError::InvalidJson {
                        column: name.to_string(),
                        reason,
                    })?;
                out.append_value(bytes);
            }
        }
    }
    Ok(Arc::new(out.finish()))
}

/// Binary JSON documents as their compact text.
pub fn decode_column(column: &ArrayRef) -> Result<ArrayRef> {
    json_binary::text_column(column.as_binary::<i32>())
        .map(|texts| Arc::new(texts) as ArrayRef)
        .map_err(|e| BasaltError::Storage(format!("a binary JSON value: {e}")))
}

/// The text field a binary JSON column of a file reads as.
pub fn text_field(field: &Field) -> Field {
    let mut metadata = field.metadata().clone();
    metadata.remove(JSON_ENCODING_KEY);
    metadata
        .entry(EXTENSION_NAME_KEY.to_string())
        .or_insert_with(|| basalt_common::types::JSON_EXTENSION_NAME.to_string());
    field
        .clone()
        .with_data_type(DataType::Utf8)
        .with_metadata(metadata)
}

/// A batch read from a segment, with its binary JSON columns as text (other batches as read).
pub fn to_text_batch(batch: RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    if !schema.fields().iter().any(|f| is_binary_json(f)) {
        return Ok(batch);
    }
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if is_binary_json(field) {
            fields.push(text_field(field));
            columns.push(decode_column(column)?);
        } else {
            fields.push(field.as_ref().clone());
            columns.push(column.clone());
        }
    }
    let schema = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    RecordBatch::try_new(schema, columns).map_err(storage_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, StringArray};
    use basalt_common::SqlType;

    fn table_schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            SqlType::Int.arrow_field("id", true),
            SqlType::Json.arrow_field("doc", true),
            SqlType::Variant.arrow_field("v", true),
        ]))
    }

    fn batch(schema: &SchemaRef) -> RecordBatch {
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec![
                    Some(r#"{"b":[1,2.50],"a":null}"#),
                    None,
                    Some("\"x\""),
                ])),
                Arc::new(StringArray::from(vec![Some("{}"), None, Some("1")])),
            ],
        )
        .unwrap()
    }

    #[test]
    fn binary_json_reads_back_as_the_same_text() {
        let schema = table_schema();
        let (file, changed) = file_schema(&schema, JsonForm::Binary);
        assert!(changed);
        assert!(is_binary_json(file.field(1)));
        // VARIANT stays text.
        assert_eq!(file.field(2).data_type(), &DataType::Utf8);
        let original = batch(&schema);
        let stored = to_file_batch(&original, &file).unwrap();
        assert_eq!(stored.column(1).data_type(), &DataType::Binary);
        let back = to_text_batch(stored).unwrap();
        assert_eq!(back.schema(), schema);
        assert_eq!(back, original);
    }

    #[test]
    fn text_form_and_text_segments_are_left_alone() {
        let schema = table_schema();
        let (file, changed) = file_schema(&schema, JsonForm::Text);
        assert!(!changed && file == schema);
        let original = batch(&schema);
        assert_eq!(to_text_batch(original.clone()).unwrap(), original);
    }

    #[test]
    fn text_that_is_no_json_is_refused() {
        let schema = table_schema();
        let (file, _) = file_schema(&schema, JsonForm::Binary);
        let bad = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(StringArray::from(vec![Some("{oops")])),
                Arc::new(StringArray::from(vec![Some("1")])),
            ],
        )
        .unwrap();
        assert!(matches!(
            to_file_batch(&bad, &file),
            Err(BasaltError::InvalidJson { .. })
        ));
    }
}
