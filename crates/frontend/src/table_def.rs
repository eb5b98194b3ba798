//! `CREATE TABLE` and `ADD PARTITION` from the parsed statement to catalog metadata: validates
//! the statement into a complete [`TableMeta`] (or a partition bound) or a clear error, so nothing
//! is ever half-created, then hands it to the catalog.

use basalt_catalog::{
    check_new_partition, AggKind, AllowedValues, AutoPartition, Catalog, ColumnDefault, ColumnMeta,
    DistributionMeta, GeneratedMeta, KeysModel, PartitionBound, PartitionKind, PartitionMeta,
    PartitionValue, TableMeta,
};
use basalt_common::clock::now_ms;
use basalt_common::{BasaltError, Result, SqlType};
use basalt_sql as sql;
use std::collections::{BTreeMap, HashSet};

/// Table properties Basalt understands. Others are rejected.
const KNOWN_PROPERTIES: &[&str] = &[
    "replication_num",
    "replication_allocation",
    "storage_medium",
    "storage_format",
    "compression",
    "bloom_filter_columns",
    "enable_unique_key_merge_on_write",
    "store_row_column",
    "light_schema_change",
    "disable_auto_compaction",
    "compaction_policy",
    "in_memory",
    "is_being_synced",
    "enable_duplicate_without_keys_by_default",
    // Accepted and kept for Doris DDL; one process has no colocation groups or replicas to
    // compact singly, and these do not change answers.
    "colocate_with",
    "enable_single_replica_compaction",
    "group_commit_interval_ms",
    "group_commit_data_bytes",
    "time_series_compaction_goal_size_mbytes",
    "estimate_partition_size",
];

fn ddl(msg: impl Into<String>) -> BasaltError {
    BasaltError::InvalidDdl(msg.into())
}

/// Number of buckets when the DDL says `BUCKETS AUTO` or nothing.
fn auto_buckets() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(2)
        .clamp(1, 16)
}

/// CREATE TABLE in `database`. A missing database (1049) or an existing table (1050, or
/// nothing with IF NOT EXISTS) is reported before the statement is validated, as MySQL does;
/// otherwise the statement becomes complete metadata with fresh ids, created in one catalog
/// transaction (which checks both again).
pub fn create_table(
    catalog: &dyn Catalog,
    database: &str,
    stmt: &sql::CreateTable,
) -> Result<bool> {
    create_table_checked(catalog, database, stmt, true)
}

/// CREATE TABLE as [`create_table`] does, its foreign keys' references checked when
/// `foreign_key_checks` (the session's variable) is on.
pub fn create_table_checked(
    catalog: &dyn Catalog,
    database: &str,
    stmt: &sql::CreateTable,
    foreign_key_checks: bool,
) -> Result<bool> {
    if !catalog.database_exists(database) {
        return Err(BasaltError::UnknownDatabase(database.to_string()));
    }
    if catalog.table(database, &stmt.name.table).is_ok() {
        return match stmt.if_not_exists {
            true => Ok(false),
            false => Err(BasaltError::TableExists(
                catalog.table_name_case().stored(&stmt.name.table),
            )),
        };
    }
    let mut table = build_table(
        stmt,
        database,
        catalog.allocate_id(),
        || catalog.allocate_id(),
        now_ms(),
    )?;
    table.name = catalog.table_name_case().stored(&table.name);
    let lookup = |db: &str, name: &str| catalog.table(db, name).ok();
    for fk in &stmt.foreign_keys {
        let ref_db = match &fk.table.database {
            Some(d) => catalog.table_name_case().stored(d),
            None => database.to_string(),
        };
        crate::table_keys::add_foreign_key(
            &mut table,
            database,
            fk,
            &ref_db,
            &lookup,
            foreign_key_checks,
        )?;
    }
    catalog.create_table(table, stmt.if_not_exists)
}

/// The CREATE TABLE statement that makes a table like `source` (MySQL's `CREATE TABLE .. LIKE`):
/// its SHOW CREATE TABLE, parsed again, so the copy is validated like any new table.
pub fn definition_of(source: &TableMeta) -> Result<sql::CreateTable> {
    match sql::parse_one(&crate::show::create_table_sql(source))? {
        sql::Statement::CreateTable(t) => Ok(*t),
        _ => Err(BasaltError::Internal(format!(
            "SHOW CREATE TABLE of {} is no CREATE TABLE",
            source.name
        ))),
    }
}

/// ALTER TABLE .. ADD PARTITION: the definition resolved against the table's partitions (a
/// `LESS THAN` range starts where the one below it ends); the catalog checks it again against
/// the partitions it holds when it adds it. A temporary partition's `LESS THAN` range starts
/// where the temporary partition below it ends (Doris).
pub fn add_partition(
    catalog: &dyn Catalog,
    database: &str,
    table: &str,
    def: &sql::PartitionDef,
    temporary: bool,
) -> Result<()> {
    // The bound is resolved against a snapshot; if another statement changed the table's
    // partitions meanwhile, the catalog refuses and the bound is resolved again.
    let mut attempts = 0;
    loop {
        match add_partition_once(catalog, database, table, def, temporary) {
            Err(BasaltError::ConcurrentDdl(_)) if attempts < 3 => attempts += 1,
            other => return other,
        }
    }
}

