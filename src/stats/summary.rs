//! Summaries of independent replications: mean, sample standard deviation and the Student-t
//! confidence interval of the mean.
//!
//! Each replication of a simulation gives one number (say its mean latency). Replications use
//! independent random streams, so these numbers are independent and identically distributed,
//! and for long enough runs nearly normal (each is an average over many customers). The
//! interval `mean ± t_{0.975, n−1} · s / √n` then covers the true mean 95 % of the time
//! (Law, *Simulation Modeling and Analysis*, 5th ed., §9.4.1). The Student-t quantile comes from
//! `statrs` rather than a hand-written table so any `n` works.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Arithmetic mean; NaN for an empty slice.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// Sample standard deviation (divides by `n − 1`); 0 for a single value, NaN for none.
pub fn sample_stddev(values: &[f64]) -> f64 {
    match values.len() {
        0 => f64::NAN,
        1 => 0.0,
        n => {
            let m = mean(values);
            let ss: f64 = values.iter().map(|x| (x - m) * (x - m)).sum();
            (ss / (n - 1) as f64).sqrt()
        }
    }
}

/// The two-sided 95 % Student-t quantile `t_{0.975, df}`; `df ≥ 1`.
pub fn t_975(df: usize) -> f64 {
    assert!(df >= 1, "a t quantile needs at least one degree of freedom");
    StudentsT::new(0.0, 1.0, df as f64)
        .expect("location 0, scale 1 and df >= 1 are valid")
        .inverse_cdf(0.975)
}

/// Half-width of the 95 % confidence interval of the mean, `t_{0.975, n−1} · s / √n`.
///
/// With one value there is no estimate of the spread: the half-width is infinite, so no
/// comparison against it can pass. Identical values give 0.
pub fn ci95_half_width(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return f64::INFINITY;
    }
    t_975(n - 1) * sample_stddev(values) / (n as f64).sqrt()
}

/// Mean and 95 % confidence half-width of replication values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Mean of the replication values.
    pub mean: f64,
    /// Half-width of the 95 % confidence interval (infinite below two values).
    pub half_width: f64,
    /// Number of replication values.
    pub n: usize,
}

impl Estimate {
    /// Summarises replication values.
    pub fn of(values: &[f64]) -> Estimate {
        Estimate {
            mean: mean(values),
            half_width: ci95_half_width(values),
            n: values.len(),
        }
    }

    /// Whether `x` lies inside the interval (ends included).
    pub fn contains(&self, x: f64) -> bool {
        (x - self.mean).abs() <= self.half_width
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_table() {
        // Student-t table, two-sided 95 %: df 1 → 12.706, df 9 → 2.262, df 29 → 2.045.
        assert!((t_975(9) - 2.262_157).abs() < 1e-6, "{}", t_975(9));
        assert!((t_975(1) - 12.706_205).abs() < 1e-5, "{}", t_975(1));
        assert!((t_975(29) - 2.045_230).abs() < 1e-5, "{}", t_975(29));
        // Large df tends to the normal 1.959964.
        assert!((t_975(100_000) - 1.959_964).abs() < 1e-4);
    }

    #[test]
    fn mean_stddev_and_interval_by_hand() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum 32, s = √(32/7) = 2.13809.
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), 5.0);
        assert!((sample_stddev(&xs) - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        // t_{0.975, 7} = 2.364624; half-width = 2.364624 · 2.13809 / √8 = 1.787494.
        let e = Estimate::of(&xs);
        assert!((e.half_width - 1.787_494).abs() < 1e-5, "{}", e.half_width);
        assert!(e.contains(6.7) && !e.contains(6.8) && e.contains(3.3));
        assert_eq!(e.n, 8);
    }

    #[test]
    fn one_value_has_no_interval() {
        let e = Estimate::of(&[3.0]);
        assert_eq!(e.mean, 3.0);
        assert_eq!(sample_stddev(&[3.0]), 0.0);
        assert!(e.half_width.is_infinite());
        assert!(e.contains(1e9), "an infinite interval contains everything");
    }

    #[test]
    fn identical_values_have_zero_width() {
        let e = Estimate::of(&[0.25; 10]);
        assert_eq!(e.mean, 0.25);
        assert_eq!(e.half_width, 0.0);
        assert!(e.contains(0.25) && !e.contains(0.250_000_1));
    }

    #[test]
    fn empty_input_is_nan() {
        assert!(mean(&[]).is_nan());
        assert!(sample_stddev(&[]).is_nan());
        assert!(ci95_half_width(&[]).is_infinite());
    }
}
