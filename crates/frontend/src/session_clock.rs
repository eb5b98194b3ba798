//! MySQL's `timestamp` session variable: `SET timestamp = <unix seconds>` fixes the clock the
//! session's statements read (NOW(), CURRENT_TIMESTAMP, CURDATE(), UTC_TIMESTAMP(),
//! UNIX_TIMESTAMP(), column defaults) until `SET timestamp = DEFAULT` (or 0) gives the real
//! time back. `@@timestamp` reads the clock as seconds with microseconds.
//!
//! The clock a statement reads is DataFusion's query start time, which planning folds into
//! the plan: on a cluster the backends get the fixed time with the plan.

use crate::variables::{SessionVariables, VarValue};
use chrono::{DateTime, Utc};
use datafusion::common::ScalarValue;
use datafusion::execution::SessionState;

/// The variable's name.
pub(crate) const NAME: &str = "timestamp";

/// The type `@@timestamp` reads as: seconds with six decimals.
pub(crate) const PRECISION: u8 = 17;
pub(crate) const SCALE: i8 = 6;

/// The time the session's clock is fixed at; `None` when it runs (unset, 0 or not a number).
pub(crate) fn fixed(vars: &SessionVariables) -> Option<DateTime<Utc>> {
    let seconds: f64 = match vars.get(NAME).ok()? {
        VarValue::Int(i) => i as f64,
        VarValue::Double(d) => d,
        VarValue::Decimal(s) | VarValue::Str(s) => s.trim().parse().ok()?,
    };
    if !seconds.is_finite() || seconds <= 0.0 {
        return None;
    }
    let micros = (seconds * 1_000_000.0).round() as i64;
    DateTime::from_timestamp_micros(micros)
}

/// Sets the statement's start time (what NOW() reads) to the session's fixed clock, if any.
pub(crate) fn fix_start(vars: &SessionVariables, state: &mut SessionState) {
    if let Some(at) = fixed(vars) {
        state.execution_props_mut().query_execution_start_time = Some(at);
    }
}

/// `@@timestamp`: the fixed clock, else the time now, in seconds.
pub(crate) fn seconds(vars: &SessionVariables) -> ScalarValue {
    let at = fixed(vars).unwrap_or_else(Utc::now);
    let micros = at.timestamp_micros();
    ScalarValue::Decimal128(Some(i128::from(micros)), PRECISION, SCALE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn set_fixes_and_zero_releases() {
        let mut vars = SessionVariables::new(&BTreeMap::new());
        assert_eq!(fixed(&vars), None);
        vars.set_session(NAME, "1000000000.5").unwrap();
        assert_eq!(
            fixed(&vars).map(|t| t.timestamp_micros()),
            Some(1_000_000_000_500_000)
        );
        assert_eq!(
            seconds(&vars),
            ScalarValue::Decimal128(Some(1_000_000_000_500_000), PRECISION, SCALE)
        );
        vars.set_session(NAME, "0").unwrap();
        assert_eq!(fixed(&vars), None);
    }
}
