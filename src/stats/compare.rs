//! Comparisons across replications: summaries, paired differences and ratios against a
//! reference with 95 % confidence intervals, a better / worse / within-noise verdict, and the
//! precision test and growth policy of sequential replication.
//!
//! Replication `i` of the candidate and replication `i` of the reference share their random
//! streams (common random numbers), so the two samples are paired: the analysis works on the
//! per-replication differences `d_i = c_i − r_i`, whose variance is `Var c + Var r − 2 Cov(c, r)`
//! and shrinks with the positive correlation the shared streams induce (Law, *Simulation
//! Modeling and Analysis*, 5th ed., §10.2, the paired-t confidence interval; §11.2 on common
//! random numbers).
//!
//! The Student-t quantile and the mean / standard deviation / half-width helpers are
//! [`super::summary`]'s; this module only builds on them. Every function here is pure and
//! never panics on bad input: functions that need paired or at least two values return
//! [`Result`] with a [`CompareError`].

use serde::Serialize;

use super::summary::{Estimate, ci95_half_width, mean, sample_stddev, t_975};

/// Why a comparison could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    /// The candidate and reference samples have different lengths, so they cannot be paired.
    #[error("cannot pair {candidate} candidate values with {reference} reference values")]
    LengthMismatch {
        /// Number of candidate values.
        candidate: usize,
        /// Number of reference values.
        reference: usize,
    },
    /// Fewer than two pairs: no estimate of the spread, so no interval.
    #[error("a confidence interval needs at least 2 replications, got {0}")]
    TooFew(usize),
    /// A value is NaN or infinite.
    #[error("replication values must be finite")]
    NonFinite,
    /// The reference mean is zero, so a ratio to it is undefined.
    #[error("the reference mean is zero: no ratio")]
    ZeroReference,
}

/// Summary of one metric over independent replications.
///
/// Built on [`super::summary`]'s helpers; [`Summary::estimate`] gives the narrower
/// [`Estimate`] that `validate` uses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of replications.
    pub n: usize,
    /// Mean over replications (NaN when `n == 0`).
    pub mean: f64,
    /// Sample standard deviation (divides by `n − 1`); 0 when `n == 1`, NaN when `n == 0`.
    pub stddev: f64,
    /// Smallest value (NaN when `n == 0`).
    pub min: f64,
    /// Largest value (NaN when `n == 0`).
    pub max: f64,
    /// Half-width of the 95 % Student-t confidence interval of the mean,
    /// `t_{0.975, n−1} · stddev / √n`. With fewer than two replications the spread is unknown
    /// and the half-width is `f64::INFINITY` (never NaN): no precision or significance test can
    /// pass against it. serde_json writes it as `null`.
    pub ci95_half: f64,
}

impl Summary {
    /// Summarises replication values.
    ///
    /// One value gives `stddev` 0 and an infinite `ci95_half` ("unknown"); an empty slice gives
    /// NaN mean, stddev, min and max and an infinite half-width.
    pub fn of(values: &[f64]) -> Summary {
        let (min, max) = if values.is_empty() {
            (f64::NAN, f64::NAN)
        } else {
            values
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                    (lo.min(x), hi.max(x))
                })
        };
        Summary {
            n: values.len(),
            mean: mean(values),
            stddev: sample_stddev(values),
            min,
            max,
            ci95_half: ci95_half_width(values),
        }
    }

    /// The mean with its 95 % interval, as [`summary::Estimate`](Estimate).
    pub fn estimate(&self) -> Estimate {
        Estimate {
            mean: self.mean,
            half_width: self.ci95_half,
            n: self.n,
        }
    }

    /// The 95 % confidence interval of the mean (infinite ends below two replications).
    pub fn interval(&self) -> Interval {
        Interval::around(self.mean, self.ci95_half)
    }
}

/// A point estimate with a two-sided 95 % confidence interval `[low, high]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Interval {
    /// Point estimate (a mean difference or a ratio of means).
    pub estimate: f64,
    /// Lower end of the interval.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
}

impl Interval {
    /// The symmetric interval `estimate ± half_width`.
    pub fn around(estimate: f64, half_width: f64) -> Interval {
        Interval {
            estimate,
            low: estimate - half_width,
            high: estimate + half_width,
        }
    }

