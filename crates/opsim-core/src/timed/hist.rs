//! Latency histogram with log-linear buckets (HDR style): 64 linear sub-buckets per power of
//! two, so any recorded value is reported within 1/64 (1.6%); min, max and mean are exact.

use serde::Serialize;

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    #[serde(rename = "p99.9")]
    pub p999: f64,
    #[serde(rename = "p99.99")]
    pub p9999: f64,
    pub max: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; ((64 - SUB_BITS + 1) as u64 * SUB) as usize], n: 0, sum: 0, min: u64::MAX, max: 0 }
    }
}

#[inline]
fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = e - SUB_BITS;
    (((shift + 1) as u64) * SUB + ((v >> shift) - SUB)) as usize
}

/// The smallest and largest value of a bucket.
fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, i);
    }
    let shift = i / SUB - 1;
    let lo = (SUB + i % SUB) << shift;
    (lo, lo + (1u64 << shift) - 1)
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[bucket(v)] += 1;
        self.n += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.n += o.n;
        self.sum += o.sum;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    /// The value at quantile q (0..=1): the midpoint of the bucket holding it, clamped to
    /// the exact min and max.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bucket_range(i);
                return (lo / 2 + hi / 2 + (lo & hi & 1)).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// Percentiles in microseconds (values recorded in nanoseconds).
    pub fn summary_us(&self) -> LatencySummary {
        let us = |v: u64| v as f64 / 1000.0;
        LatencySummary {
            count: self.n,
            mean: if self.n > 0 { self.sum as f64 / self.n as f64 / 1000.0 } else { 0.0 },
            min: if self.n > 0 { us(self.min) } else { 0.0 },
            p50: us(self.quantile(0.50)),
            p90: us(self.quantile(0.90)),
            p99: us(self.quantile(0.99)),
            p999: us(self.quantile(0.999)),
            p9999: us(self.quantile(0.9999)),
            max: us(self.max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values_in_order() {
        let mut last = 0;
        for v in (0..200_000u64).chain([1 << 40, u64::MAX / 2]) {
            let b = bucket(v);
            assert!(b >= last);
            last = b;
            let (lo, hi) = bucket_range(b);
            assert!(lo <= v && v <= hi, "{v} not in bucket {b} [{lo},{hi}]");
            assert!((hi - lo) as f64 <= (v as f64) / SUB as f64 + 1.0);
        }
    }

    #[test]
    fn quantiles_within_resolution() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        for (q, exact) in [(0.5, 500_000.0), (0.99, 990_000.0), (0.999, 999_000.0)] {
            let got = h.quantile(q) as f64;
            assert!((got - exact).abs() / exact < 1.0 / 64.0, "q{q}: {got} vs {exact}");
        }
        assert_eq!(h.quantile(1.0), 1_000_000);
        assert_eq!(h.summary_us().max, 1000.0);
    }
}
