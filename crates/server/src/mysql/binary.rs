//! Binary-protocol result rows (the answer to COM_STMT_EXECUTE): a 0x00 header, a NULL bitmap
//! offset by two bits, then each non-NULL value in the fixed-width or length-prefixed form its
//! announced column type calls for.

use std::io::Write;

use arrow::array::{Array, RecordBatch};
use arrow::buffer::NullBuffer;
use arrow::datatypes::TimeUnit;
use arrow::error::ArrowError;

use super::types::{
    civil_from_days, push_decimal, put_address, put_bits, split_seconds, Kind, ValueWriter,
};
use super::wire::{put_lenenc_bytes, put_lenenc_with, put_u16, put_u32};

/// Encodes the rows of one batch in the binary protocol.
pub struct BinaryRowWriter<'a> {
    columns: Vec<Column<'a>>,
}

struct Column<'a> {
    len: usize,
    nulls: Option<NullBuffer>,
    kind: Kind<'a>,
}

impl<'a> BinaryRowWriter<'a> {
    /// The writer of `batch`'s rows; the columns `hidden` marks go as NULL (BITMAP and HLL
    /// values Doris does not show).
    pub fn new(batch: &'a RecordBatch, hidden: &[bool]) -> Result<Self, ArrowError> {
        let schema = batch.schema_ref();
        let columns = batch
            .columns()
            .iter()
            .zip(schema.fields())
            .enumerate()
            .map(|(i, (c, field))| {
                let array: &dyn Array = c.as_ref();
                let kind = if hidden.get(i).copied().unwrap_or(false) {
                    Kind::Null
                } else if let Some(kind) = ValueWriter::address_kind(array, field) {
                    kind
                } else {
                    match ValueWriter::kind(array) {
                        Some(kind) => kind,
                        None => ValueWriter::formatted(array)?,
                    }
                };
                Ok(Column {
                    len: array.len(),
                    nulls: array.logical_nulls(),
                    kind,
                })
            })
            .collect::<Result<Vec<_>, ArrowError>>()?;
        Ok(BinaryRowWriter { columns })
    }

    /// Appends the payload of the row packet for `row`.
    pub fn write(&self, row: usize, out: &mut Vec<u8>) {
        out.push(0x00);
        let bitmap_at = out.len();
        let bitmap_len = (self.columns.len() + 7 + 2) / 8;
        out.resize(bitmap_at + bitmap_len, 0);
        for (i, col) in self.columns.iter().enumerate() {
            let null = row >= col.len
                || col.nulls.as_ref().is_some_and(|n| n.is_null(row))
                || matches!(col.kind, Kind::Null);
            if null {
                let bit = i + 2;
                out[bitmap_at + bit / 8] |= 1 << (bit % 8);
            } else {
                write_value(&col.kind, row, out);
            }
        }
    }
}

fn write_value(kind: &Kind<'_>, row: usize, out: &mut Vec<u8>) {
    match kind {
        Kind::Null => {}
        Kind::Bool(a) => out.push(u8::from(a.value(row))),
        Kind::I8(v) => out.push(v[row] as u8),
        Kind::U8(v) => out.push(v[row]),
        Kind::I16(v) | Kind::Year(v) => out.extend_from_slice(&v[row].to_le_bytes()),
        Kind::U16(v) => out.extend_from_slice(&v[row].to_le_bytes()),
        Kind::I32(v) => out.extend_from_slice(&v[row].to_le_bytes()),
        Kind::U32(v) => out.extend_from_slice(&v[row].to_le_bytes()),
        Kind::I64(v) => out.extend_from_slice(&v[row].to_le_bytes()),
        Kind::U64(v) => out.extend_from_slice(&v[row].to_le_bytes()),
        Kind::F16(a) => out.extend_from_slice(&a.value(row).to_f32().to_le_bytes()),
        Kind::F32(v) => out.extend_from_slice(&v[row].to_le_bytes()),
        Kind::F64(v) => out.extend_from_slice(&v[row].to_le_bytes()),
        Kind::Dec32(v, s) => put_lenenc_with(out, |o| push_decimal(o, v[row].into(), *s)),
        Kind::Dec64(v, s) => put_lenenc_with(out, |o| push_decimal(o, v[row].into(), *s)),
        Kind::Dec128(v, s) => put_lenenc_with(out, |o| push_decimal(o, v[row], *s)),
        Kind::Date32(v) => put_date(out, i64::from(v[row])),
        Kind::Date64(v) => put_date(out, v[row].div_euclid(86_400_000)),
        Kind::Timestamp(v, unit) => put_datetime(out, v[row], *unit),
        Kind::Time32(v, unit) => put_time(out, i64::from(v[row]), *unit),
        Kind::Time64(v, unit) => put_time(out, v[row], *unit),
        Kind::Utf8(a) => put_lenenc_bytes(out, a.value(row).as_bytes()),
        Kind::LargeUtf8(a) => put_lenenc_bytes(out, a.value(row).as_bytes()),
        Kind::Utf8View(a) => put_lenenc_bytes(out, a.value(row).as_bytes()),
        Kind::Binary(a) => put_lenenc_bytes(out, a.value(row)),
        Kind::LargeBinary(a) => put_lenenc_bytes(out, a.value(row)),
        Kind::BinaryView(a) => put_lenenc_bytes(out, a.value(row)),
        Kind::FixedBinary(a) => put_lenenc_bytes(out, a.value(row)),
        Kind::Ipv4(_) | Kind::Ipv6(_) => put_address(kind, row, out),
        Kind::Bits(v, bytes) => put_bits(v[row], *bytes, out),
        Kind::Nested(n) => put_lenenc_bytes(out, n.text(row).as_bytes()),
        Kind::Formatted(f) => put_lenenc_with(out, |o| {
            let _ = write!(o, "{}", f.value(row));
        }),
    }
}

