//! What a sweep or a sensitivity study adds to the report ([`crate::scenario::sweep`] made its
//! variants): laid out by swept value and policy instead of run by run.
//!
//! - A sweep: per headline metric ([`GRID_METRICS`], those measured), a table whose rows are
//!   the swept values and whose columns are the policies, each cell the mean over replications
//!   ± the half-width of its 95 % Student-t interval; with two policies a last column gives
//!   the paired difference second − first (common random numbers: replication `r` of every
//!   point and policy shares its random streams). Under the table, each policy's knee and each
//!   crossover of a policy with the first one (definitions in `docs/sweeps.md`):
//!   - knee: the interior point farthest from the chord joining the curve's two ends, with x
//!     (its logarithm on a log range, the rank for names) and y each scaled to [0, 1] (the
//!     "Kneedle" construction of Satopää et al., 2011); none with fewer than three points, or
//!     a curve flat within noise (its means' range no wider than its widest 95 % half-width);
//!   - crossover: two neighbouring points where the paired difference changes sign; "within
//!     noise" when the 95 % interval of either difference contains zero.
//!
//!   A two-parameter grid gives one table per value of the second parameter.
//! - A sensitivity study: per policy, the knobs ranked by the larger absolute paired effect of
//!   their low and high values on the study's metric, each effect `variant − base` as mean ±
//!   95 % half-width.
//!
//! [`sweep_data`] computes all of it once, as numbers; the text tables here, the `--json`
//! export and the knee and tornado plots read that.

use super::Report;
use super::metrics::{ATOMIC_FAILURES, KSWAPD_CWAIT, MetricId, Metrics};
use super::replications::{num, values};
use super::text::shown;
use super::text::table::{Align, Table};
use crate::scenario::{SweepKind, SweepPlan};
use crate::stats::compare::{Interval, Summary, paired_diff};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt::Write as _;

/// The metrics a sweep's tables show, when measured (not NaN or zero everywhere): read clat
/// p99, p99.9 and mean, GFP_ATOMIC failures, kswapd's congestion waits.
pub const GRID_METRICS: [MetricId; 6] = [
    MetricId::of("read_p99_ms"),
    MetricId::of("read_p999_ms"),
    MetricId::of("read_mean_ms"),
    ATOMIC_FAILURES,
    KSWAPD_CWAIT[0],
    KSWAPD_CWAIT[1],
];

/// The sweep's results as numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepData {
    /// `grid` or `sensitivity`.
    pub kind: String,
    /// A grid's tables, one per metric (and value of a second parameter).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curves: Vec<Curves>,
    /// A study's ranking, one per policy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rankings: Vec<Ranking>,
}

/// `null` (how serde_json writes NaN and infinities) read back as NaN.
fn lenient_vec<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    let v: Vec<Option<f64>> = Deserialize::deserialize(d)?;
    Ok(v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect())
}

/// An interval whose ends may be `null`.
fn lenient_interval<'de, D: Deserializer<'de>>(d: D) -> Result<Interval, D::Error> {
    #[derive(Deserialize)]
    struct Raw {
        estimate: Option<f64>,
        low: Option<f64>,
        high: Option<f64>,
    }
    let r: Raw = Deserialize::deserialize(d)?;
    let nan = f64::NAN;
    Ok(Interval {
        estimate: r.estimate.unwrap_or(nan),
        low: r.low.unwrap_or(nan),
        high: r.high.unwrap_or(nan),
    })
}

/// One metric across the swept values, one curve per policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curves {
    /// The metric's registry key.
    pub metric: String,
    /// Its label and unit (`read p99.9`, `ms`).
    pub label: String,
    /// Its unit.
    pub unit: String,
    /// The swept parameter (its paths joined by `+`) and the unit of `x`.
    pub axis: String,
    /// The unit of `x` (empty for plain numbers and names).
    pub axis_unit: String,
    /// Whether the values were spaced on a log scale.
    pub log: bool,
    /// `path=value` of the second parameter this table holds fixed, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice: Option<String>,
    /// The swept values as written.
    pub values: Vec<String>,
    /// Their numbers (the rank, 0, 1, …, for names).
    #[serde(deserialize_with = "lenient_vec")]
    pub x: Vec<f64>,
    /// One curve per policy, in the scenario's order.
    pub policies: Vec<Curve>,
    /// Sign changes of each policy's paired difference with the first.
    pub crossovers: Vec<Crossover>,
}

