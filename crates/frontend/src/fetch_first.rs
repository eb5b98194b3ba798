//! The SQL standard's row limit, `[OFFSET o ROWS] FETCH {FIRST | NEXT} [n] {ROW | ROWS}
//! {ONLY | WITH TIES}` (MariaDB, PostgreSQL, Oracle, SQL Server), which DataFusion does not
//! plan. `ONLY` is `LIMIT n` (one row when n is left out). `WITH TIES` also keeps the rows tied
//! with the last one on the ORDER BY keys: the SELECT ranks its rows over its ORDER BY (RANK
//! and ROW_NUMBER), and a row is kept when fewer than `o + n` rows sort before it (its rank is
//! at most `o + n`) and it is past the first `o`. `WITH TIES` without an ORDER BY, over DISTINCT
//! or a set operation, and `PERCENT` are left as written (DataFusion refuses them).

use basalt_sql::ast::{
    self, Expr, Ident, LimitClause, Offset, OffsetRows, Query, SelectItem, SetExpr, Statement,
    Value, VisitMut, VisitorMut,
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

/// `q` (with `FETCH .. WITH TIES`) as the ranked query described in the module doc.
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
    // Each unnamed item keeps the name it would have had.
    for item in inner_select.projection.iter_mut() {
        if let SelectItem::UnnamedExpr(e) = item {
            if !matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
                let alias = Ident::with_quote('`', e.to_string());
                *item = SelectItem::ExprWithAlias {
                    expr: e.clone(),
                    alias,
                };
            }
        }
    }
    let window = |name: &str| -> Option<Expr> {
        let order = keys
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        crate::mysql_compat::parsed_query(&format!("SELECT {name}() OVER (ORDER BY {order})"))
            .and_then(|q| match *q.body {
                SetExpr::Select(s) => match s.projection.into_iter().next()? {
                    SelectItem::UnnamedExpr(e) => Some(e),
                    _ => None,
                },
                _ => None,
            })
    };
    inner_select.projection.push(SelectItem::ExprWithAlias {
        expr: window("RANK")?,
        alias: Ident::new(RANK),
    });
    inner_select.projection.push(SelectItem::ExprWithAlias {
        expr: window("ROW_NUMBER")?,
        alias: Ident::new(ROW),
    });
    let bound = match &offset {
        Some(o) => format!("({o}) + ({count})"),
        None => format!("{count}"),
    };
    let past_offset = offset
        .as_ref()
        .map(|o| format!(" AND {ROW} > ({o})"))
        .unwrap_or_default();
    let mut outer = crate::mysql_compat::parsed_query(&format!(
        "SELECT * FROM ({inner}) AS {TIES} WHERE {RANK} <= {bound}{past_offset} ORDER BY {ROW}"
    ))?;
    let SetExpr::Select(outer_select) = outer.body.as_mut() else {
        return None;
    };
    let Some(SelectItem::Wildcard(options)) = outer_select.projection.first_mut() else {
        return None;
    };
    options.opt_exclude = Some(ast::ExcludeSelectItem::Multiple(vec![
        ast::ObjectName::from(vec![Ident::new(RANK)]),
        ast::ObjectName::from(vec![Ident::new(ROW)]),
    ]));
    outer.with = q.with.clone();
    Some(outer)
}
