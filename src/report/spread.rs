//! What one replication contributes beyond the pooled histograms, and its spread across
//! replications: the few figures fio prints once per block (IOPS, bandwidth, mean latency,
//! clat percentiles) and the memory headline figures, per replication ([`RepSample`]), and
//! their mean ± σ over a run's replications ([`RunSpread`]), which the fio-style blocks print
//! beside fio's pooled values. A sample is a few dozen numbers, so a run keeps one per
//! replication whatever the simulated duration.

use super::metrics::{ATOMIC_FAILURES, ELAPSED, KSWAPD_CWAIT, Metrics};
use super::plots::PLOT_PERCENTILES;
use super::{DEFAULT_PERCENTILES, Direction};
use crate::model::base::obs::RunObs;
use crate::stats::Summary;
use serde::Serialize;

/// The clat percentiles whose spread the blocks print, as indices into
/// [`DEFAULT_PERCENTILES`]: 50, 99, 99.9, 99.99.
const SPREAD_PERCENTILES: [(f64, usize); 4] = [(50.0, 6), (99.0, 12), (99.9, 14), (99.99, 16)];

/// One direction's single-valued fio figures in one replication.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DirSample {
    /// IOPS over the measured window.
    pub iops: f64,
    /// Bandwidth, KiB/s.
    pub bw_kib_s: f64,
    /// Mean total latency, ns.
    pub lat_mean_ns: f64,
    /// clat at p50, p99, p99.9 and p99.99, ns.
    pub clat_ns: [f64; 4],
}

/// Everything one replication of one run contributes besides its pooled histograms.
#[derive(Debug, Clone, PartialEq)]
pub struct RepSample {
    /// The headline metrics of the summary.
    pub metrics: Metrics,
    /// Read then write figures (`None` for a direction without I/O).
    pub dirs: [Option<DirSample>; 2],
    /// Read clat at each of [`PLOT_PERCENTILES`], ns (empty without reads).
    pub read_plot_percentiles_ns: Vec<f64>,
    /// GFP_ATOMIC failures by order (`None` without a memory model).
    pub failures_by_order: Option<Vec<u64>>,
}

impl RepSample {
    /// The sample of one replication's observations.
    pub fn of(obs: &RunObs) -> RepSample {
        let list = &DEFAULT_PERCENTILES;
        let report = super::policy_report(obs, list, &[]);
        let metrics = report.metrics;
        let dir = |d: Direction| {
            let r = report.direction(d);
            (r.ios > 0).then(|| DirSample {
                iops: r.iops,
                bw_kib_s: r.bw_bytes_per_s as f64 / 1024.0,
                lat_mean_ns: r.lat.mean_ns,
                clat_ns: SPREAD_PERCENTILES.map(|(_, i)| r.clat.percentiles_ns[i] as f64),
            })
        };
        let read = &obs.dirs[0].clat;
        RepSample {
            metrics,
            dirs: [dir(Direction::Read), dir(Direction::Write)],
            read_plot_percentiles_ns: if read.is_empty() {
                Vec::new()
            } else {
                read.percentiles(&PLOT_PERCENTILES)
                    .into_iter()
                    .map(|v| v as f64)
                    .collect()
            },
            failures_by_order: obs.memory.as_ref().map(|m| m.atomic_failures.clone()),
        }
    }
}

/// One direction's figures across replications.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirSpread {
    /// IOPS.
    pub iops: Summary,
    /// Bandwidth, KiB/s.
    pub bw_kib_s: Summary,
    /// Mean total latency, ns.
    pub lat_mean_ns: Summary,
    /// clat percentiles, ns: `(percentile, summary)` for p50, p99, p99.9, p99.99.
    pub clat_ns: Vec<(f64, Summary)>,
}

/// A run's single-valued figures across its replications.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSpread {
    /// Replications summarised.
    pub replications: usize,
    /// Read then write (`None` for a direction without I/O in some replication).
    pub directions: [Option<DirSpread>; 2],
    /// GFP_ATOMIC failures per replication (`None` without a memory model).
    pub atomic_failures: Option<Summary>,
    /// kswapd's time in congestion_wait per replication, s: SYNC then ASYNC.
    pub kswapd_cwait_s: Option<[Summary; 2]>,
    /// The finite jobs' elapsed time (`None` without finite jobs).
    pub elapsed: Option<ElapsedSpread>,
}

/// The elapsed time of a run's finite jobs across replications.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ElapsedSpread {
    /// Replications in which every finite job finished.
    pub finished: usize,
    /// Elapsed time, s, over the replications (`None` unless every one finished).
    pub seconds: Option<Summary>,
}

