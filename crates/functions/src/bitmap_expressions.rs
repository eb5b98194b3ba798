//! Doris's `orthogonal_bitmap_expr_calculate(bitmap_col, filter_col, 'expr')` and its
//! `_count`: the BITMAP (or its size) an expression over tags computes, where each tag stands
//! for the union of the bitmaps of the rows whose `filter_col` (read as text) is that tag.
//! `(A|B)&(C-D)`: `&` intersection, `|` union, `-` difference, `^` symmetric difference, all of
//! one precedence and read left to right, parentheses grouping; `\` makes the next character
//! part of a tag; spaces separate. A tag no row has is the empty bitmap.
//!
//! The expression is a constant. Each group keeps one union per tag (the state: the tags'
//! serialized unions, each after its length), so partial aggregates merge exactly; the
//! expression is computed when the group is finished.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Field, FieldRef};
use basalt_common::bitmap_value::BitmapValue;
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, Signature, Volatility,
};

use crate::sketch_fields::result_field;
use crate::util::{bad_value, coerce_sketch, expect_args, Bytes};

const NAME: &str = "orthogonal_bitmap_expr_calculate";
const COUNT_NAME: &str = "orthogonal_bitmap_expr_calculate_count";

#[derive(Debug, PartialEq, Eq, Hash)]
struct BitmapExpression {
    signature: Signature,
    /// The size of the result rather than the BITMAP.
    counts: bool,
}

/// The two aggregates.
pub fn aggregate_functions() -> Vec<AggregateUDF> {
    [false, true]
        .into_iter()
        .map(|counts| {
            AggregateUDF::new_from_impl(BitmapExpression {
                signature: Signature::user_defined(Volatility::Immutable),
                counts,
            })
        })
        .collect()
}

impl AggregateUDFImpl for BitmapExpression {
    fn name(&self) -> &str {
        if self.counts {
            COUNT_NAME
        } else {
            NAME
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args(self.name(), types, 3, 3)?;
        Ok(vec![
            coerce_sketch(self.name(), "BITMAP", &types[0])?,
            DataType::Utf8,
            DataType::Utf8,
        ])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(if self.counts {
            DataType::Int64
        } else {
            DataType::Binary
        })
    }

    fn return_field(&self, _arg_fields: &[FieldRef]) -> Result<FieldRef> {
        Ok(result_field(
            self.name(),
            self.return_type(&[])?,
            basalt_common::SqlType::Bitmap,
            false,
        ))
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn default_value(&self, _data_type: &DataType) -> Result<ScalarValue> {
        Ok(result(self.counts, BitmapValue::new()))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "tag_bitmaps"),
            DataType::Binary,
            true,
        ))])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let empty = RecordBatch::new_empty(Arc::new(args.schema.clone()));
        let text = match args.exprs.get(2).map(|e| e.evaluate(&empty)).transpose()? {
            Some(ColumnarValue::Scalar(ScalarValue::Utf8(Some(text)))) => text,
            _ => return plan_err!("{}: the expression must be a constant string", self.name()),
        };
        let expression = parse(&text).map_err(|e| {
            datafusion::common::DataFusionError::Plan(format!("{}: {e}", self.name()))
        })?;
        let mut tags = Vec::new();
        expression.tags(&mut tags);
        tags.sort();
        tags.dedup();
        Ok(Box::new(TagUnions {
            name: if self.counts { COUNT_NAME } else { NAME },
            counts: self.counts,
            unions: vec![BitmapValue::new(); tags.len()],
            tags,
            expression,
        }))
    }
}

fn result(counts: bool, bitmap: BitmapValue) -> ScalarValue {
    if counts {
        ScalarValue::Int64(Some(bitmap.len() as i64))
    } else {
        ScalarValue::Binary(Some(bitmap.serialize()))
    }
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Tag(String),
    Op(char, Box<Node>, Box<Node>),
}

impl Node {
    fn tags(&self, out: &mut Vec<String>) {
        match self {
            Node::Tag(t) => out.push(t.clone()),
            Node::Op(_, l, r) => {
                l.tags(out);
                r.tags(out);
            }
        }
    }

