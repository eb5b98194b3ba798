//! The result fields of the functions that make a BITMAP or an HLL (`to_bitmap`, `bitmap_or`,
//! `bitmap_union`, `hll_hash`, `hll_union`, ..): bytes marked with their sketch kind, as a stored
//! BITMAP/HLL column's field is, so that the MySQL protocol can show them as Doris does (NULL
//! unless `return_object_data_as_binary` is set) and COUNT(DISTINCT ..) can count members.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, FieldRef};
use basalt_common::SqlType;

/// The result field of a function whose result type is `returns`: a `sketch` field when the
/// function returns bytes (a BITMAP or HLL), else a plain field of that type.
pub(crate) fn result_field(
    name: &str,
    returns: DataType,
    sketch: SqlType,
    nullable: bool,
) -> FieldRef {
    if returns == DataType::Binary {
        Arc::new(sketch.arrow_field(name, nullable))
    } else {
        Arc::new(Field::new(name, returns, nullable))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_marked_with_their_sketch_kind() {
        let count = result_field("bitmap_count", DataType::Int64, SqlType::Bitmap, true);
        assert_eq!(basalt_common::sketch_kind(&count), None);
        let union = result_field("bitmap_union", DataType::Binary, SqlType::Bitmap, false);
        assert_eq!(basalt_common::sketch_kind(&union), Some("bitmap"));
        assert!(!union.is_nullable());
        let hash = result_field("hll_hash", DataType::Binary, SqlType::Hll, true);
        assert_eq!(basalt_common::sketch_kind(&hash), Some("hll"));
    }
}
