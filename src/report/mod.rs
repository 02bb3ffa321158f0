//! The report: one [`Report`] built from a scenario and its runs, and the renderers that write
//! it out (fio-style text in [`text`], fio-compatible JSON and qsim's own schema in [`json`]).
//!
//! The report holds numbers only (nanoseconds, bytes, percentages, counts), never formatted
//! strings, so every renderer (and `qsim plot`, reading the JSON) sees the same values and picks
//! its own units. Percentiles are fio histogram bucket midpoints (see [`crate::stats::histogram`]).

pub mod export;
pub mod fiofmt;
pub mod invariants;
pub mod json;
pub mod metrics;
pub mod plan;
pub mod plots;
pub mod precision;
pub mod replications;
pub mod spread;
pub mod text;

use crate::model::observe::{
    CallerWaits, DirectionObs, FiniteJobObs, MemoryObs, PageStates, RunEnd, RunObs, Stage,
};
use crate::scenario::{Arrivals, RwKind, Scenario, WorkloadKind};
use crate::stats::histogram::{CLIP_NS, LAT_M_NR, LAT_N_NR, LAT_U_NR};
use crate::stats::{Histogram, Running};
use serde::Serialize;

/// Version of the serialised [`Report`] layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// fio's default percentile list (`percentile_list`): 17 entries.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Decimals fio prints for [`DEFAULT_PERCENTILES`] (the most any entry needs).
pub const PERCENTILE_PRECISION: usize = 2;

/// Everything the renderers need about one scenario's runs.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Layout version of this structure ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// qsim version that produced it (`CARGO_PKG_VERSION`).
    pub qsim_version: String,
    /// Scenario name.
    pub scenario: String,
    /// Scenario description (may be empty).
    pub description: String,
    /// Master seed.
    pub seed: u64,
    /// Replications pooled into each block (the most of any run, when variants differ).
    pub replications: u32,
    /// Simulated run length including warm-up, ns.
    pub duration_ns: u64,
    /// Warm-up excluded from every statistic, ns.
    pub warmup_ns: u64,
    /// Event budget per run.
    pub max_events: u64,
    /// Jobs in fio's sense: fio `numjobs` summed over fio workloads, plus one per buffered writer.
    pub jobs: u32,
    /// fio job options describing the workload, for fio's JSON and fio-plot.
    pub job_options: JobOptions,
    /// Percentiles listed in each direction's `percentiles` (ascending).
    pub percentile_list: Vec<f64>,
    /// The scenario's variants with the policies each ran, in run order (empty without
    /// variants).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VariantSummary>,
    /// One entry per run: per policy in scenario order; with variants, per variant and policy,
    /// variant-major.
    pub policies: Vec<PolicyReport>,
    /// One row per policy, in the same order: the headline numbers side by side.
    pub comparison: Vec<ComparisonRow>,
    /// Conditions the reader must know about, in policy order.
    pub warnings: Vec<Warning>,
}

/// One variant of the scenario and the policies it ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantSummary {
    /// The variant's name.
    pub name: String,
    /// Its policies, in run order.
    pub policies: Vec<String>,
}

/// Which variant and policy a run of a scenario with variants used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunVariant {
    /// The variant's name.
    pub name: String,
    /// The policy's name.
    pub policy: String,
}

/// The fio options fio-plot selects files by, taken from the scenario's first fio workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobOptions {
    /// fio `rw` (`read`, `write`, `randread`, `randwrite`, `randrw`).
    pub rw: String,
    /// Block size, bytes.
    pub bs_bytes: u64,
    /// I/Os in flight per job.
    pub iodepth: u32,
    /// Copies of the job.
    pub numjobs: u32,
}

/// I/O direction of a fio section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Reads.
    Read,
    /// Writes.
    Write,
}

impl Direction {
    /// fio's name for the direction (`read`, `write`).
    pub fn name(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
        }
    }
}

/// Measurements of one policy's run.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyReport {
    /// Policy name; with variants, the run's label (`<variant>` or `<variant>/<policy>`).
    pub policy: String,
    /// The variant and policy of the run (only when the scenario has variants).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<RunVariant>,
    /// How the run ended.
    pub end: RunEnd,
    /// Length of the measured window, ns.
    pub measured_ns: u64,
    /// Simulated time at which the run ended, ns: the horizon, or earlier when every finite job
    /// was done or the work budget ran out.
    pub end_ns: u64,
    /// Each copy of each finite fio job (`io_size`, `number_ios`), in job order; empty when
    /// every job runs until the end.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub finite_jobs: Vec<FiniteJobReport>,
    /// The measured window in whole milliseconds as fio's `runtime` (at least 1 when any I/O
    /// completed, so rates stay finite).
    pub runtime_ms: u64,
    /// Events the engine processed.
    pub events: u64,
    /// Read section, then write section (always both; a renderer skips one without I/Os).
    pub directions: Vec<DirectionReport>,
    /// clat shares of all completed I/Os per fio latency bucket (the `lat (usec)` lines).
    pub latency_pct: LatencyShares,
    /// Submissions per fio depth bucket (1, 2, 4, 8, 16, 32, >=64), percent.
    pub depth_pct: [f64; 7],
    /// `congestion_wait` on the SYNC queue, then the ASYNC queue.
    pub congestion: Vec<CongestionReport>,
    /// Share of all congestion waits that ended early because congestion cleared, percent.
    pub congestion_early_pct: f64,
    /// Block-layer counters.
    pub block: BlockReport,
    /// Writer-side counters.
    pub writeback: WritebackReport,
    /// The memory model's measurements (only with a `memory:` section).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryReport>,
    /// Utilisation of the CPU pool over the measured window, percent.
    pub cpu_util_pct: f64,
    /// Time-average crypt queue length.
    pub crypt_queue_len_avg: f64,
    /// Largest crypt queue length seen.
    pub crypt_queue_len_max: u64,
    /// Latency samples at or above the histogram's top (2^34 ns), summed over slat/clat/lat of
    /// both directions.
    pub clipped: u64,
    /// Replications pooled into this block: counts and the measured window are their sums.
    pub replications: u32,
    /// The single-valued figures' mean ± σ across replications (with two or more).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<spread::RunSpread>,
}

impl PolicyReport {
    /// Whether the run stopped on its work budget.
    pub fn saturated(&self) -> bool {
        self.end == RunEnd::Saturated
    }
    /// The run's elapsed time, ns: from the earliest start of its finite jobs to the last
    /// completion of the last one. `None` without finite jobs or when one is unfinished.
    pub fn elapsed_ns(&self) -> Option<u64> {
        let start = self.finite_jobs.iter().map(|j| j.start_ns).min()?;
        let mut end = start;
        for j in &self.finite_jobs {
            end = end.max(j.start_ns + j.elapsed_ns?);
        }
        Some(end - start)
    }
    /// The section for `dir`.
    pub fn direction(&self, dir: Direction) -> &DirectionReport {
        match dir {
            Direction::Read => &self.directions[0],
            Direction::Write => &self.directions[1],
        }
    }
}

