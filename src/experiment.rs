//! Scenario → one run per policy (per variant and policy, with variants) → report.
//!
//! Each policy of the scenario is an independent run with the same seed (so every workload draws
//! the same random numbers: common random numbers). A scenario with variants runs each variant's
//! scenario under each of its policies, variant-major ([`plan`]). Runs go to a pool of threads
//! and their results land in slots by index, so the report is byte-identical whatever the thread
//! count or the order in which runs finish.
//!
//! `qsim run` replicates every run `replications:` times ([`run_replicated`]): replication `r`
//! draws from `RngStreams::new(seed, r)` under every policy and variant alike, so runs of one
//! replication share their random numbers and paired differences are sharp. The fio-style
//! blocks show replication 0; [`crate::report::replications`] summarises them all.
//!
//! The same (run, replication) jobs can be cut into shards for other processes or machines
//! (`qsim run --shard i/N`) and folded back by `qsim merge` into the same bytes ([`shard`]).
//!
//! Every run ends with its invariants checked ([`crate::model::observe::invariants`]); a broken one fails
//! the run. `--check-invariants` also prints them, one table per policy, after the report.

use crate::model::base::obs::RunObs;
use crate::model::{self, RunResult, crypt::policy};
use crate::report::Report;
pub use crate::report::plan::{PlannedRun, plan};
pub use crate::report::precision::{HeadlineMetric, Precision, PrecisionOutcome};
use crate::report::spread::RepSample;
use crate::scenario::Scenario;
use crate::stats::{Summary, next_replications, precise_enough};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

mod files;
mod pool;
mod same;
pub mod shard;
pub mod trace;

use files::{per_io_sinks, write_exports};
use pool::{parallel, parallel_fold};
use same::{Copies, SameModel};

/// Options of `qsim run` that change how a scenario runs or prints.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Output format: "normal" (fio-style text) or "json".
    pub format: String,
    /// Worker threads (0 = all cores).
    pub jobs: usize,
    /// A precision target for the headline metric (`--precision`).
    pub precision: Option<Precision>,
    /// Write the full results as JSON here (`--json FILE`).
    pub json_file: Option<PathBuf>,
    /// Write the replication summary as CSV here (`--csv FILE`).
    pub csv_file: Option<PathBuf>,
    /// Write the replication summary as Markdown tables here (`--markdown FILE`).
    pub markdown_file: Option<PathBuf>,
    /// Draw the plots into this directory (`--plots DIR`).
    pub plots_dir: Option<PathBuf>,
    /// The wall-clock safety valve: runs still going this long after the start stop at their
    /// next slice and are reported as stopped by the limit (`None`: no limit).
    pub time_limit: Option<std::time::Duration>,
    /// Print every run's invariants after the report (to stderr under the JSON format, so
    /// stdout stays one JSON document), and fail if any is broken.
    pub check_invariants: bool,
    /// Write fio's files for fio-plot here, one folder per run (`--fio-dir DIR`,
    /// [`crate::report::fiodir`]).
    pub fio_dir: Option<PathBuf>,
    /// fio's histogram log in `--fio-dir` (`log_hist_msec`): window ns and coarseness.
    pub log_hist: Option<(u64, u32)>,
    /// Which of fio's logs `--fio-dir` writes, averaged over which window or one line per I/O
    /// (`log_avg_msec`, `write_*_log`, `log_offset`).
    pub fio_logs: crate::report::fiodir::LogOptions,
    /// Append the plain-text pictures ([`crate::plot::ascii::pictures`]) to the text report
    /// (`--ascii`; the JSON format ignores it, so stdout stays one JSON document).
    pub ascii: bool,
    /// Print the text report's tables only, without the per-run blocks (`--summary`; the JSON
    /// format ignores it).
    pub summary_only: bool,
    /// Print the per-run blocks' lines whole, in fio's one-line forms (`--fio-exact`).
    pub fio_exact: bool,
}

