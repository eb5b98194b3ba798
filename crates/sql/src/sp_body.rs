//! A stored procedure's body as MySQL's compound-statement language: `BEGIN .. END` blocks
//! (labelled or not), `DECLARE` of local variables, conditions, cursors and handlers, `IF`,
//! `CASE`, `WHILE`, `REPEAT`, `LOOP`, `LEAVE`, `ITERATE`, `SET`, `SELECT .. INTO`, cursors'
//! `OPEN`/`FETCH`/`CLOSE`, and any other SQL statement. Expressions and SQL statements are kept
//! as their text (the caller parses them with the values bound); this module only finds the
//! structure around them.

use crate::compound::Offsets;
use crate::dialect::BasaltDialect;
use basalt_common::{BasaltError, Result};
use sqlparser::tokenizer::{Token, Tokenizer};

/// One statement of a procedure body.
#[derive(Debug, Clone, PartialEq)]
pub enum SpStatement {
    /// `[label:] BEGIN .. END [label]`.
    Block {
        label: Option<String>,
        body: Vec<SpStatement>,
    },
    /// `DECLARE a, b type [DEFAULT expr]`.
    DeclareVariables {
        names: Vec<String>,
        data_type: String,
        default: Option<String>,
    },
    /// `DECLARE name CONDITION FOR ..`.
    DeclareCondition {
        name: String,
        condition: SpCondition,
    },
    /// `DECLARE {CONTINUE|EXIT} HANDLER FOR condition, .. statement`.
    DeclareHandler {
        exit: bool,
        conditions: Vec<SpCondition>,
        body: Box<SpStatement>,
    },
    /// `DECLARE name CURSOR FOR select`.
    DeclareCursor {
        name: String,
        query: String,
    },
    Open(String),
    Close(String),
    /// `FETCH [[NEXT] FROM] cursor INTO target, ..`.
    Fetch {
        cursor: String,
        targets: Vec<String>,
    },
    /// `IF c THEN .. [ELSEIF c THEN ..] [ELSE ..] END IF`; a searched `CASE` statement is one too.
    If {
        branches: Vec<(String, Vec<SpStatement>)>,
        otherwise: Option<Vec<SpStatement>>,
        /// True for a CASE statement (no branch taken and no ELSE: error 1339).
        case: bool,
    },
    /// `CASE operand WHEN value THEN .. [ELSE ..] END CASE`.
    SimpleCase {
        operand: String,
        branches: Vec<(String, Vec<SpStatement>)>,
        otherwise: Option<Vec<SpStatement>>,
    },
    While {
        label: Option<String>,
        condition: String,
        body: Vec<SpStatement>,
    },
    Repeat {
        label: Option<String>,
        body: Vec<SpStatement>,
        until: String,
    },
    Loop {
        label: Option<String>,
        body: Vec<SpStatement>,
    },
    Leave(String),
    Iterate(String),
    /// `SET target = expr, ..` (targets as written: `x`, `@x`, `@@session.x`, `SESSION x`).
    Set(Vec<(String, String)>),
    /// `SELECT .. INTO target, ..`: the query without its INTO clause.
    SelectInto {
        query: String,
        targets: Vec<String>,
    },
    /// `RETURN expr` (a stored function's body only).
    Return(String),
    /// Any other statement, as written.
    Sql(String),
}

/// A condition a handler catches.
#[derive(Debug, Clone, PartialEq)]
pub enum SpCondition {
    SqlException,
    SqlWarning,
    NotFound,
    SqlState(String),
    Code(u16),
    /// A name a `DECLARE .. CONDITION` gave.
    Named(String),
}

/// The statements of a procedure body (a `BEGIN .. END` block or a single statement).
pub fn parse_procedure_body(body: &str) -> Result<Vec<SpStatement>> {
    parse_body(body, false)
}

/// The statements of a stored function's body, where `RETURN expr` may stand.
pub fn parse_function_body(body: &str) -> Result<Vec<SpStatement>> {
    parse_body(body, true)
}

fn parse_body(body: &str, function: bool) -> Result<Vec<SpStatement>> {
    let mut parser = BodyParser::new(body)?;
    parser.function = function;
    let statements = parser.list(&[])?;
    if parser.pos < parser.tokens.len() {
        return Err(parser.error("unexpected text"));
    }
    Ok(statements)
}

struct BodyToken {
    token: Token,
    start: usize,
    end: usize,
}

struct BodyParser<'a> {
    text: &'a str,
    tokens: Vec<BodyToken>,
    pos: usize,
    /// True in a stored function's body (RETURN is allowed).
    function: bool,
}

