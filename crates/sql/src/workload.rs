//! Workload group statements (Doris syntax): CREATE / ALTER / DROP WORKLOAD GROUP, SHOW
//! WORKLOAD GROUPS, CREATE / ALTER / DROP WORKLOAD POLICY, GRANT / REVOKE USAGE_PRIV ON
//! WORKLOAD GROUP, and SET PROPERTY (a user's default workload group).

use crate::statement::{PolicyAction, PolicyCondition, Statement};
use crate::words::{eat_word, eat_words, expect_word, peek_nth_word, peek_word, string_literal};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// A workload group or policy statement, a workload group grant or SET PROPERTY, if the parser
/// is at one.
pub fn parse_workload_statement(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    if let Some(stmt) = parse_workload_policy(p)? {
        return Ok(Some(stmt));
    }
    if let Some(stmt) = parse_group_grant(p)? {
        return Ok(Some(stmt));
    }
    if eat_words(p, &["SET", "PROPERTY"]) {
        let user = if eat_word(p, "FOR") {
            Some(group_name_as_written(p)?)
        } else {
            None
        };
        let properties = p.parse_comma_separated(|p| {
            let key = string_literal(p)?;
            p.expect_token(&Token::Eq)?;
            Ok((key.to_ascii_lowercase(), string_literal(p)?))
        })?;
        return Ok(Some(Statement::SetUserProperty { user, properties }));
    }
    parse_workload_group(p)
}

fn parse_workload_group(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    let at_group = |p: &Parser| peek_nth_word(p, 1, "WORKLOAD") && peek_nth_word(p, 2, "GROUP");
    if peek_word(p, "CREATE") && at_group(p) {
        eat_words(p, &["CREATE", "WORKLOAD", "GROUP"]);
        let if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
        let name = group_name(p)?;
        let properties = if eat_word(p, "PROPERTIES") {
            crate::ddl::parse_properties(p)?
        } else {
            Vec::new()
        };
        return Ok(Some(Statement::CreateWorkloadGroup {
            name,
            if_not_exists,
            properties,
        }));
    }
    if peek_word(p, "ALTER") && at_group(p) {
        eat_words(p, &["ALTER", "WORKLOAD", "GROUP"]);
        let name = group_name(p)?;
        if !eat_word(p, "PROPERTIES") {
            return p.expected("PROPERTIES", p.peek_token());
        }
        let properties = crate::ddl::parse_properties(p)?;
        return Ok(Some(Statement::AlterWorkloadGroup { name, properties }));
    }
    if peek_word(p, "DROP") && at_group(p) {
        eat_words(p, &["DROP", "WORKLOAD", "GROUP"]);
        let if_exists = eat_words(p, &["IF", "EXISTS"]);
        let name = group_name(p)?;
        return Ok(Some(Statement::DropWorkloadGroup { name, if_exists }));
    }
    if eat_words(p, &["SHOW", "WORKLOAD", "GROUPS"]) {
        let like = if eat_word(p, "LIKE") {
            Some(string_literal(p)?)
        } else {
            None
        };
        return Ok(Some(Statement::ShowWorkloadGroups { like }));
    }
    Ok(None)
}

