//! The prepared-statement side of the protocol: the COM_STMT_PREPARE response, each statement's
//! parameter state (types bound by the last COM_STMT_EXECUTE, data sent by
//! COM_STMT_SEND_LONG_DATA), and decoding COM_STMT_EXECUTE's typed parameter values.

use std::collections::HashMap;

use arrow::datatypes::{DataType, Field, Schema};
use basalt_common::ParamValue;

use tokio::io::{AsyncRead, AsyncWrite};

use super::packet::PacketIo;
use super::response;
use super::resultset::column_definition;
use super::types::column_type as t;
use super::wire::{put_u16, put_u32, Malformed, Reader};

/// Flag bit of a parameter type: the integer is unsigned.
const UNSIGNED_FLAG: u8 = 0x80;

/// What the protocol keeps about one prepared statement.
#[derive(Debug, Default)]
pub struct StatementState {
    pub params: u16,
    /// (type, flags) of each parameter, from the last execute that sent them.
    types: Vec<(u8, u8)>,
    /// COM_STMT_SEND_LONG_DATA chunks by parameter, until the next execute or reset.
    long_data: HashMap<u16, Vec<u8>>,
}

impl StatementState {
    pub fn new(params: u16) -> StatementState {
        StatementState {
            params,
            ..Default::default()
        }
    }

    /// Appends a COM_STMT_SEND_LONG_DATA chunk (ignored for a parameter the statement lacks,
    /// as MySQL does until the execute).
    pub fn append_long_data(&mut self, param: u16, data: &[u8]) {
        if param < self.params {
            self.long_data
                .entry(param)
                .or_default()
                .extend_from_slice(data);
        }
    }

    /// COM_STMT_RESET: forget long data.
    pub fn reset(&mut self) {
        self.long_data.clear();
    }

    /// Decodes the parameter part of a COM_STMT_EXECUTE body (after statement id, flags and
    /// iteration count). Long data is consumed.
    pub fn decode_params(&mut self, r: &mut Reader<'_>) -> Result<Vec<ParamValue>, Malformed> {
        let n = usize::from(self.params);
        if n == 0 {
            return Ok(Vec::new());
        }
        let null_bitmap = r.take(n.div_ceil(8))?.to_vec();
        let new_params_bound = r.u8()? == 1;
        if new_params_bound {
            let mut types = Vec::with_capacity(n);
            for _ in 0..n {
                types.push((r.u8()?, r.u8()?));
            }
            self.types = types;
        }
        if self.types.len() != n {
            return Err(Malformed("parameter types were never sent"));
        }
        let mut values = Vec::with_capacity(n);
        for i in 0..n {
            let is_null = null_bitmap[i / 8] & (1 << (i % 8)) != 0;
            let value = if let Some(data) = self.long_data.remove(&(i as u16)) {
                // Long data replaces the value; the packet carries none for it.
                ParamValue::Bytes(data)
            } else if is_null {
                ParamValue::Null
            } else {
                let (ty, flags) = self.types[i];
                decode_value(r, ty, flags & UNSIGNED_FLAG != 0)?
            };
            values.push(value);
        }
        self.long_data.clear();
        Ok(values)
    }
}

fn decode_value(r: &mut Reader<'_>, ty: u8, unsigned: bool) -> Result<ParamValue, Malformed> {
    let int = |v: u64, bits: u32| -> ParamValue {
        if unsigned {
            ParamValue::UInt(v)
        } else {
            // Sign-extend from `bits`.
            let shift = 64 - bits;
            ParamValue::Int(((v << shift) as i64) >> shift)
        }
    };
    Ok(match ty {
        t::NULL => ParamValue::Null,
        t::TINY => int(u64::from(r.u8()?), 8),
        t::SHORT | YEAR => int(u64::from(r.u16()?), 16),
        t::LONG | INT24 => int(u64::from(r.u32()?), 32),
        t::LONGLONG => int(r.u64()?, 64),
        t::FLOAT => ParamValue::Double(f64::from(f32::from_bits(r.u32()?))),
        t::DOUBLE => ParamValue::Double(f64::from_bits(r.u64()?)),
        t::DATE | t::DATETIME | t::TIMESTAMP => {
            let len = r.u8()?;
            // Length 0, 4 (date), 7 (+ time) or 11 (+ microseconds).
            let mut body = Reader::new(r.take(usize::from(len))?);
            let (mut year, mut month, mut day) = (0, 0, 0);
            let (mut hour, mut minute, mut second, mut micros) = (0, 0, 0, 0);
            if len >= 4 {
                (year, month, day) = (body.u16()?, body.u8()?, body.u8()?);
            }
            if len >= 7 {
                (hour, minute, second) = (body.u8()?, body.u8()?, body.u8()?);
            }
            if len >= 11 {
                micros = body.u32()?;
            }
            if ty == t::DATE {
                ParamValue::Date { year, month, day }
            } else {
                ParamValue::DateTime {
                    year,
                    month,
                    day,
                    hour,
                    minute,
                    second,
                    micros,
                }
            }
        }
        t::TIME => {
            let len = r.u8()?;
            let mut body = Reader::new(r.take(usize::from(len))?);
            if len == 0 {
                ParamValue::Time {
                    negative: false,
                    days: 0,
                    hour: 0,
                    minute: 0,
                    second: 0,
                    micros: 0,
                }
            } else {
                let negative = body.u8()? == 1;
                let days = body.u32()?;
                let (hour, minute, second) = (body.u8()?, body.u8()?, body.u8()?);
                let micros = if len >= 12 { body.u32()? } else { 0 };
                ParamValue::Time {
                    negative,
                    days,
                    hour,
                    minute,
                    second,
                    micros,
                }
            }
        }
        DECIMAL | t::NEWDECIMAL => {
            ParamValue::Decimal(String::from_utf8_lossy(r.lenenc_bytes()?).into_owned())
        }
        // VARCHAR, BIT, JSON, ENUM, SET, the BLOB types, VAR_STRING, STRING, GEOMETRY.
        _ => ParamValue::Bytes(r.lenenc_bytes()?.to_vec()),
    })
}

