//! The short-circuit path for primary-key point queries: a SELECT of plain columns from one
//! Unique-key table with a row store, whose WHERE fixes every key column by equality (or an IN
//! list), skips DataFusion — the key is routed to its tablet, found in the primary-key index and
//! read from the row cache or row store. Prepared statements keep the plan, so EXECUTE only binds
//! values, looks up and encodes. On a cluster the frontend's primary-key index (which its
//! merge-on-write loads keep) locates the row and the owning backend reads it from its row
//! store: one request, no distributed plan.

use crate::catalog_provider::Services;
use crate::output::Output;
use basalt_catalog::{KeysModel, TableId, TableMeta};
use basalt_common::column_origin::ColumnOrigin;
use basalt_common::{BasaltError, ParamValue, Result, SqlType};
use basalt_sql::ast::{
    BinaryOperator, Expr, GroupByExpr, SelectItem, SetExpr, Statement, TableFactor, UnaryOperator,
    Value,
};
use datafusion::arrow::array::{
    ArrayRef, BooleanArray, Int16Array, Int32Array, Int64Array, Int8Array, RecordBatch,
    RecordBatchOptions, StringArray, UInt16Array, UInt32Array, UInt64Array, UInt8Array,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use std::sync::Arc;

/// Where one candidate value of a key column comes from.
#[derive(Debug, Clone)]
enum KeySource {
    Literal(ParamValue),
    /// The n-th `?` of the statement.
    Param(usize),
}

/// A planned point query.
#[derive(Debug)]
pub struct PointQuery {
    table_id: TableId,
    database: String,
    table: String,
    /// Candidate values of each key column, in key order; the keys looked up are their cross
    /// product.
    keys: Vec<Vec<KeySource>>,
    /// Table columns returned, in order.
    projection: Vec<usize>,
    /// Result columns as the client named them.
    pub schema: SchemaRef,
    /// Number of `?` placeholders the plan consumes.
    params: usize,
    /// Storage types of all the table's columns (how its rows are encoded).
    row_types: Vec<DataType>,
    /// The table's definition the plan was made for (an ALTER may move columns).
    schema_version: u64,
    /// The key columns as the storage lookup takes them.
    key_schema: SchemaRef,
}

/// What converting a value to a key column's type gave.
enum KeyValue {
    Value(ArrayRef),
    /// The value cannot equal any key (NULL, out of range): no row.
    NoMatch,
    /// Comparison semantics the short-circuit does not reproduce (e.g. a number against a
    /// string key): run the query through the general path.
    Fallback,
}

impl PointQuery {
    /// Plans `stmt` as a point query, if it is one; `database` is the session's current one.
    pub fn plan(
        services: &Services,
        stmt: &Statement,
        database: Option<&str>,
        params: usize,
    ) -> Option<PointQuery> {
        let Statement::Query(q) = stmt else {
            return None;
        };
        let plain_query = q.with.is_none()
            && q.order_by.is_none()
            && q.limit_clause.is_none()
            && q.fetch.is_none()
            && q.locks.is_empty()
            && q.for_clause.is_none()
            && q.settings.is_none()
            && q.format_clause.is_none()
            && q.pipe_operators.is_empty();
        if !plain_query {
            return None;
        }
        let SetExpr::Select(select) = q.body.as_ref() else {
            return None;
        };
        let plain_select = select.distinct.is_none()
            && select.top.is_none()
            && select.exclude.is_none()
            && select.into.is_none()
            && select.lateral_views.is_empty()
            && select.prewhere.is_none()
            && select.connect_by.is_empty()
            && matches!(&select.group_by, GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty())
            && select.cluster_by.is_empty()
            && select.distribute_by.is_empty()
            && select.sort_by.is_empty()
            && select.having.is_none()
            && select.named_window.is_empty()
            && select.qualify.is_none()
            && select.value_table_mode.is_none()
            && select.from.len() == 1
            && select.from[0].joins.is_empty();
        if !plain_select {
            return None;
        }
        let TableFactor::Table {
            name,
            alias,
            args: None,
            with_hints,
            version: None,
            partitions,
            sample: None,
            index_hints,
            ..
        } = &select.from[0].relation
        else {
            return None;
        };
        if !with_hints.is_empty() || !partitions.is_empty() || !index_hints.is_empty() {
            return None;
        }
        let parts: Vec<String> = name
            .0
            .iter()
            .map(|p| p.as_ident().map(|i| i.value.clone()))
            .collect::<Option<_>>()?;
        let (db, table_name) = match parts.as_slice() {
            [t] => (database?.to_string(), t.clone()),
            [d, t] => (d.clone(), t.clone()),
            _ => return None,
        };
        let table = services.catalog.table(&db, &table_name).ok()?;
        if table.keys_model != KeysModel::Unique
            || !table.stores_rows()
            || table
                .partition_column
                .is_some_and(|c| c >= table.num_key_columns)
        {
            return None;
        }
        let qualifier = alias
            .as_ref()
            .map(|a| a.name.value.to_lowercase())
            .unwrap_or_else(|| table_name.to_lowercase());
        // Qualifiers match without regard to case, as the statement rewrite folds them.
        let (db_lower, table_lower) = (db.to_lowercase(), table_name.to_lowercase());
        let column_of = |e: &Expr| -> Option<usize> {
            match e {
                Expr::Identifier(i) => table.column_index(&i.value),
                Expr::CompoundIdentifier(ids) => match ids.as_slice() {
                    [t, c] if t.value.to_lowercase() == qualifier => table.column_index(&c.value),
                    [d, t, c]
                        if d.value.to_lowercase() == db_lower
                            && t.value.to_lowercase() == table_lower =>
                    {
                        table.column_index(&c.value)
                    }
                    _ => None,
                },
                _ => None,
            }
        };

        // Projection: plain columns (optionally aliased) or `*`, each reporting its origin.
        let shown_table = alias
            .as_ref()
            .map(|a| a.name.value.clone())
            .unwrap_or_else(|| table_name.clone());
        let stored_schema = table.arrow_schema();
        let storage_schema = Schema::new(
            stored_schema
                .fields()
                .iter()
                .zip(&table.columns)
                .map(|(field, column)| {
                    ColumnOrigin {
                        database: db.clone(),
                        table: shown_table.clone(),
                        original_table: table_name.clone(),
                        column: column.shown_name().to_string(),
                    }
                    .attach(field.as_ref().clone())
                })
                .collect::<Vec<_>>(),
        );
        let mut projection = Vec::new();
        let mut fields = Vec::new();
        for item in &select.projection {
            match item {
                SelectItem::Wildcard(opts) if is_plain_wildcard(opts) => {
                    for (i, column) in table.declared_columns() {
                        projection.push(i);
                        fields.push(
                            storage_schema
                                .field(i)
                                .clone()
                                .with_name(column.shown_name()),
                        );
                    }
                }
                SelectItem::QualifiedWildcard(kind, opts) if is_plain_wildcard(opts) => {
                    let text = kind.to_string().to_lowercase();
                    if text != qualifier {
                        return None;
                    }
                    for (i, column) in table.declared_columns() {
                        projection.push(i);
                        fields.push(
                            storage_schema
                                .field(i)
                                .clone()
                                .with_name(column.shown_name()),
                        );
                    }
                }
                SelectItem::UnnamedExpr(e) => {
                    let i = column_of(e)?;
                    let written = match e {
                        Expr::Identifier(id) => id.value.clone(),
                        Expr::CompoundIdentifier(ids) => ids.last()?.value.clone(),
                        _ => return None,
                    };
                    projection.push(i);
                    fields.push(storage_schema.field(i).clone().with_name(written));
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    let i = column_of(expr)?;
                    projection.push(i);
                    fields.push(
                        storage_schema
                            .field(i)
                            .clone()
                            .with_name(alias.value.clone()),
                    );
                }
                _ => return None,
            }
        }

        // WHERE: a conjunction fixing each key column exactly once.
        let mut conjuncts = Vec::new();
        flatten_and(select.selection.as_ref()?, &mut conjuncts);
        let mut keys: Vec<Option<Vec<KeySource>>> = vec![None; table.num_key_columns];
        let mut next_param = 0usize;
        for c in conjuncts {
            let (col, values) = match c {
                Expr::BinaryOp {
                    left,
                    op: BinaryOperator::Eq,
                    right,
                } => {
                    if let Some(col) = column_of(left) {
                        (col, vec![key_source(right, &mut next_param)?])
                    } else {
                        let left_value = key_source(left, &mut next_param)?;
                        (column_of(right)?, vec![left_value])
                    }
                }
                Expr::InList {
                    expr,
                    list,
                    negated: false,
                } => {
                    let col = column_of(expr)?;
                    let values = list
                        .iter()
                        .map(|v| key_source(v, &mut next_param))
                        .collect::<Option<Vec<_>>>()?;
                    (col, values)
                }
                _ => return None,
            };
            if col >= table.num_key_columns || keys[col].is_some() || values.is_empty() {
                return None;
            }
            keys[col] = Some(values);
        }
        let keys: Vec<Vec<KeySource>> = keys.into_iter().collect::<Option<_>>()?;
        if next_param != params {
            // Placeholders outside the key predicates.
            return None;
        }
        // Each key column's type must be one the short-circuit compares exactly.
        if !table
            .key_columns()
            .iter()
            .all(|c| key_type_supported(&c.ty))
        {
            return None;
        }
        Some(PointQuery {
            table_id: table.id,
            database: db,
            table: table_name,
            keys,
            projection,
            schema: Arc::new(Schema::new(fields)),
            params,
            row_types: table.columns.iter().map(|c| c.ty.arrow_type()).collect(),
            schema_version: table.schema_version,
            key_schema: Arc::new(Schema::new(
                table
                    .key_columns()
                    .iter()
                    .map(|c| Field::new(&c.name, c.ty.arrow_type(), true))
                    .collect::<Vec<_>>(),
            )),
        })
    }

    /// The session may read the table (SELECT).
    pub fn check_access(&self, session: &crate::session::Session) -> Result<()> {
        session.access().require_table(
            basalt_catalog::Privilege::Select,
            &self.database,
            &self.table,
        )
    }

    /// Runs the lookup with `params` bound, for a session that must hold SELECT on the table;
    /// `None` when the values need the general path (or the table changed since the plan was
    /// made).
    pub fn execute(
        &self,
        services: &Services,
        session: &crate::session::Session,
        params: &[ParamValue],
    ) -> Result<Option<Output>> {
        self.check_access(session)?;
        if params.len() != self.params {
            return Err(BasaltError::WrongArguments {
                function: "EXECUTE".into(),
                message: format!(
                    "the statement has {} parameter(s), {} given",
                    self.params,
                    params.len()
                ),
            });
        }
        let table = services.catalog.table(&self.database, &self.table)?;
        if table.id != self.table_id
            || table.schema_version != self.schema_version
            || table.columns.len() != self.row_types.len()
        {
            return Ok(None);
        }
        // Candidate arrays per key column.
        let mut candidates: Vec<Vec<ArrayRef>> = Vec::with_capacity(self.keys.len());
        for (col, sources) in table.key_columns().iter().zip(&self.keys) {
            let mut values = Vec::with_capacity(sources.len());
            for s in sources {
                let v = match s {
                    KeySource::Literal(v) => v,
                    KeySource::Param(i) => &params[*i],
                };
                match key_value(v, &col.ty) {
                    KeyValue::Value(a) => values.push(a),
                    KeyValue::NoMatch => {}
                    KeyValue::Fallback => return Ok(None),
                }
            }
            candidates.push(values);
        }
        let batch = self.lookup(services, &table, &candidates)?;
        Ok(Some(Output::batches(self.schema.clone(), vec![batch])))
    }

    fn lookup(
        &self,
        services: &Services,
        table: &TableMeta,
        candidates: &[Vec<ArrayRef>],
    ) -> Result<RecordBatch> {
        let combos: usize = candidates.iter().map(|c| c.len()).product();
        let mut rows: Vec<Arc<[u8]>> = Vec::new();
        if combos > 0 {
            let mut columns: Vec<Vec<ArrayRef>> =
                vec![Vec::with_capacity(combos); candidates.len()];
            for n in 0..combos {
                let mut rest = n;
                for (k, values) in candidates.iter().enumerate().rev() {
                    columns[k].push(values[rest % values.len()].clone());
                    rest /= values.len();
                }
            }
            let arrays = columns
                .into_iter()
                .map(|parts| {
                    if let [only] = parts.as_slice() {
                        return Ok(only.clone());
                    }
                    let refs: Vec<&dyn datafusion::arrow::array::Array> =
                        parts.iter().map(|a| a.as_ref()).collect();
                    datafusion::arrow::compute::concat(&refs)
                })
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| BasaltError::Internal(e.to_string()))?;
            let keys = RecordBatch::try_new(self.key_schema.clone(), arrays)
                .map_err(|e| BasaltError::Internal(e.to_string()))?;
            let found = services
                .storage
                .lookup_rows(table, &keys)
                .map_err(|e| match e {
                    // On a cluster: which table's tablet has no replica left to read.
                    BasaltError::BackendUnavailable(why) => {
                        BasaltError::BackendUnavailable(format!(
                            "cannot read table `{}`.`{}`: {why}",
                            table.database, table.name
                        ))
                    }
                    other => other,
                })?;
            if combos == 1 {
                rows.extend(found.into_iter().flatten());
            } else {
                // An IN list naming a key twice returns its row once.
                let mut seen = foldhash::HashSet::default();
                for row in found.into_iter().flatten() {
                    if seen.insert(row.clone()) {
                        rows.push(row);
                    }
                }
            }
        }
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_ref()).collect();
        let columns =
            basalt_storage::row_store::decode_rows(&refs, &self.row_types, &self.projection)?;
        let options = RecordBatchOptions::new().with_row_count(Some(rows.len()));
        RecordBatch::try_new_with_options(self.schema.clone(), columns, &options)
            .map_err(|e| BasaltError::Internal(e.to_string()))
    }

    /// The EXPLAIN text of this plan.
    pub fn explain(&self) -> String {
        let keys: Vec<String> = self
            .keys
            .iter()
            .map(|k| match k.as_slice() {
                [one] => source_text(one),
                many => format!(
                    "IN ({})",
                    many.iter().map(source_text).collect::<Vec<_>>().join(", ")
                ),
            })
            .collect();
        let columns: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        format!(
            "SHORT-CIRCUIT: point lookup on {}.{} by primary key [{}] -> primary-key index -> row store (row cache) -> columns [{}]",
            self.database,
            self.table,
            keys.join(", "),
            columns.join(", ")
        )
    }
}

