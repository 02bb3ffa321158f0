//! Running summary of a stream of numbers: count, min, max, mean and sample standard deviation,
//! in constant memory.
//!
//! The mean and the sum of squared deviations (M2) follow Welford's update (Welford 1962;
//! Knuth, TAOCP vol. 2, 4.2.2), which avoids the cancellation of the textbook
//! `Σx² − (Σx)²/n`. Two summaries combine with the parallel formula of Chan, Golub and LeVeque
//! (1979), the one fio's `__sum_stat` uses:
//!
//! ```text
//! n = na + nb,  δ = mean_b − mean_a,
//! mean = mean_a + δ·nb/n,  M2 = M2a + M2b + δ²·na·nb/n
//! ```
//!
//! qsim uses it for the per-500 ms bandwidth and IOPS samples behind fio's `bw` and `iops` lines.

use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Deserializer, Serialize};

/// Count, min, max, mean and sample standard deviation of the values pushed so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Running {
    /// Values pushed.
    count: u64,
    /// Smallest value (`+∞` while empty).
    min: f64,
    /// Largest value (`−∞` while empty).
    max: f64,
    /// Mean of the values.
    mean: f64,
    /// Sum of squared deviations from the mean.
    m2: f64,
}

impl Default for Running {
    fn default() -> Self {
        Self::new()
    }
}

impl Running {
    /// An empty summary.
    pub fn new() -> Self {
        Running {
            count: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            mean: 0.0,
            m2: 0.0,
        }
    }

    /// Adds one value.
    pub fn push(&mut self, x: f64) {
        self.count += 1;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// Adds another summary's values, as if each had been pushed here (Chan et al.).
    pub fn merge(&mut self, other: &Running) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        let (n_a, n_b) = (self.count as f64, other.count as f64);
        let n = n_a + n_b;
        let delta = other.mean - self.mean;
        self.mean += delta * n_b / n;
        self.m2 += other.m2 + delta * delta * n_a * n_b / n;
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Values pushed.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether nothing has been pushed.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Smallest value; 0 when empty.
    pub fn min(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.min }
    }

    /// Largest value; 0 when empty.
    pub fn max(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.max }
    }

    /// Mean; 0 when empty.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Sample variance (divides by n − 1); 0 below two values.
    pub fn variance(&self) -> f64 {
        if self.count < 2 {
            0.0
        } else {
            self.m2.max(0.0) / (self.count - 1) as f64
        }
    }

    /// Sample standard deviation (divides by n − 1, as fio does); 0 below two values.
    pub fn stddev(&self) -> f64 {
        self.variance().sqrt()
    }
}

/// Serialises `count`, `min`, `max`, `mean` and `stddev` (zeros when empty, never infinities).
/// A [`Running`]'s whole state ([`super::exact`]), each `f64` as its bit pattern.
#[derive(Serialize, Deserialize)]
struct ExactRunning {
    count: u64,
    min: u64,
    max: u64,
    mean: u64,
    m2: u64,
}

/// Reads the exact form only ([`super::exact`]).
impl<'de> Deserialize<'de> for Running {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let e = ExactRunning::deserialize(d)?;
        Ok(Running {
            count: e.count,
            min: f64::from_bits(e.min),
            max: f64::from_bits(e.max),
            mean: f64::from_bits(e.mean),
            m2: f64::from_bits(e.m2),
        })
    }
}

/// The report form (count, min, max, mean, standard deviation), or inside
/// [`super::exact::with_exact`] the whole state.
impl Serialize for Running {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if super::exact::is_exact() {
            return ExactRunning {
                count: self.count,
                min: self.min.to_bits(),
                max: self.max.to_bits(),
                mean: self.mean.to_bits(),
                m2: self.m2.to_bits(),
            }
            .serialize(serializer);
        }
        let mut s = serializer.serialize_struct("Running", 5)?;
        s.serialize_field("count", &self.count)?;
        s.serialize_field("min", &self.min())?;
        s.serialize_field("max", &self.max())?;
        s.serialize_field("mean", &self.mean())?;
        s.serialize_field("stddev", &self.stddev())?;
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slow, obvious computation: two passes over the stored values.
    fn two_pass(xs: &[f64]) -> (f64, f64, f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let var = if xs.len() < 2 {
            0.0
        } else {
            xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
        };
        let min = xs.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        (min, max, mean, var.sqrt())
    }

    fn values(seed: u64, n: usize) -> Vec<f64> {
        // A linear congruential walk around a large offset: stresses cancellation.
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                1e9 + (state >> 40) as f64 / 1e3
            })
            .collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn matches_two_pass_computation() {
        for n in [1usize, 2, 3, 17, 10_000] {
            let xs = values(n as u64, n);
            let mut r = Running::new();
            xs.iter().for_each(|&x| r.push(x));
            let (min, max, mean, sd) = two_pass(&xs);
            assert_eq!(r.count(), n as u64);
            assert_eq!((r.min(), r.max()), (min, max));
            assert!(close(r.mean(), mean), "n={n}: {} vs {mean}", r.mean());
            assert!((r.stddev() - sd).abs() <= 1e-6 * sd.max(1.0), "n={n}");
        }
    }

    #[test]
    fn merge_matches_pushing_everything() {
        let xs = values(5, 1_000);
        for split in [0usize, 1, 500, 999, 1_000] {
            let (mut a, mut b, mut all) = (Running::new(), Running::new(), Running::new());
            xs[..split].iter().for_each(|&x| a.push(x));
            xs[split..].iter().for_each(|&x| b.push(x));
            xs.iter().for_each(|&x| all.push(x));
            a.merge(&b);
            assert_eq!(a.count(), all.count());
            assert_eq!((a.min(), a.max()), (all.min(), all.max()));
            assert!(close(a.mean(), all.mean()));
            assert!(
                (a.stddev() - all.stddev()).abs() <= 1e-6 * all.stddev(),
                "split {split}"
            );
        }
    }

    #[test]
    fn degenerate_cases() {
        let r = Running::new();
        assert_eq!(
            (r.count(), r.min(), r.max(), r.mean(), r.stddev()),
            (0, 0.0, 0.0, 0.0, 0.0)
        );
        let mut one = Running::new();
        one.push(4.5);
        assert_eq!(
            (one.min(), one.max(), one.mean(), one.stddev()),
            (4.5, 4.5, 4.5, 0.0)
        );
        let mut same = Running::new();
        (0..10).for_each(|_| same.push(7.0));
        assert_eq!(same.stddev(), 0.0);
        let v = serde_json::to_value(Running::new()).unwrap();
        assert_eq!(v["min"], 0.0);
        assert_eq!(v["count"], 0);
    }
}