/// One copy of a finite fio job: its work and its elapsed time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FiniteJobReport {
    /// The workload's name, with `.<copy>` when it has several copies.
    pub name: String,
    /// Its start (`startdelay`), ns since the run's start.
    pub start_ns: u64,
    /// From its start to its last completion, ns; `None` (JSON `null`) when unfinished.
    pub elapsed_ns: Option<u64>,
    /// I/Os it completed, warm-up included.
    pub ios: u64,
    /// Bytes of those I/Os.
    pub bytes: u64,
    /// Its `io_size`, bytes (`None`: no limit).
    pub io_size: Option<u64>,
    /// Its `number_ios` (`None`: no limit).
    pub number_ios: Option<u64>,
}

impl From<&FiniteJobObs> for FiniteJobReport {
    fn from(j: &FiniteJobObs) -> Self {
        FiniteJobReport {
            name: j.name.clone(),
            start_ns: j.start.as_ns(),
            elapsed_ns: j.elapsed_ns,
            ios: j.ios,
            bytes: j.bytes,
            io_size: j.io_size,
            number_ios: j.number_ios,
        }
    }
}

/// One direction's fio numbers.
#[derive(Debug, Clone, Serialize)]
pub struct DirectionReport {
    /// Which direction.
    pub direction: Direction,
    /// Completed I/Os in the measured window.
    pub ios: u64,
    /// Bytes of those I/Os.
    pub bytes: u64,
    /// I/Os issued in the measured window.
    pub issued: u64,
    /// Open-loop arrivals dropped at the `iodepth` cap.
    pub dropped: u64,
    /// fio's `runtime` for this direction, ms (0 when the direction has no I/O).
    pub runtime_ms: u64,
    /// Bandwidth, bytes per second, fio's integer `1000 * bytes / runtime_ms`.
    pub bw_bytes_per_s: u64,
    /// I/Os per second, `1000 * ios / runtime_ms`.
    pub iops: f64,
    /// Submission latency.
    pub slat: LatencySummary,
    /// Completion latency, with percentiles and histogram bins.
    pub clat: LatencySummary,
    /// Total latency, with percentiles (fio's `lat_percentiles=1`).
    pub lat: LatencySummary,
    /// Bandwidth over 500 ms samples, KiB/s.
    pub bw_kib_s: SampleSummary,
    /// fio's `per=`: mean sampled bandwidth as a share of the group's aggregate, percent.
    pub bw_agg_pct: f64,
    /// IOPS over 500 ms samples.
    pub iops_samples: SampleSummary,
    /// Where the time went, one entry per [`Stage`] in report order (memory-model stages only
    /// when the memory model ran or recorded time in them).
    pub stages: Vec<StageReport>,
}

/// Summary of one latency histogram.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LatencySummary {
    /// Samples.
    pub n: u64,
    /// Smallest sample, ns (exact).
    pub min_ns: u64,
    /// Largest sample, ns (exact).
    pub max_ns: u64,
    /// Mean, ns (exact).
    pub mean_ns: f64,
    /// Sample standard deviation, ns.
    pub stddev_ns: f64,
    /// Values for [`Report::percentile_list`], in that order (empty when not computed or n = 0).
    pub percentiles_ns: Vec<u64>,
    /// Non-zero histogram buckets as (bucket value ns, count) (empty unless kept for json+).
    pub bins: Vec<(u64, u64)>,
}

impl LatencySummary {
    fn from_histogram(h: &Histogram, percentiles: Option<&[f64]>, bins: bool) -> Self {
        LatencySummary {
            n: h.count(),
            min_ns: h.min(),
            max_ns: h.max(),
            mean_ns: h.mean(),
            stddev_ns: h.stddev(),
            percentiles_ns: match percentiles {
                Some(ps) if !h.is_empty() => h.percentiles(ps),
                _ => Vec::new(),
            },
            bins: if bins { h.bins().collect() } else { Vec::new() },
        }
    }
}

/// Summary of per-interval samples (bandwidth or IOPS).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SampleSummary {
    /// Number of samples.
    pub samples: u64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub stddev: f64,
}

impl From<&Running> for SampleSummary {
    fn from(r: &Running) -> Self {
        SampleSummary {
            samples: r.count(),
            min: r.min(),
            max: r.max(),
            mean: r.mean(),
            stddev: r.stddev(),
        }
    }
}

/// Time spent in one stage by one direction's I/Os.
#[derive(Debug, Clone, Serialize)]
pub struct StageReport {
    /// The stage.
    pub stage: Stage,
    /// Its label ([`Stage::label`]).
    pub label: String,
    /// Samples recorded for the stage.
    pub n: u64,
    /// Mean time in the stage per sample, ns.
    pub mean_ns: f64,
    /// 99th percentile, ns (bucket midpoint).
    pub p99_ns: u64,
    /// Total time in the stage as a share of total latency (sum over I/Os), percent.
    pub share_pct: f64,
}

/// clat shares per fio latency bucket, percent of all completed I/Os (non-zero shares below
/// 0.01% are raised to 0.01%, as fio does).
#[derive(Debug, Clone, Default, Serialize)]
pub struct LatencyShares {
    /// Buckets `2 4 10 20 50 100 250 500 750 1000` ns.
    pub nsec_pct: [f64; LAT_N_NR],
    /// The same labels in µs.
    pub usec_pct: [f64; LAT_U_NR],
    /// The same labels in ms, then `2000` and `>=2000`.
    pub msec_pct: [f64; LAT_M_NR],
}

/// `congestion_wait` on one class's queue.
#[derive(Debug, Clone, Serialize)]
pub struct CongestionReport {
    /// `sync` or `async`.
    pub class: String,
    /// Waits started.
    pub waits: u64,
    /// Waits woken early because congestion cleared.
    pub woken_early: u64,
    /// Total time slept, ns.
    pub total_ns: u64,
}

/// Block-layer counters of the disk.
#[derive(Debug, Clone, Serialize)]
pub struct BlockReport {
    /// Time the SYNC and ASYNC classes spent congested, ns.
    pub congested_ns: [u64; 2],
    /// Request-pool sleeps per class (SYNC, ASYNC).
    pub pool_sleeps: [u64; 2],
    /// Congestion clears per class (SYNC, ASYNC).
    pub clears: [u64; 2],
    /// Unplugs by the unplug timer.
    pub timer_unplugs: u64,
    /// Unplugs by reaching the unplug threshold.
    pub threshold_unplugs: u64,
    /// Requests dispatched to the device.
    pub dispatched: u64,
    /// Device busy time, ns.
    pub device_busy_ns: u64,
    /// Device busy time over the measured window, percent (at most 100).
    pub device_util_pct: f64,
}

/// Buffered-writer counters.
#[derive(Debug, Clone, Serialize)]
pub struct WritebackReport {
    /// Bytes dirtied by buffered writers.
    pub dirtied_bytes: u64,
    /// Bytes written back.
    pub written_back_bytes: u64,
    /// Time writers spent throttled, ns.
    pub throttled_ns: u64,
}