impl RunSpread {
    /// The spread of `samples`, one per replication (`None` for fewer than two).
    pub fn of(samples: &[RepSample]) -> Option<RunSpread> {
        if samples.len() < 2 {
            return None;
        }
        let over =
            |f: &dyn Fn(&RepSample) -> f64| Summary::of(&samples.iter().map(f).collect::<Vec<_>>());
        let dir = |k: usize| -> Option<DirSpread> {
            if samples.iter().any(|s| s.dirs[k].is_none()) {
                return None;
            }
            let d = |s: &RepSample| s.dirs[k].expect("checked above");
            Some(DirSpread {
                iops: over(&|s| d(s).iops),
                bw_kib_s: over(&|s| d(s).bw_kib_s),
                lat_mean_ns: over(&|s| d(s).lat_mean_ns),
                clat_ns: SPREAD_PERCENTILES
                    .iter()
                    .enumerate()
                    .map(|(j, &(p, _))| (p, over(&|s| d(s).clat_ns[j])))
                    .collect(),
            })
        };
        let memory = samples.iter().all(|s| s.failures_by_order.is_some());
        let finite = samples.iter().all(|s| s.metrics.finite_jobs > 0);
        let finished = samples
            .iter()
            .filter(|s| s.metrics[ELAPSED].is_finite())
            .count();
        Some(RunSpread {
            replications: samples.len(),
            directions: [dir(0), dir(1)],
            atomic_failures: memory.then(|| over(&|s| s.metrics[ATOMIC_FAILURES])),
            kswapd_cwait_s: memory.then(|| KSWAPD_CWAIT.map(|id| over(&|s| s.metrics[id]))),
            elapsed: finite.then(|| ElapsedSpread {
                finished,
                seconds: (finished == samples.len()).then(|| over(&|s| s.metrics[ELAPSED])),
            }),
        })
    }
}

/// Attaches each run's spread to its block of `report`: `samples[i]` holds run `i`'s
/// samples, in the report's order.
pub fn attach(report: &mut super::Report, samples: &[Vec<RepSample>]) {
    for (p, s) in report.policies.iter_mut().zip(samples) {
        p.spread = RunSpread::of(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(iops: f64, p99_ns: f64, failures: Option<f64>) -> RepSample {
        let mut metrics = Metrics::nan();
        metrics[crate::report::metrics::MetricId::of("read_iops")] = iops;
        metrics[ATOMIC_FAILURES] = failures.unwrap_or(f64::NAN);
        metrics[KSWAPD_CWAIT[0]] = 0.0;
        metrics[KSWAPD_CWAIT[1]] = 2.0;
        RepSample {
            metrics,
            dirs: [
                Some(DirSample {
                    iops,
                    bw_kib_s: iops * 4.0,
                    lat_mean_ns: 1e6,
                    clat_ns: [1e5, p99_ns, 2.0 * p99_ns, 3.0 * p99_ns],
                }),
                None,
            ],
            read_plot_percentiles_ns: vec![],
            failures_by_order: failures.map(|f| vec![0, 0, f as u64]),
        }
    }

    #[test]
    fn spread_is_the_sample_statistics_of_each_figure() {
        let s = RunSpread::of(&[
            sample(100.0, 10e6, Some(4.0)),
            sample(110.0, 12e6, Some(6.0)),
            sample(120.0, 14e6, Some(8.0)),
        ])
        .expect("three samples");
        let r = s.directions[0].as_ref().expect("reads");
        assert_eq!(r.iops.mean, 110.0);
        assert!((r.iops.stddev - 10.0).abs() < 1e-12);
        assert_eq!(r.clat_ns[1].0, 99.0);
        assert_eq!(r.clat_ns[1].1.mean, 12e6);
        assert!((r.clat_ns[1].1.stddev - 2e6).abs() < 1e-6);
        assert!(s.directions[1].is_none(), "no writes");
        assert_eq!(s.atomic_failures.expect("memory").mean, 6.0);
        assert_eq!(s.kswapd_cwait_s.expect("memory")[1].stddev, 0.0);
    }

    #[test]
    fn one_replication_has_no_spread_and_no_memory_means_none() {
        assert!(RunSpread::of(&[sample(1.0, 1.0, None)]).is_none());
        let s =
            RunSpread::of(&[sample(1.0, 1.0, None), sample(2.0, 1.0, None)]).expect("two samples");
        assert!(s.atomic_failures.is_none() && s.kswapd_cwait_s.is_none());
    }
}
