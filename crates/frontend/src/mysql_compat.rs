//! MySQL functions and syntax DataFusion spells differently, rewritten on the parsed statement
//! before planning: IF, YEAR/MONTH/..., CURDATE, UNIX_TIMESTAMP, DATE_ADD/DATE_SUB, DATEDIFF,
//! DATE_FLOOR/DATE_CEIL,
//! DATE(), LCASE/UCASE, LOCATE, LOG (MySQL's: natural, NULL outside its domain), FLOOR/CEIL
//! (typed as MySQL types them), TRIM(rem FROM s) (a string removed, not characters), MOD,
//! `DIV` (by zero, like `/` and `%`, is NULL),
//! CAST/CONVERT to SIGNED/UNSIGNED, and NOW()
//! with MySQL's second precision; `FROM DUAL` is dropped; `ILIKE '%word%'` becomes a SIMD search.

use basalt_functions::date_arith::Unit;
use basalt_sql::ast::helpers::attached_token::AttachedToken;
use basalt_sql::ast::{
    visit_expressions_mut, ArrayElemTypeDef, BinaryOperator, CaseWhen, CastKind, CeilFloorKind,
    DataType, DateTimeField, ExactNumberInfo, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArgumentList, FunctionArguments, Ident, ObjectName, Select, Statement, TableFactor,
    TableWithJoins, TimezoneInfo, TrimWhereField, UnaryOperator, Value, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

/// Removes MySQL's dummy table: `SELECT 1 FROM DUAL` is `SELECT 1`.
struct DropDual;

impl VisitorMut for DropDual {
    type Break = ();

    // Every SELECT, a UNION's branches too (`SELECT a FROM t UNION SELECT 1 FROM DUAL`).
    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        let is_dual = match select.from.as_slice() {
            [TableWithJoins {
                relation: TableFactor::Table { name, .. },
                joins,
            }] => {
                joins.is_empty()
                    && name.0.len() == 1
                    && name.0[0].as_ident().is_some_and(|i| {
                        i.quote_style.is_none() && i.value.eq_ignore_ascii_case("dual")
                    })
            }
            _ => false,
        };
        if is_dual {
            select.from.clear();
        }
        ControlFlow::Continue(())
    }
}

/// MySQL takes any value as a condition (`WHERE flag` on a TINYINT, `HAVING COUNT(*)`):
/// a WHERE, HAVING, JOIN ON or CASE WHEN that is a plain value is read by its truth.
struct ValueConditions;

impl VisitorMut for ValueConditions {
    type Break = ();

    fn pre_visit_select(&mut self, select: &mut basalt_sql::ast::Select) -> ControlFlow<()> {
        if let Some(condition) = &mut select.selection {
            truth_of(condition);
        }
        // HAVING COUNT(*): an aggregate as the condition.
        if let Some(condition) = &mut select.having {
            truth_of(condition);
        }
        for from in &mut select.from {
            for join in &mut from.joins {
                use basalt_sql::ast::{JoinConstraint, JoinOperator as J};
                if let J::Join(JoinConstraint::On(on))
                | J::Inner(JoinConstraint::On(on))
                | J::Left(JoinConstraint::On(on))
                | J::LeftOuter(JoinConstraint::On(on))
                | J::Right(JoinConstraint::On(on))
                | J::RightOuter(JoinConstraint::On(on))
                | J::FullOuter(JoinConstraint::On(on)) = &mut join.join_operator
                {
                    truth_of(on);
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        if let Expr::Case {
            operand: None,
            conditions,
            ..
        } = expr
        {
            for when in conditions {
                truth_of(&mut when.condition);
            }
        }
        ControlFlow::Continue(())
    }
}

/// Wraps `e` in `mysql_truth` unless it is plainly a condition (a comparison, AND/OR, IN,
/// LIKE, IS NULL...): a column, a literal, arithmetic, CASE, a function call or a scalar
/// subquery may be a number or a string, which MySQL reads by its truth. `mysql_truth` of what
/// turns out to be a boolean simplifies back to it once types are known.
fn truth_of(e: &mut Expr) {
    let plain_value = match &*e {
        Expr::Value(v) => !matches!(v.value, Value::Boolean(_) | Value::Null),
        other => !is_condition(other),
    };
    if plain_value {
        *e = call("mysql_truth", vec![e.clone()]);
    }
}

/// What of the session the rewrite depends on.
#[derive(Debug, Clone)]
pub struct SqlSettings {
    /// `@@time_zone`: NOW(), CURDATE(), CURTIME(), FROM_UNIXTIME() give its wall-clock time and
    /// UNIX_TIMESTAMP(dt) reads `dt` in it.
    pub time_zone: String,
    /// `sql_mode` has PIPES_AS_CONCAT: `||` concatenates (otherwise it is OR, as in MySQL).
    pub pipes_as_concat: bool,
    /// `sql_mode` has ONLY_FULL_GROUP_BY (otherwise a grouped SELECT may show columns it does
    /// not group by: each shows one of its group's values).
    pub only_full_group_by: bool,
    /// `lower_case_table_names`: whether table names fold to lower case or keep their spelling.
    pub table_name_case: basalt_common::TableNameCase,
    /// `@@group_concat_max_len` when it is below Doris's default: GROUP_CONCAT's results are
    /// cut to that many bytes.
    pub group_concat_max_len: Option<u64>,
}

impl SqlSettings {
    /// The settings of a session whose variables are `time_zone` and `sql_mode`.
    pub fn new(time_zone: &str, sql_mode: &str) -> SqlSettings {
        let has = |mode: &str| {
            sql_mode
                .split(',')
                .any(|m| m.trim().eq_ignore_ascii_case(mode))
        };
        SqlSettings {
            time_zone: time_zone.to_string(),
            pipes_as_concat: basalt_sql::SqlSyntax::from_sql_mode(sql_mode).pipes_as_concat,
            only_full_group_by: has("ONLY_FULL_GROUP_BY") || has("ANSI") || has("TRADITIONAL"),
            table_name_case: Default::default(),
            group_concat_max_len: None,
        }
    }
}

impl Default for SqlSettings {
    fn default() -> Self {
        SqlSettings::new("SYSTEM", "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES")
    }
}

/// Rewrites `stmt` for planning under the session's `settings`.
pub fn rewrite(stmt: &mut Statement, settings: &SqlSettings) {
    crate::fetch_first::rewrite(stmt);
    crate::derived_order::rewrite(stmt);
    crate::identifier_case::fold(stmt, settings.table_name_case);
    crate::shadowed_ctes::rewrite(stmt);
    crate::recursive_with::rewrite(stmt);
    crate::cte_column_lists::rewrite(stmt);
    crate::partition_selection::rewrite(stmt);
    crate::join_hints::rewrite(stmt);
    crate::using_joins::rewrite(stmt);
    crate::asof_joins::rewrite(stmt);
    crate::wildcard_qualifiers::rewrite(stmt);
    let _ = stmt.visit(&mut DropDual);
    crate::tableless_subqueries::rewrite(stmt);
    crate::where_aggregates::rewrite(stmt);
    crate::quantified_comparisons::rewrite(stmt);
    crate::constant_not_in::rewrite(stmt);
    crate::row_subqueries::rewrite(stmt);
    crate::nullable_subqueries::rewrite(stmt);
    let _ = stmt.visit(&mut ValueConditions);
    crate::bit_literals::rewrite(stmt);
    if settings.only_full_group_by {
        crate::join_dependence::rewrite(stmt);
    } else {
        crate::grouping::show_ungrouped_columns(stmt);
    }
    let time_zone = settings.time_zone.as_str();
    let _ = visit_expressions_mut(stmt, |e| {
        if let Expr::BinaryOp { left, op, right } = e {
            if *op == BinaryOperator::StringConcat {
                if settings.pipes_as_concat {
                    // CONCAT: numbers and dates join as their text, NULL if either is NULL.
                    *e = call("mysql_concat", vec![(**left).clone(), (**right).clone()]);
                } else {
                    *op = BinaryOperator::Or;
                }
            }
        }
        logical_operands(e);
        // `-(9223372036854775808)`, `-0x80`: the negative number literal (MySQL's BIGINT or
        // DECIMAL); DataFusion refused the negation of the unsigned value the literal is.
        if let Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } = e
        {
            if matches!(**expr, Expr::Nested(_) | Expr::Value(_)) {
                let mut operand = (**expr).clone();
                while let Expr::Nested(inner) = operand {
                    operand = *inner;
                }
                crate::bit_literals::hex_as_number(&mut operand);
                if matches!(&operand, Expr::Value(v) if matches!(v.value, Value::Number(..))) {
                    **expr = operand;
                }
            }
        }
        // `~x`: MySQL's unsigned 64-bit inversion.
        if let Expr::UnaryOp {
            op: UnaryOperator::BitwiseNot,
            expr,
        } = e
        {
            *e = call("mysql_bit_not", vec![(**expr).clone()]);
        }
        // NOT of what may be a number (`NOT flag` on a TINYINT): MySQL's NOT.
        if let Expr::UnaryOp {
            op: UnaryOperator::Not,
            expr,
        } = e
        {
            if !is_condition(expr) {
                *e = call("mysql_not", vec![(**expr).clone()]);
            }
        }
        // A number in exponent notation is a DOUBLE in MySQL (`1e-300`), where DataFusion
        // (parsing literals as decimals, MySQL's rule for `1.5`) would want a DECIMAL.
        if let Expr::Value(v) = e {
            if let Value::Number(n, _) = &v.value {
                if n.contains(['e', 'E']) {
                    let text = Expr::value(Value::SingleQuotedString(n.clone()));
                    *e = cast(text, DataType::Double(ExactNumberInfo::None));
                }
            }
        }
        if let Some(converted) = crate::charset_conversions::rewrite(e) {
            *e = converted;
        }
        no_escape_character(e);
        cut_group_concat(e, settings.group_concat_max_len);
        rewrite_expr(e, time_zone);
        ControlFlow::<()>::Continue(())
    });
    crate::cast_names::rewrite(stmt);
}

/// `LIKE p ESCAPE ''`: MySQL's pattern without an escape character. The LIKE kernels escape
/// with the backslash, so the pattern's backslashes are doubled to match themselves.
fn no_escape_character(e: &mut Expr) {
    let (Expr::Like {
        pattern,
        escape_char,
        ..
    }
    | Expr::ILike {
        pattern,
        escape_char,
        ..
    }) = e
    else {
        return;
    };
    let empty = escape_char.as_ref().is_some_and(|v| match &v.value {
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s.is_empty(),
        _ => false,
    });
    if !empty {
        return;
    }
    *escape_char = None;
    let original = std::mem::replace(&mut **pattern, Expr::value(Value::Null));
    **pattern = match original {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
                string(&s.replace('\\', "\\\\"))
            }
            _ => Expr::Value(v),
        },
        other => call("replace", vec![other, string("\\"), string("\\\\")]),
    };
}

