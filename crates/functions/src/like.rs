//! LIKE / NOT LIKE / ILIKE / NOT ILIKE for patterns made of literal text and `%` only, over
//! string arrays, with no allocation per row:
//! - `abc`, `abc%`, `%abc`: one byte comparison per row, straight from the array's buffers;
//! - `%abc%`: one SIMD substring search (memchr) over the batch's whole value buffer; a match
//!   is credited to the row that holds it whole, and the search goes on at the next row;
//! - other `%` patterns (`a%b`, `%a%b%`): the pieces in order, per row.
//!
//! ILIKE needs an ASCII pattern; the batch's text is lowered into one buffer first, and a
//! batch holding non-ASCII text is left to Arrow (Unicode case folding). Patterns with `_` or
//! escapes, and other input types, are left to Arrow as well: [`LikeMatcher::new`] and
//! [`LikeMatcher::evaluate`] return `None` for them.

use arrow::array::BooleanBufferBuilder;
use arrow::array::{Array, AsArray, BooleanArray, StringViewArray};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::{ArrowNativeType, DataType};
use memchr::memmem::Finder;

/// Where the pattern's literal text must be.
#[derive(Debug)]
enum Shape {
    /// No `%`: the whole text.
    Exact(Vec<u8>),
    /// `abc%`.
    Prefix(Vec<u8>),
    /// `%abc`.
    Suffix(Vec<u8>),
    /// `%abc%` (`%` alone: an empty needle, every non-NULL text matches).
    Contains(Box<Finder<'static>>),
    /// Anything else of text and `%`: an optional anchored head and tail, and pieces in
    /// between that must appear in order without overlapping.
    Pieces {
        head: Vec<u8>,
        middle: Vec<Finder<'static>>,
        tail: Vec<u8>,
    },
}

/// A compiled LIKE pattern.
#[derive(Debug)]
pub struct LikeMatcher {
    shape: Shape,
    negated: bool,
    case_insensitive: bool,
}

impl LikeMatcher {
    /// `None` when the pattern has `_` or `\` (Arrow handles those), or is ILIKE with
    /// non-ASCII text.
    pub fn new(pattern: &str, negated: bool, case_insensitive: bool) -> Option<LikeMatcher> {
        if pattern.contains(['_', '\\']) || (case_insensitive && !pattern.is_ascii()) {
            return None;
        }
        let pattern = if case_insensitive {
            pattern.to_ascii_lowercase()
        } else {
            pattern.to_string()
        };
        let parts: Vec<&str> = pattern.split('%').collect();
        let bytes = |s: &str| s.as_bytes().to_vec();
        let finder = |s: &str| Finder::new(s.as_bytes()).into_owned();
        let shape = match parts.as_slice() {
            [exact] => Shape::Exact(bytes(exact)),
            [prefix, ""] => Shape::Prefix(bytes(prefix)),
            ["", suffix] => Shape::Suffix(bytes(suffix)),
            [head, middle @ .., tail] => {
                let middle: Vec<&str> = middle.iter().copied().filter(|p| !p.is_empty()).collect();
                match (head.is_empty(), middle.as_slice(), tail.is_empty()) {
                    (true, [], true) => Shape::Contains(Box::new(finder(""))),
                    (true, [needle], true) => Shape::Contains(Box::new(finder(needle))),
                    (false, [], true) => Shape::Prefix(bytes(head)),
                    (true, [], false) => Shape::Suffix(bytes(tail)),
                    _ => Shape::Pieces {
                        head: bytes(head),
                        middle: middle.into_iter().map(finder).collect(),
                        tail: bytes(tail),
                    },
                }
            }
            [] => return None,
        };
        Some(LikeMatcher {
            shape,
            negated,
            case_insensitive,
        })
    }

