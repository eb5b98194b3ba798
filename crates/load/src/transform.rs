//! The per-batch work of a load between parsing and storage: map the data's columns onto the
//! table (`columns` with derived expressions, defaults for the rest), convert to column types
//! (strict mode decides whether a failed conversion filters the row or makes it NULL), apply
//! `where` (unselected rows) and the `delete` condition, and check NOT NULL and lengths. Rows
//! that fail are counted and sampled with their reason instead of failing the load.

use super::options::{ColumnItem, LoadOptions, MergeType};
use super::rejects::Rejects;
use crate::context::LoadExpressions;
use basalt_catalog::{ColumnDefault, TableMeta};
use basalt_common::ip_address::{ip_column, IpFamily, IpValue};
use basalt_common::{BasaltError, Result, SqlType};
use basalt_storage::conform::{length_unit, pad_binary, round_datetime, round_time, value_lengths};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal256Array, RecordBatch, StringArray,
};
use datafusion::arrow::compute::{cast_with_options, concat, filter, CastOptions};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::DFSchema;
use datafusion::logical_expr::{cast, lit, Expr};
use datafusion::physical_expr::PhysicalExpr;
use std::collections::HashMap;
use std::sync::Arc;

/// `expr` as a query would compute it: the session's analyzer rules (MySQL's integer division,
/// type coercion, integer arithmetic that fails instead of wrapping) applied to a projection of
/// it over rows of `schema`.
fn analyzed(
    state: &datafusion::execution::context::SessionState,
    expr: Expr,
    schema: &DFSchema,
) -> datafusion::common::Result<Expr> {
    use datafusion::logical_expr::{EmptyRelation, LogicalPlan, LogicalPlanBuilder};
    let rows = LogicalPlan::EmptyRelation(EmptyRelation {
        produce_one_row: false,
        schema: Arc::new(schema.clone()),
    });
    let plan = LogicalPlanBuilder::from(rows)
        .project(vec![expr])?
        .build()?;
    let plan = state
        .analyzer()
        .execute_and_check(plan, state.config_options(), |_, _| {})?;
    match plan {
        LogicalPlan::Projection(p) if p.expr.len() == 1 => match p.expr.into_iter().next() {
            Some(e) => Ok(e.unalias()),
            None => datafusion::common::internal_err!("an expression analyzed into nothing"),
        },
        other => datafusion::common::internal_err!("an expression analyzed into {other}"),
    }
}

/// What produces one table column.
#[derive(Debug, Clone)]
enum ColumnSource {
    /// A data column (index into the source columns).
    Data(usize),
    /// An expression over the typed data columns (a derived column or a default).
    Expr(Arc<dyn PhysicalExpr>),
}

/// How to turn parsed data into table rows; built once per load, used by every worker.
#[derive(Debug)]
pub struct LoadPlan {
    table: Arc<TableMeta>,
    table_schema: SchemaRef,
    /// Names of the data's columns, in order.
    source_names: Vec<String>,
    /// The type each data column is converted to before expressions see it.
    source_types: Vec<DataType>,
    /// The address family of data columns that are IPV4 / IPV6 table columns (read from text
    /// as addresses).
    source_families: Vec<Option<IpFamily>>,
    typed_schema: SchemaRef,
    columns: Vec<ColumnSource>,
    /// Schema that `where` and `delete` see: the table's columns, then data-only columns.
    eval_schema: SchemaRef,
    /// Data columns that are not table columns (appended to the eval batch).
    extra_sources: Vec<usize>,
    where_pred: Option<Arc<dyn PhysicalExpr>>,
    delete_pred: Option<Arc<dyn PhysicalExpr>>,
    all_deletes: bool,
    strict: bool,
}

/// Table rows made from one parsed batch.
#[derive(Debug)]
pub struct Transformed {
    /// In the table's schema.
    pub batch: RecordBatch,
    /// For each output row, its row in the parsed batch (to report partition rejects).
    pub source_rows: Vec<u32>,
    /// Merge-on-write deletes: true for rows that delete their key.
    pub deletes: Option<BooleanArray>,
    pub unselected: u64,
    pub rejects: Rejects,
}

fn plan_err(e: impl std::fmt::Display) -> BasaltError {
    BasaltError::InvalidData(e.to_string())
}