    /// Half the width, `(high − low) / 2`: the "± 0.11" of hyperfine's "2.52 ± 0.11 × lower".
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }

    /// Whether `x` lies in `[low, high]` (ends included); false if any end is NaN.
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// Whether the interval includes 0 ("no change" for a difference). A zero-width interval
    /// at 0, from identical samples, contains it.
    pub fn contains_zero(&self) -> bool {
        self.contains(0.0)
    }

    /// The interval moved by `by`: `ratio(..)?.shifted(-1.0)` turns "ratio 1" (no change)
    /// into 0 so that [`verdict`] applies to ratios too.
    pub fn shifted(&self, by: f64) -> Interval {
        Interval {
            estimate: self.estimate + by,
            low: self.low + by,
            high: self.high + by,
        }
    }
}

/// Checks that two samples can be paired: same length, at least two, all finite.
fn check_pairs(candidate: &[f64], reference: &[f64]) -> Result<usize, CompareError> {
    if candidate.len() != reference.len() {
        return Err(CompareError::LengthMismatch {
            candidate: candidate.len(),
            reference: reference.len(),
        });
    }
    if candidate.len() < 2 {
        return Err(CompareError::TooFew(candidate.len()));
    }
    if !candidate.iter().chain(reference).all(|x| x.is_finite()) {
        return Err(CompareError::NonFinite);
    }
    Ok(candidate.len())
}

/// Paired difference `candidate − reference` under common random numbers.
///
/// With `d_i = c_i − r_i`, the estimate is `d̄` and the interval
/// `d̄ ± t_{0.975, n−1} · s_d / √n` (paired-t, Law §10.2.1). Errors when the lengths differ,
/// when there are fewer than two pairs, or when a value is not finite.
pub fn paired_diff(candidate: &[f64], reference: &[f64]) -> Result<Interval, CompareError> {
    check_pairs(candidate, reference)?;
    let diffs: Vec<f64> = candidate
        .iter()
        .zip(reference)
        .map(|(c, r)| c - r)
        .collect();
    Ok(Interval::around(mean(&diffs), ci95_half_width(&diffs)))
}

/// Ratio of means `mean(candidate) / mean(reference)` with a delta-method interval on the
/// paired samples.
///
/// With `R = c̄ / r̄`, sample variances `s_c²`, `s_r²` and sample covariance
/// `s_cr = Σ (c_i − c̄)(r_i − r̄) / (n − 1)`, the first-order (delta-method) variance of `R` is
///
/// ```text
/// Var(R) ≈ (1/n) · (s_c² − 2·R·s_cr + R²·s_r²) / r̄²
/// ```
///
/// computed as `(1/n) · Σ (c_i − R·r_i)² / (n − 1) / r̄²`, the same quantity (the bracket is the
/// sample variance of the residuals `c_i − R·r_i`, whose mean is 0) without cancellation,
/// and the interval is `R ± t_{0.975, n−1} · √Var(R)` (the classical ratio-estimator variance,
/// Cochran, *Sampling Techniques*, 3rd ed., §6.4, with t in place of z for few replications).
/// Positive correlation from common random numbers narrows it. For "2.52 × lower" (reference
/// over candidate) call `ratio(reference, candidate)`; [`Interval::half_width`] gives the "±".
///
/// Errors as [`paired_diff`], and with [`CompareError::ZeroReference`] when `r̄ = 0`.
pub fn ratio(candidate: &[f64], reference: &[f64]) -> Result<Interval, CompareError> {
    let n = check_pairs(candidate, reference)?;
    let (mc, mr) = (mean(candidate), mean(reference));
    if mr == 0.0 {
        return Err(CompareError::ZeroReference);
    }
    let r = mc / mr;
    // s_c² − 2R·s_cr + R²·s_r² is the sample variance of the residuals e_i = c_i − R·r_i (whose
    // mean c̄ − R·r̄ is 0); summing their squares avoids the cancellation of the three-term
    // form, so identical or exactly proportional samples give exactly 0.
    let ss: f64 = candidate
        .iter()
        .zip(reference)
        .map(|(c, x)| (c - r * x) * (c - r * x))
        .sum();
    let var = ss / (n - 1) as f64 / n as f64 / (mr * mr);
    Ok(Interval::around(r, t_975(n - 1) * var.sqrt()))
}