fn source_text(s: &KeySource) -> String {
    match s {
        KeySource::Literal(v) => v.to_sql_literal(),
        KeySource::Param(_) => "?".to_string(),
    }
}

fn is_plain_wildcard(opts: &basalt_sql::ast::WildcardAdditionalOptions) -> bool {
    opts.opt_ilike.is_none()
        && opts.opt_exclude.is_none()
        && opts.opt_except.is_none()
        && opts.opt_replace.is_none()
        && opts.opt_rename.is_none()
}

fn flatten_and<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            flatten_and(left, out);
            flatten_and(right, out);
        }
        Expr::Nested(inner) => flatten_and(inner, out),
        other => out.push(other),
    }
}

/// A literal or placeholder as a key value source; placeholders are numbered in order.
fn key_source(e: &Expr, next_param: &mut usize) -> Option<KeySource> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Placeholder(p) if p == "?" => {
                let i = *next_param;
                *next_param += 1;
                Some(KeySource::Param(i))
            }
            Value::Number(n, false) => Some(KeySource::Literal(number_value(n, false)?)),
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(
                KeySource::Literal(ParamValue::Bytes(s.clone().into_bytes())),
            ),
            Value::Null => Some(KeySource::Literal(ParamValue::Null)),
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            Expr::Value(v) => match &v.value {
                Value::Number(n, false) => Some(KeySource::Literal(number_value(n, true)?)),
                _ => None,
            },
            _ => None,
        },
        Expr::Nested(inner) => key_source(inner, next_param),
        _ => None,
    }
}

