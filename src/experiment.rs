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
//! Every run ends with its invariants checked ([`crate::model::invariants`]); a broken one fails
//! the run. `--check-invariants` also prints them, one table per policy, after the report.

use crate::model::invariants::InvariantReport;
use crate::model::{self, RunResult, policy};
use crate::report::Report;
use crate::report::replications::Metrics;
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

/// One run of a scenario's matrix: which scenario it uses, under which policy, and what the
/// report calls it.
#[derive(Debug, Clone)]
pub struct PlannedRun<'a> {
    /// The scenario the run uses: a variant's, or the scenario itself without variants.
    pub scenario: &'a Scenario,
    /// The variant's name (`None` when the scenario has no variants).
    pub variant: Option<&'a str>,
    /// The policy's name as the scenario lists it.
    pub policy: &'a str,
    /// The run's label in the report: the policy without variants; with them `<variant>` when
    /// every variant runs exactly one policy, else `<variant>/<policy>`.
    pub label: String,
}

/// The runs a scenario asks for, in report order: its policies; with variants, variants ×
/// each variant's policies, variant-major.
pub fn plan(sc: &Scenario) -> Vec<PlannedRun<'_>> {
    if sc.variants.is_empty() {
        return sc
            .policies
            .iter()
            .map(|p| PlannedRun {
                scenario: sc,
                variant: None,
                policy: p,
                label: p.clone(),
            })
            .collect();
    }
    let one_policy_each = sc.variants.iter().all(|v| v.scenario.policies.len() == 1);
    sc.variants
        .iter()
        .flat_map(|v| {
            v.scenario.policies.iter().map(move |p| PlannedRun {
                scenario: &v.scenario,
                variant: Some(v.name.as_str()),
                policy: p,
                label: if one_policy_each {
                    v.name.clone()
                } else {
                    format!("{}/{p}", v.name)
                },
            })
        })
        .collect()
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

/// Every run of the plan replicated: replication 0's whole result per run (the fio-style
/// blocks show it), and every replication's headline metrics per run.
#[derive(Debug)]
pub struct Replicated {
    /// Replication 0 of each run, in plan order.
    pub first: Vec<RunResult>,
    /// Each run's metrics, one per replication (replication 0 first), in plan order.
    pub metrics: Vec<Vec<Metrics>>,
    /// The first broken invariant of any replication after the first, as (label, what).
    pub broken: Option<(String, String)>,
}

/// Runs every run of the plan `replications` times (each replication has its own random
/// streams, shared by every run of that replication: common random numbers), in parallel over
/// `jobs` threads, results by index so the output never depends on the thread count.
pub fn run_replicated(sc: &Scenario, jobs: usize) -> Result<Replicated, Error> {
    let runs = plan(sc);
    let infos = runs
        .iter()
        .map(|r| policy::find(r.policy).ok_or_else(|| Error::UnknownPolicy(r.policy.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    // Job k is (run, replication); runs may differ in their replication counts (variants).
    let mut index = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        for rep in 0..r.scenario.replications.max(1) {
            index.push((i, u64::from(rep)));
        }
    }
    let results = parallel(index.len(), jobs, |k| {
        let (i, rep) = index[k];
        let mut r = model::run_replication(runs[i].scenario, infos[i], rep);
        if runs[i].variant.is_some() {
            r.obs.policy = runs[i].label.clone();
        }
        r
    });
    let mut first = Vec::new();
    let mut metrics: Vec<Vec<Metrics>> = vec![Vec::new(); runs.len()];
    let mut broken = None;
    for (&(i, rep), r) in index.iter().zip(results) {
        metrics[i].push(Metrics::of(&r.obs));
        if rep == 0 {
            first.push(r);
        } else if broken.is_none()
            && let Some(v) = r.violations.first()
        {
            broken = Some((format!("{} (replication {rep})", r.obs.policy), v.clone()));
        }
    }
    Ok(Replicated {
        first,
        metrics,
        broken,
    })
}

/// Runs `f(0..n)` over `jobs` threads (0 = all cores) and returns the results by index.
fn parallel<T: Send>(n: usize, jobs: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = if jobs == 0 {
        std::thread::available_parallelism().map_or(1, |c| c.get())
    } else {
        jobs
    }
    .min(n)
    .max(1);
    let slots: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = f(i);
                    slots.lock().expect("a run thread panicked")[i] = Some(r);
                }
            });
        }
    });
    slots
        .into_inner()
        .expect("a run thread panicked")
        .into_iter()
        .map(|r| r.expect("every run fills its slot"))
        .collect()
}

/// Runs every run of the scenario and writes the report to `out` in one piece, so a failure
/// never leaves half a report behind.
///
/// With [`RunOptions::check_invariants`] the report is printed even when a run broke an
/// invariant, followed by every run's invariant table, and the broken invariant is returned as
/// the error afterwards.
pub fn run_and_report(sc: &Scenario, opts: &RunOptions, out: &mut dyn Write) -> Result<(), Error> {
    let replicated = run_replicated(sc, opts.jobs)?;
    let results = replicated.first;
    if !opts.check_invariants {
        first_violation(&results)?;
    }
    let labels: Vec<String> = results.iter().map(|r| r.obs.policy.clone()).collect();
    let mut tables = Vec::new();
    if opts.check_invariants {
        for r in &results {
            render_invariants(&r.obs.policy, &r.invariants, &mut tables)?;
        }
    }
    let json = opts.format == "json";
    let later = match replicated.broken {
        Some((policy, what)) => Err(Error::Invariant { policy, what }),
        None => Ok(()),
    };
    let broken = first_violation(&results).and(later);
    let runs: Vec<_> = results.into_iter().map(|r| r.obs).collect();
    let report = Report::new(sc, &runs);
    let mut buf = Vec::new();
    if json {
        crate::report::json::render(&report, &mut buf)?;
    } else {
        crate::report::text::render(&report, &mut buf)?;
        let mut summary = String::new();
        let per_run: Vec<(String, Vec<Metrics>)> =
            labels.into_iter().zip(replicated.metrics).collect();
        crate::report::replications::render(&per_run, &mut summary);
        buf.extend_from_slice(summary.as_bytes());
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

    /// A 1 s scenario on a 1 ms generic device with the given policies.
    fn tiny(policies: &str) -> Scenario {
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
    fn with_variants(base: &Scenario, variants: &[(&str, &[&str], u64)]) -> Scenario {
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
                check_invariants: false,
            };
            let mut out = Vec::new();
            run_and_report(&sc, &opts, &mut out).unwrap();
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
            check_invariants: false,
        };
        run_and_report(&sc, &opts, &mut out).unwrap();
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
