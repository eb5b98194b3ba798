//! CSV splitting for Stream Load: whole lines of a chunk become string columns in one pass
//! (values copied once into Arrow buffers), with Doris's rules: `\N` is NULL, optional
//! enclose and escape characters, multi-byte separators, and a wrong field count filters the
//! line instead of failing the load. LOAD DATA asks for MySQL's rules instead: the escape
//! character works in every field (`\t`, `\n`, `\\`, an escaped separator or line end is
//! data) and a line's field count may differ.

use super::rejects::Rejects;
use datafusion::arrow::array::{ArrayRef, StringArray};
use datafusion::arrow::buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use memchr::memmem;
use std::ops::Range;
use std::sync::Arc;

/// How the text is split.
#[derive(Debug, Clone)]
pub struct CsvSplitter {
    sep: Vec<u8>,
    line: Vec<u8>,
    enclose: Option<u8>,
    escape: Option<u8>,
    trim_double_quotes: bool,
    /// MySQL's LOAD DATA rule instead of Doris's: a line with too many fields loads its first
    /// ones, a line with too few loads NULL for the rest.
    lenient_field_count: bool,
    /// MySQL's LOAD DATA escapes instead of Doris's: the escape character escapes in every
    /// field, not only in enclosed ones, and `\0 \b \n \r \t \Z` stand for their bytes.
    mysql_escapes: bool,
}

/// The columns parsed from one chunk, plus the lines that could not be split into the
/// expected number of fields.
#[derive(Debug)]
pub struct SplitChunk {
    /// One string array per expected column.
    pub columns: Vec<ArrayRef>,
    /// Byte range in the chunk of each row's line (for error reports).
    pub row_lines: Vec<Range<usize>>,
    /// Lines filtered while splitting.
    pub rejects: Rejects,
}

struct ColumnBuilder {
    values: Vec<u8>,
    offsets: Vec<i32>,
    valid: Vec<bool>,
    has_null: bool,
}

impl ColumnBuilder {
    fn new(rows: usize, bytes: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        ColumnBuilder {
            values: Vec::with_capacity(bytes),
            offsets,
            valid: Vec::with_capacity(rows),
            has_null: false,
        }
    }

    fn push(&mut self, v: Option<&[u8]>) {
        match v {
            Some(bytes) => {
                self.values.extend_from_slice(bytes);
                self.valid.push(true);
            }
            None => {
                self.valid.push(false);
                self.has_null = true;
            }
        }
        self.offsets.push(self.values.len() as i32);
    }

    fn finish(self) -> ArrayRef {
        let nulls = self.has_null.then(|| NullBuffer::from(self.valid));
        let offsets = OffsetBuffer::new(ScalarBuffer::from(self.offsets));
        // `try_new` checks the offsets and that every value is UTF-8. Invalid UTF-8 is replaced
        // rather than failing the whole chunk; such fields usually fail conversion later and
        // are then reported per row.
        let values = Buffer::from_vec(self.values);
        match StringArray::try_new(offsets.clone(), values.clone(), nulls.clone()) {
            Ok(a) => Arc::new(a),
            Err(_) => {
                let strings: Vec<Option<String>> = (0..offsets.len() - 1)
                    .map(|i| {
                        let valid = nulls.as_ref().is_none_or(|n| n.is_valid(i));
                        valid.then(|| {
                            let r = offsets[i] as usize..offsets[i + 1] as usize;
                            String::from_utf8_lossy(&values[r]).into_owned()
                        })
                    })
                    .collect();
                Arc::new(StringArray::from(strings))
            }
        }
    }
}

/// A field of the line being split: where its (unescaped) bytes are, and whether it is NULL.
#[derive(Clone, Copy)]
enum Field {
    /// Bytes straight from the input.
    Raw(usize, usize),
    /// Bytes in the scratch buffer (after removing enclose/escape characters).
    Scratch(usize, usize),
    Null,
}

