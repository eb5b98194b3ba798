//! MySQL's named windows (`WINDOW w AS (..)`), resolved on the parsed statement before
//! planning. Every `OVER w` becomes the window `w` defines, and a window that refines another
//! (`OVER (w ORDER BY x)`, `OVER (w ROWS ..)`, `WINDOW w2 AS (w1 ORDER BY x)`) gets the
//! other's PARTITION BY and ORDER BY. DataFusion resolves only a bare `OVER w` in the select
//! list: it dropped the name inside parentheses, so `OVER (w ROWS ..)` lost w's PARTITION BY
//! (a wrong answer), and refused `OVER w` in ORDER BY and windows defined from other windows.
//!
//! The names belong to their query block (a subquery neither sees nor hides the outer
//! block's windows), match case-insensitively, and every definition is checked whether a
//! call uses it or not, with MySQL's refusals: an unknown name (3579), a cycle (3580), a
//! refining window with PARTITION BY (3581), refining a window with a frame (3582), two
//! ORDER BYs (3583), and one name defined twice (3591).

use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    visit_expressions_mut, Expr, Ident, NamedWindowDefinition, NamedWindowExpr, Query, Select,
    SetExpr, Statement, VisitMut, VisitorMut, WindowSpec, WindowType,
};
use std::ops::ControlFlow;

/// Resolves the named windows of every query block of `stmt`.
pub fn resolve(stmt: &mut Statement) -> Result<()> {
    match stmt.visit(&mut Blocks) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

struct Blocks;

impl VisitorMut for Blocks {
    type Break = BasaltError;

    // Post-order: a subquery's windows are resolved before its enclosing block looks at its
    // own calls, so no inner call is left to be matched against outer names.
    fn post_visit_select(&mut self, select: &mut Select) -> ControlFlow<BasaltError> {
        let definitions = select.named_window.clone();
        resolve_in(&definitions, select)
    }

    // The query's ORDER BY sees the windows of its SELECT (`ORDER BY ROW_NUMBER() OVER w`).
    fn post_visit_query(&mut self, query: &mut Query) -> ControlFlow<BasaltError> {
        let Some(order_by) = &mut query.order_by else {
            return ControlFlow::Continue(());
        };
        let definitions = match query.body.as_ref() {
            SetExpr::Select(select) => select.named_window.as_slice(),
            _ => &[],
        };
        resolve_in(definitions, order_by)
    }
}

/// Resolves every window reference of the calls in `node` against the block's `definitions`.
fn resolve_in<N: VisitMut>(
    definitions: &[NamedWindowDefinition],
    node: &mut N,
) -> ControlFlow<BasaltError> {
    let outcome = resolved_definitions(definitions).and_then(|windows| {
        let mut refs = References::new(&windows);
        let _ = visit_expressions_mut(node, |e| refs.replace(e));
        refs.outcome()
    });
    match outcome {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => ControlFlow::Break(e),
    }
}

/// A block's windows, each with what it inherits filled in.
type Windows = Vec<(Ident, WindowSpec)>;

fn resolved_definitions(definitions: &[NamedWindowDefinition]) -> Result<Windows> {
    for (i, d) in definitions.iter().enumerate() {
        if definitions[..i].iter().any(|e| same_name(&e.0, &d.0)) {
            return Err(BasaltError::DuplicateWindow(d.0.value.clone()));
        }
    }
    let mut resolved: Vec<Option<WindowSpec>> = vec![None; definitions.len()];
    for i in 0..definitions.len() {
        resolve_definition(definitions, i, &mut resolved, &mut Vec::new())?;
    }
    Ok(definitions
        .iter()
        .zip(resolved)
        .filter_map(|(d, spec)| spec.map(|spec| (d.0.clone(), spec)))
        .collect())
}

/// Resolves definition `i` (and, first, the window it refines), detecting cycles.
fn resolve_definition(
    definitions: &[NamedWindowDefinition],
    i: usize,
    resolved: &mut Vec<Option<WindowSpec>>,
    visiting: &mut Vec<usize>,
) -> Result<WindowSpec> {
    if let Some(spec) = &resolved[i] {
        return Ok(spec.clone());
    }
    if visiting.contains(&i) {
        return Err(BasaltError::WindowCycle);
    }
    let own = match &definitions[i].1 {
        NamedWindowExpr::WindowSpec(spec) => spec.clone(),
        // `WINDOW w2 AS w1`: w1 itself.
        NamedWindowExpr::NamedWindow(base) => WindowSpec {
            window_name: Some(base.clone()),
            partition_by: Vec::new(),
            order_by: Vec::new(),
            window_frame: None,
        },
    };
    let spec = match own.window_name.clone() {
        None => own,
        Some(base_name) => {
            let base = definitions
                .iter()
                .position(|d| same_name(&d.0, &base_name))
                .ok_or_else(|| BasaltError::UndefinedWindow(base_name.value.clone()))?;
            visiting.push(i);
            let base_spec = resolve_definition(definitions, base, resolved, visiting)?;
            visiting.pop();
            refine(&definitions[i].0.value, &base_name, &base_spec, own)?
        }
    };
    resolved[i] = Some(spec.clone());
    Ok(spec)
}

/// `window` (named, or `<unnamed window>` in an OVER) refining `base` as MySQL allows: it
/// adds an ORDER BY only where the base has none, and a frame; never a PARTITION BY.
fn refine(
    window: &str,
    base_name: &Ident,
    base: &WindowSpec,
    own: WindowSpec,
) -> Result<WindowSpec> {
    if !own.partition_by.is_empty() {
        return Err(BasaltError::WindowChildPartitioning);
    }
    if base.window_frame.is_some() {
        return Err(BasaltError::WindowInheritsFrame(base_name.value.clone()));
    }
    if !base.order_by.is_empty() && !own.order_by.is_empty() {
        return Err(BasaltError::WindowRedefinesOrder {
            window: window.to_string(),
            base: base_name.value.clone(),
        });
    }
    Ok(WindowSpec {
        window_name: None,
        partition_by: base.partition_by.clone(),
        order_by: if own.order_by.is_empty() {
            base.order_by.clone()
        } else {
            own.order_by
        },
        window_frame: own.window_frame,
    })
}

fn same_name(a: &Ident, b: &Ident) -> bool {
    a.value.eq_ignore_ascii_case(&b.value)
}

/// Replaces the window references of one block's calls, keeping the first refusal.
struct References<'a> {
    windows: &'a Windows,
    refused: Option<BasaltError>,
}

