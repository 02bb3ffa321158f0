//! Randomized torture testing, in the spirit of TigerBeetle's VOPR: one `u64` seed → one random
//! *valid* scenario ([`scenario_yaml`]) → every check qsim promises, so that a failing seed is a
//! complete, replayable bug report.
//!
//! This module owns the torture cases: the generator (its `gen` submodule, every knob of the
//! scenario schema drawn from one seeded ChaCha8 stream), the checker ([`run_case`]) and a
//! parallel driver ([`run_parallel`]) used by the CI test (`tests/torture.rs`, a fixed set of
//! seeds) and by the long run (`cargo run --release --example torture -- --cases 10000`).
//!
//! A case passes when:
//! - the real loader ([`crate::scenario::load_str`]) accepts the generated file (a refusal is a
//!   bug of the generator's mirror of the rules or of the loader), and `describe` renders it;
//! - every replication of every run of the plan ends with all its invariants holding
//!   ([`crate::model::observe::invariants`]), at or before its horizon, and within its work budget: the
//!   engine stops before an event once `max_events` units of work (events plus allocation
//!   attempts and reclaim scanning) are used, so a run may pass the budget by at most its last
//!   event's work, which is measured event by event; the engine's count of the work and its
//!   stop reason must agree with the events and the model's units;
//! - the full report is byte-identical with 1 and 2 worker threads, in the text format (with
//!   the `--check-invariants` tables) and in JSON, and so is the `--json FILE` results export;
//!   the reports are also the same whether or not the runs record timelines for an export and
//!   whether or not a `--time-limit` (never reached) makes them run in slices;
//! - an HTTP request drawn from the same seed (valid, or broken as clients break them) gets
//!   from `qsim serve`'s server the well-formed answer it calls for (`http`);
//! - the case's random fio job file ([`job_file`]: valid or hostile, small) is read onto the
//!   default machine or refused at a line of the file, never with a panic;
//! - the case's random trace ([`trace_file`]: blkparse text, a blktrace capture or a fio
//!   iolog, valid or hostile) is refused with a located error, or loads and replays as
//!   `kind: replay` issuing exactly its I/Os with every invariant holding (`trace`);
//! - the case's random machine file ([`machine_file`]: the form `qsim calibrate` writes, valid
//!   or damaged) loads under a scenario's `machine:` with its values arriving and runs with
//!   its invariants holding, or is refused at a line of the machine file (`machine`);
//! - one case in four, run as 1 to 3 shards, merges into the one-process report byte for
//!   byte, and the same shard files damaged (counts edited, fields dropped, lists resized,
//!   the file cut) merge or are refused with a message, never a panic (`shards.rs`);
//! - nothing panics (a panic is caught and reported with the seed).

mod fio;
mod r#gen;
mod http;
mod machine;
mod shards;
mod trace;
mod yaml;

pub use fio::job_file;
pub use r#gen::{EVENTS_PER_PASS, scenario_yaml};
pub use machine::{MachineCase, machine_file};
pub use trace::{TraceCase, trace_file};

use crate::engine::{Limits, Model, Scheduler, SimTime, StopReason};
use crate::experiment::{self, HeadlineMetric, Precision, RunOptions};
use crate::model::world::{Event as WorldEvent, World};
use crate::model::{base::obs::RunEnd, crypt::policy};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// A `--time-limit` no case reaches: its runs go in slices, which must change nothing.
const HOUR: Duration = Duration::from_secs(3600);

/// One case in this many (seed divisible by it) also runs as shards and merges damaged
/// copies of them (`shards`), which costs another pass over its plan.
const SHARD_EVERY: u64 = 4;

/// Seeds that once failed, replayed by the test suite, each with what it found. (The generator
/// has changed since, so a seed may now draw another scenario; the exact failing case is kept
/// as a test beside each fix.)
pub const REGRESSIONS: &[(u64, &str)] = &[
    (
        3,
        "a buffered writer with a 512-byte chunk broke the dirty-page conservation law: \
         writeback moved bytes but no page; the loader now wants whole pages \
         (scenario::validate, test a_writeback_chunk_is_whole_pages)",
    ),
    (
        50,
        "the generator drew two atomic streams named `atomic1` (a generator bug)",
    ),
    (
        101511,
        "unreclaimable memory and cache left exactly `high` free, then the model took the \
         page_pool reserve from it at boot and panicked (zone too small for its initial page \
         cache); the loader now counts the reserve in the layout (scenario::validate, test \
         the_page_pool_counts_in_the_starting_layout)",
    ),
    (
        5004439,
        "the generator drew fio jobs with more I/Os in flight than the loader's MAX_IN_FLIGHT \
         (a generator bug, once the bound existed)",
    ),
    (
        7008035,
        "the generator left gitk's iodepth out of the I/Os in flight, though gitk is a fio \
         preset and the loader counts it (a generator bug)",
    ),
];

