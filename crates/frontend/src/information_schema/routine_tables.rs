//! `information_schema.ROUTINES` and `PARAMETERS`: the stored procedures and functions of the
//! databases the session may see, with MySQL 8.0's columns (also what SHOW PROCEDURE STATUS and
//! SHOW FUNCTION STATUS read). A function's return type is its ROUTINES row's type and its
//! PARAMETERS row at position 0 (MySQL's).

use super::{InformationSchema, TableSpec, I, T};
use crate::show::{format_ms, ResultBuilder};
use basalt_catalog::ProcedureMeta;
use std::sync::Arc;

const CHARSET: &str = "utf8mb4";
const COLLATION: &str = "utf8mb4_0900_bin";

pub(super) const SPECS: &[TableSpec] = &[
    TableSpec {
        name: "routines",
        columns: &[
            ("SPECIFIC_NAME", T),
            ("ROUTINE_CATALOG", T),
            ("ROUTINE_SCHEMA", T),
            ("ROUTINE_NAME", T),
            ("ROUTINE_TYPE", T),
            ("DATA_TYPE", T),
            ("CHARACTER_MAXIMUM_LENGTH", I),
            ("CHARACTER_OCTET_LENGTH", I),
            ("NUMERIC_PRECISION", I),
            ("NUMERIC_SCALE", I),
            ("DATETIME_PRECISION", I),
            ("CHARACTER_SET_NAME", T),
            ("COLLATION_NAME", T),
            ("DTD_IDENTIFIER", T),
            ("ROUTINE_BODY", T),
            ("ROUTINE_DEFINITION", T),
            ("EXTERNAL_NAME", T),
            ("EXTERNAL_LANGUAGE", T),
            ("PARAMETER_STYLE", T),
            ("IS_DETERMINISTIC", T),
            ("SQL_DATA_ACCESS", T),
            ("SQL_PATH", T),
            ("SECURITY_TYPE", T),
            ("CREATED", T),
            ("LAST_ALTERED", T),
            ("SQL_MODE", T),
            ("ROUTINE_COMMENT", T),
            ("DEFINER", T),
            ("CHARACTER_SET_CLIENT", T),
            ("COLLATION_CONNECTION", T),
            ("DATABASE_COLLATION", T),
        ],
    },
    TableSpec {
        name: "parameters",
        columns: &[
            ("SPECIFIC_CATALOG", T),
            ("SPECIFIC_SCHEMA", T),
            ("SPECIFIC_NAME", T),
            ("ORDINAL_POSITION", I),
            ("PARAMETER_MODE", T),
            ("PARAMETER_NAME", T),
            ("DATA_TYPE", T),
            ("CHARACTER_MAXIMUM_LENGTH", I),
            ("CHARACTER_OCTET_LENGTH", I),
            ("NUMERIC_PRECISION", I),
            ("NUMERIC_SCALE", I),
            ("DATETIME_PRECISION", I),
            ("CHARACTER_SET_NAME", T),
            ("COLLATION_NAME", T),
            ("DTD_IDENTIFIER", T),
            ("ROUTINE_TYPE", T),
        ],
    },
];

pub(super) fn build(is: &InformationSchema, name: &str) -> Option<ResultBuilder> {
    let spec = SPECS.iter().find(|s| s.name == name)?;
    let mut b = spec.builder();
    let procedures = visible_procedures(is);
    match name {
        "routines" => procedures.iter().for_each(|p| routine_row(p, &mut b)),
        "parameters" => procedures.iter().for_each(|p| parameter_rows(p, &mut b)),
        _ => return None,
    }
    Some(b)
}

fn visible_procedures(is: &InformationSchema) -> Vec<Arc<ProcedureMeta>> {
    let access = is.access();
    let catalog = &is.services.catalog;
    catalog
        .databases()
        .into_iter()
        .filter(|db| access.may_see_database(&db.name))
        .flat_map(|db| catalog.procedures(&db.name))
        .collect()
}

