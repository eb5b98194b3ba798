//! The logical node: every row of its input, with one more column per subquery evaluated for
//! that row.

use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{Column, DFSchema, DFSchemaRef, Result};
use datafusion::logical_expr::{Expr, LogicalPlan, Subquery, UserDefinedLogicalNodeCore};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// What a subquery stands for in its expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd)]
pub enum SubqueryKind {
    /// `(SELECT ..)`: its one value, NULL without rows, an error with more than one.
    Scalar,
    /// `[NOT] EXISTS (SELECT ..)`.
    Exists { negated: bool },
    /// `x [NOT] IN (SELECT ..)`, three-valued as SQL's IN is.
    In { negated: bool },
}

/// One subquery of a [`SubqueryApply`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd)]
pub struct AppliedSubquery {
    pub kind: SubqueryKind,
    pub subquery: Subquery,
    /// The outer references replaced by the row's values, as the subquery names them.
    pub outer_refs: Vec<Column>,
    /// The same columns as expressions over the input (what the row's values are read from).
    pub outer_values: Vec<Expr>,
    /// For IN: the value looked for, an expression over the input.
    pub tested: Option<Expr>,
    /// The added column's name.
    pub name: String,
}

impl AppliedSubquery {
    fn field(&self) -> Field {
        match self.kind {
            SubqueryKind::Scalar => Field::new(&self.name, self.first_column_type(), true),
            SubqueryKind::Exists { .. } => Field::new(&self.name, DataType::Boolean, false),
            SubqueryKind::In { .. } => Field::new(&self.name, DataType::Boolean, true),
        }
    }

    /// The type of the subquery's (first) column: a scalar subquery's value.
    pub fn first_column_type(&self) -> DataType {
        self.subquery
            .subquery
            .schema()
            .fields()
            .first()
            .map(|f| f.data_type().clone())
            .unwrap_or(DataType::Null)
    }

    fn expression_count(&self) -> usize {
        self.outer_values.len() + usize::from(self.tested.is_some())
    }
}

/// Its input's columns, then one column per subquery.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SubqueryApply {
    pub input: Arc<LogicalPlan>,
    pub subqueries: Vec<AppliedSubquery>,
    schema: DFSchemaRef,
}

impl SubqueryApply {
    pub fn try_new(input: Arc<LogicalPlan>, subqueries: Vec<AppliedSubquery>) -> Result<Self> {
        let added = DFSchema::from_unqualified_fields(
            subqueries
                .iter()
                .map(|s| s.field())
                .collect::<Vec<_>>()
                .into(),
            HashMap::new(),
        )?;
        let schema = Arc::new(input.schema().join(&added)?);
        Ok(SubqueryApply {
            input,
            subqueries,
            schema,
        })
    }
}

impl PartialOrd for SubqueryApply {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match self.input.partial_cmp(&other.input) {
            Some(Ordering::Equal) => self.subqueries.partial_cmp(&other.subqueries),
            order => order,
        }
    }
}

impl UserDefinedLogicalNodeCore for SubqueryApply {
    fn name(&self) -> &str {
        "SubqueryApply"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    /// The input expressions each row needs: outer values, then the IN operand, per subquery.
    fn expressions(&self) -> Vec<Expr> {
        self.subqueries
            .iter()
            .flat_map(|s| s.outer_values.iter().chain(s.tested.iter()).cloned())
            .collect()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "SubqueryApply:")?;
        for s in &self.subqueries {
            let refs: Vec<String> = s.outer_values.iter().map(|e| e.to_string()).collect();
            let what = match (&s.kind, &s.tested) {
                (SubqueryKind::Scalar, _) => "(<subquery>)".to_string(),
                (SubqueryKind::Exists { negated }, _) => {
                    format!("{}EXISTS (<subquery>)", if *negated { "NOT " } else { "" })
                }
                (SubqueryKind::In { negated }, tested) => format!(
                    "{} {}IN (<subquery>)",
                    tested.as_ref().map(|t| t.to_string()).unwrap_or_default(),
                    if *negated { "NOT " } else { "" }
                ),
            };
            write!(f, " {} := {what} per [{}]", s.name, refs.join(", "))?;
        }
        Ok(())
    }

    fn with_exprs_and_inputs(&self, exprs: Vec<Expr>, inputs: Vec<LogicalPlan>) -> Result<Self> {
        let Some(input) = inputs.into_iter().next() else {
            return datafusion::common::internal_err!("SubqueryApply has one input");
        };
        let expected: usize = self.subqueries.iter().map(|s| s.expression_count()).sum();
        if exprs.len() != expected {
            return datafusion::common::internal_err!(
                "SubqueryApply expects {expected} expressions, got {}",
                exprs.len()
            );
        }
        let mut exprs = exprs.into_iter();
        let subqueries = self
            .subqueries
            .iter()
            .map(|s| {
                let mut s = s.clone();
                s.outer_values = exprs.by_ref().take(s.outer_values.len()).collect();
                if s.tested.is_some() {
                    s.tested = exprs.next();
                }
                s
            })
            .collect();
        SubqueryApply::try_new(Arc::new(input), subqueries)
    }

    /// A row's subquery columns depend on that row alone: a limit may run below.
    fn supports_limit_pushdown(&self) -> bool {
        true
    }
}
