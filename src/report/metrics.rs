//! The metrics registry: one table of the per-run metrics, each with its key, label, unit,
//! direction and how to read it from a run (its observations and its block). The replication
//! summary, the CSV and Markdown exports, the paired comparisons of the JSON summary,
//! `--precision-metric`, the spread lines and the memory plot series all iterate or index
//! [`METRICS`]. A row with [`Metric::in_block`] also shows in the run's text block (a
//! `metrics` line) and in its fio-JSON job (`qsim.metrics`), so a new per-run metric is one
//! row here plus the model's measurement.

use super::{DEFAULT_PERCENTILES, Direction, PolicyReport};
use crate::model::base::ids::CpuContext;
use crate::model::base::obs::RunObs;
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};
use std::ops::{Index, IndexMut};

/// A metric `--precision-metric` may name.
#[derive(Debug, Clone, Copy)]
pub struct Headline {
    /// The name `--precision-metric` accepts.
    pub name: &'static str,
    /// How the precision line calls it.
    pub label: &'static str,
}

/// One per-run metric.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// Stable identifier (the field name of older layouts): `read_p99_ms`.
    pub key: &'static str,
    /// How the summary and the exports name it.
    pub label: &'static str,
    /// Its unit (`ms`, `s`, or empty for counts and rates named in the label).
    pub unit: &'static str,
    /// Whether a lower value is the better one.
    pub lower_is_better: bool,
    /// Whether a precision target may apply to it, and under which name.
    pub headline: Option<Headline>,
    /// Whether the run's block shows it too: a `metrics` line in the text block and a key of
    /// `qsim.metrics` in the fio-JSON job (metrics the block already shows in their own line
    /// say no).
    pub in_block: bool,
    /// Whether `qsim run --plots` draws it as a bar chart of its own (`metric-<key>`: one bar
    /// per run, mean and 95 % CI over replications). The figures that already have a chart of
    /// their own (percentiles, stages, failures) say no.
    pub plot: bool,
    /// Whether `qsim run`'s text replication summary lists it. The detail rows added for
    /// `qsim reproduce` (clat mean and stdev, p1, p95, p99.5, MiB/s, slat, the 20 ms bucket,
    /// device utilisation) say no, to keep the summary to the headline figures; the CSV,
    /// Markdown and JSON exports and `qsim reproduce` carry every row.
    pub summary: bool,
    /// Its value in one run; NaN when the run did not measure it (no reads, no memory model,
    /// an unfinished finite job).
    pub read: fn(&Run) -> f64,
}

/// A run as a metric reads it: the model's observations and the block the report built from
/// them.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    /// What the model measured.
    pub obs: &'a RunObs,
    /// The report's block of those observations.
    pub block: &'a PolicyReport,
}

/// The read clat percentile `want` in ms (NaN without reads); the value of the fio block, so
/// the two never disagree.
fn read_clat_ms(p: &PolicyReport, want: f64) -> f64 {
    clat_ms(p, Direction::Read, want)
}

/// The clat percentile `want` of direction `dir` in ms (NaN without I/Os that way), from the
/// fio block.
fn clat_ms(p: &PolicyReport, dir: Direction, want: f64) -> f64 {
    let d = p.direction(dir);
    if d.ios == 0 {
        return f64::NAN;
    }
    DEFAULT_PERCENTILES
        .iter()
        .position(|&q| q == want)
        .and_then(|i| d.clat.percentiles_ns.get(i))
        .map_or(f64::NAN, |&ns| ns as f64 / 1e6)
}

/// The CPU time of context `ctx` over the measured window, in percent of one CPU, from the
/// per-CPU machine's accounts (kernels after 2.6.x); NaN on 2.6.x's shared CPU pool, which
/// keeps no accounts by CPU.
fn cpu_ctx_pct(obs: &RunObs, ctx: CpuContext) -> f64 {
    if obs.cpu_by_cpu.is_empty() {
        return f64::NAN;
    }
    obs.cpu_by_context[ctx.index()] * 100.0
}

/// Read plus write throughput, MiB/s.
fn total_mib_s(p: &PolicyReport) -> f64 {
    let bytes =
        p.direction(Direction::Read).bw_bytes_per_s + p.direction(Direction::Write).bw_bytes_per_s;
    bytes as f64 / (1024.0 * 1024.0)
}

