//! Scenario → one run per policy → report.
//!
//! Each policy of the scenario is an independent run with the same seed (so every workload draws
//! the same random numbers: common random numbers). Runs go to a pool of threads and their results
//! land in slots by index, so the report is byte-identical whatever the thread count or the order
//! in which runs finish.

use crate::model::{self, RunResult, policy};
use crate::report::Report;
use crate::scenario::Scenario;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Options of `qsim run` that change how a scenario runs or prints.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Output format: "normal" (fio-style text) or "json".
    pub format: String,
    /// Worker threads (0 = all cores).
    pub jobs: usize,
}

/// Errors of a run (the scenario itself was valid).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A policy name that no longer resolves (validation should have caught it).
    #[error("unknown policy `{0}`")]
    UnknownPolicy(String),
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
}

/// Runs every policy of the scenario, in parallel, and returns the results in policy order.
pub fn run_all(sc: &Scenario, jobs: usize) -> Result<Vec<RunResult>, Error> {
    let infos = sc
        .policies
        .iter()
        .map(|p| policy::find(p).ok_or_else(|| Error::UnknownPolicy(p.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    let threads = if jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        jobs
    }
    .min(infos.len())
    .max(1);
    let slots: Mutex<Vec<Option<RunResult>>> = Mutex::new((0..infos.len()).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(info) = infos.get(i) else { break };
                    let r = model::run_policy(sc, info);
                    slots.lock().expect("a run thread panicked")[i] = Some(r);
                }
            });
        }
    });
    let results: Vec<RunResult> = slots
        .into_inner()
        .expect("a run thread panicked")
        .into_iter()
        .map(|r| r.expect("every run fills its slot"))
        .collect();
    for r in &results {
        if let Some(v) = r.violations.first() {
            return Err(Error::Invariant {
                policy: r.obs.policy.clone(),
                what: v.clone(),
            });
        }
    }
    Ok(results)
}

/// Runs every policy of the scenario and writes the report to `out` in one piece, so a failure
/// never leaves half a report behind.
pub fn run_and_report(sc: &Scenario, opts: &RunOptions, out: &mut dyn Write) -> Result<(), Error> {
    let results = run_all(sc, opts.jobs)?;
    let runs: Vec<_> = results.into_iter().map(|r| r.obs).collect();
    let report = Report::new(sc, &runs);
    let mut buf = Vec::new();
    match opts.format.as_str() {
        "json" => crate::report::json::render(&report, &mut buf)?,
        _ => crate::report::text::render(&report, &mut buf)?,
    }
    out.write_all(&buf)?;
    out.flush()?;
    Ok(())
}
