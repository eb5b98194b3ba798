//! Views: CREATE [OR REPLACE] / ALTER / DROP VIEW, SHOW CREATE VIEW, and their expansion. A
//! view is its SELECT, stored in the catalog with its table names qualified by the view's
//! database and its column names fixed at creation (MySQL's rules); a statement naming a view
//! reads that SELECT as a derived table (`FROM v` is `FROM (SELECT ..) AS v (cols)`), so the
//! planner optimizes through it and privileges are checked on the base tables (the invoker's).

use crate::engine::{split_name, QueryEngine};
use crate::output::Output;
use crate::session::Session;
use crate::show::{Col, ResultBuilder};
use crate::statement::ddl::database_of;
use basalt_catalog::{Catalog, ViewAlgorithm, ViewCheckOption, ViewMeta};
use basalt_common::df_error::from_df;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    self, Ident, ObjectName, ObjectNamePart, Query, TableAlias, TableAliasColumnDef, TableFactor,
    VisitMut, VisitorMut,
};
use datafusion::sql::parser::Statement as DfStatement;
use std::collections::HashSet;
use std::ops::ControlFlow;

/// Whether a view's SELECT reads a variable (`@x`, `@@sql_mode`): MySQL's 1351, a view
/// being the same rows for every session.
fn reads_variable(query: &Query) -> bool {
    let variable = |i: &Ident| i.quote_style.is_none() && i.value.starts_with('@');
    ast::visit_expressions(query, |e| match e {
        ast::Expr::Identifier(i) if variable(i) => ControlFlow::Break(()),
        ast::Expr::CompoundIdentifier(parts) if parts.first().is_some_and(variable) => {
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

/// Views inside views (a cycle made with OR REPLACE would never end) stop here.
const MAX_EXPANSIONS: usize = 64;

/// Replaces every view a statement names by its SELECT.
pub(crate) fn expand(
    catalog: &dyn Catalog,
    current_db: Option<&str>,
    stmt: &mut ast::Statement,
) -> Result<()> {
    let mut expander = Expander {
        catalog,
        current_db,
        ctes: HashSet::new(),
        expansions: 0,
    };
    match stmt.visit(&mut expander) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

struct Expander<'a> {
    catalog: &'a dyn Catalog,
    current_db: Option<&'a str>,
    /// Names of the statement's common table expressions (they hide views of the name).
    ctes: HashSet<String>,
    expansions: usize,
}

impl VisitorMut for Expander<'_> {
    type Break = BasaltError;

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<BasaltError> {
        self.ctes.extend(cte_names(query));
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<BasaltError> {
        let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = factor
        else {
            return ControlFlow::Continue(());
        };
        let (db, table) = split_name(name);
        if db.is_none() && self.ctes.contains(&table.to_lowercase()) {
            return ControlFlow::Continue(());
        }
        let Some(db) = db.or_else(|| self.current_db.map(str::to_string)) else {
            return ControlFlow::Continue(());
        };
        let Some(view) = self.catalog.view(&db, &table) else {
            return ControlFlow::Continue(());
        };
        self.expansions += 1;
        if self.expansions > MAX_EXPANSIONS {
            return ControlFlow::Break(BasaltError::InvalidDdl(format!(
                "View '{db}.{table}' references itself, or views nest deeper than {MAX_EXPANSIONS}"
            )));
        }
        let query = match parse_definition(&view) {
            Ok(q) => q,
            Err(e) => return ControlFlow::Break(e),
        };
        let mut alias = alias.clone().unwrap_or_else(|| TableAlias {
            explicit: true,
            name: Ident::new(view.name.clone()),
            columns: vec![],
            at: None,
        });
        if alias.columns.is_empty() {
            alias.columns = view
                .columns
                .iter()
                .map(|c| TableAliasColumnDef::from_name(c.as_str()))
                .collect();
        }
        *factor = TableFactor::Derived {
            lateral: false,
            subquery: query,
            alias: Some(alias),
            sample: None,
        };
        ControlFlow::Continue(())
    }
}

/// The stored SELECT of `view`.
fn parse_definition(view: &ViewMeta) -> Result<Box<Query>> {
    match basalt_sql::parse_one(&view.definition)? {
        basalt_sql::Statement::Standard(s) => match *s {
            ast::Statement::Query(q) => Ok(q),
            _ => Err(invalid_view(view)),
        },
        _ => Err(invalid_view(view)),
    }
}

fn invalid_view(view: &ViewMeta) -> BasaltError {
    BasaltError::InvalidDdl(format!(
        "View '{}.{}' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them",
        view.database, view.name
    ))
}

/// Names defined by the WITH clauses of `query` and the queries inside it.
fn cte_names(query: &Query) -> Vec<String> {
    query
        .with
        .iter()
        .flat_map(|w| w.cte_tables.iter())
        .map(|cte| cte.alias.name.value.to_lowercase())
        .collect()
}

/// Qualifies the unqualified table names of `query` (not its CTE names) with `db`, as MySQL
/// stores a view: the view reads the same tables whichever database is current.
fn qualify_tables(query: &mut Query, db: &str) {
    struct Qualify<'a> {
        db: &'a str,
        ctes: HashSet<String>,
    }
    impl VisitorMut for Qualify<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
            self.ctes.extend(cte_names(query));
            ControlFlow::Continue(())
        }
        fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
            if let TableFactor::Table {
                name, args: None, ..
            } = factor
            {
                let single = name.0.len() == 1;
                let is_cte = name.0[0]
                    .as_ident()
                    .is_some_and(|i| self.ctes.contains(&i.value.to_lowercase()));
                // `FROM DUAL` names no table.
                let is_dual = name.0[0].as_ident().is_some_and(|i| {
                    i.quote_style.is_none() && i.value.eq_ignore_ascii_case("dual")
                });
                if single && !is_cte && !is_dual {
                    name.0
                        .insert(0, ObjectNamePart::Identifier(Ident::new(self.db)));
                }
            }
            ControlFlow::Continue(())
        }
    }
    let _ = query.visit(&mut Qualify {
        db,
        ctes: HashSet::new(),
    });
}

