//! Doris's t-digest (BE `util/tdigest.h`, after Derrick Burns's merging t-digest): centroids of
//! single-precision means and weights, merged under the arcsine scale function with a given
//! compression, and Doris's quantile interpolation, computed in `f32` as Doris does so results
//! agree to the last digit (`1.6437499523162842`, not `1.64375`).
//!
//! Memory is bounded: at most `8 * compression` centroids wait unprocessed before they are
//! merged into at most about `2 * compression` processed ones. One deviation: centroids with
//! equal means are ordered by weight, heaviest first (Doris sorts them unstably, so its order
//! depends on how rows arrived), which makes the result independent of row order.

use std::f64::consts::PI;

/// A weighted mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Centroid {
    pub mean: f32,
    pub weight: f32,
}

impl Centroid {
    fn add(&mut self, c: &Centroid) {
        if self.weight != 0.0 {
            self.weight += c.weight;
            self.mean += c.weight * (c.mean - self.mean) / self.weight;
        } else {
            *self = *c;
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct TDigest {
    compression: f32,
    min: f32,
    max: f32,
    max_processed: usize,
    max_unprocessed: usize,
    processed_weight: f32,
    unprocessed_weight: f32,
    processed: Vec<Centroid>,
    unprocessed: Vec<Centroid>,
    cumulative: Vec<f32>,
}

impl TDigest {
    pub(crate) fn new(compression: f32) -> TDigest {
        let c = compression.ceil() as usize;
        TDigest {
            compression,
            min: f32::MAX,
            max: f32::MIN,
            max_processed: 2 * c,
            max_unprocessed: 8 * c,
            processed_weight: 0.0,
            unprocessed_weight: 0.0,
            processed: Vec::new(),
            unprocessed: Vec::new(),
            cumulative: Vec::new(),
        }
    }

    /// Adds `x` with weight `w` (NaN values and weights that are not positive are skipped).
    pub(crate) fn add(&mut self, x: f32, w: f32) {
        if x.is_nan() || w.is_nan() || w <= 0.0 {
            return;
        }
        self.unprocessed.push(Centroid { mean: x, weight: w });
        self.unprocessed_weight += w;
        if self.is_dirty() {
            self.process();
        }
    }

    /// Takes in another digest's centroids and extremes.
    pub(crate) fn merge(&mut self, centroids: &[Centroid], min: f32, max: f32) {
        for c in centroids {
            if c.mean.is_nan() || c.weight.is_nan() || c.weight <= 0.0 {
                continue;
            }
            self.unprocessed.push(*c);
            self.unprocessed_weight += c.weight;
            if self.unprocessed.len() > self.max_unprocessed {
                self.process();
            }
        }
        self.min = self.min.min(min);
        self.max = self.max.max(max);
    }

    /// The smallest and largest values added.
    pub(crate) fn extremes(&self) -> (f32, f32) {
        let means = self.centroids().map(|c| c.mean);
        let (lo, hi) = means.fold((self.min, self.max), |(lo, hi), m| (lo.min(m), hi.max(m)));
        (lo, hi)
    }

    /// Every centroid, processed or not (what a partial state carries).
    pub(crate) fn centroids(&self) -> impl Iterator<Item = &Centroid> {
        self.processed.iter().chain(&self.unprocessed)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.processed.is_empty() && self.unprocessed.is_empty()
    }

    fn is_dirty(&self) -> bool {
        self.processed.len() > self.max_processed || self.unprocessed.len() > self.max_unprocessed
    }

    /// The quantile `q` (in [0, 1]); None without data.
    pub(crate) fn quantile(&mut self, q: f32) -> Option<f32> {
        if !self.unprocessed.is_empty() || self.is_dirty() {
            self.process();
        }
        self.quantile_processed(q)
    }

    fn mean(&self, i: usize) -> f32 {
        self.processed[i].mean
    }

    fn weight(&self, i: usize) -> f32 {
        self.processed[i].weight
    }

    fn quantile_processed(&self, q: f32) -> Option<f32> {
        if !(0.0..=1.0).contains(&q) {
            return None;
        }
        let n = self.processed.len();
        match n {
            0 => return None,
            1 => return Some(self.mean(0)),
            _ => {}
        }
        let index = q * self.processed_weight;
        if f64::from(index) <= f64::from(self.weight(0)) / 2.0 {
            let v = f64::from(self.min)
                + 2.0 * f64::from(index) / f64::from(self.weight(0))
                    * f64::from(self.mean(0) - self.min);
            return Some(v as f32);
        }
        let i = self.cumulative.partition_point(|&c| c < index);
        if i + 1 < self.cumulative.len() {
            let z1 = index - self.cumulative[i - 1];
            let z2 = self.cumulative[i] - index;
            return Some(weighted_average(self.mean(i - 1), z2, self.mean(i), z1));
        }
        let last = self.weight(n - 1);
        let z1 =
            (f64::from(index) - f64::from(self.processed_weight) - f64::from(last) / 2.0) as f32;
        let z2 = (f64::from(last) / 2.0 - f64::from(z1)) as f32;
        Some(weighted_average(self.mean(n - 1), z1, self.max, z2))
    }

    fn update_cumulative(&mut self) {
        self.cumulative.clear();
        let mut previous = 0.0f32;
        for c in &self.processed {
            let half = (f64::from(c.weight) / 2.0) as f32;
            self.cumulative.push(previous + half);
            previous += c.weight;
        }
        self.cumulative.push(previous);
    }

    /// Merges the unprocessed centroids into the processed ones.
    fn process(&mut self) {
        let mut all = std::mem::take(&mut self.unprocessed);
        all.append(&mut self.processed);
        all.sort_by(|a, b| {
            a.mean
                .total_cmp(&b.mean)
                .then_with(|| b.weight.total_cmp(&a.weight))
        });
        self.processed_weight += self.unprocessed_weight;
        self.unprocessed_weight = 0.0;
        let Some(first) = all.first().copied() else {
            self.update_cumulative();
            return;
        };
        self.processed.push(first);
        let mut w_so_far = first.weight;
        let mut w_limit = self.processed_weight * self.integrated_q(1.0);
        for c in &all[1..] {
            let projected = w_so_far + c.weight;
            if projected <= w_limit {
                w_so_far = projected;
                if let Some(last) = self.processed.last_mut() {
                    last.add(c);
                }
            } else {
                let k1 = self.integrated_location(w_so_far / self.processed_weight);
                w_limit = self.processed_weight * self.integrated_q((f64::from(k1) + 1.0) as f32);
                w_so_far += c.weight;
                self.processed.push(*c);
            }
        }
        self.min = self.min.min(self.processed[0].mean);
        if let Some(last) = self.processed.last() {
            self.max = self.max.max(last.mean);
        }
        self.update_cumulative();
    }

    fn integrated_location(&self, q: f32) -> f32 {
        let c = f64::from(self.compression);
        (c * ((2.0 * f64::from(q) - 1.0).asin() + PI / 2.0) / PI) as f32
    }

    fn integrated_q(&self, k: f32) -> f32 {
        let c = f64::from(self.compression);
        (((f64::from(k.min(self.compression)) * PI / c - PI / 2.0).sin() + 1.0) / 2.0) as f32
    }
}

/// The average of `x1` and `x2` weighted `w1` and `w2`, kept between them.
fn weighted_average(x1: f32, w1: f32, x2: f32, w2: f32) -> f32 {
    let (x1, w1, x2, w2) = if x1 <= x2 {
        (x1, w1, x2, w2)
    } else {
        (x2, w2, x1, w1)
    };
    let x = (x1 * w1 + x2 * w2) / (w1 + w2);
    x1.max(x.min(x2))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Doris's regression case: values with weights, and the quantiles it gives.
    #[test]
    fn weighted_quantiles_as_doris() {
        let mut d = TDigest::new(10000.0);
        for (x, w) in [(1, 10), (2, 6), (3, 4), (4, 2), (5, 2), (6, 1), (5, 4)] {
            d.add(x as f32, w as f32);
        }
        let q = |d: &mut TDigest, q: f32| f64::from(d.quantile(q).unwrap());
        assert_eq!(q(&mut d, 0.1), 1.0);
        assert_eq!(q(&mut d, 0.35), 1.6437499523162842);
        assert_eq!(q(&mut d, 0.55), 2.5900001525878906);
        assert_eq!(q(&mut d, 0.78), 4.539999485015869);
        assert_eq!(q(&mut d, 0.99), 6.0);
        assert_eq!(d.quantile(1.5), None);
        assert_eq!(TDigest::new(100.0).quantile(0.5), None);
    }

    #[test]
    fn many_values_stay_bounded_and_close() {
        let mut d = TDigest::new(100.0);
        for i in 0..100_000 {
            d.add((i % 1000) as f32, 1.0);
        }
        let median = d.quantile(0.5).unwrap();
        assert!((median - 500.0).abs() < 10.0, "{median}");
        assert!(d.centroids().count() <= 1000, "{}", d.centroids().count());
    }
}