/// Whether a candidate beats the reference, loses to it, or cannot be told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval lies on the good side of 0.
    Better,
    /// The whole interval lies on the bad side of 0.
    Worse,
    /// The interval includes 0 (or is undefined): the difference may be noise.
    WithinNoise,
}

/// Verdict on a difference interval `candidate − reference` (from [`paired_diff`]; for a
/// ratio pass `ratio.shifted(-1.0)`).
///
/// [`Verdict::WithinNoise`] when the interval contains 0, including the zero-width interval
/// of identical samples, and when an end is NaN (nothing can be claimed). Otherwise the sign
/// decides: a negative difference is [`Verdict::Better`] when `lower_is_better` (latencies,
/// failures) and [`Verdict::Worse`] when higher is better (IOPS, bandwidth).
pub fn verdict(diff: &Interval, lower_is_better: bool) -> Verdict {
    if diff.contains_zero() || diff.low.is_nan() || diff.high.is_nan() {
        return Verdict::WithinNoise;
    }
    let candidate_lower = diff.high < 0.0;
    if candidate_lower == lower_is_better {
        Verdict::Better
    } else {
        Verdict::Worse
    }
}

/// Whether a summary is precise enough: `ci95_half ≤ target_rel · |mean|`.
///
/// Fewer than two replications (infinite half-width) never pass; a NaN mean or target never
/// passes. All-identical values pass at any target ≥ 0, zeros included (a metric that is 0 in
/// every replication, such as allocation failures, is known exactly).
///
/// Stopping when the interval first looks narrow enough slightly undercovers; Law (§9.4.1)
/// compares against `γ / (1 + γ)` instead of `γ` for an actual relative error `γ`, which a
/// caller can pass as `target_rel`.
pub fn precise_enough(s: &Summary, target_rel: f64) -> bool {
    s.ci95_half <= target_rel * s.mean.abs()
}