    fn compute(&self, bitmap_of: &dyn Fn(&str) -> BitmapValue) -> BitmapValue {
        match self {
            Node::Tag(t) => bitmap_of(t),
            Node::Op(op, l, r) => {
                let mut acc = l.compute(bitmap_of);
                let right = r.compute(bitmap_of);
                match op {
                    '&' => acc.intersect_with(&right),
                    '|' => acc.union_with(&right),
                    '-' => acc.difference_with(&right),
                    _ => acc.xor_with(&right),
                }
                acc
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Tag(String),
    Op(char),
    Open,
    Close,
}

fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut tag = String::new();
    let mut chars = text.chars();
    let flush = |tag: &mut String, out: &mut Vec<Token>| {
        if !tag.is_empty() {
            out.push(Token::Tag(std::mem::take(tag)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    tag.push(next);
                }
            }
            '&' | '|' | '-' | '^' => {
                flush(&mut tag, &mut out);
                out.push(Token::Op(c));
            }
            '(' => {
                flush(&mut tag, &mut out);
                out.push(Token::Open);
            }
            ')' => {
                flush(&mut tag, &mut out);
                out.push(Token::Close);
            }
            ' ' | '\t' => flush(&mut tag, &mut out),
            _ => tag.push(c),
        }
    }
    flush(&mut tag, &mut out);
    out
}

/// Parses an expression (see the module doc); an error names what is wrong.
fn parse(text: &str) -> std::result::Result<Node, String> {
    let tokens = tokens(text);
    let mut at = 0;
    let node = expression(&tokens, &mut at, 0)?;
    match tokens.get(at) {
        None => Ok(node),
        Some(t) => Err(format!("unexpected {t:?} in the expression '{text}'")),
    }
}

/// Nesting deeper than this is refused (the parser recurses per parenthesis).
const MAX_DEPTH: usize = 256;

fn expression(tokens: &[Token], at: &mut usize, depth: usize) -> std::result::Result<Node, String> {
    let mut node = operand(tokens, at, depth)?;
    while let Some(Token::Op(op)) = tokens.get(*at) {
        *at += 1;
        let right = operand(tokens, at, depth)?;
        node = Node::Op(*op, Box::new(node), Box::new(right));
    }
    Ok(node)
}

fn operand(tokens: &[Token], at: &mut usize, depth: usize) -> std::result::Result<Node, String> {
    match tokens.get(*at) {
        Some(Token::Tag(t)) => {
            *at += 1;
            Ok(Node::Tag(t.clone()))
        }
        Some(Token::Open) if depth < MAX_DEPTH => {
            *at += 1;
            let node = expression(tokens, at, depth + 1)?;
            match tokens.get(*at) {
                Some(Token::Close) => {
                    *at += 1;
                    Ok(node)
                }
                _ => Err("a '(' is not closed".into()),
            }
        }
        Some(Token::Open) => Err("the expression nests too deeply".into()),
        Some(t) => Err(format!("expected a tag, found {t:?}")),
        None => Err("the expression ends where a tag is expected".into()),
    }
}

#[derive(Debug)]
struct TagUnions {
    name: &'static str,
    counts: bool,
    /// The expression's tags, sorted, and the union of each one's rows so far.
    tags: Vec<String>,
    unions: Vec<BitmapValue>,
    expression: Node,
}

impl Accumulator for TagUnions {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let bitmaps = Bytes::new(self.name, &values[0])?;
        let filters = values[1].as_string::<i32>();
        for i in 0..filters.len() {
            if !filters.is_valid(i) {
                continue;
            }
            let Ok(k) = self
                .tags
                .binary_search_by(|t| t.as_str().cmp(filters.value(i)))
            else {
                continue;
            };
            if let Some(b) = bitmaps.get(i) {
                self.unions[k]
                    .union_with_serialized(b)
                    .map_err(|e| bad_value(self.name, "BITMAP", e))?;
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let bytes = Bytes::new(self.name, &states[0])?;
        for i in 0..states[0].len() {
            let Some(mut state) = bytes.get(i) else {
                continue;
            };
            for union in self.unions.iter_mut() {
                let Some((len, rest)) = state.split_first_chunk::<4>() else {
                    return exec_err!("{}: a malformed intermediate state", self.name);
                };
                let len = u32::from_le_bytes(*len) as usize;
                if rest.len() < len {
                    return exec_err!("{}: a malformed intermediate state", self.name);
                }
                let (bitmap, rest) = rest.split_at(len);
                union
                    .union_with_serialized(bitmap)
                    .map_err(|e| bad_value(self.name, "BITMAP", e))?;
                state = rest;
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let mut out = Vec::new();
        for union in &self.unions {
            let bytes = union.serialize();
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(&bytes);
        }
        Ok(vec![ScalarValue::Binary(Some(out))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let bitmap_of = |tag: &str| match self.tags.binary_search_by(|t| t.as_str().cmp(tag)) {
            Ok(k) => self.unions[k].clone(),
            Err(_) => BitmapValue::new(),
        };
        Ok(result(self.counts, self.expression.compute(&bitmap_of)))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self.tags.iter().map(String::len).sum::<usize>()
            + self
                .unions
                .iter()
                .map(BitmapValue::heap_size)
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(t: &str) -> Box<Node> {
        Box::new(Node::Tag(t.into()))
    }

    #[test]
    fn operators_read_left_to_right_and_parentheses_group() {
        assert_eq!(
            parse("a|b&c").unwrap(),
            Node::Op('&', Box::new(Node::Op('|', tag("a"), tag("b"))), tag("c"))
        );
        assert_eq!(
            parse(" a | (b - c\\-d) ").unwrap(),
            Node::Op('|', tag("a"), Box::new(Node::Op('-', tag("b"), tag("c-d"))))
        );
        for bad in ["", "a|", "(a", "a)", "&a", "a b"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse(&format!("{}a{}", "(".repeat(300), ")".repeat(300))).is_err());
    }

    #[test]
    fn the_expression_computes_over_the_tags_bitmaps() {
        let of = |t: &str| match t {
            "A" => BitmapValue::from_ids([1, 2, 3]),
            "B" => BitmapValue::from_ids([3, 4]),
            "C" => BitmapValue::from_ids([2, 3, 4, 5]),
            _ => BitmapValue::new(),
        };
        let ids = |e: &str| parse(e).unwrap().compute(&of).to_id_string();
        assert_eq!(ids("(A|B)&C"), "2,3,4");
        assert_eq!(ids("A^B"), "1,2,4");
        assert_eq!(ids("C-A-B"), "5");
        assert_eq!(ids("A&nothing"), "");
    }
}
