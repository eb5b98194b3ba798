//! Doris's `ADMIN SET FRONTEND CONFIG` and `ADMIN SHOW FRONTEND CONFIG` for the frontend
//! settings whose behaviour Basalt has fixed: Doris's own scripts set them before they
//! start (`enable_date_conversion`, `enable_decimal_conversion`). Setting one to the value
//! Basalt always runs with is accepted; another value is refused with the reason, never
//! silently ignored; an unknown key is an error as in Doris.

use crate::output::Output;
use crate::show::{like, Col, ResultBuilder};
use basalt_common::{BasaltError, Result};

/// A Doris frontend setting and the value Basalt always behaves as.
struct FixedSetting {
    key: &'static str,
    value: &'static str,
    kind: &'static str,
    comment: &'static str,
}

const SETTINGS: &[FixedSetting] = &[
    FixedSetting {
        key: "enable_date_conversion",
        value: "true",
        kind: "boolean",
        comment: "DATE and DATETIME are always Doris's DATEV2 and DATETIMEV2 in Basalt",
    },
    FixedSetting {
        key: "enable_decimal_conversion",
        value: "true",
        kind: "boolean",
        comment: "DECIMAL is always Doris's DECIMALV3 (precision up to 76) in Basalt",
    },
];

fn normalized(value: &str) -> String {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "on" => "true".into(),
        "0" | "false" | "off" => "false".into(),
        other => other.into(),
    }
}

/// `ADMIN SET FRONTEND CONFIG (..)`: every setting must name a known key with the value
/// Basalt runs with; nothing changes either way.
pub(crate) fn set(settings: &[(String, String)]) -> Result<Output> {
    for (key, value) in settings {
        let setting = SETTINGS
            .iter()
            .find(|s| s.key.eq_ignore_ascii_case(key.trim()))
            .ok_or_else(|| {
                BasaltError::InvalidData(format!("Config '{}' does not exist", key.trim()))
            })?;
        if normalized(value) != setting.value {
            return Err(BasaltError::NotSupported(format!(
                "{} = {value}: Basalt always runs with {} = {} ({})",
                setting.key, setting.key, setting.value, setting.comment
            )));
        }
    }
    Ok(Output::ok())
}

/// `ADMIN SHOW FRONTEND CONFIG [LIKE 'p']`, with Doris's columns.
pub(crate) fn show(pattern: Option<&str>) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::str("Key"),
        Col::str("Value"),
        Col::str("Type"),
        Col::str("IsMutable"),
        Col::str("MasterOnly"),
        Col::str("Comment"),
    ]);
    for s in SETTINGS
        .iter()
        .filter(|s| pattern.is_none_or(|p| like(p, s.key)))
    {
        b.row(vec![
            s.key.into(),
            s.value.into(),
            s.kind.into(),
            "false".into(),
            "false".into(),
            s.comment.into(),
        ]);
    }
    b.into_output()
}