fn add_partition_once(
    catalog: &dyn Catalog,
    database: &str,
    table: &str,
    def: &sql::PartitionDef,
    temporary: bool,
) -> Result<()> {
    let meta = catalog.table(database, table)?;
    let column = meta.partition_column_meta().ok_or_else(|| {
        BasaltError::InvalidDdl(format!("table {} is not partitioned", meta.name))
    })?;
    let kind_ok = matches!(
        (meta.partition_kind, def),
        (PartitionKind::Range, sql::PartitionDef::Range { .. })
            | (PartitionKind::List, sql::PartitionDef::List { .. })
    );
    if !kind_ok {
        return Err(BasaltError::InvalidDdl(format!(
            "partition {} does not match the table's {:?} partitioning",
            def.name(),
            meta.partition_kind
        )));
    }
    let same_kind = if temporary {
        &meta.temporary_partitions
    } else {
        &meta.partitions
    };
    let existing: Vec<(String, PartitionBound)> = same_kind
        .iter()
        .map(|p| (p.name.clone(), p.bound.clone()))
        .collect();
    let bound = partition_bound(def, &column.ty, &existing)?;
    catalog.add_partition(&meta, def.name(), bound, temporary)
}

/// Doris's `REPLACE PARTITION (formal) WITH TEMPORARY PARTITION (temporary) PROPERTIES (..)`
/// as the catalog takes it: `strict_range` (default true) and `use_temp_partition_name`
/// (default false) are the properties it knows.
pub fn partition_replacement(
    formal: Vec<String>,
    temporary: Vec<String>,
    properties: &[(String, String)],
) -> Result<basalt_catalog::PartitionReplacement> {
    let mut replacement = basalt_catalog::PartitionReplacement {
        formal,
        temporary,
        strict_range: true,
        use_temp_partition_name: false,
    };
    for (key, value) in properties {
        let flag = match value.trim().to_ascii_lowercase().as_str() {
            "true" => true,
            "false" => false,
            _ => {
                return Err(ddl(format!(
                    "property {key} must be \"true\" or \"false\", not \"{value}\""
                )))
            }
        };
        match key.trim().to_ascii_lowercase().as_str() {
            "strict_range" => replacement.strict_range = flag,
            "use_temp_partition_name" => replacement.use_temp_partition_name = flag,
            _ => return Err(ddl(format!("unknown property {key} of REPLACE PARTITION"))),
        }
    }
    Ok(replacement)
}

