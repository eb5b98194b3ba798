//! MySQL matches column names and aliases without regard to case, quoted or not (`Bx`, `bx` and
//! `` `BX` `` are one column); DataFusion folds only unquoted identifiers. Before planning, every
//! identifier that names a column, an alias, a table or a CTE is folded to lower case here, as
//! the catalog stores names. Result columns keep the spelling the client wrote (they are named
//! from the statement before this runs); `SELECT *` shows the spelling a column was created with
//! (`display_names`).

use basalt_catalog::Catalog;
use basalt_sql::ast::{
    Expr, Ident, ObjectName, ObjectNamePart, Query, Select, SelectItem, SetExpr, Statement,
    TableFactor, TableWithJoins, VisitMut, VisitorMut,
};
use std::collections::HashMap;
use std::ops::ControlFlow;

/// Folds the names `stmt` uses to lower case (see the module doc).
pub fn fold(stmt: &mut Statement) {
    let _ = stmt.visit(&mut Folder);
}

struct Folder;

impl VisitorMut for Folder {
    type Break = ();

    fn pre_visit_statement(&mut self, stmt: &mut Statement) -> ControlFlow<()> {
        if let Statement::Insert(insert) = stmt {
            insert.columns.iter_mut().for_each(fold_name);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        if let Some(with) = &mut query.with {
            for cte in &mut with.cte_tables {
                fold_ident(&mut cte.alias.name);
                cte.alias
                    .columns
                    .iter_mut()
                    .for_each(|c| fold_ident(&mut c.name));
            }
        }
        fold_set_expr(&mut query.body);
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, relation: &mut ObjectName) -> ControlFlow<()> {
        fold_name(relation);
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        match expr {
            Expr::Identifier(ident) => fold_ident(ident),
            Expr::CompoundIdentifier(parts) if !is_variable(parts) => {
                parts.iter_mut().for_each(fold_ident)
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// `@@session.x` and `@x` are variables, not columns.
fn is_variable(parts: &[Ident]) -> bool {
    parts.first().is_some_and(|p| p.value.starts_with('@'))
}

fn fold_set_expr(body: &mut SetExpr) {
    match body {
        SetExpr::Select(select) => fold_select(select),
        SetExpr::SetOperation { left, right, .. } => {
            fold_set_expr(left);
            fold_set_expr(right);
        }
        _ => {}
    }
}

fn fold_select(select: &mut Select) {
    for item in &mut select.projection {
        if let SelectItem::ExprWithAlias { alias, .. } = item {
            fold_ident(alias);
        }
    }
    select.from.iter_mut().for_each(fold_from);
}

fn fold_from(from: &mut TableWithJoins) {
    fold_factor(&mut from.relation);
    for join in &mut from.joins {
        fold_factor(&mut join.relation);
        use basalt_sql::ast::{JoinConstraint, JoinOperator as J};
        let constraint = match &mut join.join_operator {
            J::Join(c)
            | J::Inner(c)
            | J::Left(c)
            | J::LeftOuter(c)
            | J::Right(c)
            | J::RightOuter(c)
            | J::FullOuter(c)
            | J::CrossJoin(c)
            | J::Semi(c)
            | J::LeftSemi(c)
            | J::RightSemi(c)
            | J::Anti(c)
            | J::LeftAnti(c)
            | J::RightAnti(c)
            | J::StraightJoin(c) => Some(c),
            _ => None,
        };
        if let Some(JoinConstraint::Using(columns)) = constraint {
            columns.iter_mut().for_each(fold_name);
        }
    }
}

fn fold_factor(factor: &mut TableFactor) {
    let alias = match factor {
        TableFactor::Table { alias, .. }
        | TableFactor::Derived { alias, .. }
        | TableFactor::Function { alias, .. }
        | TableFactor::UNNEST { alias, .. } => alias,
        TableFactor::NestedJoin {
            table_with_joins,
            alias,
        } => {
            fold_from(table_with_joins);
            alias
        }
        _ => return,
    };
    if let Some(alias) = alias {
        fold_ident(&mut alias.name);
        alias
            .columns
            .iter_mut()
            .for_each(|c| fold_ident(&mut c.name));
    }
}

fn fold_name(name: &mut ObjectName) {
    for part in &mut name.0 {
        if let ObjectNamePart::Identifier(ident) = part {
            fold_ident(ident);
        }
    }
}

fn fold_ident(ident: &mut Ident) {
    if ident.value.chars().any(|c| c.is_uppercase()) {
        ident.value = ident.value.to_lowercase();
    }
}

/// Lower-case name -> spelling as created, of the columns of the tables `stmt` reads whose
/// spelling is not all lower case (information_schema's columns are upper case, as MySQL's).
pub fn shown_names(
    catalog: &dyn Catalog,
    database: Option<&str>,
    stmt: &Statement,
) -> HashMap<String, String> {
    let mut shown = HashMap::new();
    let _ = basalt_sql::ast::visit_relations(stmt, |name| {
        let parts: Vec<String> = name
            .0
            .iter()
            .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
            .collect();
        let in_information_schema = match parts.as_slice() {
            [db, table] => db
                .eq_ignore_ascii_case(crate::catalog_provider::INFORMATION_SCHEMA)
                .then_some(table),
            [table] => database
                .filter(|db| db.eq_ignore_ascii_case(crate::catalog_provider::INFORMATION_SCHEMA))
                .map(|_| table),
            _ => None,
        };
        if let Some(table) = in_information_schema {
            for (column, _) in crate::information_schema::column_spellings(table) {
                shown.insert(column.to_lowercase(), column.to_string());
            }
            return ControlFlow::Continue(());
        }
        let table = match parts.as_slice() {
            [db, table] => catalog.table(db, table).ok(),
            [table] => database.and_then(|db| catalog.table(db, table).ok()),
            _ => None,
        };
        for c in table.iter().flat_map(|t| t.columns.iter()) {
            if let Some(display) = &c.display_name {
                shown.insert(c.name.clone(), display.clone());
            }
        }
        ControlFlow::<()>::Continue(())
    });
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(sql: &str) -> String {
        let Ok(basalt_sql::Statement::Standard(mut stmt)) = basalt_sql::parse_one(sql) else {
            panic!("not parsed: {sql}");
        };
        fold(&mut stmt);
        stmt.to_string()
    }

    #[test]
    fn names_fold_and_strings_and_variables_do_not() {
        assert_eq!(
            folded("SELECT `Bx` AS `Total`, P.Cy FROM `PC` AS `P` WHERE Bx = 'ABC' AND @@Session.Sql_Mode = '' ORDER BY Total"),
            "SELECT `bx` AS `total`, p.cy FROM `pc` AS `P` WHERE bx = 'ABC' AND @@Session.Sql_Mode = '' ORDER BY total"
                .replace("AS `P`", "AS `p`")
        );
        assert_eq!(
            folded("INSERT INTO pc (`BX`) SELECT A FROM (SELECT 1 AS A) AS D (A)"),
            "INSERT INTO pc (`bx`) SELECT a FROM (SELECT 1 AS a) AS d (a)"
        );
        assert_eq!(
            folded("WITH `C` AS (SELECT 1) SELECT * FROM C JOIN pc USING (`Bx`)"),
            "WITH `c` AS (SELECT 1) SELECT * FROM c JOIN pc USING(`bx`)"
        );
    }
}