impl LoadPlan {
    /// `data_names`/`data_types`: the columns the data provides when `columns` is not given
    /// (CSV: the table's columns or the header's names; JSON: the table's columns; Parquet: the
    /// file's columns). Names are lower-case.
    pub fn new(
        table: Arc<TableMeta>,
        options: &LoadOptions,
        data_names: Vec<String>,
        data_types: Vec<DataType>,
        expressions: &LoadExpressions,
    ) -> Result<LoadPlan> {
        let state = &expressions.state;
        let table_cols: HashMap<&str, usize> = table
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.as_str(), i))
            .collect();
        // Which data columns exist, and which table columns are computed.
        let (source_names, derived): (Vec<String>, Vec<(String, String)>) = match &options.columns {
            Some(items) => {
                let mut s = Vec::new();
                let mut d = Vec::new();
                for item in items {
                    match item {
                        ColumnItem::Source(n) => s.push(n.clone()),
                        ColumnItem::Derived { name, expr } => d.push((name.clone(), expr.clone())),
                    }
                }
                (s, d)
            }
            None => (data_names.clone(), Vec::new()),
        };
        let raw_type_of = |name: &str, pos: usize| -> DataType {
            if options.columns.is_some() {
                // With an explicit list, Parquet columns are matched by name.
                data_names
                    .iter()
                    .position(|n| n == name)
                    .map(|i| data_types[i].clone())
                    .unwrap_or(DataType::Utf8)
            } else {
                data_types.get(pos).cloned().unwrap_or(DataType::Utf8)
            }
        };
        let mut seen = std::collections::HashSet::new();
        for n in source_names.iter().chain(derived.iter().map(|(n, _)| n)) {
            if !seen.insert(n.as_str()) {
                return Err(plan_err(format!("column '{n}' appears twice in columns")));
            }
        }
        for (name, _) in &derived {
            if !table_cols.contains_key(name.as_str()) {
                return Err(BasaltError::UnknownColumn {
                    column: name.clone(),
                    context: format!("{}.{}", table.database, table.name),
                });
            }
        }
        // Data columns that are table columns take the column's type before expressions see them;
        // the others stay as they come (text for CSV and JSON).
        let mut source_types: Vec<DataType> = source_names
            .iter()
            .enumerate()
            .map(|(pos, n)| match table_cols.get(n.as_str()) {
                Some(&i) => table.columns[i].ty.arrow_type(),
                None => raw_type_of(n, pos),
            })
            .collect();

        let source_families: Vec<Option<IpFamily>> = source_names
            .iter()
            .map(|n| {
                table_cols
                    .get(n.as_str())
                    .and_then(|&i| table.columns[i].ty.ip_family())
            })
            .collect();

        let compile = |sql: &str, schema: &SchemaRef| -> Result<Arc<dyn PhysicalExpr>> {
            let df_schema = DFSchema::try_from(schema.as_ref().clone()).map_err(plan_err)?;
            let expr = (expressions.to_datafusion_sql)(sql)?;
            let logical = state
                .create_logical_expr(&expr, &df_schema)
                .and_then(|e| analyzed(state, e, &df_schema))
                .map_err(|e| plan_err(format!("cannot use expression '{sql}': {e}")))?;
            state
                .create_physical_expr(logical, &df_schema)
                .map_err(|e| plan_err(format!("cannot use expression '{sql}': {e}")))
        };
        let typed_schema_of = |types: &[DataType]| -> SchemaRef {
            Arc::new(Schema::new(
                source_names
                    .iter()
                    .zip(types)
                    .zip(&source_families)
                    .map(|((n, t), family)| match family {
                        Some(f) if *t == f.arrow_type() => f.field(n, true),
                        _ => Field::new(n, t.clone(), true),
                    })
                    .collect::<Vec<_>>(),
            ))
        };

        // Derived columns. A text-only data column used in arithmetic cannot be planned as text;
        // then it takes the derived column's type (Doris converts it implicitly).
        let mut derived_exprs: HashMap<String, Arc<dyn PhysicalExpr>> = HashMap::new();
        for (name, sql) in &derived {
            let target = table.columns[table_cols[name.as_str()]].ty.arrow_type();
            let schema = typed_schema_of(&source_types);
            let compiled = match compile(sql, &schema) {
                Ok(e) => e,
                Err(first) => {
                    let mut retyped = source_types.clone();
                    for (i, n) in source_names.iter().enumerate() {
                        if !table_cols.contains_key(n.as_str()) && retyped[i] == DataType::Utf8 {
                            retyped[i] = target.clone();
                        }
                    }
                    match compile(sql, &typed_schema_of(&retyped)) {
                        Ok(e) => {
                            source_types = retyped;
                            e
                        }
                        Err(_) => return Err(first),
                    }
                }
            };
            derived_exprs.insert(name.clone(), compiled);
        }
        let typed_schema = typed_schema_of(&source_types);
        // Re-plan derived columns against the final types (a later retyping may have changed
        // types an earlier expression was planned with).
        for (name, sql) in &derived {
            derived_exprs.insert(name.clone(), compile(sql, &typed_schema)?);
        }

        let df_typed = DFSchema::try_from(typed_schema.as_ref().clone()).map_err(plan_err)?;
        let mut columns = Vec::with_capacity(table.columns.len());
        for c in &table.columns {
            if let Some(e) = derived_exprs.remove(&c.name) {
                columns.push(ColumnSource::Expr(e));
            } else if let Some(i) = source_names.iter().position(|n| *n == c.name) {
                if c.ty.is_sketch() && raw_type_of(&c.name, i) != DataType::Binary {
                    return Err(plan_err(format!(
                        "column '{0}' is {1} and can't be loaded from text; load the data into \
                         another name and derive it in columns, e.g. columns: ..., src, {0}={2}(src)",
                        c.name,
                        c.ty,
                        match c.ty {
                            SqlType::Bitmap => "to_bitmap",
                            SqlType::QuantileState => "to_quantile_state",
                            _ => "hll_hash",
                        }
                    )));
                }
                columns.push(ColumnSource::Data(i));
            } else {
                let address = |v: &str| c.ty.ip_family().and_then(|f| f.parse_text(v));
                let default: Expr = match &c.default {
                    Some(ColumnDefault::Literal(v)) if address(v).is_some() => {
                        match address(v) {
                            Some(IpValue::V4(a)) => lit(a),
                            Some(IpValue::V6(a)) => lit(a.to_be_bytes().to_vec()),
                            None => lit(datafusion::common::ScalarValue::Null),
                        }
                    }
                    Some(ColumnDefault::Literal(v)) => cast(lit(v.clone()), c.ty.arrow_type()),
                    Some(ColumnDefault::CurrentTimestamp) => cast(
                        datafusion::functions::datetime::expr_fn::now(),
                        c.ty.arrow_type(),
                    ),
                    Some(ColumnDefault::Null) => cast(lit(datafusion::common::ScalarValue::Null), c.ty.arrow_type()),
                    Some(ColumnDefault::Expression(text)) => {
                        basalt_functions::generated_columns::default_expression(text, &c.ty.arrow_type())
                            .map_err(|e| plan_err(format!(
                                "column '{}': DEFAULT ({text}): {e}",
                                c.name
                            )))?
                    }
                    // AUTO_INCREMENT columns left out get new ids when the rows are written,
                    // generated columns their values.
                    None if c.nullable
                        || c.auto_increment
                        || c.generated.is_some()
                        || options.merge_type == MergeType::Delete =>
                    {
                        // Delete rows need only their key; value columns get neutral values.
                        cast(lit(datafusion::common::ScalarValue::Null), c.ty.arrow_type())
                    }
                    None => {
                        return Err(plan_err(format!(
                            "column '{}' is NOT NULL, has no default value and is not in the load's columns",
                            c.name
                        )))
                    }
                };
                columns.push(ColumnSource::Expr(
                    state
                        .create_physical_expr(default, &df_typed)
                        .map_err(plan_err)?,
                ));
            }
        }
        // AUTO_INCREMENT values may still be NULL here: the writer fills them in.
        let table_schema = {
            let schema = table.arrow_schema();
            let fields: Vec<Field> = schema
                .fields()
                .iter()
                .zip(&table.columns)
                .map(|(f, c)| {
                    f.as_ref()
                        .clone()
                        .with_nullable(f.is_nullable() || c.auto_increment || c.generated.is_some())
                })
                .collect();
            Arc::new(Schema::new(fields))
        };
        let extra_sources: Vec<usize> = (0..source_names.len())
            .filter(|i| !table_cols.contains_key(source_names[*i].as_str()))
            .collect();
        let mut eval_fields: Vec<Field> = table_schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_nullable(true))
            .collect();
        for &i in &extra_sources {
            eval_fields.push(Field::new(&source_names[i], source_types[i].clone(), true));
        }
        let eval_schema = Arc::new(Schema::new(eval_fields));
        let where_pred = options
            .where_expr
            .as_deref()
            .map(|w| compile(w, &eval_schema))
            .transpose()?;
        let delete_pred = options
            .delete_condition
            .as_deref()
            .map(|w| compile(w, &eval_schema))
            .transpose()?;
        Ok(LoadPlan {
            table_schema,
            source_names,
            source_types,
            source_families,
            typed_schema,
            columns,
            eval_schema,
            extra_sources,
            where_pred,
            delete_pred,
            all_deletes: options.merge_type == MergeType::Delete,
            strict: options.strict_mode,
            table,
        })
    }

    /// The data columns the parser must produce, in order.
    pub fn source_names(&self) -> &[String] {
        &self.source_names
    }

    /// Turns parsed columns (one per source name) into table rows. `row_text(i)` renders parsed
    /// row `i` for the error log.
    pub fn apply(
        &self,
        raw: &[ArrayRef],
        num_rows: usize,
        row_text: &dyn Fn(usize) -> String,
    ) -> Result<Transformed> {
        let mut rejects = Rejects::default();
        let mut keep = vec![true; num_rows];
        // 1. Data columns to their types.
        let mut typed = Vec::with_capacity(raw.len());
        for (i, array) in raw.iter().enumerate() {
            let target = &self.source_types[i];
            let (converted, failed) = match self.source_families[i] {
                Some(family) => convert_address(array, family)?,
                None => convert(array, target)?,
            };
            if self.strict {
                for row in failed {
                    if keep[row] {
                        keep[row] = false;
                        rejects.add(
                            || row_text(row),
                            || {
                                let target = match self.source_families[i] {
                                    Some(family) => family.sql_name().to_string(),
                                    None => target.to_string(),
                                };
                                format!(
                                    "column '{}': value '{}' cannot be converted to {}",
                                    self.source_names[i],
                                    display_value(array, row),
                                    target
                                )
                            },
                        );
                    }
                }
            }
            typed.push(converted);
        }
        let typed_batch = RecordBatch::try_new_with_options(
            self.typed_schema.clone(),
            typed,
            &datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(num_rows)),
        )
        .map_err(plan_err)?;
        // 2. Table columns.
        let mut out = Vec::with_capacity(self.columns.len());
        for (ci, (src, meta)) in self.columns.iter().zip(&self.table.columns).enumerate() {
            let array = match src {
                ColumnSource::Data(i) => typed_batch.column(*i).clone(),
                ColumnSource::Expr(e) => {
                    let v = evaluate_filtering(
                        e,
                        &typed_batch,
                        &format!("column '{}'", meta.name),
                        &mut keep,
                        &mut rejects,
                        row_text,
                    )?;
                    // As in Doris, strict mode judges the data's conversions, not what
                    // functions compute: a computed value that does not fit is NULL (and then
                    // filtered only if the column is NOT NULL).
                    let target = self.table_schema.field(ci).data_type();
                    match meta.ty.ip_family() {
                        Some(family) => convert_address(&v, family)?.0,
                        None => convert(&v, target)?.0,
                    }
                }
            };
            out.push(array);
        }
        // 3. `where` and `delete` see the table's columns and the data-only columns.
        let mut eval_columns = out.clone();
        for &i in &self.extra_sources {
            eval_columns.push(typed_batch.column(i).clone());
        }
        let eval = RecordBatch::try_new_with_options(
            self.eval_schema.clone(),
            eval_columns,
            &datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(num_rows)),
        )
        .map_err(plan_err)?;
        let mut unselected = 0u64;
        if let Some(pred) = &self.where_pred {
            let v = evaluate_filtering(pred, &eval, "where", &mut keep, &mut rejects, row_text)?;
            let mask = as_condition(v, "where")?;
            for (row, k) in keep.iter_mut().enumerate() {
                if *k && !(mask.is_valid(row) && mask.value(row)) {
                    *k = false;
                    unselected += 1;
                }
            }
        }
        let deletes: Option<BooleanArray> = if self.all_deletes {
            Some(BooleanArray::from(vec![true; num_rows]))
        } else if let Some(pred) = &self.delete_pred {
            let v = evaluate_filtering(pred, &eval, "delete", &mut keep, &mut rejects, row_text)?;
            let mask = as_condition(v, "delete")?;
            Some(
                (0..num_rows)
                    .map(|r| Some(mask.is_valid(r) && mask.value(r)))
                    .collect(),
            )
        } else {
            None
        };
        // 4. What the column types declare.
        for (ci, meta) in self.table.columns.iter().enumerate() {
            let col = &out[ci];
            let is_key = ci < self.table.num_key_columns;
            if !meta.nullable && col.null_count() > 0 {
                for (row, k) in keep.iter_mut().enumerate() {
                    let is_delete = deletes.as_ref().is_some_and(|d| d.value(row));
                    // A NULL AUTO_INCREMENT value is filled in; a delete needs a real key.
                    let filled_later =
                        (meta.auto_increment || meta.generated.is_some()) && !is_delete;
                    if *k && col.is_null(row) && (is_key || !is_delete) && !filled_later {
                        *k = false;
                        rejects.add(
                            || row_text(row),
                            || format!("column '{}' is NULL but declared NOT NULL", meta.name),
                        );
                    }
                }
            }
            match meta.ty {
                SqlType::Char(max)
                | SqlType::Varchar(max)
                | SqlType::Binary(max)
                | SqlType::Varbinary(max) => {
                    for (row, len) in value_lengths(col).enumerate() {
                        let Some(len) = len else { continue };
                        if keep[row] && len > max as usize {
                            keep[row] = false;
                            rejects.add(
                                || row_text(row),
                                || {
                                    format!(
                                        "column '{}': value is {len} {}, longer than {}",
                                        meta.name,
                                        length_unit(&meta.ty),
                                        meta.ty
                                    )
                                },
                            );
                        }
                    }
                    if let SqlType::Binary(n) = meta.ty {
                        out[ci] = pad_binary(col, n);
                    }
                }
                SqlType::Json => {
                    if let Some(strings) = col.as_string_opt::<i32>() {
                        let (docs, failed) = basalt_common::typed_text::json_column(strings);
                        for (row, reason) in failed {
                            if keep[row] {
                                keep[row] = false;
                                rejects.add(
                                    || row_text(row),
                                    || format!("column '{}': invalid JSON: {reason}", meta.name),
                                );
                            }
                        }
                        out[ci] = Arc::new(docs);
                    }
                }
                // Text that is no JSON document loads NULL (Doris); a NOT NULL column filters
                // its row.
                SqlType::Variant => {
                    if let Some(strings) = col.as_string_opt::<i32>() {
                        let docs = basalt_common::variant::variant_column(strings);
                        if !meta.nullable {
                            for (row, k) in keep.iter_mut().enumerate() {
                                if *k && strings.is_valid(row) && docs.is_null(row) {
                                    *k = false;
                                    rejects.add(
                                        || row_text(row),
                                        || {
                                            format!(
                                                "column '{}': not a JSON document for a NOT NULL \
                                                 VARIANT",
                                                meta.name
                                            )
                                        },
                                    );
                                }
                            }
                        }
                        out[ci] = Arc::new(docs);
                    }
                }
                SqlType::LargeInt => {
                    if let Some(values) = col.as_any().downcast_ref::<Decimal256Array>() {
                        for (row, k) in keep.iter_mut().enumerate() {
                            if *k && values.is_valid(row) && values.value(row).to_i128().is_none() {
                                *k = false;
                                rejects.add(
                                    || row_text(row),
                                    || {
                                        format!(
                                            "column '{}': value out of LARGEINT range",
                                            meta.name
                                        )
                                    },
                                );
                            }
                        }
                    }
                }
                SqlType::Bit(width) => {
                    for row in basalt_storage::bit_values::wider_rows(col, width) {
                        if keep[row] {
                            keep[row] = false;
                            rejects.add(
                                || row_text(row),
                                || {
                                    format!(
                                        "column '{}': value is wider than {}",
                                        meta.name, meta.ty
                                    )
                                },
                            );
                        }
                    }
                }
                SqlType::DateTime { scale } if scale < 6 => {
                    out[ci] = round_datetime(col, scale);
                }
                SqlType::Time { scale } => {
                    let (rounded, out_of_range) = round_time(col, scale);
                    for row in out_of_range {
                        if keep[row] {
                            keep[row] = false;
                            rejects.add(
                                || row_text(row),
                                || {
                                    format!(
                                        "column '{}': TIME value rounds past 838:59:59",
                                        meta.name
                                    )
                                },
                            );
                        }
                    }
                    out[ci] = rounded;
                }
                _ => {}
            }
        }
        // 5. Keep the good rows; tombstones get neutral values in NOT NULL value columns.
        let selected: Vec<u32> = (0..num_rows as u32).filter(|r| keep[*r as usize]).collect();
        let (columns, deletes) = if selected.len() == num_rows {
            (out, deletes)
        } else {
            let mask = BooleanArray::from(keep);
            let cols = out
                .iter()
                .map(|c| filter(c, &mask))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(plan_err)?;
            let d = deletes
                .map(|d| filter(&d, &mask).map(|a| a.as_boolean().clone()))
                .transpose()
                .map_err(plan_err)?;
            (cols, d)
        };
        let columns = match &deletes {
            Some(d) if d.true_count() > 0 => fill_tombstones(&self.table, columns)?,
            _ => columns,
        };
        let batch = RecordBatch::try_new_with_options(
            self.table_schema.clone(),
            columns,
            &datafusion::arrow::array::RecordBatchOptions::new()
                .with_row_count(Some(selected.len())),
        )
        .map_err(plan_err)?;
        Ok(Transformed {
            batch,
            source_rows: selected,
            deletes,
            unselected,
            rejects,
        })
    }
}

