//! MySQL matches column names and aliases without regard to case, quoted or not (`Bx`, `bx` and
//! `` `BX` `` are one column); DataFusion folds only unquoted identifiers. Before planning, every
//! identifier that names a column, an alias or a CTE is folded to lower case here. Result
//! columns keep the spelling the client wrote (they are named from the statement before this
//! runs); `SELECT *` shows the spelling a column was created with (`display_names`).
//!
//! Table and database names follow `lower_case_table_names` ([`TableNameCase`]): with 1 they
//! are folded too (the catalog stores them in lower case); with 0 and 2 they keep the spelling
//! written (quoted, so DataFusion does not fold them) and the catalog matches them, exactly
//! (0) or without regard to case (2). A qualifier naming such a table (`Foo.a` in
//! `.. FROM Foo`) takes the table's spelling, so it still names it.

use basalt_catalog::Catalog;
use basalt_common::TableNameCase;
use basalt_sql::ast::{
    Expr, Ident, ObjectName, ObjectNamePart, Query, Select, SelectItem,
    SelectItemQualifiedWildcardKind, SetExpr, Statement, TableFactor, TableWithJoins, Visit,
    VisitMut, Visitor, VisitorMut,
};
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

/// Folds the names `stmt` uses (see the module doc).
pub fn fold(stmt: &mut Statement, tables: TableNameCase) {
    let spellings = match tables {
        TableNameCase::Lower => Spellings::default(),
        TableNameCase::Exact | TableNameCase::Insensitive => Spellings::of(stmt),
    };
    let _ = stmt.visit(&mut Folder { tables, spellings });
}

/// What a statement that keeps table names' spelling names: its CTEs and aliases (folded like
/// columns), and the spelling of each table (and database) named without an alias, by lower
/// case, for the qualifiers that name them.
#[derive(Default)]
struct Spellings {
    ctes: HashSet<String>,
    aliases: HashSet<String>,
    tables: HashMap<String, Vec<String>>,
    databases: HashMap<String, Vec<String>>,
}

impl Spellings {
    fn of(stmt: &Statement) -> Spellings {
        let mut spellings = Spellings::default();
        let _ = stmt.visit(&mut spellings);
        spellings
    }

    /// The spelling the qualifier `part` takes: a table's (or database's) when it names one
    /// written without an alias (its own spelling when two tables differ only in case), else
    /// none (it folds like an alias).
    fn qualifier(&self, part: &str, database: bool) -> Option<&String> {
        let lower = part.to_lowercase();
        if self.aliases.contains(&lower) || self.ctes.contains(&lower) {
            return None;
        }
        let spellings = match database {
            true => self.databases.get(&lower)?,
            false => self.tables.get(&lower)?,
        };
        spellings
            .iter()
            .find(|s| *s == part)
            .or_else(|| spellings.first())
    }

    fn add(names: &mut HashMap<String, Vec<String>>, spelled: &str) {
        let spellings = names.entry(spelled.to_lowercase()).or_default();
        if !spellings.iter().any(|s| s == spelled) {
            spellings.push(spelled.to_string());
        }
    }
}

impl Visitor for Spellings {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        for cte in query.with.iter().flat_map(|w| w.cte_tables.iter()) {
            self.ctes.insert(cte.alias.name.value.to_lowercase());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        let alias = match factor {
            TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => {
                if alias.is_none() {
                    let idents: Vec<&Ident> = name.0.iter().filter_map(|p| p.as_ident()).collect();
                    if let [.., database, _] = idents.as_slice() {
                        Spellings::add(&mut self.databases, &database.value);
                    }
                    if let Some(table) = idents.last() {
                        Spellings::add(&mut self.tables, &table.value);
                    }
                }
                alias
            }
            TableFactor::Table { alias, .. }
            | TableFactor::Derived { alias, .. }
            | TableFactor::Function { alias, .. }
            | TableFactor::UNNEST { alias, .. }
            | TableFactor::NestedJoin { alias, .. } => alias,
            _ => return ControlFlow::Continue(()),
        };
        if let Some(alias) = alias {
            self.aliases.insert(alias.name.value.to_lowercase());
        }
        ControlFlow::Continue(())
    }
}