/// One policy's curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// The policy.
    pub policy: String,
    /// Mean over replications at each value (NaN: not measured).
    #[serde(deserialize_with = "lenient_vec")]
    pub mean: Vec<f64>,
    /// 95 % half-width at each value (infinite below two replications; NaN when read back
    /// from JSON, which writes both as `null`).
    #[serde(deserialize_with = "lenient_vec")]
    pub half: Vec<f64>,
    /// Paired difference with the first policy at each value (`None` for the first, or
    /// where it cannot be had).
    pub diff: Vec<Option<Interval>>,
    /// The index of its knee, if it has one.
    pub knee: Option<usize>,
}

/// Where a policy's paired difference with the first policy changes sign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crossover {
    /// The policy compared with the first.
    pub policy: String,
    /// The value before the change (index into `values`); the change lies before the next.
    pub after: usize,
    /// Whether the interval of either difference contains zero.
    pub within_noise: bool,
}

/// One policy's knobs, ranked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    /// The policy.
    pub policy: String,
    /// The metric's key, label and unit.
    pub metric: String,
    /// Its label.
    pub label: String,
    /// Its unit.
    pub unit: String,
    /// The base's mean ± half-width (as [`Curve::half`]).
    #[serde(deserialize_with = "lenient_interval")]
    pub base: Interval,
    /// The knobs, largest effect first.
    pub knobs: Vec<KnobEffect>,
}

/// One knob's effects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnobEffect {
    /// The knob's name.
    pub knob: String,
    /// Its low and high values as written.
    pub values: [String; 2],
    /// Paired effect `variant − base` of the low and high values (`None` when it cannot be
    /// had: fewer than two replications, or the metric not measured).
    pub effect: [Option<Interval>; 2],
}

impl KnobEffect {
    /// The larger absolute effect (0 when neither is known): the ranking key.
    pub fn size(&self) -> f64 {
        self.effect
            .iter()
            .flatten()
            .map(|i| i.estimate.abs())
            .filter(|x| x.is_finite())
            .fold(0.0, f64::max)
    }
}

/// The run index of each (variant, policy) of the report, with the policies in order.
fn layout(report: &Report) -> (Vec<String>, Vec<Vec<Option<usize>>>) {
    let mut policies: Vec<String> = Vec::new();
    for v in &report.variants {
        for p in &v.policies {
            if !policies.contains(p) {
                policies.push(p.clone());
            }
        }
    }
    let mut cells = vec![vec![None; policies.len()]; report.variants.len()];
    for (i, p) in report.policies.iter().enumerate() {
        let Some(rv) = &p.variant else { continue };
        let v = report.variants.iter().position(|x| x.name == rv.name);
        let c = policies.iter().position(|x| *x == rv.policy);
        if let (Some(v), Some(c)) = (v, c) {
            cells[v][c] = Some(i);
        }
    }
    (policies, cells)
}

/// The sweep's numbers, when the report came from one.
pub fn sweep_data(report: &Report) -> Option<SweepData> {
    let plan = report.sweep.as_ref()?;
    if report.metrics.len() != report.policies.len() {
        return None;
    }
    let (policies, cells) = layout(report);
    let reps =
        |run: Option<usize>| -> &[Metrics] { run.map_or(&[], |i| report.metrics[i].1.as_slice()) };
    Some(match plan.kind {
        SweepKind::Grid => SweepData {
            kind: "grid".into(),
            curves: grid(report, plan, &policies, &cells, &reps),
            rankings: Vec::new(),
        },
        SweepKind::Sensitivity => SweepData {
            kind: "sensitivity".into(),
            curves: Vec::new(),
            rankings: ranking(plan, &policies, &cells, &reps),
        },
    })
}

/// hyperfine's `parameters` of run `run` of a sweep: each swept parameter's name and the run's
/// value; of a study: the knob's name and its value (nothing for the base); empty outside a
/// sweep or for a run without a variant.
pub fn parameters(report: &Report, run: usize) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let (Some(plan), Some(rv)) = (
        &report.sweep,
        report.policies.get(run).and_then(|p| p.variant.as_ref()),
    ) else {
        return out;
    };
    let Some(v) = report.variants.iter().position(|x| x.name == rv.name) else {
        return out;
    };
    let text = |p: &crate::scenario::SweepParam, k: usize| p.values.get(k).map(|x| x.text.clone());
    match plan.kind {
        SweepKind::Grid => {
            let n2 = plan.params.get(1).map_or(1, |p| p.values.len()).max(1);
            let picks = [(0, v / n2), (1, v % n2)];
            for (axis, k) in picks.into_iter().take(plan.params.len()) {
                let p = &plan.params[axis];
                if let Some(t) = text(p, k) {
                    out.insert(p.name.clone(), t);
                }
            }
        }
        SweepKind::Sensitivity if v > 0 => {
            let p = &plan.params[(v - 1) / 2];
            if let Some(t) = text(p, (v - 1) % 2) {
                out.insert(p.name.clone(), t);
            }
        }
        SweepKind::Sensitivity => {}
    }
    out
}