/// The text a view's SELECT is stored as. A `t PARTITION (p1)` is stored in the form the
/// planner resolves (`` `t PARTITION (p1)` AS t ``, see `partition_selection`): sqlparser prints
/// the clause without the space before PARTITION, text that would not parse again.
fn stored_text(query: &Query, pipes_as_concat: bool) -> String {
    let mut stmt = ast::Statement::Query(Box::new(query.clone()));
    crate::partition_selection::rewrite(&mut stmt);
    let _ = stmt.visit(&mut SessionFreeText { pipes_as_concat });
    stmt.to_string()
}

/// A view's operators read back the same in every session. `(NOT 0) * 5` (MySQL's `!0 * 5`)
/// prints as `NOT 0 * 5`, which reads back as `NOT (0 * 5)`, and `!NULL IS TRUE` as
/// `NOT (NULL IS TRUE)`: every NOT, and a unary operation that is an operand of a binary one,
/// is stored in parentheses (`-7` as a function's argument stays a literal). `a || b` means
/// CONCAT under PIPES_AS_CONCAT and OR otherwise: it is stored as the one it meant when the
/// view was made (`concat(a, b)`, as MySQL stores it, or `a OR b`).
struct SessionFreeText {
    pipes_as_concat: bool,
}

impl VisitorMut for SessionFreeText {
    type Break = ();

