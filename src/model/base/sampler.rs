//! Sampling the scenario's distributions by inverse transform.
//!
//! Every draw maps one uniform `u` in `[0, 1)` to a value, so a bio can carry its own uniform
//! (drawn from its workload's stream when it is created) and the device turns it into a service
//! time later: the same bio gets the same service draw under every policy (common random
//! numbers), whatever order the device serves bios in.

use crate::engine::SimDuration;
use crate::model::base::config::Distribution;

/// The longest draw: 1000 days. Scenarios run at most 100 days, so a longer draw means "not
/// within this run" either way; the clamp keeps `now + draw` (and sums of a few draws) far
/// from overflowing the clock, where a heavy tail (a lognormal whose stddev is many times its
/// mean) would otherwise saturate to [`SimDuration::MAX`] and panic the scheduler.
pub const MAX_DRAW: SimDuration = SimDuration::from_secs(1000 * 86_400);

impl Distribution {
    /// The value whose cumulative probability is `u` (inverse CDF), rounded to whole ns and
    /// clamped at [`MAX_DRAW`].
    pub fn quantile(&self, u: f64) -> SimDuration {
        self.unclamped(u).min(MAX_DRAW)
    }

    fn unclamped(&self, u: f64) -> SimDuration {
        let u = u.clamp(0.0, 1.0 - f64::EPSILON);
        match self {
            Distribution::Deterministic { value } => *value,
            Distribution::Exponential { mean } => {
                SimDuration::from_secs_f64(-mean.as_secs_f64() * (1.0 - u).ln())
            }
            Distribution::Uniform { low, high } => {
                let (a, b) = (low.as_secs_f64(), high.as_secs_f64());
                SimDuration::from_secs_f64(a + (b - a) * u)
            }
            Distribution::Lognormal { mean, stddev } => {
                let (mu, sigma) = lognormal_params(mean.as_secs_f64(), stddev.as_secs_f64());
                SimDuration::from_secs_f64((mu + sigma * inverse_normal_cdf(u)).exp())
            }
            Distribution::Empirical { values } => {
                let i = ((u * values.len() as f64) as usize).min(values.len() - 1);
                values[i]
            }
        }
    }

    /// The distribution's mean, in seconds.
    pub fn mean_secs(&self) -> f64 {
        match self {
            Distribution::Deterministic { value } => value.as_secs_f64(),
            Distribution::Exponential { mean } => mean.as_secs_f64(),
            Distribution::Uniform { low, high } => (low.as_secs_f64() + high.as_secs_f64()) / 2.0,
            Distribution::Lognormal { mean, .. } => mean.as_secs_f64(),
            Distribution::Empirical { values } => {
                values.iter().map(|v| v.as_secs_f64()).sum::<f64>() / values.len() as f64
            }
        }
    }

    /// The distribution's variance, in seconds squared.
    pub fn variance_secs2(&self) -> f64 {
        match self {
            Distribution::Deterministic { .. } => 0.0,
            Distribution::Exponential { mean } => mean.as_secs_f64().powi(2),
            Distribution::Uniform { low, high } => {
                (high.as_secs_f64() - low.as_secs_f64()).powi(2) / 12.0
            }
            Distribution::Lognormal { stddev, .. } => stddev.as_secs_f64().powi(2),
            Distribution::Empirical { values } => {
                let m = self.mean_secs();
                values
                    .iter()
                    .map(|v| (v.as_secs_f64() - m).powi(2))
                    .sum::<f64>()
                    / values.len() as f64
            }
        }
    }
}

/// (mu, sigma) of the underlying normal for a lognormal with the given mean and stddev.
fn lognormal_params(mean: f64, stddev: f64) -> (f64, f64) {
    let cv2 = (stddev / mean).powi(2);
    let sigma2 = (1.0 + cv2).ln();
    (mean.ln() - sigma2 / 2.0, sigma2.sqrt())
}