fn number_value(text: &str, negative: bool) -> Option<ParamValue> {
    if text.bytes().all(|b| b.is_ascii_digit()) {
        if negative {
            let v: i128 = text.parse().ok()?;
            return i64::try_from(-v).ok().map(ParamValue::Int);
        }
        return match text.parse::<i64>() {
            Ok(v) => Some(ParamValue::Int(v)),
            Err(_) => text.parse::<u64>().ok().map(ParamValue::UInt),
        };
    }
    let sign = if negative { "-" } else { "" };
    Some(ParamValue::Decimal(format!("{sign}{text}")))
}

fn key_type_supported(ty: &SqlType) -> bool {
    matches!(
        ty,
        SqlType::Boolean
            | SqlType::TinyInt
            | SqlType::SmallInt
            | SqlType::Int
            | SqlType::BigInt
            | SqlType::TinyIntUnsigned
            | SqlType::SmallIntUnsigned
            | SqlType::IntUnsigned
            | SqlType::BigIntUnsigned
            | SqlType::Date
            | SqlType::DateTime { .. }
            | SqlType::Char(_)
            | SqlType::Varchar(_)
            | SqlType::String
    )
}

/// The integer a value denotes exactly, if any (`Err(())`: semantics for the general path).
fn exact_integer(v: &ParamValue) -> std::result::Result<Option<i128>, ()> {
    Ok(match v {
        ParamValue::Int(i) => Some(i128::from(*i)),
        ParamValue::UInt(u) => Some(i128::from(*u)),
        ParamValue::Double(d) => {
            if d.fract() == 0.0 && d.abs() < 1e30 {
                Some(*d as i128)
            } else {
                None
            }
        }
        ParamValue::Decimal(text) => {
            let t = text.trim();
            let (int, frac) = t.split_once('.').unwrap_or((t, ""));
            if !frac.bytes().all(|b| b == b'0') {
                return Ok(None);
            }
            Some(int.parse::<i128>().map_err(|_| ())?)
        }
        ParamValue::Bytes(b) => {
            let s = std::str::from_utf8(b).map_err(|_| ())?;
            Some(s.trim().parse::<i128>().map_err(|_| ())?)
        }
        _ => return Err(()),
    })
}

