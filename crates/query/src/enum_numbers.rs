//! ENUM and SET columns where MySQL reads them as numbers: an ENUM value is its member's
//! position and a SET value its members' bits in arithmetic (`e + 0`), in comparisons and
//! BETWEEN / IN with numbers (`e = 2`), in numeric casts and in ORDER BY
//! (members sort in declared order). Elsewhere they stay their text, as in MySQL (`e = 'a'`,
//! MIN/MAX, GROUP BY, the result rows). Before this rule, `e + 0` and `e = 2` read the text as a
//! number (NULL), and ORDER BY sorted alphabetically: silent wrong answers.
//!
//! An analyzer rule before type coercion finds the plan's ENUM/SET columns through its table
//! scans (by table name or alias, [`crate::scanned_tables`]) and through the derived tables
//! and views that pass them on unchanged, and reads each in those places (CASE's operand
//! too) through `enum_number(col, 'enum' | 'set', members..)`. The columns are known by
//! name for the whole plan, so an alias that also names a scanned table or another derived
//! table of other values is left out (its columns keep their text reading, as before
//! derived tables were followed). A column computed from an
//! ENUM (`CONCAT(e)`) keeps its text reading; SUM/AVG of an ENUM fail while the SQL is
//! planned, before this rule, as they did. Its unary minus (`mysql_negate(e)` by then) is the
//! member number's negative.

use basalt_catalog::AllowedValues;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, DFSchema, Result};
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::{
    lit, Between, BinaryExpr, Cast, Expr, ExprSchemable, LogicalPlan, Operator, SortExpr,
};
use datafusion::optimizer::AnalyzerRule;

/// Analyzer rule: ENUM/SET columns as numbers where MySQL reads them so.
#[derive(Debug, Default)]
pub struct EnumNumbers;

/// An ENUM or SET column as the plan names it.
struct MemberColumn {
    relation: String,
    column: String,
    allowed: AllowedValues,
}

impl AnalyzerRule for EnumNumbers {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        let columns = member_columns(&plan)?;
        if columns.is_empty() {
            return Ok(plan);
        }
        plan.transform_up_with_subqueries(|node| rewrite_node(node, &columns))
            .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "enum_numbers"
    }
}

fn rewrite_node(node: LogicalPlan, columns: &[MemberColumn]) -> Result<Transformed<LogicalPlan>> {
    if let LogicalPlan::Sort(mut sort) = node {
        let schema = sort.input.schema().clone();
        // ORDER BY an ENUM column orders by member position (MySQL's rule); sort expressions
        // read ENUMs as numbers where any expression does.
        let mut changed = false;
        let mut keys = Vec::with_capacity(sort.expr.len());
        for s in sort.expr {
            let expr = match number_of(&s.expr, columns, &schema) {
                Some(number) => Transformed::yes(number),
                None => s
                    .expr
                    .transform_up(|e| numeric_reading(e, columns, &schema))?,
            };
            changed |= expr.transformed;
            keys.push(SortExpr {
                expr: expr.data,
                ..s
            });
        }
        sort.expr = keys;
        let node = LogicalPlan::Sort(sort);
        return Ok(if changed {
            Transformed::yes(node)
        } else {
            Transformed::no(node)
        });
    }
    basalt_functions::rewrite_node_expressions(node, |e, schema| {
        numeric_reading(e, columns, schema)
    })
}