/// What a passing case ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CaseSummary {
    /// The case's seed.
    pub seed: u64,
    /// Simulation runs in one pass over the plan (policies × variants × replications).
    pub runs: u64,
    /// Events fired over that pass.
    pub events: u64,
    /// Work done over that pass: events plus the model's own units (allocation attempts,
    /// reclaim scanning) from the engine's start, the quantity `max_events` bounds.
    pub work: u64,
    /// The most work a single event did in that pass.
    pub max_step: u64,
    /// Runs of that pass stopped by their work budget.
    pub saturated: u64,
    /// Runs of that pass that ended early because every finite job was done.
    pub finished: u64,
}

/// A failing case: its seed, what failed, and the generated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The case's seed: `run_case(seed)` replays it.
    pub seed: u64,
    /// What went wrong.
    pub what: String,
    /// The generated scenario file (empty if generating it panicked).
    pub yaml: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "SEED={}", self.seed)?;
        writeln!(f, "{}", self.what.trim_end())?;
        writeln!(
            f,
            "replay: cargo run --release --example torture -- --seed {} --cases 1",
            self.seed
        )?;
        writeln!(f, "--- generated scenario torture-{}.yaml ---", self.seed)?;
        write!(f, "{}", self.yaml)
    }
}

impl std::error::Error for Failure {}

/// Generates the scenario of `seed` and runs every check on it (see the module docs).
pub fn run_case(seed: u64) -> Result<CaseSummary, Failure> {
    let yaml = catch_unwind(|| scenario_yaml(seed)).map_err(|p| Failure {
        seed,
        what: format!("the generator panicked: {}", panic_text(&*p)),
        yaml: String::new(),
    })?;
    let summary = match catch_unwind(AssertUnwindSafe(|| check(seed, &yaml))) {
        Ok(Ok(summary)) => summary,
        Ok(Err(what)) => return Err(Failure { seed, what, yaml }),
        Err(p) => {
            return Err(Failure {
                seed,
                what: format!("panic: {}", panic_text(&*p)),
                yaml,
            });
        }
    };
    let job = fio::job_file(seed);
    fio::check(seed, &job).map_err(|what| Failure {
        seed,
        what: format!("{what}\n(the file below is the case's fio job file, torture-{seed}.fio)"),
        yaml: job,
    })?;
    let files: [(&str, FileCheck); 2] = [
        ("trace", trace::check_case),
        ("machine file", machine::check_case),
    ];
    for (what_file, check) in files {
        in_fresh_dir(seed, check).map_err(|what| Failure {
            seed,
            what: format!(
                "{what}\n(the case's {what_file}: torture::{}_file({seed}))",
                what_file.replace(" file", "")
            ),
            yaml: String::new(),
        })?;
    }
    Ok(summary)
}

/// A check of one of a case's drawn files, written into the folder it is given.
type FileCheck = fn(u64, &std::path::Path) -> Result<(), String>;

/// `check(seed, dir)` in a fresh temporary folder, removed afterwards.
fn in_fresh_dir(seed: u64, check: FileCheck) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("qsim-torture-{}-{seed}", std::process::id()));
    let checked = std::fs::create_dir_all(&dir)
        .map_err(|e| e.to_string())
        .and_then(|()| check(seed, &dir));
    std::fs::remove_dir_all(&dir).ok();
    checked
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a non-string panic payload)".to_string()
    }
}

/// Every check of one case; `Err` says what failed.
fn check(seed: u64, yaml: &str) -> Result<CaseSummary, String> {
    let source = format!("torture-{seed}.yaml");
    let sc = crate::scenario::load_str(&source, yaml)
        .map_err(|e| format!("the loader refused the generated scenario:\n{e}"))?;
    let _ = crate::scenario::describe(&sc);
    http::check(seed)?;
    let summary = check_runs(seed, &sc)?;
    check_reports(seed, &sc)?;
    if seed.is_multiple_of(SHARD_EVERY) {
        let text = shards::one_process(&sc)?;
        shards::check_shards(seed, &sc, &text)?;
    }
    Ok(summary)
}

