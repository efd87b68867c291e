//! Timing statistics that live on the real-time path: recording never
//! allocates (a log-linear histogram of fixed size, ~3 % resolution).

use std::fmt;

/// Sub-buckets per power of two: 32 gives a relative resolution of 1/32.
const SUB_BITS: u32 = 5;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = 64 * SUB;

/// A histogram of durations in nanoseconds.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u32; BUCKETS]>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

fn bucket_of(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - SUB_BITS;
    let sub = ((v >> shift) as usize) & (SUB - 1);
    ((shift as usize + 1) << SUB_BITS) | sub
}

/// The smallest value that falls into bucket `b`.
fn bucket_floor(b: usize) -> u64 {
    if b < SUB {
        return b as u64;
    }
    let shift = (b >> SUB_BITS) as u32 - 1;
    let sub = (b & (SUB - 1)) as u64;
    (SUB as u64 | sub) << shift
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Histogram { counts: Box::new([0; BUCKETS]), count: 0, sum: 0, min: u64::MAX, max: 0 }
    }

    /// Records one duration of `ns` nanoseconds (never allocates).
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let b = bucket_of(ns);
        self.counts[b] = self.counts[b].saturating_add(1);
        self.count += 1;
        self.sum += u128::from(ns);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    /// Forgets every sample.
    pub fn reset(&mut self) {
        self.counts.fill(0);
        self.count = 0;
        self.sum = 0;
        self.min = u64::MAX;
        self.max = 0;
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Mean in ns (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }
    /// Smallest sample in ns (0 when empty).
    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }
    /// Largest sample in ns (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The value below which a fraction `q` (0..=1) of the samples fall;
    /// the midpoint of the bucket, clamped to the exact min and max.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                let lo = bucket_floor(b);
                let hi = bucket_floor(b + 1).max(lo + 1);
                return ((lo + hi) / 2).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// Becomes a copy of `other` without allocating (unlike `clone_from`, which may): for a copy
    /// taken on the real-time path.
    pub fn copy_from(&mut self, other: &Histogram) {
        self.counts.copy_from_slice(&other.counts[..]);
        self.count = other.count;
        self.sum = other.sum;
        self.min = other.min;
        self.max = other.max;
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a = a.saturating_add(*b);
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Count, mean, min, median, p99, p99.9 and max.
    pub fn summary(&self) -> Summary {
        Summary {
            count: self.count,
            mean: self.mean(),
            min: self.min(),
            p50: self.quantile(0.5),
            p99: self.quantile(0.99),
            p999: self.quantile(0.999),
            max: self.max,
        }
    }
}

/// A histogram boiled down to what people read.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub count: u64,
    /// Mean (ns).
    pub mean: f64,
    /// Smallest sample (ns).
    pub min: u64,
    /// Median (ns, within the histogram's ~3 % resolution).
    pub p50: u64,
    /// 99th percentile (ns).
    pub p99: u64,
    /// 99.9th percentile (ns).
    pub p999: u64,
    /// Largest sample (ns).
    pub max: u64,
}

/// Formats nanoseconds for people: 850 ns, 12.3 µs, 4.56 ms.
pub fn human_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mean {} p50 {} p99 {} p99.9 {} max {}", human_ns(self.mean), human_ns(self.p50 as f64), human_ns(self.p99 as f64), human_ns(self.p999 as f64), human_ns(self.max as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_tight() {
        let mut last = 0;
        for v in [0u64, 1, 31, 32, 33, 63, 64, 100, 1000, 123_456, 10_000_000, u64::MAX / 2] {
            let b = bucket_of(v);
            assert!(b >= last);
            last = b;
            let lo = bucket_floor(b);
            assert!(lo <= v && v < bucket_floor(b + 1), "{v} in [{lo}, {})", bucket_floor(b + 1));
            assert!((v - lo) as f64 <= v as f64 / SUB as f64 + 1.0);
        }
    }

    #[test]
    fn quantiles_within_resolution() {
        let mut h = Histogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 100);
        }
        assert_eq!(h.count(), 10_000);
        assert_eq!(h.min(), 100);
        assert_eq!(h.max(), 1_000_000);
        let p99 = h.quantile(0.99) as f64;
        assert!((p99 - 990_000.0).abs() / 990_000.0 < 0.04, "{p99}");
        let p50 = h.quantile(0.5) as f64;
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.04, "{p50}");
        assert!((h.mean() - 500_050.0).abs() < 1e-6);
    }
}
