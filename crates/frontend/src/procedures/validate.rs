//! What CREATE PROCEDURE checks of a body before keeping it: every SQL statement in it parses,
//! every LEAVE and ITERATE names an enclosing label (ITERATE a loop's), a label is not reused
//! inside its own statement, and handlers name declared conditions — MySQL's 1308, 1309 and
//! 1319, so that no body is kept that could not run. A stored function's body must also
//! RETURN (1320) and send no result set (1415).

use basalt_common::{BasaltError, Result};
use basalt_sql::{SpCondition, SpStatement};

/// A label in scope: its name and whether it belongs to a loop.
struct Label {
    name: String,
    is_loop: bool,
}

/// Checks a parsed body (`syntax`: how the session's `sql_mode` parses text).
pub(super) fn check_body(statements: &[SpStatement], syntax: basalt_sql::SqlSyntax) -> Result<()> {
    let mut checker = Checker {
        labels: vec![],
        conditions: vec![],
        syntax,
    };
    checker.list(statements)
}

struct Checker {
    labels: Vec<Label>,
    /// Declared condition names, per open block.
    conditions: Vec<Vec<String>>,
    syntax: basalt_sql::SqlSyntax,
}

impl Checker {
    fn list(&mut self, statements: &[SpStatement]) -> Result<()> {
        statements.iter().try_for_each(|s| self.statement(s))
    }

    fn parses(&self, sql: &str) -> Result<()> {
        basalt_sql::parse_one_with(sql, self.syntax).map(|_| ())
    }

    fn labelled(
        &mut self,
        label: &Option<String>,
        is_loop: bool,
        body: &[SpStatement],
    ) -> Result<()> {
        if let Some(name) = label {
            if self
                .labels
                .iter()
                .any(|l| l.name.eq_ignore_ascii_case(name))
            {
                return Err(BasaltError::Routine {
                    code: 1309,
                    message: format!("Redefining label {name}"),
                });
            }
            self.labels.push(Label {
                name: name.clone(),
                is_loop,
            });
        }
        let done = self.list(body);
        if label.is_some() {
            self.labels.pop();
        }
        done
    }

    fn statement(&mut self, statement: &SpStatement) -> Result<()> {
        match statement {
            SpStatement::Block { label, body } => {
                self.conditions.push(vec![]);
                let done = self.labelled(label, false, body);
                self.conditions.pop();
                done
            }
            SpStatement::While {
                label,
                condition,
                body,
            } => {
                self.parses(&format!("SELECT {condition}"))?;
                self.labelled(label, true, body)
            }
            SpStatement::Repeat { label, body, until } => {
                self.parses(&format!("SELECT {until}"))?;
                self.labelled(label, true, body)
            }
            SpStatement::Loop { label, body } => self.labelled(label, true, body),
            SpStatement::Leave(target) | SpStatement::Iterate(target) => {
                let leave = matches!(statement, SpStatement::Leave(_));
                let found = self
                    .labels
                    .iter()
                    .any(|l| l.name.eq_ignore_ascii_case(target) && (leave || l.is_loop));
                if found {
                    return Ok(());
                }
                Err(BasaltError::Routine {
                    code: 1308,
                    message: format!(
                        "{} with no matching label: {target}",
                        if leave { "LEAVE" } else { "ITERATE" }
                    ),
                })
            }
            SpStatement::If {
                branches,
                otherwise,
                ..
            } => {
                for (condition, body) in branches {
                    self.parses(&format!("SELECT {condition}"))?;
                    self.list(body)?;
                }
                otherwise.as_deref().map_or(Ok(()), |b| self.list(b))
            }
            SpStatement::SimpleCase {
                operand,
                branches,
                otherwise,
            } => {
                self.parses(&format!("SELECT {operand}"))?;
                for (value, body) in branches {
                    self.parses(&format!("SELECT {value}"))?;
                    self.list(body)?;
                }
                otherwise.as_deref().map_or(Ok(()), |b| self.list(b))
            }
            SpStatement::DeclareVariables { default, .. } => match default {
                Some(expr) => self.parses(&format!("SELECT {expr}")),
                None => Ok(()),
            },
            SpStatement::DeclareCondition { name, .. } => {
                if let Some(names) = self.conditions.last_mut() {
                    names.push(name.clone());
                }
                Ok(())
            }
            SpStatement::DeclareHandler {
                conditions, body, ..
            } => {
                for condition in conditions {
                    if let SpCondition::Named(name) = condition {
                        let declared = self
                            .conditions
                            .iter()
                            .flatten()
                            .any(|n| n.eq_ignore_ascii_case(name));
                        if !declared {
                            return Err(BasaltError::Routine {
                                code: 1319,
                                message: format!("Undefined CONDITION: {name}"),
                            });
                        }
                    }
                }
                self.statement(body)
            }
            SpStatement::DeclareCursor { query, .. } => self.parses(query),
            SpStatement::Set(assignments) => {
                for (target, value) in assignments {
                    self.parses(&format!("SET {target} = {value}"))?;
                }
                Ok(())
            }
            SpStatement::SelectInto { query, .. } => self.parses(query),
            SpStatement::Return(expr) => self.parses(&format!("SELECT {expr}")),
            SpStatement::Sql(sql) => {
                let words: Vec<String> = sql
                    .split_whitespace()
                    .take(8)
                    .map(|w| w.to_ascii_uppercase())
                    .collect();
                let first = words.first().map(String::as_str).unwrap_or_default();
                let routine = words
                    .iter()
                    .any(|w| ["PROCEDURE", "FUNCTION", "TRIGGER", "EVENT"].contains(&w.as_str()));
                if ["CREATE", "DROP", "ALTER"].contains(&first) && routine {
                    return Err(BasaltError::NotSupported(format!(
                        "{first} of a stored routine in a stored procedure"
                    )));
                }
                if ["USE", "LOCK", "UNLOCK"].contains(&first) {
                    return Err(BasaltError::NotSupported(format!(
                        "{first} in a stored procedure"
                    )));
                }
                self.parses(sql)
            }
            SpStatement::Open(_) | SpStatement::Close(_) | SpStatement::Fetch { .. } => Ok(()),
        }
    }
}

