//! `CALL name(args)`: the arguments are evaluated once, then the body runs (see
//! [`super::interpreter`]) with the parameters bound; each statement goes through the ordinary
//! statement path, checked as the procedure's security context allows (the definer's account
//! for `SQL SECURITY DEFINER`, MySQL's default; the caller's for `INVOKER`). Each result set a
//! statement produces is kept and sent as one of the CALL's results; the CALL's own OK ends them,
//! with the affected rows of the last statement (MySQL's rule). A failing statement ends the
//! CALL with its error after the result sets already produced. OUT and INOUT parameters are
//! assigned to the variables given as their arguments when the body ends. A procedure may call
//! itself (directly, from another, or through PREPARE/EXECUTE) only as deep as
//! `max_sp_recursion_depth` allows (MySQL's 1456).

use super::frame::{Frame, Scope};
use super::interpreter::{assignable, Interpreter};
use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use basalt_catalog::{ParameterMode, ProcedureMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql::{ast, TableName};
use futures::TryStreamExt;
use std::sync::Arc;

/// MySQL's largest `max_sp_recursion_depth`.
const MAX_RECURSION_DEPTH: u64 = 255;

/// Gives the session back its current database when dropped.
pub(super) struct RestoreDatabase<'s> {
    pub session: &'s Session,
    pub database: Option<String>,
}

/// The account a routine's body runs as: its definer's for `SQL SECURITY DEFINER` (MySQL's
/// default), `None` (the caller's) for `INVOKER`.
pub(super) fn definer_account(routine: &ProcedureMeta) -> Option<crate::access::Account> {
    (routine.security != "INVOKER").then(|| {
        let (user, host) = routine
            .definer
            .rsplit_once('@')
            .unwrap_or((&routine.definer, "%"));
        crate::access::Account {
            user: user.to_string(),
            host: host.to_string(),
            active_roles: Default::default(),
        }
    })
}

impl Drop for RestoreDatabase<'_> {
    fn drop(&mut self) {
        self.session.set_database(self.database.take());
    }
}

/// What running a body produced so far.
#[derive(Default)]
pub(super) struct Results {
    outputs: Vec<Result<Output>>,
    /// Affected rows of the last statement that reported a count.
    affected_rows: u64,
    last_insert_id: u64,
}

/// Refuses a CALL whose OUT or INOUT argument is no variable (MySQL's 1414); `targets` are the
/// variables the arguments name.
pub(super) fn check_out_arguments(
    procedure: &ProcedureMeta,
    targets: &[Option<String>],
) -> Result<()> {
    for (i, (parameter, target)) in procedure.parameters.iter().zip(targets).enumerate() {
        if parameter.mode != ParameterMode::In && target.is_none() {
            return Err(BasaltError::Routine {
                code: 1414,
                message: format!(
                    "OUT or INOUT argument {} for routine {}.{} is not a variable or NEW pseudo-variable in BEFORE trigger",
                    i + 1,
                    procedure.database,
                    procedure.name
                ),
            });
        }
    }
    Ok(())
}

impl QueryEngine {
    /// `CALL name(args)` of a client (or of PREPARE/EXECUTE, also inside a body): OUT and
    /// INOUT arguments must be user variables (`@x`), set when the body ends.
    pub(crate) async fn call_procedure(
        &self,
        session: &Session,
        name: &TableName,
        args: &[ast::Expr],
    ) -> Result<Output> {
        let procedure = self.find_procedure(session, name)?;
        let targets: Vec<Option<String>> = args
            .iter()
            .map(|a| assignable(a).filter(|t| t.starts_with('@') && !t.starts_with("@@")))
            .collect();
        if args.len() == procedure.parameters.len() {
            check_out_arguments(&procedure, &targets)?;
        }
        if !session.info.routine.active() {
            crate::statement_timeout::arm_call(session);
        }
        let mut results = Results::default();
        let failed = match Box::pin(self.run_call(session, &procedure, args, &mut results)).await {
            Ok(values) => self
                .assign_out_arguments(session, &procedure, &targets, values, &mut results)
                .await
                .err(),
            Err(e) => Some(e),
        };
        let mut outputs = results.outputs;
        let done = Output::Ok {
            affected_rows: results.affected_rows,
            last_insert_id: results.last_insert_id,
            info: String::new(),
        };
        match failed {
            // Nothing was sent yet: the CALL fails as any statement does.
            Some(e) if outputs.is_empty() => return Err(e),
            Some(e) => outputs.push(Err(e)),
            None if outputs.is_empty() => return Ok(done),
            None => outputs.push(Ok(done)),
        }
        Ok(Output::Multiple(outputs))
    }

    /// Sets the user variables given for OUT and INOUT parameters to their final values.
    async fn assign_out_arguments(
        &self,
        session: &Session,
        procedure: &ProcedureMeta,
        targets: &[Option<String>],
        values: Vec<ast::Expr>,
        results: &mut Results,
    ) -> Result<()> {
        let mut interpreter = Interpreter {
            engine: self,
            session,
            results,
            frame: Frame::default(),
            strict: super::fitting::strict(&procedure.sql_mode, session),
        };
        for ((parameter, target), value) in procedure.parameters.iter().zip(targets).zip(values) {
            if parameter.mode == ParameterMode::In {
                continue;
            }
            if let Some(target) = target {
                interpreter
                    .set_user_variable(target.trim_start_matches('@'), &value)
                    .await?;
            }
        }
        Ok(())
    }

    /// Runs one procedure's body with `args` (already bound to the caller's variables),
    /// adding its result sets to `results`; returns the parameters' final values.
    pub(super) async fn run_call(
        &self,
        session: &Session,
        procedure: &Arc<ProcedureMeta>,
        args: &[ast::Expr],
        results: &mut Results,
    ) -> Result<Vec<ast::Expr>> {
        let key = format!(
            "{}\0{}",
            procedure.database,
            basalt_catalog::ProcedureMeta::key(&procedure.name)
        );
        let limit = match session.variables().get("max_sp_recursion_depth") {
            Ok(crate::variables::VarValue::Int(n)) => n.clamp(0, MAX_RECURSION_DEPTH as i64) as u64,
            _ => 0,
        };
        if session.info.routine.depth_of(&key) as u64 > limit {
            return Err(BasaltError::ProcedureRecursion {
                name: procedure.name.clone(),
                limit,
            });
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
        let strict = super::fitting::strict(&procedure.sql_mode, session);
        let mut warn = |code, message| session.info.warnings.add("Warning", code, message);
        // Arguments are stored into the parameters as the caller's sql_mode says, the body's
        // values as the procedure's.
        let caller_strict = crate::lenient_insert::strict_inserts(session);
        let bound = super::binding::bind(
            &procedure.parameters,
            row.as_ref(),
            caller_strict,
            &mut warn,
        )?;
        let statements = basalt_sql::parse_procedure_body(&procedure.body)?;
        let parameters = Scope::of_parameters(&procedure.parameters, bound);
        let _routine = session.info.routine.enter(key, definer_account(procedure));
        // The body runs in the procedure's database (as MySQL's routines do); the caller's is
        // back afterwards, whatever happened (even a KILL dropping this future).
        let _restore = RestoreDatabase {
            session,
            database: session.database(),
        };
        session.set_database(Some(procedure.database.clone()));
        let mut interpreter = Interpreter {
            engine: self,
            session,
            results,
            frame: Frame {
                scopes: vec![parameters],
            },
            strict,
        };
        interpreter.run_list(&statements).await?;
        Ok(interpreter.parameter_values())
    }

    pub(super) async fn keep_output(&self, output: Output, results: &mut Results) -> Result<()> {
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