/// Builds the table's metadata with partitions whose ids and tablets are filled by `next_id`.
fn build_table(
    stmt: &sql::CreateTable,
    database: &str,
    table_id: u64,
    mut next_id: impl FnMut() -> u64,
    now_ms: i64,
) -> Result<TableMeta> {
    // The catalog stores it as `lower_case_table_names` says.
    let name = stmt.name.table.clone();
    if stmt.columns.is_empty() {
        return Err(ddl("a table needs at least one column"));
    }
    let mut seen = HashSet::new();
    for c in &stmt.columns {
        if !seen.insert(c.name.to_lowercase()) {
            return Err(BasaltError::DuplicateColumn(c.name.clone()));
        }
    }
    if let Some(engine) = &stmt.engine {
        check_engine(engine)?;
    }
    let col_index = |n: &str| {
        stmt.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(n))
            .ok_or_else(|| BasaltError::UnknownColumn {
                column: n.to_string(),
                context: format!("table {name}"),
            })
    };

    // Key model and key columns.
    let implicit_aggregate = stmt.keys.is_none()
        && stmt.primary_key.is_none()
        && stmt.columns.iter().any(|c| c.agg.is_some());
    let keyless = keeps_load_order(stmt)? && !implicit_aggregate;
    let (keys_model, key_names): (KeysModel, Vec<String>) = match (&stmt.keys, &stmt.primary_key) {
        (Some((model, cols)), _) => (convert_model(*model), cols.clone()),
        (None, Some(pk)) => (KeysModel::Unique, pk.clone()),
        // Doris: without a key clause, columns with an aggregation type make an AGGREGATE
        // KEY table keyed by the others.
        (None, None) if implicit_aggregate => (
            KeysModel::Aggregate,
            stmt.columns
                .iter()
                .filter(|c| c.agg.is_none())
                .map(|c| c.name.clone())
                .collect(),
        ),
        (None, None) if keyless => (KeysModel::Duplicate, Vec::new()),
        (None, None) => (KeysModel::Duplicate, default_duplicate_keys(stmt)),
    };
    if key_names.is_empty() && !keyless {
        return Err(ddl("the key column list is empty"));
    }
    // `PRIMARY KEY (..)` beside Doris's key clause (as SHOW CREATE TABLE prints a Unique
    // table) must say the same.
    if let (Some(_), Some(pk)) = (&stmt.keys, &stmt.primary_key) {
        let same = keys_model == KeysModel::Unique
            && pk.len() == key_names.len()
            && pk
                .iter()
                .zip(&key_names)
                .all(|(a, b)| a.eq_ignore_ascii_case(b));
        if !same {
            return Err(ddl(format!(
                "PRIMARY KEY ({}) disagrees with {} KEY({})",
                pk.join(", "),
                keys_model.sql_name(),
                key_names.join(", ")
            )));
        }
    }
    // Storage keeps the key columns first, in key order; a MySQL PRIMARY KEY may name others,
    // and the table then remembers its declared order.
    let mut key_positions = Vec::with_capacity(key_names.len());
    for k in &key_names {
        let idx = col_index(k)?;
        if key_positions.contains(&idx) {
            return Err(BasaltError::DuplicateColumn(k.clone()));
        }
        if !stmt.columns[idx].ty.can_be_key() {
            return Err(ddl(format!(
                "Key column '{k}' can not be of type {}: BITMAP, HLL, JSON, ARRAY, MAP and STRUCT columns are value columns",
                stmt.columns[idx].ty
            )));
        }
        if matches!(stmt.columns[idx].ty, SqlType::Float | SqlType::Double) {
            return Err(ddl(format!(
                "Float or double can not used as a key, use decimal instead: '{k}'"
            )));
        }
        key_positions.push(idx);
    }
    // Doris's key clauses alone keep Doris's rule.
    let misplaced = key_positions.iter().enumerate().find(|(i, p)| i != *p);
    if let (Some((i, idx)), None) = (misplaced, &stmt.primary_key) {
        return Err(ddl(format!(
            "Key columns should be a ordered prefix of the schema: key column '{}' is column {} but must be column {}",
            key_names[i],
            idx + 1,
            i + 1
        )));
    }
    let num_keys = key_names.len();
    // Statement positions in storage order: the keys, then the others as declared.
    let storage_order: Vec<usize> = key_positions
        .iter()
        .copied()
        .chain((0..stmt.columns.len()).filter(|p| !key_positions.contains(p)))
        .collect();
    let mut storage_index = vec![0; stmt.columns.len()];
    for (s, &p) in storage_order.iter().enumerate() {
        storage_index[p] = s;
    }
    let col_index = |n: &str| col_index(n).map(|p| storage_index[p]);

    let mut columns = Vec::with_capacity(stmt.columns.len());
    for (i, &p) in storage_order.iter().enumerate() {
        let c = &stmt.columns[p];
        let in_pk = stmt
            .primary_key
            .as_ref()
            .is_some_and(|pk| pk.iter().any(|k| k.eq_ignore_ascii_case(&c.name)));
        columns.push(column_meta(c, keys_model, i < num_keys, in_pk)?);
    }

    // Properties.
    let mut properties = BTreeMap::new();
    for (k, v) in &stmt.properties {
        let key = check_property(k, v, |c| col_index(c).map(|_| ()))?;
        properties.insert(key, v.clone());
    }
    if keyless {
        properties.insert(
            "enable_duplicate_without_keys_by_default".to_string(),
            "true".to_string(),
        );
    }
    // A MySQL PRIMARY KEY table keeps a row store for point lookups, unless a column is one
    // the row store cannot hold.
    if stmt.primary_key.is_some()
        && stmt.keys.is_none()
        && columns.iter().all(|c| !c.ty.is_nested())
    {
        properties
            .entry("store_row_column".to_string())
            .or_insert_with(|| "true".to_string());
    }

    // Distribution.
    let distribution = match &stmt.distribution {
        Some(d) => {
            let mut cols = Vec::new();
            for c in &d.columns {
                let idx = col_index(c)?;
                if keys_model != KeysModel::Duplicate && idx >= num_keys {
                    return Err(ddl(format!(
                        "Distribution column '{c}' of a {} KEY table must be a key column",
                        keys_model.sql_name()
                    )));
                }
                if matches!(columns[idx].ty, SqlType::Float | SqlType::Double) {
                    return Err(ddl(format!(
                        "Distribution column '{c}' can not be FLOAT or DOUBLE"
                    )));
                }
                if !columns[idx].ty.can_be_key() {
                    return Err(ddl(format!(
                        "Distribution column '{c}' can not be of type {}",
                        columns[idx].ty
                    )));
                }
                cols.push(idx);
            }
            if cols.is_empty() && keys_model != KeysModel::Duplicate {
                return Err(ddl(format!(
                    "RANDOM distribution is only for DUPLICATE KEY tables, this is a {} KEY table",
                    keys_model.sql_name()
                )));
            }
            DistributionMeta {
                columns: cols,
                buckets: d.buckets.unwrap_or_else(auto_buckets),
            }
        }
        // A table in load order is one tablet unless its DDL says otherwise: rows of
        // different loads then come back in the order they were loaded.
        None if keyless => DistributionMeta {
            columns: Vec::new(),
            buckets: 1,
        },
        None => DistributionMeta {
            columns: (0..num_keys).collect(),
            buckets: auto_buckets(),
        },
    };

    // Partitions.
    let mut auto_partition = None;
    let (partition_kind, partition_column, bounds) = match &stmt.partition {
        None => (
            PartitionKind::Unpartitioned,
            None,
            vec![(name.clone(), PartitionBound::All)],
        ),
        Some(p) => {
            if p.columns.len() != 1 {
                return Err(BasaltError::NotSupported(
                    "partitioning by more than one column".into(),
                ));
            }
            let idx = col_index(&p.columns[0])?;
            if keys_model != KeysModel::Duplicate && idx >= num_keys {
                return Err(ddl(format!(
                    "Partition column '{}' of a {} KEY table must be a key column",
                    p.columns[0],
                    keys_model.sql_name()
                )));
            }
            let ty = &columns[idx].ty;
            let kind = match p.kind {
                sql::PartitionKind::Range => {
                    if !(ty.is_integer() || matches!(ty, SqlType::Date | SqlType::DateTime { .. }))
                    {
                        return Err(ddl(format!(
                            "RANGE partition column must be an integer, DATE or DATETIME, not {ty}"
                        )));
                    }
                    PartitionKind::Range
                }
                sql::PartitionKind::List => PartitionKind::List,
            };
            if p.auto {
                let auto = AutoPartition {
                    date_trunc_unit: p.date_trunc_unit.clone(),
                };
                basalt_catalog::check_auto_partition(kind, &auto, ty)?;
                auto_partition = Some(auto);
            }
            let mut bounds: Vec<(String, PartitionBound)> = Vec::new();
            for def in &p.partitions {
                let bound = partition_bound(def, ty, &bounds)?;
                check_new_partition(def.name(), &bound, &bounds)?;
                bounds.push((def.name().to_string(), bound));
            }
            (kind, Some(idx), bounds)
        }
    };

    let partitions = bounds
        .into_iter()
        .map(|(pname, bound)| {
            PartitionMeta::empty(pname, bound, distribution.buckets, &mut next_id)
        })
        .collect();

    let mut table = TableMeta {
        id: table_id,
        database: database.to_string(),
        name,
        columns,
        keys_model,
        num_key_columns: num_keys,
        partition_kind,
        partition_column,
        temporary_partitions: Vec::new(),
        partitions,
        distribution,
        properties,
        comment: stmt.comment.clone().unwrap_or_default(),
        created_ms: now_ms,
        schema_version: 0,
        declared_order: Vec::new(),
        indexes: Vec::new(),
        foreign_keys: Vec::new(),
        auto_partition,
    };
    table.set_declared_order(storage_index);
    check_row_store(&table)?;
    crate::dynamic_partitions::check_table(&table)?;
    for index in &stmt.indexes {
        crate::table_keys::add_index(&mut table, index, false)?;
    }
    Ok(table)
}

