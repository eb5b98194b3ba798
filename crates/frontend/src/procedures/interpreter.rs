//! Runs a procedure body's statements (see [`basalt_sql::SpStatement`]): blocks with their
//! declarations, flow control, assignments and SQL statements. Every SQL statement and
//! expression runs through the ordinary statement path with the visible variables bound as
//! literals (an expression is evaluated as `SELECT expr`). A condition raised where it happens
//! (an error, or "no data") goes to the innermost handler declared for it: CONTINUE goes on
//! after the statement that raised it, EXIT leaves the handler's block. Loops yield to the
//! runtime and check for KILL and the CALL's time limit at every iteration, so that a loop
//! without end neither holds a worker thread nor outlives a KILL.

use super::binding::{literal, substitute, substitute_statement};
use super::call::Results;
use super::frame::{not_found, Cursor, Frame, Handler, Local, OpenCursor, Scope};
use super::values::{cell_literal, is_true, literal_text};
use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use crate::statement::ParsedStatement;
use basalt_catalog::ParameterMode;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::Expr;
use basalt_sql::{SpStatement, Statement};
use datafusion::arrow::array::RecordBatch;
use futures::future::BoxFuture;
use futures::TryStreamExt;

/// Where running goes after a statement.
#[derive(Debug, PartialEq)]
pub(super) enum Flow {
    Next,
    Leave(String),
    Iterate(String),
    /// An EXIT handler of the scope with this index ran: that scope's block ends.
    Exit(usize),
    /// A stored function's `RETURN` with its value (as text, `None` for NULL): the body ends.
    Return(Option<String>),
}

/// One running procedure body.
pub(super) struct Interpreter<'e> {
    pub engine: &'e QueryEngine,
    pub session: &'e Session,
    pub results: &'e mut Results,
    pub frame: Frame,
    /// Whether values stored into the routine's variables fit strictly (its `sql_mode`).
    pub strict: bool,
}

fn undeclared(name: &str) -> BasaltError {
    BasaltError::Routine {
        code: 1327,
        message: format!("Undeclared variable: {name}"),
    }
}

fn labels_match(label: &Option<String>, target: &str) -> bool {
    label
        .as_deref()
        .is_some_and(|l| l.eq_ignore_ascii_case(target))
}

/// True for a user variable's name (`@x`, not `@@x`).
fn user_variable(target: &str) -> Option<&str> {
    let name = target.strip_prefix('@')?;
    (!name.starts_with('@')).then_some(name)
}

