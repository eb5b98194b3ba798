//! `CREATE PROCEDURE|FUNCTION`, `DROP PROCEDURE|FUNCTION` and `SHOW CREATE PROCEDURE|FUNCTION`.

use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use crate::show::{Col, ResultBuilder};
use crate::statement::ddl::database_of;
use basalt_catalog::{ParameterMode, ProcedureMeta, ProcedureParameter};
use basalt_common::{BasaltError, Result};
use basalt_sql::{CreateProcedure, TableName};

impl QueryEngine {
    pub(crate) fn create_procedure(
        &self,
        session: &Session,
        create: CreateProcedure,
    ) -> Result<Output> {
        let database = database_of(session, &create.name.database)?;
        let mut parameters: Vec<ProcedureParameter> = vec![];
        for p in &create.parameters {
            if parameters
                .iter()
                .any(|seen| seen.name.eq_ignore_ascii_case(&p.name))
            {
                return Err(BasaltError::InvalidDdl(format!(
                    "Duplicate parameter: {}",
                    p.name
                )));
            }
            let mode = match p.mode {
                basalt_sql::ParameterMode::In => ParameterMode::In,
                basalt_sql::ParameterMode::Out => ParameterMode::Out,
                basalt_sql::ParameterMode::InOut => ParameterMode::InOut,
            };
            parameters.push(ProcedureParameter {
                mode,
                name: p.name.clone(),
                data_type: p.data_type.clone(),
            });
        }
        // Every statement must be one Basalt runs, and parse.
        let kind = if create.returns.is_some() {
            "FUNCTION"
        } else {
            "PROCEDURE"
        };
        if create.returns.is_some() {
            let body = basalt_sql::parse_function_body(&create.body)?;
            super::validate::check_body(&body, session.sql_syntax())?;
            super::validate::check_function_body(&body, &create.name.table)?;
        } else {
            let body = basalt_sql::parse_procedure_body(&create.body)?;
            super::validate::check_body(&body, session.sql_syntax())?;
        }
        // The definer is the creating account (CURRENT_USER) unless DEFINER names another,
        // which takes an administrator (MySQL's SET_USER_ID).
        let own = (
            session.info.account.user.clone(),
            session.info.account.host.clone(),
        );
        let (user, host) = match &create.definer {
            Some(user) => (user.user.clone(), user.host.clone()),
            None => own.clone(),
        };
        if (user.as_str(), host.as_str()) != (own.0.as_str(), own.1.as_str())
            && !session.access().is_admin()
        {
            return Err(BasaltError::PrivilegeRequired(
                "SUPER or SET_USER_ID".into(),
            ));
        }
        let definer = format!("{user}@{host}");
        let sql_mode = session
            .variables()
            .get("sql_mode")
            .map(|v| v.as_text())
            .unwrap_or_default();
        let procedure = ProcedureMeta {
            database: database.clone(),
            name: create.name.table.clone(),
            parameters,
            body: create.body,
            definer,
            comment: create.comment,
            deterministic: create.deterministic,
            data_access: create.data_access,
            security: create.security,
            sql_mode,
            created_ms: chrono::Utc::now().timestamp_millis(),
            returns: create.returns,
        };
        if !self
            .services
            .catalog
            .create_procedure(procedure, create.if_not_exists)?
        {
            session
                .info
                .warnings
                .note(1304, format!("{kind} {} already exists", create.name.table));
        }
        Ok(Output::ok())
    }

    pub(crate) fn drop_procedure(
        &self,
        session: &Session,
        name: &TableName,
        if_exists: bool,
        function: bool,
    ) -> Result<Output> {
        let database = database_of(session, &name.database)?;
        let catalog = &self.services.catalog;
        let dropped = match function {
            true => catalog.drop_function(&database, &name.table, if_exists)?,
            false => catalog.drop_procedure(&database, &name.table, if_exists)?,
        };
        if !dropped {
            let kind = if function { "FUNCTION" } else { "PROCEDURE" };
            session.info.warnings.note(
                1305,
                format!("{kind} {database}.{} does not exist", name.table),
            );
        }
        Ok(Output::ok())
    }