/// Standard normal quantile: Acklam's rational approximation (relative error < 1.2e-9),
/// refined by one Halley step against `erfc`-free CDF evaluation is unnecessary at this accuracy.
pub fn inverse_normal_cdf(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let p_low = 0.02425;
    if p < p_low {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - p_low {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    }
}

/// Goodness-of-fit tools for the sampler tests: moments against their formulas with a bound
/// from the sample size, Kolmogorov–Smirnov against a CDF, Pearson's chi-square against
/// category probabilities. Every test uses the significance [`checks::ALPHA`].
#[cfg(test)]
pub(crate) mod checks {
    use super::*;
    use crate::engine::RngStreams;
    use rand::RngExt;

    /// Significance of every check (1 %): the chance that a correct sampler fails one of them
    /// at an arbitrary seed. The seeds are fixed, so the outcome is too.
    pub const ALPHA: f64 = 0.01;
    /// Draws per distribution.
    pub const N: usize = 100_000;
    /// Master seed of the sampler checks.
    const SEED: u64 = 20_090_601;

    /// `n` uniforms in [0, 1) from the fixed-seed stream `name`.
    pub fn uniforms(name: &str, n: usize) -> Vec<f64> {
        let mut rng = RngStreams::new(SEED, 0).stream(name);
        (0..n).map(|_| rng.random::<f64>()).collect()
    }

    /// `n` draws of `d` in seconds, each `quantile(u)` of one uniform of stream `name`.
    pub fn draws_secs(d: &Distribution, name: &str, n: usize) -> Vec<f64> {
        uniforms(name, n)
            .into_iter()
            .map(|u| d.quantile(u).as_secs_f64())
            .collect()
    }

    /// Two-sided standard-normal critical value at [`ALPHA`].
    fn z_critical() -> f64 {
        inverse_normal_cdf(1.0 - ALPHA / 2.0)
    }

    /// Whether the sample mean and (unbiased) sample variance of `xs` fit the population's
    /// `mean`, `var` and fourth central moment `mu4`: each must lie within z standard errors
    /// (z two-sided at [`ALPHA`]), the errors being those of the sample size: σ/√n for the mean
    /// and √((μ₄ − σ⁴(n−3)/(n−1))/n) for the variance (the exact variance of s²).
    pub fn moments_fit(xs: &[f64], mean: f64, var: f64, mu4: f64) -> Result<(), String> {
        let n = xs.len() as f64;
        let m = xs.iter().sum::<f64>() / n;
        let s2 = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
        let z = z_critical();
        let se_mean = (var / n).sqrt();
        let se_var = ((mu4 - var * var * (n - 3.0) / (n - 1.0)) / n).sqrt();
        if (m - mean).abs() > z * se_mean {
            return Err(format!("mean {m:e} vs {mean:e}, bound {:e}", z * se_mean));
        }
        if (s2 - var).abs() > z * se_var {
            return Err(format!(
                "variance {s2:e} vs {var:e}, bound {:e}",
                z * se_var
            ));
        }
        Ok(())
    }

    /// Asserts [`moments_fit`].
    pub fn assert_moments(what: &str, xs: &[f64], mean: f64, var: f64, mu4: f64) {
        if let Err(e) = moments_fit(xs, mean, var, mu4) {
            panic!("{what}: {e}");
        }
    }

    /// The Kolmogorov–Smirnov statistic D = sup |F_n − F| of the sample against `cdf`.
    pub fn ks_statistic(xs: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
        let mut sorted = xs.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len() as f64;
        sorted
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = cdf(x);
                ((i + 1) as f64 / n - f).max(f - i as f64 / n)
            })
            .fold(0.0, f64::max)
    }

    /// The Kolmogorov distribution's upper-`alpha` point K, found by bisection on
    /// P(K > x) = 2 Σ_{k≥1} (−1)^{k−1} e^{−2k²x²}; the KS test rejects at `alpha` when
    /// √n · D > K (asymptotic in n, which 10⁵ draws are).
    pub fn kolmogorov_critical(alpha: f64) -> f64 {
        let tail = |x: f64| -> f64 {
            (1..=100)
                .map(|k| {
                    let k = f64::from(k);
                    let sign = if k as u32 % 2 == 1 { 1.0 } else { -1.0 };
                    sign * (-2.0 * k * k * x * x).exp()
                })
                .sum::<f64>()
                * 2.0
        };
        let (mut lo, mut hi) = (0.3, 4.0);
        for _ in 0..100 {
            let mid = (lo + hi) / 2.0;
            if tail(mid) > alpha {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (lo + hi) / 2.0
    }

    /// Asserts that `xs` passes the KS test against `cdf` at [`ALPHA`].
    pub fn assert_ks(what: &str, xs: &[f64], cdf: impl Fn(f64) -> f64) {
        let d = ks_statistic(xs, cdf);
        let critical = kolmogorov_critical(ALPHA) / (xs.len() as f64).sqrt();
        assert!(d <= critical, "{what}: KS D = {d:e} > {critical:e}");
    }

    /// Pearson's statistic Σ (O − E)² / E.
    pub fn chi_square(observed: &[u64], expected: &[f64]) -> f64 {
        observed
            .iter()
            .zip(expected)
            .map(|(&o, &e)| (o as f64 - e).powi(2) / e)
            .sum()
    }

    /// The chi-square distribution's upper-`alpha` point with `df` degrees of freedom, by the
    /// Wilson–Hilferty cube-root normal approximation (Wilson and Hilferty, 1931).
    pub fn chi_square_critical(df: usize, alpha: f64) -> f64 {
        let k = df as f64;
        let a = 2.0 / (9.0 * k);
        k * (1.0 - a + inverse_normal_cdf(1.0 - alpha) * a.sqrt()).powi(3)
    }

    /// Asserts a chi-square goodness of fit at [`ALPHA`] (`expected` counts, each at least 5).
    pub fn assert_chi_square(what: &str, observed: &[u64], expected: &[f64]) {
        assert!(expected.iter().all(|&e| e >= 5.0), "{what}: pool the cells");
        let chi2 = chi_square(observed, expected);
        let critical = chi_square_critical(observed.len() - 1, ALPHA);
        assert!(chi2 <= critical, "{what}: chi-square {chi2} > {critical}");
    }

    /// The error function, Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7).
    pub fn erf(x: f64) -> f64 {
        const P: f64 = 0.327_591_1;
        const A: [f64; 5] = [
            0.254_829_592,
            -0.284_496_736,
            1.421_413_741,
            -1.453_152_027,
            1.061_405_429,
        ];
        let t = 1.0 / (1.0 + P * x.abs());
        let poly = A.iter().rev().fold(0.0, |acc, &a| acc * t + a) * t;
        let y = 1.0 - poly * (-x * x).exp();
        if x < 0.0 { -y } else { y }
    }

    /// The standard normal CDF.
    pub fn normal_cdf(z: f64) -> f64 {
        0.5 * (1.0 + erf(z / std::f64::consts::SQRT_2))
    }

    /// The CDF of a continuous distribution at `x` seconds, written from its textbook form
    /// (not from the sampler's code).
    pub fn cdf(d: &Distribution, x: f64) -> f64 {
        match d {
            Distribution::Exponential { mean } => 1.0 - (-x / mean.as_secs_f64()).exp(),
            Distribution::Uniform { low, high } => {
                let (a, b) = (low.as_secs_f64(), high.as_secs_f64());
                ((x - a) / (b - a)).clamp(0.0, 1.0)
            }
            Distribution::Lognormal { mean, stddev } => {
                // The log is normal with σ² = ln(1 + cv²) and μ = ln(mean) − σ²/2.
                let (m, s) = (mean.as_secs_f64(), stddev.as_secs_f64());
                let sigma2 = (s * s / (m * m)).ln_1p();
                let mu = m.ln() - sigma2 / 2.0;
                if x <= 0.0 {
                    0.0
                } else {
                    normal_cdf((x.ln() - mu) / sigma2.sqrt())
                }
            }
            Distribution::Deterministic { .. } | Distribution::Empirical { .. } => {
                unreachable!("discrete distributions are checked exactly or by chi-square")
            }
        }
    }

    /// Population (mean, variance, fourth central moment) of a distribution, in seconds,
    /// written from the textbook formulas.
    pub fn population_moments(d: &Distribution) -> (f64, f64, f64) {
        match d {
            Distribution::Deterministic { value } => (value.as_secs_f64(), 0.0, 0.0),
            Distribution::Exponential { mean } => {
                let m = mean.as_secs_f64();
                (m, m * m, 9.0 * m.powi(4))
            }
            Distribution::Uniform { low, high } => {
                let (a, b) = (low.as_secs_f64(), high.as_secs_f64());
                let w = b - a;
                ((a + b) / 2.0, w * w / 12.0, w.powi(4) / 80.0)
            }
            Distribution::Lognormal { mean, stddev } => {
                let (m, s) = (mean.as_secs_f64(), stddev.as_secs_f64());
                let e = (s * s / (m * m)).ln_1p().exp(); // e^{σ²}
                let kurtosis = e.powi(4) + 2.0 * e.powi(3) + 3.0 * e.powi(2) - 3.0;
                (m, s * s, kurtosis * s.powi(4))
            }
            Distribution::Empirical { values } => {
                let xs: Vec<f64> = values.iter().map(|v| v.as_secs_f64()).collect();
                let k = xs.len() as f64;
                let m = xs.iter().sum::<f64>() / k;
                let c = |p: i32| xs.iter().map(|x| (x - m).powi(p)).sum::<f64>() / k;
                (m, c(2), c(4))
            }
        }
    }

    #[test]
    fn critical_values_match_the_tables() {
        // Kolmogorov: 1.3581 at 5 %, 1.6276 at 1 % (Smirnov's table).
        assert!((kolmogorov_critical(0.05) - 1.3581).abs() < 1e-3);
        assert!((kolmogorov_critical(0.01) - 1.6276).abs() < 1e-3);
        // Chi-square at 1 %: 9.210 (2 df), 11.345 (3 df), 23.209 (10 df).
        for (df, table) in [(2, 9.210), (3, 11.345), (10, 23.209)] {
            let got = chi_square_critical(df, 0.01);
            assert!((got - table).abs() / table < 5e-3, "df {df}: {got}");
        }
    }

    #[test]
    fn erf_matches_reference_values() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (-1.5, -0.966_105_146_475_310_7),
        ] {
            assert!((erf(x) - want).abs() < 1.5e-7, "erf({x}) = {}", erf(x));
        }
        assert!((normal_cdf(1.959_963_984_540_054) - 0.975).abs() < 1e-7);
    }

    #[test]
    fn the_checks_reject_a_wrong_sampler() {
        // Draws of an exponential with mean 2 ms judged against one of mean 2.05 ms: a 2.5 %
        // error in the mean must not pass either test.
        let ms = SimDuration::from_ms;
        let drawn = draws_secs(&Distribution::Exponential { mean: ms(2) }, "reject", N);
        let claimed = Distribution::Exponential {
            mean: SimDuration::from_us(2050),
        };
        let d = ks_statistic(&drawn, |x| cdf(&claimed, x));
        assert!(
            d > kolmogorov_critical(ALPHA) / (N as f64).sqrt(),
            "KS D = {d}"
        );
        let (m, v, mu4) = population_moments(&claimed);
        assert!(moments_fit(&drawn, m, v, mu4).is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::checks::*;
    use super::*;

    fn moments(d: &Distribution, n: usize) -> (f64, f64) {
        // Stratified uniforms: deterministic and dense, so the moments converge fast.
        let xs: Vec<f64> = (0..n)
            .map(|i| d.quantile((i as f64 + 0.5) / n as f64).as_secs_f64())
            .collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64;
        (m, v)
    }

    #[test]
    fn quantiles_reproduce_mean_and_variance() {
        let ms = SimDuration::from_ms;
        let cases = [
            Distribution::Deterministic { value: ms(3) },
            Distribution::Exponential { mean: ms(2) },
            Distribution::Uniform {
                low: ms(1),
                high: ms(5),
            },
            Distribution::Lognormal {
                mean: ms(4),
                stddev: ms(2),
            },
            Distribution::Empirical {
                values: vec![ms(1), ms(2), ms(6)],
            },
        ];
        for d in &cases {
            let (m, v) = moments(d, 200_000);
            let rel = (m - d.mean_secs()).abs() / d.mean_secs();
            assert!(rel < 2e-3, "{d:?}: mean {m} vs {}", d.mean_secs());
            let want = d.variance_secs2();
            if want > 0.0 {
                // The exponential's far tail is cut by the finite stratification: allow 2 %.
                assert!((v - want).abs() / want < 0.02, "{d:?}: var {v} vs {want}");
            } else {
                assert!(v < 1e-20);
            }
        }
    }

    #[test]
    fn inverse_normal_is_symmetric_and_accurate() {
        assert!(inverse_normal_cdf(0.5).abs() < 1e-12);
        assert!((inverse_normal_cdf(0.975) - 1.959_963_984_540_054).abs() < 1e-8);
        assert!((inverse_normal_cdf(0.01) + 2.326_347_874_040_841).abs() < 1e-8);
    }

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_ms(v)
    }

    /// Mean, variance and KS of `quantile(u)` draws for each continuous kind.
    #[test]
    fn continuous_distributions_fit_their_moments_and_cdf() {
        let cases = [
            ("exponential", Distribution::Exponential { mean: ms(2) }),
            (
                "uniform",
                Distribution::Uniform {
                    low: ms(1),
                    high: ms(5),
                },
            ),
            (
                "lognormal",
                Distribution::Lognormal {
                    mean: ms(4),
                    stddev: ms(2),
                },
            ),
            (
                "lognormal heavy",
                Distribution::Lognormal {
                    mean: SimDuration::from_us(300),
                    stddev: SimDuration::from_us(600),
                },
            ),
        ];
        for (name, d) in &cases {
            let xs = draws_secs(d, name, N);
            let (m, v, mu4) = population_moments(d);
            // The model's own formulas agree with the textbook ones.
            assert!((d.mean_secs() - m).abs() <= 1e-12 * m, "{name}");
            assert!((d.variance_secs2() - v).abs() <= 1e-9 * v, "{name}");
            assert_moments(name, &xs, m, v, mu4);
            assert_ks(name, &xs, |x| cdf(d, x));
        }
    }

    #[test]
    fn a_deterministic_distribution_always_gives_its_value() {
        let d = Distribution::Deterministic {
            value: SimDuration::from_ns(1_234_567),
        };
        for u in uniforms("deterministic", N)
            .into_iter()
            .chain([0.0, 1.0 - f64::EPSILON, 1.0])
        {
            assert_eq!(d.quantile(u), SimDuration::from_ns(1_234_567));
        }
        assert_eq!((d.mean_secs(), d.variance_secs2()), (0.001_234_567, 0.0));
    }

    /// Each listed value is equally likely: every draw is one of them, the counts pass a
    /// chi-square test against the multiplicities, and the moments match the list's.
    #[test]
    fn an_empirical_distribution_draws_its_values_in_proportion() {
        let values = vec![ms(1), ms(2), ms(2), ms(6), ms(3)];
        let d = Distribution::Empirical {
            values: values.clone(),
        };
        let distinct = [ms(1), ms(2), ms(3), ms(6)];
        let weights = [1.0, 2.0, 1.0, 1.0];
        let mut counts = [0u64; 4];
        let mut xs = Vec::with_capacity(N);
        for u in uniforms("empirical", N) {
            let x = d.quantile(u);
            let i = distinct
                .iter()
                .position(|&v| v == x)
                .unwrap_or_else(|| panic!("{x} is not a listed value"));
            counts[i] += 1;
            xs.push(x.as_secs_f64());
        }
        let expected: Vec<f64> = weights.iter().map(|w| w / 5.0 * N as f64).collect();
        assert_chi_square("empirical", &counts, &expected);
        let (m, v, mu4) = population_moments(&d);
        assert_moments("empirical", &xs, m, v, mu4);
        assert!((d.mean_secs() - m).abs() < 1e-15 && (d.variance_secs2() - v).abs() < 1e-15);
    }

    /// The NVMe preset's controller overhead is exponential: the service time less the fixed
    /// transfer, through the device's own code.
    #[test]
    fn nvme_controller_overhead_is_exponential() {
        use crate::model::base::bio::{Bio, BioSlab, Dir, Origin};
        use crate::model::base::config::{DeviceConfig, NvmeConfig};
        use crate::model::block::device::{Device, DeviceWake};
        let overhead = SimDuration::from_us(4);
        let cfg = DeviceConfig::Nvme(NvmeConfig {
            latency: SimDuration::ZERO,
            channels: 1,
            overhead,
            transfer_rate: 3.5e9,
            queue_depth: 1,
            stall: crate::model::base::config::NvmeStall::NONE,
            disks: 1,
            chunk: 0,
            preset: "custom".into(),
        });
        let bytes = 4096u32;
        let transfer = f64::from(bytes) / 3.5e9;
        let t0 = crate::engine::SimTime::ZERO;
        let xs: Vec<f64> = uniforms("nvme", N)
            .into_iter()
            .map(|u| {
                let mut bios = BioSlab::default();
                let mut b = Bio::new(Dir::Read, true, bytes, 0, Origin::Job(0), t0);
                b.service_u = u;
                let id = bios.insert(b);
                let Some(DeviceWake::ChannelDone(t, _)) =
                    Device::new(&cfg).accept(id, &bios, t0).next()
                else {
                    panic!("an idle channel starts at once")
                };
                t.since(t0).as_secs_f64() - transfer
            })
            .collect();
        let d = Distribution::Exponential { mean: overhead };
        let (m, v, mu4) = population_moments(&d);
        assert_moments("nvme overhead", &xs, m, v, mu4);
        assert_ks("nvme overhead", &xs, |x| cdf(&d, x));
    }

    /// A disk's rotational delay is uniform over one revolution: the service time of a request
    /// at a fixed distance less its seek and transfer.
    #[test]
    fn hdd_rotation_is_uniform_over_a_revolution() {
        use crate::model::base::bio::{Bio, BioSlab, Dir, Origin};
        use crate::model::base::config::{DeviceConfig, HddConfig};
        use crate::model::block::device::{Device, DeviceWake};
        let cfg = DeviceConfig::Hdd(HddConfig {
            preset: "test".into(),
            seek_min: ms(2),
            seek_full: ms(20),
            revolution: SimDuration::from_us(11_111),
            transfer_rate: 60e6,
            capacity: 100_000_000_000,
            queue_depth: 1,
            disks: 1,
            chunk: 0,
        });
        // A full stroke from the head's start at 0: seek 20 ms; 4 KiB at 60 MB/s.
        let fixed = 0.020 + 4096.0 / 60e6;
        let t0 = crate::engine::SimTime::ZERO;
        let xs: Vec<f64> = uniforms("hdd", N)
            .into_iter()
            .map(|u| {
                let mut bios = BioSlab::default();
                let mut b = Bio::new(Dir::Read, true, 4096, 100_000_000_000, Origin::Job(0), t0);
                b.service_u = u;
                let id = bios.insert(b);
                let Some(DeviceWake::ChannelDone(t, _)) =
                    Device::new(&cfg).accept(id, &bios, t0).next()
                else {
                    panic!("an idle disk starts at once")
                };
                t.since(t0).as_secs_f64() - fixed
            })
            .collect();
        let d = Distribution::Uniform {
            low: SimDuration::ZERO,
            high: SimDuration::from_us(11_111),
        };
        let (m, v, mu4) = population_moments(&d);
        assert_moments("hdd rotation", &xs, m, v, mu4);
        assert_ks("hdd rotation", &xs, |x| cdf(&d, x));
    }

    #[test]
    fn heavy_tails_are_clamped_so_the_clock_cannot_overflow() {
        // Found by the loader's review: a lognormal whose stddev dwarfs its mean drew
        // SimDuration::MAX at high quantiles, and adding it to the clock panicked.
        let d = Distribution::Lognormal {
            mean: SimDuration::from_secs(86_400),
            stddev: SimDuration::from_secs(86_400 * 1000),
        };
        assert_eq!(d.quantile(1.0 - 1e-12), MAX_DRAW);
        assert!(d.quantile(0.5) < MAX_DRAW);
        let e = Distribution::Exponential {
            mean: SimDuration::from_secs(8_640_000),
        };
        assert_eq!(e.quantile(1.0), MAX_DRAW);
        assert!(
            crate::engine::SimTime::MAX
                .saturating_since(crate::engine::SimTime::ZERO)
                .as_ns()
                > 100 * MAX_DRAW.as_ns()
        );
    }
}
