//! The constraint (`ON`, `USING`, `NATURAL`) of a parsed join operator, for the rewrites that
//! read or change it.

use basalt_sql::ast::{JoinConstraint, JoinOperator};

/// The one list of join operators that carry a constraint, for both borrows.
macro_rules! constraint_of {
    ($operator:expr) => {
        match $operator {
            JoinOperator::Join(c)
            | JoinOperator::Inner(c)
            | JoinOperator::Left(c)
            | JoinOperator::LeftOuter(c)
            | JoinOperator::Right(c)
            | JoinOperator::RightOuter(c)
            | JoinOperator::FullOuter(c)
            | JoinOperator::CrossJoin(c)
            | JoinOperator::StraightJoin(c) => Some(c),
            _ => None,
        }
    };
}

/// The constraint of a join operator, if it has one.
pub(crate) fn join_constraint(operator: &JoinOperator) -> Option<&JoinConstraint> {
    constraint_of!(operator)
}

/// The constraint of a join operator, to change, if it has one.
pub(crate) fn join_constraint_mut(operator: &mut JoinOperator) -> Option<&mut JoinConstraint> {
    constraint_of!(operator)
}
