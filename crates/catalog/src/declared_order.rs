//! A table's declared column order beside its storage order. Storage keeps the key columns
//! first, in key order (segments sort by them); a MySQL `PRIMARY KEY (c, a)` may name columns
//! that do not lead the declaration, so such a table also records the order it was declared
//! with ([`TableMeta::declared_order`]). Whatever a client sees or addresses by position
//! (`SELECT *`, DESCRIBE, information_schema, SHOW CREATE TABLE, INSERT without a column list,
//! loads without a column list) goes through the methods here; storage and the planner's
//! column indexes stay in storage order.

use crate::model::{ColumnMeta, TableMeta};
use arrow::datatypes::{Schema, SchemaRef};
use std::sync::Arc;

impl TableMeta {
    /// True when the declared order differs from the storage order.
    pub fn has_declared_order(&self) -> bool {
        !self.declared_order.is_empty()
    }

    /// The storage index of each column, in declared order.
    pub fn declared_indexes(&self) -> Vec<usize> {
        if self.has_declared_order() {
            self.declared_order.clone()
        } else {
            (0..self.columns.len()).collect()
        }
    }

    /// The columns in declared order, each with its storage index.
    pub fn declared_columns(&self) -> impl Iterator<Item = (usize, &ColumnMeta)> {
        self.declared_indexes()
            .into_iter()
            .map(move |i| (i, &self.columns[i]))
    }

    /// The declared position (0-based) of the column at storage index `storage_index`.
    pub fn declared_position(&self, storage_index: usize) -> usize {
        if self.has_declared_order() {
            self.declared_order
                .iter()
                .position(|&i| i == storage_index)
                .unwrap_or(storage_index)
        } else {
            storage_index
        }
    }

    /// The Arrow schema of this table's rows in declared order.
    pub fn declared_arrow_schema(&self) -> SchemaRef {
        let stored = self.arrow_schema();
        if !self.has_declared_order() {
            return stored;
        }
        Arc::new(Schema::new(
            self.declared_order
                .iter()
                .map(|&i| stored.field(i).clone())
                .collect::<Vec<_>>(),
        ))
    }

    /// Records `declared` (storage indexes in declared order) as the declared order; nothing
    /// when it is the storage order.
    pub fn set_declared_order(&mut self, declared: Vec<usize>) {
        let identity = declared.iter().enumerate().all(|(p, &i)| p == i);
        self.declared_order = if identity { Vec::new() } else { declared };
    }

    /// Checks that the declared order names every column once.
    pub fn check_declared_order(&self) -> Result<(), String> {
        if !self.has_declared_order() {
            return Ok(());
        }
        let mut seen = vec![false; self.columns.len()];
        for &i in &self.declared_order {
            match seen.get_mut(i) {
                Some(s) if !*s => *s = true,
                _ => {
                    return Err(format!(
                        "declared column order names column {i} twice or out of range"
                    ))
                }
            }
        }
        if seen.iter().all(|s| *s) {
            Ok(())
        } else {
            Err("declared column order misses a column".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::*;
    use basalt_common::SqlType;
    use std::collections::BTreeMap;

    fn column(name: &str, is_key: bool) -> ColumnMeta {
        ColumnMeta {
            name: name.into(),
            display_name: None,
            ty: SqlType::Int,
            nullable: !is_key,
            is_key,
            agg: None,
            default: None,
            comment: String::new(),
            auto_increment: false,
            generated: None,
            allowed: None,
            on_update_current_timestamp: false,
        }
    }

    fn table(declared: Vec<usize>) -> TableMeta {
        let mut t = TableMeta {
            id: 1,
            database: "d".into(),
            name: "t".into(),
            // Storage: key (c, a) first, then b; declared (a, b, c).
            columns: vec![column("c", true), column("a", true), column("b", false)],
            keys_model: KeysModel::Unique,
            num_key_columns: 2,
            partition_kind: PartitionKind::Unpartitioned,
            partition_column: None,
            temporary_partitions: Vec::new(),
            partitions: vec![],
            distribution: DistributionMeta {
                columns: vec![0, 1],
                buckets: 1,
            },
            properties: BTreeMap::new(),
            comment: String::new(),
            created_ms: 0,
            schema_version: 0,
            declared_order: vec![],
            indexes: vec![],
            foreign_keys: vec![],
            auto_partition: None,
        };
        t.set_declared_order(declared);
        t
    }

    #[test]
    fn declared_order_maps_positions_both_ways() {
        let t = table(vec![1, 2, 0]);
        assert!(t.has_declared_order());
        let names: Vec<&str> = t.declared_columns().map(|(_, c)| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(t.declared_position(0), 2);
        assert_eq!(t.declared_position(1), 0);
        let schema = t.declared_arrow_schema();
        assert_eq!(schema.field(0).name(), "a");
        assert_eq!(schema.field(2).name(), "c");
        assert!(t.check_declared_order().is_ok());
    }

    #[test]
    fn storage_order_is_recorded_as_nothing() {
        let t = table(vec![0, 1, 2]);
        assert!(!t.has_declared_order());
        assert_eq!(t.declared_indexes(), [0, 1, 2]);
        assert_eq!(t.declared_position(2), 2);
        let json = serde_json::to_string(&t).unwrap();
        assert!(!json.contains("declared_order"), "{json}");
    }

    #[test]
    fn a_broken_order_is_found() {
        let mut t = table(vec![]);
        t.declared_order = vec![0, 0, 1];
        assert!(t.check_declared_order().is_err());
        t.declared_order = vec![0, 1];
        assert!(t.check_declared_order().is_err());
    }
}
