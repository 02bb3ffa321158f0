//! JSON renderers: fio-compatible `--output-format=json` and `json+` (one job per policy, key
//! names and value types as fio 3.x writes them, so fio-plot and fio's scripts read the file),
//! and qsim's own schema: the [`Report`] itself, which `qsim plot` reads back.
//!
//! fio-compatible output follows `docs/output.md` §2: `"fio version"` is `qsim-<version>`; `read`,
//! `write` and `trim` are always present (zero-filled when unused); `job options` values are
//! strings; `clat_ns` carries a `percentile` map keyed `"%f"` when it has samples (and `bins`
//! in json+); floats print as fio's `%f` (six decimals, [`FioFloat`]); the wall-clock fields
//! (`timestamp`, `timestamp_ms`, `time`) hold the simulated run's start, the Unix epoch, so
//! a seeded run reproduces byte for byte. Per-job counts (`io_bytes`, `total_ios`, `runtime`)
//! are one replication's (the mean), latency `N` and `bins` the pooled histograms'. qsim's
//! extra numbers sit in a `qsim` object per job, which fio tools ignore. Maps keep fio's key
//! order.

use super::{Direction, DirectionReport, LatencySummary, PolicyReport, Report};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use std::io;

/// Writes fio-compatible JSON (`--output-format=json`).
pub fn render(report: &Report, out: &mut dyn io::Write) -> io::Result<()> {
    write_pretty(&fio_output(report, false), out)
}

/// Writes fio-compatible json+ : as [`render`], plus the non-zero histogram `bins` of `clat_ns`.
pub fn render_plus(report: &Report, out: &mut dyn io::Write) -> io::Result<()> {
    write_pretty(&fio_output(report, true), out)
}

/// Writes the full results of `qsim run --json FILE`: fio-compatible json+ (one job per run,
/// built from the pooled replications, with `bins`), and beside `jobs` a `qsim` object with
/// the replication summary, the precision outcome and the plot data
/// ([`super::export::ResultsQsim`]). fio tools read `jobs` and ignore `qsim`.
pub fn render_results(report: &Report, out: &mut dyn io::Write) -> io::Result<()> {
    #[derive(Serialize)]
    struct Results<'a> {
        #[serde(flatten)]
        fio: FioOutput<'a>,
        qsim: super::export::ResultsQsim<'a>,
    }
    write_pretty(
        &Results {
            fio: fio_output(report, true),
            qsim: super::export::ResultsQsim::of(report),
        },
        out,
    )
}

/// Writes the [`Report`] in qsim's own schema (`schema_version` first), for `qsim plot`.
pub fn render_report(report: &Report, out: &mut dyn io::Write) -> io::Result<()> {
    write_pretty(report, out)
}