/// The table `stmt` defines, without a catalog (ids from 1).
#[cfg(test)]
pub(crate) fn build_for_tests(stmt: &sql::CreateTable) -> Result<TableMeta> {
    let mut id = 1;
    build_table(
        stmt,
        "d",
        1,
        || {
            id += 1;
            id
        },
        0,
    )
}

/// The row store (`store_row_column`) holds scalar columns only: ARRAY, MAP and STRUCT
/// columns are refused in a table that keeps one.
pub(crate) fn check_row_store(table: &TableMeta) -> Result<()> {
    if !table.stores_rows() {
        return Ok(());
    }
    match table.columns.iter().find(|c| c.ty.is_nested()) {
        Some(c) => Err(BasaltError::NotSupported(format!(
            "column '{}' of type {} in a table with \"store_row_column\" = \"true\": the row store holds no ARRAY, MAP or STRUCT values",
            c.name, c.ty
        ))),
        None => Ok(()),
    }
}

/// `ENGINE = engine` of CREATE or ALTER TABLE: MySQL's engines are all Basalt's one storage.
pub(crate) fn check_engine(engine: &str) -> Result<()> {
    let e = engine.to_ascii_lowercase();
    if !matches!(
        e.as_str(),
        "olap" | "innodb" | "myisam" | "memory" | "heap" | "aria"
    ) {
        return Err(BasaltError::UnknownStorageEngine(engine.to_string()));
    }
    Ok(())
}

