//! `qsim trace`'s run: one policy (and variant) of a scenario, traced over a short window.
//!
//! The run's warm-up is set to the window's start and its duration to the window's end, so
//! the run's own report covers exactly the traced window: the trace's per-stage sums can be
//! set beside the report's (they must agree, [`crate::report::trace::stage_table`]).

use crate::engine::{SimDuration, SimTime};
use crate::error::UsageError;
use crate::model::base::config::Scenario;
use crate::model::crypt::policy::{self, PolicyInfo};
use crate::model::observe::trace::TraceWindow;
use crate::model::{Recording, RunResult, run_replication_with};

/// The window `qsim trace` covers unless told otherwise.
pub const DEFAULT_WINDOW: SimDuration = SimDuration::from_ms(200);

/// The longest window a trace may cover (a trace is for looking at, not for statistics).
pub const MAX_WINDOW: SimDuration = SimDuration::from_secs(10);

/// What to trace.
#[derive(Debug, Clone)]
pub struct TraceRequest {
    /// The policy (default: the scenario's first).
    pub policy: Option<String>,
    /// The variant (default: the base scenario).
    pub variant: Option<String>,
    /// The window's start (default: the warm-up's end).
    pub from: Option<SimDuration>,
    /// The window's length.
    pub window: SimDuration,
    /// At most this many spans and marks.
    pub max_spans: usize,
    /// Which replication's random numbers.
    pub replication: u64,
}

/// A traced run: the scenario as run (warm-up and duration moved to the window), the policy
/// and what the run measured, its trace included.
#[derive(Debug)]
pub struct Traced {
    /// The scenario as run.
    pub scenario: Scenario,
    /// The policy traced.
    pub policy: &'static PolicyInfo,
    /// The run's result; `result.trace` holds the trace.
    pub result: RunResult,
}

/// Runs `req` on `sc`.
pub fn trace(sc: &Scenario, req: &TraceRequest) -> Result<Traced, UsageError> {
    let mut sc = match &req.variant {
        None => sc.clone(),
        Some(name) => {
            let v = sc
                .variants
                .iter()
                .find(|v| &v.name == name)
                .ok_or_else(|| {
                    let names: Vec<&str> = sc.variants.iter().map(|v| v.name.as_str()).collect();
                    UsageError {
                        message: format!(
                            "--variant {name}: scenario `{}` has no such variant",
                            sc.name
                        ),
                        hint: if names.is_empty() {
                            "this scenario has no variants: drop --variant".into()
                        } else {
                            format!("choose one of: {}", names.join(", "))
                        },
                    }
                })?;
            (*v.scenario).clone()
        }
    };
    sc.variants.clear();
    sc.sweep = None;
    let name = req.policy.clone().unwrap_or_else(|| sc.policies[0].clone());
    let info = policy::find(&name)
        .filter(|_| sc.policies.contains(&name) || req.policy.is_some())
        .ok_or_else(|| UsageError {
            message: format!("--policy {name}: no such policy"),
            hint: format!("choose one of: {}", crate::model::policy_names().join(", ")),
        })?;
    if req.window.is_zero() || req.window > MAX_WINDOW {
        return Err(UsageError {
            message: format!(
                "--window {}: must be above 0 and at most {MAX_WINDOW}",
                req.window
            ),
            hint: "a trace shows a short window, e.g. --window 200ms".into(),
        });
    }
    let from = req.from.unwrap_or(sc.warmup);
    let mut win = TraceWindow::new(SimTime::ZERO + from, req.window);
    win.max_spans = req.max_spans;
    sc.warmup = from;
    sc.duration = from + req.window;
    let rec = Recording {
        trace: Some(win),
        ..Recording::default()
    };
    let result = run_replication_with(&sc, info, req.replication, rec);
    Ok(Traced {
        scenario: sc,
        policy: info,
        result,
    })
}

/// The Gantt chart, as SVG, of `policy` on `sc` over the default window (200 ms after the
/// warm-up) with the default highlight: what `qsim trace SCENARIO --policy P --out DIR`
/// writes to `gantt.svg`, and what `qsim serve` shows.
pub fn gantt_svg(sc: &Scenario, policy: &str) -> anyhow::Result<String> {
    let req = TraceRequest {
        policy: Some(policy.to_string()),
        variant: None,
        from: None,
        window: DEFAULT_WINDOW,
        max_spans: TraceWindow::DEFAULT_MAX_SPANS,
        replication: 0,
    };
    let traced = trace(sc, &req)?;
    let t = traced
        .result
        .trace
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("the run recorded no trace"))?;
    let opts = crate::plot::GanttOptions {
        title: gantt_title(&traced.scenario.name, t),
        highlight: crate::report::trace::pick_read(t),
    };
    Ok(crate::plot::gantt_svg(t, &opts)?)
}

/// The chart's title: scenario, policy and window.
pub fn gantt_title(scenario: &str, t: &crate::model::observe::trace::Trace) -> String {
    use crate::report::trace::ms;
    format!(
        "{scenario}: policy {}, {} to {} ms",
        t.policy,
        ms(t.from),
        ms(t.to)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_chart_of_two_queue_shows_the_fifo_queue_and_a_highlight() {
        let sc = crate::scenario::resolve("two-queue").unwrap();
        let svg = gantt_svg(&sc, "fifo").unwrap();
        assert!(svg.contains("kcryptd queue") && svg.contains("highlighted"));
        assert!(svg.contains("two-queue: policy fifo, 2000.000 to 2200.000 ms"));
        let err = gantt_svg(&sc, "nosuch").unwrap_err().to_string();
        assert!(err.contains("--policy nosuch"), "{err}");
    }

    /// What `qsim serve` draws for a modern policy whose kernel splits bios (6.12): a chart
    /// with a whole read highlighted and its pieces named after it.
    #[test]
    fn the_chart_of_a_split_workload_highlights_a_whole_read() {
        let sc = crate::scenario::resolve("hdd-array").unwrap();
        let svg = gantt_svg(&sc, "dm-crypt").unwrap();
        assert!(svg.contains("hdd-array: policy dm-crypt") && svg.contains("highlighted"));
        assert!(svg.contains("from job restore") || svg.contains("from job lookup"));
        assert!(
            !svg.contains("piece of bio"),
            "pieces are named by trace number"
        );
    }
}
