//! `COUNT(DISTINCT a, b, ..)` (MySQL, Doris): how many distinct combinations of the values
//! there are among the rows where none of them is NULL. DataFusion counts one distinct
//! expression only; the statement rewrite makes the combination one value,
//! `COUNT(DISTINCT CASE WHEN a IS NULL OR b IS NULL .. THEN NULL ELSE struct(a, b, ..) END)`.

use basalt_sql::ast::helpers::attached_token::AttachedToken;
use basalt_sql::ast::{
    BinaryOperator, CaseWhen, DuplicateTreatment, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArguments,
};

/// The one-value form of `f` when it is a `COUNT(DISTINCT ..)` of two or more expressions.
pub(crate) fn count_distinct_tuples(f: &Function) -> Option<Expr> {
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    if list.duplicate_treatment != Some(DuplicateTreatment::Distinct)
        || list.args.len() < 2
        || !list.clauses.is_empty()
        || f.over.is_some()
    {
        return None;
    }
    let values = crate::mysql_compat::unnamed_args(list)?;
    let any_null = values
        .iter()
        .map(|v| Expr::IsNull(Box::new(v.clone())))
        .reduce(|a, b| Expr::BinaryOp {
            left: Box::new(a),
            op: BinaryOperator::Or,
            right: Box::new(b),
        })?;
    let tuple = Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![CaseWhen {
            condition: any_null,
            result: Expr::value(basalt_sql::ast::Value::Null),
        }],
        else_result: Some(Box::new(basalt_sql::function_call("struct", values))),
    };
    let mut counted = f.clone();
    if let FunctionArguments::List(list) = &mut counted.args {
        list.args = vec![FunctionArg::Unnamed(FunctionArgExpr::Expr(tuple))];
    }
    Some(Expr::Function(counted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_distinct_values_count_as_one_tuple() {
        let Ok(basalt_sql::Statement::Standard(stmt)) =
            basalt_sql::parse_one("SELECT COUNT(DISTINCT a, b + 1) FROM t")
        else {
            panic!("not parsed");
        };
        let basalt_sql::ast::Statement::Query(query) = *stmt else {
            panic!("not a query");
        };
        let basalt_sql::ast::SetExpr::Select(select) = *query.body else {
            panic!("not a select");
        };
        let basalt_sql::ast::SelectItem::UnnamedExpr(Expr::Function(f)) = &select.projection[0]
        else {
            panic!("not a call");
        };
        let rewritten = count_distinct_tuples(f).expect("rewritten");
        assert_eq!(
            rewritten.to_string(),
            "COUNT(DISTINCT CASE WHEN a IS NULL OR b + 1 IS NULL THEN NULL ELSE struct(a, b + 1) END)"
        );
    }
}
