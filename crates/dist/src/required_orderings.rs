//! Puts back the sorts a fragment's operators need. A network boundary forgets what the rows
//! below it were known to be (a column fixed by a filter in another stage), so an operator
//! whose input the frontend knew to be ordered may find it unordered on a backend (a window's
//! partition columns, a sort-merge join's keys). Each input whose ordering an operator requires
//! and does not get is sorted (within its partitions) — and nothing else changes: DataFusion's
//! own sort enforcement would also remove merges it finds unneeded, changing a fragment's
//! partition count (which its consumers in other stages rely on) and dropping a merge's fetch.

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Result;
use datafusion::physical_expr::{LexOrdering, PhysicalSortExpr};
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use std::sync::Arc;

/// `plan` with a sort under every operator input that lacks the ordering it requires.
pub fn restore_required_orderings(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        let requirements = node.required_input_ordering();
        let mut changed = false;
        let mut children = Vec::with_capacity(requirements.len());
        for (child, requirement) in node.children().into_iter().zip(requirements) {
            let Some(requirement) = requirement else {
                children.push(child.clone());
                continue;
            };
            let requirement = requirement.into_single();
            let properties = child.equivalence_properties();
            if properties.ordering_satisfy_requirement(requirement.clone())? {
                children.push(child.clone());
                continue;
            }
            // Columns fixed to one value need no sorting.
            let sort_exprs: Vec<PhysicalSortExpr> = requirement
                .into_iter()
                .filter(|r| properties.is_expr_constant(&r.expr).is_none())
                .map(PhysicalSortExpr::from)
                .collect();
            let Some(ordering) = LexOrdering::new(sort_exprs) else {
                children.push(child.clone());
                continue;
            };
            let sort = SortExec::new(ordering, child.clone())
                .with_preserve_partitioning(child.output_partitioning().partition_count() > 1);
            children.push(Arc::new(sort) as Arc<dyn ExecutionPlan>);
            changed = true;
        }
        if !changed {
            return Ok(Transformed::no(node));
        }
        Ok(Transformed::yes(node.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )?))
    })
    .map(|t| t.data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::physical_expr::expressions::col;
    use datafusion::physical_plan::empty::EmptyExec;
    use datafusion::physical_plan::sorts::sort_preserving_merge::SortPreservingMergeExec;

    fn ordering(schema: &Schema, name: &str) -> LexOrdering {
        LexOrdering::new(vec![PhysicalSortExpr::new_default(
            col(name, schema).unwrap(),
        )])
        .unwrap()
    }

    #[test]
    fn an_unsorted_input_gets_a_sort_and_a_merge_keeps_its_fetch() {
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int32, true)]));
        let input: Arc<dyn ExecutionPlan> =
            Arc::new(EmptyExec::new(schema.clone()).with_partitions(3));
        let merge: Arc<dyn ExecutionPlan> = Arc::new(
            SortPreservingMergeExec::new(ordering(&schema, "v"), input).with_fetch(Some(5)),
        );
        let fixed = restore_required_orderings(merge).unwrap();
        let merge = fixed
            .downcast_ref::<SortPreservingMergeExec>()
            .expect("the merge stays");
        assert_eq!(merge.fetch(), Some(5));
        let sort = merge
            .input()
            .downcast_ref::<SortExec>()
            .expect("a sort below");
        assert!(sort.preserve_partitioning());
        assert_eq!(fixed.output_partitioning().partition_count(), 1);
        // Sorted already: nothing changes.
        let again = restore_required_orderings(fixed.clone()).unwrap();
        assert!(Arc::ptr_eq(&again, &fixed));
    }
}
