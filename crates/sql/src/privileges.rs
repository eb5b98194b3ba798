//! The privilege statements: GRANT/REVOKE of privileges (MySQL's and Doris's `*_PRIV` names) on
//! `*.*`, `db.*` and `db.tbl` to accounts or roles, GRANT/REVOKE of roles, CREATE/DROP ROLE,
//! SHOW GRANTS, SHOW ROLES and SET ROLE.

use crate::parser::parse_user_name;
use crate::statement::*;
use crate::words::{eat_word, eat_words, expect_word, peek_nth_word, peek_word};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// Parses a privilege statement at the parser's position, or returns `None` (nothing
/// consumed) when the statement is something else.
pub fn parse_privilege_statement(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    if peek_word(p, "GRANT") || peek_word(p, "REVOKE") {
        return parse_grant(p).map(Some);
    }
    if peek_word(p, "CREATE") && peek_nth_word(p, 1, "ROLE") {
        p.next_token();
        p.next_token();
        let if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
        let names = p.parse_comma_separated(role_name)?;
        return Ok(Some(Statement::CreateRole {
            names,
            if_not_exists,
        }));
    }
    if peek_word(p, "DROP") && peek_nth_word(p, 1, "ROLE") {
        p.next_token();
        p.next_token();
        let if_exists = eat_words(p, &["IF", "EXISTS"]);
        let names = p.parse_comma_separated(role_name)?;
        return Ok(Some(Statement::DropRole { names, if_exists }));
    }
    if peek_word(p, "SHOW") && peek_nth_word(p, 1, "ROLES") {
        p.next_token();
        p.next_token();
        return Ok(Some(Statement::ShowRoles));
    }
    if peek_word(p, "SHOW")
        && (peek_nth_word(p, 1, "GRANTS")
            || (peek_nth_word(p, 1, "ALL") && peek_nth_word(p, 2, "GRANTS")))
    {
        p.next_token();
        let all = eat_word(p, "ALL");
        expect_word(p, "GRANTS")?;
        let mut user = None;
        if eat_word(p, "FOR") {
            if !eat_current_user(p) {
                user = Some(parse_user_name(p)?);
            }
            // MySQL's `USING role, ..` (show as if these roles were active): accepted.
            if eat_word(p, "USING") {
                p.parse_comma_separated(role_name)?;
            }
        }
        return Ok(Some(Statement::ShowGrants { user, all }));
    }
    if peek_word(p, "SET") && peek_nth_word(p, 1, "ROLE") {
        p.next_token();
        p.next_token();
        let roles = if eat_word(p, "DEFAULT") {
            RoleSelection::Default
        } else if eat_word(p, "NONE") {
            RoleSelection::None
        } else if eat_word(p, "ALL") {
            let except = if eat_word(p, "EXCEPT") {
                p.parse_comma_separated(role_name)?
            } else {
                Vec::new()
            };
            RoleSelection::All { except }
        } else {
            RoleSelection::Only(p.parse_comma_separated(role_name)?)
        };
        return Ok(Some(Statement::SetRole { roles }));
    }
    Ok(None)
}

/// `CURRENT_USER` or `CURRENT_USER()`.
fn eat_current_user(p: &mut Parser) -> bool {
    if !eat_word(p, "CURRENT_USER") {
        return false;
    }
    if p.peek_token().token == Token::LParen && p.peek_nth_token(1).token == Token::RParen {
        p.next_token();
        p.next_token();
    }
    true
}