fn routine_row(p: &ProcedureMeta, b: &mut ResultBuilder) {
    let created = format_ms(p.created_ms);
    let returns = p.returns.as_deref().map(TypeShape::of);
    let shape = returns.as_ref();
    b.row(vec![
        p.name.clone().into(),
        "def".into(),
        p.database.clone().into(),
        p.name.clone().into(),
        p.kind().into(),
        shape.map_or(String::new(), |s| s.data_type.clone()).into(),
        shape.and_then(|s| s.char_length).into(),
        shape.and_then(|s| s.char_length.map(|n| n * 4)).into(),
        shape.and_then(|s| s.precision).into(),
        shape.and_then(|s| s.scale).into(),
        shape.and_then(|s| s.datetime_precision).into(),
        shape.and_then(|s| s.text.then_some(CHARSET)).into(),
        shape.and_then(|s| s.text.then_some(COLLATION)).into(),
        p.returns.as_ref().map(|t| t.to_lowercase()).into(),
        "SQL".into(),
        p.body.clone().into(),
        None::<String>.into(),
        "SQL".into(),
        "SQL".into(),
        (if p.deterministic { "YES" } else { "NO" }).into(),
        p.data_access.clone().into(),
        None::<String>.into(),
        p.security.clone().into(),
        created.clone().into(),
        created.into(),
        p.sql_mode.clone().into(),
        p.comment.clone().into(),
        p.definer.clone().into(),
        CHARSET.into(),
        COLLATION.into(),
        COLLATION.into(),
    ]);
}

fn parameter_rows(p: &ProcedureMeta, b: &mut ResultBuilder) {
    // A function's return value is its row 0, without a mode or name.
    if let Some(returns) = &p.returns {
        parameter_row(p, 0, None, None, returns, b);
    }
    for (i, param) in p.parameters.iter().enumerate() {
        let mode = (!p.is_function()).then(|| param.mode.as_str());
        parameter_row(
            p,
            i as i64 + 1,
            mode,
            Some(&param.name),
            &param.data_type,
            b,
        );
    }
}

/// One row of PARAMETERS: routine `p`'s parameter at `position` of `data_type`.
fn parameter_row(
    p: &ProcedureMeta,
    position: i64,
    mode: Option<&str>,
    name: Option<&str>,
    data_type: &str,
    b: &mut ResultBuilder,
) {
    let shape = TypeShape::of(data_type);
    b.row(vec![
        "def".into(),
        p.database.clone().into(),
        p.name.clone().into(),
        position.into(),
        mode.into(),
        name.map(str::to_string).into(),
        shape.data_type.clone().into(),
        shape.char_length.into(),
        shape.char_length.map(|n| n * 4).into(),
        shape.precision.into(),
        shape.scale.into(),
        shape.datetime_precision.into(),
        shape.text.then_some(CHARSET).into(),
        shape.text.then_some(COLLATION).into(),
        data_type.to_lowercase().into(),
        p.kind().into(),
    ]);
}

/// What information_schema says of a declared type.
struct TypeShape {
    /// The base type in lower case (`varchar`).
    data_type: String,
    text: bool,
    char_length: Option<i64>,
    precision: Option<i64>,
    scale: Option<i64>,
    datetime_precision: Option<i64>,
}

impl TypeShape {
    fn of(declared: &str) -> TypeShape {
        let lower = declared.to_lowercase();
        let base = lower
            .split(['(', ' '])
            .next()
            .unwrap_or_default()
            .to_string();
        let args: Vec<i64> = lower
            .split_once('(')
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(inside, _)| {
                inside
                    .split(',')
                    .filter_map(|n| n.trim().parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        let mut shape = TypeShape {
            data_type: base.clone(),
            text: false,
            char_length: None,
            precision: None,
            scale: None,
            datetime_precision: None,
        };
        match base.as_str() {
            "char" | "varchar" | "string" => {
                shape.text = true;
                shape.char_length = Some(args.first().copied().unwrap_or(1));
            }
            "text" | "tinytext" | "mediumtext" | "longtext" => {
                shape.text = true;
                shape.char_length = Some(65_535);
            }
            "tinyint" => (shape.precision, shape.scale) = (Some(3), Some(0)),
            "smallint" => (shape.precision, shape.scale) = (Some(5), Some(0)),
            "mediumint" => (shape.precision, shape.scale) = (Some(7), Some(0)),
            "int" | "integer" => (shape.precision, shape.scale) = (Some(10), Some(0)),
            "bigint" => (shape.precision, shape.scale) = (Some(19), Some(0)),
            "decimal" | "numeric" | "dec" => {
                shape.precision = Some(args.first().copied().unwrap_or(10));
                shape.scale = Some(args.get(1).copied().unwrap_or(0));
            }
            "float" => shape.precision = Some(12),
            "double" | "real" => shape.precision = Some(22),
            "datetime" | "timestamp" | "time" => {
                shape.datetime_precision = Some(args.first().copied().unwrap_or(0))
            }
            _ => {}
        }
        shape
    }
}