fn word_of(token: &Token) -> Option<String> {
    match token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

/// Words that start a compound statement (a label may stand before them).
const LABELLED: [&str; 4] = ["BEGIN", "LOOP", "WHILE", "REPEAT"];

impl<'a> BodyParser<'a> {
    fn new(text: &'a str) -> Result<BodyParser<'a>> {
        let dialect = BasaltDialect::default();
        let tokens = Tokenizer::new(&dialect, text)
            .tokenize_with_location()
            .map_err(|e| {
                BasaltError::syntax_at(e.message, text, e.location.line, e.location.column)
            })?;
        let offsets = Offsets::new(text);
        let mut out = vec![];
        for t in tokens {
            if matches!(t.token, Token::Whitespace(_) | Token::EOF) {
                continue;
            }
            let (Some(start), Some(end)) = (offsets.of(t.span.start), offsets.of(t.span.end))
            else {
                return Err(BasaltError::syntax_at(
                    "a token outside the text",
                    text,
                    1,
                    1,
                ));
            };
            out.push(BodyToken {
                token: t.token,
                start,
                end,
            });
        }
        Ok(BodyParser {
            text,
            tokens: out,
            pos: 0,
            function: false,
        })
    }

    fn error(&self, message: &str) -> BasaltError {
        let at = self
            .tokens
            .get(self.pos)
            .map_or(self.text.len(), |t| t.start);
        let before = &self.text[..at];
        BasaltError::Syntax {
            message: format!("{message} in the procedure body"),
            near: self.text[at..].chars().take(80).collect(),
            line: before.matches('\n').count() as u64 + 1,
        }
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|t| &t.token)
    }

    fn peek_word(&self) -> Option<String> {
        self.peek().and_then(word_of)
    }

    fn nth_word(&self, n: usize) -> Option<String> {
        self.tokens
            .get(self.pos + n)
            .and_then(|t| word_of(&t.token))
    }

    fn at_word(&self, w: &str) -> bool {
        self.peek_word().as_deref() == Some(w)
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.at_word(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_word(&mut self, w: &str) -> Result<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(self.error(&format!("expected {w}")))
        }
    }

    fn eat(&mut self, token: &Token) -> bool {
        if self.peek() == Some(token) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// A name (a plain or back-quoted word).
    fn name(&mut self) -> Result<String> {
        match self.peek() {
            Some(Token::Word(w)) if w.quote_style.is_none() || w.quote_style == Some('`') => {
                let value = w.value.clone();
                self.pos += 1;
                Ok(value)
            }
            _ => Err(self.error("expected a name")),
        }
    }

    /// Statements up to one of the `terminators` (words) or the end of the text.
    fn list(&mut self, terminators: &[&str]) -> Result<Vec<SpStatement>> {
        let mut out = vec![];
        loop {
            match self.peek_word() {
                None if self.peek().is_none() => return Ok(out),
                Some(w) if terminators.contains(&w.as_str()) => return Ok(out),
                _ => {}
            }
            if self.eat(&Token::SemiColon) {
                continue;
            }
            out.push(self.statement()?);
            if !self.eat(&Token::SemiColon) {
                let at_end = self.peek().is_none()
                    || self
                        .peek_word()
                        .is_some_and(|w| terminators.contains(&w.as_str()));
                if !at_end {
                    return Err(self.error("expected ';'"));
                }
            }
        }
    }

    fn statement(&mut self) -> Result<SpStatement> {
        // `label: BEGIN|LOOP|WHILE|REPEAT`
        let label = if self.tokens.get(self.pos + 1).map(|t| &t.token) == Some(&Token::Colon)
            && self
                .nth_word(2)
                .is_some_and(|w| LABELLED.contains(&w.as_str()))
        {
            let label = self.name()?;
            self.pos += 1;
            Some(label)
        } else {
            None
        };
        let first = self.peek_word().unwrap_or_default();
        let statement = match first.as_str() {
            "BEGIN" => {
                self.pos += 1;
                let body = self.list(&["END"])?;
                self.expect_word("END")?;
                self.end_label(&label)?;
                SpStatement::Block { label, body }
            }
            "LOOP" => {
                self.pos += 1;
                let body = self.list(&["END"])?;
                self.expect_word("END")?;
                self.expect_word("LOOP")?;
                self.end_label(&label)?;
                SpStatement::Loop { label, body }
            }
            "WHILE" => {
                self.pos += 1;
                let condition = self.expression(&["DO"])?;
                self.expect_word("DO")?;
                let body = self.list(&["END"])?;
                self.expect_word("END")?;
                self.expect_word("WHILE")?;
                self.end_label(&label)?;
                SpStatement::While {
                    label,
                    condition,
                    body,
                }
            }
            "REPEAT" => {
                self.pos += 1;
                let body = self.list(&["UNTIL"])?;
                self.expect_word("UNTIL")?;
                let until = self.expression(&["END"])?;
                self.expect_word("END")?;
                self.expect_word("REPEAT")?;
                self.end_label(&label)?;
                SpStatement::Repeat { label, body, until }
            }
            "IF" => self.if_statement()?,
            "CASE" => self.case_statement()?,
            "LEAVE" | "ITERATE" => {
                self.pos += 1;
                let target = self.name()?;
                if first == "LEAVE" {
                    SpStatement::Leave(target)
                } else {
                    SpStatement::Iterate(target)
                }
            }
            "DECLARE" => self.declare()?,
            "OPEN" | "CLOSE" => {
                self.pos += 1;
                let cursor = self.name()?;
                if first == "OPEN" {
                    SpStatement::Open(cursor)
                } else {
                    SpStatement::Close(cursor)
                }
            }
            "FETCH" => {
                self.pos += 1;
                if self.eat_word("NEXT") {
                    self.expect_word("FROM")?;
                } else {
                    self.eat_word("FROM");
                }
                let cursor = self.name()?;
                self.expect_word("INTO")?;
                let targets = self.targets()?;
                SpStatement::Fetch { cursor, targets }
            }
            "RETURN" if self.function => {
                self.pos += 1;
                SpStatement::Return(self.expression(&[])?)
            }
            "RETURN" => {
                return Err(BasaltError::Routine {
                    code: 1313,
                    message: "RETURN is only allowed in a FUNCTION".into(),
                })
            }
            "SIGNAL" | "RESIGNAL" => return Err(unsupported("SIGNAL and RESIGNAL")),
            "GET" => return Err(unsupported("GET DIAGNOSTICS")),
            _ => self.simple_statement()?,
        };
        Ok(statement)
    }

    /// The optional label after a compound statement's END, which must match its opening one.
    fn end_label(&mut self, label: &Option<String>) -> Result<()> {
        let Some(Token::Word(w)) = self.peek() else {
            return Ok(());
        };
        if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("END") {
            return Ok(());
        }
        let end = w.value.clone();
        match label {
            Some(l) if l.eq_ignore_ascii_case(&end) => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(BasaltError::Routine {
                code: 1310,
                message: format!("End-label {end} without match"),
            }),
        }
    }

    fn if_statement(&mut self) -> Result<SpStatement> {
        self.expect_word("IF")?;
        let mut branches = vec![];
        let mut otherwise = None;
        loop {
            let condition = self.expression(&["THEN"])?;
            self.expect_word("THEN")?;
            let body = self.list(&["ELSEIF", "ELSE", "END"])?;
            branches.push((condition, body));
            if self.eat_word("ELSEIF") {
                continue;
            }
            if self.eat_word("ELSE") {
                otherwise = Some(self.list(&["END"])?);
            }
            self.expect_word("END")?;
            self.expect_word("IF")?;
            return Ok(SpStatement::If {
                branches,
                otherwise,
                case: false,
            });
        }
    }

    fn case_statement(&mut self) -> Result<SpStatement> {
        self.expect_word("CASE")?;
        let operand = if self.at_word("WHEN") {
            None
        } else {
            Some(self.expression(&["WHEN"])?)
        };
        let mut branches = vec![];
        let mut otherwise = None;
        while self.eat_word("WHEN") {
            let value = self.expression(&["THEN"])?;
            self.expect_word("THEN")?;
            let body = self.list(&["WHEN", "ELSE", "END"])?;
            branches.push((value, body));
        }
        if branches.is_empty() {
            return Err(self.error("expected WHEN"));
        }
        if self.eat_word("ELSE") {
            otherwise = Some(self.list(&["END"])?);
        }
        self.expect_word("END")?;
        self.expect_word("CASE")?;
        Ok(match operand {
            Some(operand) => SpStatement::SimpleCase {
                operand,
                branches,
                otherwise,
            },
            None => SpStatement::If {
                branches,
                otherwise,
                case: true,
            },
        })
    }

    fn declare(&mut self) -> Result<SpStatement> {
        self.expect_word("DECLARE")?;
        if matches!(
            self.peek_word().as_deref(),
            Some("CONTINUE" | "EXIT" | "UNDO")
        ) && self.nth_word(1).as_deref() == Some("HANDLER")
        {
            let exit = match self.peek_word().as_deref() {
                Some("EXIT") => true,
                Some("UNDO") => return Err(unsupported("UNDO handlers")),
                _ => false,
            };
            self.pos += 2;
            self.expect_word("FOR")?;
            let mut conditions = vec![self.condition()?];
            while self.eat(&Token::Comma) {
                conditions.push(self.condition()?);
            }
            let body = Box::new(self.statement()?);
            return Ok(SpStatement::DeclareHandler {
                exit,
                conditions,
                body,
            });
        }
        if self.nth_word(1).as_deref() == Some("CONDITION") {
            let name = self.name()?;
            self.pos += 1;
            self.expect_word("FOR")?;
            let condition = self.condition()?;
            if matches!(condition, SpCondition::Code(_) | SpCondition::SqlState(_)) {
                return Ok(SpStatement::DeclareCondition { name, condition });
            }
            return Err(self.error("expected an error code or SQLSTATE"));
        }
        if self.nth_word(1).as_deref() == Some("CURSOR") {
            let name = self.name()?;
            self.pos += 1;
            self.expect_word("FOR")?;
            let query = self.rest_of_statement()?;
            return Ok(SpStatement::DeclareCursor { name, query });
        }
        let mut names = vec![self.name()?];
        while self.eat(&Token::Comma) {
            names.push(self.name()?);
        }
        let type_start = self.pos;
        while self.peek().is_some()
            && self.peek() != Some(&Token::SemiColon)
            && !self.at_word("DEFAULT")
        {
            self.pos += 1;
        }
        if type_start == self.pos {
            return Err(self.error("expected a data type"));
        }
        let data_type = self.text_of(type_start, self.pos);
        let default = if self.eat_word("DEFAULT") {
            Some(self.rest_of_statement()?)
        } else {
            None
        };
        Ok(SpStatement::DeclareVariables {
            names,
            data_type,
            default,
        })
    }

    fn condition(&mut self) -> Result<SpCondition> {
        if self.eat_word("SQLEXCEPTION") {
            return Ok(SpCondition::SqlException);
        }
        if self.eat_word("SQLWARNING") {
            return Ok(SpCondition::SqlWarning);
        }
        if self.at_word("NOT") && self.nth_word(1).as_deref() == Some("FOUND") {
            self.pos += 2;
            return Ok(SpCondition::NotFound);
        }
        if self.eat_word("SQLSTATE") {
            self.eat_word("VALUE");
            return match self.peek() {
                Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s))
                    if s.len() == 5 && s != "00000" =>
                {
                    let state = s.clone();
                    self.pos += 1;
                    Ok(SpCondition::SqlState(state))
                }
                _ => Err(BasaltError::Routine {
                    code: 1407,
                    message: "Bad SQLSTATE".into(),
                }),
            };
        }
        if let Some(Token::Number(n, _)) = self.peek() {
            let code = n
                .parse::<u16>()
                .map_err(|_| self.error("expected an error code"))?;
            self.pos += 1;
            return Ok(SpCondition::Code(code));
        }
        Ok(SpCondition::Named(self.name()?))
    }

    /// `target, ..` of INTO (names, `@user` variables).
    fn targets(&mut self) -> Result<Vec<String>> {
        let mut out = vec![self.name()?];
        while self.eat(&Token::Comma) {
            out.push(self.name()?);
        }
        Ok(out)
    }

    /// The text of tokens `from..to`.
    fn text_of(&self, from: usize, to: usize) -> String {
        if from >= to {
            return String::new();
        }
        self.text[self.tokens[from].start..self.tokens[to - 1].end].to_string()
    }

    /// An expression's text, up to one of the `stop` words outside parentheses and CASE
    /// expressions.
    fn expression(&mut self, stop: &[&str]) -> Result<String> {
        let start = self.pos;
        let mut parens = 0i64;
        let mut cases = 0i64;
        while let Some(token) = self.peek() {
            match token {
                Token::LParen => parens += 1,
                Token::RParen => parens -= 1,
                Token::SemiColon => break,
                _ => {}
            }
            let w = word_of(token);
            if parens == 0 {
                match w.as_deref() {
                    Some("CASE") => cases += 1,
                    Some("END") if cases > 0 => cases -= 1,
                    Some(w) if cases == 0 && stop.contains(&w) => break,
                    _ => {}
                }
            }
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.error("expected an expression"));
        }
        Ok(self.text_of(start, self.pos))
    }

    /// The text up to the `;` that ends the statement (or the end of the body).
    fn rest_of_statement(&mut self) -> Result<String> {
        let start = self.pos;
        while self.peek().is_some_and(|t| *t != Token::SemiColon) {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.error("expected a statement"));
        }
        Ok(self.text_of(start, self.pos))
    }

    /// SET, SELECT .. INTO, or any other statement.
    fn simple_statement(&mut self) -> Result<SpStatement> {
        let start = self.pos;
        let text = self.rest_of_statement()?;
        let end = self.pos;
        let first = word_of(&self.tokens[start].token).unwrap_or_default();
        if first == "SET" {
            if let Some(assignments) = self.assignments(start + 1, end) {
                return Ok(SpStatement::Set(assignments));
            }
            return Ok(SpStatement::Sql(text));
        }
        if first == "SELECT" || first == "WITH" {
            if let Some(into) = self.select_into(start, end)? {
                return Ok(into);
            }
        }
        Ok(SpStatement::Sql(text))
    }

    /// `target = expr, ..` of a SET, split at the commas outside parentheses; `None` when an
    /// item is no assignment (`SET NAMES ..`, `SET TRANSACTION ..`).
    fn assignments(&self, from: usize, to: usize) -> Option<Vec<(String, String)>> {
        let mut items = vec![];
        let mut item_start = from;
        let mut parens = 0i64;
        for k in from..=to {
            let token = self.tokens.get(k).map(|t| &t.token);
            match token {
                Some(Token::LParen) => parens += 1,
                Some(Token::RParen) => parens -= 1,
                _ => {}
            }
            let ends = k == to || (parens == 0 && token == Some(&Token::Comma));
            if !ends {
                continue;
            }
            let eq = (item_start..k)
                .find(|&j| matches!(self.tokens[j].token, Token::Eq | Token::Assignment))?;
            if eq == item_start || eq + 1 == k {
                return None;
            }
            items.push((self.text_of(item_start, eq), self.text_of(eq + 1, k)));
            item_start = k + 1;
        }
        Some(items)
    }

    /// A SELECT with an `INTO target, ..` clause (not OUTFILE or DUMPFILE) outside parentheses:
    /// the query without it, and the targets.
    fn select_into(&self, from: usize, to: usize) -> Result<Option<SpStatement>> {
        let mut parens = 0i64;
        for k in from..to {
            match &self.tokens[k].token {
                Token::LParen => parens += 1,
                Token::RParen => parens -= 1,
                token if parens == 0 && word_of(token).as_deref() == Some("INTO") => {
                    let next = self.tokens.get(k + 1).and_then(|t| word_of(&t.token));
                    if matches!(next.as_deref(), Some("OUTFILE" | "DUMPFILE")) {
                        return Ok(None);
                    }
                    let mut targets = vec![];
                    let mut j = k + 1;
                    loop {
                        match self.tokens.get(j).map(|t| &t.token) {
                            Some(Token::Word(w)) if j < to => {
                                targets.push(w.value.clone());
                                j += 1;
                            }
                            _ => return Err(self.error("expected a variable after INTO")),
                        }
                        if j < to && self.tokens[j].token == Token::Comma {
                            j += 1;
                            continue;
                        }
                        break;
                    }
                    let mut query = self.text_of(from, k);
                    if j < to {
                        query.push(' ');
                        query.push_str(&self.text_of(j, to));
                    }
                    return Ok(Some(SpStatement::SelectInto { query, targets }));
                }
                _ => {}
            }
        }
        Ok(None)
    }
}

