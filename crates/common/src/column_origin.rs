//! Where a result column comes from: the database, the table as the query names it (its alias),
//! the stored table and the stored column. The planner finds it for columns read straight from a
//! table and puts it on the Arrow field's metadata; the MySQL protocol reports it in the column
//! definition (schema, table, org_table, org_name), as MySQL does. Clients use it: PyMySQL's
//! DictCursor keys a second `value` column of a join as `b.value`, JDBC's getTableName reads it.

use arrow::datatypes::Field;
use std::collections::HashMap;

const DATABASE_KEY: &str = "basalt:origin_database";
const TABLE_KEY: &str = "basalt:origin_table";
const ORIGINAL_TABLE_KEY: &str = "basalt:origin_original_table";
const COLUMN_KEY: &str = "basalt:origin_column";

/// The origin of a result column read from a table (or a derived table or view).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ColumnOrigin {
    /// The database holding the table.
    pub database: String,
    /// The table as the query names it: its alias when it has one.
    pub table: String,
    /// The table's own name (a derived table's or view's is its alias, as in MySQL).
    pub original_table: String,
    /// The column's own name, before any alias of the select list.
    pub column: String,
}

impl ColumnOrigin {
    /// `field` with this origin in its metadata (other metadata kept).
    pub fn attach(&self, field: Field) -> Field {
        let mut metadata: HashMap<String, String> = field.metadata().clone();
        metadata.insert(DATABASE_KEY.into(), self.database.clone());
        metadata.insert(TABLE_KEY.into(), self.table.clone());
        metadata.insert(ORIGINAL_TABLE_KEY.into(), self.original_table.clone());
        metadata.insert(COLUMN_KEY.into(), self.column.clone());
        field.with_metadata(metadata)
    }

    /// The origin `field` carries, if the planner found one.
    pub fn of(field: &Field) -> Option<ColumnOrigin> {
        let metadata = field.metadata();
        let get = |key: &str| metadata.get(key).cloned();
        Some(ColumnOrigin {
            database: get(DATABASE_KEY)?,
            table: get(TABLE_KEY)?,
            original_table: get(ORIGINAL_TABLE_KEY)?,
            column: get(COLUMN_KEY)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::DataType;

    #[test]
    fn round_trips_through_field_metadata_and_keeps_other_keys() {
        let field = Field::new("v", DataType::Int32, true).with_metadata(HashMap::from([(
            "basalt:fraction_digits".to_string(),
            "3".to_string(),
        )]));
        assert_eq!(ColumnOrigin::of(&field), None);
        let origin = ColumnOrigin {
            database: "shop".into(),
            table: "o".into(),
            original_table: "orders".into(),
            column: "value".into(),
        };
        let marked = origin.attach(field);
        assert_eq!(ColumnOrigin::of(&marked), Some(origin));
        assert_eq!(crate::fraction_digits(&marked), Some(3));
    }
}
