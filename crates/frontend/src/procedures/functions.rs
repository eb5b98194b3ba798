//! Stored functions called in expressions. Before a statement is planned, each call `f(args)`
//! or `db.f(args)` naming a stored function (a built-in function of the name wins, as in MySQL)
//! becomes a call of the session's `basalt_stored_function('db', 'f', 'RETURNS type', args)`
//! (see [`super::function_udf`]), which runs the body once per row: the arguments bound to the
//! parameters as their types convert them, the body interpreted as a procedure's is, and the
//! value of its `RETURN` converted to the return type. A function cannot call itself, directly
//! or through others (MySQL's 1424), so no call nests without end.

use super::call::{definer_account, RestoreDatabase, Results};
use super::frame::{Frame, Scope};
use super::interpreter::{Flow, Interpreter};
use crate::engine::QueryEngine;
use crate::session::Session;
use basalt_catalog::{Catalog, ProcedureMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{self, Expr, FunctionArg, FunctionArgExpr, FunctionArguments};
use datafusion::arrow::array::RecordBatch;
use std::ops::ControlFlow;
use std::sync::Arc;

/// The name calls of stored functions are planned as.
pub(crate) const CALL_NAME: &str = "basalt_stored_function";

/// Replaces the calls of stored functions in `stmt` by calls of [`CALL_NAME`]; `builtin` tells
/// a name the planner knows already. A call of `db.f` where `db` has no function `f` is MySQL's
/// 1305; one with another number of arguments than `f` has parameters 1318.
pub(crate) fn rewrite_calls(
    catalog: &dyn Catalog,
    current_db: Option<&str>,
    builtin: &dyn Fn(&str) -> bool,
    stmt: &mut ast::Statement,
) -> Result<()> {
    let outcome = ast::visit_expressions_mut(stmt, |e| {
        let Expr::Function(call) = e else {
            return ControlFlow::Continue(());
        };
        let FunctionArguments::List(list) = &call.args else {
            return ControlFlow::Continue(());
        };
        let parts: Vec<&ast::Ident> = call.name.0.iter().filter_map(|p| p.as_ident()).collect();
        let function = match parts.as_slice() {
            [db, name] => match catalog.function(&db.value, &name.value) {
                Some(f) => f,
                None => {
                    return ControlFlow::Break(super::define::unknown_function(
                        &db.value,
                        &name.value,
                    ))
                }
            },
            [name] => {
                let folded = match name.quote_style {
                    None => name.value.to_lowercase(),
                    Some(_) => name.value.clone(),
                };
                let found = current_db.and_then(|db| catalog.function(db, &name.value));
                match found {
                    Some(f) if !builtin(&folded) => f,
                    _ => return ControlFlow::Continue(()),
                }
            }
            _ => return ControlFlow::Continue(()),
        };
        let mut args = vec![];
        for arg in &list.args {
            match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(a)) => args.push(a.clone()),
                _ => {
                    return ControlFlow::Break(BasaltError::Syntax {
                        message: format!("a stored function's argument: {arg}"),
                        near: arg.to_string(),
                        line: 1,
                    })
                }
            }
        }
        if args.len() != function.parameters.len() {
            return ControlFlow::Break(BasaltError::Routine {
                code: 1318,
                message: format!(
                    "Incorrect number of arguments for FUNCTION {}.{}; expected {}, got {}",
                    function.database,
                    function.name,
                    function.parameters.len(),
                    args.len()
                ),
            });
        }
        let returns = function.returns.clone().unwrap_or_default();
        let mut all = vec![
            crate::mysql_compat::string(&function.database),
            crate::mysql_compat::string(&function.name),
            crate::mysql_compat::string(&returns),
        ];
        all.extend(args);
        *e = crate::mysql_compat::call(CALL_NAME, all);
        ControlFlow::Continue(())
    });
    match outcome {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// The planner's error for a function it does not know, as MySQL reports a call of a name that
/// is neither built in nor a stored function: 1305 `FUNCTION db.f does not exist`.
pub(crate) fn unknown_function_error(session: &Session, e: BasaltError) -> BasaltError {
    const MARK: &str = "Invalid function '";
    let text = e.to_string();
    if e.mysql_code() != 1105 {
        return e;
    }
    let Some(name) = text
        .find(MARK)
        .and_then(|at| text[at + MARK.len()..].split('\'').next())
    else {
        return e;
    };
    let message = match session.database() {
        Some(db) => format!("FUNCTION {db}.{name} does not exist"),
        None => format!("FUNCTION {name} does not exist"),
    };
    BasaltError::Routine {
        code: 1305,
        message,
    }
}

impl QueryEngine {
    /// Replaces the calls of stored functions in a statement about to be planned (see
    /// [`rewrite_calls`]).
    pub(crate) fn rewrite_function_calls(
        &self,
        session: &Session,
        stmt: &mut ast::Statement,
    ) -> Result<()> {
        use datafusion::execution::FunctionRegistry;
        let builtin = |name: &str| {
            session.ctx.udf(name).is_ok()
                || session.ctx.udaf(name).is_ok()
                || session.ctx.udwf(name).is_ok()
        };
        rewrite_calls(
            self.services.catalog.as_ref(),
            session.database().as_deref(),
            &builtin,
            stmt,
        )
    }

    /// Runs stored function `function` with its arguments in `row` (one row, a column per
    /// parameter; `None` when it has none): the value of its RETURN as text (`None` for NULL),
    /// converted to the return type as a variable of that type would hold it.
    pub(crate) async fn run_function(
        &self,
        session: &Session,
        function: &Arc<ProcedureMeta>,
        row: Option<&RecordBatch>,
    ) -> Result<Option<String>> {
        let key = format!("{}\0{}", function.database, function.routine_key());
        if session.info.routine.depth_of(&key) > 0 {
            return Err(BasaltError::Routine {
                code: 1424,
                message: "Recursive stored functions and triggers are not allowed.".into(),
            });
        }
        let statements = basalt_sql::parse_function_body(&function.body)?;
        let strict = super::fitting::strict(&function.sql_mode, session);
        let mut warn = |code, message| session.info.warnings.add("Warning", code, message);
        // Arguments are stored into the parameters as the caller's sql_mode says (MySQL's
        // order: the call's own statement stores them), the body's values as the function's.
        let caller_strict = crate::lenient_insert::strict_inserts(session);
        let bound = super::binding::bind(&function.parameters, row, caller_strict, &mut warn)?;
        let parameters = Scope::of_parameters(&function.parameters, bound);
        let _routine = session.info.routine.enter(key, definer_account(function));
        let _restore = RestoreDatabase {
            session,
            database: session.database(),
        };
        session.set_database(Some(function.database.clone()));
        let mut results = Results::default();
        let mut interpreter = Interpreter {
            engine: self,
            session,
            results: &mut results,
            frame: Frame {
                scopes: vec![parameters],
            },
            strict,
        };
        match interpreter.run_list(&statements).await? {
            Flow::Return(value) => {
                let returns = function.returns.as_deref().unwrap_or("TEXT");
                let value = interpreter.fit(returns, &function.name, value)?;
                Ok(super::values::literal_text(&super::binding::literal(
                    returns, value,
                )))
            }
            _ => Err(BasaltError::Routine {
                code: 1321,
                message: format!("FUNCTION {} ended without RETURN", function.name),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_known_calls_are_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = basalt_catalog::LocalCatalog::open(dir.path()).unwrap();
        catalog.create_database("d", false).unwrap();
        let meta = ProcedureMeta {
            database: "d".into(),
            name: "F".into(),
            parameters: vec![basalt_catalog::ProcedureParameter {
                mode: basalt_catalog::ParameterMode::In,
                name: "a".into(),
                data_type: "INT".into(),
            }],
            body: "RETURN a + 1".into(),
            definer: "root@%".into(),
            comment: String::new(),
            deterministic: false,
            data_access: "CONTAINS SQL".into(),
            security: "DEFINER".into(),
            sql_mode: String::new(),
            created_ms: 0,
            returns: Some("INT".into()),
        };
        catalog.create_procedure(meta, false).unwrap();
        let rewrite = |sql: &str, builtin: &dyn Fn(&str) -> bool| {
            let basalt_sql::Statement::Standard(mut stmt) = basalt_sql::parse_one(sql).unwrap()
            else {
                panic!()
            };
            rewrite_calls(&catalog, Some("d"), builtin, stmt.as_mut()).map(|()| stmt.to_string())
        };
        let none = |_: &str| false;
        assert_eq!(
            rewrite("SELECT f(1), d.F(x), g(2)", &none).unwrap(),
            "SELECT basalt_stored_function('d', 'F', 'INT', 1), \
             basalt_stored_function('d', 'F', 'INT', x), g(2)"
        );
        assert_eq!(
            rewrite("SELECT f(1)", &|n: &str| n == "f").unwrap(),
            "SELECT f(1)"
        );
        assert_eq!(
            rewrite("SELECT f(1, 2)", &none).unwrap_err().mysql_code(),
            1318
        );
        assert_eq!(
            rewrite("SELECT d.g()", &none).unwrap_err().mysql_code(),
            1305
        );
    }
}