/// `GRANT privs ON object TO grantees [WITH GRANT OPTION]`, `GRANT roles TO users`, and the
/// REVOKE forms with FROM.
fn parse_grant(p: &mut Parser) -> Result<Statement, ParserError> {
    let revoke = eat_word(p, "REVOKE");
    if !revoke {
        expect_word(p, "GRANT")?;
    }
    let items = p.parse_comma_separated(privilege_or_role)?;
    if eat_word(p, "ON") {
        let privileges = items
            .into_iter()
            .map(|i| match i {
                Item::Privilege(name) => Ok(name),
                Item::Quoted(name) => Err(ParserError::ParserError(format!(
                    "'{name}' is not a privilege"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        eat_word(p, "TABLE");
        let object = privilege_object(p)?;
        expect_word(p, if revoke { "FROM" } else { "TO" })?;
        let grantees = p.parse_comma_separated(grantee)?;
        let with_grant_option = !revoke && eat_words(p, &["WITH", "GRANT", "OPTION"]);
        return Ok(Statement::Grant {
            privileges,
            object,
            grantees,
            with_grant_option,
            revoke,
        });
    }
    let roles = items
        .into_iter()
        .map(|i| match i {
            Item::Privilege(name) => name.to_ascii_lowercase(),
            Item::Quoted(name) => name,
        })
        .collect();
    expect_word(p, if revoke { "FROM" } else { "TO" })?;
    let users = p.parse_comma_separated(parse_user_name)?;
    Ok(Statement::GrantRole {
        roles,
        users,
        revoke,
    })
}

/// One entry of a GRANT list before `ON` decides whether it names privileges or roles.
enum Item {
    /// Words as written, upper-cased and joined by one space (`GRANT OPTION`, `SELECT_PRIV`).
    Privilege(String),
    /// A quoted name: a role.
    Quoted(String),
}

fn privilege_or_role(p: &mut Parser) -> Result<Item, ParserError> {
    let first = p.next_token();
    let mut words = match first.token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => {
            // A role may carry a host part (`'r'@'%'`): ignored, roles are global.
            if p.peek_token().token == Token::AtSign {
                p.next_token();
                p.next_token();
            } else if matches!(&p.peek_token().token, Token::Word(w) if w.value.starts_with('@')) {
                p.next_token();
            }
            return Ok(Item::Quoted(s));
        }
        Token::Word(w) => vec![w.value.to_ascii_uppercase()],
        _ => return p.expected("a privilege or role name", first),
    };
    loop {
        let next = p.peek_token();
        match &next.token {
            Token::Word(w) if !w.value.eq_ignore_ascii_case("ON") => {
                if w.value.eq_ignore_ascii_case("TO") || w.value.eq_ignore_ascii_case("FROM") {
                    break;
                }
                words.push(w.value.to_ascii_uppercase());
                p.next_token();
            }
            Token::LParen => {
                return Err(ParserError::ParserError(
                    "column-level privileges are not supported; grant on the table".into(),
                ))
            }
            _ => break,
        }
    }
    Ok(Item::Privilege(words.join(" ")))
}

/// `*`, `*.*`, `db.*`, `db.tbl`, `tbl`, and Doris's catalog-qualified `ctl.db.tbl`.
fn privilege_object(p: &mut Parser) -> Result<PrivilegeObject, ParserError> {
    let mut parts = vec![object_part(p)?];
    while p.consume_token(&Token::Period) {
        parts.push(object_part(p)?);
    }
    if parts.len() == 3 {
        let catalog = parts.remove(0);
        if !matches!(catalog.as_deref(), None | Some("internal")) {
            return Err(ParserError::ParserError(format!(
                "unknown catalog '{}': only the internal catalog exists",
                catalog.unwrap_or_default()
            )));
        }
    }
    match parts.as_slice() {
        [None] => Ok(PrivilegeObject::CurrentDatabase),
        [Some(t)] => Ok(PrivilegeObject::Table {
            database: None,
            table: t.clone(),
        }),
        [None, None] => Ok(PrivilegeObject::Global),
        [Some(db), None] => Ok(PrivilegeObject::Database(db.clone())),
        [Some(db), Some(t)] => Ok(PrivilegeObject::Table {
            database: Some(db.clone()),
            table: t.clone(),
        }),
        _ => Err(ParserError::ParserError(
            "expected *.*, db.* or db.table after ON".into(),
        )),
    }
}

/// A name or `*` (None).
fn object_part(p: &mut Parser) -> Result<Option<String>, ParserError> {
    let t = p.next_token();
    match t.token {
        Token::Mul => Ok(None),
        Token::Word(w) => Ok(Some(w.value)),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(Some(s)),
        _ => p.expected("*, a database or a table name", t),
    }
}

/// `'u'@'h'` or `ROLE 'r'`.
fn grantee(p: &mut Parser) -> Result<Grantee, ParserError> {
    if eat_word(p, "ROLE") {
        return Ok(Grantee::Role(role_name(p)?));
    }
    parse_user_name(p).map(Grantee::User)
}

/// A role name: quoted as written, or an identifier (lower-cased).
pub(crate) fn role_name(p: &mut Parser) -> Result<String, ParserError> {
    let t = p.next_token();
    let name = match t.token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s,
        Token::Word(w) if w.quote_style.is_some() => w.value,
        Token::Word(w) => w.value.to_ascii_lowercase(),
        _ => return p.expected("a role name", t),
    };
    if p.peek_token().token == Token::AtSign {
        p.next_token();
        p.next_token();
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Grantee, PrivilegeObject, RoleSelection, Statement};

    #[test]
    fn grants_of_privileges_and_roles() {
        match parse_one("GRANT SELECT, INSERT, GRANT OPTION ON db.* TO 'u'@'%' WITH GRANT OPTION")
            .unwrap()
        {
            Statement::Grant {
                privileges,
                object,
                grantees,
                with_grant_option,
                revoke,
            } => {
                assert_eq!(privileges, vec!["SELECT", "INSERT", "GRANT OPTION"]);
                assert_eq!(object, PrivilegeObject::Database("db".into()));
                assert!(matches!(&grantees[0], Grantee::User(u) if u.user == "u"));
                assert!(with_grant_option && !revoke);
            }
            other => panic!("{other:?}"),
        }
        match parse_one("REVOKE LOAD_PRIV ON internal.d.t FROM ROLE 'r'").unwrap() {
            Statement::Grant {
                object, grantees, ..
            } => {
                assert_eq!(
                    object,
                    PrivilegeObject::Table {
                        database: Some("d".into()),
                        table: "t".into()
                    }
                );
                assert_eq!(grantees, vec![Grantee::Role("r".into())]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_one("GRANT ALL PRIVILEGES ON *.* TO u").unwrap(),
            Statement::Grant {
                object: PrivilegeObject::Global,
                ..
            }
        ));
        match parse_one("GRANT 'analyst', 'ops' TO 'u'@'%', v").unwrap() {
            Statement::GrantRole {
                roles,
                users,
                revoke,
            } => {
                assert_eq!(roles, vec!["analyst", "ops"]);
                assert_eq!(users.len(), 2);
                assert!(!revoke);
            }
            other => panic!("{other:?}"),
        }
        assert!(parse_one("GRANT SELECT (a) ON t TO u").is_err());
    }

    #[test]
    fn roles_and_show_grants() {
        assert!(matches!(
            parse_one("CREATE ROLE IF NOT EXISTS r1, 'R2'").unwrap(),
            Statement::CreateRole { names, if_not_exists: true } if names == ["r1", "R2"]
        ));
        assert!(matches!(
            parse_one("SHOW GRANTS FOR CURRENT_USER()").unwrap(),
            Statement::ShowGrants {
                user: None,
                all: false
            }
        ));
        assert!(matches!(
            parse_one("SHOW ALL GRANTS").unwrap(),
            Statement::ShowGrants { all: true, .. }
        ));
        assert!(matches!(
            parse_one("SET ROLE ALL EXCEPT r1").unwrap(),
            Statement::SetRole { roles: RoleSelection::All { except } } if except == ["r1"]
        ));
        assert!(matches!(
            parse_one("SET ROLE NONE").unwrap(),
            Statement::SetRole {
                roles: RoleSelection::None
            }
        ));
    }
}