impl<'a> References<'a> {
    fn new(windows: &'a Windows) -> Self {
        References {
            windows,
            refused: None,
        }
    }

    fn replace(&mut self, e: &mut Expr) -> ControlFlow<()> {
        let Expr::Function(f) = e else {
            return ControlFlow::Continue(());
        };
        let resolved = match &f.over {
            Some(WindowType::NamedWindow(name)) => self.lookup(name).cloned(),
            Some(WindowType::WindowSpec(spec)) => match &spec.window_name {
                Some(name) => self
                    .lookup(name)
                    .and_then(|base| refine("<unnamed window>", name, base, spec.clone())),
                None => return ControlFlow::Continue(()),
            },
            None => return ControlFlow::Continue(()),
        };
        match resolved {
            Ok(spec) => {
                f.over = Some(WindowType::WindowSpec(spec));
                ControlFlow::Continue(())
            }
            Err(e) => {
                self.refused = Some(e);
                ControlFlow::Break(())
            }
        }
    }

    fn lookup(&self, name: &Ident) -> Result<&WindowSpec> {
        self.windows
            .iter()
            .find(|(n, _)| same_name(n, name))
            .map(|(_, spec)| spec)
            .ok_or_else(|| BasaltError::UndefinedWindow(name.value.clone()))
    }

    fn outcome(self) -> Result<()> {
        match self.refused {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(sql: &str) -> Result<String> {
        let mut stmt = basalt_sql::parse_one(sql).expect("parses");
        let basalt_sql::Statement::Standard(inner) = &mut stmt else {
            panic!("not a query: {sql}");
        };
        resolve(inner)?;
        Ok(inner.to_string())
    }

    #[test]
    fn a_parenthesised_reference_keeps_the_partition() {
        let sql = resolved(
            "SELECT count(*) OVER (w ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM t \
             WINDOW w AS (PARTITION BY c ORDER BY pk)",
        )
        .unwrap();
        assert!(
            sql.contains(
                "OVER (PARTITION BY c ORDER BY pk ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)"
            ),
            "{sql}"
        );
    }

    #[test]
    fn windows_refine_windows_and_order_by_sees_them() {
        let sql = resolved(
            "SELECT a FROM t WINDOW w1 AS (PARTITION BY c), W2 AS (w1 ORDER BY pk) \
             ORDER BY row_number() OVER w2",
        )
        .unwrap();
        assert!(
            sql.contains("ORDER BY row_number() OVER (PARTITION BY c ORDER BY pk)"),
            "{sql}"
        );
    }

    #[test]
    fn refusals_have_mysql_codes() {
        let code = |sql: &str| resolved(sql).unwrap_err().mysql_code();
        assert_eq!(code("SELECT row_number() OVER w FROM t"), 3579);
        assert_eq!(code("SELECT 1 FROM t WINDOW a AS (b), b AS (a)"), 3580);
        assert_eq!(code("SELECT 1 FROM t WINDOW w AS (), W AS ()"), 3591);
        assert_eq!(
            code("SELECT 1 FROM t WINDOW a AS (), b AS (a PARTITION BY x)"),
            3581
        );
        assert_eq!(
            code("SELECT 1 FROM t WINDOW a AS (ROWS UNBOUNDED PRECEDING), b AS (a)"),
            3582
        );
        assert_eq!(
            code("SELECT sum(x) OVER (a ORDER BY y) FROM t WINDOW a AS (ORDER BY x)"),
            3583
        );
        // A subquery does not see the outer block's windows.
        assert_eq!(
            code("SELECT (SELECT max(x) OVER w FROM u) FROM t WINDOW w AS ()"),
            3579
        );
    }
}
