//! The report: one [`Report`] holding everything a scenario's runs produced, and the renderers
//! that write it out. It is the only thing renderers and plots see.
//!
//! What the report holds, and where it comes from:
//! - the pooled fio-style blocks, one [`PolicyReport`] per run of the [`plan`], built by
//!   [`Report::new`] from the model's observations (the memory model's [`MemoryObs`] is
//!   embedded whole in [`MemoryReport`], beside the figures derived from it), with their
//!   [`Warning`]s;
//! - each run's registry metrics per replication, its spread and the plot series
//!   ([`Report::attach_replications`]); the registry ([`metrics::METRICS`]) is the one list of
//!   per-run metrics (key, label, unit, direction, how to read it from a run);
//! - the precision outcome ([`precision`]) and, when asked, the runs' invariants.
//!
//! Who reads what: [`text`] (the blocks, comparison tables and warnings, then the replication
//! summary of [`replications`], the [`flags`] comparison of dm-crypt's flag combinations, the
//! precision line and the [`invariants`] tables), [`json`]
//! (fio-compatible jobs from the blocks; the `--json` export adds [`export::ResultsQsim`]: the
//! paired comparisons of the metrics, the precision line and the [`plots`] series), [`export`]
//! (CSV and Markdown from the metrics), and `qsim plot` (the plot series, read back from the
//! `--json` export).
//!
//! The report holds numbers only (nanoseconds, bytes, percentages, counts), never formatted
//! strings, so every renderer (and `qsim plot`, reading the JSON) sees the same values and picks
//! its own units. Percentiles are fio histogram bucket midpoints (see [`crate::stats::histogram`]).
//!
//! [`MemoryObs`]: crate::model::base::obs::MemoryObs

pub mod answer;
pub mod export;
pub mod fiodir;
pub mod fiofmt;
pub mod fiolog;
pub mod flags;
pub mod hdr;
pub mod invariants;
pub mod json;
pub mod memory;
pub mod metrics;
pub mod plan;
pub mod plots;
pub mod precision;
pub mod replications;
pub mod reproduce;
pub mod spread;
pub mod sweep;
pub mod text;
pub mod trace;
pub mod warning;

use crate::model::base::obs::{DirectionObs, FiniteJobObs, RunEnd, RunObs, Stage};
use crate::model::observe::invariants::InvariantReport;
use crate::scenario::{Arrivals, RwKind, Scenario, WorkloadKind};
use crate::stats::histogram::{LAT_M_NR, LAT_N_NR, LAT_U_NR};
use crate::stats::{Histogram, Running};
pub use memory::{AllocFailureReport, CallerWaitsReport, MemoryReport, StallSummary};
use serde::Serialize;
pub use warning::Warning;

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
    /// The options a fio job file gave, as written (empty for a scenario file): fio's JSON
    /// lists them in `global options` and `job options`.
    #[serde(skip_serializing_if = "crate::scenario::FioGiven::is_empty")]
    pub fio_given: crate::scenario::FioGiven,
    /// Percentiles listed in each direction's `percentiles` (ascending).
    pub percentile_list: Vec<f64>,
    /// The scenario's variants with the policies each ran, in run order (empty without
    /// variants).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VariantSummary>,
    /// One entry per run: per policy in scenario order; with variants, per variant and policy,
    /// variant-major.
    pub policies: Vec<PolicyReport>,
    /// Conditions the reader must know about, in policy order.
    pub warnings: Vec<Warning>,
    /// Each run's registry metrics, one per replication, labelled, in run order: the
    /// replication summary, the exports and the paired comparisons are built from these
    /// (empty until [`Report::attach_replications`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<(String, Vec<metrics::Metrics>)>,
    /// How a `--precision` target ended (`None` without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<precision::PrecisionOutcome>,
    /// Each run's invariants, labelled, when the caller asked to show them
    /// (`--check-invariants`); the model's own type, rendered by [`invariants`].
    #[serde(skip)]
    pub invariants: Vec<(String, InvariantReport)>,
    /// The plot series (only when plots or the `--json` export are wanted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plots: Option<plots::PlotData>,
    /// The disk's name in fio's `Disk stats` and `disk_util` ([`fiodir::disk_name`]).
    pub disk: String,
    /// Replication 0's per-window sums of each run, in run order, for fio's log files (empty
    /// unless `--fio-dir` asked for them; see [`fiodir`]).
    #[serde(skip)]
    pub fio_logs: Vec<Option<crate::stats::windows::WindowLog>>,
    /// Which of fio's logs `--fio-dir` writes, and how ([`fiodir::LogOptions`]).
    #[serde(skip)]
    pub fio_log_options: fiodir::LogOptions,
    /// The sweep or sensitivity study the scenario's variants came from, if any
    /// ([`sweep`] lays the runs out by its values).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<crate::scenario::SweepPlan>,
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
    /// Where the CPU time went, on a machine of CPUs with identity (kernels after 2.6.x).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuReport>,
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
    /// The registry's metrics of this block's observations (pooled, like the block).
    pub metrics: metrics::Metrics,
    /// The application's CPU time by workload (its copies summed), in workload order; empty
    /// when the application used none (docs/model/workloads.md §2c).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub app_cpu: Vec<AppCpuReport>,
}