/// Every replication of every run of `sc`'s plan, each through [`check_replication`]; what
/// they ran, summed.
fn check_runs(seed: u64, sc: &crate::scenario::Scenario) -> Result<CaseSummary, String> {
    let mut summary = CaseSummary {
        seed,
        ..CaseSummary::default()
    };
    for run in experiment::plan(sc) {
        let s = run.scenario;
        let info =
            policy::find(run.policy).ok_or_else(|| format!("unknown policy `{}`", run.policy))?;
        for rep in 0..u64::from(s.replications.max(1)) {
            let at = format!("run `{}` replication {rep}", run.label);
            let r = replicate(s, info, rep);
            check_replication(&at, s, &r)?;
            summary.runs += 1;
            summary.events += r.obs.events;
            summary.work += r.work;
            summary.max_step = summary.max_step.max(r.max_step);
            summary.saturated += u64::from(r.obs.end == RunEnd::Saturated);
            summary.finished += u64::from(r.obs.end == RunEnd::Finished);
        }
    }
    Ok(summary)
}

/// One replication `r` of scenario `s` (`at` names it): its invariants hold, it kept to its
/// work budget, the engine's account of work and stop agrees with the model's, and it ended by
/// its horizon.
fn check_replication(at: &str, s: &crate::scenario::Scenario, r: &Watched) -> Result<(), String> {
    if let Some(v) = r.violations.first() {
        return Err(format!("{at}: invariant violated: {v}"));
    }
    // The engine stops before an event once the budget is used, so a run may pass it by its
    // last event's work and no more.
    if r.work > s.max_events.saturating_add(r.max_step) {
        return Err(format!(
            "{at}: did {} units of work ({} events), over its budget of {} plus one event's \
             most work {}",
            r.work, r.obs.events, s.max_events, r.max_step
        ));
    }
    if r.work != r.obs.events + r.model_work {
        return Err(format!(
            "{at}: the engine counted {} units of work, but {} events and {} model units were \
             done",
            r.work, r.obs.events, r.model_work
        ));
    }
    if (r.obs.end == RunEnd::Saturated) != (r.stop == StopReason::WorkBudget)
        || (r.stop == StopReason::WorkBudget && r.work < s.max_events)
    {
        return Err(format!(
            "{at}: stopped by {:?} after {} units of {} and reported {:?}",
            r.stop, r.work, s.max_events, r.obs.end
        ));
    }
    let horizon = SimTime::ZERO + s.duration;
    if r.obs.ended > horizon {
        return Err(format!(
            "{at}: ended at {} past its horizon {horizon}",
            r.obs.ended
        ));
    }
    Ok(())
}

/// The reports of `sc`: 1 vs 2 threads, with and without the timelines an export records,
/// with and without a (never reached) `--time-limit`, whose runs go in slices; in a quarter of
/// the cases with a `--precision` target, which adds replications in rounds.
fn check_reports(seed: u64, sc: &crate::scenario::Scenario) -> Result<(), String> {
    let precision = precision_of(seed);
    let text1 = report(sc, "normal", 1, None, precision, None)?;
    let export_b = temp_path(seed, "b");
    let text2 = report(sc, "normal", 2, Some(&export_b), precision, Some(HOUR));
    let json1_file = temp_path(seed, "c");
    let json1 = report(sc, "json", 1, Some(&json1_file), precision, Some(HOUR));
    let json2 = report(sc, "json", 2, None, precision, None);
    let files = (std::fs::read(&export_b), std::fs::read(&json1_file));
    let _ = std::fs::remove_file(&export_b);
    let _ = std::fs::remove_file(&json1_file);
    let (text2, json1, json2) = (text2?, json1?, json2?);
    same(
        "text report, -j 1 vs -j 2 with a --json export and --time-limit",
        &text1,
        &text2,
    )?;
    same(
        "JSON report, -j 1 with --time-limit vs -j 2",
        &json1,
        &json2,
    )?;
    serde_json::from_slice::<serde_json::Value>(&json1)
        .map_err(|e| format!("the JSON report does not parse: {e}"))?;
    match files {
        (Ok(b), Ok(c)) => same("--json export, -j 2 vs -j 1", &b, &c),
        (b, c) => Err(format!(
            "an export was not written: {:?} {:?}",
            b.err(),
            c.err()
        )),
    }
}