impl CsvSplitter {
    pub fn new(
        sep: Vec<u8>,
        line: Vec<u8>,
        enclose: Option<u8>,
        escape: Option<u8>,
        trim_double_quotes: bool,
    ) -> CsvSplitter {
        CsvSplitter {
            sep,
            line,
            enclose,
            escape,
            trim_double_quotes,
            lenient_field_count: false,
            mysql_escapes: false,
        }
    }

    /// MySQL's escapes (see [`CsvSplitter::mysql_escapes`]).
    pub fn with_mysql_escapes(mut self, mysql: bool) -> CsvSplitter {
        self.mysql_escapes = mysql;
        self
    }

    /// The byte an escape sequence stands for: MySQL's table for LOAD DATA, else the byte.
    fn unescaped(&self, b: u8) -> u8 {
        if !self.mysql_escapes {
            return b;
        }
        match b {
            b'0' => 0,
            b'b' => 0x08,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'Z' => 0x1a,
            other => other,
        }
    }

    /// True when the escape character escapes outside enclosed fields too.
    fn escapes_everywhere(&self) -> bool {
        self.mysql_escapes && self.escape.is_some()
    }

    /// Lines with another number of fields than expected load rather than being filtered
    /// (see [`CsvSplitter::lenient_field_count`]).
    pub fn with_lenient_field_count(mut self, lenient: bool) -> CsvSplitter {
        self.lenient_field_count = lenient;
        self
    }

    /// Without an enclose character there is nothing to unescape either: as in Doris, the
    /// escape character only escapes inside enclosed fields.
    fn simple(&self) -> bool {
        self.enclose.is_none() && !self.escapes_everywhere()
    }

    /// Length of the longest prefix of `data` made of complete lines (0 if none is complete).
    /// `data` starts at the beginning of a line.
    pub fn complete_prefix(&self, data: &[u8]) -> usize {
        if self.simple() {
            return memmem::rfind(data, &self.line)
                .map(|p| p + self.line.len())
                .unwrap_or(0);
        }
        let mut last = 0;
        self.scan(data, |_, end| {
            last = end;
            true
        });
        last
    }

    /// End (after the delimiter) of the first complete line of `data`, if there is one.
    pub fn first_line_end(&self, data: &[u8]) -> Option<usize> {
        if self.simple() {
            return memmem::find(data, &self.line).map(|p| p + self.line.len());
        }
        let mut first = None;
        self.scan(data, |_, end| {
            first = Some(end);
            false
        });
        first
    }

    /// The line terminator.
    pub fn line_delimiter(&self) -> &[u8] {
        &self.line
    }

    /// Calls `on_line(start, end_after_delimiter)` for each complete line, honouring enclosed
    /// fields that contain delimiters, until it returns false.
    fn scan(&self, data: &[u8], mut on_line: impl FnMut(usize, usize) -> bool) {
        let (sep, line) = (&self.sep[..], &self.line[..]);
        let mut i = 0;
        let mut line_start = 0;
        let mut field_start = true;
        let mut in_quote = false;
        while i < data.len() {
            let b = data[i];
            if in_quote {
                if Some(b) == self.escape {
                    i += 2;
                    continue;
                }
                if Some(b) == self.enclose {
                    if data.get(i + 1) == Some(&b) {
                        i += 2;
                        continue;
                    }
                    in_quote = false;
                }
                i += 1;
                continue;
            }
            if self.escapes_everywhere() && Some(b) == self.escape {
                i += 2;
                field_start = false;
                continue;
            }
            if field_start && Some(b) == self.enclose {
                in_quote = true;
                field_start = false;
                i += 1;
                continue;
            }
            if data[i..].starts_with(line) {
                i += line.len();
                if !on_line(line_start, i) {
                    return;
                }
                line_start = i;
                field_start = true;
                continue;
            }
            if data[i..].starts_with(sep) {
                i += sep.len();
                field_start = true;
                continue;
            }
            field_start = false;
            i += 1;
        }
    }

