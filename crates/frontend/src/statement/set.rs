//! SET (session and global variables, user variables, DataFusion's options) and USE.

use super::misrouted;
use crate::engine::{split_name, QueryEngine};
use crate::output::Output;
use crate::session::Session;
use crate::statement::ddl;
use crate::variables::VarValue;
use basalt_common::df_error::from_df;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast;
use basalt_sql::ast::{Expr as SqlExpr, ObjectName, Value};
use datafusion::common::ScalarValue;
use futures::TryStreamExt;

impl QueryEngine {
    /// COM_INIT_DB / USE.
    pub fn use_database(&self, session: &Session, db: &str) -> Result<()> {
        let name = session.stored_name(db.trim().trim_matches('`'));
        // The privilege before existence: a database the account may not see stays unknown.
        session.access().require_any_on_database(&name)?;
        let name = if name.eq_ignore_ascii_case("information_schema") {
            "information_schema".to_string()
        } else if let Some(stored) =
            crate::catalog_provider::stored_database(self.services.catalog.as_ref(), &name)
        {
            stored
        } else if crate::system_databases::system_database(&name).is_some() {
            name
        } else {
            return Err(BasaltError::UnknownDatabase(name));
        };
        session.set_database(Some(name));
        Ok(())
    }

    /// SET and USE of the MySQL grammar.
    pub(super) async fn execute_standard_set(
        &self,
        session: &Session,
        stmt: ast::Statement,
    ) -> Result<Output> {
        use ast::Statement as S;
        match stmt {
            S::Set(set) => self.execute_set(session, set).await,
            S::Use(u) => {
                let name = match u {
                    ast::Use::Object(n) | ast::Use::Database(n) | ast::Use::Schema(n) => {
                        split_name(&n).1
                    }
                    other => return Err(BasaltError::NotSupported(other.to_string())),
                };
                self.use_database(session, &name)?;
                Ok(Output::ok())
            }
            _ => Err(misrouted()),
        }
    }

    async fn execute_set(&self, session: &Session, set: ast::Set) -> Result<Output> {
        match set {
            ast::Set::SetNames { charset_name, .. } => {
                let mut vars = session.info.vars.write();
                for v in [
                    "character_set_client",
                    "character_set_connection",
                    "character_set_results",
                ] {
                    vars.set_session(v, &charset_name.value)?;
                }
            }
            ast::Set::SetNamesDefault {} => {}
            // Basalt's parser takes `SET [scope] TRANSACTION` (`isolation`); what reaches
            // here is `SET SESSION CHARACTERISTICS AS TRANSACTION ..`, a session's setting.
            ast::Set::SetTransaction { modes, .. } => {
                self.set_transaction(session, basalt_sql::TransactionScope::Session, &modes)?;
            }
            ast::Set::SingleAssignment {
                scope,
                variable,
                values,
                ..
            } => {
                let Some(value) = values.into_iter().next() else {
                    return Err(BasaltError::NotSupported("SET without a value".into()));
                };
                let value = self.set_value(session, &variable, value).await?;
                self.assign(session, scope, &variable, value)?;
            }
            ast::Set::MultipleAssignments { assignments } => {
                // Left to right, each seeing the ones before it (`SET @a = 1, @b = @a + 1`).
                for a in assignments {
                    let value = self.set_value(session, &a.name, a.value).await?;
                    self.assign(session, a.scope, &a.name, value)?;
                }
            }
            other => return Err(BasaltError::NotSupported(other.to_string())),
        }
        Ok(Output::ok())
    }

    /// `SET STATEMENT name = value [, ..] FOR statement`: the statement run (to its last row)
    /// with the session variables set, then each put back as it was, also when a setting or
    /// the statement fails. Only server variables may be set this way, as in MariaDB. The
    /// statement was parsed before the settings applied (an `sql_mode` changing the grammar,
    /// such as ANSI_QUOTES, does not change how it reads).
    pub(super) async fn set_statement(
        &self,
        session: &Session,
        assignments: Vec<ast::SetAssignment>,
        statement: super::ParsedStatement,
    ) -> Result<Output> {
        let mut saved = Vec::with_capacity(assignments.len());
        let mut applied = Ok(());
        for a in assignments {
            let name = variable_name(&a.name);
            if is_user_variable(&name) {
                applied = Err(BasaltError::Syntax {
                    message: "SET STATEMENT sets server variables, not user variables".into(),
                    near: name,
                    line: 1,
                });
                break;
            }
            let bare = name.trim_start_matches('@').to_ascii_lowercase();
            let bare = bare
                .strip_prefix("session.")
                .or_else(|| bare.strip_prefix("local."))
                .unwrap_or(&bare)
                .to_string();
            match session.info.vars.read().setting(&bare) {
                Ok(setting) => saved.push(setting),
                Err(e) => {
                    applied = Err(e);
                    break;
                }
            }
            applied = match self.set_value(session, &a.name, a.value).await {
                Ok(value) => self.assign(session, None, &a.name, value),
                Err(e) => Err(e),
            };
            if applied.is_err() {
                break;
            }
        }
        let result = match applied {
            Ok(()) => match Box::pin(self.execute_parsed(session, statement)).await {
                Ok(Output::Rows { schema, stream }) => stream
                    .try_collect::<Vec<_>>()
                    .await
                    .map(|batches| Output::batches(schema, batches)),
                other => other,
            },
            Err(e) => Err(e),
        };
        let mut vars = session.info.vars.write();
        for setting in saved.into_iter().rev() {
            vars.restore(setting);
        }
        result
    }

