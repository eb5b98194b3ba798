//! The SHOW statements of MySQL's tools, answered by queries over information_schema so that
//! both say the same thing: SHOW TABLE STATUS, SHOW INDEX, SHOW [FULL] COLUMNS, SHOW ENGINES,
//! SHOW PLUGINS, SHOW TRIGGERS, SHOW EVENTS, SHOW OPEN TABLES, SHOW PROCEDURE|FUNCTION
//! STATUS; and the few with fixed answers (SHOW PRIVILEGES, SHOW MASTER STATUS, SHOW BINARY
//! LOGS, SHOW PROFILES, SHOW CREATE DATABASE, SHOW COUNT(*) WARNINGS).

use super::ddl;
use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use crate::show::{Col, ResultBuilder};
use basalt_common::{BasaltError, Result};
use basalt_sql::{MetadataShow, ShowFilter, Statement, TableName};

/// A SHOW answered from one information_schema table: its result columns (name as MySQL
/// shows it, expression over the table), the rows it covers, the column LIKE matches and the
/// order.
struct ShowQuery {
    columns: &'static [(&'static str, &'static str)],
    table: &'static str,
    condition: String,
    like_column: &'static str,
    order: &'static str,
}

/// A string literal in generated SQL.
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

const TABLE_STATUS: &[(&str, &str)] = &[
    ("Name", "table_name"),
    ("Engine", "engine"),
    ("Version", "version"),
    ("Row_format", "row_format"),
    ("Rows", "table_rows"),
    ("Avg_row_length", "avg_row_length"),
    ("Data_length", "data_length"),
    ("Max_data_length", "max_data_length"),
    ("Index_length", "index_length"),
    ("Data_free", "data_free"),
    ("Auto_increment", "auto_increment"),
    ("Create_time", "create_time"),
    ("Update_time", "update_time"),
    ("Check_time", "check_time"),
    ("Collation", "table_collation"),
    ("Checksum", "checksum"),
    ("Create_options", "create_options"),
    ("Comment", "table_comment"),
];

const INDEX: &[(&str, &str)] = &[
    ("Table", "table_name"),
    ("Non_unique", "non_unique"),
    ("Key_name", "index_name"),
    ("Seq_in_index", "seq_in_index"),
    ("Column_name", "column_name"),
    ("Collation", "collation"),
    ("Cardinality", "cardinality"),
    ("Sub_part", "sub_part"),
    ("Packed", "packed"),
    ("Null", "nullable"),
    ("Index_type", "index_type"),
    ("Comment", "comment"),
    ("Index_comment", "index_comment"),
    ("Visible", "is_visible"),
    ("Expression", "expression"),
];

const COLUMNS: &[(&str, &str)] = &[
    ("Field", "column_name"),
    ("Type", "column_type"),
    ("Null", "is_nullable"),
    ("Key", "column_key"),
    ("Default", "column_default"),
    ("Extra", "extra"),
];

const FULL_COLUMNS: &[(&str, &str)] = &[
    ("Field", "column_name"),
    ("Type", "column_type"),
    ("Collation", "collation_name"),
    ("Null", "is_nullable"),
    ("Key", "column_key"),
    ("Default", "column_default"),
    ("Extra", "extra"),
    ("Privileges", "privileges"),
    ("Comment", "column_comment"),
];

const ENGINES: &[(&str, &str)] = &[
    ("Engine", "engine"),
    ("Support", "support"),
    ("Comment", "comment"),
    ("Transactions", "transactions"),
    ("XA", "xa"),
    ("Savepoints", "savepoints"),
];

const PLUGINS: &[(&str, &str)] = &[
    ("Name", "plugin_name"),
    ("Status", "plugin_status"),
    ("Type", "plugin_type"),
    ("Library", "plugin_library"),
    ("License", "plugin_license"),
];