/// A column definition checked against the table's key model (`is_key`: the column is in the
/// key; `in_pk`: MySQL's PRIMARY KEY names it, so it is NOT NULL unless said otherwise).
pub(crate) fn column_meta(
    c: &sql::ColumnDef,
    keys_model: KeysModel,
    is_key: bool,
    in_pk: bool,
) -> Result<ColumnMeta> {
    let agg = c.agg.map(convert_agg);
    match keys_model {
        KeysModel::Aggregate if is_key && agg.is_some() => {
            return Err(ddl(format!(
                "Key column '{}' can not set aggregation type",
                c.name
            )))
        }
        KeysModel::Aggregate if !is_key && agg.is_none() => {
            return Err(ddl(format!(
                "Value column '{}' of an AGGREGATE KEY table needs an aggregation type (SUM, MIN, MAX, REPLACE, REPLACE_IF_NOT_NULL, BITMAP_UNION, HLL_UNION, QUANTILE_UNION)",
                c.name
            )))
        }
        KeysModel::Duplicate | KeysModel::Unique if agg.is_some() => {
            return Err(ddl(format!(
                "Column '{}' can not set aggregation type in a {} KEY table",
                c.name,
                keys_model.sql_name()
            )))
        }
        _ => {}
    }
    check_sketch_agg(&c.name, &c.ty, agg)?;
    if agg == Some(AggKind::Sum) && !c.ty.is_numeric() {
        return Err(ddl(format!(
            "SUM needs a numeric column, '{}' is {}",
            c.name, c.ty
        )));
    }
    let nullable = c.nullable.unwrap_or(!(c.auto_increment || in_pk));
    if c.auto_increment && !c.ty.is_integer() {
        return Err(ddl(format!(
            "AUTO_INCREMENT column '{}' must be an integer",
            c.name
        )));
    }
    let default = match &c.default {
        None => None,
        Some(sql::DefaultValue::Null) => {
            if !nullable {
                return Err(ddl(format!(
                    "Invalid default value for '{}': the column is NOT NULL",
                    c.name
                )));
            }
            Some(ColumnDefault::Null)
        }
        Some(sql::DefaultValue::CurrentTimestamp) => {
            if !matches!(c.ty, SqlType::DateTime { .. } | SqlType::Date) {
                return Err(ddl(format!("Invalid default value for '{}'", c.name)));
            }
            Some(ColumnDefault::CurrentTimestamp)
        }
        Some(sql::DefaultValue::Literal(v)) if c.ty == SqlType::Year => {
            match basalt_common::year::default_text(v) {
                Some(year) => Some(ColumnDefault::Literal(year)),
                None => return Err(ddl(format!("Invalid default value for '{}'", c.name))),
            }
        }
        Some(sql::DefaultValue::Literal(v)) => {
            validate_literal(&c.ty, v)
                .map_err(|e| ddl(format!("Invalid default value for '{}': {e}", c.name)))?;
            Some(ColumnDefault::Literal(v.clone()))
        }
        Some(sql::DefaultValue::Expression(e)) => {
            basalt_functions::generated_columns::default_expression(e, &c.ty.arrow_type())
                .map_err(|why| {
                    BasaltError::NotSupported(format!(
                        "DEFAULT ({e}) for column '{}': {why}",
                        c.name
                    ))
                })?;
            Some(ColumnDefault::Expression(e.clone()))
        }
    };
    if c.on_update && !matches!(c.ty, SqlType::DateTime { .. }) {
        return Err(BasaltError::InvalidOnUpdate(c.name.clone()));
    }
    let mut column = ColumnMeta {
        name: String::new(),
        display_name: None,
        ty: c.ty.clone(),
        nullable,
        is_key,
        agg,
        default,
        comment: c.comment.clone().unwrap_or_default(),
        auto_increment: c.auto_increment,
        generated: c.generated.as_ref().map(|g| GeneratedMeta {
            expr: g.expr.clone(),
            stored: g.stored,
        }),
        allowed: c.allowed.as_ref().map(|a| AllowedValues {
            set: a.set,
            values: a.values.clone(),
        }),
        on_update_current_timestamp: c.on_update,
    };
    if column.generated.is_some() && (column.default.is_some() || column.auto_increment) {
        return Err(ddl(format!(
            "generated column '{}' takes no DEFAULT or AUTO_INCREMENT",
            c.name
        )));
    }
    if let (Some(allowed), Some(ColumnDefault::Literal(v))) = (&column.allowed, &column.default) {
        match allowed.admit(v) {
            Some(stored) => column.default = Some(ColumnDefault::Literal(stored)),
            None => return Err(ddl(format!("Invalid default value for '{}'", c.name))),
        }
    }
    column.set_name(&c.name);
    Ok(column)
}

/// Checks one table property; returns its key in lower case. `column_exists` checks the
/// columns a property names.
pub(crate) fn check_property(
    k: &str,
    v: &str,
    column_exists: impl Fn(&str) -> Result<()>,
) -> Result<String> {
    let key = k.to_lowercase();
    if crate::dynamic_partitions::is_dynamic_key(&key) {
        crate::dynamic_partitions::check_property(&key, v)?;
        return Ok(key);
    }
    if !KNOWN_PROPERTIES.contains(&key.as_str()) {
        return Err(ddl(format!("Unknown table property '{k}'")));
    }
    if matches!(
        key.as_str(),
        "enable_unique_key_merge_on_write"
            | "store_row_column"
            | "light_schema_change"
            | "disable_auto_compaction"
            | "in_memory"
            | "enable_duplicate_without_keys_by_default"
    ) && !matches!(v.to_lowercase().as_str(), "true" | "false")
    {
        return Err(ddl(format!(
            "property '{k}' must be \"true\" or \"false\", got \"{v}\""
        )));
    }
    if key == "bloom_filter_columns" {
        for c in v.split(',').map(str::trim).filter(|c| !c.is_empty()) {
            column_exists(c)?;
        }
    }
    Ok(key)
}