/// What the memory model measured in one run ([`MemoryObs`] in report units: durations in ns,
/// the stall histogram summarised). Counters cover the measured window.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryReport {
    /// Pages in the zone.
    pub total_pages: u64,
    /// The zone's `min` mark, pages.
    pub min: u64,
    /// `low` mark, pages.
    pub low: u64,
    /// `high` mark, pages.
    pub high: u64,
    /// The order-0 GFP_ATOMIC floor, pages.
    pub atomic_floor: u64,
    /// GFP_ATOMIC allocations attempted, by order (index = order).
    pub atomic_attempts: Vec<u64>,
    /// GFP_ATOMIC allocations that failed, by order.
    pub atomic_failures: Vec<u64>,
    /// Sum over failures of the free pages at the failure, by order.
    pub atomic_fail_free_sum: Vec<u64>,
    /// Mean free pages at a failure, by order (0 for an order without failures).
    pub atomic_fail_free_avg: Vec<f64>,
    /// GFP_ATOMIC allocations attempted, all orders.
    pub atomic_attempts_total: u64,
    /// GFP_ATOMIC failures, all orders.
    pub atomic_failures_total: u64,
    /// GFP_ATOMIC failures per second of the measured window.
    pub atomic_failures_per_s: f64,
    /// The first failures, as the kernel would log them.
    pub failure_log: Vec<AllocFailureReport>,
    /// Times kswapd was woken.
    pub kswapd_wakeups: u64,
    /// Time kswapd was awake, ns.
    pub kswapd_awake_ns: u64,
    /// That time as a share of the measured window, percent.
    pub kswapd_awake_pct: f64,
    /// Balance passes (`pageoutrun`).
    pub kswapd_passes: u64,
    /// kswapd's congestion waits.
    pub kswapd_waits: CallerWaitsReport,
    /// Congestion waits kswapd skipped below min (`kswapd_skip_congestion_wait`).
    pub kswapd_skips: u64,
    /// `kswapd_low_wmark_hit_quickly`.
    pub low_wmark_hit_quickly: u64,
    /// `kswapd_high_wmark_hit_quickly`.
    pub high_wmark_hit_quickly: u64,
    /// Sweeps that fell back to order 0.
    pub order0_fallbacks: u64,
    /// Pages kswapd scanned.
    pub kswapd_scanned: u64,
    /// Pages kswapd freed.
    pub kswapd_reclaimed: u64,
    /// Direct-reclaim stalls (`allocstall`).
    pub direct_stalls: u64,
    /// Length of the stalls.
    pub direct_stall: StallSummary,
    /// Direct reclaimers' and the allocator's congestion waits.
    pub direct_waits: CallerWaitsReport,
    /// Pages direct reclaim scanned.
    pub direct_scanned: u64,
    /// Pages direct reclaim freed.
    pub direct_reclaimed: u64,
    /// Dirty pages reclaim sent to writeback.
    pub pageout_pages: u64,
    /// Bounce pages from the zone on the mempool's first try.
    pub bounce_from_zone: u64,
    /// Bounce pages from the `page_pool` reserve.
    pub bounce_from_reserve: u64,
    /// Sleeps on the empty `page_pool`.
    pub mempool_waits: u64,
    /// Time slept on the `page_pool`, ns.
    pub mempool_wait_ns: u64,
    /// Partial write clones (each followed by an HZ/100 nap).
    pub partial_clones: u64,
    /// Time in those naps, ns.
    pub partial_nap_ns: u64,
    /// Fewest free pages seen.
    pub free_min_seen: u64,
    /// Time-average of free pages.
    pub free_avg: f64,
    /// Time below `min`, ns.
    pub below_min_ns: u64,
    /// That time as a share of the measured window, percent.
    pub below_min_pct: f64,
    /// Page states at the end of the run.
    pub end_pages: PageStates,
    /// Free pages at the end (the zone's total less [`PageStates::total`]).
    pub end_free: u64,
}

/// One GFP_ATOMIC failure of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AllocFailureReport {
    /// Simulated time since the start (warm-up included), ns.
    pub at_ns: u64,
    /// Allocation order.
    pub order: u32,
    /// Free pages at that moment.
    pub free: u64,
}

/// One kind of caller's congestion waits.
#[derive(Debug, Clone, Serialize)]
pub struct CallerWaitsReport {
    /// The SYNC queue, then the ASYNC queue.
    pub class: Vec<CongestionReport>,
    /// Share of the waits that ended early because congestion cleared, percent.
    pub early_pct: f64,
    /// `wait_iff_congested` calls that returned at once.
    pub skipped: u64,
}

/// Summary of the direct-reclaim stall lengths (fio bucket midpoints for percentiles).
#[derive(Debug, Clone, Default, Serialize)]
pub struct StallSummary {
    /// Stalls recorded.
    pub n: u64,
    /// Their total length, ns.
    pub total_ns: u64,
    /// Shortest, ns.
    pub min_ns: u64,
    /// Longest, ns.
    pub max_ns: u64,
    /// Mean, ns.
    pub mean_ns: f64,
    /// Sample standard deviation, ns.
    pub stddev_ns: f64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p99_9_ns: u64,
}

/// One policy's headline numbers for the comparison table.
#[derive(Debug, Clone, Serialize)]
pub struct ComparisonRow {
    /// Policy name.
    pub policy: String,
    /// Whether the run stopped at its work budget (the key keeps its old name).
    pub saturated: bool,
    /// Read clat median, ns (`None` without reads).
    pub read_clat_ns_p50: Option<u64>,
    /// Read clat 99th percentile, ns.
    pub read_clat_ns_p99: Option<u64>,
    /// Read clat 99.9th percentile, ns.
    pub read_clat_ns_p99_9: Option<u64>,
    /// Read clat 99.99th percentile, ns.
    pub read_clat_ns_p99_99: Option<u64>,
    /// Read I/Os per second.
    pub read_iops: f64,
    /// Write throughput, MiB/s.
    pub write_mib_s: f64,
    /// Memory headline numbers (only with a memory model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryComparison>,
}

/// A run's memory headline numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryComparison {
    /// GFP_ATOMIC failures, all orders.
    pub atomic_failures: u64,
    /// kswapd's congestion-wait time on the SYNC and the ASYNC queue, ns.
    pub kswapd_cwait_ns: [u64; 2],
    /// Direct-reclaim stalls.
    pub direct_stalls: u64,
    /// Fewest free pages seen.
    pub free_min_seen: u64,
}