/// Evaluates `expr` over the batch. If that fails (a division by zero or a bad cast in some
/// row), it is evaluated row by row: rows that fail are filtered with the error as their
/// reason, the others keep their values. Rows already filtered are not evaluated.
fn evaluate_filtering(
    expr: &Arc<dyn PhysicalExpr>,
    batch: &RecordBatch,
    what: &str,
    keep: &mut [bool],
    rejects: &mut Rejects,
    row_text: &dyn Fn(usize) -> String,
) -> Result<ArrayRef> {
    let rows = batch.num_rows();
    if let Ok(v) = expr.evaluate(batch).and_then(|v| v.into_array(rows)) {
        return Ok(v);
    }
    let ty = expr
        .data_type(batch.schema_ref())
        .map_err(|e| plan_err(format!("{what}: {e}")))?;
    let mut parts: Vec<ArrayRef> = Vec::with_capacity(rows);
    for (row, k) in keep.iter_mut().enumerate().take(rows) {
        let value = if *k {
            match expr
                .evaluate(&batch.slice(row, 1))
                .and_then(|v| v.into_array(1))
            {
                Ok(v) if v.data_type() == &ty => Some(v),
                Ok(v) => {
                    Some(cast_with_options(&v, &ty, &CastOptions::default()).map_err(plan_err)?)
                }
                Err(e) => {
                    *k = false;
                    rejects.add(|| row_text(row), || format!("{what}: {e}"));
                    None
                }
            }
        } else {
            None
        };
        parts.push(value.unwrap_or_else(|| datafusion::arrow::array::new_null_array(&ty, 1)));
    }
    let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
    concat(&refs).map_err(plan_err)
}

