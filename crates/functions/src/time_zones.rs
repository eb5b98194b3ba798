//! MySQL's `CONVERT_TZ(dt, from_tz, to_tz)`: `dt` read as a wall-clock time in `from_tz`, shown
//! as the wall-clock time in `to_tz`. A zone is an offset (`'+08:00'`, `'-07:00'`), a name of
//! the IANA database in any letter case (`'America/Los_Angeles'`), or `'UTC'` / `'SYSTEM'` (the
//! server's clock is UTC). An unknown zone, or a wall-clock time that does not exist in
//! `from_tz` (skipped by a daylight-saving change), is NULL, as in MySQL; an ambiguous one
//! takes the earlier instant.

use crate::date_arith::{datetimes, in_range, temporal_input};
use chrono::{FixedOffset, NaiveDateTime, Offset, TimeZone};
use chrono_tz::Tz;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, TimestampMicrosecondArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// `convert_tz`.
pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(ConvertTz {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

/// True when `spec` names a zone CONVERT_TZ and `SET time_zone` accept.
pub fn is_known_zone(spec: &str) -> bool {
    zone(spec).is_some()
}

/// True for the zones that are UTC on this server (`SYSTEM`: the server's clock is UTC).
pub fn is_utc(spec: &str) -> bool {
    matches!(zone(spec), Some(Zone::Fixed(offset)) if offset.local_minus_utc() == 0)
}

enum Zone {
    Fixed(FixedOffset),
    Named(Tz),
}

/// `'+08:00'`, `'-7:00'`, `'UTC'`, `'SYSTEM'` or an IANA name (any letter case).
fn zone(spec: &str) -> Option<Zone> {
    let spec = spec.trim();
    if spec.eq_ignore_ascii_case("system") || spec.eq_ignore_ascii_case("utc") {
        return Some(Zone::Fixed(FixedOffset::east_opt(0)?));
    }
    if let Some(sign) = spec.chars().next().filter(|c| *c == '+' || *c == '-') {
        let (hours, minutes) = spec[1..].split_once(':')?;
        let (hours, minutes): (i32, i32) = (hours.parse().ok()?, minutes.parse().ok()?);
        // MySQL accepts offsets from -12:59 to +13:00 (14:00 in 8.0).
        if !(0..=14).contains(&hours) || !(0..60).contains(&minutes) {
            return None;
        }
        let seconds = (hours * 60 + minutes) * 60;
        let seconds = if sign == '-' { -seconds } else { seconds };
        return Some(Zone::Fixed(FixedOffset::east_opt(seconds)?));
    }
    match spec.parse::<Tz>() {
        Ok(tz) => Some(Zone::Named(tz)),
        Err(_) => chrono_tz::TZ_VARIANTS
            .iter()
            .find(|tz| tz.name().eq_ignore_ascii_case(spec))
            .map(|tz| Zone::Named(*tz)),
    }
}

/// The wall-clock time `local` in `from`, as the wall-clock time in `to`.
fn convert(local: NaiveDateTime, from: &Zone, to: &Zone) -> Option<NaiveDateTime> {
    let utc = match from {
        Zone::Fixed(offset) => local - offset.fix(),
        Zone::Named(tz) => tz.from_local_datetime(&local).earliest()?.naive_utc(),
    };
    let shown = match to {
        Zone::Fixed(offset) => utc + offset.fix(),
        Zone::Named(tz) => tz.from_utc_datetime(&utc).naive_local(),
    };
    in_range(shown)
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct ConvertTz {
    signature: Signature,
}

impl ScalarUDFImpl for ConvertTz {
    fn name(&self) -> &str {
        "convert_tz"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        match args {
            [d, _, _] => Ok(vec![temporal_input(d), DataType::Utf8, DataType::Utf8]),
            _ => exec_err!("convert_tz takes a date-time and two time zones"),
        }
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Timestamp(TimeUnit::Microsecond, None))
    }

    /// The date-time's digits (see [`crate::temporal_digits`]).
    fn return_field_from_args(
        &self,
        args: datafusion::logical_expr::ReturnFieldArgs,
    ) -> Result<datafusion::arrow::datatypes::FieldRef> {
        let digits =
            crate::temporal_digits::precision_of(args.arg_fields, args.scalar_arguments, 0);
        Ok(Arc::new(crate::temporal_digits::marked(
            datafusion::arrow::datatypes::Field::new(self.name(), self.return_type(&[])?, true),
            digits,
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let times = datetimes(&arrays[0])?;
        let zones = |a: &ArrayRef| -> Result<Vec<Option<Zone>>> {
            let strings = cast(a, &DataType::Utf8)?;
            Ok(strings
                .as_string::<i32>()
                .iter()
                .map(|s| s.and_then(zone))
                .collect())
        };
        let (from, to) = (zones(&arrays[1])?, zones(&arrays[2])?);
        let out: TimestampMicrosecondArray = times
            .into_iter()
            .zip(from.iter().zip(&to))
            .map(|(t, (f, z))| {
                convert(t?, f.as_ref()?, z.as_ref()?).map(|d| d.and_utc().timestamp_micros())
            })
            .collect();
        let out: ArrayRef = Arc::new(out);
        debug_assert_eq!(out.len(), arrays[0].len());
        crate::util::output(out, scalar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f").expect("datetime")
    }

    fn c(t: &str, from: &str, to: &str) -> Option<String> {
        convert(at(t), &zone(from)?, &zone(to)?).map(|d| d.to_string())
    }

    #[test]
    fn converts_between_offsets_and_named_zones() {
        // Winter (PST, -8) and summer (PDT, -7) in Los Angeles.
        assert_eq!(
            c("2020-02-01 12:00:00", "America/Los_Angeles", "+08:00").unwrap(),
            "2020-02-02 04:00:00"
        );
        assert_eq!(
            c("2020-05-01 12:00:00", "America/Los_Angeles", "+08:00").unwrap(),
            "2020-05-02 03:00:00"
        );
        assert_eq!(
            c("2020-05-05 00:00:00", "UTC", "america/los_angeles").unwrap(),
            "2020-05-04 17:00:00"
        );
        assert_eq!(
            c(
                "9999-12-31 23:59:59.999999",
                "Pacific/Galapagos",
                "Pacific/GalapaGoS"
            )
            .unwrap(),
            "9999-12-31 23:59:59.999999"
        );
        // A skipped wall-clock time, an unknown zone, a bad offset: NULL.
        assert_eq!(c("2020-03-08 02:30:00", "America/Los_Angeles", "UTC"), None);
        assert_eq!(c("2020-01-01 00:00:00", "Mars/Olympus", "UTC"), None);
        assert_eq!(c("2020-01-01 00:00:00", "+25:00", "UTC"), None);
    }
}
