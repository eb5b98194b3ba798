//! Basalt's SQL dialect: `sqlparser`'s MySQL dialect with MySQL's own operator rules where the
//! two differ. `DIV` binds like `*`, `/` and `%` and associates to the left (`1000 DIV 300 *
//! 300` is 900; sqlparser's MySQL dialect parses everything right of `DIV` as its divisor).
//! `a MOD b` is `a % b`, of the same level (sqlparser reads `MOD` after an operand as an alias).
//! The binding strength of every other operator follows MySQL's precedence table
//! ([`BasaltDialect::get_next_precedence`]).
//! Version comments (`/*!50700 ... */`) are expanded by [`crate::lexer`], by version, so the
//! tokenizer here leaves them as comments.
//! Doris's lambdas (`x -> x + 1`, `(x, y) -> x + y`) parse in a statement whose text has an
//! arrow that is not a JSON path (`col -> '$.a'`, MySQL's JSON_EXTRACT): [`lambda_arrows`].

use sqlparser::ast::{BinaryOperator, Expr, Ident, Statement, UnaryOperator};
use sqlparser::dialect::{Dialect, MySqlDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan};
use std::any::TypeId;

/// The parts of `sql_mode` that change how text parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlSyntax {
    /// `\` escapes in string literals (off under NO_BACKSLASH_ESCAPES).
    pub backslash_escapes: bool,
    /// `||` concatenates and binds tighter than `*` (PIPES_AS_CONCAT, ANSI); otherwise it is
    /// OR and binds like OR.
    pub pipes_as_concat: bool,
}

impl Default for SqlSyntax {
    fn default() -> Self {
        SqlSyntax {
            backslash_escapes: true,
            pipes_as_concat: false,
        }
    }
}

impl SqlSyntax {
    /// The syntax a session with this `sql_mode` parses.
    pub fn from_sql_mode(sql_mode: &str) -> SqlSyntax {
        let has = |mode: &str| {
            sql_mode
                .split(',')
                .any(|m| m.trim().eq_ignore_ascii_case(mode))
        };
        SqlSyntax {
            backslash_escapes: !has("NO_BACKSLASH_ESCAPES"),
            pipes_as_concat: has("PIPES_AS_CONCAT") || has("ANSI") || has("ORACLE"),
        }
    }
}

/// MySQL as Basalt parses it. It reports itself as [`MySqlDialect`], so every MySQL-only rule
/// of the parser applies.
#[derive(Debug, Default)]
pub struct BasaltDialect {
    mysql: MySqlDialect,
    syntax: SqlSyntax,
    /// The statement text has a lambda arrow: `x -> ..` parses as a lambda, not a JSON path.
    lambdas: bool,
    /// A join whose table is followed by another join before its own ON nests that join:
    /// `t1 LEFT JOIN t2 JOIN t3 ON c1 ON c2` is `t1 LEFT JOIN (t2 JOIN t3 ON c1) ON c2`.
    nested_joins: bool,
}

impl BasaltDialect {
    pub fn new(syntax: SqlSyntax) -> BasaltDialect {
        BasaltDialect {
            mysql: MySqlDialect {},
            syntax,
            lambdas: false,
            nested_joins: false,
        }
    }

    /// This dialect, nesting a join that follows a join's table before its ON (MySQL's
    /// `t1 LEFT JOIN t2 JOIN t3 ON c1 ON c2`). Only for statements that fail to parse
    /// otherwise: `t1 JOIN t2 JOIN t3 ON t1.a = t3.a` reads left to right, as in MySQL.
    pub fn with_nested_joins(self) -> BasaltDialect {
        BasaltDialect {
            nested_joins: true,
            ..self
        }
    }

    /// This dialect, parsing lambdas when `tokens` hold an arrow that is not a JSON path.
    pub fn for_tokens(self, tokens: &[TokenWithSpan]) -> BasaltDialect {
        BasaltDialect {
            lambdas: lambda_arrows(tokens),
            ..self
        }
    }

