//! Doris's QUANTILE_STATE: the values of a group kept for percentiles, exactly while there
//! are at most [`EXPLICIT_LIMIT`] of them, then as a t-digest of at most `compression`
//! centroids (DataFusion's [`TDigest`]). `quantile_percent(state, p)` of the exact values is
//! the linear interpolation at `p * (n - 1)` of the sorted values (as Doris's `percentile`);
//! of a digest, its estimate. Merging keeps the exact values while their count allows.
//!
//! Serialized (the column's bytes): a kind byte — 0 no values, 1 exact, 2 digest — then the
//! compression (u32, little-endian), then for exact values each `f64`, for a digest its sum,
//! count, max and min and each centroid's mean and weight (`f64`s). Bytes of another form
//! are an error, never a panic.

use datafusion_functions_aggregate_common::tdigest::{Centroid, TDigest};

/// Values kept exactly before a state becomes a digest (Doris's threshold).
pub const EXPLICIT_LIMIT: usize = 2048;
/// Doris's default and allowed compressions (`to_quantile_state(x, c)` outside this range
/// takes the default).
pub const DEFAULT_COMPRESSION: u32 = 2048;
const COMPRESSION_RANGE: std::ops::RangeInclusive<f64> = 2048.0..=10000.0;

const EMPTY: u8 = 0;
const EXACT: u8 = 1;
const DIGEST: u8 = 2;

/// A quantile state (see the module doc).
#[derive(Debug, Clone)]
pub struct QuantileState {
    compression: u32,
    values: Values,
}

#[derive(Debug, Clone)]
enum Values {
    Exact(Vec<f64>),
    Digest(TDigest),
}

impl QuantileState {
    /// A state of no values.
    pub fn empty(compression: u32) -> QuantileState {
        QuantileState {
            compression,
            values: Values::Exact(Vec::new()),
        }
    }

    /// The compression `to_quantile_state(x, c)` uses for `c` (Doris: the default outside
    /// 2048..=10000).
    pub fn compression_of(requested: Option<f64>) -> u32 {
        match requested {
            Some(c) if COMPRESSION_RANGE.contains(&c) => c as u32,
            _ => DEFAULT_COMPRESSION,
        }
    }

    /// A state of one value.
    pub fn of(value: f64, compression: u32) -> QuantileState {
        QuantileState {
            compression,
            values: Values::Exact(vec![value]),
        }
    }

    /// Adds another state's values (the larger compression is kept).
    pub fn merge(&mut self, other: &QuantileState) {
        self.compression = self.compression.max(other.compression);
        let values = std::mem::replace(&mut self.values, Values::Exact(Vec::new()));
        self.values = match (values, &other.values) {
            (Values::Exact(mut mine), Values::Exact(theirs)) => {
                mine.extend_from_slice(theirs);
                if mine.len() <= EXPLICIT_LIMIT {
                    Values::Exact(mine)
                } else {
                    Values::Digest(self.digest_of(mine))
                }
            }
            (Values::Exact(mine), Values::Digest(theirs)) => {
                Values::Digest(theirs.merge_unsorted_f64(mine))
            }
            (Values::Digest(mine), Values::Exact(theirs)) => {
                Values::Digest(mine.merge_unsorted_f64(theirs.clone()))
            }
            (Values::Digest(mine), Values::Digest(theirs)) => {
                Values::Digest(TDigest::merge_digests([&mine, theirs]))
            }
        };
    }

    fn digest_of(&self, values: Vec<f64>) -> TDigest {
        TDigest::new(self.compression as usize).merge_unsorted_f64(values)
    }