/// A `where` or `delete` result as a condition.
fn as_condition(v: ArrayRef, what: &str) -> Result<BooleanArray> {
    let v = if v.data_type() == &DataType::Boolean {
        v
    } else {
        cast_with_options(&v, &DataType::Boolean, &CastOptions::default())
            .map_err(|e| plan_err(format!("{what} is not a condition: {e}")))?
    };
    Ok(v.as_boolean().clone())
}

/// Converts `array` to `target`: returns the converted array and the rows whose non-NULL value
/// could not be converted (they are NULL in the result). Empty text is NULL for non-text types.
pub fn convert(array: &ArrayRef, target: &DataType) -> Result<(ArrayRef, Vec<usize>)> {
    if array.data_type() == target {
        return Ok((array.clone(), Vec::new()));
    }
    if let Some(strings) = array.as_any().downcast_ref::<StringArray>() {
        if matches!(
            target,
            DataType::List(_) | DataType::LargeList(_) | DataType::Map(..) | DataType::Struct(_)
        ) {
            let (out, failed) =
                basalt_common::typed_text::nested_column(strings, target).map_err(plan_err)?;
            return Ok((out, failed.into_iter().map(|(row, _)| row).collect()));
        }
    }
    let mut source = array.clone();
    // Text and bytes keep every character: no trimming, and a blank value stays a value.
    let keeps_text = matches!(
        target,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
    );
    if let (Some(strings), false) = (array.as_any().downcast_ref::<StringArray>(), keeps_text) {
        if strings
            .iter()
            .any(|v| v.is_some_and(|s| s.trim().is_empty()))
        {
            let cleaned: StringArray = strings
                .iter()
                .map(|v| v.filter(|s| !s.trim().is_empty()))
                .collect();
            source = Arc::new(cleaned);
        }
        // Surrounding spaces around numbers and dates are tolerated, as Doris does.
        let needs_trim = strings
            .iter()
            .flatten()
            .any(|s| s.starts_with(' ') || s.ends_with(' '));
        if needs_trim {
            let trimmed: StringArray = source
                .as_string::<i32>()
                .iter()
                .map(|v| v.map(str::trim))
                .collect();
            source = Arc::new(trimmed);
        }
    }
    if let Some(strings) = source.as_string_opt::<i32>() {
        // DATE / DATETIME in MySQL's forms (`2012/12/31`, `20121231`, ..).
        if let Some((out, mut failed)) = basalt_common::datetime_text::parse_column(strings, target)
        {
            if matches!(target, DataType::Time64(_)) {
                failed.extend(clipped_times(strings));
                failed.sort_unstable();
            }
            return Ok((out, failed));
        }
    }
    if let (DataType::Decimal128(precision, scale), Some(strings)) =
        (target, source.as_string_opt::<i32>())
    {
        if let Some(done) = fast_decimal(strings, *precision, *scale) {
            return Ok(done);
        }
    }
    let options = CastOptions {
        safe: true,
        ..Default::default()
    };
    let out = cast_with_options(&source, target, &options).map_err(|e| {
        plan_err(format!(
            "cannot convert {} to {target}: {e}",
            array.data_type()
        ))
    })?;
    let mut failed = Vec::new();
    if out.null_count() > source.null_count() {
        for row in 0..out.len() {
            if out.is_null(row) && source.is_valid(row) {
                failed.push(row);
            }
        }
    }
    Ok((out, failed))
}

