//! Administration: accounts and passwords, workload groups and policies and who may use them,
//! query profiles, KILL and the process list.

use super::misrouted;
use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast;
use basalt_sql::Statement;

impl QueryEngine {
    /// Administrative statements of Basalt's own grammar.
    pub(super) fn execute_admin(&self, session: &Session, stmt: Statement) -> Result<Output> {
        let catalog = &self.services.catalog;
        match stmt {
            Statement::CreateWorkloadGroup {
                name,
                if_not_exists,
                properties,
            } => crate::workload_groups::create(
                &self.services.workload,
                catalog.as_ref(),
                session,
                &name,
                if_not_exists,
                &properties,
            ),
            Statement::AlterWorkloadGroup { name, properties } => crate::workload_groups::alter(
                &self.services.workload,
                catalog.as_ref(),
                session,
                &name,
                &properties,
            ),
            Statement::DropWorkloadGroup { name, if_exists } => crate::workload_groups::drop(
                &self.services.workload,
                catalog.as_ref(),
                session,
                &name,
                if_exists,
            ),
            Statement::CreateWorkloadPolicy {
                name,
                if_not_exists,
                conditions,
                actions,
                properties,
            } => crate::workload_policies::create(
                &self.services.workload,
                self.services.catalog.as_ref(),
                session,
                crate::workload_policies::CreatePolicy {
                    name: &name,
                    if_not_exists,
                    conditions: &conditions,
                    actions: &actions,
                    properties: &properties,
                },
            ),
            Statement::AlterWorkloadPolicy { name, properties } => crate::workload_policies::alter(
                &self.services.workload,
                self.services.catalog.as_ref(),
                session,
                &name,
                &properties,
            ),
            Statement::DropWorkloadPolicy { name, if_exists } => crate::workload_policies::drop(
                &self.services.workload,
                self.services.catalog.as_ref(),
                session,
                &name,
                if_exists,
            ),
            Statement::GrantWorkloadGroup {
                group,
                user,
                revoke,
            } => crate::workload_policies::grant(
                &self.services.workload,
                self.services.catalog.as_ref(),
                session,
                &group,
                &user,
                revoke,
            ),
            Statement::SetUserProperty { user, properties } => {
                crate::workload_policies::set_property(
                    &self.services.workload,
                    self.services.catalog.as_ref(),
                    session,
                    user.as_deref(),
                    &properties,
                )
            }
            Statement::ShowQueryProfile { query_id } => match query_id {
                None => Ok(crate::profile::show_list(
                    &self.services.profiles,
                    session.access().viewer().as_deref(),
                )),
                Some(id) => crate::profile::show_one(
                    &self.services.profiles,
                    session.access().viewer().as_deref(),
                    &id,
                ),
            },
            Statement::CreateUser {
                user,
                password,
                role,
                if_not_exists,
            } => {
                if let Some(r) = &role {
                    if catalog.role(r).is_none() {
                        return Err(BasaltError::UnknownRole(r.clone()));
                    }
                }
                let created = catalog.create_user(
                    &user.user,
                    &user.host,
                    password.as_deref(),
                    if_not_exists,
                )?;
                if let (true, Some(r)) = (created, role) {
                    catalog.update_user(&user.user, &user.host, &mut |m| {
                        m.roles.insert(r.clone());
                    })?;
                }
                Ok(Output::ok())
            }
            Statement::DropUser { users, if_exists } => {
                for u in users {
                    catalog.drop_user(&u.user, &u.host, if_exists)?;
                }
                Ok(Output::ok())
            }
            Statement::SetPassword { user, password } => {
                let (name, host) = match user {
                    // Another account's password needs GRANT_PRIV (checked in `access`).
                    Some(u) => (u.user, u.host),
                    None => {
                        let me = catalog
                            .find_user(session.user(), session.host())
                            .ok_or_else(|| BasaltError::Internal("current user vanished".into()))?;
                        (me.user, me.host)
                    }
                };
                catalog.set_password(&name, &host, &password)?;
                Ok(Output::ok())
            }
            _ => Err(misrouted()),
        }
    }

    /// Administrative statements of the MySQL grammar.
    pub(super) fn execute_standard_admin(
        &self,
        session: &Session,
        stmt: ast::Statement,
    ) -> Result<Output> {
        use ast::Statement as S;
        match stmt {
            S::Kill { modifier, id } => {
                crate::process_admin::kill(&self.services, session, modifier, id)
            }
            S::ShowProcessList { full } => Ok(crate::process_admin::show_processlist(
                &self.services,
                session,
                full,
            )),
            _ => Err(misrouted()),
        }
    }
}