    fn post_visit_expr(&mut self, expr: &mut ast::Expr) -> ControlFlow<()> {
        if let ast::Expr::BinaryOp { left, op, right } = expr {
            if *op == ast::BinaryOperator::StringConcat {
                if self.pipes_as_concat {
                    let (left, right) = ((**left).clone(), (**right).clone());
                    *expr = crate::mysql_compat::call("concat", vec![left, right]);
                } else {
                    *op = ast::BinaryOperator::Or;
                }
            }
        }
        let nested = |e: &mut ast::Expr| {
            let inner = std::mem::replace(e, ast::Expr::value(ast::Value::Null));
            *e = ast::Expr::Nested(Box::new(inner));
        };
        match expr {
            ast::Expr::UnaryOp {
                op: ast::UnaryOperator::Not,
                ..
            } => nested(expr),
            ast::Expr::BinaryOp { left, right, .. } => {
                for side in [left, right] {
                    if matches!(**side, ast::Expr::UnaryOp { .. }) {
                        nested(side);
                    }
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// A CREATE VIEW or ALTER VIEW, in either parser's form.
pub(crate) struct ViewRequest {
    pub name: ObjectName,
    /// `(a, b)` after the name; empty: the query's own names.
    pub columns: Vec<String>,
    pub query: Box<Query>,
    pub or_replace: bool,
    pub alter: bool,
    pub if_not_exists: bool,
    pub algorithm: ViewAlgorithm,
    /// `DEFINER = u@h`; `None`: the session's account.
    pub definer: Option<basalt_sql::UserName>,
    /// `SQL SECURITY DEFINER` was written (Basalt's views run as the invoker).
    pub security_definer: bool,
    pub check_option: ViewCheckOption,
    /// Each column's comment ("" none), by position; empty: none.
    pub column_comments: Vec<String>,
    pub comment: String,
}

impl ViewRequest {
    /// MySQL's CREATE / ALTER VIEW as Basalt's parser reads it.
    pub(crate) fn from_definition(v: basalt_sql::ViewDefinition) -> ViewRequest {
        use basalt_sql::ast::CreateViewAlgorithm as A;
        ViewRequest {
            name: v.name,
            columns: v.columns,
            query: v.query,
            or_replace: v.or_replace,
            alter: v.alter,
            if_not_exists: v.if_not_exists,
            algorithm: match v.algorithm {
                None | Some(A::Undefined) => ViewAlgorithm::Undefined,
                Some(A::Merge) => ViewAlgorithm::Merge,
                Some(A::TempTable) => ViewAlgorithm::Temptable,
            },
            definer: v.definer,
            security_definer: matches!(
                v.security,
                Some(basalt_sql::ast::CreateViewSecurity::Definer)
            ),
            check_option: match v.check_option {
                basalt_sql::ViewCheckOption::None => ViewCheckOption::None,
                basalt_sql::ViewCheckOption::Local => ViewCheckOption::Local,
                basalt_sql::ViewCheckOption::Cascaded => ViewCheckOption::Cascaded,
            },
            column_comments: v.column_comments,
            comment: v.comment.unwrap_or_default(),
        }
    }

    /// A plain `CREATE [OR REPLACE] VIEW` or `ALTER VIEW` as `sqlparser` reads it.
    pub(crate) fn plain(
        name: ObjectName,
        columns: Vec<String>,
        query: Box<Query>,
        or_replace: bool,
        alter: bool,
    ) -> ViewRequest {
        ViewRequest {
            name,
            columns,
            query,
            or_replace,
            alter,
            if_not_exists: false,
            algorithm: ViewAlgorithm::Undefined,
            definer: None,
            security_definer: false,
            check_option: ViewCheckOption::None,
            column_comments: Vec::new(),
            comment: String::new(),
        }
    }
}

impl QueryEngine {
    /// CREATE [OR REPLACE] VIEW and ALTER VIEW: checks the SELECT plans (its tables exist and
    /// the account may read them), fixes the column names, stores the view.
    pub(crate) async fn create_view(&self, session: &Session, req: ViewRequest) -> Result<Output> {
        let ViewRequest {
            name,
            columns,
            mut query,
            or_replace,
            alter,
            if_not_exists,
            algorithm,
            definer,
            security_definer,
            check_option,
            column_comments,
            comment,
        } = req;
        let (db, view_name) = split_name(&name);
        let db = database_of(session, &db)?;
        self.require_view_rights(session, &db, &view_name)?;
        if if_not_exists && self.services.catalog.view(&db, &view_name).is_some() {
            session.info.warnings.note(
                1050,
                format!("Table '{}' already exists", session.stored_name(&view_name)),
            );
            return Ok(Output::ok());
        }
        qualify_tables(&mut query, &db);
        if reads_variable(&query) {
            return Err(BasaltError::ViewSelectVariable);
        }
        let select = ast::Statement::Query(query.clone());
        let names = match columns.is_empty() {
            false => Some(columns),
            true => crate::statement::mysql_column_names(&select)
                .map(|names| crate::view_columns::unique_names(&query, names))
                .transpose()?,
        };
        let (schema, query) = match self.plan_schema(session, select).await {
            Ok(schema) => (schema, query),
            // Result columns named alike (`SELECT 'a', 'a'`): the select lists get aliases
            // (the view's column names where they fit) and the query is planned again.
            Err(e) if crate::result_names::duplicate_result_names(&e) => {
                crate::view_columns::alias_duplicates(&mut query, names.as_deref());
                let select = ast::Statement::Query(query.clone());
                (self.plan_schema(session, select).await?, query)
            }
            Err(e) => return Err(e),
        };
        let definition = stored_text(&query, session.sql_settings().pipes_as_concat);
        let columns = match names {
            Some(names) if names.len() != schema.fields().len() => {
                return Err(BasaltError::ViewColumnCount)
            }
            Some(names) => names,
            None => schema
                .fields()
                .iter()
                .map(|f| f.name().to_string())
                .collect(),
        };
        let mut seen = HashSet::new();
        if let Some(dup) = columns.iter().find(|c| !seen.insert(c.to_lowercase())) {
            return Err(BasaltError::DuplicateColumn(dup.clone()));
        }
        if security_definer {
            session.info.warnings.add(
                "Warning",
                1105,
                "SQL SECURITY DEFINER is taken as INVOKER: Basalt's views read with the \
                 privileges of the account using them"
                    .to_string(),
            );
        }
        let definer = match definer {
            Some(u) => format!("{}@{}", u.user, u.host),
            None => format!("{}@{}", session.user(), session.host()),
        };
        // A column of a type Basalt cannot name is left out of what is recorded (then none
        // are: the types go by position).
        let column_types = schema
            .fields()
            .iter()
            .map(|f| crate::result_column_types::sql_type_of(f))
            .collect::<Result<Vec<_>>>()
            .unwrap_or_default();
        let view = ViewMeta {
            database: db,
            name: view_name,
            columns,
            definition,
            definer,
            created_ms: chrono::Utc::now().timestamp_millis(),
            algorithm,
            check_option,
            column_comments,
            comment,
            column_types,
        };
        if alter {
            self.services.catalog.alter_view(view)?;
        } else {
            self.services.catalog.create_view(view, or_replace)?;
        }
        Ok(Output::ok())
    }

    /// DROP VIEW [IF EXISTS] v, ..: every named view must exist unless IF EXISTS.
    pub(crate) fn drop_views(
        &self,
        session: &Session,
        names: &[ObjectName],
        if_exists: bool,
    ) -> Result<Output> {
        for name in names {
            let (db, view) = split_name(name);
            let db = database_of(session, &db)?;
            session
                .access()
                .require_table(basalt_catalog::Privilege::Drop, &db, &view)?;
            self.services.catalog.drop_view(&db, &view, if_exists)?;
        }
        Ok(Output::ok())
    }

    /// SHOW CREATE VIEW (and SHOW CREATE TABLE of a view), with MySQL's four columns.
    pub(crate) fn show_create_view(&self, view: &ViewMeta) -> Output {
        let columns = view
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let name = format!("`{}`", c.replace('`', "``"));
                match view.column_comments.get(i).filter(|c| !c.is_empty()) {
                    Some(comment) => format!("{name} COMMENT '{}'", quote_text(comment)),
                    None => name,
                }
            })
            .collect::<Vec<_>>()
            .join(",");
        let comment = match view.comment.as_str() {
            "" => String::new(),
            c => format!(" COMMENT '{}'", quote_text(c)),
        };
        let (user, host) = view.definer.split_once('@').unwrap_or((&view.definer, "%"));
        let check = match view.check_option {
            ViewCheckOption::None => "",
            ViewCheckOption::Local => " WITH LOCAL CHECK OPTION",
            ViewCheckOption::Cascaded => " WITH CASCADED CHECK OPTION",
        };
        let text = format!(
            "CREATE ALGORITHM={} DEFINER=`{user}`@`{host}` SQL SECURITY INVOKER VIEW `{}` ({columns}){comment} AS {}{check}",
            view.algorithm.word(),
            view.name,
            view.definition
        );
        let mut b = ResultBuilder::new(&[
            Col::str("View"),
            Col::str("Create View"),
            Col::str("character_set_client"),
            Col::str("collation_connection"),
        ]);
        b.row(vec![
            view.name.clone().into(),
            text.into(),
            "utf8mb4".into(),
            "utf8mb4_general_ci".into(),
        ]);
        b.into_output()
    }

    /// The view a DESCRIBE or SHOW COLUMNS statement names, if it names one.
    pub(crate) fn described_view(
        &self,
        session: &Session,
        stmt: &ast::Statement,
    ) -> Option<std::sync::Arc<ViewMeta>> {
        let name = match stmt {
            ast::Statement::ExplainTable { table_name, .. } => table_name,
            ast::Statement::ShowColumns { show_options, .. } => {
                show_options.show_in.as_ref()?.parent_name.as_ref()?
            }
            _ => return None,
        };
        let (db, view) = split_name(name);
        let db = db.or_else(|| session.database())?;
        self.services.catalog.view(&db, &view)
    }

    /// DESCRIBE / SHOW COLUMNS of a view: its columns as its SELECT plans them.
    pub(crate) async fn describe_view(&self, session: &Session, view: &ViewMeta) -> Result<Output> {
        let select = basalt_sql::parse_one(&format!(
            "SELECT * FROM `{}`.`{}`",
            view.database.replace('`', "``"),
            view.name.replace('`', "``")
        ))?;
        let basalt_sql::Statement::Standard(select) = select else {
            return Err(invalid_view(view));
        };
        let schema = self.plan_schema(session, *select).await?;
        let mut b = crate::show::describe_result();
        for (field, name) in schema.fields().iter().zip(&view.columns) {
            b.row(vec![
                name.clone().into(),
                mysql_type(field).into(),
                "YES".into(),
                "".into(),
                None::<String>.into(),
                "".into(),
            ]);
        }
        Ok(b.into_output())
    }

    /// The columns a SELECT returns, planned as the session would plan it (views expanded,
    /// privileges checked), without running it.
    pub(crate) async fn plan_schema(
        &self,
        session: &Session,
        stmt: ast::Statement,
    ) -> Result<datafusion::arrow::datatypes::SchemaRef> {
        let plan = self.plan_query(session, stmt).await?;
        Ok(std::sync::Arc::new(plan.schema().as_arrow().clone()))
    }

    /// The logical plan of a SELECT, planned as the session would plan it (views expanded,
    /// privileges checked), without running it.
    pub(crate) async fn plan_query(
        &self,
        session: &Session,
        mut stmt: ast::Statement,
    ) -> Result<datafusion::logical_expr::LogicalPlan> {
        expand(
            self.services.catalog.as_ref(),
            session.database().as_deref(),
            &mut stmt,
        )?;
        crate::statement_limits::prepare(&mut stmt)?;
        crate::named_windows::resolve(&mut stmt)?;
        crate::lateral_views::rewrite(&mut stmt)?;
        crate::mysql_compat::rewrite(&mut stmt, &session.sql_settings());
        self.rewrite_function_calls(session, &mut stmt)?;
        crate::grouping::rewrite(&mut stmt)?;
        crate::local_calls::rewrite_calls(&mut stmt)?;
        session.sync_planner_options();
        let state = session.ctx.state();
        crate::merged_columns::rewrite(&mut stmt, &state).await;
        let plan = state
            .statement_to_plan(DfStatement::Statement(Box::new(stmt)))
            .await
            .map_err(|e| crate::statement::ddl::no_database_hint(&self.services, from_df(e)))?;
        session.access().check_plan(&plan)?;
        Ok(plan)
    }

    /// Creating or replacing a view takes CREATE on its database (MySQL's CREATE VIEW).
    fn require_view_rights(&self, session: &Session, db: &str, _view: &str) -> Result<()> {
        session
            .access()
            .require_database(basalt_catalog::Privilege::Create, db)
    }
}

/// How DESCRIBE names the type of a view's column, from the field its SELECT computes.
fn mysql_type(field: &datafusion::arrow::datatypes::Field) -> String {
    use datafusion::arrow::datatypes::DataType as D;
    if basalt_common::is_largeint_field(field) {
        return "largeint".into();
    }
    match field.data_type() {
        D::Boolean => "boolean".into(),
        D::Int8 => "tinyint".into(),
        D::Int16 => "smallint".into(),
        D::Int32 => "int".into(),
        D::Int64 => "bigint".into(),
        D::UInt8 | D::UInt16 | D::UInt32 | D::UInt64 => "bigint unsigned".into(),
        D::Float16 | D::Float32 => "float".into(),
        D::Float64 => "double".into(),
        D::Decimal128(p, s) => format!("decimal({p},{s})"),
        D::Decimal256(p, s) => format!("decimal({p},{s})"),
        D::Date32 | D::Date64 => "date".into(),
        D::Timestamp(..) => "datetime".into(),
        D::Utf8 | D::Utf8View | D::LargeUtf8 => "varchar(65533)".into(),
        D::Binary | D::BinaryView | D::LargeBinary => "varbinary(65533)".into(),
        D::Null => "null".into(),
        other => other.to_string().to_lowercase(),
    }
}

/// Text for a single-quoted SQL string.
fn quote_text(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\'', "''")
}