/// Resolves a partition definition to concrete bounds given the partitions defined before it.
fn partition_bound(
    def: &sql::PartitionDef,
    ty: &SqlType,
    existing: &[(String, PartitionBound)],
) -> Result<PartitionBound> {
    let one = |lits: &[sql::PartitionLiteral]| -> Result<Option<PartitionValue>> {
        if lits.len() != 1 {
            return Err(ddl(format!(
                "partition {} needs exactly one value per bound",
                def.name()
            )));
        }
        match &lits[0] {
            sql::PartitionLiteral::MaxValue => Ok(None),
            sql::PartitionLiteral::Value(v) => PartitionValue::parse(ty, v).map(Some).map_err(ddl),
        }
    };
    match def {
        sql::PartitionDef::Range { bound, .. } => match bound {
            sql::RangeBound::LessThan(upper) => {
                let upper = one(upper)?;
                // Lower bound: the largest existing upper bound below the new upper bound.
                let lower = existing
                    .iter()
                    .filter_map(|(_, b)| match b {
                        PartitionBound::Range { upper: Some(u), .. } => Some(u.clone()),
                        _ => None,
                    })
                    .filter(|u| upper.as_ref().is_none_or(|up| u < up))
                    .max();
                Ok(PartitionBound::Range { lower, upper })
            }
            sql::RangeBound::Fixed { lower, upper } => {
                let lower = one(lower)?;
                let upper = one(upper)?;
                if lower.is_none() {
                    return Err(ddl("MAXVALUE can not be a lower bound"));
                }
                if let (Some(l), Some(u)) = (&lower, &upper) {
                    if l >= u {
                        return Err(ddl(format!(
                            "partition {}: lower bound must be below upper bound",
                            def.name()
                        )));
                    }
                }
                Ok(PartitionBound::Range { lower, upper })
            }
        },
        sql::PartitionDef::List { values, .. } => {
            let mut out = Vec::new();
            for v in values {
                match one(v)? {
                    Some(pv) => out.push(pv),
                    None => return Err(ddl("MAXVALUE is not a LIST partition value")),
                }
            }
            if out.is_empty() {
                return Err(ddl(format!("partition {} has no values", def.name())));
            }
            Ok(PartitionBound::List { values: out })
        }
    }
}

fn validate_literal(ty: &SqlType, v: &str) -> std::result::Result<(), String> {
    match ty {
        SqlType::Float | SqlType::Double | SqlType::Decimal { .. } => v
            .trim()
            .parse::<f64>()
            .map(|_| ())
            .map_err(|_| format!("'{v}' is not a number")),
        SqlType::Char(_)
        | SqlType::Varchar(_)
        | SqlType::String
        | SqlType::Binary(_)
        | SqlType::Varbinary(_)
        | SqlType::Blob => Ok(()),
        SqlType::Bit(width) => match v.trim().parse::<u64>() {
            Ok(n) if basalt_common::types::fits_bits(n, *width) => Ok(()),
            _ => Err(format!("'{v}' is no number of at most {width} bits")),
        },
        SqlType::Time { .. } => match basalt_common::time_value::parse_text(v) {
            Some(t) if !t.clipped => Ok(()),
            _ => Err(format!("'{v}' is no TIME within -838:59:59 .. 838:59:59")),
        },
        SqlType::Ipv4 | SqlType::Ipv6 => match ty.ip_family().and_then(|f| f.parse_text(v)) {
            Some(_) => Ok(()),
            None => Err(format!(
                "'{v}' is not an {} address",
                ty.to_string().to_uppercase()
            )),
        },
        SqlType::Json => serde_json::from_str::<serde_json::Value>(v)
            .map(|_| ())
            .map_err(|e| format!("'{v}' is not a JSON document: {e}")),
        SqlType::Bitmap
        | SqlType::Hll
        | SqlType::Array(_)
        | SqlType::Map(..)
        | SqlType::Struct(_) => Err(format!("a {ty} column takes no default value")),
        _ => PartitionValue::parse(ty, v).map(|_| ()),
    }
}

/// Doris's default sort key for a table without a KEY clause: up to three leading columns,
/// stopping before the first floating point or unbounded string column.
/// Whether a CREATE TABLE without key clause makes a Duplicate table without sort key, whose
/// rows stay in load order: a MySQL-style definition (no key clause, PRIMARY KEY or DISTRIBUTED
/// BY: its users expect `SELECT *` in insertion order, as InnoDB gives), or Doris's property
/// `enable_duplicate_without_keys_by_default`. A Doris-style definition otherwise gets Doris's
/// default sort key, its first columns.
pub(crate) fn keeps_load_order(stmt: &sql::CreateTable) -> Result<bool> {
    let property = stmt
        .properties
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("enable_duplicate_without_keys_by_default"))
        .map(|(_, v)| v.eq_ignore_ascii_case("true"));
    let declared_keys = stmt.keys.is_some() || stmt.primary_key.is_some();
    if property == Some(true) && declared_keys {
        return Err(ddl(
            "a table with \"enable_duplicate_without_keys_by_default\" = \"true\" takes no key clause",
        ));
    }
    Ok(!declared_keys && property.unwrap_or(stmt.distribution.is_none()))
}

fn default_duplicate_keys(stmt: &sql::CreateTable) -> Vec<String> {
    let mut keys = Vec::new();
    for c in stmt.columns.iter().take(3) {
        if matches!(c.ty, SqlType::Float | SqlType::Double) || !c.ty.can_be_key() {
            break;
        }
        keys.push(c.name.clone());
        if c.ty.is_string() {
            break;
        }
    }
    if keys.is_empty() {
        keys.push(stmt.columns[0].name.clone());
    }
    keys
}