/// Something the reader must know before trusting a block.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Warning {
    /// The run used up its work budget (`max_events`: events plus allocation attempts and
    /// reclaim scanning) before the horizon, so the figures cover a shortened window. This
    /// bounds the simulation's cost; it is not by itself a sign of overload.
    WorkBudget {
        /// Policy concerned.
        policy: String,
        /// Measured window actually covered, ns.
        measured_ns: u64,
        /// Measured window the scenario asked for (duration − warm-up), ns.
        planned_ns: u64,
        /// The scenario's work budget.
        max_events: u64,
    },
    /// The wall-clock safety valve (`qsim run --time-limit`) stopped the run: the figures
    /// cover a window that depends on the machine's speed and do not reproduce.
    TimeLimit {
        /// Policy concerned.
        policy: String,
        /// Measured window covered (mean over replications), ns.
        measured_ns: u64,
        /// Measured window the scenario asked for (duration − warm-up), ns.
        planned_ns: u64,
    },
    /// Open-loop arrivals found their job at its `iodepth` cap and were dropped: the offered load
    /// exceeds what this policy serves, so the queue would grow without bound.
    Overloaded {
        /// Policy concerned.
        policy: String,
        /// Arrivals dropped in the measured window.
        dropped: u64,
        /// Arrivals issued in the measured window.
        issued: u64,
    },
    /// A finite job had not completed its I/O when the run reached its horizon: its elapsed
    /// time is unknown, not the duration.
    Unfinished {
        /// Policy concerned.
        policy: String,
        /// The job (`name` or `name.copy`).
        job: String,
        /// When the run ended, ns.
        end_ns: u64,
        /// I/Os it completed.
        ios: u64,
        /// Bytes it completed.
        bytes: u64,
        /// Its `io_size` (`None`: no limit).
        io_size: Option<u64>,
        /// Its `number_ios` (`None`: no limit).
        number_ios: Option<u64>,
    },
    /// Latencies at or above the histogram's top landed in its last bucket.
    HistogramClipped {
        /// Policy concerned.
        policy: String,
        /// Samples clipped.
        count: u64,
        /// The histogram's top, ns.
        limit_ns: u64,
    },
}

impl Report {
    /// Builds the report from the scenario and one run per entry of its
    /// [`plan`](plan::plan), in that order (one per policy without variants).
    pub fn new(scenario: &Scenario, runs: &[RunObs]) -> Report {
        let plan = plan::plan(scenario);
        debug_assert_eq!(runs.len(), plan.len(), "one run per planned run");
        let percentile_list = DEFAULT_PERCENTILES.to_vec();
        let stages = shown_stages(runs);
        let policies: Vec<PolicyReport> = runs
            .iter()
            .enumerate()
            .map(|(i, run)| {
                let mut p = policy_report(run, &percentile_list, &stages);
                p.variant = plan.get(i).and_then(|planned| {
                    planned.variant.map(|name| RunVariant {
                        name: name.to_string(),
                        policy: planned.policy.to_string(),
                    })
                });
                p
            })
            .collect();
        let comparison = policies
            .iter()
            .map(|p| comparison_row(p, &percentile_list))
            .collect();
        let variants = scenario
            .variants
            .iter()
            .map(|v| VariantSummary {
                name: v.name.clone(),
                policies: v.scenario.policies.clone(),
            })
            .collect();
        let mut warnings = Vec::new();
        for (i, p) in policies.iter().enumerate() {
            // A variant may change the duration, warm-up or event budget.
            let sc = plan.get(i).map_or(scenario, |planned| planned.scenario);
            if p.saturated() {
                warnings.push(Warning::WorkBudget {
                    policy: p.policy.clone(),
                    // One replication's window, comparable with the planned one.
                    measured_ns: p.measured_ns / u64::from(p.replications.max(1)),
                    planned_ns: sc.duration.as_ns().saturating_sub(sc.warmup.as_ns()),
                    max_events: sc.max_events,
                });
            }
            if p.end == RunEnd::TimeLimit {
                warnings.push(Warning::TimeLimit {
                    policy: p.policy.clone(),
                    measured_ns: p.measured_ns / u64::from(p.replications.max(1)),
                    planned_ns: sc.duration.as_ns().saturating_sub(sc.warmup.as_ns()),
                });
            }
            let dropped: u64 = p.directions.iter().map(|d| d.dropped).sum();
            if dropped > 0 {
                warnings.push(Warning::Overloaded {
                    policy: p.policy.clone(),
                    dropped,
                    issued: p.directions.iter().map(|d| d.issued).sum(),
                });
            }
            for j in p.finite_jobs.iter().filter(|j| j.elapsed_ns.is_none()) {
                warnings.push(Warning::Unfinished {
                    policy: p.policy.clone(),
                    job: j.name.clone(),
                    end_ns: p.end_ns,
                    ios: j.ios,
                    bytes: j.bytes,
                    io_size: j.io_size,
                    number_ios: j.number_ios,
                });
            }
            if p.clipped > 0 {
                warnings.push(Warning::HistogramClipped {
                    policy: p.policy.clone(),
                    count: p.clipped,
                    limit_ns: CLIP_NS,
                });
            }
        }
        Report {
            schema_version: SCHEMA_VERSION,
            qsim_version: env!("CARGO_PKG_VERSION").to_string(),
            scenario: scenario.name.clone(),
            description: scenario.description.clone(),
            seed: scenario.seed,
            replications: policies.iter().map(|p| p.replications).max().unwrap_or(1),
            duration_ns: scenario.duration.as_ns(),
            warmup_ns: scenario.warmup.as_ns(),
            max_events: scenario.max_events,
            jobs: job_count(scenario),
            job_options: job_options(scenario),
            percentile_list,
            variants,
            policies,
            comparison,
            warnings,
        }
    }
}

/// The stages "where the time went" lists: all of [`Stage::ALL`] but those only the memory model
/// fills ([`Stage::needs_memory_model`]) when no run has a memory model and all their time is
/// zero (the model may still count zero-length samples), so a report without `memory:` is the same as before those stages existed.
fn shown_stages(runs: &[RunObs]) -> Vec<Stage> {
    let any_memory = runs.iter().any(|r| r.memory.is_some());
    Stage::ALL
        .into_iter()
        .filter(|&stage| {
            !stage.needs_memory_model()
                || any_memory
                || runs
                    .iter()
                    .flat_map(|r| &r.dirs)
                    .any(|d| d.stages.get(stage.index()).is_some_and(|h| h.sum() > 0))
        })
        .collect()
}

/// fio's `rw` spelling.
fn rw_name(rw: RwKind) -> &'static str {
    match rw {
        RwKind::Read => "read",
        RwKind::Write => "write",
        RwKind::RandRead => "randread",
        RwKind::RandWrite => "randwrite",
        RwKind::RandRw => "randrw",
    }
}

/// Options of the first fio workload; failing that, a buffered writer reads as a sequential
/// writer at depth 1 with its writeback chunk as block size; with no workload at all, 4 KiB
/// reads at depth 1.
fn job_options(scenario: &Scenario) -> JobOptions {
    let fio = scenario.workloads.iter().find_map(|w| match &w.kind {
        WorkloadKind::Fio(job) => Some(job),
        WorkloadKind::BufferedWriter(_) => None,
    });
    if let Some(job) = fio {
        let iodepth = match job.arrivals {
            Arrivals::Closed { iodepth, .. } | Arrivals::Open { iodepth, .. } => iodepth,
        };
        return JobOptions {
            rw: rw_name(job.rw).to_string(),
            bs_bytes: job.bs,
            iodepth,
            numjobs: job.numjobs,
        };
    }
    let writer = scenario.workloads.iter().find_map(|w| match &w.kind {
        WorkloadKind::BufferedWriter(b) => Some(b),
        WorkloadKind::Fio(_) => None,
    });
    match writer {
        Some(b) => JobOptions {
            rw: "write".to_string(),
            bs_bytes: b.chunk,
            iodepth: 1,
            numjobs: 1,
        },
        None => JobOptions {
            rw: "read".to_string(),
            bs_bytes: 4096,
            iodepth: 1,
            numjobs: 1,
        },
    }
}