/// The ENUM/SET columns of the plan's tables, by the names the plan reads them under.
fn member_columns(plan: &LogicalPlan) -> Result<Vec<MemberColumn>> {
    let scans = crate::scanned_tables::scanned_tables(plan)?;
    let mut found: Vec<MemberColumn> = Vec::new();
    for (relation, table) in &scans {
        for c in &table.columns {
            let Some(allowed) = &c.allowed else { continue };
            // One table read twice under one name (a CTE used twice) is one set of columns.
            let seen = found.iter().any(|f| {
                f.relation.eq_ignore_ascii_case(relation)
                    && f.column.eq_ignore_ascii_case(&c.name)
                    && &f.allowed == allowed
            });
            if !seen {
                found.push(MemberColumn {
                    relation: relation.clone(),
                    column: c.name.clone(),
                    allowed: allowed.clone(),
                });
            }
        }
    }
    if found.is_empty() {
        return Ok(found);
    }
    // Derived tables and views (`SELECT .. FROM (SELECT e FROM t) AS d WHERE d.e = 1`): an
    // ENUM column their select list passes on unchanged is one under their alias too. A name
    // counts only when it means one thing in the whole plan: no table is scanned under it, and
    // every derived table of that name passes the same ENUM column on (`d` of another scope
    // over a VARCHAR column keeps its text reading). Each pass reaches one more level.
    let scanned: Vec<String> = scans.iter().map(|(r, _)| r.to_lowercase()).collect();
    for _ in 0..8 {
        let mut derived: Vec<(String, Vec<PassedColumn>)> = Vec::new();
        plan.apply_with_subqueries(|node| {
            if let LogicalPlan::SubqueryAlias(alias) = node {
                derived.push((alias.alias.table().to_lowercase(), passed_on(alias, &found)));
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        let mut added = false;
        for (relation, columns) in &derived {
            if scanned.contains(relation) {
                continue;
            }
            for (column, allowed) in columns {
                let Some(allowed) = allowed else { continue };
                let known = found.iter().any(|f| {
                    f.relation.eq_ignore_ascii_case(relation)
                        && f.column.eq_ignore_ascii_case(column)
                });
                // Every derived table of this name passes this column on as the same ENUM.
                let agreed = derived
                    .iter()
                    .filter(|(r, _)| r == relation)
                    .all(|(_, cols)| {
                        cols.iter().any(|(c, a)| {
                            c.eq_ignore_ascii_case(column) && a.as_ref() == Some(allowed)
                        })
                    });
                if !known && agreed {
                    found.push(MemberColumn {
                        relation: relation.clone(),
                        column: column.clone(),
                        allowed: allowed.clone(),
                    });
                    added = true;
                }
            }
        }
        if !added {
            break;
        }
    }
    Ok(found)
}

/// An output column of a derived table, with the ENUM/SET members it passes on unchanged
/// from its input (`None`: a column of other values).
type PassedColumn = (String, Option<AllowedValues>);

/// Each output column of a derived table (or view), as [`PassedColumn`].
fn passed_on(
    alias: &datafusion::logical_expr::SubqueryAlias,
    columns: &[MemberColumn],
) -> Vec<PassedColumn> {
    let outputs = alias.schema.fields().iter().map(|f| f.name().clone());
    let sources: Vec<Option<Column>> = match alias.input.as_ref() {
        LogicalPlan::Projection(projection) => projection
            .expr
            .iter()
            .map(|e| match e.clone().unalias() {
                Expr::Column(c) => Some(c),
                _ => None,
            })
            .collect(),
        input => input
            .schema()
            .iter()
            .map(|(q, f)| Some(Column::new(q.cloned(), f.name())))
            .collect(),
    };
    outputs
        .zip(sources)
        .map(|(column, source)| {
            let allowed = source.and_then(|s| find(&s, columns).map(|found| found.allowed.clone()));
            (column, allowed)
        })
        .collect()
}

/// `e` read as its number, when it is an ENUM/SET column of the plan (unambiguously).
fn number_of(e: &Expr, columns: &[MemberColumn], schema: &DFSchema) -> Option<Expr> {
    let Expr::Column(column) = e else {
        return None;
    };
    let found = find(column, columns)?;
    // ENUM/SET values are text: a column of another type that happens to share a name with
    // one (an alias reused in another scope) keeps its reading.
    let text = e.get_type(schema).is_ok_and(|t| {
        matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
            || matches!(t, DataType::Dictionary(_, v) if v.as_ref() == &DataType::Utf8)
    });
    if !text {
        return None;
    }
    let kind = if found.allowed.set { "set" } else { "enum" };
    let mut args = vec![e.clone(), lit(kind)];
    args.extend(found.allowed.values.iter().map(|m| lit(m.clone())));
    Some(basalt_functions::enum_number().call(args))
}

/// The ENUM/SET column a qualified column reference reads (an unqualified one is an alias of
/// the select list or a derived value, which keeps its text reading).
fn find<'a>(column: &Column, columns: &'a [MemberColumn]) -> Option<&'a MemberColumn> {
    let relation = column.relation.as_ref()?;
    let mut matching = columns.iter().filter(|c| {
        c.column.eq_ignore_ascii_case(&column.name)
            && relation.table().eq_ignore_ascii_case(&c.relation)
    });
    match (matching.next(), matching.next()) {
        (Some(found), None) => Some(found),
        _ => None,
    }
}

/// True for a numeric operand (the other side of a comparison that reads ENUMs as numbers).
fn is_number(e: &Expr, schema: &DFSchema) -> bool {
    e.get_type(schema).is_ok_and(|t| t.is_numeric())
}

/// The ENUM/SET columns of `e`'s operands as numbers where MySQL reads them so.
fn numeric_reading(
    e: Expr,
    columns: &[MemberColumn],
    schema: &DFSchema,
) -> Result<Transformed<Expr>> {
    let number = |x: &Expr| number_of(x, columns, schema);
    Ok(match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let arithmetic = matches!(
                op,
                Operator::Plus
                    | Operator::Minus
                    | Operator::Multiply
                    | Operator::Divide
                    | Operator::Modulo
            );
            let comparison = basalt_functions::is_comparison(&op);
            let reads = |other: &Expr| arithmetic || (comparison && is_number(other, schema));
            let new_left = reads(&right).then(|| number(&left)).flatten();
            let new_right = reads(&left).then(|| number(&right)).flatten();
            if new_left.is_none() && new_right.is_none() {
                Transformed::no(Expr::BinaryExpr(BinaryExpr { left, op, right }))
            } else {
                Transformed::yes(Expr::BinaryExpr(BinaryExpr {
                    left: Box::new(new_left.unwrap_or(*left)),
                    op,
                    right: Box::new(new_right.unwrap_or(*right)),
                }))
            }
        }
        // `-e`, which the statement rewrite makes `mysql_negate(e)` (DataFusion plans `-` of
        // literals only): the member's negative.
        Expr::ScalarFunction(call)
            if call.name() == basalt_functions::MYSQL_NEGATE && call.args.len() == 1 =>
        {
            match number(&call.args[0]) {
                Some(n) => Transformed::yes(Expr::Negative(Box::new(n))),
                None => Transformed::no(Expr::ScalarFunction(call)),
            }
        }
        Expr::Between(between)
            if is_number(&between.low, schema) && is_number(&between.high, schema) =>
        {
            match number(&between.expr) {
                Some(n) => Transformed::yes(Expr::Between(Between {
                    expr: Box::new(n),
                    ..between
                })),
                None => Transformed::no(Expr::Between(between)),
            }
        }
        Expr::InList(list) if list.list.iter().all(|x| is_number(x, schema)) => {
            match number(&list.expr) {
                Some(n) => Transformed::yes(Expr::InList(InList {
                    expr: Box::new(n),
                    ..list
                })),
                None => Transformed::no(Expr::InList(list)),
            }
        }
        // `CASE e WHEN 1 THEN ..`: the operand is compared with numbers.
        Expr::Case(mut case)
            if case
                .when_then_expr
                .iter()
                .all(|(when, _)| is_number(when, schema)) =>
        {
            match case.expr.as_deref().and_then(number) {
                Some(n) => {
                    case.expr = Some(Box::new(n));
                    Transformed::yes(Expr::Case(case))
                }
                None => Transformed::no(Expr::Case(case)),
            }
        }
        Expr::Cast(cast) if cast.field.data_type().is_numeric() => match number(&cast.expr) {
            Some(n) => Transformed::yes(Expr::Cast(Cast::new(
                Box::new(n),
                cast.field.data_type().clone(),
            ))),
            None => Transformed::no(Expr::Cast(cast)),
        },
        // Arithmetic on text: the SQL planner reads the operand as a number already.
        Expr::ScalarFunction(call)
            if call.args.len() == 1
                && matches!(
                    call.func.name(),
                    "mysql_string_to_double"
                        | "mysql_string_to_bigint"
                        | "mysql_string_to_unsigned"
                ) =>
        {
            match number(&call.args[0]) {
                Some(n) => {
                    let ty = Expr::ScalarFunction(call.clone()).get_type(schema)?;
                    Transformed::yes(Expr::Cast(Cast::new(Box::new(n), ty)))
                }
                None => Transformed::no(Expr::ScalarFunction(call)),
            }
        }
        e => Transformed::no(e),
    })
}