/// The statements directly or indirectly inside `statements`, each once.
fn each_statement<'s>(statements: &'s [SpStatement], out: &mut Vec<&'s SpStatement>) {
    for statement in statements {
        out.push(statement);
        match statement {
            SpStatement::Block { body, .. }
            | SpStatement::While { body, .. }
            | SpStatement::Repeat { body, .. }
            | SpStatement::Loop { body, .. } => each_statement(body, out),
            SpStatement::If {
                branches,
                otherwise,
                ..
            }
            | SpStatement::SimpleCase {
                branches,
                otherwise,
                ..
            } => {
                for (_, body) in branches {
                    each_statement(body, out);
                }
                if let Some(body) = otherwise {
                    each_statement(body, out);
                }
            }
            SpStatement::DeclareHandler { body, .. } => {
                each_statement(std::slice::from_ref(body.as_ref()), out)
            }
            _ => {}
        }
    }
}

/// What a stored function's body must be beyond a procedure's: it has a RETURN (MySQL's 1320)
/// and no statement sends rows to the client (1415).
pub(super) fn check_function_body(statements: &[SpStatement], name: &str) -> Result<()> {
    let mut all = vec![];
    each_statement(statements, &mut all);
    for statement in &all {
        if let SpStatement::Sql(sql) = statement {
            let first = sql
                .trim_start_matches(['(', ' ', '\n', '\t'])
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_ascii_uppercase();
            if [
                "SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "VALUES", "TABLE",
            ]
            .contains(&first.as_str())
            {
                return Err(BasaltError::Routine {
                    code: 1415,
                    message: "Not allowed to return a result set from a function".into(),
                });
            }
        }
    }
    if !all.iter().any(|s| matches!(s, SpStatement::Return(_))) {
        return Err(BasaltError::Routine {
            code: 1320,
            message: format!("No RETURN found in FUNCTION {name}"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body: &str) -> Result<()> {
        check_body(&basalt_sql::parse_procedure_body(body)?, Default::default())
    }

    #[test]
    fn labels_and_conditions_must_be_declared() {
        assert!(check("l: LOOP LEAVE l; END LOOP").is_ok());
        assert_eq!(check("BEGIN LEAVE x; END").unwrap_err().mysql_code(), 1308);
        assert_eq!(
            check("b: BEGIN ITERATE b; END").unwrap_err().mysql_code(),
            1308
        );
        assert_eq!(
            check("a: LOOP a: LOOP LEAVE a; END LOOP; END LOOP")
                .unwrap_err()
                .mysql_code(),
            1309
        );
        assert_eq!(
            check("BEGIN DECLARE CONTINUE HANDLER FOR nope SET @x = 1; END")
                .unwrap_err()
                .mysql_code(),
            1319
        );
        assert!(check(
            "BEGIN DECLARE e CONDITION FOR 1146; DECLARE EXIT HANDLER FOR e SET @x = 1; END"
        )
        .is_ok());
        assert_eq!(
            check("BEGIN DROP PROCEDURE p; END")
                .unwrap_err()
                .mysql_code(),
            1235
        );
        assert_eq!(check("BEGIN SELEC 1; END").unwrap_err().mysql_code(), 1064);
    }

    fn check_function(body: &str) -> Result<()> {
        let body = basalt_sql::parse_function_body(body)?;
        check_body(&body, Default::default())?;
        check_function_body(&body, "f")
    }

    #[test]
    fn functions_return_and_send_no_rows() {
        assert!(check_function("RETURN 1").is_ok());
        assert!(check_function(
            "BEGIN DECLARE x INT; DECLARE EXIT HANDLER FOR NOT FOUND RETURN 0; \
             SELECT a FROM t INTO x; RETURN x; END"
        )
        .is_ok());
        assert_eq!(
            check_function("BEGIN SET @a = 1; END")
                .unwrap_err()
                .mysql_code(),
            1320
        );
        assert_eq!(
            check_function("BEGIN SELECT 1; RETURN 1; END")
                .unwrap_err()
                .mysql_code(),
            1415
        );
        assert_eq!(check_function("RETURN (1").unwrap_err().mysql_code(), 1064);
    }
}
