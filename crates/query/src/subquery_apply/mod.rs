//! Subqueries DataFusion cannot decorrelate, evaluated once per distinct outer row (MySQL's
//! "dependent subquery"). DataFusion turns the common correlated shapes into joins; the others
//! (EXISTS or IN in a SELECT list or CASE, a correlation by `<`, a scalar subquery that is not
//! aggregated, ...) it refuses. Basalt answers them the slow, general way instead of failing:
//!
//! - [`ApplyRefusedSubqueries`] (analyzer, last) moves the subqueries DataFusion's plan checks
//!   would reject or its decorrelation would answer wrongly, and [`ApplyRemainingSubqueries`]
//!   (optimizer, right after DataFusion's decorrelation rules) those it left, into a
//!   [`SubqueryApply`] node under the expression that used them;
//! - [`SubqueryApplyPlanner`] plans that node as `SubqueryApplyExec`, which runs each
//!   subquery with the outer row's values in place of its outer references (remembered per
//!   distinct set of values) and adds one column per subquery: the value, or whether rows
//!   exist, or the three-valued result of IN.

mod exec;
mod in_operands;
mod node;
mod rules;

pub use exec::{SubqueryApplyExec, SubqueryApplyPlanner};
pub use node::SubqueryApply;
pub use rules::{ApplyRefusedSubqueries, ApplyRemainingSubqueries};