fn parse_workload_policy(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    let at_policy = |p: &Parser| peek_nth_word(p, 1, "WORKLOAD") && peek_nth_word(p, 2, "POLICY");
    if peek_word(p, "CREATE") && at_policy(p) {
        eat_words(p, &["CREATE", "WORKLOAD", "POLICY"]);
        let if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
        let name = group_name(p)?;
        expect_word(p, "CONDITIONS")?;
        p.expect_token(&Token::LParen)?;
        let conditions = p.parse_comma_separated(parse_condition)?;
        p.expect_token(&Token::RParen)?;
        expect_word(p, "ACTIONS")?;
        p.expect_token(&Token::LParen)?;
        let actions = p.parse_comma_separated(parse_action)?;
        p.expect_token(&Token::RParen)?;
        let properties = if eat_word(p, "PROPERTIES") {
            crate::ddl::parse_properties(p)?
        } else {
            Vec::new()
        };
        return Ok(Some(Statement::CreateWorkloadPolicy {
            name,
            if_not_exists,
            conditions,
            actions,
            properties,
        }));
    }
    if peek_word(p, "ALTER") && at_policy(p) {
        eat_words(p, &["ALTER", "WORKLOAD", "POLICY"]);
        let name = group_name(p)?;
        expect_word(p, "PROPERTIES")?;
        let properties = crate::ddl::parse_properties(p)?;
        return Ok(Some(Statement::AlterWorkloadPolicy { name, properties }));
    }
    if peek_word(p, "DROP") && at_policy(p) {
        eat_words(p, &["DROP", "WORKLOAD", "POLICY"]);
        let if_exists = eat_words(p, &["IF", "EXISTS"]);
        let name = group_name(p)?;
        return Ok(Some(Statement::DropWorkloadPolicy { name, if_exists }));
    }
    Ok(None)
}

/// `metric op value`, e.g. `query_time > 3000` or `username = 'etl'`.
fn parse_condition(p: &mut Parser) -> Result<PolicyCondition, ParserError> {
    let metric = group_name(p)?;
    let tok = p.next_token();
    let op = match &tok.token {
        Token::Gt => ">",
        Token::Lt => "<",
        Token::Eq => "=",
        Token::GtEq => ">=",
        Token::LtEq => "<=",
        _ => return p.expected("a comparison (>, <, =, >=, <=)", tok),
    };
    let tok = p.next_token();
    let value = match tok.token {
        Token::Number(n, _) => n,
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s,
        Token::Word(w) => w.value,
        _ => return p.expected("a value", tok),
    };
    Ok(PolicyCondition {
        metric,
        op: op.to_string(),
        value,
    })
}

/// `cancel_query`, or `move_query_to_group 'g'` (an action and its quoted argument).
fn parse_action(p: &mut Parser) -> Result<PolicyAction, ParserError> {
    let action = group_name(p)?;
    let argument = match &p.peek_token().token {
        Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) => Some(string_literal(p)?),
        _ => None,
    };
    Ok(PolicyAction { action, argument })
}

/// `GRANT USAGE_PRIV ON WORKLOAD GROUP 'g' TO 'u'@'h'` / `REVOKE .. FROM ..`.
fn parse_group_grant(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    let revoke = peek_word(p, "REVOKE");
    let at_grant = (peek_word(p, "GRANT") || revoke)
        && peek_nth_word(p, 2, "ON")
        && peek_nth_word(p, 3, "WORKLOAD")
        && peek_nth_word(p, 4, "GROUP");
    if !at_grant {
        return Ok(None);
    }
    p.next_token();
    let privilege = group_name(p)?;
    if privilege != "usage_priv" {
        return Err(ParserError::ParserError(format!(
            "workload groups take only USAGE_PRIV, not {}",
            privilege.to_ascii_uppercase()
        )));
    }
    eat_words(p, &["ON", "WORKLOAD", "GROUP"]);
    let group = group_name(p)?;
    expect_word(p, if revoke { "FROM" } else { "TO" })?;
    let user = crate::parser::parse_user_name(p)?;
    Ok(Some(Statement::GrantWorkloadGroup {
        group,
        user,
        revoke,
    }))
}

/// A user name after `FOR`: a quoted string or an identifier, as written.
fn group_name_as_written(p: &mut Parser) -> Result<String, ParserError> {
    let tok = p.next_token();
    match tok.token {
        Token::Word(w) => Ok(w.value),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s),
        _ => p.expected("a user name", tok),
    }
}