const TRIGGERS: &[(&str, &str)] = &[
    ("Trigger", "trigger_name"),
    ("Event", "event_manipulation"),
    ("Table", "event_object_table"),
    ("Statement", "action_statement"),
    ("Timing", "action_timing"),
    ("Created", "created"),
    ("sql_mode", "sql_mode"),
    ("Definer", "definer"),
    ("character_set_client", "character_set_client"),
    ("collation_connection", "collation_connection"),
    ("Database Collation", "database_collation"),
];

const EVENTS: &[(&str, &str)] = &[
    ("Db", "event_schema"),
    ("Name", "event_name"),
    ("Definer", "definer"),
    ("Time zone", "time_zone"),
    ("Type", "event_type"),
    ("Execute at", "execute_at"),
    ("Interval value", "interval_value"),
    ("Interval field", "interval_field"),
    ("Starts", "starts"),
    ("Ends", "ends"),
    ("Status", "status"),
    ("Originator", "originator"),
    ("character_set_client", "character_set_client"),
    ("collation_connection", "collation_connection"),
    ("Database Collation", "database_collation"),
];

const OPEN_TABLES: &[(&str, &str)] = &[
    ("Database", "table_schema"),
    ("Table", "table_name"),
    ("In_use", "0"),
    ("Name_locked", "0"),
];

const ROUTINE_STATUS: &[(&str, &str)] = &[
    ("Db", "routine_schema"),
    ("Name", "routine_name"),
    ("Type", "routine_type"),
    ("Definer", "definer"),
    ("Modified", "last_altered"),
    ("Created", "created"),
    ("Security_type", "security_type"),
    ("Comment", "routine_comment"),
    ("character_set_client", "character_set_client"),
    ("collation_connection", "collation_connection"),
    ("Database Collation", "database_collation"),
];

/// SHOW PRIVILEGES: (Privilege, Context, Comment).
const PRIVILEGES: &[[&str; 3]] = &[
    ["Alter", "Tables", "To alter the table"],
    [
        "Create",
        "Databases,Tables",
        "To create new databases and tables",
    ],
    ["Create view", "Tables", "To create new views"],
    ["Delete", "Tables", "To delete existing rows"],
    [
        "Drop",
        "Databases,Tables",
        "To drop databases, tables, and views",
    ],
    [
        "Grant option",
        "Databases,Tables",
        "To give to other users those privileges you possess",
    ],
    ["Index", "Tables", "To create or drop indexes"],
    ["Insert", "Tables", "To insert data into tables"],
    [
        "Node",
        "Server Admin",
        "To manage the cluster's nodes (Doris's NODE_PRIV)",
    ],
    ["Select", "Tables", "To retrieve rows from table"],
    ["Show view", "Tables", "To see views with SHOW CREATE VIEW"],
    [
        "Super",
        "Server Admin",
        "To use KILL thread, SET GLOBAL, accounts and workload groups",
    ],
    ["Update", "Tables", "To update existing rows"],
    [
        "Usage",
        "Server Admin",
        "No privileges - allow connect only",
    ],
];

impl QueryEngine {
    /// SHOW statements of MySQL's tools ([`Statement::ShowMetadata`] and friends).
    pub(super) async fn execute_metadata_show(
        &self,
        session: &Session,
        stmt: Statement,
    ) -> Result<Output> {
        match stmt {
            Statement::ShowMetadata {
                kind,
                database,
                table,
                filter,
            } => {
                self.metadata_show(session, kind, database, table, filter)
                    .await
            }
            Statement::ShowCreateDatabase {
                database,
                if_not_exists,
            } => {
                let db = ddl::existing_database(&self.services, session, &Some(database))?;
                let mut b =
                    ResultBuilder::new(&[Col::str("Database"), Col::str("Create Database")]);
                let guard = if if_not_exists {
                    "/*!32312 IF NOT EXISTS*/ "
                } else {
                    ""
                };
                b.row(vec![
                    db.clone().into(),
                    format!(
                        "CREATE DATABASE {guard}`{}` /*!40100 DEFAULT CHARACTER SET utf8mb4 */",
                        db.replace('`', "``")
                    )
                    .into(),
                ]);
                Ok(b.into_output())
            }
            Statement::ShowData { table } => {
                let db =
                    ddl::database_of(session, &table.as_ref().and_then(|t| t.database.clone()))?;
                match table {
                    Some(t) => {
                        let meta = self.services.catalog.table(&db, &t.table)?;
                        Ok(crate::show::show_table_data(&meta))
                    }
                    None => {
                        let access = session.access();
                        let tables: Vec<_> = self
                            .services
                            .catalog
                            .tables(&db)?
                            .into_iter()
                            .filter(|t| crate::temporary_tables::listed(&t.name))
                            .filter(|t| access.may_see_table(&db, &t.name))
                            .collect();
                        Ok(crate::show::show_database_data(&tables))
                    }
                }
            }
            Statement::ShowWarningCount => {
                let mut b = ResultBuilder::new(&[Col::int("@@session.warning_count")]);
                b.row(vec![(session.info.warnings.count() as i64).into()]);
                Ok(b.into_output())
            }
            _ => Err(super::misrouted()),
        }
    }

