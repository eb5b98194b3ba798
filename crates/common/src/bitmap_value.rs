//! The BITMAP value: a set of 64-bit ids (a roaring treemap) and its stable byte format.
//!
//! SQL functions (`to_bitmap`, `bitmap_union`, ...) and the storage engine (merging rows of an
//! Aggregate-key table whose column is `BITMAP BITMAP_UNION`) both go through this module, so the
//! byte format below is what lands on disk and must stay readable.
//!
//! Format: one tag byte, then
//! - `0` empty (the whole value is one byte; an empty byte slice also reads as empty),
//! - `1` one id below 2^32: u32 little endian,
//! - `2` one id: u64 little endian,
//! - `3` a few ids below 2^32: count u8, then that many u32 little endian,
//! - `4` a few ids: count u8, then that many u64 little endian,
//! - `5` anything else: `RoaringTreemap::serialize_into` (the portable roaring treemap format).
//!
//! Writers pick the smallest form; readers accept every form.

use roaring::RoaringTreemap;

const TAG_EMPTY: u8 = 0;
const TAG_SINGLE32: u8 = 1;
const TAG_SINGLE64: u8 = 2;
const TAG_SET32: u8 = 3;
const TAG_SET64: u8 = 4;
const TAG_TREEMAP: u8 = 5;

/// The serialization of the empty bitmap.
pub const EMPTY_SERIALIZED: &[u8] = &[TAG_EMPTY];

/// Sets up to this many ids may be written as a plain list when that is smaller.
const SMALL_SET_MAX: u64 = 32;

/// A set of 64-bit ids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BitmapValue(RoaringTreemap);

impl BitmapValue {
    /// The empty bitmap.
    pub fn new() -> Self {
        Self(RoaringTreemap::new())
    }

    /// A bitmap holding one id.
    pub fn from_id(id: u64) -> Self {
        let mut b = Self::new();
        b.insert(id);
        b
    }

    /// A bitmap holding the given ids (duplicates collapse).
    pub fn from_ids(ids: impl IntoIterator<Item = u64>) -> Self {
        Self(ids.into_iter().collect())
    }

    /// Adds one id; returns whether it was new.
    pub fn insert(&mut self, id: u64) -> bool {
        self.0.insert(id)
    }

    /// Removes one id; returns whether it was present.
    pub fn remove(&mut self, id: u64) -> bool {
        self.0.remove(id)
    }