/// A group name: an identifier or a quoted string, kept as written (lower-cased).
fn group_name(p: &mut Parser) -> Result<String, ParserError> {
    let tok = p.next_token();
    match &tok.token {
        Token::Word(w) => Ok(w.value.to_ascii_lowercase()),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s.to_ascii_lowercase()),
        _ => p.expected("a workload group name", tok),
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Statement};

    #[test]
    fn workload_group_statements() {
        match parse_one(
            "CREATE WORKLOAD GROUP IF NOT EXISTS g1 PROPERTIES (\"memory_limit\" = \"10%\", 'max_concurrency'='2')",
        )
        .unwrap()
        {
            Statement::CreateWorkloadGroup {
                name,
                if_not_exists,
                properties,
            } => {
                assert_eq!(name, "g1");
                assert!(if_not_exists);
                assert_eq!(properties.len(), 2);
                assert_eq!(properties[1], ("max_concurrency".into(), "2".into()));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_one("alter workload group 'G1' properties ('cpu_share'='10')").unwrap(),
            Statement::AlterWorkloadGroup { name, .. } if name == "g1"
        ));
        assert!(matches!(
            parse_one("DROP WORKLOAD GROUP IF EXISTS g1").unwrap(),
            Statement::DropWorkloadGroup {
                if_exists: true,
                ..
            }
        ));
        assert!(matches!(
            parse_one("SHOW WORKLOAD GROUPS LIKE 'g%'").unwrap(),
            Statement::ShowWorkloadGroups { like: Some(l) } if l == "g%"
        ));
        assert!(parse_one("ALTER WORKLOAD GROUP g1").is_err());
    }

    #[test]
    fn workload_policies_grants_and_user_properties() {
        match parse_one(
            "CREATE WORKLOAD POLICY IF NOT EXISTS slow CONDITIONS(query_time > 3000, \
             be_scan_rows >= 10) ACTIONS(move_query_to_group 'batch') \
             PROPERTIES('enabled'='true', 'priority'='2', 'workload_group'='normal')",
        )
        .unwrap()
        {
            Statement::CreateWorkloadPolicy {
                name,
                if_not_exists,
                conditions,
                actions,
                properties,
            } => {
                assert_eq!(name, "slow");
                assert!(if_not_exists);
                assert_eq!(conditions.len(), 2);
                assert_eq!(
                    (conditions[1].metric.as_str(), conditions[1].op.as_str()),
                    ("be_scan_rows", ">=")
                );
                assert_eq!(conditions[0].value, "3000");
                assert_eq!(actions[0].action, "move_query_to_group");
                assert_eq!(actions[0].argument.as_deref(), Some("batch"));
                assert_eq!(properties.len(), 3);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_one("create workload policy p conditions(username = 'etl') actions(cancel_query)").unwrap(),
            Statement::CreateWorkloadPolicy { actions, .. } if actions[0].argument.is_none()
        ));
        assert!(parse_one(
            "CREATE WORKLOAD POLICY p CONDITIONS(query_time ~ 3) ACTIONS(cancel_query)"
        )
        .is_err());
        assert!(matches!(
            parse_one("DROP WORKLOAD POLICY IF EXISTS p").unwrap(),
            Statement::DropWorkloadPolicy {
                if_exists: true,
                ..
            }
        ));
        assert!(matches!(
            parse_one("ALTER WORKLOAD POLICY p PROPERTIES('enabled'='false')").unwrap(),
            Statement::AlterWorkloadPolicy { .. }
        ));
        match parse_one("GRANT USAGE_PRIV ON WORKLOAD GROUP 'g1' TO 'ann'@'%'").unwrap() {
            Statement::GrantWorkloadGroup {
                group,
                user,
                revoke,
            } => {
                assert_eq!(
                    (group.as_str(), user.user.as_str(), revoke),
                    ("g1", "ann", false)
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_one("REVOKE USAGE_PRIV ON WORKLOAD GROUP '%' FROM 'ann'").unwrap(),
            Statement::GrantWorkloadGroup { revoke: true, .. }
        ));
        assert!(parse_one("GRANT SELECT_PRIV ON WORKLOAD GROUP 'g1' TO 'ann'").is_err());
        match parse_one("SET PROPERTY FOR 'ann' 'default_workload_group' = 'g1'").unwrap() {
            Statement::SetUserProperty { user, properties } => {
                assert_eq!(user.as_deref(), Some("ann"));
                assert_eq!(
                    properties,
                    vec![("default_workload_group".into(), "g1".into())]
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
