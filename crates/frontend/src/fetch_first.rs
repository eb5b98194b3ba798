//! The SQL standard's row limit, `[OFFSET o ROWS] FETCH {FIRST | NEXT} [n] {ROW | ROWS}
//! {ONLY | WITH TIES}` (MariaDB, PostgreSQL, Oracle, SQL Server), which DataFusion does not
//! plan. `ONLY` is `LIMIT n` (one row when n is left out). `WITH TIES` also keeps the rows tied
//! with the last one on the ORDER BY keys: the SELECT ranks its rows over its ORDER BY (RANK
//! and ROW_NUMBER), and a row is kept when fewer than `o + n` rows sort before it (its rank is
//! at most `o + n`) and it is past the first `o`. `WITH TIES` without an ORDER BY, over DISTINCT
//! or a set operation, and `PERCENT` are left as written (DataFusion refuses them).

use basalt_sql::ast::{
    self, BinaryOperator, Expr, Ident, LimitClause, Offset, OffsetRows, Query, SelectItem, SetExpr,
    Statement, Value, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

const RANK: &str = "__basalt_tie_rank";
const ROW: &str = "__basalt_tie_row";
const TIES: &str = "__basalt_ties";

/// Rewrites every query of `stmt` with a FETCH clause it can plan.
pub(crate) fn rewrite(stmt: &mut Statement) {
    struct Fetches;
    impl VisitorMut for Fetches {
        type Break = ();
        fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            rewrite_query(q);
            ControlFlow::Continue(())
        }
    }
    let _ = stmt.visit(&mut Fetches);
}

fn rewrite_query(q: &mut Query) {
    let Some(fetch) = q.fetch.as_ref() else {
        return;
    };
    if fetch.percent {
        return;
    }
    // `FETCH` beside a LIMIT has no meaning to keep.
    if matches!(
        q.limit_clause,
        Some(
            LimitClause::LimitOffset { limit: Some(_), .. } | LimitClause::OffsetCommaLimit { .. }
        )
    ) {
        return;
    }
    let count = fetch
        .quantity
        .clone()
        .unwrap_or_else(|| Expr::value(Value::Number("1".into(), false)));
    let offset = match &q.limit_clause {
        Some(LimitClause::LimitOffset {
            offset: Some(Offset { value, .. }),
            ..
        }) => Some(value.clone()),
        _ => None,
    };
    if !fetch.with_ties {
        q.fetch = None;
        q.limit_clause = Some(LimitClause::LimitOffset {
            limit: Some(count),
            offset: offset.map(|value| Offset {
                value,
                rows: OffsetRows::None,
            }),
            limit_by: vec![],
        });
        return;
    }
    if let Some(tied) = with_ties(q, count, offset) {
        *q = tied;
    }
}

/// `q` (with `FETCH .. WITH TIES`) as the ranked query described in the module doc, built as
/// syntax (printed text would lose literals' backslashes). Each select item gets a name of its
/// own in the ranked derived table and its shown name back outside (`t.a, u.a` keep their
/// columns apart); a select list with a wildcard is read back as `* EXCLUDE (rank, row)`.
fn with_ties(q: &Query, count: Expr, offset: Option<Expr>) -> Option<Query> {
    let (select, order) = crate::order_keys::ordered_select(q)?;
    if select.distinct.is_some() || order.is_empty() {
        return None;
    }
    let keys = crate::order_keys::window_keys(select, order)?;
    let mut inner = q.clone();
    inner.with = None;
    inner.order_by = None;
    inner.limit_clause = None;
    inner.fetch = None;
    let SetExpr::Select(inner_select) = inner.body.as_mut() else {
        return None;
    };
    let ties = Ident::new(TIES);
    let column = |name: &str| Expr::CompoundIdentifier(vec![ties.clone(), Ident::new(name)]);
    let wildcard = inner_select.projection.iter().any(|item| {
        matches!(
            item,
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
        )
    });
    let mut shown: Vec<SelectItem> = Vec::new();
    if !wildcard {
        for (i, item) in inner_select.projection.iter_mut().enumerate() {
            let (expr, name) = match item {
                SelectItem::UnnamedExpr(e) => (e.clone(), shown_name(e)),
                SelectItem::ExprWithAlias { expr, alias } => (expr.clone(), alias.clone()),
                _ => return None,
            };
            let hidden = format!("__basalt_tie_c{i}");
            *item = SelectItem::ExprWithAlias {
                expr,
                alias: Ident::new(&hidden),
            };
            shown.push(SelectItem::ExprWithAlias {
                expr: column(&hidden),
                alias: name,
            });
        }
    }
    inner_select.projection.push(SelectItem::ExprWithAlias {
        expr: window("rank", &keys),
        alias: Ident::new(RANK),
    });
    inner_select.projection.push(SelectItem::ExprWithAlias {
        expr: window("row_number", &keys),
        alias: Ident::new(ROW),
    });
    let bound = match &offset {
        Some(o) => Expr::BinaryOp {
            left: Box::new(Expr::Nested(Box::new(o.clone()))),
            op: BinaryOperator::Plus,
            right: Box::new(Expr::Nested(Box::new(count))),
        },
        None => count,
    };
    let mut keep = Expr::BinaryOp {
        left: Box::new(column(RANK)),
        op: BinaryOperator::LtEq,
        right: Box::new(bound),
    };
    if let Some(o) = offset {
        keep = Expr::BinaryOp {
            left: Box::new(keep),
            op: BinaryOperator::And,
            right: Box::new(Expr::BinaryOp {
                left: Box::new(column(ROW)),
                op: BinaryOperator::Gt,
                right: Box::new(Expr::Nested(Box::new(o))),
            }),
        };
    }
    let projection = if wildcard {
        vec![SelectItem::Wildcard(ast::WildcardAdditionalOptions {
            opt_exclude: Some(ast::ExcludeSelectItem::Multiple(vec![
                ast::ObjectName::from(vec![Ident::new(RANK)]),
                ast::ObjectName::from(vec![Ident::new(ROW)]),
            ])),
            ..Default::default()
        })]
    } else {
        shown
    };
    let from = ast::TableWithJoins {
        relation: ast::TableFactor::Derived {
            lateral: false,
            subquery: Box::new(inner),
            alias: Some(ast::TableAlias {
                explicit: true,
                name: ties.clone(),
                columns: vec![],
                at: None,
            }),
            sample: None,
        },
        joins: vec![],
    };
    let by_row = ast::OrderByExpr {
        expr: column(ROW),
        options: ast::OrderByOptions {
            asc: None,
            nulls_first: None,
        },
        with_fill: None,
    };
    let mut outer = crate::statement::dml::row_query(projection, from, Some(keep), &[by_row], None);
    outer.with = q.with.clone();
    Some(outer)
}

/// The column name a select item without an alias is shown under.
fn shown_name(e: &Expr) -> Ident {
    match e {
        Expr::Identifier(i) => i.clone(),
        Expr::CompoundIdentifier(parts) if !parts.is_empty() => parts[parts.len() - 1].clone(),
        _ => Ident::with_quote('`', e.to_string()),
    }
}

/// `name() OVER (ORDER BY keys)`.
fn window(name: &str, keys: &[ast::OrderByExpr]) -> Expr {
    let mut call = basalt_sql::function_call(name, vec![]);
    if let Expr::Function(f) = &mut call {
        f.over = Some(ast::WindowType::WindowSpec(ast::WindowSpec {
            window_name: None,
            partition_by: vec![],
            order_by: keys.to_vec(),
            window_frame: None,
        }));
    }
    call
}
