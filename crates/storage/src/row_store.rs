//! The row store of tables with `store_row_column`: beside each segment `X.parquet`, a file
//! `X.rows` holding every row encoded in one place, so a point lookup reads one row with one
//! positioned read instead of decoding a page of every column.
//!
//! File layout: the magic `BROWS001`, the row count `n` (u64), `n + 1` offsets (u64, relative to
//! the data start) and the rows. A row is each column in table order: a byte 0 for NULL, or 1
//! followed by the value — fixed-width little-endian for numbers, dates, times and timestamps, a
//! u32 length and the bytes for strings and byte strings. ARRAY, MAP and STRUCT columns are not
//! held (a table with a row store refuses them).

use crate::files::publish_file;
use crate::storage_err;
use arrow::array::{
    make_builder, Array, ArrayBuilder, ArrayRef, AsArray, BooleanBuilder, Decimal128Builder,
    Decimal256Builder, Float32Builder, Float64Builder, Int16Builder, Int32Builder, Int64Builder,
    Int8Builder, RecordBatch, StringBuilder,
};
use arrow::datatypes::*;
use basalt_common::{BasaltError, Result};
use lru::LruCache;
use parking_lot::Mutex;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::num::NonZeroUsize;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"BROWS001";
const HEADER: u64 = 16;

/// The row-store file of a segment file.
pub fn row_store_path(segment: &Path) -> PathBuf {
    segment.with_extension("rows")
}

fn corrupt(what: &str) -> BasaltError {
    BasaltError::Storage(format!("row store: {what}"))
}

/// Appends row `row` of `columns` to `out`.
pub(crate) fn encode_row(columns: &[ArrayRef], row: usize, out: &mut Vec<u8>) -> Result<()> {
    for col in columns {
        if col.is_null(row) {
            out.push(0);
            continue;
        }
        out.push(1);
        match col.data_type() {
            DataType::Boolean => out.push(u8::from(col.as_boolean().value(row))),
            DataType::Int8 => {
                out.extend_from_slice(&col.as_primitive::<Int8Type>().value(row).to_le_bytes())
            }
            DataType::Int16 => {
                out.extend_from_slice(&col.as_primitive::<Int16Type>().value(row).to_le_bytes())
            }
            DataType::Int32 => {
                out.extend_from_slice(&col.as_primitive::<Int32Type>().value(row).to_le_bytes())
            }
            DataType::UInt8 => {
                out.extend_from_slice(&col.as_primitive::<UInt8Type>().value(row).to_le_bytes())
            }
            DataType::UInt16 => {
                out.extend_from_slice(&col.as_primitive::<UInt16Type>().value(row).to_le_bytes())
            }
            // INT UNSIGNED values and IPV4 addresses.
            DataType::UInt32 => {
                out.extend_from_slice(&col.as_primitive::<UInt32Type>().value(row).to_le_bytes())
            }
            DataType::Int64 => {
                out.extend_from_slice(&col.as_primitive::<Int64Type>().value(row).to_le_bytes())
            }
            // BIGINT UNSIGNED and BIT values.
            DataType::UInt64 => out.extend_from_slice(
                &col.as_primitive::<arrow::datatypes::UInt64Type>()
                    .value(row)
                    .to_le_bytes(),
            ),
            DataType::Float32 => {
                out.extend_from_slice(&col.as_primitive::<Float32Type>().value(row).to_le_bytes())
            }
            DataType::Float64 => {
                out.extend_from_slice(&col.as_primitive::<Float64Type>().value(row).to_le_bytes())
            }
            DataType::Date32 => {
                out.extend_from_slice(&col.as_primitive::<Date32Type>().value(row).to_le_bytes())
            }
            DataType::Timestamp(TimeUnit::Microsecond, None) => out.extend_from_slice(
                &col.as_primitive::<TimestampMicrosecondType>()
                    .value(row)
                    .to_le_bytes(),
            ),
            DataType::Time64(TimeUnit::Microsecond) => out.extend_from_slice(
                &col.as_primitive::<Time64MicrosecondType>()
                    .value(row)
                    .to_le_bytes(),
            ),
            DataType::Decimal128(_, _) => out.extend_from_slice(
                &col.as_primitive::<Decimal128Type>()
                    .value(row)
                    .to_le_bytes(),
            ),
            DataType::Decimal256(_, _) => out.extend_from_slice(
                &col.as_primitive::<Decimal256Type>()
                    .value(row)
                    .to_le_bytes(),
            ),
            DataType::Utf8 => {
                let s = col.as_string::<i32>().value(row).as_bytes();
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s);
            }
            DataType::Binary => {
                let v = col.as_binary::<i32>().value(row);
                out.extend_from_slice(&(v.len() as u32).to_le_bytes());
                out.extend_from_slice(v);
            }
            other => return Err(corrupt(&format!("cannot store type {other}"))),
        }
    }
    Ok(())
}

