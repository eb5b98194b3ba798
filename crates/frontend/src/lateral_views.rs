//! Doris's `LATERAL VIEW` as DataFusion plans it. `SELECT .. FROM t LATERAL VIEW explode(arr)
//! tmp AS e` turns every row of `t` into one row per element of `arr`; DataFusion has no
//! LATERAL VIEW, but it unnests: each view becomes a derived table under the table's own name,
//! `(SELECT t.*, unnest(arr) AS e FROM t WHERE arr IS NOT NULL) AS t`, so the query's `t.x`,
//! `e` and `tmp.e` keep meaning what they meant. Several views nest (their rows multiply, as
//! in Doris). The table functions:
//! - `explode(array)`; `explode_split(text, sep)` (the pieces of the text, as
//!   `split_by_string` cuts them: none for a NULL text or separator, one empty piece for the
//!   empty text);
//!   `explode_numbers(n)` (0 to n - 1); `explode_bitmap(bitmap)` (its members);
//!   `explode_json_array_int / _double / _string(json)` (the JSON array's elements);
//! - views of several columns, one alias each (`tmp AS a, b`): `explode(a1, a2, ..)` zips the
//!   arrays (as many rows as the longest has elements, NULL past a shorter one's end; no row
//!   when all are NULL or empty); `posexplode(array)` gives each element's 0-based position and
//!   the element; `explode_map(map)` each key and value; `explode_json_object(json)` each
//!   member's key and its value's JSON text (no row for a document that is no object);
//! - each `_outer` form (or `LATERAL VIEW OUTER`) keeps a row whose arrays are all NULL or
//!   empty, with NULL for every column.
//!
//! A view over a join (more than one table in FROM) or another table function is refused with
//! a clear error rather than planned wrong.

use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, LateralView, OrderByKind, Query,
    Select, SetExpr, Statement, TableFactor, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