impl<'e> Interpreter<'e> {
    /// Runs a list of statements in order until one changes the flow.
    pub(super) fn run_list<'s>(
        &'s mut self,
        statements: &'s [SpStatement],
    ) -> BoxFuture<'s, Result<Flow>> {
        Box::pin(async move {
            for statement in statements {
                let flow = self.run(statement).await?;
                if flow != Flow::Next {
                    return Ok(flow);
                }
            }
            Ok(Flow::Next)
        })
    }

    /// Runs one statement; a condition it raises goes to a handler.
    fn run<'s>(&'s mut self, statement: &'s SpStatement) -> BoxFuture<'s, Result<Flow>> {
        Box::pin(async move {
            match self.run_statement(statement).await {
                Err(e) => self.handle(e).await,
                done => done,
            }
        })
    }

    /// Hands `error` to the handler that catches it (KILL and time limits are not caught).
    async fn handle(&mut self, error: BasaltError) -> Result<Flow> {
        if matches!(error.mysql_code(), 1317 | 3024) {
            return Err(error);
        }
        let Some((scope, index)) = self.frame.handler_for(&error) else {
            return Err(error);
        };
        let handler = &mut self.frame.scopes[scope].handlers[index];
        handler.running = true;
        let (exit, body) = (handler.exit, handler.body.clone());
        // The handler's body sees only what its block sees.
        let inner = self.frame.scopes.split_off(scope + 1);
        let flow = self.run(&body).await;
        self.frame.scopes.extend(inner);
        if let Some(h) = self
            .frame
            .scopes
            .get_mut(scope)
            .and_then(|s| s.handlers.get_mut(index))
        {
            h.running = false;
        }
        match flow? {
            Flow::Return(value) => Ok(Flow::Return(value)),
            _ if exit => Ok(Flow::Exit(scope)),
            _ => Ok(Flow::Next),
        }
    }

    async fn run_statement(&mut self, statement: &SpStatement) -> Result<Flow> {
        match statement {
            SpStatement::Block { label, body } => {
                let depth = self.frame.scopes.len();
                self.frame.scopes.push(Scope::default());
                let flow = self.run_list(body).await;
                self.frame.scopes.truncate(depth);
                Ok(match flow? {
                    Flow::Exit(scope) if scope == depth => Flow::Next,
                    Flow::Leave(target) if labels_match(label, &target) => Flow::Next,
                    other => other,
                })
            }
            SpStatement::DeclareVariables {
                names,
                data_type,
                default,
            } => {
                let value = match default {
                    Some(expr) => self.evaluate(expr).await?,
                    None => None,
                };
                for name in names {
                    let value = self.fit(data_type, name, value.clone())?;
                    self.innermost().locals.push(Local {
                        name: name.clone(),
                        data_type: data_type.clone(),
                        value: literal(data_type, value),
                    });
                }
                Ok(Flow::Next)
            }
            SpStatement::DeclareCondition { name, condition } => {
                let scope = self.innermost();
                scope.conditions.push((name.clone(), condition.clone()));
                Ok(Flow::Next)
            }
            SpStatement::DeclareHandler {
                exit,
                conditions,
                body,
            } => {
                let scope = self.innermost();
                scope.handlers.push(Handler {
                    exit: *exit,
                    conditions: conditions.clone(),
                    body: (**body).clone(),
                    running: false,
                });
                Ok(Flow::Next)
            }
            SpStatement::DeclareCursor { name, query } => {
                let scope = self.innermost();
                scope.cursors.push(Cursor {
                    name: name.clone(),
                    query: query.clone(),
                    open: None,
                });
                Ok(Flow::Next)
            }
            SpStatement::Open(name) => {
                let query = {
                    let cursor = self.frame.cursor_mut(name)?;
                    if cursor.open.is_some() {
                        return Err(BasaltError::Routine {
                            code: 1325,
                            message: "Cursor is already open".into(),
                        });
                    }
                    cursor.query.clone()
                };
                let batches = self.query(&query).await?;
                self.frame.cursor_mut(name)?.open = Some(OpenCursor {
                    batches,
                    batch: 0,
                    row: 0,
                });
                Ok(Flow::Next)
            }
            SpStatement::Close(name) => {
                let cursor = self.frame.cursor_mut(name)?;
                if cursor.open.take().is_none() {
                    return Err(cursor_not_open());
                }
                Ok(Flow::Next)
            }
            SpStatement::Fetch { cursor, targets } => {
                let (batch, row) = {
                    let open = self
                        .frame
                        .cursor_mut(cursor)?
                        .open
                        .as_mut()
                        .ok_or_else(cursor_not_open)?;
                    while open
                        .batches
                        .get(open.batch)
                        .is_some_and(|b| open.row >= b.num_rows())
                    {
                        open.batch += 1;
                        open.row = 0;
                    }
                    let Some(batch) = open.batches.get(open.batch) else {
                        return Err(not_found());
                    };
                    open.row += 1;
                    (batch.clone(), open.row - 1)
                };
                self.assign_row(targets, &batch, row, 1328).await?;
                Ok(Flow::Next)
            }
            SpStatement::If {
                branches,
                otherwise,
                case,
            } => {
                for (condition, body) in branches {
                    if is_true(self.evaluate(condition).await?.as_deref()) {
                        return self.run_list(body).await;
                    }
                }
                match otherwise {
                    Some(body) => self.run_list(body).await,
                    None if *case => Err(case_not_found()),
                    None => Ok(Flow::Next),
                }
            }
            SpStatement::SimpleCase {
                operand,
                branches,
                otherwise,
            } => {
                let value = self.evaluate_expr(operand).await?;
                for (when, body) in branches {
                    let test = format!("({value}) = ({when})");
                    if is_true(self.evaluate(&test).await?.as_deref()) {
                        return self.run_list(body).await;
                    }
                }
                match otherwise {
                    Some(body) => self.run_list(body).await,
                    None => Err(case_not_found()),
                }
            }
            SpStatement::While {
                label,
                condition,
                body,
            } => loop {
                checkpoint(self.session).await?;
                if !is_true(self.evaluate(condition).await?.as_deref()) {
                    return Ok(Flow::Next);
                }
                if let Some(flow) = self.after_iteration(label, body).await? {
                    return Ok(flow);
                }
            },
            SpStatement::Repeat { label, body, until } => loop {
                checkpoint(self.session).await?;
                if let Some(flow) = self.after_iteration(label, body).await? {
                    return Ok(flow);
                }
                if is_true(self.evaluate(until).await?.as_deref()) {
                    return Ok(Flow::Next);
                }
            },
            SpStatement::Loop { label, body } => loop {
                checkpoint(self.session).await?;
                if let Some(flow) = self.after_iteration(label, body).await? {
                    return Ok(flow);
                }
            },
            SpStatement::Leave(label) => Ok(Flow::Leave(label.clone())),
            SpStatement::Iterate(label) => Ok(Flow::Iterate(label.clone())),
            SpStatement::Set(assignments) => {
                for (target, value) in assignments {
                    self.set(target.trim(), value).await?;
                }
                Ok(Flow::Next)
            }
            SpStatement::SelectInto { query, targets } => {
                let batches = self.query(query).await?;
                let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
                if rows > 1 {
                    return Err(BasaltError::Routine {
                        code: 1172,
                        message: "Result consisted of more than one row".into(),
                    });
                }
                let Some(batch) = batches.into_iter().find(|b| b.num_rows() > 0) else {
                    // No row: "no data", a warning unless a handler takes it.
                    if self.frame.handles_not_found() {
                        return Err(not_found());
                    }
                    self.session.info.warnings.add(
                        "Warning",
                        1329,
                        "No data - zero rows fetched, selected, or processed".to_string(),
                    );
                    return Ok(Flow::Next);
                };
                self.assign_row(targets, &batch, 0, 1222).await?;
                Ok(Flow::Next)
            }
            SpStatement::Return(expr) => Ok(Flow::Return(self.evaluate(expr).await?)),
            SpStatement::Sql(text) => self.run_sql(text).await.map(|()| Flow::Next),
        }
    }

    /// Runs a loop's body once: `Some(flow)` when the loop ends with it, `None` to go on.
    async fn after_iteration(
        &mut self,
        label: &Option<String>,
        body: &[SpStatement],
    ) -> Result<Option<Flow>> {
        Ok(match self.run_list(body).await? {
            Flow::Next => None,
            Flow::Iterate(target) if labels_match(label, &target) => None,
            Flow::Leave(target) if labels_match(label, &target) => Some(Flow::Next),
            other => Some(other),
        })
    }

    fn innermost(&mut self) -> &mut Scope {
        if self.frame.scopes.is_empty() {
            self.frame.scopes.push(Scope::default());
        }
        let last = self.frame.scopes.len() - 1;
        &mut self.frame.scopes[last]
    }

    /// Parses a statement of the body with the visible variables bound.
    fn parse_bound(&self, text: &str) -> Result<Statement> {
        let mut statement = basalt_sql::parse_one_with(text, self.session.sql_syntax())?;
        let bound = self.frame.bound();
        match &mut statement {
            Statement::Standard(s) => substitute_statement(s, &bound),
            Statement::Call { args, .. } => {
                for arg in args.iter_mut() {
                    substitute(arg, &bound);
                }
            }
            _ => {}
        }
        Ok(statement)
    }

    /// The rows of a query of the body.
    async fn query(&mut self, text: &str) -> Result<Vec<RecordBatch>> {
        let statement = self.parse_bound(text)?;
        let output = Box::pin(
            self.engine
                .execute_parsed(self.session, ParsedStatement::new(statement)),
        )
        .await?;
        match output {
            Output::Rows { stream, .. } => Ok(stream.try_collect::<Vec<_>>().await?),
            _ => Ok(vec![]),
        }
    }

    /// The value of an expression as text (`None` for NULL).
    async fn evaluate(&mut self, expr: &str) -> Result<Option<String>> {
        let batches = self.query(&format!("SELECT {expr}")).await?;
        Ok(batches
            .iter()
            .find(|b| b.num_rows() > 0)
            .and_then(|b| super::binding::cell_text(b, 0, 0)))
    }

    /// The value of an expression as a literal of its own type.
    async fn evaluate_expr(&mut self, expr: &str) -> Result<Expr> {
        let batches = self.query(&format!("SELECT {expr}")).await?;
        Ok(match batches.iter().find(|b| b.num_rows() > 0) {
            Some(b) => cell_literal(b, 0, 0),
            None => literal("TEXT", None),
        })
    }

    /// `SET target = value`: a local variable or parameter, a user variable (both take the
    /// evaluated value), or anything else SET sets (system variables), run as a statement.
    async fn set(&mut self, target: &str, value: &str) -> Result<()> {
        if self.frame.local(target).is_some() {
            let text = self.evaluate(value).await?;
            return self.assign_local(target, text);
        }
        if let Some(name) = user_variable(target) {
            let value = self.evaluate_expr(value).await?;
            return self.set_user_variable(name, &value).await;
        }
        self.run_sql(&format!("SET {target} = {value}")).await
    }

    fn assign_local(&mut self, name: &str, text: Option<String>) -> Result<()> {
        let data_type = match self.frame.local_mut(name) {
            Some(local) => local.data_type.clone(),
            None => return Err(undeclared(name)),
        };
        let text = self.fit(&data_type, name, text)?;
        let local = self.frame.local_mut(name).ok_or_else(|| undeclared(name))?;
        local.value = literal(&local.data_type, text);
        Ok(())
    }

    /// `text` stored into `name` of `data_type` (see `fitting`), its warning noted.
    pub(super) fn fit(
        &self,
        data_type: &str,
        name: &str,
        text: Option<String>,
    ) -> Result<Option<String>> {
        let (text, warning) = super::fitting::fit(data_type, name, text, self.strict)?;
        if let Some((code, message)) = warning {
            self.session.info.warnings.add("Warning", code, message);
        }
        Ok(text)
    }

    /// Sets user variable `@name` to a literal, as `SET @name = literal` does.
    pub(super) async fn set_user_variable(&mut self, name: &str, value: &Expr) -> Result<()> {
        let name = name.trim_matches('`');
        let sql = format!("SET @`{}` = {value}", name.replace('`', "``"));
        let statement = basalt_sql::parse_one_with(
            &sql,
            basalt_sql::SqlSyntax {
                backslash_escapes: false,
                ..Default::default()
            },
        )?;
        Box::pin(
            self.engine
                .execute_parsed(self.session, ParsedStatement::new(statement)),
        )
        .await?;
        Ok(())
    }

    /// Assigns the cells of one row to `targets` (`mismatch`: the error code when their counts
    /// differ).
    async fn assign_row(
        &mut self,
        targets: &[String],
        batch: &RecordBatch,
        row: usize,
        mismatch: u16,
    ) -> Result<()> {
        if targets.len() != batch.num_columns() {
            return Err(BasaltError::Routine {
                code: mismatch,
                message: if mismatch == 1328 {
                    "Incorrect number of FETCH variables".into()
                } else {
                    "The used SELECT statements have a different number of columns".into()
                },
            });
        }
        for (column, target) in targets.iter().enumerate() {
            if let Some(name) = user_variable(target) {
                let value = cell_literal(batch, row, column);
                self.set_user_variable(name, &value).await?;
            } else {
                let text = super::binding::cell_text(batch, row, column);
                self.assign_local(target, text)?;
            }
        }
        Ok(())
    }

    /// Runs one SQL statement of the body; a CALL runs the procedure it names here, with its
    /// OUT and INOUT arguments assigned back.
    async fn run_sql(&mut self, text: &str) -> Result<()> {
        let original = basalt_sql::parse_one_with(text, self.session.sql_syntax())?;
        if let Statement::Call { name, args } = &original {
            self.session
                .access()
                .check_statement(self.session, &original)?;
            let targets: Vec<Option<String>> = args.iter().map(assignable).collect();
            let Statement::Call { args: bound, .. } = self.parse_bound(text)? else {
                return Err(BasaltError::Internal("a CALL parsed otherwise".into()));
            };
            let procedure = self.engine.find_procedure(self.session, name)?;
            super::call::check_out_arguments(&procedure, &targets)?;
            let values =
                Box::pin(
                    self.engine
                        .run_call(self.session, &procedure, &bound, self.results),
                )
                .await?;
            for ((parameter, target), value) in
                procedure.parameters.iter().zip(&targets).zip(values)
            {
                if parameter.mode == ParameterMode::In {
                    continue;
                }
                let Some(target) = target else { continue };
                match user_variable(target) {
                    Some(name) => self.set_user_variable(name, &value).await?,
                    None => self.assign_local(target, literal_text(&value))?,
                }
            }
            return Ok(());
        }
        let statement = self.parse_bound(text)?;
        let output = Box::pin(
            self.engine
                .execute_parsed(self.session, ParsedStatement::new(statement)),
        )
        .await?;
        self.engine.keep_output(output, self.results).await
    }

    /// The final values of the outermost scope's variables (the parameters).
    pub(super) fn parameter_values(&self) -> Vec<Expr> {
        self.frame
            .scopes
            .first()
            .map(|s| s.locals.iter().map(|l| l.value.clone()).collect())
            .unwrap_or_default()
    }
}

/// The variable an argument names, which an OUT or INOUT parameter can assign: `@user` or a
/// plain name (a local variable of the calling body).
pub(super) fn assignable(arg: &Expr) -> Option<String> {
    match arg {
        Expr::Identifier(ident) if matches!(ident.quote_style, None | Some('`')) => {
            Some(ident.value.clone())
        }
        Expr::Nested(inner) => assignable(inner),
        _ => None,
    }
}

/// Between the iterations of a loop: lets other work run, and stops on KILL or the time limit.
async fn checkpoint(session: &Session) -> Result<()> {
    tokio::task::yield_now().await;
    match session.process.interruption() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn cursor_not_open() -> BasaltError {
    BasaltError::Routine {
        code: 1326,
        message: "Cursor is not open".into(),
    }
}

fn case_not_found() -> BasaltError {
    BasaltError::Routine {
        code: 1339,
        message: "Case not found for CASE statement".into(),
    }
}