pub(crate) fn call(name: &str, args: Vec<Expr>) -> Expr {
    basalt_sql::function_call(name, args)
}

pub(crate) fn string(s: &str) -> Expr {
    Expr::value(Value::SingleQuotedString(s.to_string()))
}

pub(crate) fn number(n: i64) -> Expr {
    Expr::value(Value::Number(n.to_string(), false))
}

pub(crate) fn binary(left: Expr, op: BinaryOperator, right: Expr) -> Expr {
    Expr::Nested(Box::new(Expr::BinaryOp {
        left: Box::new(left),
        op,
        right: Box::new(right),
    }))
}

/// AND, OR and XOR read their operands by MySQL's truth (`2 AND 3` is 1, `'0' OR 0` is 0); XOR
/// is logical, not bitwise (`2 XOR 1` is 0): the truths compared, NULL if either is NULL. So do
/// `IS [NOT] TRUE | FALSE | UNKNOWN` (`2 IS TRUE` is 1, `0.0 IS FALSE` is 1).
fn logical_operands(e: &mut Expr) {
    match e {
        Expr::IsTrue(operand)
        | Expr::IsFalse(operand)
        | Expr::IsNotTrue(operand)
        | Expr::IsNotFalse(operand)
        | Expr::IsUnknown(operand)
        | Expr::IsNotUnknown(operand) => {
            truth_of(operand);
            return;
        }
        _ => {}
    }
    let Expr::BinaryOp { left, op, right } = e else {
        return;
    };
    match op {
        BinaryOperator::And | BinaryOperator::Or => {
            truth_of(left);
            truth_of(right);
        }
        BinaryOperator::Xor => {
            let truth = |side: &Expr| call("mysql_truth", vec![side.clone()]);
            *e = Expr::Nested(Box::new(Expr::BinaryOp {
                left: Box::new(truth(left)),
                op: BinaryOperator::NotEq,
                right: Box::new(truth(right)),
            }));
        }
        _ => {}
    }
}

/// True for expressions that are plainly conditions (comparisons, IN, LIKE, IS, AND/OR/NOT,
/// EXISTS, TRUE/FALSE): DataFusion's NOT takes them as they are.
fn is_condition(e: &Expr) -> bool {
    match e {
        Expr::Nested(inner) => is_condition(inner),
        Expr::BinaryOp { op, .. } => matches!(
            op,
            BinaryOperator::Eq
                | BinaryOperator::NotEq
                | BinaryOperator::Lt
                | BinaryOperator::LtEq
                | BinaryOperator::Gt
                | BinaryOperator::GtEq
                | BinaryOperator::Spaceship
                | BinaryOperator::And
                | BinaryOperator::Or
                | BinaryOperator::Xor
        ),
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            ..
        }
        | Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::IsTrue(_)
        | Expr::IsFalse(_)
        | Expr::IsNotTrue(_)
        | Expr::IsNotFalse(_)
        | Expr::IsUnknown(_)
        | Expr::IsNotUnknown(_)
        | Expr::IsDistinctFrom(..)
        | Expr::IsNotDistinctFrom(..)
        | Expr::InList { .. }
        | Expr::InSubquery { .. }
        | Expr::InUnnest { .. }
        | Expr::Between { .. }
        | Expr::Like { .. }
        | Expr::ILike { .. }
        | Expr::SimilarTo { .. }
        | Expr::RLike { .. }
        | Expr::Exists { .. } => true,
        Expr::Value(v) => matches!(v.value, Value::Boolean(_)),
        // An ASOF join's mark on its match condition (the rule that plans it looks for it).
        Expr::Function(f) => f
            .name
            .to_string()
            .eq_ignore_ascii_case(basalt_functions::ASOF_MATCH),
        _ => false,
    }
}

/// The first `length` characters of `e` as text.
fn char_prefix(e: Expr, length: &basalt_sql::ast::CharacterLength) -> Option<Expr> {
    let basalt_sql::ast::CharacterLength::IntegerLength { length, .. } = length else {
        return None;
    };
    Some(call(
        "left",
        vec![cast(e, DataType::Varchar(None)), number(*length as i64)],
    ))
}

/// `left op right` where one side is an INTERVAL. A DATE moved by hours, minutes or seconds is
/// a DATETIME, as in MySQL (DataFusion kept the DATE and dropped the time); a result outside
/// years 0000..9999 is NULL.
fn shifted(left: Expr, op: BinaryOperator, right: Expr) -> Expr {
    // A NULL interval (MySQL's for a compound unit's value it cannot read, see
    // basalt_sql's compound_intervals) makes the result NULL, typed as a zero interval's.
    if let Some(zero) = null_interval_as_zero(&left).or_else(|| null_interval_as_zero(&right)) {
        let (left, right) = if matches!(left, Expr::Interval(_)) {
            (zero, right)
        } else {
            (left, zero)
        };
        let falsehood = Expr::Value(Value::Boolean(false).into());
        return only_when(falsehood, shifted(left, op, right));
    }
    // A count DataFusion's interval cannot take (an expression, or so many units that its
    // nanoseconds overflow or no date stays in years 0000..9999): Doris's unit function,
    // which moves by any count and is NULL out of range.
    let by_unit = match (&left, &right) {
        (start, Expr::Interval(interval)) => unit_count(interval)
            .map(|(unit, count)| (unit, op == BinaryOperator::Plus, start, count)),
        (Expr::Interval(interval), start) => {
            unit_count(interval).map(|(unit, count)| (unit, true, start, count))
        }
        _ => None,
    };
    if let Some((unit, adds, start, count)) = by_unit {
        return unit_call(unit, adds, start.clone(), count);
    }
    let datetime = || DataType::Timestamp(Some(6), TimezoneInfo::None);
    // The moved value and the interval, for the result's fractional digits.
    let digits_sources = match (&left, &right) {
        (start, Expr::Interval(interval)) | (Expr::Interval(interval), start)
            if is_plain_operand(start) =>
        {
            Some((start.clone(), interval_digits(interval)))
        }
        _ => None,
    };
    let (mut left, mut right) = (left, right);
    if has_time_unit(&right) {
        left = cast(left, datetime());
    } else if has_time_unit(&left) {
        right = cast(right, datetime());
    }
    let mut args = vec![binary(left, op, right)];
    if let Some((start, digits)) = digits_sources {
        args.extend([number(digits), start]);
    }
    call(basalt_functions::date_range::NAME, args)
}

/// A literal, a column or a CAST of one: cheap to pass again for its type.
fn is_plain_operand(e: &Expr) -> bool {
    match e {
        Expr::Value(_) | Expr::Identifier(_) | Expr::CompoundIdentifier(_) => true,
        Expr::TypedString { .. } => true,
        Expr::Cast { expr, .. } | Expr::Nested(expr) => is_plain_operand(expr),
        Expr::Function(f) if is_date_argument(e) => match &f.args {
            FunctionArguments::List(list) => unnamed_args(list)
                .and_then(|args| args.first().map(is_plain_operand))
                .unwrap_or(false),
            _ => false,
        },
        _ => false,
    }
}

/// MySQL's fractional digits of an interval: `INTERVAL 1.25 SECOND` two (text six), a unit
/// of microseconds six, other units none; -1 where they are not known here (an expression's
/// seconds, a compound unit of seconds).
fn interval_digits(interval: &basalt_sql::ast::Interval) -> i64 {
    let unit = |f: &Option<DateTimeField>| f.as_ref().map(|f| f.to_string().to_ascii_uppercase());
    let (leading, last) = (unit(&interval.leading_field), unit(&interval.last_field));
    let units = [&leading, &last];
    if units
        .iter()
        .any(|u| u.as_deref().is_some_and(|u| u.contains("MICROSECOND")))
    {
        return 6;
    }
    if last.is_some()
        && units
            .iter()
            .any(|u| u.as_deref().is_some_and(|u| u.contains("SECOND")))
    {
        return -1;
    }
    if leading.as_deref() != Some("SECOND") {
        return 0;
    }
    let mut value = interval.value.as_ref();
    while let Expr::UnaryOp { expr, .. } | Expr::Nested(expr) = value {
        value = expr;
    }
    match value {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) if n.contains(['e', 'E']) => 6,
            Value::Number(n, _) => n.split_once('.').map_or(0, |(_, f)| {
                f.bytes().take_while(u8::is_ascii_digit).count().min(6)
            }) as i64,
            Value::SingleQuotedString(_) | Value::DoubleQuotedString(_) => 6,
            _ => -1,
        },
        _ => -1,
    }
}

