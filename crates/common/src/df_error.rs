//! Translation between DataFusion errors and Basalt's error type, keeping MySQL codes: Basalt
//! errors raised inside DataFusion come back unchanged; DataFusion's own unknown table/column
//! and parse errors become 1146/1054/1064.

use crate::BasaltError;
use datafusion_common::DataFusionError;
use datafusion_common::SchemaError;

/// Wraps a Basalt error for returning through DataFusion APIs.
pub fn to_df(e: BasaltError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// Converts a DataFusion error into a Basalt error with the right MySQL code.
pub fn from_df(e: DataFusionError) -> BasaltError {
    match translated(e) {
        // A scalar subquery's row check, raised on a backend or shared by a join's partitions:
        // its code 1242 wherever the text arrives.
        BasaltError::Execution(message)
            if message.contains(MANY_ROWS)
                || message.ends_with(&BasaltError::SubqueryReturnsManyRows.to_string()) =>
        {
            BasaltError::SubqueryReturnsManyRows
        }
        other => other,
    }
}

/// DataFusion's text for a scalar subquery of more than one row.
const MANY_ROWS: &str = "Scalar subquery returned more than one row";

fn translated(e: DataFusionError) -> BasaltError {
    match e {
        DataFusionError::External(inner) => match inner.downcast::<BasaltError>() {
            Ok(b) => *b,
            Err(other) => match other.downcast::<DataFusionError>() {
                Ok(df) => from_df(*df),
                Err(other) => remote_error(other.to_string()),
            },
        },
        DataFusionError::Context(_, inner) | DataFusionError::Diagnostic(_, inner) => {
            from_df(*inner)
        }
        DataFusionError::Collection(mut errors) if !errors.is_empty() => from_df(errors.remove(0)),
        DataFusionError::Shared(inner) => match std::sync::Arc::try_unwrap(inner) {
            Ok(df) => from_df(df),
            // Still shared (a join's build side fails every partition that waits on it).
            Err(arc) => match arc.find_root() {
                DataFusionError::ResourcesExhausted(msg) => mem_limit_exceeded(msg),
                // A Basalt error that cannot be moved out keeps its code: through its text
                // for the kinds read from text, else as relayed.
                DataFusionError::External(inner) => match remote_error(inner.to_string()) {
                    BasaltError::Execution(message) => match inner.downcast_ref::<BasaltError>() {
                        Some(b) => BasaltError::Relayed {
                            code: b.mysql_code(),
                            message,
                        },
                        None => BasaltError::Execution(message),
                    },
                    typed => typed,
                },
                _ => BasaltError::Execution(arc.to_string()),
            },
        },
        DataFusionError::SchemaError(se, _) => match *se {
            SchemaError::FieldNotFound { field, .. } => BasaltError::UnknownColumn {
                column: field.name().to_string(),
                context: "field list".to_string(),
            },
            // `ORDER BY b` beside `t1.b` and `t2.b`: MySQL's 1052.
            SchemaError::AmbiguousReference { field } if field.relation.is_none() => {
                BasaltError::AmbiguousColumn {
                    column: field.name,
                    context: "field list".to_string(),
                }
            }
            // A derived table's columns `a` and `b AS a`: MySQL's 1060.
            SchemaError::AmbiguousReference { field } => BasaltError::DuplicateColumn(field.name),
            // `FROM t, t`: the table's columns twice under one name (MySQL's 1066).
            SchemaError::DuplicateQualifiedField { qualifier, .. } => {
                BasaltError::NotUniqueTable(qualifier.table().to_string())
            }
            SchemaError::DuplicateUnqualifiedField { name } => BasaltError::DuplicateColumn(name),
        },
        DataFusionError::Plan(msg) => plan_error(msg),
        DataFusionError::ArrowError(ae, _) => arrow_error(*ae),
        DataFusionError::ResourcesExhausted(msg) => mem_limit_exceeded(&msg),
        // DataFusion's texts often end in "not supported" already; said once.
        DataFusionError::NotImplemented(msg) => BasaltError::NotSupported(
            msg.strip_suffix(" are not supported")
                .or_else(|| msg.strip_suffix(" is not supported"))
                .unwrap_or(&msg)
                .to_string(),
        ),
        other => BasaltError::Execution(strip_prefix(other.to_string())),
    }
}

/// An error raised where only its text could travel (a plan fragment on a cluster's backend):
/// MySQL's out-of-range message ("BIGINT value is out of range in '...'") keeps its code 1690,
/// an incorrect stored value ("Incorrect IPV4 value: '...'") its code 1366 (1292 for a date),
/// a strict write's out-of-range or truncated value its 1264 or 1265; anything else is a
/// general execution error with the same text.
fn remote_error(message: String) -> BasaltError {
    if message.starts_with("Incorrect date value: '")
        || message.starts_with("Incorrect datetime value: '")
    {
        return BasaltError::IncorrectDateValue(message);
    }
    if message.starts_with("Incorrect ") && message.contains(" value: '") {
        return BasaltError::InvalidData(message);
    }
    let stored_code = if message.starts_with("Out of range value for column '") {
        Some(1264)
    } else if message.starts_with("Data truncated for column '") {
        Some(1265)
    } else {
        None
    };
    if let Some(code) = stored_code {
        return BasaltError::StoredValue { code, message };
    }
    let out_of_range = message
        .split_once(" value is out of range in ")
        .is_some_and(|(ty, _)| {
            !ty.is_empty() && ty.bytes().all(|b| b.is_ascii_uppercase() || b == b' ')
        });
    if out_of_range {
        BasaltError::NumericOverflow(message)
    } else {
        BasaltError::Execution(message)
    }
}

/// An Arrow error: arithmetic overflow and a DECIMAL value past its precision (a cast or a
/// kernel's result) are MySQL's out-of-range error 1690; anything else a general error.
fn arrow_error(e: arrow::error::ArrowError) -> BasaltError {
    use arrow::error::ArrowError as A;
    let out_of_range = match &e {
        A::ArithmeticOverflow(_) => true,
        A::CastError(m) => m.contains("Overflowing") && m.contains("Decimal"),
        A::InvalidArgumentError(m) => m.contains("too large to store in a Decimal"),
        _ => false,
    };
    if out_of_range {
        let detail = e.to_string();
        BasaltError::NumericOverflow(format!("DECIMAL value is out of range in '{detail}'"))
    } else {
        BasaltError::Execution(e.to_string())
    }
}

/// A reservation that did not fit: Doris's MEM_LIMIT_EXCEEDED with the pool's explanation.
fn mem_limit_exceeded(msg: &str) -> BasaltError {
    BasaltError::Execution(format!("MEM_LIMIT_EXCEEDED: {msg}"))
}

fn plan_error(msg: String) -> BasaltError {
    // "Column in SELECT must be in GROUP BY or an aggregate function: .. column "t.b" must
    // appear in the GROUP BY clause .."
    if msg.starts_with("Column in ") && msg.contains("must be in GROUP BY") {
        if let Some(column) = msg
            .split_once("column \"")
            .and_then(|(_, rest)| rest.split_once("\" must appear"))
            .map(|(column, _)| column)
        {
            return BasaltError::NotInGroupBy(column.to_string());
        }
    }
    // A derived table's `SELECT a, a`: "Projections require unique expression names but the
    // expression "t1.a" at position 0 and "t1.a" at position 1 have the same name" (MySQL's
    // 1060 names the column).
    if let Some(rest) =
        msg.strip_prefix("Projections require unique expression names but the expression \"")
    {
        if let Some((expr, _)) = rest.split_once('"') {
            let column = expr.rsplit('.').next().unwrap_or(expr);
            return BasaltError::DuplicateColumn(column.to_string());
        }
    }
    // "table 'def.db.t' not found"
    if let Some(rest) = msg.strip_prefix("table '") {
        if let Some(name) = rest.strip_suffix("' not found") {
            let parts: Vec<&str> = name.split('.').collect();
            let short = if parts.len() == 3 {
                format!("{}.{}", parts[1], parts[2])
            } else {
                name.to_string()
            };
            return BasaltError::UnknownTable(short);
        }
    }
    BasaltError::Execution(msg)
}

fn strip_prefix(s: String) -> String {
    for p in ["Execution error: ", "Internal error: ", "Optimizer rule "] {
        if let Some(rest) = s.strip_prefix(p) {
            return rest.to_string();
        }
    }
    s
}

#[cfg(test)]
mod remote_tests {
    use super::*;

    #[test]
    fn not_supported_is_said_once() {
        let e = from_df(DataFusionError::NotImplemented(
            "Multiple recursive references to the same CTE are not supported".into(),
        ));
        assert_eq!(e.mysql_code(), 1235);
        assert_eq!(
            e.to_string(),
            "Multiple recursive references to the same CTE is not supported"
        );
    }

    #[test]
    fn a_shared_basalt_error_keeps_its_code() {
        let shared = std::sync::Arc::new(to_df(BasaltError::RecursionDepth(11)));
        let _other_holder = shared.clone();
        let e = from_df(DataFusionError::Shared(shared));
        assert_eq!(e.mysql_code(), 3636, "{e}");
    }

    #[test]
    fn an_out_of_range_error_from_a_backend_keeps_its_code() {
        #[derive(Debug)]
        struct Text(&'static str);
        impl std::fmt::Display for Text {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for Text {}
        let e = from_df(DataFusionError::External(Box::new(Text(
            "BIGINT value is out of range in '(9223372036854775807 + 1)'",
        ))));
        assert!(matches!(e, BasaltError::NumericOverflow(_)), "{e:?}");
        let e = from_df(DataFusionError::External(Box::new(Text("disk on fire"))));
        assert!(matches!(e, BasaltError::Execution(_)), "{e:?}");
        // A scalar subquery's row check, as its text arrives from a backend.
        let e = from_df(DataFusionError::External(Box::new(Text(
            "Execution error: Scalar subquery returned more than one row",
        ))));
        assert_eq!(e.mysql_code(), 1242, "{e:?}");
        // Basalt's own error, as its text arrives (a per-row subquery's, shared by partitions).
        let e = from_df(DataFusionError::External(Box::new(Text(
            "External error: Subquery returns more than 1 row",
        ))));
        assert_eq!(e.mysql_code(), 1242, "{e:?}");
        let shared = std::sync::Arc::new(DataFusionError::Execution(
            "Scalar subquery returned more than one row".into(),
        ));
        let _also_held = shared.clone();
        let e = from_df(DataFusionError::Shared(shared));
        assert_eq!(e.mysql_code(), 1242, "{e:?}");
    }

    #[test]
    fn a_decimal_past_its_precision_is_out_of_range() {
        use arrow::error::ArrowError;
        let e = from_df(DataFusionError::ArrowError(
            Box::new(ArrowError::CastError(
                "Cannot cast to Decimal256(76, 10). Overflowing on 1".into(),
            )),
            None,
        ));
        assert_eq!(e.mysql_code(), 1690, "{e:?}");
        let e = from_df(DataFusionError::ArrowError(
            Box::new(ArrowError::CastError("Cannot cast string 'x'".into())),
            None,
        ));
        assert!(matches!(e, BasaltError::Execution(_)), "{e:?}");
    }
}
