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

/// The most spans and marks `--max-spans` may ask for. A recorded span costs about 720 bytes
/// with its share of the bios, the event log and the charts drawn from it (measured: see
/// docs/trace.md), so a trace at the ceiling stays under half a GiB.
pub const MAX_SPANS: usize = 500_000;

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
    /// When the work budget (`max_events`) ended the run before the window's end, if it did:
    /// the trace stops there.
    pub budget_stop: Option<SimTime>,
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
    if req.max_spans == 0 || req.max_spans > MAX_SPANS {
        return Err(UsageError {
            message: format!(
                "--max-spans {}: must be 1 to {MAX_SPANS}, the ceiling that keeps a trace in \
                 memory under half a GiB",
                req.max_spans
            ),
            hint: "a shorter --window holds fewer spans; the default is 50000".into(),
        });
    }
    let from = req.from.unwrap_or(sc.warmup);
    check_start(&sc, from)?;
    let mut win = TraceWindow::new(SimTime::ZERO + from, req.window);
    win.max_spans = req.max_spans;
    sc.warmup = from;
    sc.duration = from + req.window;
    let rec = Recording {
        trace: Some(win),
        ..Recording::default()
    };
    let result = run_replication_with(&sc, info, req.replication, rec);
    let budget_stop =
        (result.obs.end == crate::model::base::obs::RunEnd::Saturated).then_some(result.obs.ended);
    Ok(Traced {
        scenario: sc,
        policy: info,
        result,
        budget_stop,
    })
}

/// Refuses a window that starts at or after the end of the run it is cut from (the scenario's
/// or the variant's `duration`): nothing would be simulated in it, and a run that long could
/// spend its whole work budget first.
fn check_start(sc: &Scenario, from: SimDuration) -> Result<(), UsageError> {
    if from < sc.duration {
        return Ok(());
    }
    Err(UsageError {
        message: format!(
            "--from {from}: the window starts at or after the end of the run: scenario `{}` \
             runs for {} (its duration)",
            sc.name, sc.duration
        ),
        hint: format!(
            "give a --from below {} (the default is the end of the warm-up, {}), or lengthen \
             the run with --set duration=...",
            sc.duration, sc.warmup
        ),
    })
}

/// The Gantt chart, as SVG, of `policy` on `sc` over the default window (200 ms after the
/// warm-up) with the default highlight: what `qsim trace SCENARIO --policy P --out DIR`
/// writes to `gantt.svg` (at `width` `None`), and what `qsim serve` shows at the width of its
/// box.
pub fn gantt_svg(sc: &Scenario, policy: &str, width: Option<u32>) -> anyhow::Result<String> {
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
        width,
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
        let svg = gantt_svg(&sc, "fifo", None).unwrap();
        assert!(svg.contains("kcryptd queue") && svg.contains("highlighted"));
        assert!(svg.contains("two-queue: policy fifo, 2000.000 to 2200.000 ms"));
        let err = gantt_svg(&sc, "nosuch", None).unwrap_err().to_string();
        assert!(err.contains("--policy nosuch"), "{err}");
    }

    /// What `qsim serve` draws for a modern policy whose kernel splits bios (6.12): a chart
    /// with a whole read highlighted and its pieces named after it.
    #[test]
    fn the_chart_of_a_split_workload_highlights_a_whole_read() {
        let sc = crate::scenario::resolve("hdd-array").unwrap();
        let svg = gantt_svg(&sc, "dm-crypt", None).unwrap();
        assert!(svg.contains("hdd-array: policy dm-crypt") && svg.contains("highlighted"));
        assert!(svg.contains("from job restore") || svg.contains("from job lookup"));
        assert!(
            !svg.contains("piece of bio"),
            "pieces are named by trace number"
        );
    }
}
