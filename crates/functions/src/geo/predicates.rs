//! The two-shape tests ST_Contains, ST_Intersects, ST_Disjoint and ST_Touches as SQL
//! functions returning BOOLEAN; a NULL or invalid shape gives NULL (see `relate` for the
//! meaning of each test).

use super::relate;
use super::shape::Shape;
use super::udf::{function, Arg, Args};
use datafusion::arrow::array::{ArrayRef, BooleanBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::ScalarUDF;
use std::sync::Arc;

type Test = fn(&Shape, &Shape) -> Option<bool>;

pub(crate) fn functions() -> Vec<ScalarUDF> {
    let f = |name, body| function(name, &[], &[Arg::Geo, Arg::Geo], DataType::Boolean, body);
    vec![
        f("st_contains", |a| pairs(a, relate::contains)),
        f("st_intersects", |a| pairs(a, relate::intersects)),
        f("st_disjoint", |a| {
            pairs(a, |x, y| relate::intersects(x, y).map(|b| !b))
        }),
        f("st_touches", |a| pairs(a, relate::touches)),
    ]
}

fn pairs(a: &Args, test: Test) -> Result<ArrayRef> {
    let (l, r) = (a.geo(0)?, a.geo(1)?);
    let mut out = BooleanBuilder::with_capacity(a.rows);
    for i in 0..a.rows {
        let v = match (l.get(i), r.get(i)) {
            (Some(x), Some(y)) => test(x, y),
            _ => None,
        };
        out.append_option(v);
    }
    Ok(Arc::new(out.finish()))
}
