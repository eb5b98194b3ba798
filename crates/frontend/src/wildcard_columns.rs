//! Wildcards spelled out column by column, for a select list whose wildcards show a column
//! twice (`SELECT *, t.* FROM t`, `SELECT l.*, * FROM l JOIN r ..`, `SELECT t.*, k FROM t`).
//! MySQL shows every column as often as it is asked for; DataFusion's projections need
//! distinct names, and a wildcard's columns cannot be given aliases. So, once planning has
//! refused the names, each plain wildcard of the outermost SELECT becomes the list of columns
//! it stands for, qualified by the table (or alias) each comes from: planning the same SELECT
//! with only that wildcard as its select list tells which. The duplicate names are then given
//! internal aliases like any others (`result_names`).

use basalt_sql::ast::{
    Expr, Ident, Query, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, Statement,
};
use datafusion::execution::SessionState;
use datafusion::sql::parser::Statement as DfStatement;
use std::collections::HashMap;

/// Spells out the plain wildcards of the outermost SELECT of `stmt` (see the module doc); a
/// column whose name `shown` spells otherwise (as created, lower-case name -> spelling) is
/// given that spelling as its alias. True if a wildcard was spelled out; one whose columns
/// cannot be had by planning leaves `stmt` as it was.
pub(crate) async fn spell_out(
    stmt: &mut Statement,
    state: &SessionState,
    shown: &HashMap<String, String>,
) -> bool {
    let query = match stmt {
        Statement::Query(q) => q.as_mut(),
        Statement::Explain { statement, .. } => match statement.as_mut() {
            Statement::Query(q) => q.as_mut(),
            _ => return false,
        },
        _ => return false,
    };
    let SetExpr::Select(select) = query.body.as_ref() else {
        return false;
    };
    if !select.projection.iter().any(is_plain_wildcard) {
        return false;
    }
    let mut projection = Vec::with_capacity(select.projection.len());
    for item in &select.projection {
        if !is_plain_wildcard(item) {
            projection.push(item.clone());
            continue;
        }
        let Some(columns) = columns_of(query, item, state).await else {
            return false;
        };
        for (column, name) in columns {
            projection.push(match shown.get(&name) {
                Some(spelling) if *spelling != name => SelectItem::ExprWithAlias {
                    expr: column,
                    alias: Ident::with_quote('`', spelling),
                },
                _ => SelectItem::UnnamedExpr(column),
            });
        }
    }
    if let SetExpr::Select(select) = query.body.as_mut() {
        select.projection = projection;
    }
    true
}

/// `*` or `t.*` without EXCLUDE, REPLACE or the like.
fn is_plain_wildcard(item: &SelectItem) -> bool {
    let options = match item {
        SelectItem::Wildcard(options) => options,
        SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(_), options) => {
            options
        }
        _ => return false,
    };
    crate::merged_columns::is_plain(options)
}

/// The qualified columns `wildcard` stands for in `query`'s outermost SELECT, with their
/// names, from planning the SELECT with the wildcard as its only item (no ORDER BY or LIMIT).
async fn columns_of(
    query: &Query,
    wildcard: &SelectItem,
    state: &SessionState,
) -> Option<Vec<(Expr, String)>> {
    let mut alone = query.clone();
    alone.order_by = None;
    alone.limit_clause = None;
    alone.fetch = None;
    if let SetExpr::Select(select) = alone.body.as_mut() {
        select.projection = vec![wildcard.clone()];
    }
    let statement = DfStatement::Statement(Box::new(Statement::Query(Box::new(alone))));
    let plan = state.statement_to_plan(statement).await.ok()?;
    let columns = plan
        .schema()
        .iter()
        .map(|(qualifier, field)| {
            let mut parts: Vec<Ident> = qualifier
                .map(|table| table.to_vec())
                .unwrap_or_default()
                .into_iter()
                .map(|part| Ident::with_quote('`', part))
                .collect();
            parts.push(Ident::with_quote('`', field.name()));
            let column = match parts.len() {
                1 => Expr::Identifier(parts.remove(0)),
                _ => Expr::CompoundIdentifier(parts),
            };
            (column, field.name().clone())
        })
        .collect();
    Some(columns)
}
