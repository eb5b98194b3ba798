//! INSERT outside strict mode. MySQL's `sql_mode` without STRICT_TRANS_TABLES and
//! STRICT_ALL_TABLES (TRADITIONAL includes them), or Doris's `enable_insert_strict = false`,
//! stores a value that does not fit its column as the nearest one that does, with a warning
//! (see `basalt_query::StoreWarnings`), where strict mode (the default) fails the statement.
//!
//! The planned INSERT converts its values to the columns' types, failing on those that do not
//! fit; [`hand_values_unconverted`] takes those conversions out for the column types the sink
//! fits leniently (integers, floating point, DECIMAL and TIME from text and numbers; DATE and
//! DATETIME from text and numbers), so the sink sees each value as written and can tell which
//! row's value it adjusts. In strict mode it does so for the number columns, and for numbers
//! into DATE and DATETIME: the sink reads their values the same way and fails on the first
//! that does not fit with MySQL's error for it (1264, 1265, 1366, 1292 naming the column and
//! row). Other conversions stay in the
//! plan, as strict as ever.

use crate::session::Session;
use datafusion::arrow::datatypes::{DataType, Field, SchemaRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::Alias;
use datafusion::logical_expr::{
    Cast, DmlStatement, Expr, ExprSchemable, LogicalPlan, Projection, Values, WriteOp,
};
use datafusion::optimizer::AnalyzerRule;
use std::collections::HashSet;
use std::sync::Arc;

/// Whether the session's INSERTs are strict: `sql_mode` has STRICT_TRANS_TABLES,
/// STRICT_ALL_TABLES or TRADITIONAL, and `enable_insert_strict` is on.
pub(crate) fn strict_inserts(session: &Session) -> bool {
    let vars = session.variables();
    let sql_mode = vars
        .get("sql_mode")
        .map(|v| v.as_text())
        .unwrap_or_default();
    let strict_mode = sql_mode.split(',').any(|m| {
        let m = m.trim();
        ["STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "TRADITIONAL"]
            .iter()
            .any(|s| m.eq_ignore_ascii_case(s))
    });
    let doris_strict = !matches!(
        vars.get("enable_insert_strict").map(|v| v.as_text()),
        Ok(v) if v == "0"
    );
    strict_mode && doris_strict
}

/// What a write's sink fits its values with: strict or not as the session's INSERTs are.
pub(crate) fn store_warnings(session: &Session) -> basalt_query::StoreWarnings {
    match strict_inserts(session) {
        true => basalt_query::StoreWarnings::strict(),
        false => basalt_query::StoreWarnings::default(),
    }
}

/// Takes MySQL's IGNORE off an INSERT (DataFusion plans none) and says whether it had it. An
/// INSERT IGNORE fits its values as outside strict mode whatever `sql_mode` says
/// ([`insert_store`]); into a Unique table it also skips rows whose key is taken
/// (`statement::insert_ignore`, which rewrites it before it gets here).
pub(crate) fn take_ignore(stmt: &mut basalt_sql::ast::Statement) -> bool {
    match stmt {
        basalt_sql::ast::Statement::Insert(insert) => std::mem::take(&mut insert.ignore),
        _ => false,
    }
}

/// What an INSERT's sink fits its values with: strict or not as the session's INSERTs are, or
/// never strict for an INSERT IGNORE (`ignore`), which also stores NULL in a NOT NULL column
/// as its implicit default for a single row.
pub(crate) fn insert_store(
    session: &Session,
    plan: &LogicalPlan,
    ignore: bool,
) -> basalt_query::StoreWarnings {
    let store = match ignore {
        true => basalt_query::StoreWarnings::default(),
        false => store_warnings(session),
    };
    match ignore || writes_many_rows(plan) {
        true => store.with_implicit_defaults(),
        false => store,
    }
}

/// Whether an INSERT writes many rows as MySQL counts them for NULL in a NOT NULL column
/// (outside strict mode their implicit default, with a warning, where one row is an error):
/// VALUES of more than one row, or the rows of a query (INSERT .. SELECT, UPDATE).
pub(crate) fn writes_many_rows(plan: &LogicalPlan) -> bool {
    let LogicalPlan::Dml(dml) = plan else {
        return false;
    };
    let mut node = dml.input.as_ref();
    while let LogicalPlan::Projection(p) = node {
        node = p.input.as_ref();
    }
    match node {
        LogicalPlan::Values(values) => values.values.len() > 1,
        _ => true,
    }
}

/// Moves the session's INSERT warnings (and notes) into its diagnostics area.
/// Returns how many were raised.
pub(crate) fn report(session: &Session, warnings: &basalt_query::StoreWarnings) -> u64 {
    let (kept, count) = warnings.take();
    for w in kept {
        session.info.warnings.add(w.level, w.code, w.message);
    }
    count
}

/// `plan` (an INSERT) with its values handed to the sink as written where the sink fits them
/// to their columns: a BIT column's always (it reads text and byte strings by their bytes, as
/// MySQL does), a number column's always (strictly in strict mode), the others' only outside
/// strict mode (`lenient`). MySQL's `/` ([`basalt_functions::ExactDivision`], with the
/// session's `config`) is put in first, so that a value is typed as the DECIMAL it will be
/// (`VALUES (7/2)` is 3.5000, which the sink rounds to 4, not DataFusion's integer 3).
pub(crate) fn hand_values_unconverted(
    plan: LogicalPlan,
    lenient: bool,
    config: &ConfigOptions,
) -> Result<LogicalPlan> {
    let LogicalPlan::Dml(dml) = plan else {
        return Ok(plan);
    };
    if !matches!(dml.op, WriteOp::Insert(_)) {
        return Ok(LogicalPlan::Dml(dml));
    }
    let LogicalPlan::Dml(dml) =
        basalt_functions::ExactDivision.analyze(LogicalPlan::Dml(dml), config)?
    else {
        return Err(datafusion::error::DataFusionError::Internal(
            "MySQL's division rewrite changed an INSERT into another statement".into(),
        ));
    };
    let LogicalPlan::Projection(projection) = dml.input.as_ref() else {
        return Ok(LogicalPlan::Dml(dml));
    };
    let input = match projection.input.as_ref() {
        LogicalPlan::Values(values) => {
            let table = dml.target.schema();
            let is_bit = |f: &Field| basalt_common::types::bit_width(f).is_some();
            let bits = inputs_feeding(&projection.expr, &table, is_bit);
            let addresses = inputs_feeding(&projection.expr, &table, is_address);
            Arc::new(LogicalPlan::Values(values_as_written(
                values,
                lenient,
                Some(&bits),
                Some(&addresses),
            )?))
        }
        other => Arc::new(nested_values_as_written(other.clone(), lenient)?),
    };
    let exprs = projection
        .expr
        .iter()
        .map(|e| {
            uncast(
                e.clone(),
                projection.input.schema(),
                &dml.target.schema(),
                lenient,
            )
        })
        .collect();
    let projection = Projection::try_new(exprs, input)?;
    Ok(LogicalPlan::Dml(DmlStatement::new(
        dml.table_name.clone(),
        dml.target.clone(),
        dml.op.clone(),
        Arc::new(LogicalPlan::Projection(projection)),
    )))
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

/// A BIT or BIGINT UNSIGNED column's Arrow type (the sink reads a BIT's text and byte strings
/// by their bytes, a BIGINT UNSIGNED's text as numbers).
fn is_bit_target(target: &DataType) -> bool {
    target == &DataType::UInt64
}

/// Whether the sink fits a `source` value to a column of arrow type `target` (so the
/// conversion can be left to it): a BIT column takes numbers, text and byte strings; outside
/// strict mode (`lenient`) date and time columns take text and numbers too; number columns
/// always do (the sink reads them strictly in strict mode).
fn sink_fits(source: &DataType, target: &DataType, lenient: bool) -> bool {
    if is_bit_target(target) {
        return is_text(source)
            || matches!(
                source,
                DataType::Binary | DataType::BinaryView | DataType::LargeBinary
            )
            || source.is_numeric()
            || source.is_null()
            || source == &DataType::Boolean;
    }
    let number_target = matches!(
        target,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal128(..)
    );
    let number_or_text = is_text(source) || source.is_numeric() || source.is_null();
    let date_target = matches!(target, DataType::Date32 | DataType::Timestamp(_, None));
    if !lenient {
        return (number_target && number_or_text) || (date_target && source.is_numeric());
    }
    let time_target = matches!(target, DataType::Time64(_));
    (number_target || time_target || date_target) && number_or_text
}

/// A projection item `Cast(e, T) AS name` as `e AS name` where the sink fits `e` to `T`.
fn uncast(e: Expr, schema: &DFSchema, table: &SchemaRef, lenient: bool) -> Expr {
    let Expr::Alias(Alias {
        expr,
        relation,
        name,
        metadata,
    }) = e
    else {
        return e;
    };
    let address = table.field_with_name(&name).is_ok_and(is_address);
    let inner = match *expr {
        Expr::Cast(Cast { expr: value, field })
            if !address
                && value
                    .get_type(schema)
                    .is_ok_and(|t| sink_fits(&t, field.data_type(), lenient)) =>
        {
            *value
        }
        other => other,
    };
    Expr::Alias(Alias {
        expr: Box::new(inner),
        relation,
        name,
        metadata,
    })
}

/// An IPV4 / IPV6 column's field (IPV4 is Arrow `UInt32`, as INT UNSIGNED is).
fn is_address(field: &Field) -> bool {
    basalt_common::ip_address::ip_family(field).is_some()
}

/// The VALUES columns (`column1`, ..) an INSERT's projection stores into columns of `table`
/// whose field `kind` accepts: BIT and BIGINT UNSIGNED are both Arrow `UInt64` (only a BIT
/// reads text as bytes), IPV4 and INT UNSIGNED both `UInt32` (only the latter is a number).
fn inputs_feeding(
    projection: &[Expr],
    table: &SchemaRef,
    kind: impl Fn(&Field) -> bool,
) -> HashSet<String> {
    let mut inputs = HashSet::new();
    for e in projection {
        let Expr::Alias(alias) = e else { continue };
        if table.field_with_name(&alias.name).is_ok_and(&kind) {
            inputs.extend(alias.expr.column_refs().into_iter().map(|c| c.name.clone()));
        }
    }
    inputs
}

/// True when the VALUES column `name` of Arrow type `target` is stored into an IPV4 or IPV6
/// column (by the INSERT's `address_inputs` where they are known, else any `UInt32` may be).
fn feeds_address(name: &str, target: &DataType, address_inputs: Option<&HashSet<String>>) -> bool {
    match address_inputs {
        Some(inputs) => inputs.contains(name),
        None => target == &DataType::UInt32,
    }
}

/// True when the VALUES column `name` of Arrow type `target` is stored into a BIT column (by
/// the INSERT's `bit_inputs` where they are known, else by its type alone).
fn feeds_bit(name: &str, target: &DataType, bit_inputs: Option<&HashSet<String>>) -> bool {
    match bit_inputs {
        Some(inputs) => inputs.contains(name),
        None => is_bit_target(target),
    }
}

/// VALUES rows typed as written, where the sink fits the column (the planner cast each value
/// to the column's type): such a column whose rows disagree in type becomes text (each
/// number's text reads back as that number; a BIT column's keeps the planner's casts, as
/// text would read as bytes).
fn values_as_written(
    values: &Values,
    lenient: bool,
    bit_inputs: Option<&HashSet<String>>,
    address_inputs: Option<&HashSet<String>>,
) -> Result<Values> {
    let empty = DFSchema::empty();
    let mut rows = values.values.clone();
    let mut fields = Vec::with_capacity(values.schema.fields().len());
    for (j, field) in values.schema.fields().iter().enumerate() {
        let target = field.data_type();
        let written: Vec<Expr> = rows.iter().map(|row| as_written(&row[j])).collect();
        let types: Vec<Option<DataType>> = written
            .iter()
            .map(|e| match is_null(e) {
                true => Ok(None),
                false => e.get_type(&empty).map(Some),
            })
            .collect::<Result<_>>()?;
        let fits = types
            .iter()
            .flatten()
            .all(|t| sink_fits(t, target, lenient))
            && !feeds_address(field.name(), target, address_inputs);
        let mut present = types.iter().flatten();
        let column_type = match (fits, present.next()) {
            (true, Some(first)) if present.all(|t| t == first) => first.clone(),
            (true, Some(_)) if !feeds_bit(field.name(), target, bit_inputs) => DataType::Utf8,
            _ => target.clone(),
        };
        if column_type != *target {
            for ((row, value), t) in rows.iter_mut().zip(written).zip(&types) {
                row[j] = match t {
                    None => Expr::Literal(ScalarValue::try_from(&column_type)?, None),
                    Some(t) if *t == column_type => value,
                    Some(_) => Expr::Cast(Cast::new(Box::new(value), column_type.clone())),
                };
            }
        }
        fields.push((
            None,
            Arc::new(
                field
                    .as_ref()
                    .clone()
                    .with_data_type(column_type)
                    .with_nullable(true),
            ),
        ));
    }
    let schema = DFSchema::new_with_metadata(fields, values.schema.metadata().clone())?;
    Ok(Values {
        schema: Arc::new(schema),
        values: rows,
    })
}

/// The VALUES lists inside an INSERT's query (`INSERT .. SELECT .. FROM (VALUES ..) AS v`, or
/// the derived tables of the upsert and INSERT IGNORE rewrites) as written, like a top-level
/// one's, with the nodes above them retyped: DataFusion types every VALUES of an INSERT's
/// source by the table's columns, and a value beyond its column's type would fail that cast
/// (with an Arrow error, not MySQL's) before the sink could fit it.
fn nested_values_as_written(plan: LogicalPlan, lenient: bool) -> Result<LogicalPlan> {
    if !plan.exists(|p| Ok(matches!(p, LogicalPlan::Values(_))))? {
        return Ok(plan);
    }
    plan.transform_up(|node| match node {
        LogicalPlan::Values(values) => Ok(Transformed::yes(LogicalPlan::Values(
            values_as_written(&values, lenient, None, None)?,
        ))),
        other => other.recompute_schema().map(Transformed::yes),
    })
    .data()
}

/// A VALUES cell without the cast to the column's type the planner added (nor the alias a
/// rewrite that kept the cell's name put around it).
fn as_written(e: &Expr) -> Expr {
    match e {
        Expr::Alias(Alias { expr, .. }) => as_written(expr),
        Expr::Cast(Cast { expr, .. }) => expr.as_ref().clone(),
        other => other.clone(),
    }
}

fn is_null(e: &Expr) -> bool {
    matches!(e, Expr::Literal(v, _) if v.is_null())
}