    /// Number of ids.
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, id: u64) -> bool {
        self.0.contains(id)
    }

    pub fn min(&self) -> Option<u64> {
        self.0.min()
    }

    pub fn max(&self) -> Option<u64> {
        self.0.max()
    }

    /// Ids in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.0.iter()
    }

    /// The underlying roaring treemap.
    pub fn as_treemap(&self) -> &RoaringTreemap {
        &self.0
    }

    /// `self = self ∪ other`.
    pub fn union_with(&mut self, other: &Self) {
        self.0 |= &other.0;
    }

    /// `self = self ∩ other`.
    pub fn intersect_with(&mut self, other: &Self) {
        self.0 &= &other.0;
    }

    /// `self = self △ other` (ids in exactly one of the two).
    pub fn xor_with(&mut self, other: &Self) {
        self.0 ^= &other.0;
    }

    /// `self = self \ other` (and-not).
    pub fn difference_with(&mut self, other: &Self) {
        self.0 -= &other.0;
    }

    /// |self ∩ other| without building the intersection.
    pub fn intersection_len(&self, other: &Self) -> u64 {
        self.0.intersection_len(&other.0)
    }

    /// Whether every id of `other` is in `self`.
    pub fn is_superset(&self, other: &Self) -> bool {
        self.0.is_superset(&other.0)
    }

    /// Whether the two share no id.
    pub fn is_disjoint(&self, other: &Self) -> bool {
        self.0.is_disjoint(&other.0)
    }

    /// Approximate heap bytes held (the roaring serialized size tracks memory closely).
    pub fn heap_size(&self) -> usize {
        if self.0.is_empty() {
            0
        } else {
            self.0.serialized_size()
        }
    }

    /// Ids ascending, comma separated ("1,2,3"); "" for the empty bitmap.
    pub fn to_id_string(&self) -> String {
        let mut s = String::new();
        for (i, id) in self.0.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&id.to_string());
        }
        s
    }

    /// Parses Doris `bitmap_from_string` input: unsigned 64-bit ids separated by commas.
    /// Empty pieces are skipped ("" and "1,,2" are valid); each piece may carry surrounding
    /// whitespace and a leading '+'. A negative, non-numeric or out-of-range piece makes the
    /// whole input invalid (`None`, which SQL returns as NULL).
    pub fn from_id_string(s: &str) -> Option<Self> {
        let mut b = Self::new();
        for piece in s.split(',') {
            if piece.is_empty() {
                continue;
            }
            b.insert(parse_u64(piece)?);
        }
        Some(b)
    }

    /// Serializes into the stable format (see the module docs).
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.serialize_into(&mut out);
        out
    }

    /// Appends the stable serialization to `out`.
    pub fn serialize_into(&self, out: &mut Vec<u8>) {
        let len = self.0.len();
        let max = self.0.max().unwrap_or(0);
        let narrow = max <= u32::MAX as u64;
        match len {
            0 => out.push(TAG_EMPTY),
            1 if narrow => {
                out.push(TAG_SINGLE32);
                out.extend_from_slice(&(max as u32).to_le_bytes());
            }
            1 => {
                out.push(TAG_SINGLE64);
                out.extend_from_slice(&max.to_le_bytes());
            }
            _ => {
                let width = if narrow { 4 } else { 8 };
                let roaring_size = self.0.serialized_size();
                if len <= SMALL_SET_MAX && 2 + len as usize * width <= 1 + roaring_size {
                    out.push(if narrow { TAG_SET32 } else { TAG_SET64 });
                    out.push(len as u8);
                    for id in self.0.iter() {
                        if narrow {
                            out.extend_from_slice(&(id as u32).to_le_bytes());
                        } else {
                            out.extend_from_slice(&id.to_le_bytes());
                        }
                    }
                } else {
                    out.reserve(1 + roaring_size);
                    out.push(TAG_TREEMAP);
                    // Writing into a Vec cannot fail.
                    let _ = self.0.serialize_into(&mut *out);
                }
            }
        }
    }

    /// Appends the serialization of the one-id bitmap `{id}` (what `from_id(id).serialize()`
    /// gives) without building a treemap.
    pub fn serialize_single(id: u64, out: &mut Vec<u8>) {
        if let Ok(narrow) = u32::try_from(id) {
            out.push(TAG_SINGLE32);
            out.extend_from_slice(&narrow.to_le_bytes());
        } else {
            out.push(TAG_SINGLE64);
            out.extend_from_slice(&id.to_le_bytes());
        }
    }

    /// Reads the stable format. An empty slice is the empty bitmap.
    pub fn deserialize(bytes: &[u8]) -> Result<Self, String> {
        let mut b = Self::new();
        b.union_with_serialized(bytes)?;
        Ok(b)
    }

    /// `self = self ∪ deserialize(bytes)`, without materializing small inputs.
    pub fn union_with_serialized(&mut self, bytes: &[u8]) -> Result<(), String> {
        let Some((&tag, body)) = bytes.split_first() else {
            return Ok(());
        };
        match tag {
            TAG_EMPTY => expect_len(body, 0, "empty"),
            TAG_SINGLE32 => {
                self.insert(read_u32(body, 0)? as u64);
                expect_len(body, 4, "single id")
            }
            TAG_SINGLE64 => {
                self.insert(read_u64(body, 0)?);
                expect_len(body, 8, "single id")
            }
            TAG_SET32 | TAG_SET64 => {
                let width = if tag == TAG_SET32 { 4 } else { 8 };
                let n = *body.first().ok_or("truncated bitmap id list")? as usize;
                expect_len(body, 1 + n * width, "id list")?;
                for i in 0..n {
                    let at = 1 + i * width;
                    let id = if width == 4 {
                        read_u32(body, at)? as u64
                    } else {
                        read_u64(body, at)?
                    };
                    self.insert(id);
                }
                Ok(())
            }
            TAG_TREEMAP => {
                let mut reader = body;
                let tm = RoaringTreemap::deserialize_from(&mut reader)
                    .map_err(|e| format!("invalid roaring bitmap: {e}"))?;
                if !reader.is_empty() {
                    return Err(format!(
                        "invalid bitmap: {} trailing bytes after the roaring treemap",
                        reader.len()
                    ));
                }
                if self.0.is_empty() {
                    self.0 = tm;
                } else {
                    self.0 |= tm;
                }
                Ok(())
            }
            other => Err(format!("invalid bitmap: unknown format tag {other}")),
        }
    }
}