    /// `name -> 'path'` where lambdas parse: the column `name`, its JSON path left to the
    /// arrow operator (a lambda's body is never a bare string literal in Doris).
    fn json_path_operand(&self, parser: &mut Parser) -> Option<Expr> {
        if !self.lambdas || parser.peek_nth_token_ref(1).token != Token::Arrow {
            return None;
        }
        if !is_string_literal(&parser.peek_nth_token_ref(2).token) {
            return None;
        }
        let next = parser.peek_token_ref().clone();
        let Token::Word(word) = &next.token else {
            return None;
        };
        if word.quote_style.is_none() && word.keyword != Keyword::NoKeyword {
            return None;
        }
        parser.next_token();
        Some(Expr::Identifier(Ident {
            value: word.value.clone(),
            quote_style: word.quote_style,
            span: next.span,
        }))
    }

    /// MySQL's binding strength of the operator `token` begins, where it differs from the
    /// parser's default (which follows PostgreSQL). From tightest to loosest MySQL has: `^`;
    /// `*` `/` `DIV` `%`; `+` `-`; `<<` `>>`; `&`; `|`; the predicates `LIKE`, `REGEXP`, `IN`,
    /// `BETWEEN` ([`Dialect::prec_value`]); comparisons and `IS`; `NOT`; `AND` `&&`; `XOR`;
    /// `OR` `||`. Under PIPES_AS_CONCAT `||` concatenates
    /// and binds tighter than `^` (below the unary operators only). A JSON path (`col->'$.a'`)
    /// is an operand.
    fn mysql_precedence(&self, token: &Token) -> Option<u8> {
        let p = |level| self.prec_value(level);
        Some(match token {
            Token::Arrow | Token::LongArrow => p(Precedence::DoubleColon),
            Token::Caret => p(Precedence::MulDivModOp) + 2,
            Token::StringConcat if self.syntax.pipes_as_concat => p(Precedence::MulDivModOp) + 3,
            Token::StringConcat => p(Precedence::Or),
            Token::ShiftLeft | Token::ShiftRight => p(Precedence::Ampersand) + 3,
            Token::Overlap => p(Precedence::And),
            Token::Word(w) if w.keyword == Keyword::XOR => p(Precedence::Or) + 2,
            Token::Word(w) if w.keyword == Keyword::MOD => p(Precedence::MulDivModOp),
            // MySQL has no `:` operator (the parser's default reads `a:b` as a JSON path): it
            // ends an operand, as in Doris's map literal `{'k': "v"}` and slices `a[i:j]`.
            Token::Colon => 0,
            _ => return None,
        })
    }
}

impl BasaltDialect {
    /// `expr [NOT] BETWEEN low AND high` as MySQL's grammar reads it: `low` binds tighter than
    /// every predicate, `high` is a predicate itself (`2 BETWEEN 1 AND 3 IN (0, 1)` is
    /// `2 BETWEEN 1 AND (3 IN (0, 1))`), and neither takes a comparison.
    fn parse_between(&self, parser: &mut Parser, expr: &Expr) -> Option<Result<Expr, ParserError>> {
        let is = |t: &Token, k: Keyword| matches!(t, Token::Word(w) if w.keyword == k);
        let [first, second] = parser.peek_tokens::<2>();
        let negated = is(&first, Keyword::NOT);
        if !is(if negated { &second } else { &first }, Keyword::BETWEEN) {
            return None;
        }
        parser.next_token();
        if negated {
            parser.next_token();
        }
        let predicate = self.prec_value(Precedence::Between);
        let comparison = self.prec_value(Precedence::Eq);
        let bounds = (|| {
            let low = parser.parse_subexpr(predicate)?;
            parser.expect_keyword_is(Keyword::AND)?;
            let high = parser.parse_subexpr(comparison)?;
            Ok(Expr::Between {
                expr: Box::new(expr.clone()),
                negated,
                low: Box::new(low),
                high: Box::new(high),
            })
        })();
        Some(bounds)
    }
}

/// Whether `tokens` hold an arrow (`->`) followed by something other than a string literal:
/// Doris's lambda, where MySQL's JSON arrow always takes a literal path.
pub fn lambda_arrows(tokens: &[TokenWithSpan]) -> bool {
    let mut significant = tokens
        .iter()
        .map(|t| &t.token)
        .filter(|t| !matches!(t, Token::Whitespace(_)));
    while let Some(token) = significant.next() {
        if *token == Token::Arrow && !significant.next().is_some_and(is_string_literal) {
            return true;
        }
    }
    false
}

fn is_string_literal(token: &Token) -> bool {
    matches!(
        token,
        Token::SingleQuotedString(_) | Token::DoubleQuotedString(_)
    )
}

impl Dialect for BasaltDialect {
    fn supports_left_associative_joins_without_parens(&self) -> bool {
        !self.nested_joins
    }