/// Errors of a run (the scenario itself was valid).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A policy name that no longer resolves (validation should have caught it).
    #[error("unknown policy `{0}`")]
    UnknownPolicy(String),
    /// The wall-clock safety valve stopped at least one run (the report was printed).
    #[error(
        "the wall-clock limit (--time-limit {}) stopped {runs} run(s) before their horizon; \
         the report above covers what they simulated, which depends on this machine's speed",
        crate::engine::SimDuration::from_ns(limit.as_nanos().min(u128::from(u64::MAX)) as u64)
    )]
    TimeLimit {
        /// The limit.
        limit: std::time::Duration,
        /// Runs it stopped.
        runs: usize,
    },
    /// A conservation law failed: a simulator bug, not a user error.
    #[error("invariant violated under policy `{policy}`: {what}")]
    Invariant {
        /// The policy whose run broke it.
        policy: String,
        /// What broke.
        what: String,
    },
    /// Writing the report failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Drawing or writing a plot failed.
    #[error(transparent)]
    Plot(#[from] crate::plot::PlotError),
    /// An output path cannot be used (checked before anything is simulated).
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    /// Writing an export file failed (nothing was left at `path`).
    #[error("cannot write {}: {source}", path.display())]
    Export {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Runs every run of the scenario's [`plan`], in parallel, and returns the results in plan
/// order; fails on the first run (in that order) whose run broke an invariant.
pub fn run_all(sc: &Scenario, jobs: usize) -> Result<Vec<RunResult>, Error> {
    let results = run_unchecked(sc, jobs)?;
    first_violation(&results)?;
    Ok(results)
}

/// The first broken invariant of `results`, in policy order, as an error.
fn first_violation(results: &[RunResult]) -> Result<(), Error> {
    for r in results {
        if let Some(v) = r.violations.first() {
            return Err(Error::Invariant {
                policy: r.obs.policy.clone(),
                what: v.clone(),
            });
        }
    }
    Ok(())
}

/// Runs every run of the scenario's [`plan`], in parallel, and returns the results in plan
/// order, broken invariants included. With variants, each result's `obs.policy` is the run's
/// label (`<variant>` or `<variant>/<policy>`).
pub fn run_unchecked(sc: &Scenario, jobs: usize) -> Result<Vec<RunResult>, Error> {
    let runs = plan(sc);
    let infos = runs
        .iter()
        .map(|r| policy::find(r.policy).ok_or_else(|| Error::UnknownPolicy(r.policy.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let results = parallel(infos.len(), jobs, |i| {
        let mut r = model::run_policy(runs[i].scenario, infos[i]);
        if runs[i].variant.is_some() {
            r.obs.policy = runs[i].label.clone();
        }
        r
    });
    Ok(results)
}

/// `qsim reproduce`: runs every run of `sc` with the published section's replications (the
/// scenario's when it gives none) and compares the published figures with the simulated ones.
pub fn reproduce(
    sc: &Scenario,
    published: &crate::scenario::published::Published,
    jobs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<crate::report::reproduce::Reproduction, Error> {
    use crate::report::reproduce::{RunMetrics, reproduce};
    let mut sc = sc.clone();
    let reps = published.replications.unwrap_or(sc.replications);
    sc.replications = reps;
    for v in &mut sc.variants {
        v.scenario.replications = reps;
    }
    let rep = run_replicated(&sc, jobs, None, false, model::Valve::OPEN, progress)?;
    first_violation(&rep.first)?;
    let runs: Vec<RunMetrics> = plan(&sc)
        .iter()
        .zip(&rep.samples)
        .map(|(p, s)| RunMetrics {
            run: crate::scenario::published::RunRef {
                variant: p.variant.map(str::to_string),
                policy: p.policy.to_string(),
            },
            label: p.label.clone(),
            reps: s.iter().map(|x| x.metrics).collect(),
        })
        .collect();
    Ok(reproduce(&sc.name, published, reps, &runs))
}

/// Every run of the plan replicated: replication 0's whole result per run (its invariants and
/// timeline), every replication's observations pooled, and each replication's small sample.
#[derive(Debug)]
pub struct Replicated {
    /// Replication 0 of each run, in plan order.
    pub first: Vec<RunResult>,
    /// Each run's observations pooled over all its replications, in replication order
    /// ([`RunObs::merge`]): the fio-style blocks are built from these.
    pub pooled: Vec<RunObs>,
    /// Each run's samples, one per replication (replication 0 first), in plan order.
    pub samples: Vec<Vec<RepSample>>,
    /// The first broken invariant of any replication after the first, as (label, what).
    pub broken: Option<(String, String)>,
    /// How a `--precision` target ended (`None` without one).
    pub precision: Option<PrecisionOutcome>,
}

/// What one run of the plan has gathered so far.
#[derive(Default)]
struct Gathered {
    first: Option<RunResult>,
    pooled: Option<RunObs>,
    samples: Vec<RepSample>,
}

/// Runs every run of the plan `replications` times (each replication has its own random
/// streams, shared by every run of that replication: common random numbers), in parallel over
/// `jobs` threads. Results are folded in (run, replication) order whatever the order they
/// finish in, so output never depends on the thread count, and only a window of finished runs
/// waits in memory.
///
/// With a [`Precision`] target, every run starts at the largest replication count of the
/// plan (at least 2) and all grow together ([`next_replications`]) until the target holds for
/// every run or the cap is reached. `progress(done, total)` is called after each replication.
/// With `timeline`, replication 0 of each run records a [`crate::stats::series::Timeline`]
/// (the pooled observations keep it).
///
/// Once `valve` trips (the wall-clock limit, or a cancel) every run still going stops at its next slice
/// ([`model::run_replication_until`]), and no further precision round starts.
pub fn run_replicated(
    sc: &Scenario,
    jobs: usize,
    precision: Option<Precision>,
    timeline: bool,
    valve: model::Valve<'_>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Replicated, Error> {
    let first = if timeline {
        model::Recording::timeline()
    } else {
        model::Recording::default()
    };
    run_replicated_with(sc, jobs, precision, first, valve, progress)
}

/// [`run_replicated`], replication 0 of each run recording what `first` asks for (a
/// timeline, the per-window sums of fio's log files); the pooled observations keep it.
pub fn run_replicated_with(
    sc: &Scenario,
    jobs: usize,
    precision: Option<Precision>,
    first: model::Recording,
    valve: model::Valve<'_>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Replicated, Error> {
    run_replicated_into(sc, jobs, precision, first, valve, progress, &[])
}

/// Per run of the plan, how to make the sink its replication 0 hands every completed I/O to
/// (fio's per-I/O logs), taken by the thread that runs it; an empty list gives none.
type Sinks = [Slot];

/// One run's sink maker, until the thread that runs its replication 0 takes it: sinks are
/// made when their run starts, so only the runs going at once hold open files and buffers.
type Slot = Mutex<Option<MakeSink>>;

/// Makes one run's sink.
type MakeSink = Box<dyn FnOnce() -> Box<dyn model::observe::recorder::IoSink> + Send>;

/// [`run_replicated_with`], replication 0 of run `i` also handing its I/Os to `sinks[i]`
/// (which comes back in that run's [`Replicated::first`] result). Only replication 0 of each
/// run ever has a sink, so what it receives is the same whatever the thread count.
fn run_replicated_into(
    sc: &Scenario,
    jobs: usize,
    precision: Option<Precision>,
    first: model::Recording,
    valve: model::Valve<'_>,
    progress: &(dyn Fn(usize, usize) + Sync),
    sinks: &Sinks,
) -> Result<Replicated, Error> {
    let runs = plan(sc);
    let infos = runs
        .iter()
        .map(|r| policy::find(r.policy).ok_or_else(|| Error::UnknownPolicy(r.policy.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let mut acc = Fold::new(runs.len());
    let same = SameModel::of(&runs, &infos, sinks.is_empty());
    // Replications wanted per run in this round.
    let mut want = first_round(&runs, precision);
    let mut done = 0;
    let mut outcome = None;
    loop {
        let index = round_jobs(|i| acc.gathered[i].samples.len(), &want);
        let total = done + index.len();
        let finished = AtomicUsize::new(done);
        let mut copies = Copies::default();
        parallel_fold(
            index.len(),
            jobs,
            |k| {
                let (i, rep) = index[k];
                let r = same.source[i].is_none().then(|| {
                    let sink = match (rep, sinks.get(i)) {
                        (0, Some(slot)) => slot.lock().expect("a run thread panicked").take(),
                        _ => None,
                    }
                    .map(|make| make());
                    run_one_logged(&runs[i], infos[i], rep, first, valve, sink)
                });
                progress(finished.fetch_add(1, Ordering::Relaxed) + 1, total);
                r
            },
            |k, r| {
                let (i, rep) = index[k];
                acc.add(i, rep, copies.settle(&same, i, rep, &runs[i].label, r))
            },
        );
        done = total;
        let Some(p) = precision else {
            break;
        };
        match judge(&acc.gathered, &runs, p, &want, valve) {
            Ok(next) => want = next,
            Err(o) => {
                outcome = Some(o);
                break;
            }
        }
    }
    Ok(acc.finish(outcome))
}

/// The (run, replication) jobs of one round, run-major: for each run `i`, the replications
/// from `have(i)` (those it already has) up to `want[i]`. Job k of the list is folded k-th.
fn round_jobs(have: impl Fn(usize) -> usize, want: &[usize]) -> Vec<(usize, u64)> {
    let mut index = Vec::new();
    for (i, &w) in want.iter().enumerate() {
        for rep in have(i)..w {
            index.push((i, rep as u64));
        }
    }
    index
}

/// Every (run, replication) job of a plan without a precision target, in the order
/// [`run_replicated`] folds them: job `k` of this list is job `k` of `qsim run --shard`.
pub fn planned_jobs(runs: &[PlannedRun]) -> Vec<(usize, u64)> {
    round_jobs(|_| 0, &first_round(runs, None))
}

/// The fold of finished jobs into a [`Replicated`], one job at a time in (run, replication)
/// order: [`run_replicated`] and `qsim merge` ([`shard`]) both fold through it, so a merged
/// report cannot drift from a one-process one.
struct Fold {
    gathered: Vec<Gathered>,
    broken: Option<(String, String)>,
}

impl Fold {
    /// Nothing gathered yet for `runs` runs.
    fn new(runs: usize) -> Fold {
        Fold {
            gathered: (0..runs).map(|_| Gathered::default()).collect(),
            broken: None,
        }
    }

    /// Adds replication `rep` of run `i`: its sample, its observations to the pool, and
    /// either the whole result (replication 0) or its first broken invariant, if any.
    fn add(&mut self, i: usize, rep: u64, r: RunResult) {
        let g = &mut self.gathered[i];
        g.samples.push(RepSample::of(&r.obs));
        match g.pooled.as_mut() {
            Some(p) => p.merge(&r.obs),
            None => g.pooled = Some(r.obs.clone()),
        }
        if rep == 0 {
            g.first = Some(r);
        } else if self.broken.is_none()
            && let Some(v) = r.violations.first()
        {
            self.broken = Some((format!("{} (replication {rep})", r.obs.policy), v.clone()));
        }
    }

    /// The folded result, with how a precision target ended.
    fn finish(self, precision: Option<PrecisionOutcome>) -> Replicated {
        Replicated::from_gathered(self.gathered, self.broken, precision)
    }
}

/// Replication `rep` of planned run `run` under policy `info`, recording what `first` asks
/// for when it is replication 0, stopping at its next slice once `valve` trips; labelled as the
/// report labels it.
fn run_one(
    run: &PlannedRun,
    info: &'static policy::PolicyInfo,
    rep: u64,
    first: model::Recording,
    valve: model::Valve<'_>,
) -> RunResult {
    run_one_logged(run, info, rep, first, valve, None)
}

/// [`run_one`], handing every completed I/O to `sink` when there is one.
fn run_one_logged(
    run: &PlannedRun,
    info: &'static policy::PolicyInfo,
    rep: u64,
    first: model::Recording,
    valve: model::Valve<'_>,
    sink: Option<Box<dyn model::observe::recorder::IoSink>>,
) -> RunResult {
    let recording = if rep == 0 {
        first
    } else {
        model::Recording::default()
    };
    let mut r = model::run_replication_logged(run.scenario, info, rep, recording, valve, sink);
    if run.variant.is_some() {
        r.obs.policy = run.label.clone();
    }
    r
}

/// Replications each run starts with: its own `replications:`; under a precision target, the
/// most any run asks for (at least 2, at most the cap), for every run alike.
fn first_round(runs: &[PlannedRun], precision: Option<Precision>) -> Vec<usize> {
    let start = |r: &PlannedRun| r.scenario.replications.max(1) as usize;
    match precision {
        None => runs.iter().map(start).collect(),
        Some(p) => {
            let n = runs
                .iter()
                .map(start)
                .max()
                .unwrap_or(1)
                .max(2)
                .min(p.cap.max(1));
            vec![n; runs.len()]
        }
    }
}

/// After a round under precision target `p`: the next round's replications per run, or how
/// the target ended (reached, the cap, or the valve tripped).
fn judge(
    gathered: &[Gathered],
    runs: &[PlannedRun],
    p: Precision,
    want: &[usize],
    valve: model::Valve<'_>,
) -> Result<Vec<usize>, PrecisionOutcome> {
    // Each run's relative half-width, and whether it meets the target.
    let judged: Vec<(f64, bool)> = gathered
        .iter()
        .map(|g| {
            let xs: Vec<f64> = g.samples.iter().map(|s| p.metric.get(&s.metrics)).collect();
            let s = Summary::of(&xs);
            (s.ci95_half / s.mean.abs(), precise_enough(&s, p.target_rel))
        })
        .collect();
    let out_of_time = valve.tripped();
    let reached = judged.iter().all(|&(_, ok)| ok) || out_of_time;
    let current = want.iter().copied().max().unwrap_or(0);
    if let Some(n) = (!reached)
        .then(|| next_replications(current, p.cap))
        .flatten()
    {
        return Ok(vec![n; runs.len()]);
    }
    // The worst run: one that missed the target before any that met it; among those, the
    // widest relative interval (NaN, a zero or unmeasured mean, counts as widest when the
    // target was missed and narrowest when it was met).
    let key = |(rel, ok): (f64, bool)| match (ok, rel.is_nan()) {
        (false, true) => (1, f64::INFINITY),
        (false, false) => (1, rel),
        (true, true) => (0, 0.0),
        (true, false) => (0, rel),
    };
    let w = (0..runs.len())
        .max_by(|&a, &b| {
            let (ka, kb) = (key(judged[a]), key(judged[b]));
            ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1)).then(b.cmp(&a))
        })
        .unwrap_or(0);
    Err(PrecisionOutcome {
        target: p,
        reached,
        replications: current,
        worst: (runs[w].label.clone(), judged[w].0),
    })
}

impl Replicated {
    /// The result of every run's gathered replications, in plan order.
    fn from_gathered(
        gathered: Vec<Gathered>,
        broken: Option<(String, String)>,
        precision: Option<PrecisionOutcome>,
    ) -> Replicated {
        let mut first = Vec::new();
        let mut pooled = Vec::new();
        let mut samples = Vec::new();
        for g in gathered {
            first.push(g.first.expect("every run has replication 0"));
            pooled.push(g.pooled.expect("every run has a replication"));
            samples.push(g.samples);
        }
        Replicated {
            first,
            pooled,
            samples,
            broken,
            precision,
        }
    }
}

/// Runs every run of the scenario and writes the report to `out` in one piece, so a failure
/// never leaves half a report behind.
///
/// With [`RunOptions::check_invariants`] the report is printed even when a run broke an
/// invariant, followed by every run's invariant table, and the broken invariant is returned as
/// the error afterwards.
pub fn run_and_report(
    sc: &Scenario,
    opts: &RunOptions,
    out: &mut dyn Write,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(), Error> {
    run_report_keep(sc, opts, out, progress).map(|_| ())
}

/// [`run_and_report`], handing back the report it printed, for a caller that reads on from
/// it (the flag comparison's robustness study, `qsim run --robust`).
pub fn run_report_keep(
    sc: &Scenario,
    opts: &RunOptions,
    out: &mut dyn Write,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Report, Error> {
    check_outputs(opts)?;
    let timeline = wants_timeline(opts);
    let deadline = opts.time_limit.map(|t| std::time::Instant::now() + t);
    let mut first = if timeline {
        model::Recording::timeline()
    } else {
        model::Recording::default()
    };
    first.fio_log = opts.fio_dir.is_some();
    first.hist_log = opts.log_hist;
    first.log_avg_ns = Some(opts.fio_logs.avg_msec.saturating_mul(1_000_000));
    let sinks = per_io_sinks(sc, opts)?;
    let valve = model::Valve::until(deadline);
    let replicated = run_replicated_into(
        sc,
        opts.jobs,
        opts.precision,
        first,
        valve,
        progress,
        &sinks,
    )?;
    report_replicated(sc, opts, replicated, timeline, out)
}

/// Whether the outputs `opts` asks for draw timelines (plots, or the `--json` export that
/// `qsim plot` redraws them from): replication 0 of each run then records one.
fn wants_timeline(opts: &RunOptions) -> bool {
    opts.plots_dir.is_some() || opts.json_file.is_some()
}

/// Writes the report of `replicated` (folded with timelines when `timeline`) to `out` and
/// the exports `opts` asks for: the second half of [`run_and_report`], which `qsim merge`
/// shares so its output is byte for byte that of one `qsim run`.
fn report_replicated(
    sc: &Scenario,
    opts: &RunOptions,
    replicated: Replicated,
    timeline: bool,
    out: &mut dyn Write,
) -> Result<Report, Error> {
    if !opts.check_invariants {
        first_violation(&replicated.first)?;
    }
    let later = match &replicated.broken {
        Some((policy, what)) => Err(Error::Invariant {
            policy: policy.clone(),
            what: what.clone(),
        }),
        None => Ok(()),
    };
    let broken = first_violation(&replicated.first).and(later);
    let mut replicated = replicated;
    let per_io: Vec<crate::report::fiolog::PerIoLogs> = replicated
        .first
        .iter_mut()
        .filter_map(|r| r.io_sink.take())
        .filter_map(|s| (s as Box<dyn std::any::Any>).downcast().ok())
        .map(|logs| *logs)
        .collect();
    let json = opts.format == "json";
    let ascii = opts.ascii && !json;
    // The pictures draw from the plot series; without a timeline recorded they hold none.
    let report = build_report(sc, opts, replicated, timeline || ascii);
    let mut buf = Vec::new();
    if json {
        crate::report::json::render(&report, &mut buf)?;
    } else {
        let text = crate::report::text::TextOptions {
            summary_only: opts.summary_only,
            fio_exact: opts.fio_exact,
            ..Default::default()
        };
        crate::report::text::render_run_with(&report, &text, &mut buf)?;
    }
    if let (true, Some(plots)) = (ascii, &report.plots) {
        buf.push(b'\n');
        buf.extend_from_slice(crate::plot::ascii::pictures::render(plots).as_bytes());
    }
    out.write_all(&buf)?;
    out.flush()?;
    if json && !report.invariants.is_empty() {
        let mut err = std::io::stderr().lock();
        crate::report::invariants::render_all(&report, &mut err)?;
        err.flush()?;
    }
    // The report is out before any export, so a failed export loses none of it.
    write_exports(opts, &report, per_io, out)?;
    let timed_out = report
        .policies
        .iter()
        .filter(|p| p.end == crate::model::base::obs::RunEnd::TimeLimit)
        .count();
    if let (Some(limit), true) = (opts.time_limit, timed_out > 0) {
        return Err(Error::TimeLimit {
            limit,
            runs: timed_out,
        });
    }
    broken.map(|()| report)
}

/// The one report of a replicated run: blocks from the pooled observations, then what the
/// replications add (spread, metrics, plot series when `plots`), the precision outcome and,
/// with `--check-invariants`, replication 0's invariants.
fn build_report(sc: &Scenario, opts: &RunOptions, rep: Replicated, plots: bool) -> Report {
    let mut report = Report::new(sc, &rep.pooled);
    let timelines = plots.then(|| {
        rep.first
            .iter()
            .map(|r| r.obs.timeline.as_deref().cloned())
            .collect()
    });
    report.attach_replications(&rep.samples, timelines);
    report.fio_log_options = opts.fio_logs;
    if opts.fio_dir.is_some() {
        report.fio_logs = rep
            .first
            .iter()
            .map(|r| r.obs.fio_log.as_deref().cloned())
            .collect();
    }
    report.precision = rep.precision;
    if opts.check_invariants {
        report.invariants = rep
            .first
            .into_iter()
            .map(|r| (r.obs.policy, r.invariants))
            .collect();
    }
    report
}

/// Checks every output path of `opts` before anything is simulated ([`crate::output`]'s
/// rules), and that no two outputs name the same file.
pub fn check_outputs(opts: &RunOptions) -> Result<(), crate::output::OutputError> {
    use crate::output::{OutputError, Target, check_dir, check_file};
    let files = [
        ("--json", &opts.json_file),
        ("--csv", &opts.csv_file),
        ("--markdown", &opts.markdown_file),
    ];
    let mut seen: Vec<(&str, PathBuf)> = Vec::new();
    for (flag, path) in files {
        let Some(path) = path else { continue };
        if let Target::Replace { path: real } = check_file(flag, path)? {
            if let Some((other, _)) = seen.iter().find(|(_, p)| *p == real) {
                return Err(OutputError {
                    flag: flag.to_string(),
                    path: path.clone(),
                    message: format!("{other} writes the same file"),
                    hint: "give each export its own file".to_string(),
                });
            }
            seen.push((flag, real));
        }
    }
    if let Some(dir) = &opts.plots_dir {
        check_dir("--plots", dir)?;
    }
    if let Some(dir) = &opts.fio_dir {
        check_dir("--fio-dir", dir)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::invariants::render_invariants;

    /// A broken invariant is printed as such and turns into the run's error.
    #[test]
    fn a_broken_invariant_is_shown_and_fails_the_run() {
        let sc = crate::scenario::load_str(
            "t.yaml",
            "duration: 1s\ndevice: { kind: generic, service: 1ms }\npolicies: [none, fifo]\n\
             workloads:\n  - { kind: fio, rw: randread, iodepth: 2 }\n",
        )
        .unwrap();
        let mut results = run_unchecked(&sc, 1).unwrap();
        assert!(first_violation(&results).is_ok());
        // Fabricate a miscount in the second policy's device integral.
        let inv = &mut results[1].invariants;
        let device = inv.little.iter_mut().find(|c| c.time_sum > 0).unwrap();
        device.area += 1;
        device.holds = device.area == device.time_sum;
        results[1].violations = inv.violations();
        let mut text = Vec::new();
        render_invariants("fifo", &results[1].invariants, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("BROKEN") && text.contains("NO"), "{text}");
        let Err(Error::Invariant { policy, what }) = first_violation(&results) else {
            panic!("the miscount passed")
        };
        assert_eq!(policy, "fifo");
        assert!(what.contains("differ by 1"), "{what}");
    }

    #[test]
    fn pooled_replications_add_up_and_keep_the_first_one_whole() {
        let mut sc = tiny("fifo");
        sc.replications = 3;
        let rep = run_replicated(&sc, 2, None, false, model::Valve::OPEN, &|_, _| {}).unwrap();
        let info = policy::find("fifo").unwrap();
        let each: Vec<RunObs> = (0..3)
            .map(|r| model::run_replication(&sc, info, r).obs)
            .collect();
        let pooled = &rep.pooled[0];
        let sum = |f: &dyn Fn(&RunObs) -> u64| each.iter().map(f).sum::<u64>();
        assert_eq!(pooled.dirs[0].ios, sum(&|o| o.dirs[0].ios));
        assert_eq!(
            pooled.dirs[0].clat.count(),
            sum(&|o| o.dirs[0].clat.count())
        );
        assert_eq!(pooled.measured.as_ns(), sum(&|o| o.measured.as_ns()));
        assert_eq!(pooled.events, sum(&|o| o.events));
        assert_eq!(pooled.replications, 3);
        assert_eq!(
            pooled.dirs[0].clat.max(),
            each.iter().map(|o| o.dirs[0].clat.max()).max().unwrap()
        );
        assert_eq!(rep.first[0].obs.dirs[0].ios, each[0].dirs[0].ios);
        assert_eq!(rep.samples[0].len(), 3);
        // Debug text, because NaN (no memory model) is not equal to itself.
        assert_eq!(
            format!("{:?}", rep.samples[0][2]),
            format!("{:?}", RepSample::of(&each[2]))
        );
    }

    /// A 1 s scenario on a 1 ms generic device with the given policies.
    pub(super) fn tiny(policies: &str) -> Scenario {
        crate::scenario::load_str(
            "t.yaml",
            &format!(
                "duration: 1s\ndevice: {{ kind: generic, service: 1ms }}\npolicies: [{policies}]\n\
                 workloads:\n  - {{ kind: fio, rw: randread, iodepth: 2 }}\n"
            ),
        )
        .unwrap()
    }

    /// `base` with variants built in Rust: each (name, policies, device service in ms).
    pub(super) fn with_variants(base: &Scenario, variants: &[(&str, &[&str], u64)]) -> Scenario {
        use crate::scenario::{DeviceConfig, Distribution, Variant};
        let mut sc = base.clone();
        sc.variants = variants
            .iter()
            .map(|&(name, policies, service_ms)| {
                let mut v = base.clone();
                v.policies = policies.iter().map(|p| p.to_string()).collect();
                if let DeviceConfig::Generic(g) = &mut v.device {
                    g.service = Distribution::Deterministic {
                        value: crate::engine::SimDuration::from_ms(service_ms),
                    };
                }
                Variant {
                    name: name.to_string(),
                    scenario: Box::new(v),
                }
            })
            .collect();
        sc
    }

    fn labels(sc: &Scenario) -> Vec<String> {
        plan(sc).into_iter().map(|r| r.label).collect()
    }

    #[test]
    fn the_plan_is_variants_by_policies_variant_major() {
        let base = tiny("none, fifo");
        assert_eq!(labels(&base), ["none", "fifo"]);
        assert!(plan(&base).iter().all(|r| r.variant.is_none()));
        let sc = with_variants(
            &base,
            &[("2.6.30", &["none", "fifo"], 1), ("2.6.33", &["fifo"], 2)],
        );
        assert_eq!(labels(&sc), ["2.6.30/none", "2.6.30/fifo", "2.6.33/fifo"]);
        let p = plan(&sc);
        assert_eq!(
            p.iter().map(|r| (r.variant, r.policy)).collect::<Vec<_>>(),
            [
                (Some("2.6.30"), "none"),
                (Some("2.6.30"), "fifo"),
                (Some("2.6.33"), "fifo")
            ]
        );
        assert!(std::ptr::eq(p[2].scenario, &*sc.variants[1].scenario));
        // One policy per variant: the variant alone names the run.
        let sc = with_variants(&tiny("fifo"), &[("a", &["fifo"], 1), ("b", &["fifo"], 2)]);
        assert_eq!(labels(&sc), ["a", "b"]);
    }

    #[test]
    fn variants_run_their_own_scenario_and_report_the_same_whatever_the_threads() {
        let sc = with_variants(
            &tiny("none, fifo"),
            &[
                ("fast", &["none", "fifo"], 1),
                ("slow", &["none", "fifo"], 4),
            ],
        );
        let report = |jobs: usize| {
            let opts = RunOptions {
                format: "normal".to_string(),
                jobs,
                ..RunOptions::default()
            };
            let mut out = Vec::new();
            run_and_report(&sc, &opts, &mut out, &|_, _| {}).unwrap();
            String::from_utf8(out).unwrap()
        };
        let one = report(1);
        assert_eq!(one, report(4), "output depends on the thread count");
        assert!(
            one.contains(
                "2 variants x 2 policies = 4 runs\nvariants: fast, slow\npolicies: none, fifo\n"
            ),
            "{one}"
        );
        let blocks: Vec<usize> = ["fast/none", "fast/fifo", "slow/none", "slow/fifo"]
            .iter()
            .map(|l| {
                one.find(&format!(": policy={l}: "))
                    .unwrap_or_else(|| panic!("{l}"))
            })
            .collect();
        assert!(
            blocks.windows(2).all(|w| w[0] < w[1]),
            "variant-major order"
        );
        // Each variant ran its own device: the slow one completes fewer reads.
        let results = run_all(&sc, 2).unwrap();
        let policies: Vec<&str> = results.iter().map(|r| r.obs.policy.as_str()).collect();
        assert_eq!(
            policies,
            ["fast/none", "fast/fifo", "slow/none", "slow/fifo"]
        );
        let reads = |i: usize| results[i].obs.dirs[0].ios;
        assert!(reads(2) * 3 < reads(0), "{} vs {}", reads(2), reads(0));
        // JSON names the variant and the policy of each job.
        let mut out = Vec::new();
        let opts = RunOptions {
            format: "json".to_string(),
            jobs: 2,
            ..RunOptions::default()
        };
        run_and_report(&sc, &opts, &mut out, &|_, _| {}).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["jobs"][3]["qsim"]["policy"], "slow/fifo");
        assert_eq!(v["jobs"][3]["qsim"]["variant"]["name"], "slow");
        assert_eq!(v["jobs"][3]["qsim"]["variant"]["policy"], "fifo");
    }

    #[test]
    fn variants_with_different_policy_lists_are_listed_each() {
        let sc = with_variants(
            &tiny("fifo"),
            &[("a", &["none", "fifo"], 1), ("b", &["fifo"], 1)],
        );
        let results = run_all(&sc, 0).unwrap();
        let runs: Vec<_> = results.into_iter().map(|r| r.obs).collect();
        let report = Report::new(&sc, &runs);
        let mut out = Vec::new();
        crate::report::text::render(&report, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(", 2 variants, 3 runs\nvariants (policies): a (none, fifo); b (fifo)\n"),
            "{text}"
        );
    }
}