/// The metric a study ranks by: a registry key or a `--precision-metric` name.
pub fn study_metric(name: &str) -> Option<MetricId> {
    MetricId::all()
        .find(|(_, m)| m.key == name || m.headline.is_some_and(|h| h.name == name))
        .map(|(id, _)| id)
}

/// Every table of a grid.
fn grid<'r>(
    report: &Report,
    plan: &SweepPlan,
    policies: &[String],
    cells: &[Vec<Option<usize>>],
    reps: &dyn Fn(Option<usize>) -> &'r [Metrics],
) -> Vec<Curves> {
    let axis = &plan.params[0];
    let n1 = axis.values.len();
    let slices = plan.params.get(1).map_or(1, |p| p.values.len());
    let x: Vec<f64> = axis
        .values
        .iter()
        .enumerate()
        .map(|(k, v)| v.x.unwrap_or(k as f64))
        .collect();
    let mut out = Vec::new();
    for id in GRID_METRICS {
        let m = id.metric();
        let measured = report
            .metrics
            .iter()
            .any(|(_, r)| r.iter().any(|x| x[id].is_finite() && x[id] != 0.0));
        if !measured {
            continue;
        }
        for s in 0..slices {
            // Variant of value k of the first axis (and value s of the second).
            let variant = |k: usize| if slices == 1 { k } else { k * slices + s };
            let curves: Vec<Curve> = (0..policies.len())
                .map(|c| {
                    curve(
                        &policies[c],
                        n1,
                        id,
                        &|k| reps(cells[variant(k)][c]),
                        &|k| reps(cells[variant(k)][0]),
                        c > 0,
                        &x,
                        axis.log,
                    )
                })
                .collect();
            let crossovers = curves.iter().skip(1).flat_map(crossings).collect();
            out.push(Curves {
                metric: m.key.into(),
                label: m.label.into(),
                unit: m.unit.into(),
                axis: axis.name.clone(),
                axis_unit: axis.unit.clone(),
                log: axis.log,
                slice: plan
                    .params
                    .get(1)
                    .map(|p| format!("{}={}", p.name, p.values[s].text)),
                values: axis.values.iter().map(|v| v.text.clone()).collect(),
                x: x.clone(),
                policies: curves,
                crossovers,
            });
        }
    }
    out
}

/// One policy's curve over `n` values; `paired` compares it with the first policy's runs.
#[allow(clippy::too_many_arguments)]
fn curve<'r>(
    policy: &str,
    n: usize,
    id: MetricId,
    own: &dyn Fn(usize) -> &'r [Metrics],
    first: &dyn Fn(usize) -> &'r [Metrics],
    paired: bool,
    x: &[f64],
    log: bool,
) -> Curve {
    let sums: Vec<Summary> = (0..n).map(|k| Summary::of(&values(own(k), id))).collect();
    let mean: Vec<f64> = sums.iter().map(|s| s.mean).collect();
    let diff = (0..n)
        .map(|k| {
            paired
                .then(|| paired_diff(&values(own(k), id), &values(first(k), id)).ok())
                .flatten()
        })
        .collect();
    let xs: Vec<f64> = x.iter().map(|&v| if log { v.ln() } else { v }).collect();
    // A curve whose means all lie within its widest interval is flat within noise: no knee.
    let finite = mean.iter().copied().filter(|m| m.is_finite());
    let range =
        finite.clone().fold(f64::NEG_INFINITY, f64::max) - finite.fold(f64::INFINITY, f64::min);
    let widest = sums.iter().map(|s| s.ci95_half).fold(0.0, f64::max);
    let noisy = range.is_nan() || range <= widest;
    Curve {
        policy: policy.into(),
        knee: if noisy { None } else { knee(&xs, &mean) },
        half: sums.iter().map(|s| s.ci95_half).collect(),
        mean,
        diff,
    }
}