    /// Doris's `x -> body` and `(x, y) -> body` in the arguments of its array functions.
    fn supports_lambda_functions(&self) -> bool {
        self.lambdas
    }

    fn supports_string_literal_backslash_escape(&self) -> bool {
        self.syntax.backslash_escapes
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        if crate::operator_forms::at_predicate_form(parser) {
            return Some(Ok(self.prec_value(Precedence::Like)));
        }
        if crate::operator_forms::at_comparison_form(parser) {
            return Some(Ok(self.prec_value(Precedence::Eq)));
        }
        self.mysql_precedence(&parser.peek_token_ref().token)
            .map(Ok)
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

    /// MySQL's forms around character sets and binary strings ([`crate::charset_forms`]).
    /// `!x` (MySQL's NOT), `-x`, `+x` and `~x` bind tighter than every binary operator, `^`
    /// included: `!1 + 1` is 1, `-2 ^ 2` is `(-2) ^ 2`.
    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        if let Some(column) = self.json_path_operand(parser) {
            return Some(Ok(column));
        }
        let tightest = self.prec_value(Precedence::MulDivModOp) + 4;
        // CAST/CONVERT to MySQL's targets, CHAR(.. USING cs), TRIM(LEADING FROM s), BINARY x.
        if let Some(form) = crate::charset_forms::parse(parser, tightest) {
            return Some(form);
        }
        // Doris's `{k: v, ..}` map literal.
        if let Some(map) = crate::map_literals::parse(parser) {
            return Some(map);
        }
        if let Some(call) = crate::operator_forms::parse_interval_call(parser) {
            return Some(call);
        }
        let op = match parser.peek_token_ref().token {
            Token::ExclamationMark => UnaryOperator::Not,
            Token::Minus => UnaryOperator::Minus,
            Token::Plus => UnaryOperator::Plus,
            Token::Tilde => UnaryOperator::BitwiseNot,
            _ => return None,
        };
        parser.next_token();
        Some(parser.parse_subexpr(tightest).map(|operand| Expr::UnaryOp {
            op,
            expr: Box::new(operand),
        }))
    }