    async fn metadata_show(
        &self,
        session: &Session,
        kind: MetadataShow,
        database: Option<String>,
        table: Option<TableName>,
        filter: Option<ShowFilter>,
    ) -> Result<Output> {
        let named_db = || ddl::existing_database(&self.services, session, &database);
        let schema_is = |column: &str, db: &str| format!("{column} = {}", literal(db));
        let query = match kind {
            MetadataShow::TableStatus => {
                let db = named_db()?;
                ShowQuery {
                    columns: TABLE_STATUS,
                    table: "tables",
                    condition: schema_is("table_schema", &db),
                    like_column: "Name",
                    order: "`Name`",
                }
            }
            MetadataShow::Index => {
                let Some(table) = table else {
                    return Err(super::misrouted());
                };
                let db = match database {
                    Some(db) => session.stored_name(&db),
                    None => ddl::database_of(session, &table.database)?,
                };
                // information_schema compares the names as stored.
                let meta = self.services.catalog.table(&db, &table.table)?;
                let (db, name) = (meta.database.clone(), meta.name.clone());
                return self
                    .run_show_query(
                        session,
                        &ShowQuery {
                            columns: INDEX,
                            table: "statistics",
                            condition: format!(
                                "{} AND table_name = {}",
                                schema_is("table_schema", &db),
                                literal(&name)
                            ),
                            like_column: "Key_name",
                            // MySQL's order: the primary key, unique indexes, the others.
                            order:
                                "`Key_name` <> 'PRIMARY', `Non_unique`, `Key_name`, `Seq_in_index`",
                        },
                        filter,
                    )
                    .await;
            }
            MetadataShow::Engines => ShowQuery {
                columns: ENGINES,
                table: "engines",
                condition: "TRUE".into(),
                like_column: "Engine",
                order: "`Engine`",
            },
            MetadataShow::Plugins => ShowQuery {
                columns: PLUGINS,
                table: "plugins",
                condition: "TRUE".into(),
                like_column: "Name",
                order: "`Name`",
            },
            MetadataShow::Triggers => {
                let db = named_db()?;
                ShowQuery {
                    columns: TRIGGERS,
                    table: "triggers",
                    condition: schema_is("trigger_schema", &db),
                    like_column: "Table",
                    order: "`Trigger`",
                }
            }
            MetadataShow::Events => {
                let db = named_db()?;
                ShowQuery {
                    columns: EVENTS,
                    table: "events",
                    condition: schema_is("event_schema", &db),
                    like_column: "Name",
                    order: "`Name`",
                }
            }
            MetadataShow::OpenTables => ShowQuery {
                columns: OPEN_TABLES,
                table: "tables",
                condition: match &database {
                    Some(_) => format!(
                        "table_type = 'BASE TABLE' AND {}",
                        schema_is("table_schema", &named_db()?)
                    ),
                    None => "table_type = 'BASE TABLE'".into(),
                },
                like_column: "Table",
                order: "`Database`, `Table`",
            },
            MetadataShow::ProcedureStatus | MetadataShow::FunctionStatus => ShowQuery {
                columns: ROUTINE_STATUS,
                table: "routines",
                condition: if kind == MetadataShow::ProcedureStatus {
                    "routine_type = 'PROCEDURE'".into()
                } else {
                    "routine_type = 'FUNCTION'".into()
                },
                like_column: "Name",
                order: "`Db`, `Name`",
            },
            MetadataShow::Privileges => {
                let mut b = ResultBuilder::new(&[
                    Col::str("Privilege"),
                    Col::str("Context"),
                    Col::str("Comment"),
                ]);
                for row in PRIVILEGES {
                    b.row(row.iter().map(|v| (*v).into()).collect());
                }
                return Ok(b.into_output());
            }
            // Basalt keeps no binary log and no per-statement profiles of MySQL's kind (Doris's
            // query profiles are SHOW QUERY PROFILE).
            MetadataShow::MasterStatus => {
                return Ok(ResultBuilder::new(&[
                    Col::str("File"),
                    Col::int("Position"),
                    Col::str("Binlog_Do_DB"),
                    Col::str("Binlog_Ignore_DB"),
                    Col::str("Executed_Gtid_Set"),
                ])
                .into_output())
            }
            MetadataShow::BinaryLogs => {
                return Err(BasaltError::NotSupported(
                    "binary logging (SHOW BINARY LOGS): Basalt keeps no binary log".into(),
                ))
            }
            MetadataShow::Profiles => {
                return Ok(ResultBuilder::new(&[
                    Col::int("Query_ID"),
                    Col::float("Duration"),
                    Col::str("Query"),
                ])
                .into_output())
            }
        };
        self.run_show_query(session, &query, filter).await
    }

