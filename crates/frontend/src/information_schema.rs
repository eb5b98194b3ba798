//! `information_schema` tables computed from the catalog, the workload groups and the session
//! when queried: schemata, tables, views, columns, session_variables, global_variables,
//! workload_groups, workload_group_resource_usage, workload_policy, processlist,
//! active_queries.

use crate::catalog_provider::Services;
use crate::session::SessionInfo;
use crate::show::{Col, ResultBuilder};
use async_trait::async_trait;
use datafusion::catalog::{MemTable, SchemaProvider, TableProvider};
use datafusion::common::Result;
use std::sync::Arc;

/// The tables, as SHOW TABLES FROM information_schema lists them.
pub(crate) const TABLES: &[&str] = &[
    "schemata",
    "tables",
    "views",
    "columns",
    "session_variables",
    "global_variables",
    "workload_groups",
    "workload_group_resource_usage",
    "workload_policy",
    "processlist",
    "active_queries",
];

pub struct InformationSchema {
    services: Services,
    session: Arc<SessionInfo>,
}

impl std::fmt::Debug for InformationSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InformationSchema")
    }
}

impl InformationSchema {
    pub fn new(services: Services, session: Arc<SessionInfo>) -> Self {
        InformationSchema { services, session }
    }

    fn access(&self) -> crate::access::Access {
        crate::access::access(self.services.catalog.as_ref(), &self.session)
    }

    /// Every table the session's account may see.
    fn visible_tables(&self) -> Vec<Arc<basalt_catalog::TableMeta>> {
        let access = self.access();
        let catalog = &self.services.catalog;
        catalog
            .databases()
            .into_iter()
            .flat_map(|db| catalog.tables(&db.name).unwrap_or_default())
            .filter(|t| access.may_see_table(&t.database, &t.name))
            .collect()
    }

    /// Every view the session's account may see.
    fn visible_views(&self) -> Vec<Arc<basalt_catalog::ViewMeta>> {
        let access = self.access();
        let catalog = &self.services.catalog;
        catalog
            .databases()
            .into_iter()
            .flat_map(|db| catalog.views(&db.name))
            .filter(|v| access.may_see_table(&v.database, &v.name))
            .collect()
    }