    /// The match of every row (NULL rows stay NULL), or `None` when Arrow must do it: not a
    /// string array, or ILIKE over non-ASCII text.
    pub fn evaluate(&self, array: &dyn Array) -> Option<BooleanArray> {
        let values = if self.case_insensitive {
            let rows = GatheredRows::lowered(array)?;
            if !rows.data.is_ascii() {
                return None;
            }
            self.match_contiguous(&rows.data, &rows.offsets)
        } else {
            match array.data_type() {
                DataType::Utf8 => {
                    let a = array.as_string::<i32>();
                    self.match_contiguous(a.value_data(), a.value_offsets())
                }
                DataType::LargeUtf8 => {
                    let a = array.as_string::<i64>();
                    self.match_contiguous(a.value_data(), a.value_offsets())
                }
                DataType::Utf8View => self.match_views(array.as_string_view())?,
                _ => return None,
            }
        };
        let values = if self.negated { !&values } else { values };
        Some(BooleanArray::new(values, array.logical_nulls()))
    }

    /// Rows `i` are `data[offsets[i]..offsets[i + 1]]`.
    fn match_contiguous<O: ArrowNativeType>(&self, data: &[u8], offsets: &[O]) -> BooleanBuffer {
        let rows = offsets.len().saturating_sub(1);
        let row = |i: usize| &data[offsets[i].as_usize()..offsets[i + 1].as_usize()];
        match &self.shape {
            Shape::Contains(finder) => contains_rows(finder, data, offsets),
            _ => BooleanBuffer::collect_bool(rows, |i| self.matches(row(i))),
        }
    }

    /// Views: prefix, suffix and exact compare each row in place; a substring search gathers
    /// the batch's text into one buffer first, so it is one search, not one per row.
    fn match_views(&self, a: &StringViewArray) -> Option<BooleanBuffer> {
        Some(match &self.shape {
            Shape::Contains(finder) => {
                let (data, offsets) = GatheredRows::views(a)?;
                contains_rows(finder, &data, &offsets)
            }
            _ => BooleanBuffer::collect_bool(a.len(), |i| {
                // SAFETY: `i < a.len()`; a NULL row's view is not read.
                a.is_valid(i) && self.matches(unsafe { a.value_unchecked(i) }.as_bytes())
            }),
        })
    }

    /// One row's text (already lowered for ILIKE).
    fn matches(&self, text: &[u8]) -> bool {
        match &self.shape {
            Shape::Exact(p) => text == p.as_slice(),
            Shape::Prefix(p) => text.starts_with(p),
            Shape::Suffix(p) => text.ends_with(p),
            Shape::Contains(f) => f.find(text).is_some(),
            Shape::Pieces { head, middle, tail } => {
                if text.len() < head.len() + tail.len()
                    || !text.starts_with(head)
                    || !text.ends_with(tail)
                {
                    return false;
                }
                let mut rest = &text[head.len()..text.len() - tail.len()];
                for f in middle {
                    match f.find(rest) {
                        Some(at) => rest = &rest[at + f.needle().len()..],
                        None => return false,
                    }
                }
                true
            }
        }
    }
}

/// One substring search over the rows' whole buffer: each match marks the row that holds it
/// from start to end, and the search resumes at the next row. A match that runs past its
/// row's end means that row has none (any later start in the row runs past it too).
fn contains_rows<O: ArrowNativeType>(
    finder: &Finder<'_>,
    data: &[u8],
    offsets: &[O],
) -> BooleanBuffer {
    let rows = offsets.len().saturating_sub(1);
    let needle = finder.needle().len();
    if needle == 0 {
        return BooleanBuffer::new_set(rows);
    }
    let (Some(first), Some(last)) = (offsets.first(), offsets.last()) else {
        return BooleanBuffer::new_unset(0);
    };
    let mut hits = BooleanBufferBuilder::new(rows);
    hits.append_n(rows, false);
    let (mut pos, end) = (first.as_usize(), last.as_usize());
    let mut row = 0;
    while pos < end {
        let Some(found) = finder.find(&data[pos..end]) else {
            break;
        };
        let at = pos + found;
        while offsets[row + 1].as_usize() <= at {
            row += 1;
        }
        let row_end = offsets[row + 1].as_usize();
        if at + needle <= row_end {
            hits.set_bit(row, true);
        }
        pos = row_end;
        row += 1;
        if row >= rows {
            break;
        }
    }
    hits.finish()
}

/// Rows copied into one buffer (`offsets` has one more entry than there are rows).
struct GatheredRows {
    data: Vec<u8>,
    offsets: Vec<u32>,
}

impl GatheredRows {
    /// The rows of a view array, one after another (NULL rows empty): borrowed from its data
    /// buffer when the views already lie there back to back in row order (what a cast from
    /// Utf8 gives), else copied. `None` past 4 GiB of text (u32 offsets).
    fn views(a: &StringViewArray) -> Option<(std::borrow::Cow<'_, [u8]>, Vec<u32>)> {
        if let Some((data, offsets)) = contiguous_views(a) {
            return Some((std::borrow::Cow::Borrowed(data), offsets));
        }
        let total: usize = a.lengths().map(|l| l as usize).sum();
        if total > u32::MAX as usize {
            return None;
        }
        let mut data = Vec::with_capacity(total);
        let mut offsets = Vec::with_capacity(a.len() + 1);
        offsets.push(0u32);
        for i in 0..a.len() {
            if a.is_valid(i) {
                // SAFETY: `i < a.len()`.
                data.extend_from_slice(unsafe { a.value_unchecked(i) }.as_bytes());
            }
            offsets.push(data.len() as u32);
        }
        Some((std::borrow::Cow::Owned(data), offsets))
    }