    /// `SHOW [FULL] COLUMNS FROM t [FROM db] [LIKE | WHERE]` of a table.
    pub(super) async fn show_columns(
        &self,
        session: &Session,
        db: &str,
        table: &str,
        full: bool,
        filter: Option<ShowFilter>,
    ) -> Result<Output> {
        // information_schema compares the names as stored.
        let meta = self.services.catalog.table(db, table)?;
        let query = ShowQuery {
            columns: if full { FULL_COLUMNS } else { COLUMNS },
            table: "columns",
            condition: format!(
                "table_schema = {} AND table_name = {}",
                literal(&meta.database),
                literal(&meta.name)
            ),
            like_column: "Field",
            order: "ordinal_position",
        };
        self.run_show_query(session, &query, filter).await
    }

    async fn run_show_query(
        &self,
        session: &Session,
        query: &ShowQuery,
        filter: Option<ShowFilter>,
    ) -> Result<Output> {
        let quoted = |name: &str| format!("`{name}`");
        let inner: Vec<String> = query
            .columns
            .iter()
            .map(|(name, expr)| format!("{expr} AS {}", quoted(name)))
            .chain(
                query
                    .order
                    .contains("ordinal_position")
                    .then(|| "ordinal_position".into()),
            )
            .collect();
        let outer: Vec<String> = query.columns.iter().map(|(name, _)| quoted(name)).collect();
        let filter = match filter {
            None => "TRUE".to_string(),
            Some(ShowFilter::Like(pattern)) => {
                format!("{} LIKE {}", quoted(query.like_column), literal(&pattern))
            }
            Some(ShowFilter::Where(expr)) => expr.to_string(),
        };
        let sql = format!(
            "SELECT {} FROM (SELECT {} FROM information_schema.{} WHERE {}) AS s WHERE {} ORDER BY {}",
            outer.join(", "),
            inner.join(", "),
            query.table,
            query.condition,
            filter,
            query.order
        );
        let Statement::Standard(stmt) = basalt_sql::parse_one(&sql)? else {
            return Err(BasaltError::Internal(format!("not a query: {sql}")));
        };
        self.run_datafusion(session, *stmt, false).await
    }
}
