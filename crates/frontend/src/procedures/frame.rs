//! The variables, conditions, handlers and cursors of a running procedure, block by block:
//! the parameters form the outermost scope, each `BEGIN .. END` adds one, and a name means the
//! innermost declaration of it.

use super::binding::Bound;
use basalt_common::BasaltError;
use basalt_sql::ast::Expr;
use basalt_sql::{SpCondition, SpStatement};
use datafusion::arrow::array::RecordBatch;

/// A local variable or parameter, with the literal it holds.
pub(super) struct Local {
    pub name: String,
    pub data_type: String,
    pub value: Expr,
}

/// A `DECLARE .. HANDLER`.
pub(super) struct Handler {
    pub exit: bool,
    pub conditions: Vec<SpCondition>,
    pub body: SpStatement,
    /// True while its body runs (a handler does not catch its own body's conditions).
    pub running: bool,
}

/// A `DECLARE .. CURSOR`: its query, and the rows it holds while open.
pub(super) struct Cursor {
    pub name: String,
    pub query: String,
    pub open: Option<OpenCursor>,
}

/// An open cursor's rows and the next one FETCH reads.
pub(super) struct OpenCursor {
    pub batches: Vec<RecordBatch>,
    pub batch: usize,
    pub row: usize,
}

#[derive(Default)]
pub(super) struct Scope {
    pub locals: Vec<Local>,
    pub conditions: Vec<(String, SpCondition)>,
    pub handlers: Vec<Handler>,
    pub cursors: Vec<Cursor>,
}

impl Scope {
    /// The outermost scope of a routine's run: its parameters holding the values bound to them.
    pub(super) fn of_parameters(
        parameters: &[basalt_catalog::ProcedureParameter],
        bound: Vec<Bound>,
    ) -> Scope {
        Scope {
            locals: parameters
                .iter()
                .zip(bound)
                .map(|(p, b)| Local {
                    name: p.name.clone(),
                    data_type: p.data_type.clone(),
                    value: b.value,
                })
                .collect(),
            ..Scope::default()
        }
    }
}

#[derive(Default)]
pub(super) struct Frame {
    pub scopes: Vec<Scope>,
}

/// How specific a condition is (MySQL prefers an error code, then an SQLSTATE, then a class).
fn specificity(condition: &SpCondition) -> u8 {
    match condition {
        SpCondition::Code(_) => 3,
        SpCondition::SqlState(_) => 2,
        _ => 1,
    }
}

impl Frame {
    pub(super) fn local(&self, name: &str) -> Option<&Local> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.locals.iter().rev())
            .find(|l| l.name.eq_ignore_ascii_case(name))
    }

    pub(super) fn local_mut(&mut self, name: &str) -> Option<&mut Local> {
        self.scopes
            .iter_mut()
            .rev()
            .flat_map(|s| s.locals.iter_mut().rev())
            .find(|l| l.name.eq_ignore_ascii_case(name))
    }

    /// Every visible variable bound to its value, innermost first (so an inner declaration
    /// hides an outer one of the same name).
    pub(super) fn bound(&self) -> Vec<Bound> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.locals.iter().rev())
            .map(|l| Bound {
                name: l.name.clone(),
                value: l.value.clone(),
            })
            .collect()
    }

    pub(super) fn cursor_mut(&mut self, name: &str) -> Result<&mut Cursor, BasaltError> {
        self.scopes
            .iter_mut()
            .rev()
            .flat_map(|s| s.cursors.iter_mut())
            .find(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| BasaltError::Routine {
                code: 1324,
                message: format!("Undefined CURSOR: {name}"),
            })
    }

    /// The condition a name declares (innermost first).
    fn named(&self, name: &str) -> Option<&SpCondition> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.conditions.iter())
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, c)| c)
    }

    /// How well `condition` matches an error (0: not at all).
    fn matches(&self, condition: &SpCondition, code: u16, state: &str) -> u8 {
        let hit = match condition {
            SpCondition::Code(c) => *c == code,
            SpCondition::SqlState(s) => s == state,
            SpCondition::NotFound => state.starts_with("02"),
            SpCondition::SqlWarning => state.starts_with("01"),
            SpCondition::SqlException => !["00", "01", "02"].iter().any(|c| state.starts_with(c)),
            SpCondition::Named(name) => {
                return match self.named(name) {
                    Some(declared @ (SpCondition::Code(_) | SpCondition::SqlState(_))) => {
                        self.matches(&declared.clone(), code, state)
                    }
                    _ => 0,
                };
            }
        };
        if hit {
            specificity(condition)
        } else {
            0
        }
    }

    /// The handler that catches `error`: the innermost scope with one, and in it the most
    /// specific; as (scope, handler) indexes.
    pub(super) fn handler_for(&self, error: &BasaltError) -> Option<(usize, usize)> {
        let (code, state) = (error.mysql_code(), error.sqlstate());
        for (s, scope) in self.scopes.iter().enumerate().rev() {
            let best = scope
                .handlers
                .iter()
                .enumerate()
                .filter(|(_, h)| !h.running)
                .map(|(i, h)| {
                    let score = h
                        .conditions
                        .iter()
                        .map(|c| self.matches(c, code, state))
                        .max()
                        .unwrap_or(0);
                    (score, i)
                })
                .filter(|(score, _)| *score > 0)
                .max_by_key(|(score, i)| (*score, std::cmp::Reverse(*i)));
            if let Some((_, i)) = best {
                return Some((s, i));
            }
        }
        None
    }

    /// True when a handler would catch "no data" (SQLSTATE 02000).
    pub(super) fn handles_not_found(&self) -> bool {
        self.handler_for(&not_found()).is_some()
    }
}

/// "No data": a FETCH past the last row, or `SELECT .. INTO` of no row.
pub(super) fn not_found() -> BasaltError {
    BasaltError::Routine {
        code: 1329,
        message: "No data - zero rows fetched, selected, or processed".into(),
    }
}