fn unsupported(what: &str) -> BasaltError {
    BasaltError::NotSupported(format!("{what} in a stored procedure"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(s: &str) -> SpStatement {
        SpStatement::Sql(s.into())
    }

    #[test]
    fn return_only_in_functions() {
        assert_eq!(
            parse_function_body(
                "BEGIN IF a THEN RETURN CASE WHEN a THEN 1 END; END IF; RETURN (SELECT 2); END"
            )
            .unwrap(),
            vec![SpStatement::Block {
                label: None,
                body: vec![
                    SpStatement::If {
                        branches: vec![(
                            "a".into(),
                            vec![SpStatement::Return("CASE WHEN a THEN 1 END".into())]
                        )],
                        otherwise: None,
                        case: false,
                    },
                    SpStatement::Return("(SELECT 2)".into()),
                ],
            }]
        );
        assert_eq!(
            parse_function_body("RETURN a + 1").unwrap(),
            vec![SpStatement::Return("a + 1".into())]
        );
        assert_eq!(
            parse_procedure_body("RETURN 1").unwrap_err().mysql_code(),
            1313
        );
    }

    #[test]
    fn control_flow_nests() {
        let body = "BEGIN
            DECLARE i, j INT DEFAULT 0;
            DECLARE done INT DEFAULT FALSE;
            DECLARE c CURSOR FOR SELECT a FROM t;
            DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = TRUE;
            DECLARE EXIT HANDLER FOR SQLEXCEPTION, 1146 BEGIN SELECT 'e'; END;
            outer: WHILE i < 3 DO
              SET i = i + 1, @s = CONCAT(@s, i);
              IF i = 2 THEN ITERATE outer; ELSEIF CASE WHEN i THEN 1 END = 1 THEN SELECT 1;
              ELSE LEAVE outer; END IF;
            END WHILE outer;
            REPEAT SET j = j + 1; UNTIL j >= 2 END REPEAT;
            l: LOOP LEAVE l; END LOOP l;
            CASE i WHEN 1 THEN SELECT 'one'; ELSE BEGIN END; END CASE;
            SELECT a, b INTO x, @y FROM t WHERE a = (SELECT 1) LIMIT 1;
            FETCH c INTO x;
            INSERT INTO t VALUES (i);
          END";
        let statements = parse_procedure_body(body).unwrap();
        let [SpStatement::Block { label: None, body }] = statements.as_slice() else {
            panic!("{statements:?}")
        };
        assert_eq!(body.len(), 12, "{body:#?}");
        assert_eq!(
            body[0],
            SpStatement::DeclareVariables {
                names: vec!["i".into(), "j".into()],
                data_type: "INT".into(),
                default: Some("0".into())
            }
        );
        assert!(
            matches!(&body[4], SpStatement::DeclareHandler { exit: true, conditions, .. }
            if conditions == &[SpCondition::SqlException, SpCondition::Code(1146)])
        );
        let SpStatement::While {
            label,
            condition,
            body: w,
        } = &body[5]
        else {
            panic!()
        };
        assert_eq!(label.as_deref(), Some("outer"));
        assert_eq!(condition, "i < 3");
        assert_eq!(
            w[0],
            SpStatement::Set(vec![
                ("i".into(), "i + 1".into()),
                ("@s".into(), "CONCAT(@s, i)".into())
            ])
        );
        assert!(
            matches!(&w[1], SpStatement::If { branches, otherwise: Some(_), .. }
            if branches.len() == 2 && branches[1].0 == "CASE WHEN i THEN 1 END = 1")
        );
        assert!(matches!(&body[6], SpStatement::Repeat { until, .. } if until == "j >= 2"));
        assert!(matches!(&body[8], SpStatement::SimpleCase { operand, .. } if operand == "i"));
        assert_eq!(
            body[9],
            SpStatement::SelectInto {
                query: "SELECT a, b FROM t WHERE a = (SELECT 1) LIMIT 1".into(),
                targets: vec!["x".into(), "@y".into()]
            }
        );
        assert_eq!(body[11], sql("INSERT INTO t VALUES (i)"));
    }

    #[test]
    fn errors_and_plain_statements() {
        assert_eq!(parse_procedure_body("SELECT 1").unwrap(), [sql("SELECT 1")]);
        assert_eq!(
            parse_procedure_body("SET NAMES utf8").unwrap(),
            [sql("SET NAMES utf8")]
        );
        assert_eq!(
            parse_procedure_body("SELECT 1 INTO OUTFILE '/tmp/x'").unwrap(),
            [sql("SELECT 1 INTO OUTFILE '/tmp/x'")]
        );
        for bad in [
            "BEGIN SELECT 1",
            "BEGIN IF 1 THEN SELECT 1; END; END",
            "BEGIN WHILE 1 SELECT 1; END WHILE; END",
        ] {
            assert!(parse_procedure_body(bad).is_err(), "{bad}");
        }
        let e = parse_procedure_body("a: BEGIN END b").unwrap_err();
        assert_eq!(e.mysql_code(), 1310);
        let e = parse_procedure_body("BEGIN RETURN 1; END").unwrap_err();
        assert_eq!(e.mysql_code(), 1313);
        let e = parse_procedure_body("BEGIN SIGNAL SQLSTATE '45000'; END").unwrap_err();
        assert_eq!(e.mysql_code(), 1235);
    }
}