/// A detail row: in the exports and the paired comparisons, not in the text summary, no
/// headline, no block line, no plot of its own.
const fn detail(
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    lower_is_better: bool,
    read: fn(&Run) -> f64,
) -> Metric {
    Metric {
        key,
        label,
        unit,
        lower_is_better,
        headline: None,
        in_block: false,
        plot: false,
        summary: false,
        read,
    }
}

/// The read clat mean (or, with `stddev`, its standard deviation) in ms; NaN without reads.
fn read_clat_moment_ms(p: &PolicyReport, stddev: bool) -> f64 {
    let read = p.direction(Direction::Read);
    match (read.ios, stddev) {
        (0, _) => f64::NAN,
        (_, false) => read.clat.mean_ns / 1e6,
        (_, true) => read.clat.stddev_ns / 1e6,
    }
}

/// kswapd's congestion-wait time on queue `class` (0 SYNC, 1 ASYNC), s; NaN without memory.
fn kswapd_cwait_s(p: &PolicyReport, class: usize) -> f64 {
    p.memory.as_ref().map_or(f64::NAN, |m| {
        m.kswapd_waits.class[class].total_ns as f64 / 1e9
    })
}

/// The registry, in the order the summary and the exports list the metrics.
pub const METRICS: &[Metric] = &[
    Metric {
        key: "elapsed_s",
        label: "elapsed",
        unit: "s",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: true,
        read: |r| r.block.elapsed_ns().map_or(f64::NAN, |ns| ns as f64 / 1e9),
    },
    Metric {
        key: "read_p50_ms",
        label: "read p50",
        unit: "ms",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: true,
        read: |r| read_clat_ms(r.block, 50.0),
    },
    Metric {
        key: "read_p99_ms",
        label: "read p99",
        unit: "ms",
        lower_is_better: true,
        headline: Some(Headline {
            name: "p99",
            label: "read p99",
        }),
        in_block: false,
        plot: false,
        summary: true,
        read: |r| read_clat_ms(r.block, 99.0),
    },
    Metric {
        key: "read_p999_ms",
        label: "read p99.9",
        unit: "ms",
        lower_is_better: true,
        headline: Some(Headline {
            name: "p99.9",
            label: "read p99.9",
        }),
        in_block: false,
        plot: false,
        summary: true,
        read: |r| read_clat_ms(r.block, 99.9),
    },
    Metric {
        key: "read_p9999_ms",
        label: "read p99.99",
        unit: "ms",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: true,
        read: |r| read_clat_ms(r.block, 99.99),
    },
    Metric {
        key: "read_mean_ms",
        label: "read mean",
        unit: "ms",
        lower_is_better: true,
        headline: Some(Headline {
            name: "mean",
            label: "read mean",
        }),
        in_block: false,
        plot: false,
        summary: true,
        read: |r| r.block.direction(Direction::Read).lat.mean_ns / 1e6,
    },
    Metric {
        key: "read_iops",
        label: "read IOPS",
        unit: "",
        lower_is_better: false,
        headline: None,
        in_block: false,
        plot: false,
        summary: true,
        read: |r| r.block.direction(Direction::Read).iops,
    },
    Metric {
        key: "write_mib_s",
        label: "write MiB/s",
        unit: "",
        lower_is_better: false,
        headline: None,
        in_block: false,
        plot: false,
        summary: true,
        read: |r| r.block.direction(Direction::Write).bw_bytes_per_s as f64 / (1024.0 * 1024.0),
    },
    Metric {
        key: "atomic_failures",
        label: "GFP_ATOMIC fails",
        unit: "",
        lower_is_better: true,
        headline: Some(Headline {
            name: "failures",
            label: "GFP_ATOMIC failures",
        }),
        in_block: false,
        plot: false,
        summary: true,
        read: |r| {
            r.block
                .memory
                .as_ref()
                .map_or(f64::NAN, |m| m.atomic_failures_total as f64)
        },
    },
    Metric {
        key: "kswapd_cwait_sync_s",
        label: "kswapd cwait sync",
        unit: "s",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: true,
        read: |r| kswapd_cwait_s(r.block, 0),
    },
    Metric {
        key: "kswapd_cwait_async_s",
        label: "kswapd cwait async",
        unit: "s",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: true,
        read: |r| kswapd_cwait_s(r.block, 1),
    },
    Metric {
        key: "read_clat_mean_ms",
        label: "read clat mean",
        unit: "ms",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: false,
        read: |r| read_clat_moment_ms(r.block, false),
    },
    Metric {
        key: "read_clat_stddev_ms",
        label: "read clat stdev",
        unit: "ms",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: false,
        read: |r| read_clat_moment_ms(r.block, true),
    },
    Metric {
        key: "read_p1_ms",
        label: "read p1",
        unit: "ms",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: false,
        read: |r| read_clat_ms(r.block, 1.0),
    },
    Metric {
        key: "read_p95_ms",
        label: "read p95",
        unit: "ms",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: false,
        read: |r| read_clat_ms(r.block, 95.0),
    },
    Metric {
        key: "read_p995_ms",
        label: "read p99.5",
        unit: "ms",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: false,
        read: |r| read_clat_ms(r.block, 99.5),
    },
    Metric {
        key: "read_mib_s",
        label: "read MiB/s",
        unit: "",
        lower_is_better: false,
        headline: None,
        in_block: false,
        plot: false,
        summary: false,
        read: |r| r.block.direction(Direction::Read).bw_bytes_per_s as f64 / (1024.0 * 1024.0),
    },
    Metric {
        key: "read_slat_mean_ms",
        label: "read slat mean",
        unit: "ms",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: false,
        read: |r| {
            let read = r.block.direction(Direction::Read);
            if read.ios == 0 {
                f64::NAN
            } else {
                read.slat.mean_ns / 1e6
            }
        },
    },
    Metric {
        key: "lat_20ms_pct",
        label: "lat 20ms bucket",
        unit: "%",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: false,
        read: |r| r.block.latency_pct.msec_pct[3],
    },
    Metric {
        key: "device_util_pct",
        label: "device util",
        unit: "%",
        lower_is_better: false,
        headline: None,
        in_block: false,
        plot: false,
        summary: false,
        read: |r| r.block.block.device_util_pct,
    },
    Metric {
        key: "swap_ins",
        label: "swap-ins",
        unit: "",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: true,
        read: |r| swap_figure(r.obs, |s| s.swap_ins as f64),
    },
    Metric {
        key: "major_fault_s",
        label: "major-fault time",
        unit: "s",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: true,
        read: |r| swap_figure(r.obs, |s| s.fault_time.as_ns() as f64 / 1e9),
    },
    Metric {
        key: "swap_outs",
        label: "swap-outs",
        unit: "",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: true,
        read: |r| swap_figure(r.obs, |s| s.swap_outs as f64),
    },
    Metric {
        key: "progress_gap_max_s",
        label: "longest progress gap",
        unit: "s",
        lower_is_better: true,
        headline: None,
        in_block: false,
        plot: false,
        summary: true,
        read: |r| {
            swap_figure(r.obs, |s| {
                s.procs
                    .iter()
                    .map(|p| p.max_gap_ns as f64 / 1e9)
                    .fold(f64::NAN, f64::max)
            })
        },
    },
    Metric {
        key: "app_cpu_pct",
        label: "app CPU",
        unit: "%",
        lower_is_better: false,
        headline: None,
        in_block: false,
        plot: false,
        summary: true,
        read: |r| r.obs.app_cpu_pct(),
    },
    detail("write_p50_ms", "write p50", "ms", true, |r| {
        clat_ms(r.block, Direction::Write, 50.0)
    }),
    detail("write_p99_ms", "write p99", "ms", true, |r| {
        clat_ms(r.block, Direction::Write, 99.0)
    }),
    detail("write_p999_ms", "write p99.9", "ms", true, |r| {
        clat_ms(r.block, Direction::Write, 99.9)
    }),
    detail("total_mib_s", "total MiB/s", "", false, |r| {
        total_mib_s(r.block)
    }),
    detail("cpu_softirq_pct", "CPU softirq", "%", true, |r| {
        cpu_ctx_pct(r.obs, CpuContext::Softirq)
    }),
    detail("cpu_kcryptd_pct", "CPU kcryptd", "%", true, |r| {
        cpu_ctx_pct(r.obs, CpuContext::Kcryptd)
    }),
    detail("cpu_kcryptd_io_pct", "CPU kcryptd_io", "%", true, |r| {
        cpu_ctx_pct(r.obs, CpuContext::KcryptdIo)
    }),
    detail(
        "cpu_dmcrypt_write_pct",
        "CPU dmcrypt_write",
        "%",
        true,
        |r| cpu_ctx_pct(r.obs, CpuContext::DmcryptWrite),
    ),
    detail("cpu_submitters_pct", "CPU submitters", "%", true, |r| {
        cpu_ctx_pct(r.obs, CpuContext::Submitter)
    }),
    detail("cpu_application_pct", "CPU application", "%", true, |r| {
        cpu_ctx_pct(r.obs, CpuContext::Application)
    }),
    detail(
        "cpu_idle_beside_waiting_pct",
        "CPU idle beside waiting threads",
        "%",
        true,
        |r| {
            if r.obs.cpu_by_cpu.is_empty() {
                f64::NAN
            } else {
                r.obs.cpu_idle_beside_waiting * 100.0
            }
        },
    ),
    detail(
        "atomic_failures_logged",
        "GFP_ATOMIC fails logged",
        "",
        true,
        |r| {
            r.obs
                .memory
                .as_ref()
                .map_or(f64::NAN, |m| m.atomic_failures_logged as f64)
        },
    ),
];