/// The knee of `y` over `x`: the interior point farthest from the chord joining the ends, both
/// axes scaled to [0, 1]; `None` with fewer than three points, a flat or unmeasured curve.
pub fn knee(x: &[f64], y: &[f64]) -> Option<usize> {
    let n = x.len().min(y.len());
    if n < 3 || !y[..n].iter().chain(&x[..n]).all(|v| v.is_finite()) {
        return None;
    }
    let span = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi - lo)
    };
    let (x0, xs) = span(&x[..n]);
    let (y0, ys) = span(&y[..n]);
    if xs <= 0.0 || ys <= 0.0 {
        return None;
    }
    let p: Vec<(f64, f64)> = (0..n)
        .map(|i| ((x[i] - x0) / xs, (y[i] - y0) / ys))
        .collect();
    let (a, b) = (p[0], p[n - 1]);
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = dx.hypot(dy);
    let dist = |q: (f64, f64)| ((q.0 - a.0) * dy - (q.1 - a.1) * dx).abs() / len;
    (1..n - 1)
        .map(|i| (i, dist(p[i])))
        .filter(|&(_, d)| d > 0.0)
        .max_by(|l, r| l.1.total_cmp(&r.1).then(r.0.cmp(&l.0)))
        .map(|(i, _)| i)
}

/// The sign changes of a curve's paired differences with the first policy.
fn crossings(c: &Curve) -> Vec<Crossover> {
    let mut out = Vec::new();
    for k in 1..c.diff.len() {
        let (Some(a), Some(b)) = (c.diff[k - 1], c.diff[k]) else {
            continue;
        };
        let (sa, sb) = (a.estimate.signum(), b.estimate.signum());
        if a.estimate != 0.0 && b.estimate != 0.0 && sa != sb {
            out.push(Crossover {
                policy: c.policy.clone(),
                after: k - 1,
                within_noise: a.contains_zero() || b.contains_zero(),
            });
        }
    }
    out
}

/// A study's ranking, per policy.
fn ranking<'r>(
    plan: &SweepPlan,
    policies: &[String],
    cells: &[Vec<Option<usize>>],
    reps: &dyn Fn(Option<usize>) -> &'r [Metrics],
) -> Vec<Ranking> {
    let name = plan.metric.as_deref().unwrap_or("read_p999_ms");
    let id = study_metric(name).unwrap_or(MetricId::of("read_p999_ms"));
    let m = id.metric();
    let mut out = Vec::new();
    for (c, policy) in policies.iter().enumerate() {
        let base = values(reps(cells.first().and_then(|r| r[c])), id);
        let mut knobs: Vec<KnobEffect> = plan
            .params
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let effect = [1, 2].map(|d| {
                    let run = cells.get(2 * k + d).and_then(|r| r[c]);
                    paired_diff(&values(reps(run), id), &base).ok()
                });
                KnobEffect {
                    knob: p.name.clone(),
                    values: [0, 1]
                        .map(|i| p.values.get(i).map_or(String::new(), |v| v.text.clone())),
                    effect,
                }
            })
            .collect();
        knobs.sort_by(|a, b| b.size().total_cmp(&a.size()));
        out.push(Ranking {
            policy: policy.clone(),
            metric: m.key.into(),
            label: m.label.into(),
            unit: m.unit.into(),
            base: Summary::of(&base).interval(),
            knobs,
        });
    }
    out
}

/// `mean ± half` in a cell (`-` when not measured).
fn cell(mean: f64, half: f64) -> String {
    if !mean.is_finite() {
        "-".into()
    } else if half.is_finite() {
        format!("{} ± {}", num(mean), num(half))
    } else {
        num(mean)
    }
}

/// A signed paired difference.
fn signed(i: &Interval) -> String {
    let sign = if i.estimate >= 0.0 { "+" } else { "" };
    format!("{sign}{} ± {}", num(i.estimate), num(i.half_width()))
}

/// Renders the sweep's tables (nothing unless the report came from a sweep or a study).
pub fn render(report: &Report, out: &mut String) {
    let Some(data) = sweep_data(report) else {
        return;
    };
    let n = report.replications;
    for c in &data.curves {
        render_curves(c, n, out);
    }
    for r in &data.rankings {
        render_ranking(r, n, out);
    }
}

/// Cuts `s` to `w` characters.
fn fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(w.saturating_sub(1)).collect();
        t.push('~');
        t
    }
}

