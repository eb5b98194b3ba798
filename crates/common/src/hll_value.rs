//! The HLL value: Basalt's HyperLogLog sketch for approximate distinct counts, and its stable
//! byte format.
//!
//! In the spirit of Doris's HLL: small sets are kept exactly (up to [`EXPLICIT_MAX`] distinct
//! 64-bit hashes, so their cardinality is exact), larger ones switch to 2^14 one-byte registers
//! (precision 14, standard error about 0.8%). The estimate is Ertl's improved raw estimator
//! ("New cardinality estimation algorithms for HyperLogLog sketches", 2017), which needs no
//! bias tables and stays unbiased from tiny to huge cardinalities.
//!
//! Values are hashed with xxh3-64 ([`HllValue::hash_bytes`]); a register index is the low 14 bits
//! of the hash and its rank is 1 + the number of trailing zeros of the remaining 50 bits.
//!
//! Format: one tag byte, then
//! - `0` empty (an empty byte slice also reads as empty),
//! - `1` explicit: count u8, then that many u64 hashes little endian,
//! - `2` sparse registers: count u16 little endian, then that many (index u16 LE, rank u8),
//! - `3` dense registers: 16384 rank bytes.

/// Most distinct hashes kept exactly before switching to registers (as Doris).
pub const EXPLICIT_MAX: usize = 160;
/// log2 of the register count.
pub const PRECISION: u32 = 14;
const REGISTERS: usize = 1 << PRECISION;
/// Bits left for the rank once the index is taken.
const Q: u32 = 64 - PRECISION;
/// Largest possible rank (all remaining bits zero).
const MAX_RANK: u8 = (Q + 1) as u8;

const TAG_EMPTY: u8 = 0;
const TAG_EXPLICIT: u8 = 1;
const TAG_SPARSE: u8 = 2;
const TAG_DENSE: u8 = 3;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Repr {
    /// Sorted, distinct hashes; at most `EXPLICIT_MAX`.
    Explicit(Vec<u64>),
    /// `REGISTERS` ranks.
    Dense(Box<[u8]>),
}

/// A HyperLogLog sketch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HllValue {
    repr: Repr,
}

impl Default for HllValue {
    fn default() -> Self {
        Self::new()
    }
}

impl HllValue {
    /// The empty sketch.
    pub fn new() -> Self {
        Self {
            repr: Repr::Explicit(Vec::new()),
        }
    }

    /// The hash Basalt uses for HLL inputs (xxh3-64 of the bytes).
    pub fn hash_bytes(b: &[u8]) -> u64 {
        xxhash_rust::xxh3::xxh3_64(b)
    }

    /// Whether nothing was ever inserted.
    pub fn is_empty(&self) -> bool {
        matches!(&self.repr, Repr::Explicit(v) if v.is_empty())
    }

    /// Adds one hashed value.
    pub fn insert_hash(&mut self, h: u64) {
        if let Repr::Explicit(v) = &mut self.repr {
            match v.binary_search(&h) {
                Ok(_) => return,
                Err(at) if v.len() < EXPLICIT_MAX => {
                    v.insert(at, h);
                    return;
                }
                Err(_) => {}
            }
        }
        set_register(self.dense_mut(), h);
    }

    /// `self = self ∪ other`.
    pub fn merge(&mut self, other: &Self) {
        match &other.repr {
            Repr::Explicit(hashes) => {
                for &h in hashes {
                    self.insert_hash(h);
                }
            }
            Repr::Dense(theirs) => {
                let mine = self.dense_mut();
                for (m, t) in mine.iter_mut().zip(theirs.iter()) {
                    *m = (*m).max(*t);
                }
            }
        }
    }