/// BITMAP_UNION needs a BITMAP column, HLL_UNION an HLL one and QUANTILE_UNION a
/// QUANTILE_STATE one; sketch, JSON and nested
/// columns take no SUM, MIN or MAX, only their union (sketches) or REPLACE.
fn check_sketch_agg(name: &str, ty: &SqlType, agg: Option<AggKind>) -> Result<(), BasaltError> {
    let Some(agg) = agg else { return Ok(()) };
    let ok = match agg {
        AggKind::BitmapUnion => *ty == SqlType::Bitmap,
        AggKind::HllUnion => *ty == SqlType::Hll,
        AggKind::QuantileUnion => *ty == SqlType::QuantileState,
        AggKind::Sum | AggKind::Min | AggKind::Max => ty.can_be_key(),
        AggKind::Replace | AggKind::ReplaceIfNotNull => true,
    };
    if ok {
        Ok(())
    } else {
        Err(ddl(format!(
            "Aggregation type {} can not be used on column '{name}' of type {ty}{}",
            agg.sql_name(),
            match ty {
                SqlType::Bitmap => ": use BITMAP_UNION",
                SqlType::Hll => ": use HLL_UNION",
                SqlType::QuantileState => ": use QUANTILE_UNION",
                _ => "",
            }
        )))
    }
}

fn convert_model(m: sql::KeysModel) -> KeysModel {
    match m {
        sql::KeysModel::Duplicate => KeysModel::Duplicate,
        sql::KeysModel::Aggregate => KeysModel::Aggregate,
        sql::KeysModel::Unique => KeysModel::Unique,
    }
}