/// Rewrites every SELECT of `stmt` that has lateral views.
pub fn rewrite(stmt: &mut Statement) -> Result<()> {
    match stmt.visit(&mut Views) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

struct Views;

impl VisitorMut for Views {
    type Break = BasaltError;

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<BasaltError> {
        let SetExpr::Select(select) = query.body.as_mut() else {
            return ControlFlow::Continue(());
        };
        if select.lateral_views.is_empty() {
            return ControlFlow::Continue(());
        }
        match rewrite_select(select) {
            Ok((view_names, table)) => {
                // `tmp.e` names the derived table's column `t.e`.
                let mut requalify = Requalify {
                    view_names,
                    table: Ident::new(table),
                };
                let _ = select.visit(&mut requalify);
                if let Some(order) = query.order_by.as_mut() {
                    if let OrderByKind::Expressions(items) = &mut order.kind {
                        for item in items {
                            let _ = item.expr.visit(&mut requalify);
                        }
                    }
                }
                ControlFlow::Continue(())
            }
            Err(e) => ControlFlow::Break(e),
        }
    }
}

/// Replaces the select's FROM and lateral views with nested unnesting derived tables; returns
/// the views' names and the name the derived table goes by.
fn rewrite_select(select: &mut Select) -> Result<(Vec<String>, String)> {
    let refused = |why: &str| BasaltError::NotSupported(format!("LATERAL VIEW {why}"));
    let [from] = select.from.as_slice() else {
        return Err(refused("over more than one table in FROM"));
    };
    if !from.joins.is_empty() {
        return Err(refused("over a join"));
    }
    let name = match &from.relation {
        TableFactor::Table {
            alias: Some(alias), ..
        }
        | TableFactor::Derived {
            alias: Some(alias), ..
        } => alias.name.value.clone(),
        TableFactor::Table { name, .. } => match name.0.last().and_then(|p| p.as_ident()) {
            Some(ident) => ident.value.clone(),
            None => return Err(refused("over this table")),
        },
        _ => return Err(refused("over this kind of table")),
    };
    let quoted = quote(&name);
    let mut relation = match &from.relation {
        // `db.t` goes by `t` inside the derived tables as outside them.
        TableFactor::Table { alias: None, .. } => format!("{} AS {quoted}", from.relation),
        other => other.to_string(),
    };
    let mut view_names = Vec::new();
    for view in std::mem::take(&mut select.lateral_views) {
        let table_function = table_function(&view)?;
        let columns: Vec<String> = view
            .lateral_col_alias
            .iter()
            .map(|c| quote(&c.value))
            .collect();
        if columns.is_empty() {
            return Err(refused("needs a column alias (AS name)"));
        }
        if columns.len() != table_function.columns.len() {
            return Err(BasaltError::WrongArguments {
                function: table_function.name,
                message: format!(
                    "its LATERAL VIEW gives {} column(s) but {} alias(es) name them",
                    table_function.columns.len(),
                    columns.len()
                ),
            });
        }
        let any_elements = table_function
            .sources
            .iter()
            .map(|s| format!("cardinality({s}) > 0"))
            .collect::<Vec<_>>()
            .join(" OR ");
        let unnested = table_function
            .columns
            .iter()
            .zip(&columns)
            .map(|(values, column)| {
                if table_function.outer {
                    // Arrays all NULL or empty give one row of NULLs.
                    format!(
                        "unnest(CASE WHEN {any_elements} THEN {values} ELSE make_array(NULL) END) AS {column}"
                    )
                } else {
                    format!("unnest({values}) AS {column}")
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        let filter = if table_function.outer {
            String::new()
        } else {
            let present = table_function
                .sources
                .iter()
                .map(|s| format!("{s} IS NOT NULL"))
                .collect::<Vec<_>>()
                .join(" OR ");
            format!(" WHERE {present}")
        };
        let sql = format!("SELECT {quoted}.*, {unnested} FROM {relation}{filter}");
        relation = format!("({sql}) AS {quoted}");
        view_names.extend(
            view.lateral_view_name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .map(|i| i.value.to_ascii_lowercase()),
        );
    }
    let parsed = basalt_sql::parse_one(&format!("SELECT * FROM {relation}"))?;
    let basalt_sql::Statement::Standard(parsed) = parsed else {
        return Err(refused("could not be planned"));
    };
    let Statement::Query(query) = *parsed else {
        return Err(refused("could not be planned"));
    };
    let SetExpr::Select(inner) = *query.body else {
        return Err(refused("could not be planned"));
    };
    select.from = inner.from;
    Ok((view_names, name))
}

/// A view's table function as arrays to unnest side by side.
struct TableFunction {
    /// Its name as written (for errors).
    name: String,
    /// One array per output column; unnested together (zipped, NULL-padded).
    columns: Vec<String>,
    /// The arrays whose elements make the rows: a row has none when all are NULL or empty.
    sources: Vec<String>,
    /// Whether a row without elements stays, with NULLs (`_outer`, `LATERAL VIEW OUTER`).
    outer: bool,
}

/// The arrays a view's table function unnests.
fn table_function(view: &LateralView) -> Result<TableFunction> {
    let Expr::Function(f) = &view.lateral_view else {
        return Err(BasaltError::NotSupported(format!(
            "LATERAL VIEW of {}: a table function such as explode(..) is expected",
            view.lateral_view
        )));
    };
    let name = f.name.to_string().to_ascii_lowercase();
    let args: Vec<String> = match &f.args {
        FunctionArguments::List(list) => list
            .args
            .iter()
            .map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e.to_string()),
                other => Err(BasaltError::NotSupported(format!(
                    "LATERAL VIEW {name} argument {other}"
                ))),
            })
            .collect::<Result<_>>()?,
        FunctionArguments::None => vec![],
        FunctionArguments::Subquery(_) => {
            return Err(BasaltError::NotSupported(format!(
                "LATERAL VIEW {name} of a subquery"
            )))
        }
    };
    let (base, outer) = match name.strip_suffix("_outer") {
        Some(base) => (base.to_string(), true),
        None => (name.clone(), view.outer),
    };
    let wrong = |message: &str| BasaltError::WrongArguments {
        function: name.clone(),
        message: message.into(),
    };
    let one = || -> Result<&String> {
        match args.as_slice() {
            [a] => Ok(a),
            _ => Err(wrong("it takes one argument")),
        }
    };
    // One column unnesting one array.
    let single = |values: String| (vec![values.clone()], vec![values]);
    let (columns, sources) = match base.as_str() {
        "explode" if args.is_empty() => return Err(wrong("it takes one or more arrays")),
        "explode" => (args.clone(), args.clone()),
        "posexplode" => {
            let array = one()?;
            (
                vec![
                    format!("range(0, CAST(cardinality({array}) AS BIGINT))"),
                    array.clone(),
                ],
                vec![array.clone()],
            )
        }
        "explode_map" => {
            let map = one()?;
            let keys = format!("map_keys({map})");
            (vec![keys.clone(), format!("map_values({map})")], vec![keys])
        }
        "explode_json_object" => {
            let entries = format!("json_object_entries({})", one()?);
            let keys = format!("map_keys({entries})");
            (
                vec![keys.clone(), format!("map_values({entries})")],
                vec![keys],
            )
        }
        "explode_split" => match args.as_slice() {
            // The empty text is one empty piece here (split_by_string gives no piece).
            [text, separator] => single(format!(
                "CASE WHEN ({text}) = '' THEN make_array('') \
                 ELSE split_by_string({text}, {separator}) END"
            )),
            _ => return Err(wrong("it takes a text and a separator")),
        },
        "explode_numbers" => single(format!("range({})", one()?)),
        "explode_bitmap" => single(format!("bitmap_to_array({})", one()?)),
        "explode_json_array_int" => single(format!("CAST({} AS ARRAY<BIGINT>)", one()?)),
        "explode_json_array_double" => single(format!("CAST({} AS ARRAY<DOUBLE>)", one()?)),
        "explode_json_array_string" => single(format!("CAST({} AS ARRAY<STRING>)", one()?)),
        _ => {
            return Err(BasaltError::NotSupported(format!(
                "LATERAL VIEW {name}: the table functions are explode, posexplode, explode_map, \
                 explode_json_object, explode_split, explode_numbers, explode_bitmap, \
                 explode_json_array_int/_double/_string and their _outer forms"
            )))
        }
    };
    Ok(TableFunction {
        name,
        columns,
        sources,
        outer,
    })
}

/// A backquoted identifier.
fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// Rewrites `view.column` into `table.column` for the views' names.
struct Requalify {
    view_names: Vec<String>,
    table: Ident,
}

impl VisitorMut for Requalify {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        if let Expr::CompoundIdentifier(parts) = expr {
            if let [qualifier, column] = parts.as_slice() {
                if self
                    .view_names
                    .contains(&qualifier.value.to_ascii_lowercase())
                {
                    *expr = Expr::CompoundIdentifier(vec![self.table.clone(), column.clone()]);
                }
            }
        }
        ControlFlow::Continue(())
    }
}