    /// Splits every line of `data` into `expected` string columns. A final line without a
    /// delimiter is included; empty lines are skipped.
    pub fn split(&self, data: &[u8], expected: usize) -> SplitChunk {
        let mut lines = Vec::new();
        if self.simple() {
            let mut start = 0;
            for p in memmem::find_iter(data, &self.line) {
                lines.push(start..p);
                start = p + self.line.len();
            }
            if start < data.len() {
                lines.push(start..data.len());
            }
        } else {
            let mut last = 0;
            let line_len = self.line.len();
            self.scan(data, |s, e| {
                lines.push(s..e - line_len);
                last = e;
                true
            });
            if last < data.len() {
                lines.push(last..data.len());
            }
        }
        let estimate = lines.len();
        let mut builders: Vec<ColumnBuilder> = (0..expected)
            .map(|_| ColumnBuilder::new(estimate, data.len() / expected.max(1)))
            .collect();
        let mut row_lines = Vec::with_capacity(estimate);
        let mut rejects = Rejects::default();
        let mut fields: Vec<Field> = Vec::with_capacity(expected + 1);
        let mut scratch: Vec<u8> = Vec::new();
        for mut range in lines {
            // CRLF files with the default LF delimiter.
            if self.line == b"\n" && range.end > range.start && data[range.end - 1] == b'\r' {
                range.end -= 1;
            }
            if range.is_empty() {
                continue;
            }
            fields.clear();
            scratch.clear();
            self.split_line(data, range.clone(), &mut fields, &mut scratch);
            if self.lenient_field_count {
                fields.resize(expected, Field::Null);
            }
            if fields.len() != expected {
                let actual = fields.len();
                rejects.add(
                    || String::from_utf8_lossy(&data[range]).into_owned(),
                    || {
                        let side = if actual < expected { "less" } else { "more" };
                        format!(
                            "actual column number in csv file is {actual}, {side} than schema column number {expected}"
                        )
                    },
                );
                continue;
            }
            for (b, f) in builders.iter_mut().zip(&fields) {
                match *f {
                    Field::Raw(s, e) => b.push(Some(&data[s..e])),
                    Field::Scratch(s, e) => b.push(Some(&scratch[s..e])),
                    Field::Null => b.push(None),
                }
            }
            row_lines.push(range);
        }
        SplitChunk {
            columns: builders.into_iter().map(ColumnBuilder::finish).collect(),
            row_lines,
            rejects,
        }
    }

    /// Splits one line (without its delimiter) into fields.
    pub fn split_line_owned(&self, line: &[u8]) -> Vec<Option<String>> {
        let mut fields = Vec::new();
        let mut scratch = Vec::new();
        self.split_line(line, 0..line.len(), &mut fields, &mut scratch);
        fields
            .iter()
            .map(|f| match *f {
                Field::Raw(s, e) => Some(String::from_utf8_lossy(&line[s..e]).into_owned()),
                Field::Scratch(s, e) => Some(String::from_utf8_lossy(&scratch[s..e]).into_owned()),
                Field::Null => None,
            })
            .collect()
    }