fn convert_agg(a: sql::AggKind) -> AggKind {
    match a {
        sql::AggKind::Sum => AggKind::Sum,
        sql::AggKind::Min => AggKind::Min,
        sql::AggKind::Max => AggKind::Max,
        sql::AggKind::Replace => AggKind::Replace,
        sql::AggKind::ReplaceIfNotNull => AggKind::ReplaceIfNotNull,
        sql::AggKind::BitmapUnion => AggKind::BitmapUnion,
        sql::AggKind::HllUnion => AggKind::HllUnion,
        sql::AggKind::QuantileUnion => AggKind::QuantileUnion,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_catalog::{LocalCatalog, TabletCatalog};

    fn create_sql(sql: &str) -> sql::CreateTable {
        match sql::parse_one(sql).unwrap() {
            sql::Statement::CreateTable(t) => *t,
            other => panic!("{other:?}"),
        }
    }

    fn catalog() -> (tempfile::TempDir, LocalCatalog) {
        let dir = tempfile::tempdir().unwrap();
        let c = LocalCatalog::open(dir.path()).unwrap();
        c.create_database("d", false).unwrap();
        (dir, c)
    }

    #[test]
    fn invalid_tables_are_rejected_whole() {
        let (_dir, c) = catalog();
        let bad = [
            "CREATE TABLE t (a INT, b INT) DUPLICATE KEY(b)",
            "CREATE TABLE t (a INT, b INT) PROPERTIES (\"no_such\" = \"1\")",
            "CREATE TABLE t (a INT, b INT) AGGREGATE KEY(a)",
            "CREATE TABLE t (a INT, b INT SUM) UNIQUE KEY(a)",
            "CREATE TABLE t (a DATE, b INT) PARTITION BY RANGE(a) (PARTITION p1 VALUES LESS THAN ('2024-01-01'), PARTITION p1 VALUES LESS THAN ('2024-02-01'))",
            "CREATE TABLE t (a INT, b INT) PARTITION BY RANGE(a) (PARTITION p1 VALUES [('10'), ('20')), PARTITION p2 VALUES [('15'), ('30')))",
            "CREATE TABLE t (a INT, b INT) PROPERTIES (\"replication_num\" = \"3\")",
            "CREATE TABLE t (a INT, b INT) DISTRIBUTED BY HASH(zz) BUCKETS 1",
        ];
        for sql in bad {
            assert!(create_table(&c, "d", &create_sql(sql)).is_err(), "{sql}");
            assert!(c.table("d", "t").is_err(), "{sql} left a table behind");
        }
    }

    #[test]
    fn a_primary_key_may_name_columns_that_do_not_lead() {
        let (_dir, c) = catalog();
        let sql = "CREATE TABLE t (a INT, b VARCHAR(5), c INT, PRIMARY KEY (c, a))";
        create_table(&c, "d", &create_sql(sql)).unwrap();
        let t = c.table("d", "t").unwrap();
        let stored: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(stored, ["c", "a", "b"]);
        assert_eq!(t.num_key_columns, 2);
        assert!(!t.columns[0].nullable && !t.columns[1].nullable);
        let declared: Vec<&str> = t.declared_columns().map(|(_, c)| c.name.as_str()).collect();
        assert_eq!(declared, ["a", "b", "c"]);
        assert_eq!(t.distribution.columns, [0, 1]);
        // A key that leads the declaration records no order of its own.
        let sql = "CREATE TABLE u (id INT, v INT, PRIMARY KEY (id))";
        create_table(&c, "d", &create_sql(sql)).unwrap();
        assert!(!c.table("d", "u").unwrap().has_declared_order());
        // Doris's key clause alone keeps Doris's rule.
        let sql = "CREATE TABLE w (a INT, b INT) UNIQUE KEY(b)";
        assert!(create_table(&c, "d", &create_sql(sql)).is_err());
    }

    #[test]
    fn a_mysql_table_without_keys_keeps_load_order_and_round_trips() {
        let (_dir, c) = catalog();
        let sql = "CREATE TABLE t (name CHAR(20), age INT) ENGINE=InnoDB CHARACTER SET utf8mb4";
        create_table(&c, "d", &create_sql(sql)).unwrap();
        let t = c.table("d", "t").unwrap();
        assert!(t.keeps_load_order());
        assert!(t.columns.iter().all(|c| !c.is_key));
        assert!(t.distribution.columns.is_empty());
        assert_eq!(t.distribution.buckets, 1);
        let shown = crate::show::create_table_sql(&t);
        assert_eq!(
            shown,
            "CREATE TABLE `t` (\n  `name` char(20) NULL,\n  `age` int NULL\n) ENGINE=OLAP \
             DISTRIBUTED BY RANDOM BUCKETS 1 PROPERTIES (\"replication_num\" = \"1\", \
             \"enable_duplicate_without_keys_by_default\" = \"true\")"
        );
        // What SHOW CREATE TABLE prints makes the same table.
        c.drop_table("d", "t", false).unwrap();
        create_table(&c, "d", &create_sql(&shown)).unwrap();
        let again = c.table("d", "t").unwrap();
        assert!(again.keeps_load_order());
        assert_eq!(crate::show::create_table_sql(&again), shown);
        // Doris's definitions keep Doris's default sort key.
        let sql = "CREATE TABLE u (a INT, b VARCHAR(5), x DOUBLE) DISTRIBUTED BY HASH(a) BUCKETS 2";
        create_table(&c, "d", &create_sql(sql)).unwrap();
        assert_eq!(c.table("d", "u").unwrap().num_key_columns, 2);
    }

    #[test]
    fn if_not_exists_keeps_the_existing_table() {
        let (_dir, c) = catalog();
        let first = create_sql("CREATE TABLE t (a INT, b INT) DISTRIBUTED BY HASH(a) BUCKETS 2");
        assert!(create_table(&c, "d", &first).unwrap());
        assert_eq!(
            create_table(&c, "d", &first).unwrap_err().mysql_code(),
            1050
        );
        let again =
            create_sql("CREATE TABLE IF NOT EXISTS t (x INT) DISTRIBUTED BY HASH(x) BUCKETS 5");
        assert!(!create_table(&c, "d", &again).unwrap());
        assert_eq!(c.table("d", "t").unwrap().distribution.buckets, 2);
    }

    #[test]
    fn range_partitions_chain_and_can_be_added() {
        let (_dir, c) = catalog();
        create_table(
            &c,
            "d",
            &create_sql(
                "CREATE TABLE t (dt DATE, v INT) PARTITION BY RANGE(dt) (PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS THAN ('2024-03-01')) DISTRIBUTED BY HASH(dt) BUCKETS 3",
            ),
        )
        .unwrap();
        let t = c.table("d", "t").unwrap();
        assert_eq!(t.partitions.len(), 2);
        assert_eq!(t.partitions[1].tablets.len(), 3);
        match &t.partitions[1].bound {
            PartitionBound::Range { lower: Some(l), .. } => {
                assert_eq!(l.display(&SqlType::Date), "2024-02-01")
            }
            other => panic!("{other:?}"),
        }
        let add =
            match sql::parse_one("ALTER TABLE t ADD PARTITION p3 VALUES LESS THAN ('2024-04-01')")
                .unwrap()
            {
                sql::Statement::AlterPartitions {
                    op: sql::PartitionOp::Add { def, .. },
                    ..
                } => def,
                other => panic!("{other:?}"),
            };
        add_partition(&c, "d", "t", &add, false).unwrap();
        assert!(add_partition(&c, "d", "t", &add, false).is_err());
        // A bound resolved against partitions that have changed since is refused.
        let stale = c.table("d", "t").unwrap();
        c.drop_partition("d", "t", "p3", false, false).unwrap();
        let bound = stale.partitions[2].bound.clone();
        assert!(matches!(
            c.add_partition(&stale, "p3", bound, false),
            Err(BasaltError::ConcurrentDdl(_))
        ));
        add_partition(&c, "d", "t", &add, false).unwrap();
        let t = c.table("d", "t").unwrap();
        assert_eq!(t.partitions[2].tablets.len(), 3);
        assert!(c
            .drop_partition("d", "t", "p1", false, false)
            .unwrap()
            .is_some());
        assert_eq!(c.table("d", "t").unwrap().partitions.len(), 2);
        // An overlapping bound is refused by the catalog itself, whoever computed it.
        let current = c.table("d", "t").unwrap();
        let overlap = current.partitions[0].bound.clone();
        assert!(c.add_partition(&current, "p9", overlap, false).is_err());
    }
}
