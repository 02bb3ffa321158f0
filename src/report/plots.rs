//! The plot series the report holds: what `qsim plot` draws, as plain serde data. `qsim run`
//! builds them from the replications ([`plot_data`]) and writes them into the JSON export
//! (`qsim.plots`); the plot layer renders them and reads them back from that file.

use super::metrics::{ATOMIC_FAILURES, KSWAPD_CWAIT, MetricId};
use super::spread::RepSample;
use crate::stats::compare::Summary;
use crate::stats::series::Timeline;
use serde::{Deserialize, Serialize};

/// The percentiles on the "nines" axis of the percentile plot.
pub const PLOT_PERCENTILES: [f64; 10] =
    [50.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// Below this many replications the plots draw each replication as a dot instead of a
/// Student-t whisker: with 2–4 values the t interval is wide and says less than the values.
pub const DOTS_BELOW: usize = 5;

/// A value across replications: mean, sample standard deviation and the 95 % confidence
/// half-width (Student t; 0 with one replication), and with fewer than [`DOTS_BELOW`]
/// replications each replication's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Mean over replications.
    pub mean: f64,
    /// Sample standard deviation over replications.
    pub stddev: f64,
    /// Half-width of the 95 % confidence interval of the mean.
    pub ci95_half: f64,
    /// Each replication's value, in replication order, when there are fewer than
    /// [`DOTS_BELOW`] of them (empty otherwise, and in files from before this field).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<f64>,
}

/// One percentile of read clat across replications, ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PercentileBand {
    /// The percentile, e.g. 99.9.
    pub p: f64,
    /// Its value across replications, ns.
    pub ns: Spread,
}

/// Memory-pressure figures of one run across replications.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryPlot {
    /// GFP_ATOMIC failures per replication by allocation order: `(order, spread)`, for every
    /// order that failed in some replication, ascending.
    pub failures_by_order: Vec<(u32, Spread)>,
    /// All GFP_ATOMIC failures per replication.
    pub failures: Spread,
    /// kswapd's time in congestion_wait per replication, s: SYNC then ASYNC.
    pub kswapd_cwait_s: [Spread; 2],
}

/// One run of the plan (a policy, or a variant's policy) as the plots see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPlot {
    /// The run's label in the report (`fifo`, `baseline`, `2.6.30/split`).
    pub label: String,
    /// Read clat at each of [`PLOT_PERCENTILES`] across replications.
    pub read_percentiles: Vec<PercentileBand>,
    /// Read clat histogram pooled over every replication: `(bucket midpoint ns, count)`,
    /// non-zero buckets in ascending order (fio's bucket scheme).
    pub read_clat_bins: Vec<(u64, u64)>,
    /// Mean time a read spent in each stage, ns, in pipeline order: `(stage, mean ns)`.
    pub read_stages: Vec<(String, f64)>,
    /// Memory figures; `None` when the scenario has no `memory:` section.
    pub memory: Option<MemoryPlot>,
    /// Replication 0's timeline; `None` when none was recorded.
    pub timeline: Option<Timeline>,
    /// The registry's metrics marked [`plot`](super::metrics::Metric::plot), in registry order,
    /// each across the replications that measured it (absent when none did).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<MetricPlot>,
}

/// One plotted metric of one run across replications.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricPlot {
    /// The metric's [`key`](super::metrics::Metric::key) in the registry.
    pub key: String,
    /// Its value across the replications that measured it.
    pub value: Spread,
}

/// Everything `qsim plot` needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlotData {
    /// The scenario's name (its file stem), used in titles and the default directory.
    pub scenario: String,
    /// The scenario's seed (footer).
    pub seed: u64,
    /// Replications per run (footer).
    pub replications: u32,
    /// The runs, in report order.
    pub runs: Vec<RunPlot>,
    /// A sweep's curves or a study's rankings ([`super::sweep`]), for the knee and tornado
    /// plots; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<super::sweep::SweepData>,
    /// The flag comparisons ([`super::flags`]), one per variant that runs `dm-crypt` beside a
    /// flagged table, for the `flags` plots; absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<super::flags::FlagPlot>,
}

/// A value across replications as the plots draw it (a half-width of 0 with one replication;
/// the values themselves with fewer than [`DOTS_BELOW`]).
fn spread(xs: &[f64]) -> Spread {
    let s = Summary::of(xs);
    Spread {
        values: if xs.len() < DOTS_BELOW {
            xs.to_vec()
        } else {
            Vec::new()
        },
        mean: s.mean,
        stddev: s.stddev,
        ci95_half: if s.ci95_half.is_finite() {
            s.ci95_half
        } else {
            0.0
        },
    }
}