/// One replication run as [`crate::model::run_replication`] runs it, watched: the engine's own
/// account of its work and stop, and the most work any single event did.
struct Watched {
    obs: crate::model::base::obs::RunObs,
    violations: Vec<String>,
    stop: StopReason,
    work: u64,
    model_work: u64,
    max_step: u64,
}

/// A [`World`] whose every event's work is measured.
struct Watch {
    world: World,
    max_step: u64,
}

impl Model for Watch {
    type Event = WorldEvent;
    fn handle(&mut self, ev: WorldEvent, sched: &mut Scheduler<WorldEvent>) {
        let before = self.world.work();
        self.world.handle(ev, sched);
        self.max_step = self.max_step.max(self.world.work() - before);
    }
    fn work(&self) -> u64 {
        self.world.work()
    }
}

fn replicate(
    sc: &crate::scenario::Scenario,
    info: &'static policy::PolicyInfo,
    rep: u64,
) -> Watched {
    let mut sched = Scheduler::new();
    let world = World::new(sc, info, rep, &mut sched);
    let mut w = Watch { world, max_step: 0 };
    let work_at_start = w.world.work();
    let limits = Limits {
        horizon: SimTime::ZERO + sc.duration,
        max_work: sc.max_events,
    };
    let outcome = crate::engine::run(&mut w, &mut sched, limits);
    let violations = w.world.invariants(sched.now()).violations();
    let model_work = w.world.work() - work_at_start;
    let obs = w.world.finish(
        sched.now(),
        outcome.events,
        outcome.stop == StopReason::WorkBudget,
    );
    Watched {
        obs,
        violations,
        stop: outcome.stop,
        work: outcome.work,
        model_work,
        max_step: w.max_step,
    }
}

/// `qsim run` of `sc` in `format` over `jobs` threads, with the invariant tables in the text
/// format and a `--json` export to `export` if given: stdout's bytes.
fn report(
    sc: &crate::scenario::Scenario,
    format: &str,
    jobs: usize,
    export: Option<&PathBuf>,
    precision: Option<Precision>,
    time_limit: Option<Duration>,
) -> Result<Vec<u8>, String> {
    let opts = RunOptions {
        format: format.to_string(),
        jobs,
        precision,
        time_limit,
        json_file: export.cloned(),
        check_invariants: format == "normal",
        ..RunOptions::default()
    };
    let mut out = Vec::new();
    experiment::run_and_report(sc, &opts, &mut out, &|_, _| {}).map_err(|e| {
        format!("qsim run --format {format} -j {jobs} (precision {precision:?}) failed: {e}")
    })?;
    Ok(out)
}

/// The `--precision` target of case `seed`'s reports, if it has one: a quarter of the cases
/// do, with a target of 1–50 %, at most 2–4 replications and any headline metric. Drawn from
/// its own stream, so it does not shift the generator's draws.
fn precision_of(seed: u64) -> Option<Precision> {
    use rand::RngExt;
    let mut rng = crate::engine::RngStreams::new(seed, 0).stream("torture/precision");
    if !rng.random_bool(0.25) {
        return None;
    }
    let metric = HeadlineMetric::NAMES[rng.random_range(0..HeadlineMetric::NAMES.len())];
    Some(Precision {
        target_rel: f64::from(rng.random_range(1..=50u32)) / 100.0,
        cap: rng.random_range(2..=4),
        metric: HeadlineMetric::parse(metric).expect("a listed name"),
    })
}

fn temp_path(seed: u64, tag: &str) -> PathBuf {
    // Unique per call: two tests of one process may run the same seed at once.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "qsim-torture-{}-{seed}-{tag}-{n}.json",
        std::process::id()
    ))
}

/// `Err` naming the first line where `a` and `b` differ.
fn same(what: &str, a: &[u8], b: &[u8]) -> Result<(), String> {
    if a == b {
        return Ok(());
    }
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    let (mut la, mut lb) = (a.lines(), b.lines());
    let mut n = 1;
    loop {
        match (la.next(), lb.next()) {
            (x, y) if x == y && x.is_some() => n += 1,
            (x, y) => {
                return Err(format!(
                    "{what} differ at line {n}:\n  < {}\n  > {}",
                    x.unwrap_or("(end)"),
                    y.unwrap_or("(end)")
                ));
            }
        }
    }
}

/// What a batch of passing cases ran, summed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// Cases run.
    pub cases: u64,
    /// Simulation runs (one pass each).
    pub runs: u64,
    /// Events fired over those runs.
    pub events: u64,
    /// Work done over those runs (events plus the model's own units).
    pub work: u64,
    /// The most work a single event did, and the seed of its case.
    pub max_step: (u64, u64),
    /// Runs stopped by their work budget.
    pub saturated: u64,
    /// Runs that ended early with every finite job done.
    pub finished: u64,
}