/// fio `numjobs` over fio workloads plus one per buffered writer; at least 1.
fn job_count(scenario: &Scenario) -> u32 {
    let n: u32 = scenario
        .workloads
        .iter()
        .map(|w| match &w.kind {
            WorkloadKind::Fio(job) => job.numjobs,
            WorkloadKind::BufferedWriter(_) => 1,
        })
        .sum();
    n.max(1)
}

/// fio's `stat_calc_lat` / `stat_calc_dist` share: `count / total` in percent, with non-zero
/// shares below `floor` raised to it.
fn share_pct(count: u64, total: u64, floor: f64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let pct = count as f64 / total as f64 * 100.0;
    if count > 0 && pct < floor { floor } else { pct }
}

pub(crate) fn policy_report(
    run: &RunObs,
    percentile_list: &[f64],
    stages: &[Stage],
) -> PolicyReport {
    let measured_ns = run.measured.as_ns();
    let any_io = run.dirs.iter().any(|d| d.ios > 0);
    let runtime_ms = match measured_ns / 1_000_000 {
        0 if any_io => 1,
        ms => ms,
    };
    let directions: Vec<DirectionReport> = [Direction::Read, Direction::Write]
        .into_iter()
        .zip(&run.dirs)
        .map(|(dir, obs)| direction_report(dir, obs, runtime_ms, percentile_list, stages))
        .collect();

    // fio divides the coarse latency counts by all I/Os of the job; qsim uses completed ones.
    let completed: u64 = run.dirs.iter().map(|d| d.ios).sum();
    let total = if completed > 0 {
        completed
    } else {
        run.clat_all.count()
    };
    let counts = run.clat_all.lat_bucket_counts();
    let mut latency_pct = LatencyShares::default();
    for (i, &c) in counts.iter().enumerate() {
        let pct = share_pct(c, total, 0.01);
        if i < LAT_N_NR {
            latency_pct.nsec_pct[i] = pct;
        } else if i < LAT_N_NR + LAT_U_NR {
            latency_pct.usec_pct[i - LAT_N_NR] = pct;
        } else {
            latency_pct.msec_pct[i - LAT_N_NR - LAT_U_NR] = pct;
        }
    }

    let depth_total: u64 = run.depth_buckets.iter().sum();
    let mut depth_pct = [0.0; 7];
    for (out, &c) in depth_pct.iter_mut().zip(&run.depth_buckets) {
        *out = share_pct(c, depth_total, 0.1);
    }

    let congestion: Vec<CongestionReport> = ["sync", "async"]
        .into_iter()
        .zip(&run.congestion_waits)
        .map(|(class, c)| CongestionReport {
            class: class.to_string(),
            waits: c.waits,
            woken_early: c.woken_early,
            total_ns: c.total.as_ns(),
        })
        .collect();
    let waits: u64 = congestion.iter().map(|c| c.waits).sum();
    let early: u64 = congestion.iter().map(|c| c.woken_early).sum();

    let b = &run.block;
    let device_util_pct = if measured_ns == 0 {
        0.0
    } else {
        (b.device_busy.as_ns() as f64 / measured_ns as f64 * 100.0).min(100.0)
    };
    let clipped = run
        .dirs
        .iter()
        .map(|d| d.slat.clipped() + d.clat.clipped() + d.lat.clipped())
        .sum();

    PolicyReport {
        policy: run.policy.clone(),
        variant: None,
        end: run.end,
        measured_ns,
        end_ns: run.ended.as_ns(),
        finite_jobs: run.finite_jobs.iter().map(FiniteJobReport::from).collect(),
        runtime_ms,
        events: run.events,
        directions,
        latency_pct,
        depth_pct,
        congestion,
        congestion_early_pct: share_pct(early, waits, 0.0),
        block: BlockReport {
            congested_ns: [b.congested[0].as_ns(), b.congested[1].as_ns()],
            pool_sleeps: b.pool_sleeps,
            clears: b.clears,
            timer_unplugs: b.timer_unplugs,
            threshold_unplugs: b.threshold_unplugs,
            dispatched: b.dispatched,
            device_busy_ns: b.device_busy.as_ns(),
            device_util_pct,
        },
        writeback: WritebackReport {
            dirtied_bytes: run.writeback.dirtied_bytes,
            written_back_bytes: run.writeback.written_back_bytes,
            throttled_ns: run.writeback.throttled.as_ns(),
        },
        memory: run.memory.as_deref().map(|m| memory_report(m, measured_ns)),
        cpu_util_pct: run.cpu_utilisation * 100.0,
        crypt_queue_len_avg: run.crypt_queue_len_avg,
        crypt_queue_len_max: run.crypt_queue_len_max,
        clipped,
        replications: run.replications.max(1),
        spread: None,
    }
}

fn caller_waits(w: &CallerWaits) -> CallerWaitsReport {
    let class: Vec<CongestionReport> = ["sync", "async"]
        .into_iter()
        .zip(&w.class)
        .map(|(class, c)| CongestionReport {
            class: class.to_string(),
            waits: c.waits,
            woken_early: c.woken_early,
            total_ns: c.total.as_ns(),
        })
        .collect();
    let waits = class.iter().map(|c| c.waits).sum();
    let early = class.iter().map(|c| c.woken_early).sum();
    CallerWaitsReport {
        class,
        early_pct: share_pct(early, waits, 0.0),
        skipped: w.skipped,
    }
}