/// The unit and count of `INTERVAL n unit` (one unit) whose count DataFusion's interval
/// cannot take: `n` an expression, or an integer literal past what the interval's
/// nanoseconds hold or past any date of years 0000..9999 (MySQL's NULL). None otherwise.
fn unit_count(interval: &basalt_sql::ast::Interval) -> Option<(Unit, Expr)> {
    if interval.last_field.is_some() {
        return None;
    }
    let unit = Unit::parse(&interval.leading_field.as_ref()?.to_string())?;
    if !is_literal(&interval.value) {
        return Some((unit, interval.value.as_ref().clone()));
    }
    let (negative, value) = match interval.value.as_ref() {
        Expr::UnaryOp {
            op: basalt_sql::ast::UnaryOperator::Minus,
            expr,
        } => (true, expr.as_ref()),
        e => (false, e),
    };
    let Expr::Value(v) = value else {
        return None;
    };
    let Value::Number(digits, _) = &v.value else {
        return None;
    };
    // A fraction of a unit other than seconds: MySQL rounds the count half away from zero
    // (INTERVAL 1.5 DAY is two days), as the unit function does.
    if unit != Unit::Second && digits.contains(['.', 'e', 'E']) {
        return Some((unit, interval.value.as_ref().clone()));
    }
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Units in 10,000 years (a little more), or in i64::MAX nanoseconds, the fewer.
    let limit: u128 = match unit {
        Unit::Year => 10_000,
        Unit::Quarter => 40_000,
        Unit::Month => 120_000,
        Unit::Week => 530_000,
        Unit::Day => 3_700_000,
        Unit::Hour => 2_562_047,
        Unit::Minute => 153_722_867,
        Unit::Second => 9_223_372_036,
        Unit::Millisecond => 9_223_372_036_854,
        Unit::Microsecond => 9_223_372_036_854_775,
    };
    let large = digits.trim_start_matches('0').len() > 30
        || digits.parse::<u128>().is_ok_and(|n| n > limit);
    if !large {
        return None;
    }
    // The count as the largest BIGINT when it does not fit one: still far out of range.
    let count = match digits.parse::<i64>() {
        Ok(_) => interval.value.as_ref().clone(),
        Err(_) => number(if negative { -i64::MAX } else { i64::MAX }),
    };
    Some((unit, count))
}

/// `INTERVAL NULL <unit>` as `INTERVAL '0' <unit>`; None for any other expression.
fn null_interval_as_zero(e: &Expr) -> Option<Expr> {
    let Expr::Interval(interval) = e else {
        return None;
    };
    let Expr::Value(v) = interval.value.as_ref() else {
        return None;
    };
    if v.value != Value::Null {
        return None;
    }
    let mut zero = interval.clone();
    zero.value = Box::new(string("0"));
    Some(Expr::Interval(zero))
}

/// True for an INTERVAL of hours, minutes, seconds or finer (alone or in a compound unit).
fn has_time_unit(e: &Expr) -> bool {
    let Expr::Interval(interval) = e else {
        return false;
    };
    [&interval.leading_field, &interval.last_field]
        .into_iter()
        .flatten()
        .any(|f| {
            let unit = f.to_string().to_ascii_uppercase();
            ["HOUR", "MINUTE", "SECOND"]
                .iter()
                .any(|u| unit.contains(u))
        })
}

/// Doris's `<unit>s_add` / `<unit>s_sub`.
fn is_unit_arithmetic(name: &str) -> bool {
    let Some((unit, op)) = name.rsplit_once('_') else {
        return false;
    };
    matches!(op, "add" | "sub")
        && matches!(
            unit,
            "years"
                | "quarters"
                | "months"
                | "weeks"
                | "days"
                | "hours"
                | "minutes"
                | "seconds"
                | "milliseconds"
                | "microseconds"
        )
}

fn is_string_literal(e: &Expr) -> bool {
    matches!(e, Expr::Value(v) if matches!(v.value, Value::SingleQuotedString(_) | Value::DoubleQuotedString(_)))
}

/// `value` where `condition` holds, else NULL.
fn only_when(condition: Expr, value: Expr) -> Expr {
    Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![CaseWhen {
            condition,
            result: value,
        }],
        else_result: None,
    }
}

/// The statement's start time in UTC, to the second, as a DATETIME.
fn utc_now() -> Expr {
    cast(
        call("date_trunc", vec![string("second"), call("now", vec![])]),
        DataType::Timestamp(Some(6), TimezoneInfo::None),
    )
}

/// A UTC DATETIME as the wall-clock time in `time_zone`.
fn local_time(utc: Expr, time_zone: &str) -> Expr {
    if basalt_functions::time_zones::is_utc(time_zone) {
        return utc;
    }
    call("convert_tz", vec![utc, string("+00:00"), string(time_zone)])
}

/// A wall-clock DATETIME in `time_zone` as UTC.
fn utc_time(local: Expr, time_zone: &str) -> Expr {
    if basalt_functions::time_zones::is_utc(time_zone) {
        return local;
    }
    call(
        "convert_tz",
        vec![local, string(time_zone), string("+00:00")],
    )
}

pub(crate) fn cast(expr: Expr, data_type: DataType) -> Expr {
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(expr),
        data_type,
        array: false,
        format: None,
    }
}

/// `e`, or NULL where it is zero: the divisor of MySQL's `/`, `%`, `DIV` and MOD.
pub(crate) fn unless_zero(e: Expr) -> Expr {
    if is_nonzero_number(&e) {
        e
    } else {
        call("nullif", vec![e, number(0)])
    }
}

/// A numeric literal other than zero (a divisor that needs no check).
fn is_nonzero_number(e: &Expr) -> bool {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse::<f64>().is_ok_and(|x| x != 0.0),
            _ => false,
        },
        Expr::Nested(inner) => is_nonzero_number(inner),
        _ => false,
    }
}

/// Plain positional arguments of a function call, or None if it has anything else.
pub(crate) fn plain_args(f: &Function) -> Option<Vec<Expr>> {
    match &f.args {
        FunctionArguments::None => Some(vec![]),
        FunctionArguments::List(list)
            if list.duplicate_treatment.is_none() && list.clauses.is_empty() =>
        {
            unnamed_args(list)
        }
        _ => None,
    }
}

/// The query `sql` parses to, if it parses to one.
pub(crate) fn parsed_query(sql: &str) -> Option<basalt_sql::ast::Query> {
    match basalt_sql::parse_one(sql) {
        Ok(basalt_sql::Statement::Standard(stmt)) => match *stmt {
            Statement::Query(query) => Some(*query),
            _ => None,
        },
        _ => None,
    }
}

/// `sql` parsed as one standard statement, for the rewrites' unit tests.
#[cfg(test)]
pub(crate) fn parsed(sql: &str) -> Statement {
    match basalt_sql::parse_one(sql) {
        Ok(basalt_sql::Statement::Standard(stmt)) => *stmt,
        _ => panic!("not parsed: {sql}"),
    }
}

/// `sql` parsed, rewritten by `rewrite` and printed, for the rewrites' unit tests.
#[cfg(test)]
pub(crate) fn rewritten_by(sql: &str, rewrite: impl FnOnce(&mut Statement)) -> String {
    let mut stmt = parsed(sql);
    rewrite(&mut stmt);
    stmt.to_string()
}

/// A call's arguments when each is a plain expression (no name, no wildcard).
pub(crate) fn unnamed_args(list: &basalt_sql::ast::FunctionArgumentList) -> Option<Vec<Expr>> {
    list.args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
            _ => None,
        })
        .collect()
}

/// MySQL's date arithmetic wants a date or datetime; a string literal is read as one, and so
/// is an integer literal (`20240105` a DATE, `20240105101112` a DATETIME, NULL for no date),
/// and any other number once its type is known (a column, an expression).
pub(crate) fn as_temporal(e: Expr) -> Expr {
    match &e {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
                let ty = if s.contains(':') {
                    DataType::Timestamp(None, TimezoneInfo::None)
                } else {
                    DataType::Date
                };
                cast(e.clone(), ty)
            }
            // The CAST reads the number as MySQL does (basalt_functions' NumericDates).
            Value::Number(n, _) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                let ty = if n.len() <= 8 {
                    DataType::Date
                } else {
                    DataType::Timestamp(None, TimezoneInfo::None)
                };
                cast(e.clone(), ty)
            }
            _ => e,
        },
        _ => date_argument(e, "date"),
    }
}

/// Whether `e` is already a [`date_argument`].
fn is_date_argument(e: &Expr) -> bool {
    matches!(e, Expr::Function(f) if f.name.to_string() == basalt_functions::date_arguments::NAME)
}

/// `e`, whose type the SQL does not show, as a date function's argument: a number there is
/// read as MySQL reads a date (or, for `"time"`, a TIME) once its type is known; any other
/// value passes as it is (see basalt_functions' date_arguments).
fn date_argument(e: Expr, reading: &str) -> Expr {
    call(
        basalt_functions::date_arguments::NAME,
        vec![e, string(reading)],
    )
}