/// Writes the row store of a segment holding `batches` (in table schema) durably at `dest`.
pub fn write_row_store(dest: &Path, batches: &[RecordBatch]) -> Result<()> {
    let mut data = Vec::new();
    let mut offsets = Vec::with_capacity(batches.iter().map(|b| b.num_rows()).sum::<usize>() + 1);
    offsets.push(0u64);
    for b in batches {
        for row in 0..b.num_rows() {
            encode_row(b.columns(), row, &mut data)?;
            offsets.push(data.len() as u64);
        }
    }
    let tmp = dest.with_extension("rows.tmp");
    let mut w = BufWriter::new(File::create(&tmp)?);
    w.write_all(MAGIC)?;
    w.write_all(&((offsets.len() - 1) as u64).to_le_bytes())?;
    for o in &offsets {
        w.write_all(&o.to_le_bytes())?;
    }
    w.write_all(&data)?;
    w.into_inner()
        .map_err(|e| BasaltError::Io(e.into_error()))?;
    publish_file(&tmp, dest)?;
    Ok(())
}

/// Open row-store files, so a lookup costs two positioned reads and no open(). Keyed by the
/// path's bytes with foldhash (hashing and comparing a `Path` walks its components).
pub struct RowStoreFiles {
    open: Mutex<LruCache<Box<[u8]>, OpenFile, foldhash::fast::RandomState>>,
}

/// An open row-store file and its row count.
type OpenFile = Arc<(File, u64)>;

impl Default for RowStoreFiles {
    fn default() -> Self {
        RowStoreFiles {
            open: Mutex::new(LruCache::with_hasher(
                NonZeroUsize::new(1024).expect("non-zero"),
                foldhash::fast::RandomState::default(),
            )),
        }
    }
}

impl RowStoreFiles {
    /// Row `ordinal` of the row store at `path`, or `None` when the segment has no row store
    /// (written before the table stored rows).
    pub fn read_row(&self, path: &Path, ordinal: u32) -> Result<Option<Vec<u8>>> {
        let key = path.as_os_str().as_bytes();
        let cached = self.open.lock().get(key).cloned();
        let handle = match cached {
            Some(h) => h,
            None => {
                let file = match File::open(path) {
                    Ok(f) => f,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                    Err(e) => return Err(e.into()),
                };
                let mut header = [0u8; HEADER as usize];
                file.read_exact_at(&mut header, 0)?;
                if &header[..8] != MAGIC {
                    return Err(corrupt(&format!(
                        "{} has no row-store header",
                        path.display()
                    )));
                }
                let n = u64::from_le_bytes(header[8..].try_into().map_err(storage_err)?);
                let h = Arc::new((file, n));
                self.open.lock().put(key.into(), h.clone());
                h
            }
        };
        let (file, n) = (&handle.0, handle.1);
        if u64::from(ordinal) >= n {
            return Err(corrupt(&format!(
                "row {ordinal} beyond the {n} rows of {}",
                path.display()
            )));
        }
        let mut bounds = [0u8; 16];
        file.read_exact_at(&mut bounds, HEADER + 8 * u64::from(ordinal))?;
        let start = u64::from_le_bytes(bounds[..8].try_into().map_err(storage_err)?);
        let end = u64::from_le_bytes(bounds[8..].try_into().map_err(storage_err)?);
        if end < start || end - start > u32::MAX as u64 {
            return Err(corrupt("bad row offsets"));
        }
        let data_start = HEADER + 8 * (n + 1);
        let mut row = vec![0u8; (end - start) as usize];
        file.read_exact_at(&mut row, data_start + start)?;
        Ok(Some(row))
    }