struct Folder {
    tables: TableNameCase,
    spellings: Spellings,
}

impl Folder {
    /// A table name keeps its spelling (0, 2) unless it names a CTE or is MySQL's `DUAL`.
    fn keeps_spelling(&self, name: &ObjectName) -> bool {
        if self.tables == TableNameCase::Lower {
            return false;
        }
        match name.0.as_slice() {
            [ObjectNamePart::Identifier(only)] => {
                let dual = only.quote_style.is_none() && only.value.eq_ignore_ascii_case("dual");
                !dual && !self.spellings.ctes.contains(&only.value.to_lowercase())
            }
            _ => true,
        }
    }

    /// `parts` of a column reference (`t.c`, `db.t.c`): the column folds; a qualifier naming
    /// a table written without an alias takes its spelling.
    fn fold_qualified(&self, parts: &mut [Ident]) {
        let n = parts.len();
        for (i, part) in parts.iter_mut().enumerate() {
            let spelled = match n - i {
                2 => self.spellings.qualifier(&part.value, false),
                3 => self.spellings.qualifier(&part.value, true),
                _ => None,
            };
            match spelled {
                Some(spelled) => keep_spelling(part, spelled),
                None => fold_ident(part),
            }
        }
    }
}

/// Names `ident` `spelled`, quoted when it has upper case so DataFusion does not fold it.
fn keep_spelling(ident: &mut Ident, spelled: &str) {
    ident.value = spelled.to_string();
    if ident.quote_style.is_none() && spelled.chars().any(char::is_uppercase) {
        ident.quote_style = Some('`');
    }
}

impl VisitorMut for Folder {
    type Break = ();

