//! Workload group statements (Doris syntax): CREATE / ALTER / DROP WORKLOAD GROUP and
//! SHOW WORKLOAD GROUPS.

use crate::statement::Statement;
use crate::words::{eat_word, eat_words, peek_nth_word, peek_word, string_literal};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// A workload group statement, if the parser is at one.
pub fn parse_workload_group(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
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
}