    /// Closes the files of segments being deleted.
    pub fn forget(&self, paths: &[PathBuf]) {
        let mut open = self.open.lock();
        for p in paths {
            open.pop(p.as_os_str().as_bytes());
        }
    }
}

/// Decodes encoded rows (whose columns have the storage `types`) into the arrays of the columns
/// `projection` (table column numbers, in output order; a column may appear twice).
pub fn decode_rows(
    rows: &[&[u8]],
    types: &[DataType],
    projection: &[usize],
) -> Result<Vec<ArrayRef>> {
    // Builders only for the columns asked for; the others are skipped over.
    let mut builders: Vec<Option<Box<dyn ArrayBuilder>>> = (0..types.len()).map(|_| None).collect();
    for &col in projection {
        let ty = types
            .get(col)
            .ok_or_else(|| corrupt("projection beyond the row's columns"))?;
        if builders[col].is_none() {
            builders[col] = Some(make_builder(ty, rows.len()));
        }
    }
    for row in rows {
        let mut r = *row;
        for (ty, builder) in types.iter().zip(builders.iter_mut()) {
            match builder {
                Some(b) => decode_value(&mut r, ty, b.as_mut())?,
                None => skip_value(&mut r, ty)?,
            }
        }
    }
    let finished: Vec<Option<ArrayRef>> = builders
        .into_iter()
        .map(|b| b.map(|mut b| b.finish()))
        .collect();
    projection
        .iter()
        .map(|&col| {
            finished[col]
                .clone()
                .ok_or_else(|| corrupt("column not decoded"))
        })
        .collect()
}

/// Steps over one encoded value of type `ty` (see [`encode_row`]).
fn skip_value(r: &mut &[u8], ty: &DataType) -> Result<()> {
    if take(r, 1)?[0] != 1 {
        return Ok(());
    }
    let width = match ty {
        DataType::Boolean | DataType::Int8 | DataType::UInt8 => 1,
        DataType::Int16 | DataType::UInt16 => 2,
        DataType::Int32 | DataType::UInt32 | DataType::Float32 | DataType::Date32 => 4,
        DataType::Int64
        | DataType::UInt64
        | DataType::Float64
        | DataType::Timestamp(TimeUnit::Microsecond, None)
        | DataType::Time64(TimeUnit::Microsecond) => 8,
        DataType::Decimal128(_, _) => 16,
        DataType::Decimal256(_, _) => 32,
        DataType::Utf8 | DataType::Binary => u32::from_le_bytes(fixed(r)?) as usize,
        other => return Err(corrupt(&format!("cannot read type {other}"))),
    };
    take(r, width)?;
    Ok(())
}

fn take<'a>(r: &mut &'a [u8], n: usize) -> Result<&'a [u8]> {
    let (head, tail) = r
        .split_at_checked(n)
        .ok_or_else(|| corrupt("truncated row"))?;
    *r = tail;
    Ok(head)
}

fn fixed<const N: usize>(r: &mut &[u8]) -> Result<[u8; N]> {
    take(r, N)?.try_into().map_err(|_| corrupt("truncated row"))
}

fn builder<T: 'static>(b: &mut dyn ArrayBuilder) -> Result<&mut T> {
    b.as_any_mut()
        .downcast_mut::<T>()
        .ok_or_else(|| corrupt("builder type mismatch"))
}

