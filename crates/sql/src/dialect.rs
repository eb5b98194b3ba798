//! Basalt's SQL dialect: `sqlparser`'s MySQL dialect with MySQL's own operator rules where the
//! two differ. `DIV` binds like `*`, `/` and `%` and associates to the left (`1000 DIV 300 *
//! 300` is 900; sqlparser's MySQL dialect parses everything right of `DIV` as its divisor).
//! Version comments (`/*!50700 ... */`) are expanded by [`crate::lexer`], by version, so the
//! tokenizer here leaves them as comments.

use sqlparser::ast::{BinaryOperator, Expr, Statement};
use sqlparser::dialect::{Dialect, MySqlDialect};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use std::any::TypeId;

/// MySQL as Basalt parses it. It reports itself as [`MySqlDialect`], so every MySQL-only rule
/// of the parser applies.
#[derive(Debug)]
pub struct BasaltDialect {
    mysql: MySqlDialect,
    /// `\` escapes in string literals (off under `sql_mode` NO_BACKSLASH_ESCAPES).
    backslash_escapes: bool,
}

impl Default for BasaltDialect {
    fn default() -> Self {
        BasaltDialect::new(true)
    }
}

impl BasaltDialect {
    pub fn new(backslash_escapes: bool) -> BasaltDialect {
        BasaltDialect {
            mysql: MySqlDialect {},
            backslash_escapes,
        }
    }
}

impl Dialect for BasaltDialect {
    fn supports_string_literal_backslash_escape(&self) -> bool {
        self.backslash_escapes
    }

    fn dialect(&self) -> TypeId {
        TypeId::of::<MySqlDialect>()
    }

    fn supports_multiline_comment_hints(&self) -> bool {
        false
    }

    /// `GROUP BY ROLLUP(a, b)`, `CUBE(..)`, `GROUPING SETS ((..), ..)` (Doris).
    fn supports_group_by_expr(&self) -> bool {
        true
    }

    /// `GROUP BY a, b WITH ROLLUP` (MySQL).
    fn supports_group_by_with_modifier(&self) -> bool {
        true
    }