/// An unsigned numeric literal (`230322`, `10.5`).
fn is_number_literal(e: &Expr) -> bool {
    matches!(e, Expr::Value(v) if matches!(v.value, Value::Number(..)))
}

/// The fractional digits a CAST to DATETIME keeps: MySQL's DATETIME[(p)] and Doris's
/// DATETIMEV2/V1[(p)]; `None` for other types.
fn datetime_digits(t: &DataType) -> Option<u64> {
    match t {
        DataType::Datetime(p) => Some(p.unwrap_or(0)),
        DataType::Custom(name, modifiers) => {
            let name = name.to_string().to_ascii_lowercase();
            matches!(name.as_str(), "datetimev2" | "datetimev1")
                .then(|| modifiers.first().and_then(|m| m.parse().ok()).unwrap_or(0))
        }
        _ => None,
    }
}

/// An ARRAY's DATETIME(p) or TIME(p) element type as DataFusion plans it, and its p.
fn element_digits(t: &DataType) -> Option<(DataType, u64)> {
    match t {
        DataType::Time(p, _) => Some((DataType::Time(None, TimezoneInfo::None), p.unwrap_or(0))),
        _ => datetime_digits(t).map(|p| (DataType::Timestamp(Some(6), TimezoneInfo::None), p)),
    }
}

/// `value` rounded to `digits` fractional digits (and shown with them).
pub(crate) fn with_digits(value: Expr, digits: u64) -> Expr {
    call("round_fraction", vec![value, number(digits.min(6) as i64)])
}

/// The statement's clock to microseconds, in UTC or in the session's `time_zone`.
fn micro_clock(utc: bool, time_zone: &str) -> Expr {
    let now = cast(
        call("now", vec![]),
        DataType::Timestamp(Some(6), TimezoneInfo::None),
    );
    if utc {
        now
    } else {
        local_time(now, time_zone)
    }
}

/// A clock's reading shown with `digits` fractional digits, the rest cut off (MySQL's
/// `NOW(p)`, `CURTIME(p)` do not round).
fn clock_digits(value: Expr, digits: u64) -> Expr {
    call(
        "round_fraction",
        vec![
            value,
            number(digits.min(6) as i64),
            Expr::value(Value::Boolean(true)),
        ],
    )
}

/// A CAST target as DataFusion names it: MySQL's SIGNED/UNSIGNED, BINARY, DECIMAL and DATETIME
/// (microseconds, as Basalt stores it, so years up to 9999 fit) and Doris's DATEV2, DATETIMEV2/V1 and
/// DECIMALV2/V3.
fn is_bitmap_type(t: &DataType) -> bool {
    matches!(t, DataType::Custom(name, _) if name.to_string().eq_ignore_ascii_case("bitmap"))
}

/// `CAST(x AS SIGNED | UNSIGNED)`: a DECIMAL or DOUBLE `x` rounded and clipped as MySQL
/// converts it, then the cast other types take.
fn integer_cast(value: &Expr, target: &DataType) -> Expr {
    use basalt_functions::integral_casts::{SIGNED, UNSIGNED};
    let unsigned = matches!(target, DataType::Unsigned | DataType::UnsignedInteger);
    let integral = call(
        if unsigned { UNSIGNED } else { SIGNED },
        vec![value.clone()],
    );
    cast(
        integral,
        convert_type(target).unwrap_or_else(|| target.clone()),
    )
}

/// MySQL's SIGNED [INTEGER] and UNSIGNED [INTEGER] cast targets.
fn is_integer_cast(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Signed | DataType::SignedInteger | DataType::Unsigned | DataType::UnsignedInteger
    )
}