    fn pre_visit_statement(&mut self, stmt: &mut Statement) -> ControlFlow<()> {
        if let Statement::Insert(insert) = stmt {
            insert.columns.iter_mut().for_each(fold_name);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        if self.tables != TableNameCase::Lower {
            self.spell_wildcards(&mut query.body);
        }
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
        if !self.keeps_spelling(relation) {
            fold_name(relation);
            return ControlFlow::Continue(());
        }
        for part in &mut relation.0 {
            if let ObjectNamePart::Identifier(ident) = part {
                let spelled = ident.value.clone();
                keep_spelling(ident, &spelled);
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        match expr {
            Expr::Identifier(ident) => fold_ident(ident),
            Expr::CompoundIdentifier(parts) if !is_variable(parts) => {
                if self.tables == TableNameCase::Lower {
                    parts.iter_mut().for_each(fold_ident)
                } else {
                    self.fold_qualified(parts)
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

impl Folder {
    /// `Foo.*` of a table written without an alias takes the table's spelling.
    fn spell_wildcards(&self, body: &mut SetExpr) {
        let select = match body {
            SetExpr::Select(select) => select,
            SetExpr::SetOperation { left, right, .. } => {
                self.spell_wildcards(left);
                self.spell_wildcards(right);
                return;
            }
            _ => return,
        };
        for item in &mut select.projection {
            if let SelectItem::QualifiedWildcard(
                SelectItemQualifiedWildcardKind::ObjectName(name),
                _,
            ) = item
            {
                let mut parts: Vec<Ident> = name
                    .0
                    .iter()
                    .filter_map(|p| p.as_ident().cloned())
                    .collect();
                if parts.len() != name.0.len() {
                    continue;
                }
                // The parts of `db.t.*` are those of `db.t.c` without the column.
                parts.push(Ident::new("*"));
                self.fold_qualified(&mut parts);
                parts.pop();
                *name = ObjectName(parts.into_iter().map(ObjectNamePart::Identifier).collect());
            }
        }
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
    if let TableFactor::Table {
        name,
        args: Some(_),
        ..
    } = factor
    {
        // A table function (`numbers(..)`): its name is a function's, in lower case.
        fold_name(name);
    }
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
        let (db, name) = match parts.as_slice() {
            [db, table] => (Some(db.as_str()), table),
            [table] => (database, table),
            _ => return ControlFlow::Continue(()),
        };
        let table = db.and_then(|db| catalog.table(db, name).ok());
        // A view's columns keep the spelling they were created with (`My_exp_a`).
        let view = db.and_then(|db| catalog.view(db, name));
        for c in view.iter().flat_map(|v| v.columns.iter()) {
            if c.to_lowercase() != *c {
                shown.entry(c.to_lowercase()).or_insert_with(|| c.clone());
            }
        }
        for c in table.iter().flat_map(|t| t.columns.iter()) {
            if let Some(display) = &c.display_name {
                shown.insert(c.name.clone(), display.clone());
            }
        }
        ControlFlow::<()>::Continue(())
    });
    let _ = stmt.visit(&mut AliasSpellings(&mut shown));
    shown
}

/// Adds the spelling of each alias a statement's SELECTs give (`SELECT a AS Total`), for the
/// columns of derived tables and CTEs that reach the result through `*` (a table column of the
/// same name keeps its own spelling).
struct AliasSpellings<'a>(&'a mut HashMap<String, String>);

impl AliasSpellings<'_> {
    fn add(&mut self, body: &SetExpr) {
        match body {
            SetExpr::Select(select) => {
                for item in &select.projection {
                    if let SelectItem::ExprWithAlias { alias, .. } = item {
                        let lower = alias.value.to_lowercase();
                        if lower != alias.value {
                            self.0.entry(lower).or_insert_with(|| alias.value.clone());
                        }
                    }
                }
            }
            SetExpr::SetOperation { left, .. } => self.add(left),
            SetExpr::Query(q) => self.add(&q.body),
            _ => {}
        }
    }
}

impl Visitor for AliasSpellings<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        self.add(&query.body);
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded_with(sql: &str, tables: TableNameCase) -> String {
        let Ok(basalt_sql::Statement::Standard(mut stmt)) = basalt_sql::parse_one(sql) else {
            panic!("not parsed: {sql}");
        };
        fold(&mut stmt, tables);
        stmt.to_string()
    }

    fn folded(sql: &str) -> String {
        folded_with(sql, TableNameCase::Lower)
    }

    #[test]
    fn table_names_keep_their_spelling_unless_folded() {
        let exact = |sql| folded_with(sql, TableNameCase::Exact);
        assert_eq!(
            exact("SELECT Foo.Bx, F.Cy, Db.Foo.Dz FROM Db.Foo, Bar AS F WHERE foo.bx = 1"),
            "SELECT `Foo`.bx, f.cy, `Db`.`Foo`.dz FROM `Db`.`Foo`, `Bar` AS f WHERE `Foo`.bx = 1"
        );
        assert_eq!(
            exact("SELECT Foo.a FROM Foo UNION SELECT foo.a FROM foo"),
            "SELECT `Foo`.a FROM `Foo` UNION SELECT foo.a FROM foo"
        );
        assert_eq!(
            exact("SELECT Foo.* FROM Foo JOIN bar USING (Id)"),
            "SELECT `Foo`.* FROM `Foo` JOIN bar USING(id)"
        );
        // An alias hides the table's name; CTEs and table functions fold.
        assert_eq!(
            exact("WITH Recent AS (SELECT 1 AS V) SELECT T.v FROM Recent, Users T, NUMBERS(\"number\" = \"2\") N"),
            "WITH recent AS (SELECT 1 AS v) SELECT t.v FROM recent, `Users` t, numbers(\"number\" = \"2\") n"
        );
        assert_eq!(exact("SELECT 1 FROM DUAL"), "SELECT 1 FROM dual");
        assert_eq!(
            folded("SELECT Foo.Bx FROM Db.Foo"),
            "SELECT foo.bx FROM db.foo"
        );
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