    fn build(&self, name: &str) -> Option<ResultBuilder> {
        Some(match name {
            "schemata" => {
                let mut b = ResultBuilder::new(&[
                    Col::str("CATALOG_NAME"),
                    Col::str("SCHEMA_NAME"),
                    Col::str("DEFAULT_CHARACTER_SET_NAME"),
                    Col::str("DEFAULT_COLLATION_NAME"),
                    Col::str("SQL_PATH"),
                ]);
                let access = self.access();
                let mut names: Vec<String> = self
                    .services
                    .catalog
                    .databases()
                    .into_iter()
                    .map(|d| d.name)
                    .filter(|d| access.may_see_database(d))
                    .collect();
                names.push("information_schema".into());
                names.sort();
                for n in names {
                    b.row(vec![
                        "def".into(),
                        n.into(),
                        "utf8mb4".into(),
                        "utf8mb4_general_ci".into(),
                        None::<String>.into(),
                    ]);
                }
                b
            }
            "views" => {
                let mut b = ResultBuilder::new(&[
                    Col::str("TABLE_CATALOG"),
                    Col::str("TABLE_SCHEMA"),
                    Col::str("TABLE_NAME"),
                    Col::str("VIEW_DEFINITION"),
                    Col::str("CHECK_OPTION"),
                    Col::str("IS_UPDATABLE"),
                    Col::str("DEFINER"),
                    Col::str("SECURITY_TYPE"),
                    Col::str("CHARACTER_SET_CLIENT"),
                    Col::str("COLLATION_CONNECTION"),
                ]);
                for v in self.visible_views() {
                    b.row(vec![
                        "def".into(),
                        v.database.clone().into(),
                        v.name.clone().into(),
                        v.definition.clone().into(),
                        "NONE".into(),
                        "NO".into(),
                        v.definer.clone().into(),
                        "INVOKER".into(),
                        "utf8mb4".into(),
                        "utf8mb4_general_ci".into(),
                    ]);
                }
                b
            }
            "tables" => {
                let mut b = ResultBuilder::new(&[
                    Col::str("TABLE_CATALOG"),
                    Col::str("TABLE_SCHEMA"),
                    Col::str("TABLE_NAME"),
                    Col::str("TABLE_TYPE"),
                    Col::str("ENGINE"),
                    Col::int("VERSION"),
                    Col::str("ROW_FORMAT"),
                    Col::int("TABLE_ROWS"),
                    Col::int("AVG_ROW_LENGTH"),
                    Col::int("DATA_LENGTH"),
                    Col::str("CREATE_TIME"),
                    Col::str("TABLE_COLLATION"),
                    Col::str("TABLE_COMMENT"),
                ]);
                for t in self.visible_tables() {
                    let rows = t.num_rows() as i64;
                    let bytes = t.data_bytes() as i64;
                    b.row(vec![
                        "def".into(),
                        t.database.clone().into(),
                        t.name.clone().into(),
                        "BASE TABLE".into(),
                        "OLAP".into(),
                        10i64.into(),
                        "Dynamic".into(),
                        rows.into(),
                        (if rows > 0 { bytes / rows } else { 0 }).into(),
                        bytes.into(),
                        crate::show::format_ms(t.created_ms).into(),
                        "utf8mb4_general_ci".into(),
                        t.comment.clone().into(),
                    ]);
                }
                for v in self.visible_views() {
                    b.row(vec![
                        "def".into(),
                        v.database.clone().into(),
                        v.name.clone().into(),
                        "VIEW".into(),
                        None::<String>.into(),
                        None::<i64>.into(),
                        None::<String>.into(),
                        None::<i64>.into(),
                        None::<i64>.into(),
                        None::<i64>.into(),
                        crate::show::format_ms(v.created_ms).into(),
                        None::<String>.into(),
                        "VIEW".into(),
                    ]);
                }
                for t in TABLES {
                    b.row(vec![
                        "def".into(),
                        "information_schema".into(),
                        t.to_string().into(),
                        "SYSTEM VIEW".into(),
                        "MEMORY".into(),
                        10i64.into(),
                        "Fixed".into(),
                        0i64.into(),
                        0i64.into(),
                        0i64.into(),
                        None::<String>.into(),
                        "utf8mb4_general_ci".into(),
                        "".into(),
                    ]);
                }
                b
            }
            "columns" => {
                let mut b = ResultBuilder::new(&[
                    Col::str("TABLE_CATALOG"),
                    Col::str("TABLE_SCHEMA"),
                    Col::str("TABLE_NAME"),
                    Col::str("COLUMN_NAME"),
                    Col::int("ORDINAL_POSITION"),
                    Col::str("COLUMN_DEFAULT"),
                    Col::str("IS_NULLABLE"),
                    Col::str("DATA_TYPE"),
                    Col::int("CHARACTER_MAXIMUM_LENGTH"),
                    Col::int("NUMERIC_PRECISION"),
                    Col::int("NUMERIC_SCALE"),
                    Col::str("COLUMN_TYPE"),
                    Col::str("COLUMN_KEY"),
                    Col::str("EXTRA"),
                    Col::str("COLUMN_COMMENT"),
                ]);
                for t in self.visible_tables() {
                    for (i, c) in t.columns.iter().enumerate() {
                        let (len, prec, scale) = crate::show::type_dimensions(&c.ty);
                        b.row(vec![
                            "def".into(),
                            t.database.clone().into(),
                            t.name.clone().into(),
                            c.shown_name().into(),
                            (i as i64 + 1).into(),
                            crate::show::default_text(c).into(),
                            (if c.nullable { "YES" } else { "NO" }).into(),
                            c.ty.data_type_name().into(),
                            len.into(),
                            prec.into(),
                            scale.into(),
                            c.ty.to_string().into(),
                            (if c.is_key {
                                if t.keys_model == basalt_catalog::KeysModel::Unique {
                                    "PRI"
                                } else {
                                    "MUL"
                                }
                            } else {
                                ""
                            })
                            .into(),
                            crate::show::extra_text(c).into(),
                            c.comment.clone().into(),
                        ]);
                    }
                }
                b
            }
            "session_variables" | "global_variables" => {
                let mut b =
                    ResultBuilder::new(&[Col::str("VARIABLE_NAME"), Col::str("VARIABLE_VALUE")]);
                let vars = self.session.vars.read();
                for (n, v) in vars.all(name == "global_variables") {
                    b.row(vec![n.to_uppercase().into(), v.as_text().into()]);
                }
                b
            }
            "workload_groups" => crate::workload_groups::rows(&self.services.workload, None),
            "workload_group_resource_usage" => {
                crate::workload_groups::resource_usage(&self.services.workload)
            }
            "workload_policy" => crate::workload_policies::rows(&self.services.workload),
            "processlist" => crate::process_admin::processlist(
                &self.services,
                self.access().viewer().as_deref(),
                true,
            ),
            "active_queries" => crate::process_admin::active_queries(
                &self.services,
                self.access().viewer().as_deref(),
            ),
            _ => return None,
        })
    }
}

#[async_trait]
impl SchemaProvider for InformationSchema {
    fn table_names(&self) -> Vec<String> {
        TABLES.iter().map(|t| t.to_string()).collect()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let Some(b) = self.build(&name.to_lowercase()) else {
            return Ok(None);
        };
        let (schema, batch) = b.lowercase_names().finish();
        Ok(Some(Arc::new(MemTable::try_new(
            schema,
            vec![vec![batch]],
        )?)))
    }

    fn table_exist(&self, name: &str) -> bool {
        TABLES.contains(&name.to_lowercase().as_str())
    }
}
