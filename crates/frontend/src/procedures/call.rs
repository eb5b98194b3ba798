//! `CALL name(args)`: the arguments are evaluated once, then the body's statements run in
//! order through the ordinary statement path (each checked, planned and executed as if the
//! caller had sent it) with the parameters bound. Each result set a statement produces is kept
//! and sent as one of the CALL's results; the CALL's own OK ends them, with the affected rows of
//! the last statement (MySQL's rule). A failing statement ends the CALL with its error after the
//! result sets already produced. A procedure may call others, but not itself (MySQL's 1456 under
//! the default `max_sp_recursion_depth` of 0).

use super::binding::{bind, substitute, substitute_statement};
use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use crate::statement::ParsedStatement;
use basalt_common::{BasaltError, Result};
use basalt_sql::{ast, Statement, TableName};
use futures::TryStreamExt;

/// The procedures being run by a CALL, outermost first (as `db\0lower-case name`).
#[derive(Default, Clone)]
pub(crate) struct CallStack(Vec<String>);

/// Gives the session back its current database when dropped.
struct RestoreDatabase<'s> {
    session: &'s Session,
    database: Option<String>,
}

impl Drop for RestoreDatabase<'_> {
    fn drop(&mut self) {
        self.session.set_database(self.database.take());
    }
}

/// What running a body produced so far.
#[derive(Default)]
struct Results {
    outputs: Vec<Result<Output>>,
    /// Affected rows of the last statement that reported a count.
    affected_rows: u64,
    last_insert_id: u64,
}

impl QueryEngine {
    /// `CALL name(args)` of a client.
    pub(crate) async fn call_procedure(
        &self,
        session: &Session,
        name: &TableName,
        args: &[ast::Expr],
    ) -> Result<Output> {
        let mut results = Results::default();
        let failed = self
            .run_call(session, name, args, &CallStack::default(), &mut results)
            .await
            .err();
        let mut outputs = results.outputs;
        match failed {
            // Nothing was sent yet: the CALL fails as any statement does.
            Some(e) if outputs.is_empty() => return Err(e),
            Some(e) => outputs.push(Err(e)),
            None if outputs.is_empty() => {
                return Ok(Output::Ok {
                    affected_rows: results.affected_rows,
                    last_insert_id: results.last_insert_id,
                    info: String::new(),
                })
            }
            None => outputs.push(Ok(Output::Ok {
                affected_rows: results.affected_rows,
                last_insert_id: results.last_insert_id,
                info: String::new(),
            })),
        }
        Ok(Output::Multiple(outputs))
    }

    /// Runs one procedure's body, adding its result sets to `results`.
    async fn run_call(
        &self,
        session: &Session,
        name: &TableName,
        args: &[ast::Expr],
        stack: &CallStack,
        results: &mut Results,
    ) -> Result<()> {
        let procedure = self.find_procedure(session, name)?;
        let key = format!(
            "{}\0{}",
            procedure.database,
            basalt_catalog::ProcedureMeta::key(&procedure.name)
        );
        if stack.0.contains(&key) {
            return Err(BasaltError::ProcedureRecursion(procedure.name.clone()));
        }
        if args.len() != procedure.parameters.len() {
            return Err(BasaltError::ProcedureArguments {
                name: format!("{}.{}", procedure.database, procedure.name),
                expected: procedure.parameters.len(),
                got: args.len(),
            });
        }
        let row = if args.is_empty() {
            None
        } else {
            let select = format!(
                "SELECT {}",
                args.iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let batches = match Box::pin(self.execute(session, &select)).await? {
                Output::Rows { stream, .. } => stream.try_collect::<Vec<_>>().await?,
                _ => vec![],
            };
            batches.into_iter().find(|b| b.num_rows() > 0)
        };
        let bound = bind(&procedure.parameters, row.as_ref());
        let names: Vec<String> = procedure
            .parameters
            .iter()
            .map(|p| p.name.clone())
            .collect();
        let mut inner = stack.clone();
        inner.0.push(key);
        // The body runs in the procedure's database (as MySQL's routines do); the caller's is
        // back afterwards, whatever happened (even a KILL dropping this future).
        let _restore = RestoreDatabase {
            session,
            database: session.database(),
        };
        session.set_database(Some(procedure.database.clone()));
        self.run_body(session, &procedure.body, &names, &bound, &inner, results)
            .await
    }

    async fn run_body(
        &self,
        session: &Session,
        body: &str,
        names: &[String],
        bound: &[super::binding::Bound],
        inner: &CallStack,
        results: &mut Results,
    ) -> Result<()> {
        for text in basalt_sql::procedure_statements(body, names)? {
            let mut statement = basalt_sql::parse_one_with(&text, session.backslash_escapes())?;
            match &mut statement {
                Statement::Standard(s) => substitute_statement(s, bound),
                Statement::Call { args, .. } => {
                    for arg in args.iter_mut() {
                        substitute(arg, bound);
                    }
                }
                _ => {}
            }
            if let Statement::Call { name, args } = &statement {
                session.access().check_statement(session, &statement)?;
                Box::pin(self.run_call(session, name, args, inner, results)).await?;
                continue;
            }
            let output =
                Box::pin(self.execute_parsed(session, ParsedStatement::new(statement))).await?;
            self.keep_output(output, results).await?;
        }
        Ok(())
    }

    async fn keep_output(&self, output: Output, results: &mut Results) -> Result<()> {
        match output {
            Output::Rows { schema, stream } => {
                let batches = stream.try_collect::<Vec<_>>().await?;
                results.outputs.push(Ok(Output::batches(schema, batches)));
                results.affected_rows = 0;
            }
            Output::Ok {
                affected_rows,
                last_insert_id,
                ..
            } => {
                results.affected_rows = affected_rows;
                if last_insert_id != 0 {
                    results.last_insert_id = last_insert_id;
                }
            }
            Output::Multiple(parts) => {
                for part in parts {
                    Box::pin(self.keep_output(part?, results)).await?;
                }
            }
        }
        Ok(())
    }
}