    /// The value at fraction `p` (0..=1) of the values; `None` without values.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        match &self.values {
            Values::Exact(values) if values.is_empty() => None,
            Values::Exact(values) => {
                let mut sorted = values.clone();
                sorted.sort_by(f64::total_cmp);
                let at = p.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
                let below = at.floor() as usize;
                let above = (below + 1).min(sorted.len() - 1);
                let fraction = at - below as f64;
                Some(sorted[below] + (sorted[above] - sorted[below]) * fraction)
            }
            Values::Digest(digest) if digest.count() == 0.0 => None,
            Values::Digest(digest) => Some(digest.estimate_quantile(p.clamp(0.0, 1.0))),
        }
    }

    /// About how many bytes the state holds in memory.
    pub fn memory_size(&self) -> usize {
        std::mem::size_of::<QuantileState>()
            + match &self.values {
                Values::Exact(values) => values.capacity() * 8,
                Values::Digest(digest) => digest.centroids().len() * 16,
            }
    }

    /// The state's bytes (see the module doc).
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let put = |out: &mut Vec<u8>, v: f64| out.extend_from_slice(&v.to_le_bytes());
        match &self.values {
            Values::Exact(values) => {
                out.push(if values.is_empty() { EMPTY } else { EXACT });
                out.extend_from_slice(&self.compression.to_le_bytes());
                for v in values {
                    put(&mut out, *v);
                }
            }
            Values::Digest(digest) => {
                out.push(DIGEST);
                out.extend_from_slice(&self.compression.to_le_bytes());
                for v in [digest.sum(), digest.count(), digest.max(), digest.min()] {
                    put(&mut out, v);
                }
                for c in digest.centroids() {
                    put(&mut out, c.mean());
                    put(&mut out, c.weight());
                }
            }
        }
        out
    }

    /// Reads a state's bytes (see the module doc).
    pub fn deserialize(bytes: &[u8]) -> Result<QuantileState, String> {
        let bad = || "not a QUANTILE_STATE value".to_string();
        let (&kind, rest) = bytes.split_first().ok_or_else(bad)?;
        if rest.len() < 4 || !(rest.len() - 4).is_multiple_of(8) {
            return Err(bad());
        }
        let compression = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let numbers: Vec<f64> = rest[4..]
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        let values = match kind {
            EMPTY if numbers.is_empty() => Values::Exact(numbers),
            EXACT if !numbers.is_empty() => Values::Exact(numbers),
            DIGEST if numbers.len() >= 4 && numbers.len().is_multiple_of(2) => {
                let centroids = numbers[4..]
                    .chunks_exact(2)
                    .map(|c| Centroid::new(c[0], c[1]))
                    .collect();
                let digest = TDigest::try_from_parts(
                    compression as usize,
                    numbers[0],
                    numbers[1],
                    numbers[2],
                    numbers[3],
                    centroids,
                )
                .map_err(|e| e.to_string())?;
                Values::Digest(digest)
            }
            _ => return Err(bad()),
        };
        Ok(QuantileState {
            compression,
            values,
        })
    }
}

/// Union of serialized states (Aggregate-key QUANTILE_UNION merges and `quantile_union`).
pub fn union_serialized<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Result<Vec<u8>, String> {
    let mut acc = QuantileState::empty(DEFAULT_COMPRESSION);
    for v in values {
        acc.merge(&QuantileState::deserialize(v)?);
    }
    Ok(acc.serialize())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(values: &[f64]) -> QuantileState {
        let mut s = QuantileState::empty(DEFAULT_COMPRESSION);
        for v in values {
            s.merge(&QuantileState::of(*v, DEFAULT_COMPRESSION));
        }
        s
    }

    #[test]
    fn exact_values_interpolate_as_doris_does() {
        let mut s = state(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(s.percentile(0.0), Some(1.0));
        assert_eq!(s.percentile(0.5), Some(3.0));
        assert_eq!(s.percentile(1.0), Some(5.0));
        s.merge(&state(&[6.0, 7.0, 8.0, 9.0, 10.0]));
        assert_eq!(s.percentile(0.5), Some(5.5));
        assert_eq!(QuantileState::empty(2048).percentile(0.5), None);
    }

    #[test]
    fn many_values_become_a_digest_that_round_trips() {
        let values: Vec<f64> = (0..10_000).map(f64::from).collect();
        let s = state(&values);
        assert!(matches!(s.values, Values::Digest(_)));
        let back = QuantileState::deserialize(&s.serialize()).unwrap();
        let median = back.percentile(0.5).unwrap();
        assert!((median - 4999.5).abs() < 50.0, "{median}");
        assert_eq!(back.percentile(0.0), Some(0.0));
        assert_eq!(back.percentile(1.0), Some(9999.0));
    }

    #[test]
    fn other_bytes_are_errors() {
        for bytes in [&b""[..], &[1], &[1, 0, 8, 0, 0, 1], &[9, 0, 8, 0, 0]] {
            assert!(QuantileState::deserialize(bytes).is_err(), "{bytes:?}");
        }
        let exact = state(&[2.0, 1.0]).serialize();
        assert_eq!(
            QuantileState::deserialize(&exact).unwrap().percentile(1.0),
            Some(2.0)
        );
    }
}