/// Years outside what the binary DATE form holds are clamped to 0..=9999.
fn year_u16(year: i64) -> u16 {
    year.clamp(0, 9999) as u16
}

/// DATE: length 4, year (2 bytes), month, day.
fn put_date(out: &mut Vec<u8>, days: i64) {
    let (y, m, d) = civil_from_days(days);
    out.push(4);
    put_u16(out, year_u16(y));
    out.push(m as u8);
    out.push(d as u8);
}

/// Microseconds of a fraction `split_seconds` produced for `unit`.
fn micros(frac: u64, unit: TimeUnit) -> u32 {
    let us = match unit {
        TimeUnit::Millisecond => frac * 1000,
        _ => frac,
    };
    us as u32
}

/// DATETIME: length 11 (or 7 without fraction), date, hour, minute, second, microseconds.
fn put_datetime(out: &mut Vec<u8>, v: i64, unit: TimeUnit) {
    let (secs, frac) = split_seconds(v, unit);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let tod = secs.rem_euclid(86_400);
    let us = micros(frac, unit);
    out.push(if us == 0 { 7 } else { 11 });
    put_u16(out, year_u16(y));
    out.push(m as u8);
    out.push(d as u8);
    out.push((tod / 3600) as u8);
    out.push(((tod / 60) % 60) as u8);
    out.push((tod % 60) as u8);
    if us != 0 {
        put_u32(out, us);
    }
}

/// TIME: length 12 (or 8 without fraction), sign, days, hour, minute, second, microseconds.
fn put_time(out: &mut Vec<u8>, v: i64, unit: TimeUnit) {
    let negative = v < 0;
    let magnitude = i64::try_from(v.unsigned_abs()).unwrap_or(i64::MAX);
    let (secs, frac) = split_seconds(magnitude, unit);
    let us = micros(frac, unit);
    out.push(if us == 0 { 8 } else { 12 });
    out.push(u8::from(negative));
    put_u32(out, u32::try_from(secs / 86_400).unwrap_or(u32::MAX));
    let rest = secs % 86_400;
    out.push((rest / 3600) as u8);
    out.push(((rest / 60) % 60) as u8);
    out.push((rest % 60) as u8);
    if us != 0 {
        put_u32(out, us);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{
        ArrayRef, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array, StringArray,
        Time64MicrosecondArray, TimestampMicrosecondArray,
    };

    use super::*;

    fn row_bytes(columns: Vec<ArrayRef>, row: usize) -> Vec<u8> {
        let batch = RecordBatch::try_from_iter(
            columns
                .into_iter()
                .enumerate()
                .map(|(i, c)| (format!("c{i}"), c)),
        )
        .unwrap();
        let w = BinaryRowWriter::new(&batch, &[]).unwrap();
        let mut out = Vec::new();
        w.write(row, &mut out);
        out
    }

    #[test]
    fn fixed_width_and_nulls() {
        let bytes = row_bytes(
            vec![
                Arc::new(Int32Array::from(vec![Some(-1)])),
                Arc::new(Int64Array::from(vec![None::<i64>])),
                Arc::new(Float64Array::from(vec![0.5])),
                Arc::new(StringArray::from(vec!["ab"])),
            ],
            0,
        );
        let mut expected = vec![0x00, 0b0000_1000];
        expected.extend_from_slice(&(-1i32).to_le_bytes());
        expected.extend_from_slice(&0.5f64.to_le_bytes());
        expected.extend_from_slice(&[2, b'a', b'b']);
        assert_eq!(bytes, expected);
    }

    #[test]
    fn temporal_and_decimal() {
        let ts = 1_709_211_909_000_120i64; // 2024-02-29 13:05:09.000120
        let bytes = row_bytes(
            vec![
                Arc::new(Date32Array::from(vec![19_782])), // 2024-02-29
                Arc::new(TimestampMicrosecondArray::from(vec![ts])),
                Arc::new(Time64MicrosecondArray::from(vec![
                    -(26 * 3600 + 3 * 60 + 4) * 1_000_000,
                ])),
                Arc::new(
                    Decimal128Array::from(vec![-1250])
                        .with_precision_and_scale(10, 2)
                        .unwrap(),
                ),
            ],
            0,
        );
        let mut expected = vec![0x00, 0x00];
        expected.extend_from_slice(&[4, 0xe8, 0x07, 2, 29]);
        expected.extend_from_slice(&[11, 0xe8, 0x07, 2, 29, 13, 5, 9, 120, 0, 0, 0]);
        expected.extend_from_slice(&[8, 1, 1, 0, 0, 0, 2, 3, 4]);
        expected.extend_from_slice(&[6, b'-', b'1', b'2', b'.', b'5', b'0']);
        assert_eq!(bytes, expected);
    }

    /// A 76-digit DECIMAL goes as NEWDECIMAL text in the binary protocol, every digit kept.
    #[test]
    fn wide_decimal_as_text() {
        let digits = format!("{}{}", "9".repeat(66), "9".repeat(10));
        let value = arrow::datatypes::i256::from_string(&digits).unwrap();
        let bytes = row_bytes(
            vec![Arc::new(
                arrow::array::Decimal256Array::from(vec![value])
                    .with_precision_and_scale(76, 10)
                    .unwrap(),
            )],
            0,
        );
        let text = format!("{}.{}", "9".repeat(66), "9".repeat(10));
        let mut expected = vec![0x00, 0x00, text.len() as u8];
        expected.extend_from_slice(text.as_bytes());
        assert_eq!(bytes, expected);
    }
}