fn convert_type(t: &DataType) -> Option<DataType> {
    let datetime = || DataType::Timestamp(Some(6), TimezoneInfo::None);
    match t {
        // ARRAY<LARGEINT>, ARRAY<DATEV2>, ...: the element type as it is named here.
        DataType::Array(ArrayElemTypeDef::AngleBracket(inner)) => convert_type(inner)
            .map(|inner| DataType::Array(ArrayElemTypeDef::AngleBracket(Box::new(inner)))),
        DataType::Signed | DataType::SignedInteger => Some(DataType::BigInt(None)),
        // Doris: a DECIMAL without precision is DECIMALV3(38, 9) in a CAST (DataFusion's
        // default, (38, 10), was neither Doris's nor MySQL's (10, 0)).
        DataType::Decimal(ExactNumberInfo::None) | DataType::Numeric(ExactNumberInfo::None) => {
            Some(DataType::Decimal(ExactNumberInfo::PrecisionAndScale(38, 9)))
        }
        DataType::Unsigned | DataType::UnsignedInteger => Some(DataType::BigIntUnsigned(None)),
        DataType::Datetime(_) => Some(datetime()),
        // CAST(x AS BINARY) is x's bytes.
        DataType::Binary(_) | DataType::Varbinary(_) | DataType::Blob(_) => Some(DataType::Bytea),
        DataType::Custom(name, modifiers) => {
            let name = name.to_string().to_ascii_lowercase();
            match name.as_str() {
                "datev2" | "datev1" => Some(DataType::Date),
                // LARGEINT columns are DECIMAL(39, 0): 128-bit integers.
                "largeint" => Some(DataType::Decimal(ExactNumberInfo::PrecisionAndScale(
                    basalt_common::types::LARGEINT_PRECISION as u64,
                    0,
                ))),
                "datetimev2" | "datetimev1" => Some(datetime()),
                "decimalv3" | "decimalv2" => {
                    let number = |i: usize| modifiers.get(i).and_then(|m| m.parse::<u64>().ok());
                    let info = match (number(0), number(1)) {
                        (Some(p), Some(s)) => ExactNumberInfo::PrecisionAndScale(p, s as i64),
                        (Some(p), None) => ExactNumberInfo::Precision(p),
                        _ => ExactNumberInfo::None,
                    };
                    Some(DataType::Decimal(info))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// `GROUP_CONCAT([DISTINCT] e, .. [ORDER BY ..] [SEPARATOR 's'])`: `string_agg` of the
/// expressions' concatenation (rows where one is NULL are skipped), ',' by default. Doris's
/// `GROUP_CONCAT(e, 's')` names the separator as its second argument.
fn group_concat(f: &Function) -> Option<Expr> {
    use basalt_sql::ast::FunctionArgumentClause;
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    if f.over.is_some() || f.filter.is_some() {
        return None;
    }
    let mut values: Vec<Expr> = unnamed_args(list)?;
    let mut separator = None;
    let mut clauses = Vec::new();
    for clause in &list.clauses {
        match clause {
            FunctionArgumentClause::Separator(v) => separator = Some(Expr::value(v.clone())),
            other => clauses.push(other.clone()),
        }
    }
    // Doris: a second argument that is a string literal (either quotes) is the separator.
    if separator.is_none() && values.len() == 2 {
        if let Expr::Value(v) = &values[1] {
            if matches!(
                v.value,
                Value::SingleQuotedString(_) | Value::DoubleQuotedString(_)
            ) {
                separator = values.pop();
            }
        }
    }
    if values.is_empty() {
        return None;
    }
    // `ORDER BY 2`: MySQL's position is the second value's, not the constant 2.
    for clause in &mut clauses {
        if let FunctionArgumentClause::OrderBy(keys) = clause {
            for key in keys {
                if let Expr::Value(v) = &key.expr {
                    if let Value::Number(n, _) = &v.value {
                        if let Some(value) = n
                            .parse::<usize>()
                            .ok()
                            .and_then(|n| n.checked_sub(1).and_then(|i| values.get(i)))
                        {
                            key.expr = value.clone();
                        }
                    }
                }
            }
        }
    }
    let distinct_ordered = list.duplicate_treatment.is_some() && !clauses.is_empty();
    // Values as MySQL shows them as text (a DATETIME with a space).
    let value = call("mysql_concat", values);
    let separator = separator.unwrap_or_else(|| string(","));
    let aggregate = |name: &str, args: Vec<Expr>| {
        Expr::Function(Function {
            name: ObjectName::from(vec![Ident::new(name)]),
            uses_odbc_syntax: false,
            parameters: FunctionArguments::None,
            args: FunctionArguments::List(FunctionArgumentList {
                duplicate_treatment: list.duplicate_treatment,
                args: args
                    .into_iter()
                    .map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e)))
                    .collect(),
                clauses: clauses.clone(),
            }),
            filter: None,
            null_treatment: None,
            over: None,
            within_group: vec![],
        })
    };
    Some(if distinct_ordered {
        // DISTINCT .. ORDER BY keys that need not be the values (MySQL allows it): every
        // value in the keys' order, each kept at its first place.
        let mut ordered = aggregate("array_agg", vec![value]);
        if let Expr::Function(Function {
            args: FunctionArguments::List(list),
            ..
        }) = &mut ordered
        {
            list.duplicate_treatment = None;
        }
        call(
            "array_to_string",
            vec![call("array_distinct", vec![ordered]), separator],
        )
    } else {
        aggregate("string_agg", vec![value, separator])
    })
}

/// GROUP_CONCAT(..) cut to `max_len` bytes, when the session sets a limit.
fn cut_group_concat(e: &mut Expr, max_len: Option<u64>) {
    let (Some(max_len), Expr::Function(f)) = (max_len, &*e) else {
        return;
    };
    if !f.name.to_string().eq_ignore_ascii_case("group_concat") {
        return;
    }
    if let Some(aggregate) = group_concat(f) {
        *e = call(
            basalt_functions::group_concat_cut::NAME,
            vec![aggregate, number(max_len.min(i64::MAX as u64) as i64)],
        );
    }
}

fn rewrite_expr(e: &mut Expr, time_zone: &str) {
    let replacement = match e {
        // MySQL's unary plus does nothing, whatever its operand: `+'a'` is 'a' (a literal
        // stays a literal for the rules that look for one: `NOW(+3)`).
        Expr::UnaryOp {
            op: basalt_sql::ast::UnaryOperator::Plus,
            expr,
        } => Some(match expr.as_ref() {
            Expr::Value(_) => expr.as_ref().clone(),
            _ => Expr::Nested(expr.clone()),
        }),
        // EXTRACT(HOUR | MINUTE | SECOND | MICROSECOND FROM '10:11:12'): the string is a TIME.
        Expr::Extract { field, expr, .. }
            if matches!(
                field,
                DateTimeField::Hour
                    | DateTimeField::Minute
                    | DateTimeField::Second
                    | DateTimeField::Microsecond
            ) && is_string_literal(expr) =>
        {
            let time = call(basalt_functions::time_cast::NAME, vec![(**expr).clone()]);
            **expr = time;
            None
        }
        // EXTRACT(.. FROM n) of a number column reads it as MySQL reads a date (or a TIME).
        Expr::Extract { field, expr, .. }
            if !matches!(**expr, Expr::Value(_)) && !is_date_argument(expr) =>
        {
            let reading = match field {
                DateTimeField::Hour
                | DateTimeField::Minute
                | DateTimeField::Second
                | DateTimeField::Microsecond => "time",
                _ => "date",
            };
            **expr = date_argument((**expr).clone(), reading);
            None
        }
        // N'text': MySQL's national character set is utf8, as every string here.
        Expr::Value(v) if matches!(v.value, Value::NationalStringLiteral(_)) => match &v.value {
            Value::NationalStringLiteral(text) => Some(string(text)),
            _ => None,
        },
        // `-'3'`, `-''`, `-CONCAT(..)`, `-CAST(x AS BINARY)`: MySQL negates the text's number,
        // as a DOUBLE.
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } if is_text_operand(expr) => Some(call(
            basalt_functions::MYSQL_NEGATE_TEXT,
            vec![(**expr).clone()],
        )),
        // `-u` of an UNSIGNED column, `-(a < b)`, `- @a`: DataFusion plans `-` only of signed
        // numbers, before any type is known; the analyzer gives `mysql_negate` its meaning.
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } if !is_literal_operand(expr) => {
            Some(call(basalt_functions::MYSQL_NEGATE, vec![(**expr).clone()]))
        }
        // TRIM([side] rem FROM s) removes `rem` as a string (MySQL, Doris), not its characters.
        Expr::Trim {
            expr,
            trim_where,
            trim_what: Some(rem),
            trim_characters: None,
        } => {
            let side = match trim_where {
                Some(TrimWhereField::Leading) => 1,
                Some(TrimWhereField::Trailing) => 2,
                _ => 0,
            };
            Some(call(
                "mysql_trim",
                vec![(**expr).clone(), (**rem).clone(), number(side)],
            ))
        }
        // UTC_DATE, UTC_TIME, UTC_TIMESTAMP without parentheses: MySQL's keywords for the
        // functions (never a column's name).
        Expr::Identifier(i)
            if i.quote_style.is_none()
                && ["utc_date", "utc_time", "utc_timestamp"]
                    .iter()
                    .any(|n| i.value.eq_ignore_ascii_case(n)) =>
        {
            match call(&i.value.to_ascii_lowercase(), vec![]) {
                Expr::Function(f) => rewrite_function(&f, time_zone),
                _ => None,
            }
        }
        // CURRENT_USER without parentheses (a reserved word: never a column's name).
        Expr::Identifier(i)
            if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("current_user") =>
        {
            Some(call("current_user", vec![]))
        }
        // FLOOR(x) / CEIL(x): typed as MySQL types them (`FLOOR(5.5)` is 5, not 5.0).
        Expr::Floor {
            expr,
            field: CeilFloorKind::DateTimeField(DateTimeField::NoDateTime),
        } => Some(call("mysql_floor", vec![hex_number(expr)])),
        Expr::Ceil {
            expr,
            field: CeilFloorKind::DateTimeField(DateTimeField::NoDateTime),
        } => Some(call("mysql_ceil", vec![hex_number(expr)])),
        // Doris's FLOOR(x, d) / CEIL(x, d): down or up to `d` decimals.
        Expr::Floor {
            expr,
            field: CeilFloorKind::Scale(d),
        } => Some(call(
            "mysql_floor",
            vec![hex_number(expr), Expr::Value(d.clone())],
        )),
        Expr::Ceil {
            expr,
            field: CeilFloorKind::Scale(d),
        } => Some(call(
            "mysql_ceil",
            vec![hex_number(expr), Expr::Value(d.clone())],
        )),
        Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("group_concat") => {
            group_concat(f)
        }
        // CAST(x AS CHAR(n)) keeps the first n characters (MySQL).
        Expr::Cast {
            kind: CastKind::Cast,
            expr,
            data_type: DataType::Char(Some(length)),
            format: None,
            ..
        } => char_prefix((**expr).clone(), length),
        Expr::Convert {
            expr,
            data_type: Some(DataType::Char(Some(length))),
            charset: None,
            ..
        } => char_prefix((**expr).clone(), length),
        // `s REGEXP p` / `s RLIKE p`: a regular expression match (case-sensitive, as Doris).
        Expr::RLike {
            negated,
            expr,
            pattern,
            ..
        } => {
            let matched = call("regexp_like", vec![(**expr).clone(), (**pattern).clone()]);
            Some(if *negated {
                Expr::UnaryOp {
                    op: UnaryOperator::Not,
                    expr: Box::new(matched),
                }
            } else {
                matched
            })
        }
        // CAST(x AS IPV4 / IPV6): Doris's address types (text that is no address is NULL).
        Expr::Cast {
            kind: CastKind::Cast,
            expr,
            data_type: DataType::Custom(name, modifiers),
            format: None,
            ..
        } if modifiers.is_empty() && ip_cast(name).is_some() => {
            ip_cast(name).map(|f| call(f, vec![(**expr).clone()]))
        }
        // CAST(x AS JSON) reads text as a document (MySQL).
        Expr::Cast {
            kind: CastKind::Cast,
            expr,
            data_type: DataType::JSON,
            format: None,
            ..
        } => Some(call("json_parse", vec![(**expr).clone()])),
        // A character set introducer: `_binary'..'` is the bytes, `_utf8mb4'..'` the text.
        Expr::Prefixed { prefix, value } if prefix.value.starts_with('_') => {
            let is_hex = matches!(
                &**value,
                Expr::Value(v) if matches!(v.value, Value::HexStringLiteral(_))
            );
            Some(if prefix.value.eq_ignore_ascii_case("_binary") && !is_hex {
                cast((**value).clone(), DataType::Bytea)
            } else {
                (**value).clone()
            })
        }
        // TIME '-12:30:00': MySQL's TIME (a signed span up to 838:59:59), not a time of day.
        Expr::TypedString(typed) if matches!(typed.data_type, DataType::Time(..)) => Some(call(
            basalt_functions::time_cast::NAME,
            vec![Expr::Value(typed.value.clone())],
        )),
        // ARRAY<DATETIME(p)> and ARRAY<TIME(p)> keep p digits in their elements.
        Expr::Cast {
            kind: CastKind::Cast,
            expr,
            data_type: DataType::Array(ArrayElemTypeDef::AngleBracket(element)),
            format: None,
            ..
        } if element_digits(element).is_some() => element_digits(element).map(|(plain, digits)| {
            let target = DataType::Array(ArrayElemTypeDef::AngleBracket(Box::new(plain)));
            with_digits(cast((**expr).clone(), target), digits)
        }),
        // MySQL reads a number or digits cast to TIME as HHMMSS; TIME(p) keeps p digits.
        Expr::Cast {
            kind: CastKind::Cast,
            expr,
            data_type: DataType::Time(precision, _),
            format: None,
            ..
        } => Some(with_digits(
            call("mysql_time", vec![(**expr).clone()]),
            precision.unwrap_or(0),
        )),
        // DATETIME(p) keeps p digits (DATETIME is DATETIME(0)), rounded half up.
        Expr::Cast {
            kind: CastKind::Cast,
            expr,
            data_type,
            format: None,
            ..
        } if datetime_digits(data_type).is_some() => {
            let digits = datetime_digits(data_type).unwrap_or(6);
            let target = convert_type(data_type).unwrap_or_else(|| data_type.clone());
            Some(with_digits(cast((**expr).clone(), target), digits))
        }
        Expr::Function(f) if f.over.is_none() && f.filter.is_none() => {
            numeric_hex_arguments(f);
            rewrite_function(f, time_zone)
        }
        Expr::BinaryOp {
            left,
            op: BinaryOperator::MyIntegerDivide,
            right,
        } => Some(cast(
            binary(
                (**left).clone(),
                BinaryOperator::Divide,
                unless_zero((**right).clone()),
            ),
            DataType::BigInt(None),
        )),
        // MySQL's `<<` and `>>` shift the 64 bits logically and give a BIGINT UNSIGNED: 0 for
        // a count of 64 or more (`1 << 64`), `-1 >> 1` is 9223372036854775807 (DataFusion's
        // shifted arithmetically and took the count modulo 64). Operands are read as
        // CAST(x AS SIGNED) reads them.
        Expr::BinaryOp {
            left,
            op: op @ (BinaryOperator::PGBitwiseShiftLeft | BinaryOperator::PGBitwiseShiftRight),
            right,
        } => Some(cast(
            call(
                if *op == BinaryOperator::PGBitwiseShiftLeft {
                    "bit_shift_left"
                } else {
                    "bit_shift_right"
                },
                vec![
                    integer_cast(left, &DataType::Signed),
                    integer_cast(right, &DataType::Signed),
                ],
            ),
            DataType::BigIntUnsigned(None),
        )),
        // MySQL: division and modulo by zero are NULL (DataFusion fails the query).
        Expr::BinaryOp {
            left,
            op: op @ (BinaryOperator::Divide | BinaryOperator::Modulo),
            right,
        } if !is_nonzero_number(right) => Some(Expr::BinaryOp {
            left: left.clone(),
            op: op.clone(),
            right: Box::new(unless_zero((**right).clone())),
        }),
        // `d + INTERVAL n unit` (or `INTERVAL n unit + d`, `d - INTERVAL ..`): as DATE_ADD,
        // a result outside years 0000..9999 is NULL.
        Expr::BinaryOp {
            left,
            op: op @ (BinaryOperator::Plus | BinaryOperator::Minus),
            right,
        } if matches!(**right, Expr::Interval(_))
            || (*op == BinaryOperator::Plus && matches!(**left, Expr::Interval(_))) =>
        {
            Some(shifted((**left).clone(), op.clone(), (**right).clone()))
        }
        // CAST(x AS BITMAP): Doris casts only a NULL or a BITMAP to it.
        Expr::Cast {
            expr, data_type, ..
        } if is_bitmap_type(data_type) => Some(call(
            basalt_functions::bitmap_cast::NAME,
            vec![(**expr).clone()],
        )),
        // CAST(x AS SIGNED | UNSIGNED): a fraction rounded as MySQL rounds it, not cut off.
        Expr::Cast {
            kind: CastKind::Cast,
            expr,
            data_type,
            format: None,
            ..
        } if is_integer_cast(data_type) => Some(integer_cast(expr, data_type)),
        Expr::Convert {
            expr,
            data_type: Some(data_type),
            charset: None,
            ..
        } if is_integer_cast(data_type) => Some(integer_cast(expr, data_type)),
        // CAST(x AS BINARY(n)): x's bytes cut or padded with 0x00 to n.
        Expr::Cast {
            kind: CastKind::Cast,
            expr,
            data_type: DataType::Binary(Some(width)),
            format: None,
            ..
        }
        | Expr::Convert {
            expr,
            data_type: Some(DataType::Binary(Some(width))),
            charset: None,
            ..
        } => Some(call(
            basalt_functions::binary_casts::WIDTH,
            vec![
                cast((**expr).clone(), DataType::Bytea),
                number(*width as i64),
            ],
        )),
        Expr::Cast { data_type, .. } => convert_type(data_type).map(|t| {
            let mut c = e.clone();
            if let Expr::Cast { data_type, .. } = &mut c {
                *data_type = t;
            }
            c
        }),
        Expr::Convert {
            expr,
            data_type: Some(t),
            charset: None,
            ..
        } => {
            let t = convert_type(t).unwrap_or_else(|| t.clone());
            Some(cast((**expr).clone(), t))
        }
        _ => None,
    };
    if let Some(r) = replacement {
        *e = r;
    }
}

