//! The real [`super::jobs::Runner`] of `qsim serve`: every policy of a resolved scenario run
//! as `qsim run` runs it, one policy at a time; a superseded run stops within a slice of
//! simulation.
//!
//! Policy `p`'s replications are [`experiment::run_replicated`] on the scenario with
//! `policies: [p]`. Replication `r` of a policy draws from the same random streams whichever
//! policies run beside it (common random numbers: `RngStreams::new(seed, r)`), so the runs are
//! the ones `qsim run` makes of the whole scenario, and the page's figures are its figures.

use super::jobs::{Finished, Outcome, Progress};
use crate::experiment;
use crate::model::base::obs::RunEnd;
use crate::report::Report;
use crate::scenario::Scenario;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The wall-clock budget of one page run, as `qsim run --time-limit`: runs still going this
/// long after it started stop and the page says so. Other pages wait behind a run, so it is
/// short (assumed: about ten times what the slowest shipped scenario takes at its own
/// replications on two cores, once per policy).
pub const RUN_TIME_LIMIT: Duration = Duration::from_secs(60);

/// Runs every policy of `sc` (which has no variants) with `jobs` threads, reporting
/// replications done on `progress` and stopping within a slice of simulation when asked
/// (its `stop` flag is the runs' [`crate::model::Valve`]).
pub fn run_all_policies(sc: &Scenario, jobs: usize, progress: &Progress) -> Outcome {
    let started = Instant::now();
    let reps = sc.replications.max(1) as usize;
    progress
        .total
        .store(reps * sc.policies.len(), Ordering::Relaxed);
    let valve = crate::model::Valve {
        deadline: Some(started + RUN_TIME_LIMIT),
        cancel: Some(&progress.stop),
    };
    let mut first = Vec::new();
    let mut pooled = Vec::new();
    let mut samples = Vec::new();
    for (k, policy) in sc.policies.iter().enumerate() {
        if progress.stopped() {
            return Outcome::Stopped;
        }
        let mut one = sc.clone();
        one.policies = vec![policy.clone()];
        let tick = |done: usize, _: usize| progress.done.store(k * reps + done, Ordering::Relaxed);
        let rep = match experiment::run_replicated(&one, jobs, None, false, valve, &tick) {
            Ok(r) => r,
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        if progress.stopped() {
            return Outcome::Stopped;
        }
        if let Some((label, what)) = &rep.broken {
            return Outcome::Failed(format!("invariant violated under `{label}`: {what}"));
        }
        first.extend(rep.first);
        pooled.extend(rep.pooled);
        samples.extend(rep.samples);
    }
    if let Some(r) = first.iter().find(|r| !r.violations.is_empty()) {
        return Outcome::Failed(format!(
            "invariant violated under `{}`: {}",
            r.obs.policy, r.violations[0]
        ));
    }
    if first.iter().any(|r| r.obs.end == RunEnd::TimeLimit) {
        return Outcome::Failed(format!(
            "the runs took longer than qsim serve's wall-clock limit ({} s) and were stopped; \
             shorten the duration or lower the replications",
            RUN_TIME_LIMIT.as_secs()
        ));
    }
    let mut report = Report::new(sc, &pooled);
    report.attach_replications(&samples, Some(vec![None; pooled.len()]));
    let Some(plots) = report.plots.clone() else {
        return Outcome::Failed("the report has no plot series".to_string());
    };
    let mut text = Vec::new();
    if let Err(e) = crate::report::text::render_run(&report, &mut text) {
        return Outcome::Failed(format!("cannot render the report: {e}"));
    }
    Outcome::Done(Finished {
        plots,
        report: String::from_utf8_lossy(&text).into_owned(),
        elapsed_ms: started.elapsed().as_millis() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_runs_are_the_runs_qsim_run_makes() {
        let sets = ["duration=3s".to_string(), "replications=2".to_string()];
        let sc = crate::scenario::resolve_with_overrides("two-queue", &sets).unwrap();
        let Outcome::Done(f) = run_all_policies(&sc, 2, &Progress::default()) else {
            panic!("the run failed")
        };
        let labels: Vec<&str> = f.plots.runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, sc.policies);
        let open = crate::model::Valve::OPEN;
        let whole = experiment::run_replicated(&sc, 2, None, false, open, &|_, _| ()).unwrap();
        let mut report = Report::new(&sc, &whole.pooled);
        report.attach_replications(&whole.samples, Some(vec![None; whole.pooled.len()]));
        assert_eq!(Some(&f.plots), report.plots.as_ref());
        let mut text = Vec::new();
        crate::report::text::render_run(&report, &mut text).unwrap();
        assert_eq!(f.report.as_bytes(), text);
    }

    #[test]
    fn a_stop_raised_during_a_run_ends_it_within_a_slice() {
        // An hour of two-queue with 50 replications: minutes of work unless stopped.
        let sets = ["duration=3600s".to_string(), "replications=50".to_string()];
        let sc = crate::scenario::resolve_with_overrides("two-queue", &sets).unwrap();
        let p = Progress::default();
        let started = Instant::now();
        let outcome = std::thread::scope(|s| {
            let run = s.spawn(|| run_all_policies(&sc, 1, &p));
            while p.total.load(Ordering::Relaxed) == 0 {
                std::thread::yield_now();
            }
            p.stop.store(true, Ordering::Relaxed);
            run.join().unwrap()
        });
        assert!(matches!(outcome, Outcome::Stopped));
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "took {:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_stopped_run_stops_before_its_next_policy() {
        let sc = crate::scenario::resolve("two-queue").unwrap();
        let p = Progress::default();
        p.stop.store(true, Ordering::Relaxed);
        assert!(matches!(run_all_policies(&sc, 1, &p), Outcome::Stopped));
        assert_eq!(p.done.load(Ordering::Relaxed), 0);
    }
}