/// One table of a grid, its knees and crossovers.
fn render_curves(c: &Curves, n: u32, out: &mut String) {
    let unit = if c.unit.is_empty() {
        String::new()
    } else {
        format!(", {}", c.unit)
    };
    let _ = writeln!(out, "\nSweep: {}{unit} (mean ± 95% CI, n = {n})", c.label);
    let _ = writeln!(out, "  by {}", fit(&c.axis, 74));
    if let Some(s) = &c.slice {
        let _ = writeln!(out, "  at {}", fit(s, 74));
    }
    let two = c.policies.len() == 2;
    let mut t = Table::new(2).column("value", Align::Left);
    let names: Vec<String> = c.policies.iter().map(|p| shown(&p.policy)).collect();
    for name in &names {
        t = t.column(name, Align::Right);
    }
    if two {
        t = t.column(&format!("{} - {}", names[1], names[0]), Align::Right);
    }
    let values = crate::scenario::sweep::in_one_unit(&c.values);
    for (k, v) in values.iter().enumerate() {
        let mut row = vec![v.clone()];
        for p in &c.policies {
            let mark = if p.knee == Some(k) { "*" } else { " " };
            row.push(format!("{}{mark}", cell(p.mean[k], p.half[k])));
        }
        if two {
            let d = c.policies[1].diff[k].as_ref().map_or("-".into(), signed);
            let x = if c.crossovers.iter().any(|x| x.after + 1 == k) {
                "x"
            } else {
                " "
            };
            row.push(format!("{d}{x}"));
        }
        t.row(row);
    }
    out.push_str(&t.render(super::text::fit::WIDTH));
    render_marks(c, &values, out);
}

/// The knee of each policy and the crossovers, under a table.
fn render_marks(c: &Curves, values: &[String], out: &mut String) {
    for p in &c.policies {
        match p.knee {
            Some(k) => {
                let _ = writeln!(out, "  * knee of {}: {}", shown(&p.policy), values[k]);
            }
            None => {
                let _ = writeln!(
                    out,
                    "    no knee for {} (flat within noise, or < 3 points)",
                    shown(&p.policy)
                );
            }
        }
    }
    for x in &c.crossovers {
        let noise = if x.within_noise {
            " (within noise)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  x {} crosses {} between {} and {}{noise}",
            shown(&x.policy),
            shown(&c.policies[0].policy),
            values[x.after],
            values[x.after + 1]
        );
    }
}

/// One policy's ranked knobs.
fn render_ranking(r: &Ranking, n: u32, out: &mut String) {
    let unit = if r.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", r.unit)
    };
    let _ = writeln!(
        out,
        "\nSensitivity of {}{unit} under {} (paired vs base, n = {n})",
        r.label,
        shown(&r.policy)
    );
    let _ = writeln!(
        out,
        "  base: {}",
        cell(r.base.estimate, r.base.half_width())
    );
    let mut t = Table::new(2)
        .column("knob", Align::Left)
        .optional("rank", Align::Right, 1)
        .column("low", Align::Right)
        .column("effect", Align::Right)
        .column("high", Align::Right)
        .column("effect", Align::Right)
        .stackable();
    for (i, k) in r.knobs.iter().enumerate() {
        let e = |j: usize| k.effect[j].as_ref().map_or("-".into(), signed);
        t.row([
            k.knob.clone(),
            (i + 1).to_string(),
            k.values[0].clone(),
            e(0),
            k.values[1].clone(),
            e(1),
        ]);
    }
    out.push_str(&t.render(super::text::fit::WIDTH));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knee_is_the_point_farthest_from_the_chord() {
        let x = [0.0, 1.0, 2.0, 3.0, 4.0];
        assert_eq!(knee(&x, &[10.0, 2.0, 1.5, 1.2, 1.0]), Some(1));
        assert_eq!(knee(&x, &[0.0, 0.1, 0.2, 3.0, 4.0]), Some(2));
        assert_eq!(knee(&x, &[1.0, 1.0, 1.0, 1.0, 1.0]), None, "flat");
        assert_eq!(knee(&x[..2], &[1.0, 2.0]), None, "two points");
        assert_eq!(
            knee(&x, &[0.0, 1.0, 2.0, 3.0, 4.0]),
            None,
            "a line has none"
        );
        assert_eq!(knee(&x, &[0.0, f64::NAN, 2.0, 3.0, 4.0]), None);
    }

    #[test]
    fn a_crossover_is_a_sign_change_of_the_paired_difference() {
        let d = |e: f64, h: f64| Some(Interval::around(e, h));
        let c = Curve {
            policy: "split".into(),
            mean: vec![0.0; 4],
            half: vec![0.0; 4],
            diff: vec![d(-2.0, 0.5), d(-1.0, 0.5), d(0.5, 1.0), d(2.0, 0.1)],
            knee: None,
        };
        let x = crossings(&c);
        assert_eq!(x.len(), 1);
        assert_eq!((x[0].after, x[0].within_noise), (1, true));
        let c = Curve {
            diff: vec![d(-2.0, 0.5), d(2.0, 0.5)],
            ..c
        };
        assert!(!crossings(&c)[0].within_noise);
    }
}