    fn split_line(
        &self,
        data: &[u8],
        range: Range<usize>,
        fields: &mut Vec<Field>,
        scratch: &mut Vec<u8>,
    ) {
        if self.simple() {
            let line = &data[range.clone()];
            let mut start = 0;
            let push = |fields: &mut Vec<Field>, s: usize, e: usize| {
                let (s, e) = self.trim_quotes(data, range.start + s, range.start + e);
                if &data[s..e] == b"\\N" {
                    fields.push(Field::Null);
                } else {
                    fields.push(Field::Raw(s, e));
                }
            };
            if self.sep.len() == 1 {
                for p in memchr::memchr_iter(self.sep[0], line) {
                    push(fields, start, p);
                    start = p + 1;
                }
            } else {
                for p in memmem::find_iter(line, &self.sep) {
                    push(fields, start, p);
                    start = p + self.sep.len();
                }
            }
            push(fields, start, line.len());
            return;
        }
        // General path: enclosed fields and escapes are copied, unescaped, into `scratch`.
        let sep = &self.sep[..];
        let mut i = range.start;
        let end = range.end;
        loop {
            let begin = scratch.len();
            let raw_start = i;
            let mut enclosed = false;
            // `\N` is NULL even when `\` is the escape character.
            if data[i..end].starts_with(b"\\N")
                && (i + 2 == end || data[i + 2..end].starts_with(sep))
            {
                fields.push(Field::Null);
                i += 2;
                if i >= end {
                    break;
                }
                i += sep.len();
                if i == end {
                    fields.push(Field::Raw(end, end));
                    break;
                }
                continue;
            }
            if i < end && Some(data[i]) == self.enclose {
                enclosed = true;
                i += 1;
                while i < end {
                    let b = data[i];
                    if Some(b) == self.escape && i + 1 < end {
                        scratch.push(self.unescaped(data[i + 1]));
                        i += 2;
                        continue;
                    }
                    if Some(b) == self.enclose {
                        if i + 1 < end && data[i + 1] == b {
                            scratch.push(b);
                            i += 2;
                            continue;
                        }
                        i += 1;
                        break;
                    }
                    scratch.push(b);
                    i += 1;
                }
            }
            // Unenclosed field (or what follows a closing enclose) up to the separator, taken
            // as it is (MySQL: with its escapes read).
            let rest_start = i;
            if self.escapes_everywhere() {
                while i < end && !data[i..end].starts_with(sep) {
                    if Some(data[i]) == self.escape && i + 1 < end {
                        scratch.push(self.unescaped(data[i + 1]));
                        i += 2;
                    } else {
                        scratch.push(data[i]);
                        i += 1;
                    }
                }
                fields.push(Field::Scratch(begin, scratch.len()));
                if i >= end {
                    break;
                }
                i += sep.len();
                if i == end {
                    fields.push(Field::Raw(end, end));
                    break;
                }
                continue;
            }
            while i < end && !data[i..end].starts_with(sep) {
                i += 1;
            }
            if enclosed {
                scratch.extend_from_slice(&data[rest_start..i]);
                fields.push(Field::Scratch(begin, scratch.len()));
            } else if &data[raw_start..i] == b"\\N" {
                fields.push(Field::Null);
            } else {
                let (s, e) = self.trim_quotes(data, raw_start, i);
                fields.push(Field::Raw(s, e));
            }
            if i >= end {
                break;
            }
            i += sep.len();
            if i == end {
                // A trailing separator ends with one more, empty field.
                fields.push(Field::Raw(end, end));
                break;
            }
        }
    }