fn key_value(v: &ParamValue, ty: &SqlType) -> KeyValue {
    if matches!(v, ParamValue::Null) {
        return KeyValue::NoMatch;
    }
    macro_rules! int_key {
        ($native:ty, $array:ty) => {
            match exact_integer(v) {
                Ok(Some(i)) => match <$native>::try_from(i) {
                    Ok(x) => KeyValue::Value(Arc::new(<$array>::from(vec![x]))),
                    Err(_) => KeyValue::NoMatch,
                },
                Ok(None) => KeyValue::NoMatch,
                Err(()) => KeyValue::Fallback,
            }
        };
    }
    match ty {
        SqlType::TinyInt => int_key!(i8, Int8Array),
        SqlType::SmallInt => int_key!(i16, Int16Array),
        SqlType::Int => int_key!(i32, Int32Array),
        SqlType::BigInt => int_key!(i64, Int64Array),
        SqlType::TinyIntUnsigned => int_key!(u8, UInt8Array),
        SqlType::SmallIntUnsigned => int_key!(u16, UInt16Array),
        SqlType::IntUnsigned => int_key!(u32, UInt32Array),
        SqlType::BigIntUnsigned => int_key!(u64, UInt64Array),
        SqlType::Boolean => match exact_integer(v) {
            Ok(Some(0)) => KeyValue::Value(Arc::new(BooleanArray::from(vec![false]))),
            Ok(Some(1)) => KeyValue::Value(Arc::new(BooleanArray::from(vec![true]))),
            Ok(_) => KeyValue::NoMatch,
            Err(()) => KeyValue::Fallback,
        },
        SqlType::Char(_) | SqlType::Varchar(_) | SqlType::String => match v {
            ParamValue::Bytes(b) => match std::str::from_utf8(b) {
                Ok(s) => KeyValue::Value(Arc::new(StringArray::from(vec![s]))),
                Err(_) => KeyValue::Fallback,
            },
            _ => KeyValue::Fallback,
        },
        SqlType::Date | SqlType::DateTime { .. } => {
            let target = ty.arrow_type();
            let text = match v {
                ParamValue::Bytes(b) => match std::str::from_utf8(b) {
                    Ok(s) => s.to_string(),
                    Err(_) => return KeyValue::Fallback,
                },
                ParamValue::Date { .. } | ParamValue::DateTime { .. } => {
                    v.to_sql_literal().trim_matches('\'').to_string()
                }
                _ => return KeyValue::Fallback,
            };
            let source: ArrayRef = Arc::new(StringArray::from(vec![text.as_str()]));
            match cast(&source, &target) {
                Ok(a) if a.null_count() == 0 => match (&target, a.data_type()) {
                    (DataType::Date32, DataType::Date32)
                    | (
                        DataType::Timestamp(TimeUnit::Microsecond, None),
                        DataType::Timestamp(_, _),
                    ) => KeyValue::Value(a),
                    _ => KeyValue::Fallback,
                },
                _ => KeyValue::Fallback,
            }
        }
        _ => KeyValue::Fallback,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Date32Array, TimestampMicrosecondArray};

    #[test]
    fn key_values() {
        let int = |v: ParamValue| match key_value(&v, &SqlType::Int) {
            KeyValue::Value(a) => format!(
                "{:?}",
                a.as_any().downcast_ref::<Int32Array>().unwrap().value(0)
            ),
            KeyValue::NoMatch => "none".into(),
            KeyValue::Fallback => "fallback".into(),
        };
        assert_eq!(int(ParamValue::Int(5)), "5");
        assert_eq!(int(ParamValue::Bytes(b" 7 ".to_vec())), "7");
        assert_eq!(int(ParamValue::Double(2.0)), "2");
        assert_eq!(int(ParamValue::Double(2.5)), "none");
        assert_eq!(int(ParamValue::Int(1 << 40)), "none");
        assert_eq!(int(ParamValue::Null), "none");
        assert_eq!(int(ParamValue::Bytes(b"7abc".to_vec())), "fallback");
        assert_eq!(int(ParamValue::Decimal("3.00".into())), "3");
        assert!(matches!(
            key_value(&ParamValue::Int(1), &SqlType::Varchar(10)),
            KeyValue::Fallback
        ));
        assert!(matches!(
            key_value(&ParamValue::Bytes(b"2024-02-30".to_vec()), &SqlType::Date),
            KeyValue::Fallback
        ));
        let d = key_value(&ParamValue::Bytes(b"2024-02-29".to_vec()), &SqlType::Date);
        match d {
            KeyValue::Value(a) => assert_eq!(
                a.as_any().downcast_ref::<Date32Array>().unwrap().value(0),
                19_782
            ),
            _ => panic!("date key"),
        }
        let ts = key_value(
            &ParamValue::Bytes(b"2024-02-29 01:02:03".to_vec()),
            &SqlType::DateTime { scale: 0 },
        );
        assert!(
            matches!(ts, KeyValue::Value(a) if a.as_any().downcast_ref::<TimestampMicrosecondArray>().is_some())
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(number_value("12", true), Some(ParamValue::Int(-12)));
        assert_eq!(
            number_value("18446744073709551615", false),
            Some(ParamValue::UInt(u64::MAX))
        );
        assert_eq!(
            number_value("1.5", false),
            Some(ParamValue::Decimal("1.5".into()))
        );
    }
}