    /// MySQL's grammar has two levels where the parser's default has one. Its predicates
    /// (`[NOT] LIKE`, `REGEXP`, `IN`, `BETWEEN`, `SOUNDS LIKE`, `MEMBER OF`) bind tighter than
    /// its comparisons (`=`, `<=>`, `<`, `<>` ..): `1 = 3 LIKE 3` is `1 = (3 LIKE 3)` and
    /// `2 = 3 IN (0, 1)` is `2 = (3 IN (0, 1))`, while `'a' LIKE 'a' = 1` stays
    /// `('a' LIKE 'a') = 1`. Both levels associate to the left, below `|` and above `IS`.
    fn prec_value(&self, prec: Precedence) -> u8 {
        match prec {
            Precedence::Like | Precedence::Between => self.mysql.prec_value(Precedence::Eq),
            Precedence::Eq => self.mysql.prec_value(Precedence::Eq) - 1,
            other => self.mysql.prec_value(other),
        }
    }

    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        if let Some(between) = self.parse_between(parser, expr) {
            return Some(between);
        }
        if let Some(in_list) = crate::in_lists::parse(parser, expr) {
            return Some(in_list);
        }
        if let Some(form) = crate::operator_forms::parse_infix(parser, expr, precedence) {
            return Some(form);
        }
        let op = if parser.parse_keyword(Keyword::DIV) {
            BinaryOperator::MyIntegerDivide
        } else if parser.parse_keyword(Keyword::MOD) {
            BinaryOperator::Modulo
        } else {
            return None;
        };
        // `precedence` is DIV's and MOD's own (that of `*`): the right operand is what binds
        // tighter than it, and the next operator of the same level takes this result as its
        // left side.
        Some(
            parser
                .parse_subexpr(precedence)
                .map(|right| Expr::BinaryOp {
                    left: Box::new(expr.clone()),
                    op,
                    right: Box::new(right),
                }),
        )
    }

    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        self.mysql.parse_statement(parser)
    }

    /// `FROM t LOCK IN SHARE MODE`: LOCK before IN begins the locking clause, not an alias.
    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        let lock_in = *kw == Keyword::LOCK
            && matches!(&parser.peek_token().token, Token::Word(w) if w.keyword == Keyword::IN);
        if !explicit && lock_in {
            return false;
        }
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

    /// MySQL reads `FROM (t1)` and `t1 JOIN (t2 AS x) ON ..` as the table alone.
    fn supports_parens_around_table_factor(&self) -> bool {
        true
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
            Expr::Like { expr, pattern, .. } => format!("({} LIKE {})", tree(expr), tree(pattern)),
            Expr::RLike { expr, pattern, .. } => {
                format!("({} REGEXP {})", tree(expr), tree(pattern))
            }
            Expr::InList { expr, list, .. } => {
                let list: Vec<String> = list.iter().map(tree).collect();
                format!("({} IN ({}))", tree(expr), list.join(", "))
            }
            Expr::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let not = if *negated { "NOT " } else { "" };
                format!(
                    "({} {not}BETWEEN {} AND {})",
                    tree(expr),
                    tree(low),
                    tree(high)
                )
            }
            Expr::IsTrue(inner) => format!("({} IS TRUE)", tree(inner)),
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

    #[test]
    fn mod_is_the_modulo_operator_of_the_multiplication_level() {
        assert_eq!(shape("5 MOD 3"), "(5 % 3)");
        assert_eq!(shape("1 + 5 mod 3 * 2"), "(1 + ((5 % 3) * 2))");
        assert_eq!(shape("-9 MOD -1"), "(-9 % -1)");
        assert_eq!(shape("(ATAN(-1) MOD FLOOR(1))"), "(ATAN(-1) % FLOOR(1))");
        assert_eq!(shape("MOD(7, 2) MOD 3"), "(MOD(7, 2) % 3)");
        assert_eq!(shape("2 * 7 MOD 4"), "((2 * 7) % 4)");
    }

    #[test]
    fn predicates_bind_tighter_than_comparisons_and_both_from_the_left() {
        assert_eq!(shape("2 = 3 IN (0, 1)"), "(2 = (3 IN (0, 1)))");
        assert_eq!(shape("1 = 3 LIKE 3"), "(1 = (3 LIKE 3))");
        assert_eq!(shape("1 <=> 3 REGEXP 3"), "(1 <=> (3 REGEXP 3))");
        assert_eq!(
            shape("2 >= 3 BETWEEN 1 AND 3"),
            "(2 >= (3 BETWEEN 1 AND 3))"
        );
        assert_eq!(shape("'a' LIKE 'a' = 1"), "(('a' LIKE 'a') = 1)");
        assert_eq!(shape("2 LIKE 2 LIKE 1"), "((2 LIKE 2) LIKE 1)");
        assert_eq!(shape("1 = 1 = 1"), "((1 = 1) = 1)");
        assert_eq!(shape("1 = 1 IS TRUE"), "((1 = 1) IS TRUE)");
        assert_eq!(shape("1 | 2 = 3"), "((1 | 2) = 3)");
        // BETWEEN's upper bound is a predicate; its lower one binds tighter than any.
        assert_eq!(
            shape("2 BETWEEN 1 AND 3 IN (0, 1)"),
            "(2 BETWEEN 1 AND (3 IN (0, 1)))"
        );
        assert_eq!(
            shape("2 BETWEEN 1 AND 3 BETWEEN 1 AND 3"),
            "(2 BETWEEN 1 AND (3 BETWEEN 1 AND 3))"
        );
        assert_eq!(shape("2 BETWEEN 1 AND 3 = 1"), "((2 BETWEEN 1 AND 3) = 1)");
        assert_eq!(
            shape("a NOT BETWEEN 1 + 1 AND 3 AND b"),
            "((a NOT BETWEEN (1 + 1) AND 3) AND b)"
        );
    }

    #[test]
    fn an_arrow_is_a_lambda_unless_a_literal_json_path_follows_it() {
        assert_eq!(
            shape("array_map(x -> x + 1, a)"),
            "array_map(x -> x + 1, a)"
        );
        assert_eq!(
            shape("array_map((x, y) -> x * y, a, b)"),
            "array_map((x, y) -> x * y, a, b)"
        );
        // MySQL's JSON arrow, alone and next to a lambda.
        assert_eq!(shape("j -> '$.a'"), "(j -> '$.a')");
        assert_eq!(
            shape("array_map(x -> x, a) = j -> '$.a'"),
            "(array_map(x -> x, a) = (j -> '$.a'))"
        );
    }
}