fn write_pretty<T: Serialize>(value: &T, out: &mut dyn io::Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// A JSON object whose keys keep insertion order.
struct Ordered<V>(Vec<(String, V)>);

impl<V> Ordered<V> {
    /// Whether it has no key.
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<V: Serialize> Serialize for Ordered<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// A float as fio's JSON writer prints it (`%f`: six decimals, `2412.000000`); a value that
/// is not finite is `null`, as serde_json writes it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FioFloat(pub f64);

impl Serialize for FioFloat {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if !self.0.is_finite() {
            return serializer.serialize_none();
        }
        let raw = serde_json::value::RawValue::from_string(format!("{:.6}", self.0))
            .map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

/// `time`'s value: the simulated run starts at the Unix epoch, written as fio writes a time
/// (`ctime` without its newline).
pub const EPOCH_TIME: &str = "Thu Jan  1 00:00:00 1970";

#[derive(Serialize)]
struct FioOutput<'a> {
    #[serde(rename = "fio version")]
    fio_version: String,
    /// fio's start of the run in Unix seconds, ms and `ctime` text: the simulated start, 0.
    timestamp: u64,
    timestamp_ms: u64,
    time: &'static str,
    #[serde(rename = "global options", skip_serializing_if = "Option::is_none")]
    global_options: Option<Ordered<String>>,
    jobs: Vec<Job<'a>>,
    disk_util: Vec<DiskUtil<'a>>,
}

/// One entry of fio's `disk_util`: the disk beneath dm-crypt, from the block layer's counters
/// of the measured window (see `docs/output.md`, "Disk stats").
#[derive(Serialize)]
struct DiskUtil<'a> {
    name: &'a str,
    /// The job the entry belongs to, when a file holds several runs (not a fio key; fio
    /// writes one entry per disk of its one run).
    #[serde(skip_serializing_if = "Option::is_none")]
    jobname: Option<String>,
    read_ios: u64,
    write_ios: u64,
    read_merges: u64,
    write_merges: u64,
    read_ticks: u64,
    write_ticks: u64,
    in_queue: u64,
    util: FioFloat,
}

/// Writes run `run` of the report alone as fio json+ (one job, with its `disk_util`): one
/// file of `qsim run --fio-dir` ([`super::fiodir`]).
pub fn render_run_plus(report: &Report, run: usize, out: &mut dyn io::Write) -> io::Result<()> {
    let p = &report.policies[run];
    let fio = FioOutput {
        jobs: vec![job(report, p, true)],
        disk_util: vec![disk_util(report, p, false)],
        ..fio_head(report)
    };
    write_pretty(&fio, out)
}

/// The disk's counters of run `p` as fio's `disk_util` entry: ios and ticks (ms) per
/// direction, merges 0 (qsim's request queue never merges requests), `in_queue` the sum of
/// both ticks (what Linux reports since 5.0), `util` the device's busy share of the window.
fn disk_util<'a>(r: &'a Report, p: &PolicyReport, named: bool) -> DiskUtil<'a> {
    let b = &p.block;
    let ms = |ns: u64| ns / 1_000_000;
    DiskUtil {
        name: &r.disk,
        jobname: named.then(|| format!("{}-{}", r.scenario, p.policy)),
        read_ios: b.completed[0],
        write_ios: b.completed[1],
        read_merges: 0,
        write_merges: 0,
        read_ticks: ms(b.ticks_ns[0]),
        write_ticks: ms(b.ticks_ns[1]),
        in_queue: ms(b.ticks_ns[0] + b.ticks_ns[1]),
        util: FioFloat(b.device_util_pct),
    }
}

#[derive(Serialize)]
struct Job<'a> {
    jobname: String,
    groupid: u32,
    error: u32,
    /// fio's seconds left to run: 0, the run is over.
    eta: u64,
    /// Simulated seconds from the start to the run's end (the duration, warm-up included, or
    /// earlier when every finite job was done), rounded up as fio's `elapsed_sec`; not
    /// wall-clock time.
    elapsed: u64,
    #[serde(rename = "job options")]
    job_options: Ordered<String>,
    read: Dir,
    write: Dir,
    trim: Dir,
    sync: Sync,
    job_runtime: u64,
    usr_cpu: FioFloat,
    sys_cpu: FioFloat,
    ctx: u64,
    majf: u64,
    minf: u64,
    iodepth_level: Ordered<FioFloat>,
    iodepth_submit: Ordered<FioFloat>,
    iodepth_complete: Ordered<FioFloat>,
    latency_ns: Ordered<FioFloat>,
    latency_us: Ordered<FioFloat>,
    latency_ms: Ordered<FioFloat>,
    /// fio's `latency_target` mode (off in qsim, as fio's default): the depth it settled at
    /// (the job's `iodepth`), the target (0), the percentile (100) and the window (0).
    latency_depth: u32,
    latency_target: u64,
    latency_percentile: FioFloat,
    latency_window: u64,
    qsim: Qsim<'a>,
}

#[derive(Serialize, Default)]
struct Dir {
    io_bytes: u64,
    io_kbytes: u64,
    bw_bytes: u64,
    bw: u64,
    iops: FioFloat,
    runtime: u64,
    total_ios: u64,
    short_ios: u64,
    drop_ios: u64,
    slat_ns: Lat,
    clat_ns: Lat,
    lat_ns: Lat,
    bw_min: u64,
    bw_max: u64,
    bw_agg: FioFloat,
    bw_mean: FioFloat,
    bw_dev: FioFloat,
    bw_samples: u64,
    iops_min: u64,
    iops_max: u64,
    iops_mean: FioFloat,
    iops_stddev: FioFloat,
    iops_samples: u64,
}

#[derive(Serialize, Default)]
struct Lat {
    min: u64,
    max: u64,
    mean: FioFloat,
    stddev: FioFloat,
    #[serde(rename = "N")]
    n: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    percentile: Option<Ordered<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bins: Option<Ordered<u64>>,
}

#[derive(Serialize, Default)]
struct Sync {
    total_ios: u64,
    lat_ns: Lat,
}