/// A literal whose negation DataFusion plans: a number, a placeholder, NULL, an interval (not
/// TRUE or FALSE, which MySQL negates as 1 and 0).
fn is_literal_operand(e: &Expr) -> bool {
    match e {
        Expr::Nested(inner) => is_literal_operand(inner),
        Expr::Value(v) => matches!(
            v.value,
            Value::Number(..) | Value::Null | Value::Placeholder(_)
        ),
        Expr::Interval(_) => true,
        _ => false,
    }
}

/// A string literal or a CONCAT, whose `-` MySQL takes as the negated number of its text.
fn is_text_operand(e: &Expr) -> bool {
    match e {
        Expr::Nested(inner) => is_text_operand(inner),
        Expr::Value(v) => matches!(
            v.value,
            Value::SingleQuotedString(_) | Value::DoubleQuotedString(_)
        ),
        Expr::Function(f) => {
            let name = f.name.to_string();
            name.eq_ignore_ascii_case("concat") || name.eq_ignore_ascii_case("mysql_concat")
        }
        // CAST(x AS BINARY), CAST(x AS CHAR): text whatever x is.
        Expr::Cast { data_type, .. } => matches!(
            data_type,
            DataType::Binary(_)
                | DataType::Bytea
                | DataType::Varbinary(_)
                | DataType::Blob(_)
                | DataType::Char(_)
                | DataType::Varchar(_)
                | DataType::Text
                | DataType::String(_)
        ),
        _ => false,
    }
}

/// The function casting to the address type `name` (IPV4 or IPV6), if it is one.
fn ip_cast(name: &ObjectName) -> Option<&'static str> {
    match name.to_string().to_ascii_lowercase().as_str() {
        "ipv4" => Some("ip_cast_ipv4"),
        "ipv6" => Some("ip_cast_ipv6"),
        _ => None,
    }
}

/// `e`, or the number a hex or bit literal spells (see [`numeric_hex_arguments`]).
fn hex_number(e: &Expr) -> Expr {
    let mut e = e.clone();
    crate::bit_literals::hex_as_number(&mut e);
    e
}

/// Hex and bit literals given to a math function are the numbers their bytes spell, as in
/// MySQL (`ROUND(0x10)`, `ABS(b'101')`); so are those beside a number literal in GREATEST /
/// LEAST (`GREATEST(0x10, 3)` is 16). DataFusion refused the bytes, or compared them as bytes.
fn numeric_hex_arguments(f: &mut Function) {
    let name = match f.name.0.as_slice() {
        [part] => part.as_ident().map(|i| i.value.to_ascii_lowercase()),
        _ => None,
    };
    let Some(name) = name else {
        return;
    };
    let FunctionArguments::List(list) = &mut f.args else {
        return;
    };
    let mut args = list.args.iter_mut().filter_map(|a| match a {
        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
        _ => None,
    });
    let numbers = match name.as_str() {
        "abs" | "acos" | "asin" | "atan" | "atan2" | "ceil" | "ceiling" | "cos" | "cot"
        | "degrees" | "exp" | "floor" | "ln" | "log" | "log10" | "log2" | "mod" | "pow"
        | "power" | "radians" | "round" | "sign" | "sin" | "sqrt" | "tan" | "truncate" => true,
        "greatest" | "least" => args.any(|e| is_number_literal(e)),
        _ => false,
    };
    if !numbers {
        return;
    }
    for arg in list.args.iter_mut() {
        if let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = arg {
            crate::bit_literals::hex_as_number(e);
        }
    }
}