    pub(crate) fn show_create_procedure(
        &self,
        session: &Session,
        name: &TableName,
        function: bool,
    ) -> Result<Output> {
        let (procedure, label, create) = match function {
            true => (
                self.find_function(session, name)?,
                "Function",
                "Create Function",
            ),
            false => (
                self.find_procedure(session, name)?,
                "Procedure",
                "Create Procedure",
            ),
        };
        let mut b = ResultBuilder::new(&[
            Col::str(label),
            Col::str("sql_mode"),
            Col::str(create),
            Col::str("character_set_client"),
            Col::str("collation_connection"),
            Col::str("Database Collation"),
        ]);
        b.row(vec![
            procedure.name.clone().into(),
            procedure.sql_mode.clone().into(),
            create_text(&procedure).into(),
            "utf8mb4".into(),
            "utf8mb4_0900_bin".into(),
            "utf8mb4_0900_bin".into(),
        ]);
        Ok(b.into_output())
    }

    /// The procedure `name` names (1305 when there is none).
    pub(crate) fn find_procedure(
        &self,
        session: &Session,
        name: &TableName,
    ) -> Result<std::sync::Arc<ProcedureMeta>> {
        let database = database_of(session, &name.database)?;
        self.services
            .catalog
            .procedure(&database, &name.table)
            .ok_or_else(|| BasaltError::UnknownProcedure(format!("{database}.{}", name.table)))
    }

    /// The stored function `name` names (1305 when there is none).
    pub(crate) fn find_function(
        &self,
        session: &Session,
        name: &TableName,
    ) -> Result<std::sync::Arc<ProcedureMeta>> {
        let database = database_of(session, &name.database)?;
        self.services
            .catalog
            .function(&database, &name.table)
            .ok_or_else(|| unknown_function(&database, &name.table))
    }
}

/// MySQL's 1305 for a stored function.
pub(crate) fn unknown_function(database: &str, name: &str) -> BasaltError {
    BasaltError::Routine {
        code: 1305,
        message: format!("FUNCTION {database}.{name} does not exist"),
    }
}

/// `CREATE DEFINER=.. PROCEDURE ..` (or `FUNCTION .. RETURNS type`) as SHOW CREATE gives it.
pub(crate) fn create_text(p: &ProcedureMeta) -> String {
    let (user, host) = p.definer.split_once('@').unwrap_or((&p.definer, "%"));
    let parameters = p
        .parameters
        .iter()
        .map(|param| {
            let mode = match param.mode {
                _ if p.is_function() => String::new(),
                ParameterMode::In => "IN ".to_string(),
                other => format!("{} ", other.as_str()),
            };
            format!("{mode}{} {}", param.name, param.data_type)
        })
        .collect::<Vec<_>>()
        .join(", ");
    let mut characteristics = String::new();
    if !p.comment.is_empty() {
        characteristics.push_str(&format!(
            "\n    COMMENT '{}'",
            p.comment.replace('\\', "\\\\").replace('\'', "''")
        ));
    }
    if p.deterministic {
        characteristics.push_str("\n    DETERMINISTIC");
    }
    if p.data_access != "CONTAINS SQL" {
        characteristics.push_str(&format!("\n    {}", p.data_access));
    }
    if p.security != "DEFINER" {
        characteristics.push_str(&format!("\n    SQL SECURITY {}", p.security));
    }
    let returns = match &p.returns {
        Some(data_type) => format!(" RETURNS {data_type}"),
        None => String::new(),
    };
    format!(
        "CREATE DEFINER=`{user}`@`{host}` {} `{}`({parameters}){returns}{characteristics}\n{}",
        p.kind(),
        p.name.replace('`', "``"),
        p.body
    )
}