/// One workload's share of the application's CPU time ([`PolicyReport::app_cpu`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AppCpuReport {
    /// The workload's name.
    pub workload: String,
    /// Its copies (`numjobs`).
    pub copies: u32,
    /// Whether it is a `cpuio` workload (no I/O).
    pub cpuio: bool,
    /// Its CPU time over the measured window, percent of one CPU.
    pub pct: f64,
}

/// The application's CPU time of `run` by workload; empty when it used none.
fn app_cpu_report(run: &RunObs) -> Vec<AppCpuReport> {
    let span = run.measured.as_ns();
    if span == 0 || run.app_cpu.iter().all(|a| a.cpu_ns == 0) {
        return Vec::new();
    }
    let mut out: Vec<(AppCpuReport, u64)> = Vec::new();
    for a in &run.app_cpu {
        match out.iter_mut().find(|(r, _)| r.workload == a.workload) {
            Some((r, ns)) => {
                r.copies += 1;
                *ns += a.cpu_ns;
            }
            None => out.push((
                AppCpuReport {
                    workload: a.workload.clone(),
                    copies: 1,
                    cpuio: a.cpuio,
                    pct: 0.0,
                },
                a.cpu_ns,
            )),
        }
    }
    out.into_iter()
        .map(|(mut r, ns)| {
            r.pct = ns as f64 / span as f64 * 100.0;
            r
        })
        .collect()
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
    /// CFQ's estimates of whether the disk queues commands (`cfq_update_hw_tag`, every 51
    /// completions under load), then how many found it not queueing; zero for other elevators.
    pub ncq_estimates: [u64; 2],
    /// CFQ slices handed to a busy queue whose next request lies close to the head instead of
    /// idling (`cfq_close_cooperator`), then preemptions of an idling queue by a close request
    /// (`cfq_rq_close`); zero for other elevators and from 2.6.33.
    pub cfq_coop: [u64; 2],
    /// Device busy time over the measured window, percent (at most 100).
    pub device_util_pct: f64,
    /// Requests the device completed, reads then writes (`Disk stats` `ios`).
    pub completed: [u64; 2],
    /// Their time from insertion in the request queue to completion, summed, ns, reads then
    /// writes (`Disk stats` `ticks`).
    pub ticks_ns: [u64; 2],
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
        let variants = scenario
            .variants
            .iter()
            .map(|v| VariantSummary {
                name: v.name.clone(),
                policies: v.scenario.policies.clone(),
            })
            .collect();
        let warnings = policies
            .iter()
            .enumerate()
            // A variant may change the duration, warm-up or event budget.
            .flat_map(|(i, p)| Warning::of(p, plan.get(i).map_or(scenario, |r| r.scenario)))
            .collect();
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
            fio_given: scenario.fio_given.clone(),
            percentile_list,
            variants,
            policies,
            warnings,
            metrics: Vec::new(),
            precision: None,
            invariants: Vec::new(),
            plots: None,
            disk: fiodir::disk_name(&scenario.device).to_string(),
            fio_logs: Vec::new(),
            fio_log_options: Default::default(),
            sweep: scenario.sweep.clone(),
        }
    }

    /// Which run each run's replications are compared against: with variants crossed with
    /// policies [`replications::Pairing::two_way`], else every run against one.
    pub fn pairing(&self) -> replications::Pairing {
        let cells: Option<Vec<(String, String)>> = self
            .policies
            .iter()
            .map(|p| {
                p.variant
                    .as_ref()
                    .map(|v| (v.name.clone(), v.policy.clone()))
            })
            .collect();
        match cells {
            Some(c) if !c.is_empty() && c.len() == self.metrics.len() => {
                replications::Pairing::two_way(&c)
            }
            _ => replications::Pairing::single(&self.metrics),
        }
    }

    /// Adds what the replications contribute beyond the pooled blocks: each run's spread and
    /// registry metrics from `samples` (`samples[i]`, one per replication, for
    /// `policies[i]`), and with `timelines` (replication 0's, per run) the plot series.
    pub fn attach_replications(
        &mut self,
        samples: &[Vec<spread::RepSample>],
        timelines: Option<Vec<Option<crate::stats::series::Timeline>>>,
    ) {
        spread::attach(self, samples);
        self.metrics = self
            .policies
            .iter()
            .zip(samples)
            .map(|(p, s)| (p.policy.clone(), s.iter().map(|x| x.metrics).collect()))
            .collect();
        self.plots = timelines.map(|t| plots::plot_data(self, samples, t));
        let swept = sweep::sweep_data(self);
        let flagged = flags::plot_data(self);
        if let Some(p) = self.plots.as_mut() {
            p.sweep = swept;
            p.flags = flagged;
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
impl JobOptions {
    /// The fio job options of `scenario`'s workload, as the report gives them.
    pub fn of(scenario: &Scenario) -> JobOptions {
        job_options(scenario)
    }
}

fn job_options(scenario: &Scenario) -> JobOptions {
    let fio = scenario.workloads.iter().find_map(|w| match &w.kind {
        WorkloadKind::Fio(job) => Some(job),
        WorkloadKind::BufferedWriter(_) | WorkloadKind::FakeGitk(_) | WorkloadKind::CpuIo(_) => {
            None
        }
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
        WorkloadKind::Fio(_) | WorkloadKind::FakeGitk(_) | WorkloadKind::CpuIo(_) => None,
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
            WorkloadKind::FakeGitk(g) => g.numjobs,
            WorkloadKind::CpuIo(c) => c.numjobs,
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

impl LatencyShares {
    /// The clat shares of `run`'s completed I/Os per fio latency bucket.
    fn of(run: &RunObs) -> LatencyShares {
        // fio divides the coarse latency counts by all I/Os of the job; qsim uses completed
        // ones.
        let completed: u64 = run.dirs.iter().map(|d| d.ios).sum();
        let total = if completed > 0 {
            completed
        } else {
            run.clat_all.count()
        };
        let mut shares = LatencyShares::default();
        for (i, &c) in run.clat_all.lat_bucket_counts().iter().enumerate() {
            let pct = share_pct(c, total, 0.01);
            if i < LAT_N_NR {
                shares.nsec_pct[i] = pct;
            } else if i < LAT_N_NR + LAT_U_NR {
                shares.usec_pct[i - LAT_N_NR] = pct;
            } else {
                shares.msec_pct[i - LAT_N_NR - LAT_U_NR] = pct;
            }
        }
        shares
    }
}

/// Submissions per fio depth bucket as shares, percent (non-zero shares below 0.1 % raised to
/// it, as fio does).
fn depth_shares(buckets: &[u64; 7]) -> [f64; 7] {
    let total: u64 = buckets.iter().sum();
    buckets.map(|c| share_pct(c, total, 0.1))
}

/// Builds one run's block: its fio numbers with `percentile_list`, the stages `stages` of
/// "where the time went", and qsim's own figures.
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

    let (congestion, congestion_early_pct) = memory::class_waits(&run.congestion_waits);
    let clipped = run
        .dirs
        .iter()
        .map(|d| d.slat.clipped() + d.clat.clipped() + d.lat.clipped())
        .sum();

    let mut block = PolicyReport {
        policy: run.policy.clone(),
        variant: None,
        end: run.end,
        measured_ns,
        end_ns: run.ended.as_ns(),
        finite_jobs: run.finite_jobs.iter().map(FiniteJobReport::from).collect(),
        runtime_ms,
        events: run.events,
        directions,
        latency_pct: LatencyShares::of(run),
        depth_pct: depth_shares(&run.depth_buckets),
        congestion,
        congestion_early_pct,
        block: BlockReport::of(&run.block, measured_ns),
        writeback: WritebackReport {
            dirtied_bytes: run.writeback.dirtied_bytes,
            written_back_bytes: run.writeback.written_back_bytes,
            throttled_ns: run.writeback.throttled.as_ns(),
        },
        memory: run
            .memory
            .as_deref()
            .map(|m| MemoryReport::new(m, measured_ns)),
        cpu_util_pct: run.cpu_utilisation * 100.0,
        cpu: CpuReport::of(run),
        crypt_queue_len_avg: run.crypt_queue_len_avg,
        crypt_queue_len_max: run.crypt_queue_len_max,
        clipped,
        replications: run.replications.max(1),
        spread: None,
        metrics: metrics::Metrics::nan(),
        app_cpu: app_cpu_report(run),
    };
    block.metrics = metrics::Metrics::of_run(metrics::Run {
        obs: run,
        block: &block,
    });
    block
}

impl BlockReport {
    /// The block counters of a run whose measured window was `measured_ns` long.
    fn of(b: &crate::model::base::obs::BlockObs, measured_ns: u64) -> BlockReport {
        let device_util_pct = if measured_ns == 0 {
            0.0
        } else {
            (b.device_busy.as_ns() as f64 / measured_ns as f64 * 100.0).min(100.0)
        };
        BlockReport {
            congested_ns: [b.congested[0].as_ns(), b.congested[1].as_ns()],
            pool_sleeps: b.pool_sleeps,
            clears: b.clears,
            timer_unplugs: b.timer_unplugs,
            threshold_unplugs: b.threshold_unplugs,
            dispatched: b.dispatched,
            device_busy_ns: b.device_busy.as_ns(),
            ncq_estimates: b.ncq_estimates,
            cfq_coop: b.cfq_coop,
            device_util_pct,
            completed: b.completed,
            ticks_ns: [b.ticks[0].as_ns(), b.ticks[1].as_ns()],
        }
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

#[cfg(test)]
pub(crate) mod tests;

/// CPU time by context and by CPU, in percent of one CPU over the measured window.
#[derive(Debug, Clone, Serialize)]
pub struct CpuReport {
    /// Each context with CPU time (`kcryptd`, `softirq`, `submitters`, …), in report order.
    pub by_context: Vec<(String, f64)>,
    /// Each CPU's busy share, percent.
    pub by_cpu: Vec<f64>,
    /// Idle CPU time beside waiting movable threads, percent of one CPU
    /// ([`RunObs::cpu_idle_beside_waiting`]).
    pub idle_beside_waiting: f64,
}

impl CpuReport {
    /// The report of a run on CPUs with identity; `None` on the shared pool.
    fn of(run: &RunObs) -> Option<CpuReport> {
        if run.cpu_by_cpu.is_empty() {
            return None;
        }
        let by_context = crate::model::base::ids::CpuContext::ALL
            .iter()
            .zip(run.cpu_by_context)
            .filter(|(_, v)| *v > 0.0)
            .map(|(c, v)| (c.label().to_string(), v * 100.0))
            .collect();
        let by_cpu = run.cpu_by_cpu.iter().map(|v| v * 100.0).collect();
        Some(CpuReport {
            by_context,
            by_cpu,
            idle_beside_waiting: run.cpu_idle_beside_waiting * 100.0,
        })
    }
}
