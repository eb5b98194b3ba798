//! ORDER BY keys of one SELECT as a window's ORDER BY can take them: a position (`ORDER BY 2`)
//! or an alias stands for its select item's expression, and an alias inside a larger key
//! (`ORDER BY s + 0`) for its item's. INSERT IGNORE numbers its source's rows by them, and
//! `FETCH .. WITH TIES` ranks them.

use basalt_sql::ast::{self, Expr, SelectItem, Value};

/// The SELECT of `source` and its ORDER BY keys, when it is one SELECT with an ORDER BY.
pub(crate) fn ordered_select(source: &ast::Query) -> Option<(&ast::Select, &[ast::OrderByExpr])> {
    let Some(ast::OrderByKind::Expressions(order)) = source.order_by.as_ref().map(|o| &o.kind)
    else {
        return None;
    };
    match source.body.as_ref() {
        ast::SetExpr::Select(select) => Some((select, order)),
        _ => None,
    }
}

/// The select-list position (from 0) an ORDER BY key names: `ORDER BY 2` (possibly past the
/// list), or an item's alias; `None` for any other key.
pub(crate) fn item_position(select: &ast::Select, key: &Expr) -> Option<usize> {
    match key {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse::<usize>().ok()?.checked_sub(1),
            _ => None,
        },
        Expr::Identifier(name) => select.projection.iter().position(|item| {
            matches!(item, SelectItem::ExprWithAlias { alias, .. }
                if alias.value.eq_ignore_ascii_case(&name.value))
        }),
        _ => None,
    }
}

/// `order` (the keys of `select`) over the SELECT's input, for a window; `None` when a key is
/// a window itself or names a position past a wildcard.
pub(crate) fn window_keys(
    select: &ast::Select,
    order: &[ast::OrderByExpr],
) -> Option<Vec<ast::OrderByExpr>> {
    // A window inside the numbering's ORDER BY is not computed: such keys keep the plain
    // numbering.
    let has_window = |e: &Expr| {
        let mut window = false;
        let _ = ast::visit_expressions(e, |inner| {
            if matches!(inner, Expr::Function(f) if f.over.is_some()) {
                window = true;
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        window
    };
    // An alias inside a larger key (`ORDER BY s + 0`) stands for its item's expression.
    let alias_expr = |name: &str| {
        select.projection.iter().find_map(|item| match item {
            SelectItem::ExprWithAlias { expr, alias } if alias.value.eq_ignore_ascii_case(name) => {
                Some(expr.clone())
            }
            _ => None,
        })
    };
    let substituted = |mut e: Expr| {
        let _ = ast::visit_expressions_mut(&mut e, |inner| {
            if let Expr::Identifier(name) = inner {
                if let Some(expr) = alias_expr(&name.value) {
                    *inner = Expr::Nested(Box::new(expr));
                }
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        e
    };
    let item_expr = |item: &SelectItem| match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => Some(e.clone()),
        _ => None,
    };
    order
        .iter()
        .map(|key| {
            // A position or an alias stands for its item's expression, whose names are
            // columns; a key as written may name an alias inside (`ORDER BY s + 0`).
            let (expr, from_item) = match item_position(select, &key.expr) {
                Some(position) => {
                    let through = select.projection.get(..=position)?;
                    if through.iter().any(|item| item_expr(item).is_none()) {
                        return None;
                    }
                    (item_expr(&through[position])?, true)
                }
                None => (key.expr.clone(), false),
            };
            let expr = if from_item { expr } else { substituted(expr) };
            if has_window(&expr) {
                return None;
            }
            Some(ast::OrderByExpr {
                expr,
                options: key.options,
                with_fill: None,
            })
        })
        .collect()
}