/// The rows whose TIME text lies beyond ±838:59:59: their value is clipped to the range's end,
/// which strict mode refuses as it refuses any value that does not convert (Doris and MySQL
/// filter the row; outside strict mode the clipped value is kept).
fn clipped_times(strings: &StringArray) -> Vec<usize> {
    (0..strings.len())
        .filter(|row| {
            strings.is_valid(*row)
                && basalt_common::time_value::parse_text(strings.value(*row))
                    .is_some_and(|t| t.clipped)
        })
        .collect()
}

/// Plain decimal text (`-12.345`) to DECIMAL(precision, scale), rounding extra fraction digits
/// half away from zero; values that do not fit fail. `None` when some value uses another
/// notation (an exponent, ...): the general cast handles the column then.
fn fast_decimal(strings: &StringArray, precision: u8, scale: i8) -> Option<(ArrayRef, Vec<usize>)> {
    if !(0..=38).contains(&scale) || precision > 38 {
        return None;
    }
    let scale = scale as usize;
    let limit = 10i128.pow(precision as u32);
    let mut values = Vec::with_capacity(strings.len());
    let mut valid = Vec::with_capacity(strings.len());
    let mut failed = Vec::new();
    for (row, v) in strings.iter().enumerate() {
        let Some(text) = v else {
            values.push(0);
            valid.push(false);
            continue;
        };
        match parse_plain_decimal(text.as_bytes(), scale)? {
            Some(x) if x.abs() < limit => {
                values.push(x);
                valid.push(true);
            }
            _ => {
                values.push(0);
                valid.push(false);
                failed.push(row);
            }
        }
    }
    let array = datafusion::arrow::array::Decimal128Array::new(
        values.into(),
        Some(datafusion::arrow::buffer::NullBuffer::from(valid)),
    )
    .with_precision_and_scale(precision, scale as i8)
    .ok()?;
    Some((Arc::new(array), failed))
}

