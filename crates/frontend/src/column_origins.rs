//! The origin (database, table alias, stored table, stored column) of each result column read
//! straight from a table, found by following the column down the statement's logical plan, and
//! put on the result schema's fields for the MySQL protocol to report (see
//! [`basalt_common::column_origin`]). A computed column (an expression, an aggregate, a UNION's)
//! has none, as in MySQL.

use basalt_catalog::{Catalog, TableMeta};
use basalt_common::column_origin::ColumnOrigin;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::common::Column;
use datafusion::logical_expr::{Distinct, Expr, JoinType, LogicalPlan};
use std::sync::Arc;

/// `schema` (the result of `plan`) with each column's origin on its field; unchanged when no
/// column has one. `database` is the session's, for tables the statement names without one.
/// `named_by_plan` says the result's names were not written in the statement (`SELECT *`): a
/// table column is then shown as its own table spells it (two tables may spell `value` apart).
pub(crate) fn mark(
    schema: SchemaRef,
    plan: &LogicalPlan,
    database: Option<&str>,
    catalog: &dyn Catalog,
    named_by_plan: bool,
) -> SchemaRef {
    if plan.schema().fields().len() != schema.fields().len() {
        return schema;
    }
    let mut spellings = Spellings {
        catalog,
        table: None,
    };
    let origins: Vec<Option<ColumnOrigin>> = (0..schema.fields().len())
        .map(|i| origin(plan, i, database.unwrap_or_default(), &mut spellings))
        .collect();
    if origins.iter().all(Option::is_none) {
        return schema;
    }
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .zip(origins)
        .map(|(field, origin)| match origin {
            Some(origin) if named_by_plan && field.name().eq_ignore_ascii_case(&origin.column) => {
                let named = field.as_ref().clone().with_name(origin.column.clone());
                origin.attach(named)
            }
            Some(origin) => origin.attach(field.as_ref().clone()),
            None => field.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The column an expression names, through an alias of the select list.
fn column_of(expr: &Expr) -> Option<&Column> {
    match expr {
        Expr::Alias(alias) => column_of(&alias.expr),
        Expr::Column(column) => Some(column),
        _ => None,
    }
}

/// The alias of the outermost derived table, view or aliased table the column passes through,
/// and whether it names a stored table directly (`FROM t AS x`).
struct Alias {
    name: String,
    over_table: bool,
}

/// The stored column a result column is read straight from (as [`mark`] finds it), and whether
/// an outer join on the way can make it NULL where the table holds none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredColumn {
    pub database: String,
    /// The stored table (not an alias of it, nor of a derived table over it).
    pub table: String,
    /// The column's name as the scan reads it.
    pub column: String,
    pub null_extended: bool,
}

/// The stored column behind each column of `plan`'s result (`None` for computed ones).
pub(crate) fn stored_columns(
    plan: &LogicalPlan,
    database: Option<&str>,
) -> Vec<Option<StoredColumn>> {
    (0..plan.schema().fields().len())
        .map(|i| trace(plan, i, database.unwrap_or_default()).map(|(_, stored)| stored))
        .collect()
}

/// The origin of output column `index` of `plan`, with the column spelled as created.
fn origin(
    plan: &LogicalPlan,
    index: usize,
    database: &str,
    spellings: &mut Spellings,
) -> Option<ColumnOrigin> {
    let (mut origin, stored) = trace(plan, index, database)?;
    origin.column = spellings.spelled(&stored.database, &stored.table, &stored.column);
    Some(origin)
}

/// Output column `index` of `plan` followed down one node at a time (a plan may be deep, so
/// without recursion) until a table scan, or `None` at anything that computes it.
fn trace(plan: &LogicalPlan, index: usize, database: &str) -> Option<(ColumnOrigin, StoredColumn)> {
    let mut node = plan;
    let mut index = index;
    let mut alias: Option<Alias> = None;
    let mut null_extended = false;
    loop {
        let next = match node {
            LogicalPlan::Projection(p) => {
                let column = column_of(p.expr.get(index)?)?;
                index = p.input.schema().maybe_index_of_column(column)?;
                &p.input
            }
            LogicalPlan::Aggregate(a) => {
                let column = column_of(a.group_expr.get(index)?)?;
                index = a.input.schema().maybe_index_of_column(column)?;
                &a.input
            }
            LogicalPlan::Window(w) if index < w.input.schema().fields().len() => &w.input,
            LogicalPlan::Filter(f) => &f.input,
            LogicalPlan::Sort(s) => &s.input,
            LogicalPlan::Limit(l) => &l.input,
            LogicalPlan::Repartition(r) => &r.input,
            LogicalPlan::Distinct(Distinct::All(input)) => input,
            LogicalPlan::SubqueryAlias(a) => {
                if alias.is_none() {
                    alias = Some(Alias {
                        name: a.alias.table().to_string(),
                        over_table: matches!(a.input.as_ref(), LogicalPlan::TableScan(_)),
                    });
                }
                &a.input
            }
            LogicalPlan::Join(j) => {
                let (qualifier, field) = node.schema().qualified_field(index);
                let column = Column::new(qualifier.cloned(), field.name());
                match j.left.schema().maybe_index_of_column(&column) {
                    Some(i) => {
                        index = i;
                        null_extended |= matches!(j.join_type, JoinType::Right | JoinType::Full);
                        &j.left
                    }
                    None => {
                        index = j.right.schema().maybe_index_of_column(&column)?;
                        null_extended |= matches!(j.join_type, JoinType::Left | JoinType::Full);
                        &j.right
                    }
                }
            }
            LogicalPlan::TableScan(scan) => {
                let stored = scan.table_name.table().to_string();
                let (table, original_table) = match alias {
                    Some(Alias {
                        name,
                        over_table: true,
                    }) => (name, stored),
                    Some(Alias { name, .. }) => (name.clone(), name),
                    None => (stored.clone(), stored),
                };
                let database = scan.table_name.schema().unwrap_or(database);
                let folded = scan.projected_schema.fields().get(index)?.name();
                let origin = ColumnOrigin {
                    column: folded.clone(),
                    database: database.to_string(),
                    table,
                    original_table,
                };
                let stored = StoredColumn {
                    database: database.to_string(),
                    table: scan.table_name.table().to_string(),
                    column: folded.clone(),
                    null_extended,
                };
                return Some((origin, stored));
            }
            _ => return None,
        };
        node = next.as_ref();
    }
}

/// A column's name as created: the catalog matches names folded to lower case and keeps the
/// spelling apart (MySQL reports the spelling). The last table looked up is kept, as a result's
/// columns mostly come from one table.
struct Spellings<'a> {
    catalog: &'a dyn Catalog,
    table: Option<Arc<TableMeta>>,
}

impl Spellings<'_> {
    fn spelled(&mut self, database: &str, table: &str, column: &str) -> String {
        if database.eq_ignore_ascii_case(crate::catalog_provider::INFORMATION_SCHEMA) {
            let spellings = crate::information_schema::column_spellings(table);
            return match spellings
                .iter()
                .find(|(c, _)| c.eq_ignore_ascii_case(column))
            {
                Some((spelled, _)) => spelled.to_string(),
                None => column.to_string(),
            };
        }
        let cached = self
            .table
            .as_ref()
            .is_some_and(|t| t.database == database && t.name == table);
        if !cached {
            self.table = self.catalog.table(database, table).ok();
        }
        self.table
            .as_ref()
            .and_then(|t| t.column_index(column).map(|i| t.columns[i].shown_name()))
            .unwrap_or(column)
            .to_string()
    }
}