    /// A string array's rows, lowered (ASCII) into one buffer; `None` for other types.
    fn lowered(array: &dyn Array) -> Option<GatheredRows> {
        fn lower_contiguous<O: ArrowNativeType>(data: &[u8], offsets: &[O]) -> GatheredRows {
            let (first, last) = match (offsets.first(), offsets.last()) {
                (Some(f), Some(l)) => (f.as_usize(), l.as_usize()),
                _ => (0, 0),
            };
            let mut lowered = data[first..last].to_vec();
            lowered.make_ascii_lowercase();
            let offsets = offsets
                .iter()
                .map(|o| (o.as_usize() - first) as u32)
                .collect();
            GatheredRows {
                data: lowered,
                offsets,
            }
        }
        Some(match array.data_type() {
            DataType::Utf8 => {
                let a = array.as_string::<i32>();
                lower_contiguous(a.value_data(), a.value_offsets())
            }
            // u32 offsets: a LargeUtf8 batch over 4 GiB is left to Arrow.
            DataType::LargeUtf8 => {
                let a = array.as_string::<i64>();
                let offsets = a.value_offsets();
                let span = offsets[offsets.len() - 1] - offsets[0];
                if span > u32::MAX as i64 {
                    return None;
                }
                lower_contiguous(a.value_data(), offsets)
            }
            DataType::Utf8View => {
                let (data, offsets) = GatheredRows::views(array.as_string_view())?;
                lower_contiguous(&data, &offsets)
            }
            _ => return None,
        })
    }
}

/// When every non-empty row of `a` lives in its one data buffer right after the row before
/// it, that stretch of the buffer and the rows' offsets into it (from 0). Rows of 1 to 12
/// bytes live in their views, not at a known place of the buffer, so they rule it out.
fn contiguous_views(a: &StringViewArray) -> Option<(&[u8], Vec<u32>)> {
    let [buffer] = a.data_buffers() else {
        return None;
    };
    let views = a.views();
    let mut offsets = Vec::with_capacity(views.len() + 1);
    offsets.push(0u32);
    let (mut start, mut end): (Option<usize>, usize) = (None, 0);
    for (i, &view) in views.iter().enumerate() {
        // A NULL row's view is not read: the row is empty here.
        let len = if a.is_valid(i) {
            view as u32 as usize
        } else {
            0
        };
        if len > 0 {
            if len <= 12 {
                return None;
            }
            let offset = (view >> 96) as u32 as usize;
            match start {
                None => {
                    start = Some(offset);
                    end = offset;
                }
                Some(_) if offset != end => return None,
                Some(_) => {}
            }
            end += len;
        }
        offsets.push((end - start.unwrap_or(0)) as u32);
    }
    let start = start.unwrap_or(0);
    if end - start > u32::MAX as usize {
        return None;
    }
    let data = buffer.as_slice().get(start..end)?;
    Some((data, offsets))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{LargeStringArray, StringArray};

    const TEXTS: [Option<&str>; 8] = [
        Some("https://shop.mi.com/item/12.html"),
        Some("http://www.Xiaomi.cn/Promo/7"),
        Some(""),
        None,
        Some("shop"),
        Some("a long text that is not inline in a view: shop.mi.com"),
        Some("mi.co"),
        Some("x.html.html"),
    ];

    /// The answer by the definition, per row, for `%`-only patterns.
    fn reference(pattern: &str, text: &str, ci: bool) -> bool {
        let (p, t) = if ci {
            (pattern.to_ascii_lowercase(), text.to_ascii_lowercase())
        } else {
            (pattern.to_string(), text.to_string())
        };
        let parts: Vec<&str> = p.split('%').collect();
        if parts.len() == 1 {
            return t == p;
        }
        let (head, tail) = (parts[0], parts[parts.len() - 1]);
        if t.len() < head.len() + tail.len() || !t.starts_with(head) || !t.ends_with(tail) {
            return false;
        }
        let mut rest = &t[head.len()..t.len() - tail.len()];
        for m in &parts[1..parts.len() - 1] {
            match rest.find(m) {
                Some(at) => rest = &rest[at + m.len()..],
                None => return false,
            }
        }
        true
    }

    fn check_all_types(pattern: &str, negated: bool, ci: bool) {
        let m = LikeMatcher::new(pattern, negated, ci).expect("fast pattern");
        let expect: Vec<Option<bool>> = TEXTS
            .iter()
            .map(|t| t.map(|t| reference(pattern, t, ci) != negated))
            .collect();
        // Arrow's kernels give the same answers.
        let kernel = match (negated, ci) {
            (false, false) => arrow::compute::kernels::comparison::like,
            (true, false) => arrow::compute::kernels::comparison::nlike,
            (false, true) => arrow::compute::kernels::comparison::ilike,
            (true, true) => arrow::compute::kernels::comparison::nilike,
        };
        let arrow_answer = kernel(
            &StringArray::from(TEXTS.to_vec()),
            &StringArray::new_scalar(pattern),
        )
        .unwrap();
        assert_eq!(arrow_answer.iter().collect::<Vec<_>>(), expect, "{pattern}");
        let arrays: Vec<Box<dyn Array>> = vec![
            Box::new(StringArray::from(TEXTS.to_vec())),
            Box::new(LargeStringArray::from(TEXTS.to_vec())),
            Box::new(StringViewArray::from(TEXTS.to_vec())),
        ];
        for a in &arrays {
            let got: Vec<Option<bool>> = m.evaluate(a.as_ref()).unwrap().iter().collect();
            assert_eq!(got, expect, "{pattern} on {}", a.data_type());
            // A slice starts inside the buffers.
            let s = a.slice(2, 5);
            let got: Vec<Option<bool>> = m.evaluate(s.as_ref()).unwrap().iter().collect();
            assert_eq!(
                got,
                expect[2..7],
                "{pattern} on a slice of {}",
                a.data_type()
            );
        }
    }

    #[test]
    fn every_shape_agrees_with_the_definition() {
        for pattern in [
            "shop",
            "",
            "https://%",
            "%.html",
            "%mi.co%",
            "%shop%",
            "%",
            "%%",
            "x%html",
            "%shop%mi%",
            "h%p%7",
            "%.html%.html",
            "mi.co%",
            "%m%",
            "shop%%",
        ] {
            for negated in [false, true] {
                check_all_types(pattern, negated, false);
                check_all_types(pattern, negated, true);
            }
        }
    }

    #[test]
    fn ilike_ignores_ascii_case_only() {
        let m = LikeMatcher::new("%XIAOMI.cn/promo%", false, true).unwrap();
        let a = StringArray::from(vec!["http://www.Xiaomi.CN/Promo/7", "xiaomi.cn"]);
        let got: Vec<Option<bool>> = m.evaluate(&a).unwrap().iter().collect();
        assert_eq!(got, vec![Some(true), Some(false)]);
        // Non-ASCII text: Arrow's Unicode case folding decides.
        let a = StringArray::from(vec!["Ünïcode shop"]);
        assert!(m.evaluate(&a).is_none());
        assert!(LikeMatcher::new("%é%", false, true).is_none());
    }

    #[test]
    fn views_cast_from_utf8_are_searched_in_place() {
        let texts = vec![
            None,
            Some("https://www.xiaomi.com/Promo/1"),
            Some(""),
            Some("http://shop.example.org/x"),
            Some("https://video.mi.com/y.mp4"),
        ];
        let utf8 = StringArray::from(texts.clone());
        let views = arrow::compute::cast(&utf8, &DataType::Utf8View).unwrap();
        let views = views.as_string_view();
        let (data, offsets) = contiguous_views(views).expect("back to back");
        assert_eq!(data, utf8.value_data());
        assert_eq!(offsets, vec![0, 0, 30, 30, 55, 81]);
        for (pattern, ci) in [("%mi.com%", false), ("%PROMO%", true), ("%shop%", false)] {
            let m = LikeMatcher::new(pattern, false, ci).unwrap();
            let got: Vec<Option<bool>> = m.evaluate(views).unwrap().iter().collect();
            let expect: Vec<Option<bool>> = texts
                .iter()
                .map(|t| t.map(|t| reference(pattern, t, ci)))
                .collect();
            assert_eq!(got, expect, "{pattern}");
            // A slice of the views is still back to back.
            let slice = views.slice(3, 2);
            assert!(contiguous_views(&slice).is_some());
            let got: Vec<Option<bool>> = m.evaluate(&slice).unwrap().iter().collect();
            assert_eq!(got, expect[3..5], "{pattern}");
        }
        // Short rows live in their views: no stretch of the buffer holds them.
        let short = StringViewArray::from(vec!["https://www.xiaomi.com/1", "mi.com"]);
        assert!(contiguous_views(&short).is_none());
    }

    #[test]
    fn null_rows_views_are_never_read() {
        use arrow::buffer::{Buffer, NullBuffer, ScalarBuffer};
        let text = b"https://www.example.com/x";
        let view = |len: u32, offset: u32| {
            let prefix = u32::from_le_bytes([text[0], text[1], text[2], text[3]]);
            len as u128 | (prefix as u128) << 32 | (offset as u128) << 96
        };
        // Row 1 is NULL and its view points far past the buffer's end.
        let views = ScalarBuffer::from(vec![view(text.len() as u32, 0), view(1000, 5)]);
        let nulls = NullBuffer::from(vec![true, false]);
        // SAFETY: the valid row's view is right; views of NULL rows need not be.
        let a = unsafe {
            StringViewArray::new_unchecked(views, vec![Buffer::from(text.to_vec())], Some(nulls))
        };
        for (pattern, ci) in [
            ("%example%", false),
            ("https:%", false),
            ("%EXAMPLE%", true),
        ] {
            let m = LikeMatcher::new(pattern, false, ci).unwrap();
            let got: Vec<Option<bool>> = m.evaluate(&a).unwrap().iter().collect();
            assert_eq!(got, vec![Some(true), None], "{pattern}");
        }
    }

    #[test]
    fn a_match_across_two_rows_counts_for_neither() {
        // "sh" ends row 0 and "op" starts row 1: concatenated they spell "shop".
        let m = LikeMatcher::new("%shop%", false, false).unwrap();
        let a = StringArray::from(vec!["xxsh", "opxx", "shop", "sho"]);
        let got: Vec<Option<bool>> = m.evaluate(&a).unwrap().iter().collect();
        assert_eq!(got, vec![Some(false), Some(false), Some(true), Some(false)]);
    }

    #[test]
    fn wildcards_and_escapes_are_left_to_arrow() {
        assert!(LikeMatcher::new("a_c", false, false).is_none());
        assert!(LikeMatcher::new("100\\%", false, false).is_none());
        let m = LikeMatcher::new("%x%", false, false).unwrap();
        assert!(m
            .evaluate(&arrow::array::Int32Array::from(vec![1]))
            .is_none());
    }
}