/// Read clat at each of [`PLOT_PERCENTILES`] across `reps` (empty unless every replication
/// had reads).
fn read_percentiles(reps: &[RepSample]) -> Vec<PercentileBand> {
    if !reps.iter().all(|r| !r.read_plot_percentiles_ns.is_empty()) {
        return Vec::new();
    }
    PLOT_PERCENTILES
        .iter()
        .enumerate()
        .map(|(k, &pct)| PercentileBand {
            p: pct,
            ns: spread(
                &reps
                    .iter()
                    .map(|r| r.read_plot_percentiles_ns[k])
                    .collect::<Vec<_>>(),
            ),
        })
        .collect()
}

/// The memory figures across `reps` (`None` unless every replication ran a memory model).
fn memory(reps: &[RepSample]) -> Option<MemoryPlot> {
    let by_order = reps
        .iter()
        .map(|r| r.failures_by_order.as_ref())
        .collect::<Option<Vec<_>>>()?;
    let orders = by_order.iter().map(|v| v.len()).max().unwrap_or(0);
    let of_order = |o: usize| -> Vec<f64> {
        by_order
            .iter()
            .map(|v| v.get(o).copied().unwrap_or(0) as f64)
            .collect()
    };
    let metric = |id: MetricId| spread(&reps.iter().map(|r| r.metrics[id]).collect::<Vec<_>>());
    Some(MemoryPlot {
        failures_by_order: (0..orders)
            .filter(|&o| of_order(o).iter().any(|&x| x > 0.0))
            .map(|o| (o as u32, spread(&of_order(o))))
            .collect(),
        failures: metric(ATOMIC_FAILURES),
        kswapd_cwait_s: KSWAPD_CWAIT.map(metric),
    })
}

/// The registry's plotted metrics across `reps`, each over the replications that measured it
/// (a metric no replication measured is left out).
/// `registry` is [`METRICS`](super::metrics::METRICS), or a variant of it in tests.
fn plotted_metrics(reps: &[RepSample], registry: &[super::metrics::Metric]) -> Vec<MetricPlot> {
    registry
        .iter()
        .enumerate()
        .filter(|(_, m)| m.plot)
        .filter_map(|(i, m)| {
            let xs: Vec<f64> = reps
                .iter()
                .map(|r| r.metrics[MetricId(i)])
                .filter(|x| x.is_finite())
                .collect();
            (!xs.is_empty()).then(|| MetricPlot {
                key: m.key.to_string(),
                value: spread(&xs),
            })
        })
        .collect()
}

/// What the plots draw, from the report built on the pooled runs and each run's samples
/// (`samples[i]` for `report.policies[i]`), with replication 0's timelines.
pub fn plot_data(
    report: &super::Report,
    samples: &[Vec<RepSample>],
    timelines: Vec<Option<Timeline>>,
) -> PlotData {
    let runs = report
        .policies
        .iter()
        .zip(samples)
        .zip(timelines)
        .map(|((p, reps), timeline)| {
            let read = p.direction(super::Direction::Read);
            RunPlot {
                label: p.policy.clone(),
                read_percentiles: read_percentiles(reps),
                read_clat_bins: read.clat.bins.clone(),
                // Time per read in each stage: the stage's share of all read latency.
                read_stages: read
                    .stages
                    .iter()
                    .map(|st| (st.label.clone(), st.share_pct / 100.0 * read.lat.mean_ns))
                    .collect(),
                memory: memory(reps),
                timeline,
                metrics: plotted_metrics(reps, super::metrics::METRICS),
            }
        })
        .collect();
    PlotData {
        sweep: None,
        flags: Vec::new(),
        scenario: report.scenario.clone(),
        seed: report.seed,
        replications: report.replications,
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::metrics::{ELAPSED, METRICS, Metrics};

    fn rep(elapsed_s: f64) -> RepSample {
        let mut metrics = Metrics::nan();
        metrics[ELAPSED] = elapsed_s;
        RepSample {
            metrics,
            dirs: [None, None],
            read_plot_percentiles_ns: Vec::new(),
            failures_by_order: None,
        }
    }

    #[test]
    fn no_shipped_metric_is_plotted_on_its_own_so_the_results_file_keeps_its_keys() {
        assert!(plotted_metrics(&[rep(1.0), rep(2.0)], METRICS).is_empty());
    }

    #[test]
    fn a_plotted_metric_spreads_over_the_replications_that_measured_it() {
        let mut registry = METRICS.to_vec();
        registry[ELAPSED.0].plot = true;
        let got = plotted_metrics(&[rep(30.0), rep(f64::NAN), rep(34.0)], &registry);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].key, "elapsed_s");
        assert_eq!(got[0].value.mean, 32.0);
        assert!((got[0].value.stddev - 8f64.sqrt()).abs() < 1e-12);
        assert!(got[0].value.ci95_half > 0.0);
        // Measured by none: left out rather than drawn as zero.
        assert!(plotted_metrics(&[rep(f64::NAN)], &registry).is_empty());
    }
}