/// A figure of the run's anonymous memory and swap; NaN when the run modelled none.
fn swap_figure(obs: &RunObs, f: impl Fn(&crate::model::base::obs::SwapObs) -> f64) -> f64 {
    obs.memory
        .as_ref()
        .filter(|m| m.swap.is_active())
        .map_or(f64::NAN, |m| f(&m.swap))
}

/// Number of metrics in the registry.
pub const COUNT: usize = METRICS.len();

/// A metric's position in [`METRICS`], found by key at compile time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricId(pub usize);

impl MetricId {
    /// The metric whose key is `key`; a compile error (in a `const`) when there is none.
    pub const fn of(key: &str) -> MetricId {
        let mut i = 0;
        while i < COUNT {
            if str_eq(METRICS[i].key, key) {
                return MetricId(i);
            }
            i += 1;
        }
        panic!("no metric with this key in the registry")
    }

    /// The metric whose key is `key`, if the registry has one (at run time).
    pub fn of_key(key: &str) -> Option<MetricId> {
        METRICS.iter().position(|m| m.key == key).map(MetricId)
    }

    /// Its row of the registry.
    pub fn metric(self) -> &'static Metric {
        &METRICS[self.0]
    }

    /// Every metric with its id, in registry order.
    pub fn all() -> impl Iterator<Item = (MetricId, &'static Metric)> {
        METRICS.iter().enumerate().map(|(i, m)| (MetricId(i), m))
    }
}