fn rewrite_function(f: &Function, time_zone: &str) -> Option<Expr> {
    let name = match f.name.0.as_slice() {
        [part] => part.as_ident()?.value.to_ascii_lowercase(),
        _ => return None,
    };
    if name == "count" {
        if let Some(tuples) = crate::distinct_tuples::count_distinct_tuples(f) {
            return Some(tuples);
        }
    }
    // Doris: ARRAY_AGG of a group without values is [] (DataFusion: NULL).
    if name == "array_agg" && f.over.is_none() {
        return Some(call(
            basalt_functions::EMPTY_LIST_IF_NULL,
            vec![Expr::Function(f.clone())],
        ));
    }
    let args = plain_args(f)?;
    // HOUR / MINUTE / SECOND / MICROSECOND read a string or a number as a TIME
    // (`MINUTE('10:11:12')` is 11, `SECOND(230322)` 22; a DATETIME string gives its time of
    // day), other parts read it as a date (`DAYOFMONTH(19970323)` is 23).
    let date_part = |unit: &str, arg: Expr| {
        let time_unit = matches!(unit, "hour" | "minute" | "second" | "microsecond");
        let arg = if time_unit && (is_string_literal(&arg) || is_number_literal(&arg)) {
            call(basalt_functions::time_cast::NAME, vec![arg])
        } else if time_unit && !matches!(arg, Expr::Value(_)) {
            date_argument(arg, "time")
        } else {
            as_temporal(arg)
        };
        call("date_part", vec![string(unit), arg])
    };
    let one = |args: &[Expr]| (args.len() == 1).then(|| args[0].clone());
    Some(match name.as_str() {
        "if" if args.len() == 3 => Expr::Case {
            case_token: AttachedToken::empty(),
            end_token: AttachedToken::empty(),
            operand: None,
            conditions: vec![CaseWhen {
                condition: {
                    let mut condition = args[0].clone();
                    truth_of(&mut condition);
                    condition
                },
                result: args[1].clone(),
            }],
            else_result: Some(Box::new(args[2].clone())),
        },
        // Doris: days_sub(d, INTERVAL 2 YEAR) moves by the interval, as DATE_SUB does.
        n if args.len() == 2 && is_unit_arithmetic(n) && matches!(args[1], Expr::Interval(_)) => {
            let op = if n.ends_with("_add") {
                BinaryOperator::Plus
            } else {
                BinaryOperator::Minus
            };
            shifted(as_temporal(args[0].clone()), op, args[1].clone())
        }
        // Doris's bit functions on integers (other numbers are truncated to BIGINT).
        "bitand" | "bitor" | "bitxor" if args.len() == 2 => {
            let op = match name.as_str() {
                "bitand" => BinaryOperator::BitwiseAnd,
                "bitor" => BinaryOperator::BitwiseOr,
                _ => BinaryOperator::BitwiseXor,
            };
            binary(
                cast(args[0].clone(), DataType::BigInt(None)),
                op,
                cast(args[1].clone(), DataType::BigInt(None)),
            )
        }
        // ~x is -x - 1 in two's complement.
        "bitnot" if args.len() == 1 => binary(
            Expr::UnaryOp {
                op: UnaryOperator::Minus,
                expr: Box::new(cast(args[0].clone(), DataType::BigInt(None))),
            },
            BinaryOperator::Minus,
            number(1),
        ),
        "array" => call("make_array", args),
        // Doris: bitmap_agg(x) is the union of x's values as one BITMAP.
        "bitmap_agg" if args.len() == 1 => call("bitmap_union", vec![call("to_bitmap", args)]),
        "struct_element" if args.len() == 2 && is_string_literal(&args[1]) => {
            call("get_field", args)
        }
        // Doris: from_second/_millisecond/_microsecond(n) is the DATETIME n units after the
        // epoch in the session's zone; past 9999-12-31 or before the epoch, NULL.
        "from_second" | "from_millisecond" | "from_microsecond" if args.len() == 1 => {
            let (function, last) = match name.as_str() {
                "from_second" => ("to_timestamp_seconds", 253_402_300_799_i64),
                "from_millisecond" => ("to_timestamp_millis", 253_402_300_799_999),
                _ => ("to_timestamp_micros", 253_402_300_799_999_999),
            };
            let n = args[0].clone();
            let in_range = Expr::Between {
                expr: Box::new(n.clone()),
                negated: false,
                low: Box::new(number(0)),
                high: Box::new(number(last)),
            };
            let utc = cast(
                call(function, vec![n]),
                DataType::Timestamp(Some(6), TimezoneInfo::None),
            );
            local_time(only_when(in_range, utc), time_zone)
        }
        // Doris: second/millisecond/microsecond_timestamp(dt) counts the units since the
        // epoch to dt, read in the session's zone.
        "second_timestamp" | "millisecond_timestamp" | "microsecond_timestamp"
            if args.len() == 1 =>
        {
            let utc = utc_time(
                cast(
                    as_temporal(args[0].clone()),
                    DataType::Timestamp(Some(6), TimezoneInfo::None),
                ),
                time_zone,
            );
            // Its microseconds since the epoch: arrow_cast, as a CAST of a DATETIME to BIGINT
            // is MySQL's number YYYYMMDDhhmmss.
            let micros = call(
                "arrow_cast",
                vec![
                    cast(utc, DataType::Timestamp(Some(6), TimezoneInfo::None)),
                    Expr::value(Value::SingleQuotedString("Int64".into())),
                ],
            );
            let per_unit = match name.as_str() {
                "second_timestamp" => 1_000_000,
                "millisecond_timestamp" => 1_000,
                _ => return Some(micros),
            };
            let mut units = Expr::BinaryOp {
                left: Box::new(micros),
                op: BinaryOperator::MyIntegerDivide,
                right: Box::new(number(per_unit)),
            };
            rewrite_expr(&mut units, time_zone);
            units
        }
        // FROM_UNIXTIME(n, format): the time formatted as DATE_FORMAT formats it.
        "from_unixtime" if args.len() == 2 => {
            let time = rewrite_function(
                &Function {
                    args: FunctionArguments::List(FunctionArgumentList {
                        duplicate_treatment: None,
                        args: vec![FunctionArg::Unnamed(FunctionArgExpr::Expr(args[0].clone()))],
                        clauses: vec![],
                    }),
                    ..f.clone()
                },
                time_zone,
            )?;
            call("date_format", vec![time, args[1].clone()])
        }
        // Doris's days_add('2020-01-01', 2) is a DATE: a literal reads as the type it spells.
        n if args.len() == 2 && is_unit_arithmetic(n) && is_string_literal(&args[0]) => {
            call(n, vec![as_temporal(args[0].clone()), args[1].clone()])
        }
        // Outside a function's domain MySQL and Doris answer NULL (DataFusion: NaN or -inf).
        "acos" | "asin" if args.len() == 1 => {
            let x = args[0].clone();
            let inside = Expr::Between {
                expr: Box::new(x.clone()),
                negated: false,
                low: Box::new(number(-1)),
                high: Box::new(number(1)),
            };
            only_when(inside, call(&name, vec![x]))
        }
        // Doris's DSQRT is the always-nullable SQRT.
        "sqrt" | "dsqrt" if args.len() == 1 => {
            let x = args[0].clone();
            only_when(
                binary(x.clone(), BinaryOperator::GtEq, number(0)),
                call("sqrt", vec![x]),
            )
        }
        "ln" | "log2" | "log10" if args.len() == 1 => {
            let x = args[0].clone();
            only_when(
                binary(x.clone(), BinaryOperator::Gt, number(0)),
                call(&name, vec![x]),
            )
        }
        // MySQL's LOG(x) is the natural logarithm; LOG(b, x) is NULL unless b > 0, b <> 1 and
        // x > 0.
        "log" if args.len() == 1 => {
            let x = args[0].clone();
            only_when(
                binary(x.clone(), BinaryOperator::Gt, number(0)),
                call("ln", vec![x]),
            )
        }
        "log" if args.len() == 2 => {
            let (b, x) = (args[0].clone(), args[1].clone());
            let positive = |e: &Expr| binary(e.clone(), BinaryOperator::Gt, number(0));
            let domain = binary(
                binary(positive(&b), BinaryOperator::And, positive(&x)),
                BinaryOperator::And,
                binary(b.clone(), BinaryOperator::NotEq, number(1)),
            );
            only_when(domain, call("log", vec![b, x]))
        }
        "year" | "month" | "quarter" | "hour" | "minute" | "second" => {
            date_part(&name, one(&args)?)
        }
        "day" | "dayofmonth" => date_part("day", one(&args)?),
        // MICROSECOND(x): the fraction of x's second (date_part counts the minute's).
        "microsecond" => binary(
            date_part("microsecond", one(&args)?),
            BinaryOperator::Modulo,
            number(1_000_000),
        ),
        // TIME(x): x as MySQL's TIME.
        "time" => call(basalt_functions::time_cast::NAME, vec![one(&args)?]),
        "dayofyear" => date_part("doy", one(&args)?),
        // MySQL's week modes; WEEK(d) takes the session's `default_week_format`, YEARWEEK(d)
        // mode 0 (Sunday weeks counted from 0).
        "week" | "yearweek" if !args.is_empty() && args.len() <= 2 => {
            let default = match name.as_str() {
                "week" => Expr::Identifier(Ident::new("@@default_week_format")),
                _ => number(0),
            };
            let mode = args.get(1).cloned().unwrap_or(default);
            call(
                &format!("mysql_{name}"),
                vec![
                    cast(as_temporal(args[0].clone()), DataType::Date),
                    cast(mode, DataType::BigInt(None)),
                ],
            )
        }
        // Doris types an integer literal by the narrowest type holding it, and BIT_COUNT
        // counts the bits of that type: BIT_COUNT(-1) is 8.
        "bit_count" if args.len() == 1 => call("bit_count", vec![narrowest_integer(&args[0])?]),
        // WEEKOFYEAR(d) is WEEK(d, 3), the ISO 8601 week.
        "weekofyear" => call(
            "mysql_week",
            vec![cast(as_temporal(one(&args)?), DataType::Date), number(3)],
        ),
        // MySQL: 1 = Sunday .. 7 = Saturday; DataFusion's dow: 0 = Sunday.
        "dayofweek" => binary(
            date_part("dow", one(&args)?),
            BinaryOperator::Plus,
            number(1),
        ),
        // MySQL: 0 = Monday .. 6 = Sunday.
        "weekday" => binary(
            binary(
                date_part("dow", one(&args)?),
                BinaryOperator::Plus,
                number(6),
            ),
            BinaryOperator::Modulo,
            number(7),
        ),
        // The statement's clock reads UTC; the session's zone gives the wall-clock time.
        "utc_date" if args.is_empty() => call("current_date", vec![]),
        "utc_time" if args.is_empty() => cast(utc_now(), DataType::Time(None, TimezoneInfo::None)),
        // DATETIME(0), as MySQL types NOW() (the column says so to clients and to CTAS).
        "utc_timestamp" if args.is_empty() => with_digits(utc_now(), 0),
        "now" | "current_timestamp" | "localtime" | "localtimestamp" | "sysdate"
            if args.is_empty() =>
        {
            with_digits(local_time(utc_now(), time_zone), 0)
        }
        // NOW(p): the clock to microseconds, shown with p fractional digits (0 to 6).
        "now" | "current_timestamp" | "localtime" | "localtimestamp" | "sysdate"
        | "utc_timestamp"
            if args.len() == 1 =>
        {
            let digits = fraction_digits_arg(&args[0])?;
            clock_digits(micro_clock(name == "utc_timestamp", time_zone), digits)
        }
        "curdate" | "current_date" if args.is_empty() => {
            cast(local_time(utc_now(), time_zone), DataType::Date)
        }
        "curtime" | "current_time" if args.is_empty() => cast(
            local_time(utc_now(), time_zone),
            DataType::Time(None, TimezoneInfo::None),
        ),
        // CURTIME(p), UTC_TIME(p): the time of day to microseconds, shown with p digits.
        "curtime" | "current_time" | "utc_time" if args.len() == 1 => {
            let digits = fraction_digits_arg(&args[0])?;
            let clock = micro_clock(name == "utc_time", time_zone);
            clock_digits(call("mysql_time", vec![clock]), digits)
        }
        // Seconds from 0 to 32536771199 (3001-01-18 23:59:59 UTC); others are NULL.
        "from_unixtime" if args.len() == 1 => {
            let n = args[0].clone();
            let in_range = Expr::Between {
                expr: Box::new(n.clone()),
                negated: false,
                low: Box::new(number(0)),
                high: Box::new(number(32536771199)),
            };
            // A fraction of a second counts too (FROM_UNIXTIME(1.5)): microseconds, shown
            // with a literal's decimals as MySQL shows them.
            let literal_decimals = match &n {
                Expr::Value(v) => match &v.value {
                    Value::Number(text, _) => text.split_once('.').map(|(_, f)| f.len()),
                    _ => None,
                },
                _ => None,
            };
            let micros = cast(
                binary(n, BinaryOperator::Multiply, number(1_000_000)),
                DataType::BigInt(None),
            );
            let time = local_time(
                only_when(in_range, call("to_timestamp_micros", vec![micros])),
                time_zone,
            );
            match literal_decimals {
                Some(digits) => with_digits(time, digits.min(6) as u64),
                None => time,
            }
        }
        "unix_timestamp" if args.is_empty() => call("to_unixtime", vec![call("now", vec![])]),
        // A time before the epoch, or past MySQL's last TIMESTAMP (3001-01-18 23:59:59 UTC),
        // is 0 (MySQL, Doris). Microseconds: a nanosecond DATETIME ends in 2262.
        // Seconds with the argument's fraction digits (a DECIMAL when it has some).
        "unix_timestamp" => {
            // Doris's UNIX_TIMESTAMP(text, format) reads the text as STR_TO_DATE does.
            let (value, source) = match args.len() {
                2 => {
                    let parsed = call("str_to_date", args.clone());
                    (parsed.clone(), parsed)
                }
                _ => (as_temporal(one(&args)?), one(&args)?),
            };
            let seconds = call(
                basalt_functions::unix_seconds::NAME,
                vec![
                    utc_time(
                        cast(value, DataType::Timestamp(Some(6), TimezoneInfo::None)),
                        time_zone,
                    ),
                    source,
                ],
            );
            let outside = binary(
                binary(seconds.clone(), BinaryOperator::Lt, number(0)),
                BinaryOperator::Or,
                binary(seconds.clone(), BinaryOperator::Gt, number(32_536_771_199)),
            );
            Expr::Case {
                case_token: AttachedToken::empty(),
                end_token: AttachedToken::empty(),
                operand: None,
                conditions: vec![CaseWhen {
                    condition: outside,
                    result: number(0),
                }],
                else_result: Some(Box::new(seconds)),
            }
        }
        "date" => cast(one(&args)?, DataType::Date),
        "datediff" if args.len() == 2 => {
            let day = |e: Expr| call("to_unixtime", vec![cast(e, DataType::Date)]);
            // Whole days: `/` of integers is DECIMAL division.
            cast(
                binary(
                    binary(
                        day(args[0].clone()),
                        BinaryOperator::Minus,
                        day(args[1].clone()),
                    ),
                    BinaryOperator::Divide,
                    number(86400),
                ),
                DataType::BigInt(None),
            )
        }
        // Doris: DATE_FLOOR(d, INTERVAL n unit) is `<unit>_floor(d, n)`.
        // Doris's DATE_TRUNC(datetime, 'unit') (DataFusion's order, unit first, is taken too):
        // the unit's floor, which keeps a DATE a DATE and reaches years 1 to 9999.
        "date_trunc" | "datetrunc" if args.len() == 2 => {
            let unit_of = |e: &Expr| match e {
                Expr::Value(v) => match &v.value {
                    Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Unit::parse(s)
                        .filter(|u| !matches!(u, Unit::Millisecond | Unit::Microsecond)),
                    _ => None,
                },
                _ => None,
            };
            let (unit, value) = match (unit_of(&args[0]), unit_of(&args[1])) {
                (_, Some(unit)) => (unit, &args[0]),
                (Some(unit), None) => (unit, &args[1]),
                (None, None) => return None,
            };
            call(
                &basalt_functions::date_round::function_name(unit, false),
                vec![value.clone()],
            )
        }
        "date_floor" | "date_ceil" if args.len() == 2 => {
            let Expr::Interval(interval) = &args[1] else {
                return None;
            };
            let unit = Unit::parse(&interval.leading_field.as_ref()?.to_string())?;
            let up = name == "date_ceil";
            call(
                &basalt_functions::date_round::function_name(unit, up),
                vec![args[0].clone(), interval.value.as_ref().clone()],
            )
        }
        "date_add" | "adddate" | "date_sub" | "subdate" if args.len() == 2 => {
            let adds = matches!(name.as_str(), "date_add" | "adddate");
            let Expr::Interval(interval) = &args[1] else {
                // A count of days (MySQL's ADDDATE(d, n), Doris's DATE_ADD(d, n)).
                return Some(unit_call(Unit::Day, adds, args[0].clone(), args[1].clone()));
            };
            if !is_literal(&interval.value) {
                let unit = interval.leading_field.as_ref()?.to_string();
                let unit = Unit::parse(&unit)?;
                let count = interval.value.as_ref().clone();
                return Some(unit_call(unit, adds, args[0].clone(), count));
            }
            let op = if adds {
                BinaryOperator::Plus
            } else {
                BinaryOperator::Minus
            };
            shifted(as_temporal(args[0].clone()), op, args[1].clone())
        }
        "timestampadd" if args.len() == 3 => {
            unit_call(unit_arg(&args[0])?, true, args[2].clone(), args[1].clone())
        }
        "timestampdiff" if args.len() == 3 => call(
            &unit_arg(&args[0])?.diff_function(),
            vec![args[2].clone(), args[1].clone()],
        ),
        // Doris's GROUPING_ID(a, b) is the bitmask MySQL's GROUPING(a, b) gives.
        "grouping_id" => call("grouping", args),
        // Doris names the fields of struct(a, b) col1, col2 (DataFusion: c0, c1).
        "struct" if !args.is_empty() => call(
            "named_struct",
            args.iter()
                .enumerate()
                .flat_map(|(i, a)| [string(&format!("col{}", i + 1)), a.clone()])
                .collect(),
        ),
        // NULL when any argument is NULL (DataFusion's concat skips them).
        "concat" if !args.is_empty() => call("mysql_concat", args),
        "lcase" => call("lower", args),
        "ucase" => call("upper", args),
        // Doris's POSITION(substr, str[, pos]) is LOCATE (DataFusion's reads strpos(str, substr)).
        "locate" | "position" if args.len() == 2 => {
            call("strpos", vec![args[1].clone(), args[0].clone()])
        }
        "mod" if args.len() == 2 => binary(
            args[0].clone(),
            BinaryOperator::Modulo,
            unless_zero(args[1].clone()),
        ),
        _ => return crate::function_aliases::rewrite(&name, &args),
    })
}

