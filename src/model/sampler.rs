//! Sampling the scenario's distributions by inverse transform.
//!
//! Every draw maps one uniform `u` in `[0, 1)` to a value, so a bio can carry its own uniform
//! (drawn from its workload's stream when it is created) and the device turns it into a service
//! time later: the same bio gets the same service draw under every policy (common random
//! numbers), whatever order the device serves bios in.

use crate::engine::SimDuration;
use crate::scenario::Distribution;

impl Distribution {
    /// The value whose cumulative probability is `u` (inverse CDF), rounded to whole ns.
    pub fn quantile(&self, u: f64) -> SimDuration {
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

#[cfg(test)]
mod tests {
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
}