/// `a == b` in a `const` context.
const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Elapsed time over the finite jobs, s.
pub const ELAPSED: MetricId = MetricId::of("elapsed_s");
/// GFP_ATOMIC failures, all orders.
pub const ATOMIC_FAILURES: MetricId = MetricId::of("atomic_failures");
/// kswapd's congestion-wait time on the SYNC then the ASYNC queue, s.
pub const KSWAPD_CWAIT: [MetricId; 2] = [
    MetricId::of("kswapd_cwait_sync_s"),
    MetricId::of("kswapd_cwait_async_s"),
];

/// The registry's metrics of one replication of one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    /// One value per row of [`METRICS`], in its order (NaN: not measured).
    pub values: [f64; COUNT],
    /// Finite fio job copies in the run: with none, elapsed is NaN because nothing is finite;
    /// with some, a NaN elapsed means unfinished.
    pub finite_jobs: u32,
}

impl Index<MetricId> for Metrics {
    type Output = f64;
    fn index(&self, id: MetricId) -> &f64 {
        &self.values[id.0]
    }
}

impl IndexMut<MetricId> for Metrics {
    fn index_mut(&mut self, id: MetricId) -> &mut f64 {
        &mut self.values[id.0]
    }
}

impl Serialize for Metrics {
    /// As an object keyed by [`Metric::key`], then `finite_jobs`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Metrics", COUNT + 1)?;
        for (m, v) in METRICS.iter().zip(&self.values) {
            s.serialize_field(m.key, v)?;
        }
        s.serialize_field("finite_jobs", &self.finite_jobs)?;
        s.end()
    }
}

