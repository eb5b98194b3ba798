//! The information_schema tables that describe the server: ENGINES, CHARACTER_SETS,
//! COLLATIONS, COLLATION_CHARACTER_SET_APPLICABILITY, PLUGINS, the session's and the server's
//! variables and status, and PROCESSLIST. The SHOW statements of the same names read the
//! same rows.

use super::{InformationSchema, TableSpec, I, T};
use crate::show::ResultBuilder;

pub(super) const SPECS: &[TableSpec] = &[
    TableSpec {
        name: "engines",
        columns: &[
            ("ENGINE", T),
            ("SUPPORT", T),
            ("COMMENT", T),
            ("TRANSACTIONS", T),
            ("XA", T),
            ("SAVEPOINTS", T),
        ],
    },
    TableSpec {
        name: "character_sets",
        columns: &[
            ("CHARACTER_SET_NAME", T),
            ("DEFAULT_COLLATE_NAME", T),
            ("DESCRIPTION", T),
            ("MAXLEN", I),
        ],
    },
    TableSpec {
        name: "collations",
        columns: &[
            ("COLLATION_NAME", T),
            ("CHARACTER_SET_NAME", T),
            ("ID", I),
            ("IS_DEFAULT", T),
            ("IS_COMPILED", T),
            ("SORTLEN", I),
            ("PAD_ATTRIBUTE", T),
        ],
    },
    TableSpec {
        name: "collation_character_set_applicability",
        columns: &[("COLLATION_NAME", T), ("CHARACTER_SET_NAME", T)],
    },
    TableSpec {
        name: "plugins",
        columns: &[
            ("PLUGIN_NAME", T),
            ("PLUGIN_VERSION", T),
            ("PLUGIN_STATUS", T),
            ("PLUGIN_TYPE", T),
            ("PLUGIN_TYPE_VERSION", T),
            ("PLUGIN_LIBRARY", T),
            ("PLUGIN_LIBRARY_VERSION", T),
            ("PLUGIN_AUTHOR", T),
            ("PLUGIN_DESCRIPTION", T),
            ("PLUGIN_LICENSE", T),
            ("LOAD_OPTION", T),
        ],
    },
    TableSpec {
        name: "session_variables",
        columns: &[("VARIABLE_NAME", T), ("VARIABLE_VALUE", T)],
    },
    TableSpec {
        name: "global_variables",
        columns: &[("VARIABLE_NAME", T), ("VARIABLE_VALUE", T)],
    },
    TableSpec {
        name: "session_status",
        columns: &[("VARIABLE_NAME", T), ("VARIABLE_VALUE", T)],
    },
    TableSpec {
        name: "global_status",
        columns: &[("VARIABLE_NAME", T), ("VARIABLE_VALUE", T)],
    },
    TableSpec {
        name: "processlist",
        columns: &[
            ("ID", I),
            ("USER", T),
            ("HOST", T),
            ("DB", T),
            ("COMMAND", T),
            ("TIME", I),
            ("STATE", T),
            ("INFO", T),
        ],
    },
];

/// The storage engines: Basalt's one (`OLAP`, as Doris names it).
pub(crate) const ENGINES: &[[&str; 6]] = &[[
    "OLAP",
    "DEFAULT",
    "Columnar tablets of versioned rowsets; every statement is atomic",
    "NO",
    "NO",
    "NO",
]];

/// (name, description, default collation, bytes per character at most).
pub(crate) const CHARACTER_SETS: &[(&str, &str, &str, i64)] = &[
    ("binary", "Binary pseudo charset", "binary", 1),
    ("utf8mb3", "UTF-8 Unicode", "utf8mb3_general_ci", 3),
    ("utf8mb4", "UTF-8 Unicode", "utf8mb4_general_ci", 4),
];

/// (name, character set, id, is default).
pub(crate) const COLLATIONS: &[(&str, &str, i64, bool)] = &[
    ("binary", "binary", 63, true),
    ("utf8mb3_bin", "utf8mb3", 83, false),
    ("utf8mb3_general_ci", "utf8mb3", 33, true),
    ("utf8mb4_bin", "utf8mb4", 46, false),
    ("utf8mb4_general_ci", "utf8mb4", 45, true),
];

/// (name, type, description): the server's built-in plugins.
pub(crate) const PLUGINS: &[(&str, &str, &str)] = &[
    (
        "mysql_native_password",
        "AUTHENTICATION",
        "Native MySQL authentication",
    ),
    ("OLAP", "STORAGE ENGINE", "Basalt's columnar storage"),
];

pub(super) fn build(is: &InformationSchema, name: &str) -> Option<ResultBuilder> {
    let spec = SPECS.iter().find(|s| s.name == name)?;
    let mut b = spec.builder();
    match name {
        "engines" => {
            for e in ENGINES {
                b.row(e.iter().map(|v| (*v).into()).collect());
            }
        }
        "character_sets" => {
            for (cs, description, collation, maxlen) in CHARACTER_SETS {
                b.row(vec![
                    (*cs).into(),
                    (*collation).into(),
                    (*description).into(),
                    (*maxlen).into(),
                ]);
            }
        }
        "collations" => {
            for (collation, cs, id, default) in COLLATIONS {
                b.row(vec![
                    (*collation).into(),
                    (*cs).into(),
                    (*id).into(),
                    (if *default { "Yes" } else { "" }).into(),
                    "Yes".into(),
                    1i64.into(),
                    "PAD SPACE".into(),
                ]);
            }
        }
        "collation_character_set_applicability" => {
            for (collation, cs, _, _) in COLLATIONS {
                b.row(vec![(*collation).into(), (*cs).into()]);
            }
        }
        "plugins" => {
            for (plugin, kind, description) in PLUGINS {
                b.row(vec![
                    (*plugin).into(),
                    "1.0".into(),
                    "ACTIVE".into(),
                    (*kind).into(),
                    "1.0".into(),
                    None::<String>.into(),
                    None::<String>.into(),
                    "Basalt".into(),
                    (*description).into(),
                    "Apache-2.0".into(),
                    "FORCE".into(),
                ]);
            }
        }
        "session_variables" | "global_variables" => {
            let vars = is.session.vars.read();
            for (n, v) in vars.all(name == "global_variables") {
                b.row(vec![n.to_uppercase().into(), v.as_text().into()]);
            }
        }
        "session_status" | "global_status" => {
            for (n, v) in status_rows(&is.services.processes) {
                b.row(vec![n.to_uppercase().into(), v.into()]);
            }
        }
        "processlist" => {
            return Some(crate::process_admin::processlist(
                &is.services,
                is.access().viewer().as_deref(),
                true,
            ))
        }
        _ => return None,
    }
    Some(b)
}

/// The status counters as `SHOW STATUS` lists them.
pub(crate) fn status_rows(
    processes: &crate::processes::ProcessList,
) -> Vec<(&'static str, String)> {
    processes
        .status
        .rows(processes.connections(), processes.running())
}