impl FromIterator<u64> for BitmapValue {
    fn from_iter<I: IntoIterator<Item = u64>>(iter: I) -> Self {
        Self::from_ids(iter)
    }
}

/// Union of serialized bitmaps (used by Aggregate-key BITMAP_UNION merges).
pub fn union_serialized<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Result<Vec<u8>, String> {
    let mut acc = BitmapValue::new();
    for v in values {
        acc.union_with_serialized(v)?;
    }
    Ok(acc.serialize())
}

/// Parses one unsigned 64-bit id: surrounding ASCII whitespace and a leading '+' allowed.
pub fn parse_u64(s: &str) -> Option<u64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let digits = t.strip_prefix('+').unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()
}

fn expect_len(body: &[u8], len: usize, what: &str) -> Result<(), String> {
    if body.len() == len {
        Ok(())
    } else {
        Err(format!(
            "invalid bitmap {what}: expected {len} bytes after the tag, found {}",
            body.len()
        ))
    }
}

fn read_u32(b: &[u8], at: usize) -> Result<u32, String> {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or_else(|| "truncated bitmap".to_string())
}

fn read_u64(b: &[u8], at: usize) -> Result<u64, String> {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| "truncated bitmap".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(b: &BitmapValue) -> Vec<u8> {
        let bytes = b.serialize();
        assert_eq!(&BitmapValue::deserialize(&bytes).unwrap(), b);
        bytes
    }

    #[test]
    fn small_forms_are_small() {
        assert_eq!(round_trip(&BitmapValue::new()), EMPTY_SERIALIZED);
        for id in [0, 7, u32::MAX as u64, u32::MAX as u64 + 1, u64::MAX] {
            let mut single = Vec::new();
            BitmapValue::serialize_single(id, &mut single);
            assert_eq!(single, BitmapValue::from_id(id).serialize());
        }
        assert_eq!(round_trip(&BitmapValue::from_id(7)), vec![1, 7, 0, 0, 0]);
        let big = u64::MAX;
        let bytes = round_trip(&BitmapValue::from_id(big));
        assert_eq!(bytes.len(), 9);
        assert_eq!(bytes[0], 2);
        let two = round_trip(&BitmapValue::from_ids([1, 100_000]));
        assert_eq!(two, vec![3, 2, 1, 0, 0, 0, 0xa0, 0x86, 1, 0]);
        let wide = round_trip(&BitmapValue::from_ids([1, 1 << 40]));
        assert_eq!(wide.len(), 2 + 16);
        assert_eq!(wide[0], 4);
    }

    #[test]
    fn large_sets_use_roaring() {
        let b = BitmapValue::from_ids(0..10_000);
        let bytes = round_trip(&b);
        assert_eq!(bytes[0], 5);
        // a run of 10k ids compresses far below 8 bytes per id
        assert!(bytes.len() < 20_100, "{}", bytes.len());
        let sparse = BitmapValue::from_ids((0..1000).map(|i| i * 1_000_003 + (i << 33)));
        assert_eq!(round_trip(&sparse)[0], 5);
        assert_eq!(sparse.len(), 1000);
    }

    #[test]
    fn empty_slice_is_empty_bitmap() {
        assert!(BitmapValue::deserialize(&[]).unwrap().is_empty());
    }

    #[test]
    fn malformed_input_is_an_error() {
        for bad in [
            &[9u8][..],
            &[1, 1, 2],
            &[0, 0],
            &[2, 1, 2, 3],
            &[3, 2, 1, 0, 0, 0],
            &[5, 1, 2, 3],
            &[5, 0, 0, 0, 0, 0, 0, 0, 0, 7],
        ] {
            assert!(BitmapValue::deserialize(bad).is_err(), "{bad:?}");
        }
        // truncated roaring body
        let bytes = BitmapValue::from_ids(0..1000).serialize();
        assert!(BitmapValue::deserialize(&bytes[..bytes.len() - 3]).is_err());
    }

    #[test]
    fn set_operations() {
        let a = BitmapValue::from_ids([1, 2, 3, 4]);
        let b = BitmapValue::from_ids([3, 4, 5]);
        let mut u = a.clone();
        u.union_with(&b);
        assert_eq!(u.to_id_string(), "1,2,3,4,5");
        let mut i = a.clone();
        i.intersect_with(&b);
        assert_eq!(i.to_id_string(), "3,4");
        let mut x = a.clone();
        x.xor_with(&b);
        assert_eq!(x.to_id_string(), "1,2,5");
        let mut d = a.clone();
        d.difference_with(&b);
        assert_eq!(d.to_id_string(), "1,2");
        assert_eq!(a.intersection_len(&b), 2);
        assert!(a.is_superset(&BitmapValue::from_ids([1, 4])));
        assert!(!a.is_disjoint(&b));
        assert_eq!((a.min(), a.max(), a.len()), (Some(1), Some(4), 4));
        assert_eq!(
            (BitmapValue::new().min(), BitmapValue::new().max()),
            (None, None)
        );
        assert!(a.contains(2) && !a.contains(5));
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![1, 2, 3, 4]);
    }

    #[test]
    fn id_strings() {
        assert_eq!(BitmapValue::new().to_id_string(), "");
        let b = BitmapValue::from_id_string("0, 1, 2").unwrap();
        assert_eq!(b.to_id_string(), "0,1,2");
        assert_eq!(
            BitmapValue::from_id_string("3,1,,2,3")
                .unwrap()
                .to_id_string(),
            "1,2,3"
        );
        assert!(BitmapValue::from_id_string("").unwrap().is_empty());
        assert_eq!(
            BitmapValue::from_id_string("18446744073709551615")
                .unwrap()
                .max(),
            Some(u64::MAX)
        );
        for bad in ["-1, 0", "a", "1, 18446744073709551616", " ", "1.5", "1 2"] {
            assert!(BitmapValue::from_id_string(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn union_of_serialized_values() {
        let parts = [
            BitmapValue::from_id(1).serialize(),
            Vec::new(),
            BitmapValue::new().serialize(),
            BitmapValue::from_ids([2, 3, 1 << 35]).serialize(),
            BitmapValue::from_ids(100..5000).serialize(),
        ];
        let merged = union_serialized(parts.iter().map(|p| p.as_slice())).unwrap();
        let b = BitmapValue::deserialize(&merged).unwrap();
        assert_eq!(b.len(), 3 + 1 + 4900);
        assert!(b.contains(1 << 35) && b.contains(4999) && !b.contains(5000));
        assert!(union_serialized([&[42u8][..]]).is_err());
        assert_eq!(union_serialized(std::iter::empty()).unwrap(), vec![0]);
    }
}