impl Metrics {
    /// The metrics of one run's measurements, read with the block the report would show.
    pub fn of(obs: &RunObs) -> Metrics {
        super::policy_report(obs, &DEFAULT_PERCENTILES, &[]).metrics
    }

    /// The metrics of a run whose block was built with [`DEFAULT_PERCENTILES`].
    pub fn of_run(run: Run) -> Metrics {
        Metrics {
            values: std::array::from_fn(|i| (METRICS[i].read)(&run)),
            finite_jobs: u32::try_from(run.block.finite_jobs.len()).unwrap_or(u32::MAX),
        }
    }

    /// The rows of the registry the block shows ([`Metric::in_block`]) with their values.
    pub fn in_block(&self) -> impl Iterator<Item = (&'static Metric, f64)> + '_ {
        METRICS
            .iter()
            .zip(&self.values)
            .filter(|(m, _)| m.in_block)
            .map(|(m, &v)| (m, v))
    }

    /// A test fixture: read percentiles scaled from `p99_ms`, fixed mean, IOPS and write rate;
    /// every other metric NaN.
    #[cfg(test)]
    pub(crate) fn with_read_p99(p99_ms: f64) -> Metrics {
        let mut x = Metrics::nan();
        for (key, v) in [
            ("read_p50_ms", 1.0),
            ("read_p99_ms", p99_ms),
            ("read_p999_ms", 2.0 * p99_ms),
            ("read_p9999_ms", 3.0 * p99_ms),
            ("read_mean_ms", 1.5),
            ("read_iops", 100.0),
            ("write_mib_s", 5.0),
        ] {
            x[MetricId::of(key)] = v;
        }
        x
    }

    /// Every metric NaN ("not measured"): a starting point for tests.
    pub fn nan() -> Metrics {
        Metrics {
            values: [f64::NAN; COUNT],
            finite_jobs: 0,
        }
    }
}

/// The number of metrics a precision target may apply to.
const fn headline_count() -> usize {
    let (mut i, mut n) = (0, 0);
    while i < COUNT {
        if METRICS[i].headline.is_some() {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The names `--precision-metric` accepts, in registry order.
pub const HEADLINE_NAMES: [&str; headline_count()] = {
    let mut names = [""; headline_count()];
    let (mut i, mut n) = (0, 0);
    while i < COUNT {
        if let Some(h) = METRICS[i].headline {
            names[n] = h.name;
            n += 1;
        }
        i += 1;
    }
    names
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_ids_find_their_row() {
        for (i, m) in METRICS.iter().enumerate() {
            assert_eq!(MetricId::of(m.key), MetricId(i));
        }
        assert_eq!(ELAPSED.metric().label, "elapsed");
        assert_eq!(KSWAPD_CWAIT[1].metric().label, "kswapd cwait async");
        assert_eq!(HEADLINE_NAMES, ["p99", "p99.9", "mean", "failures"]);
    }

    #[test]
    fn a_run_reads_as_its_block_shows_it() {
        let run = super::super::tests::run_with_memory("fifo");
        let m = Metrics::of(&run);
        let block = super::super::policy_report(&run, &DEFAULT_PERCENTILES, &[]);
        let read = block.direction(Direction::Read);
        assert_eq!(
            m[MetricId::of("read_p99_ms")],
            read.clat.percentiles_ns[12] as f64 / 1e6
        );
        assert_eq!(m[ATOMIC_FAILURES], 37.0);
        assert_eq!(m[KSWAPD_CWAIT[1]], 4.1);
        assert!(m[ELAPSED].is_nan() && m.finite_jobs == 0);
        // Serialised by key, in registry order.
        let v = serde_json::to_value(m).unwrap();
        assert_eq!(v["atomic_failures"], 37.0);
        assert_eq!(v["finite_jobs"], 0);
        // Without a memory model, the memory metrics are not measured.
        let plain = Metrics::of(&super::super::tests::run(
            "fifo",
            crate::model::base::obs::RunEnd::Horizon,
        ));
        assert!(plain[ATOMIC_FAILURES].is_nan() && plain[KSWAPD_CWAIT[0]].is_nan());
    }
}