/// Type codes only parameters use.
const DECIMAL: u8 = 0x00;
const INT24: u8 = 0x09;
const YEAR: u8 = 0x0d;

/// Queues the COM_STMT_PREPARE response: the OK with statement id and counts, one definition
/// per parameter, then the result columns (if known), each list ended by EOF unless deprecated.
pub fn prepare_ok<S>(
    io: &mut PacketIo<S>,
    id: u32,
    params: u16,
    columns: Option<&Schema>,
    deprecate_eof: bool,
    status: u16,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let num_columns = columns.map_or(0, |s| s.fields().len().min(usize::from(u16::MAX))) as u16;
    io.packet(|b| {
        b.push(response::OK_HEADER);
        put_u32(b, id);
        put_u16(b, num_columns);
        put_u16(b, params);
        b.push(0);
        put_u16(b, 0);
    });
    if params > 0 {
        let field = Field::new("?", DataType::Utf8, true);
        for _ in 0..params {
            io.packet(|b| column_definition(b, &field, "", false));
        }
        if !deprecate_eof {
            io.packet(|b| response::eof(b, 0, status));
        }
    }
    if let Some(schema) = columns.filter(|_| num_columns > 0) {
        for field in schema.fields().iter().take(usize::from(num_columns)) {
            io.packet(|b| column_definition(b, field, "", false));
        }
        if !deprecate_eof {
            io.packet(|b| response::eof(b, 0, status));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn execute_body(types: &[(u8, u8)], nulls: u8, values: &[u8]) -> Vec<u8> {
        let mut b = vec![nulls, 1];
        for (ty, flags) in types {
            b.push(*ty);
            b.push(*flags);
        }
        b.extend_from_slice(values);
        b
    }

    #[test]
    fn decodes_typed_values() {
        let mut st = StatementState::new(5);
        let mut values = Vec::new();
        values.extend_from_slice(&(-2i32).to_le_bytes());
        values.extend_from_slice(&u64::MAX.to_le_bytes());
        values.extend_from_slice(&2.5f64.to_le_bytes());
        values.extend_from_slice(&[3, b'a', b'\'', b'c']);
        let body = execute_body(
            &[
                (t::LONG, 0),
                (t::LONGLONG, UNSIGNED_FLAG),
                (t::DOUBLE, 0),
                (t::VAR_STRING, 0),
                (t::LONG, 0),
            ],
            0b10000,
            &values,
        );
        let got = st.decode_params(&mut Reader::new(&body)).unwrap();
        assert_eq!(
            got,
            vec![
                ParamValue::Int(-2),
                ParamValue::UInt(u64::MAX),
                ParamValue::Double(2.5),
                ParamValue::Bytes(b"a'c".to_vec()),
                ParamValue::Null,
            ]
        );
        // Types are kept when the next execute does not re-send them.
        let mut again = vec![0u8, 0];
        again.extend_from_slice(&7i32.to_le_bytes());
        again.extend_from_slice(&1u64.to_le_bytes());
        again.extend_from_slice(&0f64.to_le_bytes());
        again.extend_from_slice(&[0]);
        again.extend_from_slice(&8i32.to_le_bytes());
        let got = st.decode_params(&mut Reader::new(&again)).unwrap();
        assert_eq!(got[0], ParamValue::Int(7));
        assert_eq!(got[4], ParamValue::Int(8));
    }

    #[test]
    fn long_data_replaces_the_value() {
        let mut st = StatementState::new(1);
        st.append_long_data(0, b"hello ");
        st.append_long_data(0, b"world");
        st.append_long_data(3, b"ignored");
        let body = execute_body(&[(t::BLOB, 0)], 0, &[]);
        let got = st.decode_params(&mut Reader::new(&body)).unwrap();
        assert_eq!(got, vec![ParamValue::Bytes(b"hello world".to_vec())]);
    }

    #[test]
    fn temporal_values() {
        let mut st = StatementState::new(2);
        let mut values = vec![11];
        values.extend_from_slice(&2024u16.to_le_bytes());
        values.extend_from_slice(&[2, 29, 13, 5, 9]);
        values.extend_from_slice(&120u32.to_le_bytes());
        values.push(4);
        values.extend_from_slice(&1999u16.to_le_bytes());
        values.extend_from_slice(&[12, 31]);
        let body = execute_body(&[(t::DATETIME, 0), (t::DATE, 0)], 0, &values);
        let got = st.decode_params(&mut Reader::new(&body)).unwrap();
        assert_eq!(got[0].to_sql_literal(), "'2024-02-29 13:05:09.000120'");
        assert_eq!(got[1].to_sql_literal(), "'1999-12-31'");
    }

    #[test]
    fn truncated_packets_are_malformed() {
        let mut st = StatementState::new(1);
        let body = execute_body(&[(t::LONGLONG, 0)], 0, &[1, 2]);
        assert!(st.decode_params(&mut Reader::new(&body)).is_err());
        let mut st = StatementState::new(1);
        assert!(st.decode_params(&mut Reader::new(&[0, 0])).is_err());
    }
}