    /// `SELECT 1 FOR UPDATE`, `.. FOR SHARE`, `.. LOCK IN SHARE MODE`: after a select item
    /// without FROM these words begin a locking clause (`crate::locking_reads`), not an alias.
    fn is_select_item_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        let next_is = |parser: &Parser, word: Keyword| matches!(&parser.peek_token().token, sqlparser::tokenizer::Token::Word(w) if w.keyword == word);
        let locking = match kw {
            Keyword::FOR => next_is(parser, Keyword::UPDATE) || next_is(parser, Keyword::SHARE),
            Keyword::LOCK => next_is(parser, Keyword::IN),
            _ => false,
        };
        if !explicit && locking {
            return false;
        }
        self.mysql.is_select_item_alias(explicit, kw, parser)
    }

    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        if !parser.parse_keyword(Keyword::DIV) {
            return None;
        }
        // `precedence` is DIV's own (that of `*`): the divisor is what binds tighter than it,
        // and the next operator of the same level takes this product as its left side.
        Some(
            parser
                .parse_subexpr(precedence)
                .map(|right| Expr::BinaryOp {
                    left: Box::new(expr.clone()),
                    op: BinaryOperator::MyIntegerDivide,
                    right: Box::new(right),
                }),
        )
    }

    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        self.mysql.parse_statement(parser)
    }

    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        self.mysql.is_table_factor_alias(explicit, kw, parser)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        self.mysql.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.mysql.is_identifier_part(ch)
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.mysql.is_delimited_identifier_start(ch)
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.mysql.identifier_quote_style(identifier)
    }

    fn supports_string_literal_concatenation(&self) -> bool {
        self.mysql.supports_string_literal_concatenation()
    }

    fn ignores_wildcard_escapes(&self) -> bool {
        self.mysql.ignores_wildcard_escapes()
    }

    fn supports_numeric_prefix(&self) -> bool {
        self.mysql.supports_numeric_prefix()
    }

    fn supports_bitwise_shift_operators(&self) -> bool {
        self.mysql.supports_bitwise_shift_operators()
    }

    fn require_interval_qualifier(&self) -> bool {
        self.mysql.require_interval_qualifier()
    }

    fn supports_limit_comma(&self) -> bool {
        self.mysql.supports_limit_comma()
    }

    fn supports_create_table_select(&self) -> bool {
        self.mysql.supports_create_table_select()
    }

    fn supports_insert_set(&self) -> bool {
        self.mysql.supports_insert_set()
    }

    fn supports_user_host_grantee(&self) -> bool {
        self.mysql.supports_user_host_grantee()
    }

    fn supports_table_hints(&self) -> bool {
        self.mysql.supports_table_hints()
    }

    fn requires_single_line_comment_whitespace(&self) -> bool {
        self.mysql.requires_single_line_comment_whitespace()
    }

    fn supports_match_against(&self) -> bool {
        self.mysql.supports_match_against()
    }

    fn supports_select_modifiers(&self) -> bool {
        self.mysql.supports_select_modifiers()
    }

    fn supports_set_names(&self) -> bool {
        self.mysql.supports_set_names()
    }

    fn supports_comma_separated_set_assignments(&self) -> bool {
        self.mysql.supports_comma_separated_set_assignments()
    }

    fn supports_update_order_by(&self) -> bool {
        self.mysql.supports_update_order_by()
    }

    fn supports_data_type_signed_suffix(&self) -> bool {
        self.mysql.supports_data_type_signed_suffix()
    }

    fn supports_cross_join_constraint(&self) -> bool {
        self.mysql.supports_cross_join_constraint()
    }

    fn supports_double_ampersand_operator(&self) -> bool {
        self.mysql.supports_double_ampersand_operator()
    }

    fn supports_binary_kw_as_cast(&self) -> bool {
        self.mysql.supports_binary_kw_as_cast()
    }

    fn supports_comment_optimizer_hint(&self) -> bool {
        self.mysql.supports_comment_optimizer_hint()
    }

    fn supports_constraint_keyword_without_name(&self) -> bool {
        self.mysql.supports_constraint_keyword_without_name()
    }

    fn supports_key_column_option(&self) -> bool {
        self.mysql.supports_key_column_option()
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Statement};
    use sqlparser::ast::{Expr, SelectItem, SetExpr};

    /// `expr` with every binary operation in parentheses (the parser's own parentheses dropped).
    fn tree(expr: &Expr) -> String {
        match expr {
            Expr::BinaryOp { left, op, right } => format!("({} {op} {})", tree(left), tree(right)),
            Expr::Nested(inner) => tree(inner),
            other => other.to_string(),
        }
    }

    fn shape(expr: &str) -> String {
        let Statement::Standard(stmt) = parse_one(&format!("SELECT {expr}")).expect("parses")
        else {
            panic!("not a standard statement");
        };
        let sqlparser::ast::Statement::Query(q) = *stmt else {
            panic!("not a query");
        };
        let SetExpr::Select(select) = *q.body else {
            panic!("not a select");
        };
        match &select.projection[0] {
            SelectItem::UnnamedExpr(e) => tree(e),
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn div_binds_like_multiplication_from_the_left() {
        assert_eq!(shape("1000 DIV 300 * 300"), "((1000 DIV 300) * 300)");
        assert_eq!(shape("7 DIV 2 DIV 2"), "((7 DIV 2) DIV 2)");
        assert_eq!(shape("1 + 7 DIV 2"), "(1 + (7 DIV 2))");
        assert_eq!(shape("7 DIV 2 + 1"), "((7 DIV 2) + 1)");
        assert_eq!(shape("8 % 3 DIV 2"), "((8 % 3) DIV 2)");
    }
}