/// `d` plus (or minus) `count` units, as Doris's `<unit>s_add` / `<unit>s_sub`.
fn unit_call(unit: Unit, adds: bool, d: Expr, count: Expr) -> Expr {
    let name = if adds {
        unit.add_function()
    } else {
        unit.sub_function()
    };
    call(&name, vec![d, count])
}

/// The unit argument of TIMESTAMPADD / TIMESTAMPDIFF (`DAY`, `SQL_TSI_DAY`, `'day'`).
fn unit_arg(e: &Expr) -> Option<Unit> {
    match e {
        Expr::Identifier(i) => Unit::parse(&i.value),
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => Unit::parse(s),
            _ => None,
        },
        _ => None,
    }
}

/// A literal count (`1`, `-1`, `'1'`), which DataFusion's own intervals take.
/// An integer literal (maybe negated) cast to the narrowest of TINYINT, SMALLINT and INT that
/// holds it; None for anything else (which keeps its own type).
fn narrowest_integer(e: &Expr) -> Option<Expr> {
    let value: i64 = match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse().ok()?,
            _ => return None,
        },
        Expr::UnaryOp {
            op: basalt_sql::ast::UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            Expr::Value(v) => match &v.value {
                Value::Number(n, _) => n.parse::<i64>().ok()?.checked_neg()?,
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    };
    let ty = if i8::try_from(value).is_ok() {
        DataType::TinyInt(None)
    } else if i16::try_from(value).is_ok() {
        DataType::SmallInt(None)
    } else if i32::try_from(value).is_ok() {
        DataType::Int(None)
    } else {
        return None;
    };
    Some(cast(e.clone(), ty))
}

/// The fractional-second digits of NOW(p) and its kin: a literal from 0 to 6.
fn fraction_digits_arg(e: &Expr) -> Option<u64> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse::<u64>().ok().filter(|d| *d <= 6),
            _ => None,
        },
        _ => None,
    }
}

fn is_literal(e: &Expr) -> bool {
    match e {
        Expr::Value(_) => true,
        Expr::UnaryOp { expr, .. } => is_literal(expr),
        _ => false,
    }
}
