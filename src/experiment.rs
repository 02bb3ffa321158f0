//! Scenario → one run per policy → report.
//!
//! Each policy of the scenario is an independent run with the same seed (so every workload draws
//! the same random numbers: common random numbers). Runs go to a pool of threads and their results
//! land in slots by index, so the report is byte-identical whatever the thread count or the order
//! in which runs finish.
//!
//! Every run ends with its invariants checked ([`crate::model::invariants`]); a broken one fails
//! the run. `--check-invariants` also prints them, one table per policy, after the report.

use crate::model::invariants::InvariantReport;
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
    /// Print every run's invariants after the report (to stderr under the JSON format, so
    /// stdout stays one JSON document), and fail if any is broken.
    pub check_invariants: bool,
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

/// Runs every policy of the scenario, in parallel, and returns the results in policy order;
/// fails on the first policy (in that order) whose run broke an invariant.
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

/// Runs every policy of the scenario, in parallel, and returns the results in policy order,
/// broken invariants included.
pub fn run_unchecked(sc: &Scenario, jobs: usize) -> Result<Vec<RunResult>, Error> {
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
    Ok(results)
}

/// Runs every policy of the scenario and writes the report to `out` in one piece, so a failure
/// never leaves half a report behind.
///
/// With [`RunOptions::check_invariants`] the report is printed even when a run broke an
/// invariant, followed by every run's invariant table, and the broken invariant is returned as
/// the error afterwards.
pub fn run_and_report(sc: &Scenario, opts: &RunOptions, out: &mut dyn Write) -> Result<(), Error> {
    let results = if opts.check_invariants {
        run_unchecked(sc, opts.jobs)?
    } else {
        run_all(sc, opts.jobs)?
    };
    let mut tables = Vec::new();
    if opts.check_invariants {
        for r in &results {
            render_invariants(&r.obs.policy, &r.invariants, &mut tables)?;
        }
    }
    let json = opts.format == "json";
    let broken = first_violation(&results);
    let runs: Vec<_> = results.into_iter().map(|r| r.obs).collect();
    let report = Report::new(sc, &runs);
    let mut buf = Vec::new();
    if json {
        crate::report::json::render(&report, &mut buf)?;
    } else {
        crate::report::text::render(&report, &mut buf)?;
        buf.extend_from_slice(&tables);
    }
    out.write_all(&buf)?;
    out.flush()?;
    if json && !tables.is_empty() {
        let mut err = std::io::stderr().lock();
        err.write_all(&tables)?;
        err.flush()?;
    }
    broken
}

/// Writes one policy's invariant table: Little's law per queue (∫N dt against Σ time, both
/// exact integers in ns), then the conservation laws.
pub fn render_invariants(
    policy: &str,
    inv: &InvariantReport,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let verdict = |ok: bool| if ok { "yes" } else { "NO" };
    writeln!(
        out,
        "\ninvariants of `{policy}` over [0, {}]: {}",
        inv.end,
        if inv.holds() { "all hold" } else { "BROKEN" }
    )?;
    writeln!(
        out,
        "  {:<20} {:>24} {:>24}  holds",
        "queue", "∫N dt [req·ns]", "Σ time [ns]"
    )?;
    for c in &inv.little {
        writeln!(
            out,
            "  {:<20} {:>24} {:>24}  {}",
            c.queue.label(),
            c.area,
            c.time_sum,
            verdict(c.holds)
        )?;
    }
    let law_width = inv
        .conservation
        .iter()
        .map(|c| c.law.len())
        .max()
        .unwrap_or(0);
    let detail_width = inv
        .conservation
        .iter()
        .map(|c| c.detail.chars().count())
        .max()
        .unwrap_or(0);
    for c in &inv.conservation {
        writeln!(
            out,
            "  {:<law_width$}  {:<detail_width$}  {}",
            c.law,
            c.detail,
            verdict(c.holds)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