fn decode_value(r: &mut &[u8], ty: &DataType, b: &mut dyn ArrayBuilder) -> Result<()> {
    let present = take(r, 1)?[0] == 1;
    macro_rules! prim {
        ($builder:ty, $native:ty) => {{
            let b = builder::<$builder>(b)?;
            if present {
                b.append_value(<$native>::from_le_bytes(fixed(r)?));
            } else {
                b.append_null();
            }
        }};
    }
    match ty {
        DataType::Boolean => {
            let b = builder::<BooleanBuilder>(b)?;
            if present {
                b.append_value(take(r, 1)?[0] != 0);
            } else {
                b.append_null();
            }
        }
        DataType::Int8 => prim!(Int8Builder, i8),
        DataType::Int16 => prim!(Int16Builder, i16),
        DataType::UInt8 => prim!(arrow::array::UInt8Builder, u8),
        DataType::UInt16 => prim!(arrow::array::UInt16Builder, u16),
        DataType::Int32 => prim!(Int32Builder, i32),
        DataType::UInt32 => prim!(arrow::array::UInt32Builder, u32),
        DataType::Int64 => prim!(Int64Builder, i64),
        DataType::UInt64 => prim!(arrow::array::UInt64Builder, u64),
        DataType::Float32 => prim!(Float32Builder, f32),
        DataType::Float64 => prim!(Float64Builder, f64),
        DataType::Date32 => prim!(arrow::array::Date32Builder, i32),
        DataType::Timestamp(TimeUnit::Microsecond, None) => {
            prim!(arrow::array::TimestampMicrosecondBuilder, i64)
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            prim!(arrow::array::Time64MicrosecondBuilder, i64)
        }
        // make_builder keeps the column's precision and scale.
        DataType::Decimal128(_, _) => prim!(Decimal128Builder, i128),
        DataType::Decimal256(_, _) => prim!(Decimal256Builder, i256),
        DataType::Utf8 => {
            let b = builder::<StringBuilder>(b)?;
            if present {
                let len = u32::from_le_bytes(fixed(r)?) as usize;
                let bytes = take(r, len)?;
                let s = std::str::from_utf8(bytes).map_err(|_| corrupt("invalid UTF-8"))?;
                b.append_value(s);
            } else {
                b.append_null();
            }
        }
        DataType::Binary => {
            let b = builder::<arrow::array::BinaryBuilder>(b)?;
            if present {
                let len = u32::from_le_bytes(fixed(r)?) as usize;
                b.append_value(take(r, len)?);
            } else {
                b.append_null();
            }
        }
        other => return Err(corrupt(&format!("cannot read type {other}"))),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Date32Array, Decimal128Array, Int32Array, StringArray};

    #[test]
    fn write_read_decode() {
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Decimal128(10, 2), true),
            Field::new("day", DataType::Date32, true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec![Some("a"), None, Some("grüße")])),
                Arc::new(
                    Decimal128Array::from(vec![Some(150), Some(-1), None])
                        .with_precision_and_scale(10, 2)
                        .unwrap(),
                ),
                Arc::new(Date32Array::from(vec![None, Some(10), Some(20)])),
            ],
        )
        .unwrap();
        let path = dir.path().join("seg.rows");
        write_row_store(&path, &[batch.slice(0, 2), batch.slice(2, 1)]).unwrap();
        let files = RowStoreFiles::default();
        let rows: Vec<Vec<u8>> = (0..3)
            .map(|i| files.read_row(&path, i).unwrap().unwrap())
            .collect();
        assert!(files.read_row(&path, 3).is_err());
        assert!(files
            .read_row(&dir.path().join("none.rows"), 0)
            .unwrap()
            .is_none());
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
        let types: Vec<DataType> = schema
            .fields()
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let all = decode_rows(&refs, &types, &[0, 1, 2, 3]).unwrap();
        assert_eq!(RecordBatch::try_new(schema.clone(), all).unwrap(), batch);
        // Some columns, one twice, the others skipped over.
        let some = decode_rows(&refs[2..], &types, &[3, 1, 3]).unwrap();
        assert_eq!(some.len(), 3);
        assert_eq!(some[1].as_string::<i32>().value(0), "grüße");
        assert_eq!(some[2].as_primitive::<Date32Type>().value(0), 20);
        assert_eq!(some[0].as_primitive::<Date32Type>().value(0), 20);
    }
}