fn memory_report(m: &MemoryObs, measured_ns: u64) -> MemoryReport {
    let of_window = |ns: u64| share_pct(ns, measured_ns, 0.0);
    let atomic_attempts_total = m.atomic_attempts.iter().sum();
    let atomic_failures_total: u64 = m.atomic_failures.iter().sum();
    let h = &m.direct_stall;
    let [p50_ns, p99_ns, p99_9_ns] = match h.percentiles(&[50.0, 99.0, 99.9])[..] {
        [a, b, c] => [a, b, c],
        _ => [0; 3],
    };
    MemoryReport {
        total_pages: m.total_pages,
        min: m.min,
        low: m.low,
        high: m.high,
        atomic_floor: m.atomic_floor,
        atomic_attempts: m.atomic_attempts.clone(),
        atomic_failures: m.atomic_failures.clone(),
        atomic_fail_free_sum: m.atomic_fail_free_sum.clone(),
        atomic_fail_free_avg: m
            .atomic_failures
            .iter()
            .zip(&m.atomic_fail_free_sum)
            .map(|(&n, &sum)| if n == 0 { 0.0 } else { sum as f64 / n as f64 })
            .collect(),
        atomic_attempts_total,
        atomic_failures_total,
        atomic_failures_per_s: if measured_ns == 0 {
            0.0
        } else {
            atomic_failures_total as f64 * 1e9 / measured_ns as f64
        },
        failure_log: m
            .failure_log
            .iter()
            .map(|f| AllocFailureReport {
                at_ns: f.at.as_ns(),
                order: f.order,
                free: f.free,
            })
            .collect(),
        kswapd_wakeups: m.kswapd_wakeups,
        kswapd_awake_ns: m.kswapd_awake.as_ns(),
        kswapd_awake_pct: of_window(m.kswapd_awake.as_ns()),
        kswapd_passes: m.kswapd_passes,
        kswapd_waits: caller_waits(&m.kswapd_waits),
        kswapd_skips: m.kswapd_skips,
        low_wmark_hit_quickly: m.low_wmark_hit_quickly,
        high_wmark_hit_quickly: m.high_wmark_hit_quickly,
        order0_fallbacks: m.order0_fallbacks,
        kswapd_scanned: m.kswapd_scanned,
        kswapd_reclaimed: m.kswapd_reclaimed,
        direct_stalls: m.direct_stalls,
        direct_stall: StallSummary {
            n: h.count(),
            total_ns: u64::try_from(h.sum()).unwrap_or(u64::MAX),
            min_ns: h.min(),
            max_ns: h.max(),
            mean_ns: h.mean(),
            stddev_ns: h.stddev(),
            p50_ns,
            p99_ns,
            p99_9_ns,
        },
        direct_waits: caller_waits(&m.direct_waits),
        direct_scanned: m.direct_scanned,
        direct_reclaimed: m.direct_reclaimed,
        pageout_pages: m.pageout_pages,
        bounce_from_zone: m.bounce_from_zone,
        bounce_from_reserve: m.bounce_from_reserve,
        mempool_waits: m.mempool_waits,
        mempool_wait_ns: m.mempool_wait_time.as_ns(),
        partial_clones: m.partial_clones,
        partial_nap_ns: m.partial_nap_time.as_ns(),
        free_min_seen: m.free_min_seen,
        free_avg: m.free_avg,
        below_min_ns: m.below_min.as_ns(),
        below_min_pct: of_window(m.below_min.as_ns()),
        end_pages: m.end_pages,
        end_free: m.total_pages.saturating_sub(m.end_pages.total()),
    }
}

fn direction_report(
    direction: Direction,
    obs: &DirectionObs,
    runtime_ms: u64,
    percentile_list: &[f64],
    shown: &[Stage],
) -> DirectionReport {
    // fio's runtime is zero for a direction that did nothing.
    let runtime_ms = if obs.ios == 0 { 0 } else { runtime_ms };
    let (bw_bytes_per_s, iops) = if runtime_ms == 0 {
        (0, 0.0)
    } else {
        let bw = u128::from(obs.bytes) * 1000 / u128::from(runtime_ms);
        (
            u64::try_from(bw).unwrap_or(u64::MAX),
            1000.0 * obs.ios as f64 / runtime_ms as f64,
        )
    };
    let bw_kib_s = SampleSummary::from(&obs.bw_kib_s);
    // fio's convert_agg_kbytes_percent: the (truncated) mean sample over the group aggregate.
    let bw_agg_pct = if bw_kib_s.samples == 0 {
        0.0
    } else if bw_bytes_per_s > 1024 {
        (bw_kib_s.mean.trunc() * 100.0 / (bw_bytes_per_s as f64 / 1024.0)).min(100.0)
    } else {
        100.0
    };
    let lat_sum = obs.lat.sum();
    let stages = shown
        .iter()
        .map(|&stage| {
            let h = obs.stages.get(stage.index());
            let (n, mean_ns, p99_ns, sum) = h.map_or((0, 0.0, 0, 0), |h| {
                (h.count(), h.mean(), h.percentile(99.0), h.sum())
            });
            StageReport {
                stage,
                label: stage.label().to_string(),
                n,
                mean_ns,
                p99_ns,
                share_pct: if lat_sum == 0 {
                    0.0
                } else {
                    sum as f64 / lat_sum as f64 * 100.0
                },
            }
        })
        .collect();
    DirectionReport {
        direction,
        ios: obs.ios,
        bytes: obs.bytes,
        issued: obs.issued,
        dropped: obs.dropped,
        runtime_ms,
        bw_bytes_per_s,
        iops,
        slat: LatencySummary::from_histogram(&obs.slat, None, false),
        clat: LatencySummary::from_histogram(&obs.clat, Some(percentile_list), true),
        lat: LatencySummary::from_histogram(&obs.lat, Some(percentile_list), false),
        bw_kib_s,
        bw_agg_pct,
        iops_samples: SampleSummary::from(&obs.iops),
        stages,
    }
}