    /// What `variable` is set to. A user variable takes the typed value of its expression,
    /// evaluated now; a system variable takes a literal's or a name's text (`ON`, `utf8mb4`,
    /// `DEFAULT`), or the text of the evaluated expression.
    async fn set_value(
        &self,
        session: &Session,
        variable: &ObjectName,
        expr: SqlExpr,
    ) -> Result<SetValue> {
        if let Some(value) = variable_value(session, &expr)? {
            return Ok(SetValue::computed(value));
        }
        let user = is_user_variable(&variable_name(variable));
        match literal(&expr) {
            Some((v, negative)) => {
                let typed = crate::user_variables::from_literal(v, negative);
                let text = set_value_text(&expr)?;
                return Ok(SetValue { expr, text, typed });
            }
            None if !user && is_name(&expr) => {
                let text = set_value_text(&expr)?;
                return Ok(SetValue {
                    expr,
                    text,
                    typed: None,
                });
            }
            None => {}
        }
        Ok(SetValue::computed(self.evaluate(session, &expr).await?))
    }

    /// The value of an expression, computed as `SELECT expr` in this session.
    async fn evaluate(&self, session: &Session, expr: &SqlExpr) -> Result<Option<VarValue>> {
        let batches = match Box::pin(self.execute(session, &format!("SELECT {expr}"))).await? {
            Output::Rows { stream, .. } => stream.try_collect::<Vec<_>>().await?,
            _ => vec![],
        };
        let Some(batch) = batches.into_iter().find(|b| b.num_rows() > 0) else {
            return Ok(None);
        };
        let scalar = ScalarValue::try_from_array(batch.column(0), 0).map_err(from_df)?;
        let digits = basalt_common::fraction_digits(batch.schema().field(0));
        crate::user_variables::from_scalar(&scalar, digits).map_err(from_df)
    }

