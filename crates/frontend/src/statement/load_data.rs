//! `LOAD DATA LOCAL INFILE`: the MySQL client sends a file over the connection and it loads as
//! a Stream Load of the same table would — the same conversion, filtering and all-or-nothing
//! publish — with the statement's FIELDS/LINES/IGNORE/column clauses as the load's settings.
//! Lines with too many or too few fields load as MySQL loads them (extra fields ignored,
//! missing ones NULL); a value that does not convert fails the load, where MySQL would store a
//! zero with a warning.

use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use basalt_common::{BasaltError, Result};
use basalt_sql::{LoadData, Statement};
use bytes::Bytes;
use futures::stream::BoxStream;

/// The file a statement asks the client to send, when it is `LOAD DATA LOCAL INFILE`.
pub fn local_infile_name(sql: &str) -> Option<String> {
    let start = sql.trim_start();
    if !start
        .get(..4)
        .is_some_and(|w| w.eq_ignore_ascii_case("LOAD"))
    {
        return None;
    }
    match basalt_sql::parse_one(sql) {
        Ok(Statement::LoadData(load)) if load.local => Some(load.file),
        _ => None,
    }
}

/// A separator in Stream Load's hex form (`\x09`), which no header parsing trims or reads
/// differently.
fn hex(separator: &str) -> String {
    let digits: String = separator.bytes().map(|b| format!("{b:02x}")).collect();
    format!("\\x{digits}")
}

/// The Stream Load settings a LOAD DATA statement's clauses stand for (MySQL's defaults where
/// a clause is absent).
fn headers(load: &LoadData) -> Vec<(String, String)> {
    let mut headers = vec![
        ("format".to_string(), "csv".to_string()),
        ("lenient_field_count".to_string(), "true".to_string()),
        ("mysql_escapes".to_string(), "true".to_string()),
        // A value that does not convert is a bad row (the load fails, nothing is published),
        // never a NULL in its place: Basalt keeps no warnings to report it by.
        ("strict_mode".to_string(), "true".to_string()),
        (
            "column_separator".into(),
            hex(load.fields_terminated_by.as_deref().unwrap_or("\t")),
        ),
        (
            "line_delimiter".into(),
            hex(load.lines_terminated_by.as_deref().unwrap_or("\n")),
        ),
    ];
    if let Some(enclose) = load.enclosed_by.as_ref().filter(|e| !e.is_empty()) {
        headers.push(("enclose".into(), enclose.clone()));
    }
    match &load.escaped_by {
        Some(e) if e.is_empty() => {}
        Some(e) => headers.push(("escape".into(), e.clone())),
        None => headers.push(("escape".into(), "\\".into())),
    }
    if load.ignore_lines > 0 {
        headers.push(("skip_lines".into(), load.ignore_lines.to_string()));
    }
    let mut columns: Vec<String> = load.columns.iter().map(|c| format!("`{c}`")).collect();
    columns.extend(load.set.iter().map(|(c, e)| format!("`{c}` = {e}")));
    if !columns.is_empty() {
        headers.push(("columns".into(), columns.join(", ")));
    }
    headers
}

impl QueryEngine {
    /// Runs `LOAD DATA LOCAL INFILE` (`sql`) on the file the client sends as `data`.
    pub async fn load_local_infile(
        &self,
        session: &Session,
        sql: &str,
        data: BoxStream<'static, std::result::Result<Bytes, String>>,
    ) -> Result<Output> {
        let stmt = basalt_sql::parse_one(sql)?;
        session.access().check_statement(session, &stmt)?;
        let Statement::LoadData(load) = stmt else {
            return Err(BasaltError::Internal("not LOAD DATA LOCAL INFILE".into()));
        };
        if load
            .lines_starting_by
            .as_deref()
            .is_some_and(|s| !s.is_empty())
        {
            return Err(BasaltError::NotSupported(
                "LOAD DATA .. LINES STARTING BY".into(),
            ));
        }
        let database = super::ddl::database_of(session, &load.table.database)?;
        let table = session.stored_name(&load.table.table);
        // Inside a transaction (or with autocommit off, as PyMySQL runs) the load is a write
        // of the transaction, staged as an INSERT is.
        let stmt = Statement::LoadData(load);
        let effect = crate::transaction::Effect::Write;
        let autocommit_before = session.autocommit();
        crate::transaction::before_statement(&self.services, session, &stmt, effect)?;
        let Statement::LoadData(load) = stmt else {
            return Err(BasaltError::Internal("not LOAD DATA LOCAL INFILE".into()));
        };
        let staged = crate::transaction::staged(session);
        match &staged {
            Some(writes) => writes.table(&database, &table)?,
            None => self.services.catalog.table(&database, &table)?,
        };
        let request = basalt_load::StreamLoadRequest {
            database,
            table,
            user: session.user().to_string(),
            host: session.info.host.clone(),
            headers: headers(&load),
            base_url: String::new(),
            max_body_bytes: u64::MAX,
        };
        let result = match staged {
            Some(writes) => {
                let context = crate::transaction::StagedLoad {
                    engine: self,
                    writes,
                };
                basalt_load::stream_load(&context, request, data).await
            }
            None => self.stream_load(request, data).await,
        };
        let outcome = if result.succeeded() {
            Ok(Output::Ok {
                affected_rows: result.number_loaded_rows,
                last_insert_id: 0,
                info: format!(
                    "Records: {}  Deleted: 0  Skipped: {}  Warnings: {}",
                    result.number_total_rows,
                    result.number_filtered_rows,
                    result.number_filtered_rows
                ),
            })
        } else {
            Err(BasaltError::InvalidData(format!(
                "LOAD DATA failed: {} ({} rows read, {} filtered)",
                result.message, result.number_total_rows, result.number_filtered_rows
            )))
        };
        crate::transaction::after_statement(
            &self.services,
            session,
            effect,
            autocommit_before,
            outcome,
        )
    }

    /// LOAD DATA reaching the statement path: its file can only come from the client.
    pub(super) fn load_data_without_file(&self, load: &LoadData) -> Result<Output> {
        Err(BasaltError::NotSupported(if load.local {
            "LOAD DATA LOCAL INFILE from a client that does not send local files \
             (enable local_infile in the client)"
                .into()
        } else {
            "LOAD DATA INFILE of a file on the server: use LOAD DATA LOCAL INFILE, Stream Load \
             or INSERT INTO .. SELECT * FROM local(..)"
                .into()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_loads_ask_for_a_file() {
        assert_eq!(
            local_infile_name("  load data local infile '/tmp/a b.csv' into table t"),
            Some("/tmp/a b.csv".to_string())
        );
        assert_eq!(local_infile_name("LOAD DATA INFILE 'x' INTO TABLE t"), None);
        assert_eq!(local_infile_name("SELECT 1"), None);
        assert_eq!(local_infile_name("LOAD"), None);
    }

    #[test]
    fn clauses_become_stream_load_settings() {
        let Ok(Statement::LoadData(load)) = basalt_sql::parse_one(
            "LOAD DATA LOCAL INFILE 'f' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"' \
             IGNORE 2 LINES (a, @b) SET c = @b + 1",
        ) else {
            panic!("not parsed");
        };
        let h = headers(&load);
        let get = |k: &str| h.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("column_separator"), Some("\\x2c"));
        assert_eq!(get("line_delimiter"), Some("\\x0a"));
        assert_eq!(get("enclose"), Some("\""));
        assert_eq!(get("escape"), Some("\\"));
        assert_eq!(get("skip_lines"), Some("2"));
        assert_eq!(get("columns"), Some("`a`, `b`, `c` = b + 1"));
    }
}