/// Runs the cases of seeds `first, first + 1, …` (`count` of them, wrapping) over `threads`
/// threads (at least one). `on_start(seed)` and `on_done(seed, result)` are called from the
/// worker threads around each case. After a failure no new case starts; the failure with the
/// smallest case index among those found is returned.
pub fn run_parallel(
    first: u64,
    count: u64,
    threads: usize,
    on_start: &(dyn Fn(u64) + Sync),
    on_done: &(dyn Fn(u64, &Result<CaseSummary, Failure>) + Sync),
) -> Result<Totals, Failure> {
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let totals = Mutex::new(Totals::default());
    let failures: Mutex<Vec<(u64, Failure)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    let seed = first.wrapping_add(i);
                    on_start(seed);
                    let result = run_case(seed);
                    on_done(seed, &result);
                    match result {
                        Ok(c) => {
                            let mut t = totals.lock().expect("no panics under the lock");
                            t.cases += 1;
                            t.runs += c.runs;
                            t.events += c.events;
                            t.work += c.work;
                            if c.max_step > t.max_step.0 {
                                t.max_step = (c.max_step, c.seed);
                            }
                            t.saturated += c.saturated;
                            t.finished += c.finished;
                        }
                        Err(f) => {
                            stop.store(true, Ordering::Relaxed);
                            failures
                                .lock()
                                .expect("no panics under the lock")
                                .push((i, f));
                        }
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().expect("no panics under the lock");
    failures.sort_by_key(|(i, _)| *i);
    match failures.into_iter().next() {
        Some((_, f)) => Err(f),
        None => Ok(totals.into_inner().expect("no panics under the lock")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_prints_its_seed_first_and_the_file() {
        let f = Failure {
            seed: 77,
            what: "panic: boom".into(),
            yaml: "duration: 1s\n".into(),
        };
        let text = f.to_string();
        assert!(text.starts_with("SEED=77\npanic: boom\n"), "{text}");
        assert!(
            text.ends_with("torture-77.yaml ---\nduration: 1s\n"),
            "{text}"
        );
    }

    #[test]
    fn differences_are_located() {
        assert!(same("x", b"a\nb\n", b"a\nb\n").is_ok());
        let e = same("x", b"a\nb\nc\n", b"a\nB\nc\n").unwrap_err();
        assert!(
            e.contains("line 2") && e.contains("< b") && e.contains("> B"),
            "{e}"
        );
        let e = same("x", b"a\n", b"a\nb\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("(end)"), "{e}");
    }

    /// Each check of a replication fires on the slip it looks for, and on nothing else: a real
    /// replication of a generated case passes, and each tampered copy fails with its message.
    #[test]
    fn each_replication_check_catches_its_slip() {
        let yaml = scenario_yaml(1);
        let sc = crate::scenario::load_str("torture-1.yaml", &yaml).unwrap();
        let run = experiment::plan(&sc).into_iter().next().unwrap();
        let s = run.scenario;
        let r = replicate(s, policy::find(run.policy).unwrap(), 0);
        check_replication("here", s, &r).unwrap();
        type Slip = fn(&mut Watched, &crate::scenario::Scenario);
        let slips: [(&str, Slip); 5] = [
            ("invariant violated: x", |r, _| {
                r.violations = vec!["x".into()]
            }),
            ("over its budget", |r, s| {
                r.work = s.max_events + r.max_step + 1
            }),
            ("the engine counted", |r, _| r.model_work += 1),
            ("stopped by", |r, _| {
                r.stop = if r.stop == StopReason::WorkBudget {
                    StopReason::Horizon
                } else {
                    StopReason::WorkBudget
                }
            }),
            ("past its horizon", |r, s| {
                r.obs.ended = SimTime::ZERO + s.duration + crate::engine::SimDuration::from_ns(1)
            }),
        ];
        for (want, slip) in slips {
            let mut bad = replicate(s, policy::find(run.policy).unwrap(), 0);
            slip(&mut bad, s);
            let e = check_replication("here", s, &bad).unwrap_err();
            assert!(e.starts_with("here: ") && e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn a_few_cases_pass() {
        for seed in 0..3 {
            run_case(seed).unwrap_or_else(|f| panic!("{f}"));
        }
    }
}