    fn assign(
        &self,
        session: &Session,
        scope: Option<ast::ContextModifier>,
        variable: &ObjectName,
        set: SetValue,
    ) -> Result<()> {
        let joined = variable_name(variable);
        // User variable: SET @x = 1; NULL makes it read as an unset one.
        if is_user_variable(&joined) {
            let name = joined.trim_start_matches('@');
            match set.typed {
                Some(v) => session.info.vars.write().set_user(name, v),
                None => session.info.vars.write().unset_user(name),
            }
            return Ok(());
        }
        let SetValue {
            expr, text: value, ..
        } = set;
        let values = std::slice::from_ref(&expr);
        let mut name = joined.trim_start_matches('@').to_lowercase();
        let mut global = matches!(scope, Some(ast::ContextModifier::Global));
        for (prefix, is_global) in [("global.", true), ("session.", false), ("local.", false)] {
            if let Some(rest) = name.strip_prefix(prefix) {
                global = is_global;
                name = rest.to_string();
            }
        }
        // DataFusion's own execution options (e.g. `SET datafusion.execution.batch_size =
        // 4096`) tune this session's planner and operators.
        if name.starts_with("datafusion.") {
            // DataFusion spells booleans true/false where MySQL's SET yields 1/0 or ON/OFF.
            let value = match values.first() {
                Some(SqlExpr::Value(v)) if matches!(v.value, Value::Boolean(_)) => {
                    v.value.to_string()
                }
                _ if value.eq_ignore_ascii_case("on") => "true".to_string(),
                _ if value.eq_ignore_ascii_case("off") => "false".to_string(),
                _ => value,
            };
            if global {
                return Err(BasaltError::NotSupported(format!(
                    "SET GLOBAL {name}: DataFusion options are per session"
                )));
            }
            return session
                .ctx
                .state_ref()
                .write()
                .config_mut()
                .options_mut()
                .set(&name, &value)
                .map_err(|e| match e.to_string() {
                    m if m.contains("not found") || m.contains("could not find") => {
                        BasaltError::UnknownVariable(name.clone())
                    }
                    _ => BasaltError::WrongVariableValue {
                        name: name.clone(),
                        value: value.clone(),
                    },
                });
        }
        if name == "workload_group" {
            let group = value.trim().to_ascii_lowercase();
            if !self.services.workload.exists(&group) {
                return Err(BasaltError::UnknownWorkloadGroup(group));
            }
            let user = session.user();
            if !crate::workload_policies::may_use(self.services.catalog.as_ref(), user, &group) {
                return Err(crate::workload_policies::usage_denied(user, &group));
            }
        }
        // `SET x = DEFAULT`: the session takes the global value, the global the built-in one.
        let default = matches!(values.first(), Some(SqlExpr::Identifier(i))
            if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"));
        if default && !global {
            return session.info.vars.write().reset_session(&name);
        }
        let value = if default {
            crate::variables::SessionVariables::default_text(&name)?.to_string()
        } else {
            value
        };
        if global {
            ddl::require_admin(session, "SET GLOBAL")?;
            let (n, text) = session.info.vars.write().set_global(&name, &value)?;
            self.services.catalog.set_global_variable(&n, &text)?;
            if let Some(twin) = crate::isolation::twin(&n) {
                self.services.catalog.set_global_variable(twin, &text)?;
            }
        } else {
            session.info.vars.write().set_session(&name, &value)?;
        }
        crate::isolation::warn_level(session, &name, &value);
        Ok(())
    }
}

/// A SET value that names a variable (`@@sql_mode`, `@@session.time_zone`, `@saved`): the
/// variable's value now (`Some(None)` for an unset user variable). Dump files save settings
/// this way and restore them at their end.
fn variable_value(session: &Session, e: &SqlExpr) -> Result<Option<Option<VarValue>>> {
    let name = match e {
        SqlExpr::Identifier(i) if i.quote_style.is_none() => i.value.clone(),
        SqlExpr::CompoundIdentifier(parts) => parts
            .iter()
            .map(|p| p.value.as_str())
            .collect::<Vec<_>>()
            .join("."),
        _ => return Ok(None),
    };
    Ok(Some(if let Some(system) = name.strip_prefix("@@") {
        let lower = system.to_ascii_lowercase();
        let vars = session.info.vars.read();
        Some(match lower.split_once('.') {
            Some(("global", n)) => vars.get_global(n)?,
            Some(("session" | "local", n)) => vars.get(n)?,
            _ => vars.get(&lower)?,
        })
    } else if let Some(user) = name.strip_prefix('@') {
        session.info.vars.read().get_user(user)
    } else {
        return Ok(None);
    }))
}

/// A value SET assigns: the expression (for `DEFAULT` and booleans), its text for system
/// variables, and its typed value for user variables (`None`: NULL).
struct SetValue {
    expr: SqlExpr,
    text: String,
    typed: Option<VarValue>,
}

impl SetValue {
    /// A value computed from a variable or an expression, standing as a literal.
    fn computed(typed: Option<VarValue>) -> SetValue {
        let expr = SqlExpr::value(match &typed {
            None => Value::Null,
            Some(VarValue::Int(n)) => Value::Number(n.to_string(), false),
            Some(v) => Value::SingleQuotedString(v.as_text()),
        });
        let text = typed.as_ref().map(VarValue::as_text).unwrap_or_default();
        SetValue { expr, text, typed }
    }
}

fn variable_name(variable: &ObjectName) -> String {
    variable
        .0
        .iter()
        .filter_map(|p| p.as_ident())
        .map(|i| i.value.clone())
        .collect::<Vec<_>>()
        .join(".")
}

fn is_user_variable(name: &str) -> bool {
    name.starts_with('@') && !name.starts_with("@@")
}

/// A literal, possibly negated (`-5`), and whether it is.
fn literal(e: &SqlExpr) -> Option<(&Value, bool)> {
    match e {
        SqlExpr::Value(v) => Some((&v.value, false)),
        SqlExpr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            SqlExpr::Value(v) if matches!(v.value, Value::Number(..)) => Some((&v.value, true)),
            _ => None,
        },
        _ => None,
    }
}

/// A bare name a system variable takes as its value (`ON`, `utf8mb4`, `DEFAULT`).
fn is_name(e: &SqlExpr) -> bool {
    matches!(e, SqlExpr::Identifier(_))
}

/// Text of a SET value expression: literals, identifiers (ON, utf8mb4), and numbers.
fn set_value_text(e: &SqlExpr) -> Result<String> {
    Ok(match e {
        SqlExpr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s.clone(),
            Value::Number(n, _) => n.clone(),
            Value::Boolean(b) => (if *b { "1" } else { "0" }).to_string(),
            Value::Null => String::new(),
            other => other.to_string(),
        },
        SqlExpr::Identifier(i) => i.value.clone(),
        SqlExpr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => format!("-{}", set_value_text(expr)?),
        other => other.to_string(),
    })
}
