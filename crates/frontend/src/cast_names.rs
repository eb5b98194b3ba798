//! Calls that differ only by their casts, told apart. DataFusion names an expression without
//! its casts, so `SELECT SUM(x), SUM(CAST(x AS DECIMAL(5,1)))` would plan an aggregate with two
//! outputs named `sum(x)` and fail. Where two calls of a statement read alike once casts are
//! left out, their casts are wrapped in `basalt_cast_named(cast, 'type')`, which shows the
//! type in the name and which the optimizer removes again.

use crate::mysql_compat::{call, string};
use basalt_functions::NAMED_CAST;
use basalt_sql::ast::{visit_expressions, visit_expressions_mut, Expr, Statement};
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

/// Wraps the casts of calls in `stmt` that another call of it matches but for casts.
pub(crate) fn rewrite(stmt: &mut Statement) {
    let mut spellings: HashMap<String, HashSet<String>> = HashMap::new();
    let _ = visit_expressions(stmt, |e| {
        if matches!(e, Expr::Function(_)) && contains_cast(e) {
            spellings.entry(without_casts(e)).or_default();
        }
        ControlFlow::<()>::Continue(())
    });
    if spellings.is_empty() {
        return;
    }
    let _ = visit_expressions(stmt, |e| {
        if matches!(e, Expr::Function(_)) {
            if let Some(forms) = spellings.get_mut(&without_casts(e)) {
                forms.insert(e.to_string());
            }
        }
        ControlFlow::<()>::Continue(())
    });
    let colliding: HashSet<String> = spellings
        .into_iter()
        .filter(|(_, forms)| forms.len() > 1)
        .map(|(key, _)| key)
        .collect();
    if colliding.is_empty() {
        return;
    }
    let _ = visit_expressions_mut(stmt, |e| {
        if matches!(e, Expr::Function(_)) && colliding.contains(&without_casts(e)) {
            name_casts(e);
        }
        ControlFlow::<()>::Continue(())
    });
}

fn contains_cast(e: &Expr) -> bool {
    visit_expressions(e, |e| match e {
        Expr::Cast { .. } => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

/// The expression's text with casts (and this module's wrappers) left out, as DataFusion
/// would name it.
fn without_casts(e: &Expr) -> String {
    let mut plain = e.clone();
    let _ = visit_expressions_mut(&mut plain, |e| {
        if let Expr::Cast { expr, .. } = e {
            *e = (**expr).clone();
        } else if let Some(inner) = named_cast_value(e) {
            *e = inner;
        }
        ControlFlow::<()>::Continue(())
    });
    plain.to_string()
}

/// The value a `basalt_cast_named` call wraps.
fn named_cast_value(e: &Expr) -> Option<Expr> {
    use basalt_sql::ast::{FunctionArg, FunctionArgExpr, FunctionArguments};
    let Expr::Function(f) = e else { return None };
    if !f.name.to_string().eq_ignore_ascii_case(NAMED_CAST) {
        return None;
    }
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    match list.args.first() {
        Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(value))) => Some(value.clone()),
        _ => None,
    }
}

/// Wraps every cast inside the call `e` with its type as the label (once: wrappers a call
/// inside it got already are taken off first).
fn name_casts(e: &mut Expr) {
    let _ = visit_expressions_mut(e, |e| {
        if let Some(inner) = named_cast_value(e) {
            *e = inner;
        }
        ControlFlow::<()>::Continue(())
    });
    let _ = visit_expressions_mut(e, |e| {
        if let Expr::Cast { data_type, .. } = e {
            let label = string(&data_type.to_string());
            *e = call(NAMED_CAST, vec![e.clone(), label]);
        }
        ControlFlow::<()>::Continue(())
    });
}