    /// `self = self ∪ deserialize(bytes)`, without materializing the other sketch.
    pub fn merge_serialized(&mut self, bytes: &[u8]) -> Result<(), String> {
        let Some((&tag, body)) = bytes.split_first() else {
            return Ok(());
        };
        match tag {
            TAG_EMPTY => expect_len(body, 0, "empty"),
            TAG_EXPLICIT => {
                let n = *body.first().ok_or("truncated hll")? as usize;
                if n > EXPLICIT_MAX {
                    return Err(format!("invalid hll: {n} explicit hashes"));
                }
                expect_len(body, 1 + 8 * n, "explicit set")?;
                for chunk in body[1..].chunks_exact(8) {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(chunk);
                    self.insert_hash(u64::from_le_bytes(b));
                }
                Ok(())
            }
            TAG_SPARSE => {
                let n = body
                    .get(..2)
                    .map(|s| u16::from_le_bytes([s[0], s[1]]) as usize)
                    .ok_or("truncated hll")?;
                expect_len(body, 2 + 3 * n, "sparse registers")?;
                // validate before touching self
                for e in body[2..].chunks_exact(3) {
                    let idx = u16::from_le_bytes([e[0], e[1]]) as usize;
                    if idx >= REGISTERS || e[2] > MAX_RANK {
                        return Err(format!("invalid hll register {idx}={}", e[2]));
                    }
                }
                let regs = self.dense_mut();
                for e in body[2..].chunks_exact(3) {
                    let idx = u16::from_le_bytes([e[0], e[1]]) as usize;
                    regs[idx] = regs[idx].max(e[2]);
                }
                Ok(())
            }
            TAG_DENSE => {
                expect_len(body, REGISTERS, "dense registers")?;
                if let Some(bad) = body.iter().find(|&&r| r > MAX_RANK) {
                    return Err(format!("invalid hll register rank {bad}"));
                }
                let regs = self.dense_mut();
                for (m, &t) in regs.iter_mut().zip(body.iter()) {
                    *m = (*m).max(t);
                }
                Ok(())
            }
            other => Err(format!("invalid hll: unknown format tag {other}")),
        }
    }

    /// Estimated number of distinct values (exact while the set is explicit).
    pub fn cardinality(&self) -> u64 {
        match &self.repr {
            Repr::Explicit(v) => v.len() as u64,
            Repr::Dense(r) => estimate(r),
        }
    }

    /// Approximate heap bytes held.
    pub fn heap_size(&self) -> usize {
        match &self.repr {
            Repr::Explicit(v) => v.capacity() * 8,
            Repr::Dense(_) => REGISTERS,
        }
    }

    /// Serializes into the stable format (see the module docs).
    pub fn serialize(&self) -> Vec<u8> {
        match &self.repr {
            Repr::Explicit(v) if v.is_empty() => vec![TAG_EMPTY],
            Repr::Explicit(v) => {
                let mut out = Vec::with_capacity(2 + 8 * v.len());
                out.push(TAG_EXPLICIT);
                out.push(v.len() as u8);
                for h in v {
                    out.extend_from_slice(&h.to_le_bytes());
                }
                out
            }
            Repr::Dense(r) => {
                let nonzero = r.iter().filter(|&&x| x != 0).count();
                if 3 + 3 * nonzero < 1 + REGISTERS {
                    let mut out = Vec::with_capacity(3 + 3 * nonzero);
                    out.push(TAG_SPARSE);
                    out.extend_from_slice(&(nonzero as u16).to_le_bytes());
                    for (i, &rank) in r.iter().enumerate() {
                        if rank != 0 {
                            out.extend_from_slice(&(i as u16).to_le_bytes());
                            out.push(rank);
                        }
                    }
                    out
                } else {
                    let mut out = Vec::with_capacity(1 + REGISTERS);
                    out.push(TAG_DENSE);
                    out.extend_from_slice(r);
                    out
                }
            }
        }
    }

    /// Reads the stable format. An empty slice is the empty sketch.
    pub fn deserialize(bytes: &[u8]) -> Result<Self, String> {
        let mut h = Self::new();
        h.merge_serialized(bytes)?;
        Ok(h)
    }

    fn make_dense(&mut self) {
        if let Repr::Explicit(v) = &self.repr {
            let mut regs = vec![0u8; REGISTERS].into_boxed_slice();
            for &h in v {
                set_register(&mut regs, h);
            }
            self.repr = Repr::Dense(regs);
        }
    }

    fn dense_mut(&mut self) -> &mut [u8] {
        self.make_dense();
        match &mut self.repr {
            Repr::Dense(r) => r,
            Repr::Explicit(_) => unreachable!("converted to dense above"),
        }
    }
}

/// Union of serialized sketches (used by Aggregate-key HLL_UNION merges).
pub fn union_serialized<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Result<Vec<u8>, String> {
    let mut acc = HllValue::new();
    for v in values {
        acc.merge_serialized(v)?;
    }
    Ok(acc.serialize())
}

#[inline]
fn set_register(regs: &mut [u8], h: u64) {
    let idx = (h & (REGISTERS as u64 - 1)) as usize;
    let w = h >> PRECISION;
    let rank = if w == 0 {
        MAX_RANK
    } else {
        w.trailing_zeros() as u8 + 1
    };
    if regs[idx] < rank {
        regs[idx] = rank;
    }
}