/// How many replications to run next in a sequential procedure, or `None` at the cap.
///
/// Policy: grow by 50 % (rounded up) and by at least 2, never above `cap`:
/// `min(cap, current + max(2, ⌈current / 2⌉))`. The half-width shrinks as `1/√n`, so each
/// round narrows it by about `√1.5 ≈ 1.22`; geometric growth needs only `O(log cap)` rounds
/// (each one a batch of parallel runs) while overshooting the needed count by at most half.
/// The "+2" gets from 0 or 1 replications to an interval quickly. Already at or above the cap
/// returns `None`.
pub fn next_replications(current: usize, cap: usize) -> Option<usize> {
    if current >= cap {
        return None;
    }
    let step = current.div_ceil(2).max(2);
    Some(current.saturating_add(step).min(cap))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantiles_match_the_table() {
        // Two-sided 95 % Student-t table (Law, Table T.1): df 1 → 12.706, 4 → 2.776,
        // 9 → 2.262, 29 → 2.045.
        for (df, table) in [(1, 12.706), (4, 2.776), (9, 2.262), (29, 2.045)] {
            assert!(close(t_975(df), table, 1e-3), "df {df}: {}", t_975(df));
        }
    }

    #[test]
    fn summary_by_hand() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, s = √(32/7) = 2.13809, t_{0.975,7} = 2.364624,
        // half-width 2.364624 · 2.13809 / √8 = 1.787494.
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!((s.n, s.mean, s.min, s.max), (8, 5.0, 2.0, 9.0));
        assert!(close(s.stddev, 2.138_090, 1e-6), "{}", s.stddev);
        assert!(close(s.ci95_half, 1.787_494, 1e-5), "{}", s.ci95_half);
        assert_eq!(s.estimate().half_width, s.ci95_half);
        assert!(close(s.interval().half_width(), 1.787_494, 1e-5));
    }

    #[test]
    fn summary_of_one_has_unknown_interval() {
        let s = Summary::of(&[3.5]);
        assert_eq!(
            (s.n, s.mean, s.stddev, s.min, s.max),
            (1, 3.5, 0.0, 3.5, 3.5)
        );
        assert_eq!(s.ci95_half, f64::INFINITY);
        assert!(!precise_enough(&s, 1e9));
        let empty = Summary::of(&[]);
        assert_eq!(empty.n, 0);
        assert!(empty.mean.is_nan() && empty.min.is_nan() && empty.max.is_nan());
        assert_eq!(empty.ci95_half, f64::INFINITY);
    }

    #[test]
    fn paired_difference_by_hand() {
        // Differences 1, 2, 3, 4, 5: mean 3, s = √2.5 = 1.581139, t_{0.975,4} = 2.776445,
        // half-width 2.776445 · 1.581139 / √5 = 1.963243.
        let reference = [10.0, 20.0, 30.0, 40.0, 50.0];
        let candidate = [11.0, 22.0, 33.0, 44.0, 55.0];
        let d = paired_diff(&candidate, &reference).unwrap();
        assert!(close(d.estimate, 3.0, 1e-12));
        assert!(close(d.half_width(), 1.963_243, 1e-5), "{}", d.half_width());
        assert!(close(d.low, 1.036_757, 1e-5) && close(d.high, 4.963_243, 1e-5));
        assert!(!d.contains_zero());
        // The unpaired reading would drown the shift in the 10..50 spread between replications.
        assert!(Summary::of(&reference).ci95_half > 10.0);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert_eq!(
            paired_diff(&[1.0, 2.0, 3.0], &[1.0, 2.0]),
            Err(CompareError::LengthMismatch {
                candidate: 3,
                reference: 2
            })
        );
        assert_eq!(
            ratio(&[1.0], &[1.0, 2.0]),
            Err(CompareError::LengthMismatch {
                candidate: 1,
                reference: 2
            })
        );
        assert_eq!(paired_diff(&[1.0], &[2.0]), Err(CompareError::TooFew(1)));
        assert_eq!(ratio(&[], &[]), Err(CompareError::TooFew(0)));
        assert_eq!(
            paired_diff(&[1.0, f64::NAN], &[1.0, 2.0]),
            Err(CompareError::NonFinite)
        );
        assert_eq!(
            ratio(&[1.0, 2.0], &[1.0, f64::INFINITY]),
            Err(CompareError::NonFinite)
        );
        assert_eq!(
            ratio(&[1.0, 2.0], &[-1.0, 1.0]),
            Err(CompareError::ZeroReference)
        );
        assert!(CompareError::TooFew(1).to_string().contains("at least 2"));
    }

    #[test]
    fn ratio_by_hand() {
        // c = 10, 12, 14; r = 5, 5, 8. c̄ = 12, r̄ = 6, R = 2.
        // s_c² = (4 + 0 + 4)/2 = 4; s_r² = (1 + 1 + 4)/2 = 3;
        // s_cr = ((−2)(−1) + 0·(−1) + 2·2)/2 = 3.
        // Var(R) ≈ (1/3)(4 − 2·2·3 + 4·3)/36 = 4/108 = 0.037037, se = 0.192450;
        // t_{0.975,2} = 4.302653, half-width = 4.302653 · 0.192450 = 0.828046.
        let q = ratio(&[10.0, 12.0, 14.0], &[5.0, 5.0, 8.0]).unwrap();
        assert!(close(q.estimate, 2.0, 1e-12));
        assert!(close(q.half_width(), 0.828_046, 1e-5), "{}", q.half_width());
        assert!(close(q.low, 1.171_954, 1e-5) && close(q.high, 2.828_046, 1e-5));
        // "× lower" reads the other way round: reference over candidate, R = 0.5.
        assert!(close(
            ratio(&[5.0, 5.0, 8.0], &[10.0, 12.0, 14.0])
                .unwrap()
                .estimate,
            0.5,
            1e-12
        ));
    }

    #[test]
    fn proportional_samples_give_an_exact_ratio() {
        // c = 2.5 r exactly: s_c² = 6.25 s_r², s_cr = 2.5 s_r², so the variance term
        // s_r²(6.25 − 2·2.5·2.5 + 6.25) vanishes.
        let r = [1.0, 2.0, 3.0, 7.0];
        let c: Vec<f64> = r.iter().map(|x| 2.5 * x).collect();
        let q = ratio(&c, &r).unwrap();
        assert!(close(q.estimate, 2.5, 1e-12));
        assert!(q.half_width() < 1e-12, "{}", q.half_width());
        assert_eq!(verdict(&q.shifted(-1.0), false), Verdict::Better);
        assert_eq!(verdict(&q.shifted(-1.0), true), Verdict::Worse);
    }

    #[test]
    fn verdicts() {
        let reference = [10.0, 20.0, 30.0, 40.0, 50.0];
        // Candidate higher by 1..5: interval [1.04, 4.96].
        let higher = paired_diff(&[11.0, 22.0, 33.0, 44.0, 55.0], &reference).unwrap();
        assert_eq!(verdict(&higher, true), Verdict::Worse, "higher latency");
        assert_eq!(verdict(&higher, false), Verdict::Better, "higher IOPS");
        // Candidate lower by 1..5: interval [−4.96, −1.04].
        let lower = paired_diff(&[9.0, 18.0, 27.0, 36.0, 45.0], &reference).unwrap();
        assert_eq!(verdict(&lower, true), Verdict::Better);
        assert_eq!(verdict(&lower, false), Verdict::Worse);
        // Differences 1, −1, 3: mean 1, s = 2, half-width 4.302653 · 2/√3 = 4.968 ⊃ 0.
        let noisy = paired_diff(&[11.0, 19.0, 33.0], &reference[..3]).unwrap();
        assert!(
            close(noisy.half_width(), 4.968_275, 1e-5),
            "{}",
            noisy.half_width()
        );
        assert_eq!(verdict(&noisy, true), Verdict::WithinNoise);
        assert_eq!(verdict(&noisy, false), Verdict::WithinNoise);
    }

    #[test]
    fn identical_samples_are_within_noise() {
        let xs = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0];
        let d = paired_diff(&xs, &xs).unwrap();
        assert_eq!(
            (d.estimate, d.low, d.high, d.half_width()),
            (0.0, 0.0, 0.0, 0.0)
        );
        assert!(d.contains_zero());
        assert_eq!(verdict(&d, true), Verdict::WithinNoise);
        assert_eq!(verdict(&d, false), Verdict::WithinNoise);
        let q = ratio(&xs, &xs).unwrap();
        assert_eq!((q.estimate, q.half_width()), (1.0, 0.0));
        assert_eq!(verdict(&q.shifted(-1.0), true), Verdict::WithinNoise);
        // An undefined interval claims nothing.
        let nan = Interval::around(f64::NAN, 1.0);
        assert_eq!(verdict(&nan, true), Verdict::WithinNoise);
    }

    #[test]
    fn precision_by_hand() {
        // Mean 5, half-width 1.787494: relative precision 0.357499.
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert!(precise_enough(&s, 0.36));
        assert!(!precise_enough(&s, 0.35));
        // A negative mean uses |mean|.
        let neg = Summary::of(&[-2.0, -4.0, -4.0, -4.0, -5.0, -5.0, -7.0, -9.0]);
        assert!(precise_enough(&neg, 0.36) && !precise_enough(&neg, 0.35));
        // Always zero is exact; NaN targets never pass.
        assert!(precise_enough(&Summary::of(&[0.0; 4]), 0.05));
        assert!(!precise_enough(&s, f64::NAN));
    }

    #[test]
    fn replication_growth_policy() {
        // +50 % rounded up, at least +2, capped.
        assert_eq!(next_replications(0, 100), Some(2));
        assert_eq!(next_replications(1, 100), Some(3));
        assert_eq!(next_replications(3, 100), Some(5));
        assert_eq!(next_replications(10, 100), Some(15));
        assert_eq!(next_replications(15, 100), Some(23));
        assert_eq!(next_replications(90, 100), Some(100));
        assert_eq!(next_replications(100, 100), None);
        assert_eq!(next_replications(150, 100), None);
        assert_eq!(
            next_replications(usize::MAX - 1, usize::MAX),
            Some(usize::MAX)
        );
        // From the default 10 to a cap of 200 in a handful of rounds.
        let rounds = std::iter::successors(Some(10), |&n| next_replications(n, 200)).count();
        assert_eq!(rounds, 9); // 10, 15, 23, 35, 53, 80, 120, 180, 200
    }
}