/// qsim's per-job extras: identity of the run and the numbers fio has no key for.
#[derive(Serialize)]
struct Qsim<'a> {
    scenario: &'a str,
    policy: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    variant: Option<&'a super::RunVariant>,
    seed: u64,
    replications: u32,
    measured_ns: u64,
    end: &'a super::RunEnd,
    /// The run's elapsed time over its finite jobs, ns (`null` when one is unfinished); only
    /// when the scenario has finite jobs.
    #[serde(skip_serializing_if = "Option::is_none")]
    elapsed_ns: Option<Option<u64>>,
    /// Each finite job copy with its elapsed time (only when there are some).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    finite_jobs: &'a [super::FiniteJobReport],
    events: u64,
    issued: [u64; 2],
    stages: Ordered<&'a [super::StageReport]>,
    congestion: &'a [super::CongestionReport],
    congestion_early_pct: f64,
    block: &'a super::BlockReport,
    writeback: &'a super::WritebackReport,
    /// The memory model's numbers (only with a `memory:` section).
    #[serde(skip_serializing_if = "Option::is_none")]
    memory: Option<&'a super::MemoryReport>,
    cpu_util_pct: f64,
    /// CPU time by context and by CPU (kernels after 2.6.x).
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu: Option<&'a super::CpuReport>,
    crypt_queue_len_avg: f64,
    crypt_queue_len_max: u64,
    /// The registry's metrics that ask for a place in the block, by key (only when some do).
    #[serde(skip_serializing_if = "Ordered::is_empty")]
    metrics: Ordered<f64>,
    clipped: u64,
    /// The single-valued figures across replications (with two or more).
    #[serde(skip_serializing_if = "Option::is_none")]
    spread: Option<&'a super::spread::RunSpread>,
    warnings: Vec<&'a super::Warning>,
    /// The application's CPU time by workload (only when the application used some).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    app_cpu: &'a [super::AppCpuReport],
}

/// The top-level keys before `jobs`, with no job and no disk.
fn fio_head(report: &Report) -> FioOutput<'_> {
    let global = &report.fio_given.global;
    FioOutput {
        fio_version: format!("qsim-{}", report.qsim_version),
        timestamp: 0,
        timestamp_ms: 0,
        time: EPOCH_TIME,
        global_options: (!global.is_empty()).then(|| Ordered(global.clone())),
        jobs: Vec::new(),
        disk_util: Vec::new(),
    }
}

fn fio_output(report: &Report, plus: bool) -> FioOutput<'_> {
    FioOutput {
        jobs: report
            .policies
            .iter()
            .map(|p| job(report, p, plus))
            .collect(),
        disk_util: report
            .policies
            .iter()
            .map(|p| disk_util(report, p, report.policies.len() > 1))
            .collect(),
        ..fio_head(report)
    }
}

/// fio's way of writing a block size: `4k`, `1m`, or bytes.
fn bs_string(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{}m", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{}k", bytes / KIB)
    } else {
        bytes.to_string()
    }
}

fn job<'a>(r: &'a Report, p: &'a PolicyReport, plus: bool) -> Job<'a> {
    let name = format!("{}-{}", r.scenario, p.policy);
    let o = &r.job_options;
    let mut options = vec![
        ("name".to_string(), name.clone()),
        ("rw".to_string(), o.rw.clone()),
        ("bs".to_string(), bs_string(o.bs_bytes)),
        ("iodepth".to_string(), o.iodepth.to_string()),
        ("numjobs".to_string(), o.numjobs.to_string()),
    ];
    // A job file's own options as written; the five above stay for fio-plot, which selects
    // files by them (a given `rw` or `bs` keeps its spelling).
    for (k, v) in &r.fio_given.job {
        match options.iter_mut().find(|(name, _)| name == k) {
            Some(entry) if k != "name" => entry.1 = v.clone(),
            Some(_) => {}
            None => options.push((k.clone(), v.clone())),
        }
    }
    let job_options = Ordered(options);
    let depth_labels = ["1", "2", "4", "8", "16", "32", ">=64"];
    let lat_map = |labels: &[&str], shares: &[f64]| {
        Ordered(
            labels
                .iter()
                .zip(shares)
                .map(|(l, &v)| (l.to_string(), FioFloat(v)))
                .collect(),
        )
    };
    let nu = &super::fiofmt::LAT_LABELS_NU;
    let read = p.direction(Direction::Read);
    let write = p.direction(Direction::Write);
    Job {
        jobname: name,
        groupid: 0,
        error: 0,
        eta: 0,
        elapsed: p.end_ns.div_ceil(1_000_000_000),
        job_options,
        read: dir(r, read, p.replications, plus),
        write: dir(r, write, p.replications, plus),
        trim: Dir::default(),
        sync: Sync::default(),
        job_runtime: per_rep(p.runtime_ms, p.replications),
        // The model charges no user-space CPU; its CPU pool runs kernel work only (dm-crypt's
        // encryption and decryption, softirq completions), so its busy share is system time.
        usr_cpu: FioFloat(0.0),
        sys_cpu: FioFloat(p.cpu_util_pct),
        ctx: 0,
        majf: 0,
        minf: 0,
        iodepth_level: lat_map(&depth_labels, &p.depth_pct),
        iodepth_submit: batch_shares(p),
        iodepth_complete: batch_shares(p),
        latency_ns: lat_map(nu, &p.latency_pct.nsec_pct),
        latency_us: lat_map(nu, &p.latency_pct.usec_pct),
        latency_ms: lat_map(&super::fiofmt::LAT_LABELS_M, &p.latency_pct.msec_pct),
        latency_depth: o.iodepth,
        latency_target: 0,
        latency_percentile: FioFloat(100.0),
        latency_window: 0,
        qsim: qsim_extras(r, p),
    }
}