/// Ertl's improved raw estimator over register-rank counts.
fn estimate(regs: &[u8]) -> u64 {
    let mut counts = [0u32; MAX_RANK as usize + 1];
    for &r in regs {
        counts[r as usize] += 1;
    }
    let m = REGISTERS as f64;
    let mut z = m * tau(1.0 - counts[MAX_RANK as usize] as f64 / m);
    for k in (1..=Q as usize).rev() {
        z = 0.5 * (z + counts[k] as f64);
    }
    z += m * sigma(counts[0] as f64 / m);
    let alpha_inf = 0.5 / std::f64::consts::LN_2;
    (alpha_inf * m * m / z).round() as u64
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let prev = z;
        z += x * y;
        y += y;
        if z == prev {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let prev = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if z == prev {
            return z / 3.0;
        }
    }
}

fn expect_len(body: &[u8], len: usize, what: &str) -> Result<(), String> {
    if body.len() == len {
        Ok(())
    } else {
        Err(format!(
            "invalid hll {what}: expected {len} bytes after the tag, found {}",
            body.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(range: std::ops::Range<u64>) -> HllValue {
        let mut h = HllValue::new();
        for i in range {
            h.insert_hash(HllValue::hash_bytes(&i.to_le_bytes()));
        }
        h
    }

    fn assert_within(n: u64, pct: f64) {
        let est = sketch(0..n).cardinality() as f64;
        let err = (est - n as f64).abs() / n as f64 * 100.0;
        eprintln!("hll n={n}: estimate {est} ({err:.2}% off)");
        assert!(err <= pct, "n={n}: estimate {est} is {err:.2}% off");
    }

    #[test]
    fn accuracy() {
        assert_eq!(sketch(0..10).cardinality(), 10);
        assert_eq!(sketch(0..160).cardinality(), 160);
        for n in [161, 500, 1000, 5000, 30_000, 60_000, 100_000, 1_000_000] {
            assert_within(n, 2.0);
        }
    }

    #[test]
    fn duplicates_do_not_count() {
        let mut h = sketch(0..100);
        for i in 0..100u64 {
            h.insert_hash(HllValue::hash_bytes(&i.to_le_bytes()));
        }
        assert_eq!(h.cardinality(), 100);
    }

    #[test]
    fn round_trips_in_every_form() {
        for n in [0, 1, 160, 161, 2000, 200_000] {
            let h = sketch(0..n);
            let bytes = h.serialize();
            let back = HllValue::deserialize(&bytes).unwrap();
            assert_eq!(back.cardinality(), h.cardinality(), "n={n}");
            assert_eq!(back.serialize(), bytes);
        }
        assert_eq!(HllValue::new().serialize(), vec![0]);
        assert_eq!(sketch(0..3).serialize().len(), 2 + 24);
        assert_eq!(sketch(0..2000).serialize()[0], TAG_SPARSE);
        assert_eq!(sketch(0..200_000).serialize()[0], TAG_DENSE);
        assert!(HllValue::deserialize(&[]).unwrap().is_empty());
    }

    #[test]
    fn malformed_input_is_an_error() {
        let mut dense = vec![TAG_DENSE];
        dense.extend(std::iter::repeat_n(0u8, REGISTERS - 1));
        for bad in [
            &[7u8][..],
            &[0, 0],
            &[1, 2, 0],
            &[1, 200],
            &[2, 1, 0, 0xff, 0xff, 1],
            &[2, 1, 0, 0, 0, 99],
            &dense[..],
        ] {
            assert!(HllValue::deserialize(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn merge_and_union_serialized() {
        let a = sketch(0..100);
        let b = sketch(50..150);
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!(m.cardinality(), 150);
        let big_a = sketch(0..50_000);
        let big_b = sketch(25_000..100_000);
        let parts = [
            a.serialize(),
            Vec::new(),
            big_a.serialize(),
            big_b.serialize(),
            HllValue::new().serialize(),
        ];
        let u = union_serialized(parts.iter().map(|p| p.as_slice())).unwrap();
        let est = HllValue::deserialize(&u).unwrap().cardinality() as f64;
        assert!((est - 100_000.0).abs() / 100_000.0 < 0.02, "{est}");
        // merging dense into explicit and explicit into dense agree
        let mut x = a.clone();
        x.merge(&big_a);
        let mut y = big_a.clone();
        y.merge(&a);
        assert_eq!(x, y);
        assert!(union_serialized([&[9u8][..]]).is_err());
    }
}