/// `Some(Some(v))`: parsed; `Some(None)`: plain syntax but too many digits; `None`: not plain.
fn parse_plain_decimal(b: &[u8], scale: usize) -> Option<Option<i128>> {
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    let (int_part, frac_part) = match digits.iter().position(|c| *c == b'.') {
        Some(dot) => (&digits[..dot], &digits[dot + 1..]),
        None => (digits, &digits[digits.len()..]),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part.iter().chain(frac_part).all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i128 = 0;
    for d in int_part {
        v = match v
            .checked_mul(10)
            .and_then(|x| x.checked_add((d - b'0') as i128))
        {
            Some(x) => x,
            None => return Some(None),
        };
    }
    for i in 0..scale {
        let d = frac_part.get(i).map(|c| (c - b'0') as i128).unwrap_or(0);
        v = match v.checked_mul(10).and_then(|x| x.checked_add(d)) {
            Some(x) => x,
            None => return Some(None),
        };
    }
    if frac_part.get(scale).is_some_and(|c| *c >= b'5') {
        v = match v.checked_add(1) {
            Some(x) => x,
            None => return Some(None),
        };
    }
    Some(Some(if neg { -v } else { v }))
}

/// Values converted to addresses of `family`: text read as addresses (a blank value is NULL, as
/// for numbers), other types cast; rows that do not convert are NULL and listed.
fn convert_address(array: &ArrayRef, family: IpFamily) -> Result<(ArrayRef, Vec<usize>)> {
    let target = family.arrow_type();
    if array.data_type() == &target {
        return Ok((array.clone(), Vec::new()));
    }
    if matches!(
        array.data_type(),
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
    ) {
        let text = datafusion::arrow::compute::cast(array, &DataType::Utf8).map_err(plan_err)?;
        let values: StringArray = text
            .as_string::<i32>()
            .iter()
            .map(|v| v.filter(|s| !s.trim().is_empty()))
            .collect();
        return Ok(ip_column(&values, family));
    }
    convert(array, &target)
}

fn display_value(array: &ArrayRef, row: usize) -> String {
    datafusion::arrow::util::display::array_value_to_string(array, row)
        .unwrap_or_else(|_| "?".into())
}

/// Delete rows only need their key: NULLs in NOT NULL value columns become a neutral value so
/// the row can be stored as a (deleted) tombstone.
fn fill_tombstones(table: &TableMeta, mut columns: Vec<ArrayRef>) -> Result<Vec<ArrayRef>> {
    for (ci, meta) in table.columns.iter().enumerate() {
        if meta.nullable || columns[ci].null_count() == 0 {
            continue;
        }
        let ty = meta.ty.arrow_type();
        let zero = datafusion::common::ScalarValue::new_zero(&ty)
            .or_else(|_| datafusion::common::ScalarValue::try_from(&ty))
            .map_err(plan_err)?;
        let neutral = if ty == DataType::Utf8 {
            datafusion::common::ScalarValue::Utf8(Some(String::new()))
        } else {
            zero
        };
        let filled = neutral
            .to_array_of_size(columns[ci].len())
            .map_err(plan_err)?;
        let col = &columns[ci];
        let mask: BooleanArray = (0..col.len()).map(|r| Some(col.is_valid(r))).collect();
        columns[ci] =
            datafusion::arrow::compute::kernels::zip::zip(&mask, col, &filled).map_err(plan_err)?;
    }
    Ok(columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Decimal128Array;

    #[test]
    fn times_beyond_the_range_fail_but_keep_their_clipped_value() {
        let input: ArrayRef = Arc::new(StringArray::from(vec![
            Some("900:00:00"),
            Some("12:30"),
            Some("-839:00:00"),
            Some("abc"),
            None,
        ]));
        let target = DataType::Time64(datafusion::arrow::datatypes::TimeUnit::Microsecond);
        let (out, failed) = convert(&input, &target).unwrap();
        assert_eq!(failed, vec![0, 2, 3]);
        let times = out.as_primitive::<datafusion::arrow::datatypes::Time64MicrosecondType>();
        let max = basalt_common::time_value::MAX_TIME_MICROS;
        assert_eq!(times.value(0), max);
        assert_eq!(times.value(1), 45_000_000_000);
        assert_eq!(times.value(2), -max);
        assert!(times.is_null(3) && times.is_null(4));
    }

    #[test]
    fn decimals_parse_round_and_overflow() {
        let input: ArrayRef = Arc::new(StringArray::from(vec![
            Some("12.345"),
            Some("-0.005"),
            Some("7"),
            Some(".5"),
            Some("99999.99"),
            Some("100000"),
            Some("abc"),
            None,
        ]));
        let (out, failed) = convert(&input, &DataType::Decimal128(7, 2)).unwrap();
        let d = out.as_any().downcast_ref::<Decimal128Array>().unwrap();
        assert_eq!(d.value(0), 1235);
        assert_eq!(d.value(1), -1);
        assert_eq!(d.value(2), 700);
        assert_eq!(d.value(3), 50);
        assert_eq!(d.value(4), 9999999);
        assert!(d.is_null(5) && d.is_null(6) && d.is_null(7));
        assert_eq!(failed, vec![5, 6]);
    }
}