/// fio's `iodepth_submit` / `iodepth_complete`: I/Os per submit (per reap) call in buckets
/// `0`, `4` (1 to 4), `8`, … A model job submits each I/O on its own and each completion
/// reaches it on its own (fio's default `iodepth_batch_submit=1` and
/// `iodepth_batch_complete_min=1` at its smallest), so every call carries one I/O: all in
/// bucket `4` when the run issued anything, all zero otherwise.
fn batch_shares(p: &PolicyReport) -> Ordered<FioFloat> {
    let any = p.depth_pct.iter().any(|&v| v > 0.0);
    Ordered(
        ["0", "4", "8", "16", "32", "64", ">=64"]
            .iter()
            .map(|l| {
                let share = if any && *l == "4" { 100.0 } else { 0.0 };
                (l.to_string(), FioFloat(share))
            })
            .collect(),
    )
}

/// qsim's extras of block `p`: its identity, the numbers fio has no key for, its warnings.
fn qsim_extras<'a>(r: &'a Report, p: &'a PolicyReport) -> Qsim<'a> {
    Qsim {
        scenario: &r.scenario,
        policy: &p.policy,
        variant: p.variant.as_ref(),
        seed: r.seed,
        replications: r.replications,
        measured_ns: p.measured_ns,
        end: &p.end,
        elapsed_ns: (!p.finite_jobs.is_empty()).then(|| p.elapsed_ns()),
        finite_jobs: &p.finite_jobs,
        events: p.events,
        issued: [
            p.direction(Direction::Read).issued,
            p.direction(Direction::Write).issued,
        ],
        stages: Ordered(vec![
            (
                "read".to_string(),
                p.direction(Direction::Read).stages.as_slice(),
            ),
            (
                "write".to_string(),
                p.direction(Direction::Write).stages.as_slice(),
            ),
        ]),
        congestion: &p.congestion,
        congestion_early_pct: p.congestion_early_pct,
        block: &p.block,
        writeback: &p.writeback,
        memory: p.memory.as_ref(),
        cpu_util_pct: p.cpu_util_pct,
        cpu: p.cpu.as_ref(),
        crypt_queue_len_avg: p.crypt_queue_len_avg,
        crypt_queue_len_max: p.crypt_queue_len_max,
        metrics: Ordered(
            p.metrics
                .in_block()
                .map(|(m, v)| (m.key.to_string(), v))
                .collect(),
        ),
        clipped: p.clipped,
        spread: p.spread.as_ref(),
        warnings: r
            .warnings
            .iter()
            .filter(|w| match w {
                super::Warning::WorkBudget { policy, .. }
                | super::Warning::TimeLimit { policy, .. }
                | super::Warning::Overloaded { policy, .. }
                | super::Warning::Unfinished { policy, .. }
                | super::Warning::HistogramClipped { policy, .. } => *policy == p.policy,
            })
            .collect(),
        app_cpu: &p.app_cpu,
    }
}

