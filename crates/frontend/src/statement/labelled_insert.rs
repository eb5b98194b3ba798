//! Doris's `INSERT INTO t WITH LABEL l ..`: the INSERT publishes its rows together with a load
//! record under label `l` (one catalog transaction: a label already used in the database fails
//! the INSERT, which then writes nothing). SHOW LOAD lists it as an INSERT; the OK packet
//! reports `{'label':'l', 'status':'VISIBLE', 'txnId':'n'}` as Doris does.

use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use basalt_catalog::LoadJobRecord;
use basalt_common::{BasaltError, Result};
use basalt_query::InsertLabel;
use basalt_sql::ast;
use std::sync::Arc;

impl QueryEngine {
    pub(super) async fn labelled_insert(
        &self,
        session: &Session,
        label: String,
        insert: ast::Statement,
    ) -> Result<Output> {
        if session.info.transaction.is_open() {
            return Err(BasaltError::NotSupported(
                "INSERT .. WITH LABEL inside a transaction (label the transaction: BEGIN WITH LABEL)"
                    .into(),
            ));
        }
        if matches!(&insert, ast::Statement::Insert(i) if i.overwrite) {
            return Err(BasaltError::NotSupported(
                "INSERT OVERWRITE .. WITH LABEL".into(),
            ));
        }
        check_label(&label)?;
        // The sink fills in the table, its transaction id and the counts.
        let record = LoadJobRecord::started(
            label.clone(),
            String::new(),
            String::new(),
            0,
            session.user().to_string(),
            "INSERT",
        );
        let slot = Arc::new(InsertLabel::default());
        slot.set(record);
        session
            .ctx
            .state_ref()
            .write()
            .config_mut()
            .set_extension(slot.clone());
        let written = Box::pin(self.execute_standard(session, insert, false)).await;
        slot.clear();
        match written? {
            Output::Ok {
                affected_rows,
                last_insert_id,
                ..
            } => Ok(Output::Ok {
                affected_rows,
                last_insert_id,
                info: format!(
                    "{{'label':'{label}', 'status':'VISIBLE', 'txnId':'{}'}}",
                    slot.txn_id()
                ),
            }),
            other => Ok(other),
        }
    }
}

/// Doris's label rule: letters, digits, `-` and `_`, at most 128 characters.
fn check_label(label: &str) -> Result<()> {
    let ok = !label.is_empty()
        && label.len() <= 128
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(BasaltError::InvalidData(format!(
            "Incorrect label '{label}': a label is 1 to 128 letters, digits, '-' or '_'"
        )))
    }
}