    fn trim_quotes(&self, data: &[u8], s: usize, e: usize) -> (usize, usize) {
        if self.trim_double_quotes && e >= s + 2 && data[s] == b'"' && data[e - 1] == b'"' {
            (s + 1, e - 1)
        } else {
            (s, e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, AsArray};

    fn col(c: &SplitChunk, i: usize) -> Vec<Option<String>> {
        c.columns[i]
            .as_string::<i32>()
            .iter()
            .map(|v| v.map(str::to_string))
            .collect()
    }

    #[test]
    fn simple_lines_nulls_and_bad_counts() {
        let s = CsvSplitter::new(b",".to_vec(), b"\n".to_vec(), None, None, false);
        let data = b"1,a\n2,\\N\r\n\n3\n4,b,c\n5,e";
        let c = s.split(data, 2);
        assert_eq!(
            col(&c, 0),
            vec![Some("1".into()), Some("2".into()), Some("5".into())]
        );
        assert_eq!(col(&c, 1), vec![Some("a".into()), None, Some("e".into())]);
        assert_eq!(c.rejects.count, 2);
        assert!(c.rejects.samples[0].1.contains("less than"));
        assert!(c.rejects.samples[1].1.contains("more than"));
        assert_eq!(c.rejects.samples[1].0, "4,b,c");
        assert_eq!(s.complete_prefix(data), data.len() - 3);
    }

    #[test]
    fn multi_byte_separators() {
        let s = CsvSplitter::new(b"||".to_vec(), b"\x02\x03".to_vec(), None, None, false);
        let c = s.split(b"1||x\x02\x032||y|z\x02\x03", 2);
        assert_eq!(col(&c, 1), vec![Some("x".into()), Some("y|z".into())]);
        assert_eq!(c.columns[0].len(), 2);
    }

    #[test]
    fn lenient_field_count_pads_and_truncates() {
        let s = CsvSplitter::new(b",".to_vec(), b"\n".to_vec(), None, None, false)
            .with_lenient_field_count(true);
        let chunk = s.split(b"1,2,\n3\n4,5,6,7\n", 2);
        assert_eq!(chunk.rejects.count, 0);
        let text = |v: &[Option<&str>]| -> Vec<Option<String>> {
            v.iter().map(|s| s.map(str::to_string)).collect()
        };
        assert_eq!(col(&chunk, 0), text(&[Some("1"), Some("3"), Some("4")]));
        assert_eq!(col(&chunk, 1), text(&[Some("2"), None, Some("5")]));
    }

    #[test]
    fn enclose_and_escape() {
        let s = CsvSplitter::new(
            b",".to_vec(),
            b"\n".to_vec(),
            Some(b'"'),
            Some(b'\\'),
            false,
        );
        let data = b"1,\"a,b\nc\"\n2,\"say \\\"hi\\\" \"\"x\"\"\"\n3,\\N\n4,\"\\N\"\n5,";
        let c = s.split(data, 2);
        assert_eq!(
            col(&c, 1),
            vec![
                Some("a,b\nc".into()),
                Some("say \"hi\" \"x\"".into()),
                None,
                Some("N".into()),
                Some("".into())
            ]
        );
        assert_eq!(c.rejects.count, 0, "{:?}", c.rejects.samples);
        // Outside enclosed fields the escape character is an ordinary byte (as in Doris).
        let c = s.split(b"6,c\\d\n7,a\\,b\n", 2);
        assert_eq!(col(&c, 1), vec![Some("c\\d".into())]);
        assert_eq!(c.rejects.count, 1);
        let plain = CsvSplitter::new(b",".to_vec(), b"\n".to_vec(), None, Some(b'\\'), false);
        assert_eq!(
            col(&plain.split(b"8,e\\f\n", 2), 1),
            vec![Some("e\\f".into())]
        );
        // The enclosed newline does not end a line.
        assert_eq!(s.complete_prefix(b"1,\"a\nb"), 0);
        assert_eq!(s.complete_prefix(b"1,\"a\nb\"\n2"), 8);
    }

    /// LOAD DATA: MySQL's escapes in every field (answers from MariaDB's LOAD DATA).
    #[test]
    fn mysql_escapes_everywhere() {
        let s = CsvSplitter::new(b"\t".to_vec(), b"\n".to_vec(), None, Some(b'\\'), false)
            .with_mysql_escapes(true);
        let data = b"1\tA\\tB\n2\t\\N\n3\tline\\nbreak\n4\tback\\\\slash\n5\ttab\\\there\n6\tnew\\\nline\n7\ta\\Nb\n";
        let c = s.split(data, 2);
        assert_eq!(
            col(&c, 1),
            vec![
                Some("A\tB".into()),
                None,
                Some("line\nbreak".into()),
                Some("back\\slash".into()),
                Some("tab\there".into()),
                Some("new\nline".into()),
                Some("aNb".into()),
            ]
        );
        assert_eq!(c.rejects.count, 0, "{:?}", c.rejects.samples);
        // An escaped line end does not end the line.
        assert_eq!(s.complete_prefix(b"1\tx\\\ny"), 0);
        // Enclosed fields read the escapes too.
        let quoted = CsvSplitter::new(
            b",".to_vec(),
            b"\n".to_vec(),
            Some(b'"'),
            Some(b'\\'),
            false,
        )
        .with_mysql_escapes(true);
        assert_eq!(
            col(&quoted.split(b"1,\"a\\tb\"\n", 2), 1),
            vec![Some("a\tb".into())]
        );
    }

    #[test]
    fn trims_double_quotes() {
        let s = CsvSplitter::new(b",".to_vec(), b"\n".to_vec(), None, None, true);
        let c = s.split(b"\"1\",\"x\"\n", 2);
        assert_eq!(col(&c, 0), vec![Some("1".into())]);
        assert_eq!(col(&c, 1), vec![Some("x".into())]);
    }
}