fn lat(r: &Report, l: &LatencySummary, percentiles: bool, plus: bool) -> Lat {
    let with_percentiles = percentiles && l.n > 0 && !l.percentiles_ns.is_empty();
    Lat {
        min: l.min_ns,
        max: l.max_ns,
        mean: FioFloat(l.mean_ns),
        stddev: FioFloat(l.stddev_ns),
        n: l.n,
        percentile: with_percentiles.then(|| {
            Ordered(
                r.percentile_list
                    .iter()
                    .zip(&l.percentiles_ns)
                    .map(|(p, &v)| (format!("{p:.6}"), v))
                    .collect(),
            )
        }),
        bins: (with_percentiles && plus).then(|| {
            Ordered(
                l.bins
                    .iter()
                    .map(|&(value, count)| (value.to_string(), count))
                    .collect(),
            )
        }),
    }
}

/// One replication's share of a count summed over `reps` replications: the mean, rounded to
/// the nearest integer.
fn per_rep(total: u64, reps: u32) -> u64 {
    let reps = u128::from(reps.max(1));
    ((u128::from(total) + reps / 2) / reps) as u64
}

/// Direction `d` of a block pooled over `reps` replications, as fio's per-job keys: the
/// counts and the runtime one replication's (so `io_bytes / runtime` is `bw_bytes`, as in
/// fio), the latency objects the pooled histograms' (`N` counts every replication's I/Os).
fn dir(r: &Report, d: &DirectionReport, reps: u32, plus: bool) -> Dir {
    let has_io = d.ios > 0;
    let bytes = per_rep(d.bytes, reps);
    Dir {
        io_bytes: bytes,
        io_kbytes: bytes >> 10,
        bw_bytes: d.bw_bytes_per_s,
        bw: d.bw_bytes_per_s / 1024,
        iops: FioFloat(d.iops),
        runtime: per_rep(d.runtime_ms, reps),
        total_ios: per_rep(d.ios, reps),
        short_ios: 0,
        drop_ios: per_rep(d.dropped, reps),
        slat_ns: lat(r, &d.slat, false, plus),
        clat_ns: lat(r, &d.clat, has_io, plus),
        lat_ns: lat(r, &d.lat, false, plus),
        bw_min: d.bw_kib_s.min as u64,
        bw_max: d.bw_kib_s.max as u64,
        bw_agg: FioFloat(d.bw_agg_pct),
        bw_mean: FioFloat(d.bw_kib_s.mean),
        bw_dev: FioFloat(d.bw_kib_s.stddev),
        bw_samples: d.bw_kib_s.samples,
        iops_min: d.iops_samples.min as u64,
        iops_max: d.iops_samples.max as u64,
        iops_mean: FioFloat(d.iops_samples.mean),
        iops_stddev: FioFloat(d.iops_samples.stddev),
        iops_samples: d.iops_samples.samples,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::{report, run_with_memory, scenario};
    use serde_json::Value;

    /// The `--json` export reads the one report: fio's json+ jobs, then qsim's summary rows,
    /// precision line and plot series from the same value.
    #[test]
    fn results_hold_the_jobs_the_summary_the_precision_and_the_plots() {
        let r = crate::report::tests::replicated_report();
        let mut buf = Vec::new();
        render_results(&r, &mut buf).unwrap();
        let v: Value = serde_json::from_slice(&buf).unwrap();
        let mut plus = Vec::new();
        render_plus(&r, &mut plus).unwrap();
        let plus: Value = serde_json::from_slice(&plus).unwrap();
        assert_eq!(v["jobs"], plus["jobs"]);
        let (reference, rows) = super::super::export::metric_rows(&r.metrics, &r.pairing());
        assert_eq!(v["qsim"]["reference"], reference.as_str());
        assert_eq!(v["qsim"]["summary"].as_array().unwrap().len(), rows.len());
        assert_eq!(
            v["qsim"]["precision"],
            r.precision.as_ref().unwrap().line().as_str()
        );
        assert_eq!(v["qsim"]["plots"]["runs"][1]["label"], "split");
        // No registry row asks for the block yet: no `metrics` key in the jobs.
        assert!(v["jobs"][0]["qsim"].get("metrics").is_none());
    }

    fn parsed(f: fn(&Report, &mut dyn io::Write) -> io::Result<()>) -> (String, Value) {
        let mut buf = Vec::new();
        f(&report(), &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let v = serde_json::from_str(&text).unwrap();
        (text, v)
    }

    #[test]
    fn finite_jobs_set_elapsed_and_their_own_keys() {
        use crate::report::tests::run_finite;
        let r = Report::new(
            &scenario(),
            &[run_finite("fifo", false), run_finite("split", true)],
        );
        let mut buf = Vec::new();
        render(&r, &mut buf).unwrap();
        let v: Value = serde_json::from_slice(&buf).unwrap();
        let (done, open) = (&v["jobs"][0], &v["jobs"][1]);
        // fio's elapsed: whole seconds to the run's end, rounded up (25.41 s -> 26).
        assert_eq!(done["elapsed"], 26);
        assert_eq!(open["elapsed"], 11);
        assert_eq!(done["qsim"]["elapsed_ns"], 23_410_000_000_u64);
        assert!(open["qsim"]["elapsed_ns"].is_null(), "unfinished is null");
        let job = &open["qsim"]["finite_jobs"][0];
        assert_eq!(job["name"], "gitk");
        assert!(job["elapsed_ns"].is_null());
        assert_eq!(job["io_size"], 64 << 20);
        assert_eq!(open["qsim"]["warnings"][0]["kind"], "unfinished");
        // Without finite jobs, neither key.
        let (_, v) = parsed(render);
        let q = &v["jobs"][0]["qsim"];
        assert!(q.get("elapsed_ns").is_none() && q.get("finite_jobs").is_none());
        assert_eq!(v["jobs"][0]["elapsed"], 11);
    }

    #[test]
    fn fio_json_has_what_fio_plot_needs() {
        let (_, v) = parsed(render);
        assert_eq!(
            v["fio version"],
            format!("qsim-{}", env!("CARGO_PKG_VERSION"))
        );
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 2);
        let job = &jobs[0];
        assert_eq!(job["jobname"], "two-queue-fifo");
        let opts = &job["job options"];
        for (key, want) in [
            ("rw", "randrw"),
            ("bs", "4k"),
            ("iodepth", "8"),
            ("numjobs", "1"),
        ] {
            assert_eq!(opts[key], want, "{key}");
        }
        for dir in ["read", "write", "trim"] {
            let d = &job[dir];
            for key in [
                "bw",
                "iops",
                "iops_stddev",
                "runtime",
                "total_ios",
                "io_bytes",
                "bw_bytes",
            ] {
                assert!(d.get(key).is_some(), "{dir}.{key}");
            }
            assert!(d["lat_ns"]["mean"].is_f64() && d["lat_ns"]["stddev"].is_f64());
            assert!(d["iops"].is_f64());
        }
        for key in ["latency_ns", "latency_us", "latency_ms", "iodepth_level"] {
            assert!(job[key].is_object(), "{key}");
        }
        assert_eq!(job["latency_ms"].as_object().unwrap().len(), 12);
        assert!(job["latency_ms"][">=2000"].is_f64());
        // The model's CPU pool does kernel work only: its busy share is system time.
        assert_eq!(job["usr_cpu"], 0.0);
        assert!((job["sys_cpu"].as_f64().unwrap() - 43.21).abs() < 1e-9);
        // Each model job submits and reaps one I/O per call.
        assert_eq!(job["iodepth_submit"]["4"], 100.0);
        assert_eq!(job["iodepth_complete"]["4"], 100.0);
        assert_eq!(job["iodepth_complete"]["0"], 0.0);
        // One disk_util entry per job, named after the job when a file holds several.
        let disk = &v["disk_util"][0];
        assert_eq!(disk["name"], "nvme0n1");
        assert_eq!(disk["jobname"], "two-queue-fifo");
        assert_eq!(
            (disk["read_ios"].clone(), disk["write_ios"].clone()),
            (24_120.into(), 12_060.into())
        );
        assert_eq!(
            (disk["read_ticks"].clone(), disk["in_queue"].clone()),
            (15_001.into(), 245_500.into())
        );
        assert_eq!(disk["read_merges"], 0);
        assert!((disk["util"].as_f64().unwrap() - 87.31).abs() < 1e-9);
        assert_eq!(job["sync"]["lat_ns"]["N"], 0);
        // Values from the report.
        let read = &job["read"];
        assert_eq!(read["total_ios"], 10);
        assert_eq!(read["io_kbytes"], 40);
        assert_eq!(read["bw_bytes"], 4096);
        assert_eq!(read["bw"], 4);
        assert_eq!(read["runtime"], 10_000);
        assert_eq!(read["clat_ns"]["N"], 10);
        let pct = read["clat_ns"]["percentile"].as_object().unwrap();
        assert_eq!(pct.len(), 17);
        assert_eq!(pct["1.000000"], 38_144);
        assert_eq!(pct["99.990000"], 41_680_896);
        assert!(read["clat_ns"].get("bins").is_none());
        assert!(read["slat_ns"].get("percentile").is_none());
        assert!(job["trim"]["clat_ns"].get("percentile").is_none());
        assert_eq!(job["trim"]["clat_ns"]["N"], 0);
        assert_eq!(job["qsim"]["policy"], "fifo");
        // Without a memory model: no direct-reclaim stage, no memory or variant keys.
        let stages = job["qsim"]["stages"]["read"].as_array().unwrap();
        assert_eq!(stages.len(), 7);
        assert!(stages.iter().all(|s| s["label"] != "direct reclaim"));
        assert!(job["qsim"].get("memory").is_none() && job["qsim"].get("variant").is_none());
        assert_eq!(jobs[1]["qsim"]["warnings"][0]["kind"], "work-budget");
    }

    /// `--fio-dir`'s file: one job, the same object as in the json+ of all runs, and its own
    /// `disk_util` entry without a job name, as fio writes it.
    #[test]
    fn one_run_alone_is_the_same_job() {
        let r = report();
        let mut all = Vec::new();
        render_plus(&r, &mut all).unwrap();
        let all: Value = serde_json::from_slice(&all).unwrap();
        let mut one = Vec::new();
        render_run_plus(&r, 1, &mut one).unwrap();
        let one: Value = serde_json::from_slice(&one).unwrap();
        assert_eq!(one["jobs"].as_array().unwrap().len(), 1);
        assert_eq!(one["jobs"][0], all["jobs"][1]);
        assert_eq!(one["fio version"], all["fio version"]);
        assert!(one["disk_util"][0].get("jobname").is_none());
        assert_eq!(
            one["disk_util"][0]["read_ios"],
            all["disk_util"][1]["read_ios"]
        );
    }

    #[test]
    fn json_plus_adds_bins_in_order() {
        let (text, v) = parsed(render_plus);
        let bins = v["jobs"][0]["read"]["clat_ns"]["bins"].as_object().unwrap();
        let total: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
        assert_eq!(total, 10);
        assert_eq!(bins["38144"], 1);
        // Percentile keys appear in fio's order, not sorted as strings.
        let one = text.find("\"1.000000\"").unwrap();
        let five = text.find("\"5.000000\"").unwrap();
        let ten = text.find("\"10.000000\"").unwrap();
        assert!(one < five && five < ten);
        // The wall-clock fields hold the simulated start, the epoch: the same in every run.
        assert_eq!(
            (v["timestamp"].clone(), v["timestamp_ms"].clone()),
            (0.into(), 0.into())
        );
        assert_eq!(v["time"], EPOCH_TIME);
        assert_eq!(v["jobs"][0]["eta"], 0);
        assert!(
            v.get("global options").is_none(),
            "no job file, no global options"
        );
        // fio's `%f` floats.
        assert!(text.contains("\"latency_percentile\": 100.000000,"));
        assert!(text.contains("\"mean\": "), "{text}");
    }

    #[test]
    fn floats_counts_and_given_options_as_fio_writes_them() {
        let show = |v: f64| serde_json::to_string(&FioFloat(v)).unwrap();
        assert_eq!(show(2412.0), "2412.000000");
        assert_eq!(show(0.1234567), "0.123457");
        assert_eq!(show(f64::NAN), "null");
        assert_eq!(serde_json::to_value(FioFloat(0.5)).unwrap(), 0.5);
        // One replication's share of a pooled count, rounded.
        assert_eq!(per_rep(2068, 10), 207);
        assert_eq!(per_rep(15, 10), 2);
        assert_eq!(per_rep(5, 0), 5);
        // A job file's options: [global] at the top, the job's own beside fio-plot's five.
        let mut r = report();
        let pairs = |l: &[(&str, &str)]| {
            l.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        r.fio_given = crate::scenario::FioGiven {
            global: pairs(&[("direct", "1")]),
            job: pairs(&[("bs", "4096"), ("ioengine", "libaio"), ("name", "x")]),
        };
        let mut buf = Vec::new();
        render(&r, &mut buf).unwrap();
        let v: Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(v["global options"]["direct"], "1");
        let o = &v["jobs"][0]["job options"];
        assert_eq!(
            (o["bs"].clone(), o["ioengine"].clone()),
            ("4096".into(), "libaio".into())
        );
        assert_eq!(
            o["name"], "two-queue-fifo",
            "the job's name stays the run's"
        );
        assert_eq!(o["numjobs"], "1");
    }

    #[test]
    fn qsim_schema_round_trips() {
        let (_, v) = parsed(render_report);
        assert_eq!(v["schema_version"], 1);
        assert_eq!(v["policies"].as_array().unwrap().len(), 2);
        assert_eq!(v["policies"][1]["end"], "Saturated");
        assert!(v["policies"][0]["directions"][0]["clat"]["bins"].is_array());
        // Keys that exist only with a memory model or variants stay out.
        assert!(v.get("variants").is_none());
        assert!(v["policies"][0].get("memory").is_none());
        assert!(v["policies"][0].get("variant").is_none());
    }

    #[test]
    fn block_sizes_read_like_fio() {
        assert_eq!(bs_string(4096), "4k");
        assert_eq!(bs_string(512), "512");
        assert_eq!(bs_string(1 << 20), "1m");
        assert_eq!(bs_string(6144), "6k");
    }

    #[test]
    fn memory_goes_in_the_qsim_object() {
        let r = Report::new(
            &scenario(),
            &[run_with_memory("fifo"), run_with_memory("split")],
        );
        let mut buf = Vec::new();
        render(&r, &mut buf).unwrap();
        let v: Value = serde_json::from_slice(&buf).unwrap();
        let job = &v["jobs"][0];
        let m = &job["qsim"]["memory"];
        for key in [
            "total_pages",
            "min",
            "low",
            "high",
            "atomic_floor",
            "atomic_attempts",
            "atomic_failures",
            "atomic_fail_free_sum",
            "atomic_fail_free_avg",
            "failure_log",
            "kswapd_wakeups",
            "kswapd_awake_ns",
            "kswapd_passes",
            "kswapd_waits",
            "kswapd_skips",
            "low_wmark_hit_quickly",
            "high_wmark_hit_quickly",
            "order0_fallbacks",
            "kswapd_scanned",
            "kswapd_reclaimed",
            "direct_stalls",
            "direct_stall",
            "direct_waits",
            "direct_scanned",
            "direct_reclaimed",
            "pageout_pages",
            "bounce_from_zone",
            "bounce_from_reserve",
            "mempool_waits",
            "mempool_wait_ns",
            "partial_clones",
            "partial_nap_ns",
            "free_min_seen",
            "free_avg",
            "below_min_ns",
            "end_pages",
            "end_free",
        ] {
            assert!(m.get(key).is_some(), "memory.{key}");
        }
        assert_eq!(m["atomic_failures"][2], 37);
        assert_eq!(m["atomic_failures_total"], 37);
        assert_eq!(m["atomic_fail_free_avg"][2], 512.0);
        assert_eq!(m["failure_log"][0]["at_ns"], 12_345_678_901u64);
        assert_eq!(m["failure_log"][0]["order"], 2);
        assert_eq!(m["kswapd_waits"]["class"][1]["class"], "async");
        assert_eq!(m["kswapd_waits"]["class"][1]["total_ns"], 4_100_000_000u64);
        let stall = &m["direct_stall"];
        assert_eq!(stall["n"], 9);
        assert_eq!(stall["total_ns"], 310_000_000);
        let (p50, p99, p999) = (
            stall["p50_ns"].as_u64().unwrap(),
            stall["p99_ns"].as_u64().unwrap(),
            stall["p99_9_ns"].as_u64().unwrap(),
        );
        // Bucket midpoints within fio's 0.8% of 13 ms and 136 ms.
        assert!(p50.abs_diff(13_000_000) < 13_000_000 / 100, "{p50}");
        assert!(p99.abs_diff(136_000_000) < 136_000_000 / 100, "{p99}");
        assert_eq!(p999, p99);
        assert_eq!(m["end_pages"]["dirty"], 60_000);
        // The fio keys are untouched and the stage list now has the direct-reclaim row.
        assert_eq!(job["read"]["total_ios"], 10);
        assert_eq!(job["qsim"]["stages"]["read"].as_array().unwrap().len(), 8);
        assert_eq!(job["qsim"]["stages"]["read"][0]["label"], "direct reclaim");
        // qsim's own schema carries it too.
        let mut buf = Vec::new();
        render_report(&r, &mut buf).unwrap();
        let v: Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(v["policies"][0]["memory"]["direct_stalls"], 9);
        assert_eq!(v["policies"][0]["memory"]["atomic_failures_total"], 37);
        assert_eq!(
            v["policies"][0]["memory"]["kswapd_waits"]["class"][1]["total_ns"],
            4_100_000_000u64
        );
    }
}