pub(crate) fn comparison_row(p: &PolicyReport, percentile_list: &[f64]) -> ComparisonRow {
    let read = p.direction(Direction::Read);
    let write = p.direction(Direction::Write);
    let pick = |want: f64| -> Option<u64> {
        if read.ios == 0 {
            return None;
        }
        // Reuse the fio block's values so the two never disagree.
        percentile_list
            .iter()
            .position(|&q| q == want)
            .and_then(|i| read.clat.percentiles_ns.get(i).copied())
    };
    ComparisonRow {
        policy: p.policy.clone(),
        saturated: p.saturated(),
        read_clat_ns_p50: pick(50.0),
        read_clat_ns_p99: pick(99.0),
        read_clat_ns_p99_9: pick(99.9),
        read_clat_ns_p99_99: pick(99.99),
        read_iops: read.iops,
        write_mib_s: write.bw_bytes_per_s as f64 / (1024.0 * 1024.0),
        memory: p.memory.as_ref().map(|m| MemoryComparison {
            atomic_failures: m.atomic_failures_total,
            kswapd_cwait_ns: [
                m.kswapd_waits.class[0].total_ns,
                m.kswapd_waits.class[1].total_ns,
            ],
            direct_stalls: m.direct_stalls,
            free_min_seen: m.free_min_seen,
        }),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! Hand-built scenario and run observations shared by the renderer tests.

    use super::*;
    use crate::engine::SimDuration;
    use crate::engine::SimTime;
    use crate::model::observe::{
        AllocFailure, BlockObs, CallerWaits, CongestionWaitObs, FiniteJobObs, MemoryObs,
        PageStates, WritebackObs,
    };
    use crate::scenario::{
        BlockConfig, CryptConfig, CryptoEngine, DeviceConfig, Elevator, FioJob, KernelConfig,
        NvmeConfig, QueueMode, WorkloadConfig,
    };

    /// A two-policy scenario with one 4 KiB randrw fio job at depth 8.
    pub(crate) fn scenario() -> Scenario {
        Scenario {
            name: "two-queue".to_string(),
            description: "reads behind writeback".to_string(),
            seed: 42,
            duration: SimDuration::from_secs(11),
            warmup: SimDuration::from_secs(1),
            max_events: 1_000_000,
            replications: 1,
            cpus: 2,
            kernel: KernelConfig::new(250),
            device: DeviceConfig::Nvme(NvmeConfig {
                latency: SimDuration::from_us(20),
                channels: 4,
                overhead: SimDuration::from_us(5),
                transfer_rate: 1e9,
                queue_depth: 32,
            }),
            block: BlockConfig {
                mode: QueueMode::Legacy,
                nr_requests: 128,
                elevator: Elevator::Cfq,
                plug: true,
                unplug_threshold: 4,
                low_latency: true,
                cfq_slice_sync: SimDuration::from_ms(100),
                cfq_slice_async: SimDuration::from_ms(40),
                cfq_slice_idle: SimDuration::from_ms(8),
                cfq_quantum: 8,
            },
            crypt: CryptConfig {
                cipher: "aes-ni".to_string(),
                encrypt_rate: 1e9,
                decrypt_rate: 1e9,
                per_sector_cost: SimDuration::from_ns(100),
                hop_cost: SimDuration::from_us(2),
                cost: None,
                engine: CryptoEngine::Sync,
                unplug_after_submit: false,
            },
            policies: vec!["fifo".to_string(), "split".to_string()],
            workloads: vec![WorkloadConfig {
                name: "fio".to_string(),
                kind: WorkloadKind::Fio(FioJob {
                    rw: RwKind::RandRw,
                    rwmixread: 50,
                    bs: 4096,
                    size: 1 << 30,
                    offset: 0,
                    arrivals: Arrivals::Closed {
                        iodepth: 8,
                        think: None,
                    },
                    numjobs: 1,
                    sync_writes: false,
                    direct: true,
                    io_size: None,
                    number_ios: None,
                    startdelay: SimDuration::ZERO,
                }),
            }],
            memory: None,
            variants: Vec::new(),
        }
    }

    fn direction(
        ios: u64,
        slat: &[u64],
        clat: &[u64],
        bw: &[f64],
        stage_ns: &[u64],
    ) -> DirectionObs {
        let mut d = DirectionObs {
            ios,
            bytes: ios * 4096,
            issued: ios + 1,
            ..DirectionObs::new()
        };
        for (i, (&s, &c)) in slat.iter().zip(clat).enumerate() {
            d.slat.record(s);
            d.clat.record(c);
            d.lat.record(s + c);
            // Split each latency between crypt queue wait, device and "other" (the slat).
            let device = stage_ns[i % stage_ns.len()].min(c);
            d.stages[Stage::Device.index()].record(device);
            d.stages[Stage::CryptQueue.index()].record(c - device);
            d.stages[Stage::Other.index()].record(s);
        }
        for &b in bw {
            d.bw_kib_s.push(b);
            d.iops.push(b / 4.0);
        }
        d
    }

    /// A run with 10 reads (two of them slow) and 4 writes over 10 s.
    pub(crate) fn run(policy: &str, end: RunEnd) -> RunObs {
        let read_slat = [
            812, 900, 1_000, 1_100, 1_200, 1_300, 1_400, 1_500, 2_000, 48_213,
        ];
        let read_clat = [
            38_112, 40_000, 52_000, 60_000, 70_000, 90_000, 120_000, 300_000, 2_500_000, 41_870_336,
        ];
        let write_slat = [3_000, 4_000, 5_000, 1_650_000];
        let write_clat = [3_100_000, 9_000_000, 20_000_000, 212_000_000];
        let reads = direction(
            10,
            &read_slat,
            &read_clat,
            &[9_312.0, 9_904.0, 9_650.0],
            &[30_000],
        );
        let writes = direction(
            4,
            &write_slat,
            &write_clat,
            &[4_416.0, 5_120.0],
            &[1_000_000],
        );
        let mut clat_all = reads.clat.clone();
        clat_all.merge(&writes.clat);
        RunObs {
            policy: policy.to_string(),
            measured: SimDuration::from_secs(10),
            dirs: [reads, writes],
            clat_all,
            depth_buckets: [4, 3, 5, 2, 0, 0, 0],
            congestion_waits: [
                CongestionWaitObs {
                    waits: 38,
                    woken_early: 10,
                    total: SimDuration::from_ms(412),
                },
                CongestionWaitObs {
                    waits: 270,
                    woken_early: 30,
                    total: SimDuration::from_ms(2_911),
                },
            ],
            block: BlockObs {
                congested: [SimDuration::from_ms(12), SimDuration::from_ms(340)],
                pool_sleeps: [3, 120],
                clears: [40, 210],
                timer_unplugs: 15,
                threshold_unplugs: 230,
                dispatched: 36_180,
                device_busy: SimDuration::from_ms(8_731),
            },
            writeback: WritebackObs {
                dirtied_bytes: 300 << 20,
                written_back_bytes: 280 << 20,
                throttled: SimDuration::from_ms(1_250),
            },
            ended: SimTime::ZERO + SimDuration::from_secs(11),
            finite_jobs: Vec::new(),
            memory: None,
            cpu_utilisation: 0.4321,
            crypt_queue_len_avg: 3.25,
            crypt_queue_len_max: 41,
            events: 123_456,
            end,
            timeline: None,
            replications: 1,
        }
    }

    /// A memory model's measurements: order-0 and order-2 GFP_ATOMIC streams with failures,
    /// kswapd waiting on the ASYNC queue, nine direct-reclaim stalls.
    pub(crate) fn memory_obs() -> MemoryObs {
        let mut direct_stall = Histogram::new();
        for ms in [2, 3, 5, 8, 13, 21, 34, 88, 136] {
            direct_stall.record(ms * 1_000_000);
        }
        let async_waits = |waits, woken_early, ms| CallerWaits {
            class: [
                CongestionWaitObs::default(),
                CongestionWaitObs {
                    waits,
                    woken_early,
                    total: SimDuration::from_ms(ms),
                },
            ],
            skipped: 0,
        };
        let mut atomic_attempts = vec![0; 11];
        let mut atomic_failures = vec![0; 11];
        let mut atomic_fail_free_sum = vec![0; 11];
        atomic_attempts[0] = 98_000;
        atomic_attempts[2] = 12_034;
        atomic_failures[2] = 37;
        atomic_fail_free_sum[2] = 37 * 512;
        MemoryObs {
            total_pages: 524_288,
            min: 1_448,
            low: 1_810,
            high: 2_172,
            atomic_floor: 543,
            atomic_attempts,
            atomic_failures,
            atomic_fail_free_sum,
            failure_log: vec![
                AllocFailure {
                    at: SimTime::from_ns(12_345_678_901),
                    order: 2,
                    free: 512,
                },
                AllocFailure {
                    at: SimTime::from_ns(12_400_000_000),
                    order: 2,
                    free: 498,
                },
            ],
            kswapd_wakeups: 41,
            kswapd_awake: SimDuration::from_ms(4_300),
            kswapd_passes: 57,
            kswapd_waits: async_waits(51, 6, 4_100),
            kswapd_skips: 0,
            low_wmark_hit_quickly: 0,
            high_wmark_hit_quickly: 2,
            order0_fallbacks: 3,
            kswapd_scanned: 180_000,
            kswapd_reclaimed: 150_000,
            direct_stalls: 9,
            direct_stall,
            direct_waits: async_waits(10, 0, 200),
            direct_scanned: 4_000,
            direct_reclaimed: 3_100,
            pageout_pages: 250,
            bounce_from_zone: 20_000,
            bounce_from_reserve: 120,
            mempool_waits: 3,
            mempool_wait_time: SimDuration::from_ms(12),
            partial_clones: 0,
            partial_nap_time: SimDuration::ZERO,
            free_min_seen: 402,
            free_avg: 2_010.4,
            below_min: SimDuration::from_ms(1_230),
            end_pages: PageStates {
                unreclaimable: 131_072,
                clean: 300_000,
                dirty: 60_000,
                writeback: 25_000,
                bounce: 40,
                atomic: 96,
                filling: 12,
            },
        }
    }

    /// [`run`] with [`memory_obs`].
    pub(crate) fn run_with_memory(policy: &str) -> RunObs {
        let mut r = run(policy, RunEnd::Horizon);
        r.memory = Some(Box::new(memory_obs()));
        r
    }

    /// [`run`] ended early by a finite job, `gitk`: 23.41 s from its start at 2 s, 64 MiB in
    /// 16384 reads; with `unfinished`, still running at the 11 s horizon instead.
    pub(crate) fn run_finite(policy: &str, unfinished: bool) -> RunObs {
        let mut r = run(policy, RunEnd::Finished);
        let start = SimTime::ZERO + SimDuration::from_secs(2);
        let (elapsed_ns, ios) = if unfinished {
            r.end = RunEnd::Horizon;
            (None, 3_150)
        } else {
            (Some(23_410_000_000), 16_384)
        };
        r.finite_jobs = vec![FiniteJobObs {
            name: "gitk".to_string(),
            start,
            elapsed_ns,
            ios,
            bytes: ios * 4096,
            io_size: Some(64 << 20),
            number_ios: None,
        }];
        r.ended = r.finite_jobs[0]
            .finished()
            .unwrap_or(SimTime::ZERO + SimDuration::from_secs(11));
        r
    }

    pub(crate) fn report() -> Report {
        Report::new(
            &scenario(),
            &[
                run("fifo", RunEnd::Horizon),
                run("split", RunEnd::Saturated),
            ],
        )
    }

    #[test]
    fn builds_fio_numbers() {
        let r = report();
        assert_eq!(r.schema_version, 1);
        assert_eq!(r.jobs, 1);
        assert_eq!(
            r.job_options,
            JobOptions {
                rw: "randrw".into(),
                bs_bytes: 4096,
                iodepth: 8,
                numjobs: 1
            }
        );
        let p = &r.policies[0];
        assert_eq!(p.runtime_ms, 10_000);
        let read = p.direction(Direction::Read);
        assert_eq!(read.bw_bytes_per_s, 4096);
        assert_eq!(read.iops, 1.0);
        assert_eq!(read.clat.percentiles_ns.len(), 17);
        assert_eq!(read.clat.n, 10);
        // 7 of 14 clat values are in [10 us, 1 ms)... share of all completed I/Os.
        let us: f64 = p.latency_pct.usec_pct.iter().sum();
        let ms: f64 = p.latency_pct.msec_pct.iter().sum();
        assert!((us + ms - 100.0).abs() < 1e-9);
        assert!((p.latency_pct.usec_pct[4] - 100.0 * 2.0 / 14.0).abs() < 1e-9);
        assert!((p.depth_pct.iter().sum::<f64>() - 100.0).abs() < 1e-9);
        assert!((p.block.device_util_pct - 87.31).abs() < 1e-9);
        assert!((p.congestion_early_pct - 100.0 * 40.0 / 308.0).abs() < 1e-9);
        // Stage shares of total latency add up to 100% when stages partition lat.
        let shares: f64 = read.stages.iter().map(|s| s.share_pct).sum();
        assert!((shares - 100.0).abs() < 1e-6, "{shares}");
        // Comparison rows and warnings.
        assert_eq!(r.comparison.len(), 2);
        assert_eq!(
            r.comparison[0].read_clat_ns_p50,
            Some(read.clat.percentiles_ns[6])
        );
        assert!(r.comparison[1].saturated);
        assert_eq!(r.warnings.len(), 1);
        assert!(matches!(&r.warnings[0], Warning::WorkBudget { policy, .. } if policy == "split"));
    }

    #[test]
    fn finite_jobs_give_elapsed_times_and_unfinished_ones_a_warning() {
        let r = Report::new(
            &scenario(),
            &[run_finite("fifo", false), run_finite("split", true)],
        );
        let (done, open) = (&r.policies[0], &r.policies[1]);
        assert_eq!(done.end_ns, 25_410_000_000);
        assert_eq!(done.elapsed_ns(), Some(23_410_000_000));
        assert_eq!(done.finite_jobs[0].start_ns, 2_000_000_000);
        assert_eq!(open.elapsed_ns(), None);
        assert_eq!(open.end_ns, 11_000_000_000);
        assert_eq!(r.warnings.len(), 1);
        assert!(
            matches!(&r.warnings[0], Warning::Unfinished { policy, job, end_ns: 11_000_000_000, ios: 3_150, .. }
                if policy == "split" && job == "gitk"),
            "{:?}",
            r.warnings
        );
        // Without finite jobs: none, and no elapsed time.
        let plain = report();
        assert!(plain.policies.iter().all(|p| p.finite_jobs.is_empty()));
        assert_eq!(plain.policies[0].elapsed_ns(), None);
        assert_eq!(plain.policies[0].end_ns, 11_000_000_000);
    }

    #[test]
    fn direct_reclaim_stage_only_with_a_memory_model() {
        let labels = |r: &Report| -> Vec<Stage> {
            r.policies[0].directions[0]
                .stages
                .iter()
                .map(|s| s.stage)
                .collect()
        };
        // No memory model, and only zero-length samples in the stage: the row is left out.
        let mut plain = run("fifo", RunEnd::Horizon);
        plain.dirs[0].stages[Stage::DirectReclaim.index()].record(0);
        let r = Report::new(&scenario(), &[plain.clone(), plain.clone()]);
        assert!(!labels(&r).contains(&Stage::DirectReclaim));
        assert_eq!(labels(&r).len(), Stage::COUNT - 1);
        // With a memory model in any run, every run keeps it, even at zero.
        let r = Report::new(&scenario(), &[plain.clone(), run_with_memory("split")]);
        assert_eq!(labels(&r), Stage::ALL);
        assert_eq!(r.policies[0].directions[1].stages.len(), Stage::COUNT);
        // Time recorded in it is never hidden.
        plain.dirs[1].stages[Stage::DirectReclaim.index()].record(5_000);
        let r = Report::new(&scenario(), &[plain.clone(), plain]);
        assert_eq!(labels(&r)[0], Stage::DirectReclaim);
    }

    #[test]
    fn empty_direction_is_zero_filled() {
        let mut run = run("fifo", RunEnd::Horizon);
        run.dirs[1] = direction(0, &[], &[], &[], &[1]);
        let r = Report::new(&scenario(), &[run.clone(), run]);
        let w = r.policies[0].direction(Direction::Write);
        assert_eq!((w.runtime_ms, w.bw_bytes_per_s, w.iops), (0, 0, 0.0));
        assert!(w.clat.percentiles_ns.is_empty());
        assert!(w.stages.iter().all(|s| s.share_pct == 0.0));
    }
}
