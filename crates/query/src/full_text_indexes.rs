//! Full-text operators read a column with the analyzer of its inverted index: `c MATCH_ANY
//! 'words'` (the call `match_any(c, 'words')`) over a column with `INDEX .. USING INVERTED
//! PROPERTIES ("parser" = "unicode")` gains the index's property string as a third argument,
//! so the row's text and the query are cut as Doris's index cuts them. A column without an
//! inverted index keeps two arguments (Doris's reading without an index).

use basalt_catalog::IndexKind;
use basalt_functions::full_text::{properties_text, MATCH_FUNCTIONS};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{lit, Expr, LogicalPlan};
use datafusion::optimizer::utils::NamePreserver;
use datafusion::optimizer::AnalyzerRule;

/// Analyzer rule: each full-text call on an indexed column gets its index's analyzer.
#[derive(Debug, Default)]
pub struct FullTextIndexes;

/// An indexed column as the plan names it: the relation's name, the column, the analyzer.
struct IndexedColumn {
    relation: String,
    column: String,
    properties: String,
}

impl AnalyzerRule for FullTextIndexes {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        let indexed = indexed_columns(&plan)?;
        if indexed.is_empty() {
            return Ok(plan);
        }
        plan.transform_up_with_subqueries(|node| {
            let names = NamePreserver::new(&node);
            node.map_expressions(|e| {
                let name = names.save(&e);
                let rewritten = e.transform_up(|e| with_analyzer(e, &indexed))?;
                Ok(if rewritten.transformed {
                    rewritten.update_data(|e| name.restore(e))
                } else {
                    rewritten
                })
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "full_text_indexes"
    }
}

/// The inverted indexes of one column of the plan's tables, by the names the plan reads
/// them under (the table's name, or its alias).
fn indexed_columns(plan: &LogicalPlan) -> Result<Vec<IndexedColumn>> {
    let mut found = Vec::new();
    for (relation, table) in crate::scanned_tables::scanned_tables(plan)? {
        for index in &table.indexes {
            let [column] = index.columns.as_slice() else {
                continue;
            };
            if index.kind != IndexKind::Inverted {
                continue;
            }
            found.push(IndexedColumn {
                relation: relation.clone(),
                column: column.name.clone(),
                properties: properties_text(&index.properties),
            });
        }
    }
    Ok(found)
}

/// `match_*(c, q)` with the analyzer of `c`'s index added, when `c` has one.
fn with_analyzer(e: Expr, indexed: &[IndexedColumn]) -> Result<Transformed<Expr>> {
    let Expr::ScalarFunction(call) = &e else {
        return Ok(Transformed::no(e));
    };
    if call.args.len() != 2 || !MATCH_FUNCTIONS.contains(&call.func.name()) {
        return Ok(Transformed::no(e));
    }
    let Some(column) = column_of(&call.args[0]) else {
        return Ok(Transformed::no(e));
    };
    let mut matching = indexed.iter().filter(|i| {
        i.column.eq_ignore_ascii_case(&column.name)
            && column
                .relation
                .as_ref()
                .is_none_or(|r| r.table().eq_ignore_ascii_case(&i.relation))
    });
    let (Some(index), None) = (matching.next(), matching.next()) else {
        return Ok(Transformed::no(e));
    };
    let mut args = call.args.clone();
    args.push(lit(index.properties.clone()));
    Ok(Transformed::yes(Expr::ScalarFunction(ScalarFunction {
        func: call.func.clone(),
        args,
    })))
}

/// The column an argument reads (through casts).
fn column_of(arg: &Expr) -> Option<&Column> {
    match arg {
        Expr::Column(c) => Some(c),
        Expr::Cast(c) => column_of(&c.expr),
        Expr::TryCast(c) => column_of(&c.expr),
        _ => None,
    }
}
