//! The answer a flag comparison exists for: which `cryptsetup --perf-*` flags to turn on, how
//! sure the runs are of it, and whether it survives an error in the inputs the machine was
//! described by.
//!
//! - [`recommend`] picks, per group of the "Flag comparison" ([`super::flags`]), the
//!   combination to turn on: among the combinations that beat the default beyond noise on the
//!   headline metric (read p99.9, or total MiB/s for a load without reads), those whose paired
//!   difference from the best one is itself within noise are equally good, and of these the one
//!   with the fewest flags is recommended (a flag that does not help is a flag nobody has to
//!   justify); one that costs throughput beyond noise is passed over while another does not.
//! - [`render_recommendation`] writes it with its 95 % interval, under the comparison's tables.
//! - [`holds`] and [`render_holds`] read a second, smaller study: the recommended combination
//!   and the default rerun with each machine input moved down and up (variants `NAME-` and
//!   `NAME+` of a sensitivity study), and say at which points the recommendation still wins,
//!   and which input moves its gain the most.

use super::Report;
use super::flags::{DEFAULT, Group, compare, groups, short_label, verdict_words};
use crate::stats::compare::{Interval, Verdict};
use std::fmt::Write as _;

/// A paired comparison: its verdict and the ratio of means with its 95 % interval.
pub type Paired = Option<(Verdict, Interval)>;

/// What a group of the flag comparison recommends.
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    /// The variant the group belongs to (`None` without variants).
    pub variant: Option<String>,
    /// The recommended table (`dm-crypt+no_read_workqueue`), or `dm-crypt` when no
    /// combination beats the default.
    pub policy: String,
    /// The metric the recommendation is judged on: `read_p999_ms`, or `total_mib_s` for a
    /// load without reads.
    pub metric: &'static str,
    /// The recommended table against the default on [`Recommendation::metric`].
    pub gain: Paired,
    /// The recommended table against the default on total MiB/s (when the metric is read
    /// p99.9).
    pub throughput: Paired,
    /// The best table by its mean gain, when the recommendation is a simpler one within noise
    /// of it, with its gain and how many tables were within noise of it.
    pub best: Option<(String, Paired, usize)>,
    /// Replications per table.
    pub replications: usize,
}

/// The number of flags a table sets.
fn flag_count(policy: &str) -> usize {
    policy.split('+').count() - 1
}

/// The factor a paired comparison wins by (0 unless better).
fn win(c: Paired) -> f64 {
    match c {
        Some((Verdict::Better, q)) if q.estimate > 0.0 => q.estimate.max(1.0 / q.estimate),
        _ => 0.0,
    }
}

/// The recommendation of each group of `report`'s flag comparison, in the section's order.
pub fn recommend(report: &Report) -> Vec<Recommendation> {
    groups(report).iter().map(recommend_group).collect()
}

/// The recommendation of one group: see the module's rule.
pub(super) fn recommend_group(g: &Group) -> Recommendation {
    let reference = g.members[0].reps;
    let has_reads = g.members[1..]
        .iter()
        .any(|m| compare(m.reps, reference, "read_p999_ms").is_some());
    let metric = if has_reads {
        "read_p999_ms"
    } else {
        "total_mib_s"
    };
    let vs_default: Vec<Paired> = g
        .members
        .iter()
        .map(|m| compare(m.reps, reference, metric))
        .collect();
    let tput: Vec<Paired> = g
        .members
        .iter()
        .map(|m| compare(m.reps, reference, "total_mib_s"))
        .collect();
    let mut out = Recommendation {
        variant: g.variant.clone(),
        policy: DEFAULT.to_string(),
        metric,
        gain: None,
        throughput: None,
        best: None,
        replications: reference.len(),
    };
    let best = (1..g.members.len())
        .filter(|&i| win(vs_default[i]) > 0.0)
        .max_by(|&a, &b| win(vs_default[a]).total_cmp(&win(vs_default[b])));
    let Some(best) = best else {
        return out;
    };
    // Within noise of the best (the best itself included), cheapest on throughput first.
    let as_good: Vec<usize> = (1..g.members.len())
        .filter(|&i| win(vs_default[i]) > 0.0)
        .filter(|&i| {
            i == best
                || matches!(
                    compare(g.members[i].reps, g.members[best].reps, metric),
                    Some((Verdict::WithinNoise, _))
                )
        })
        .collect();
    let costs = |i: usize| has_reads && matches!(tput[i], Some((Verdict::Worse, _)));
    let pool: Vec<usize> = if as_good.iter().all(|&i| costs(i)) {
        as_good.clone()
    } else {
        as_good.iter().copied().filter(|&i| !costs(i)).collect()
    };
    let pick = pool
        .iter()
        .copied()
        .min_by(|&a, &b| {
            flag_count(&g.members[a].policy)
                .cmp(&flag_count(&g.members[b].policy))
                .then(win(vs_default[b]).total_cmp(&win(vs_default[a])))
                .then(a.cmp(&b))
        })
        .unwrap_or(best);
    out.policy = g.members[pick].policy.clone();
    out.gain = vs_default[pick];
    out.throughput = has_reads.then_some(tput[pick]).flatten();
    if pick != best {
        out.best = Some((
            g.members[best].policy.clone(),
            vs_default[best],
            as_good.len(),
        ));
    }
    out
}

/// What `metric` is called in a sentence.
fn metric_words(metric: &str) -> &'static str {
    if metric == "read_p999_ms" {
        "read p99.9"
    } else {
        "throughput"
    }
}

/// The factor interval of a paired ratio, oriented as its verdict reads (the ratio, or its
/// inverse when under 1: `1.49–1.57×`), with as many decimals as the verdict's factor (three
/// under 1.1, two above).
fn factor_interval(q: &Interval) -> String {
    let (est, lo, hi) = if q.estimate < 1.0 {
        (1.0 / q.estimate, 1.0 / q.high, 1.0 / q.low)
    } else {
        (q.estimate, q.low, q.high)
    };
    let d = if est < 1.1 { 3 } else { 2 };
    let end = |x: f64| {
        if x.is_finite() && x > 0.0 {
            format!("{x:.d$}")
        } else {
            "∞".to_string()
        }
    };
    format!("{}–{}×", end(lo), end(hi))
}

/// The recommendation as the paragraph that closes a group of the flag comparison.
pub fn render_recommendation(r: &Recommendation, out: &mut String) {
    let what = metric_words(r.metric);
    let n = r.replications;
    let text = match (&r.gain, r.policy == DEFAULT) {
        _ if n < 2 => "Recommendation: none yet: one replication cannot tell a gain from \
                       noise; run with -r 3 or more."
            .to_string(),
        (_, true) => format!(
            "Recommendation: keep dm-crypt's defaults: no combination beats them on {what} \
             beyond noise over {n} paired replications."
        ),
        (Some((v, q)), false) => {
            let mut s = format!(
                "Recommendation: {}. {} {} than dm-crypt (95% CI {}, {n} paired \
                 replications)",
                short_label(&r.policy),
                if r.metric == "read_p999_ms" {
                    "Read p99.9"
                } else {
                    "Throughput"
                },
                verdict_words(Some((*v, *q))),
                factor_interval(q)
            );
            if r.metric == "read_p999_ms" {
                let _ = write!(s, ", throughput {}", verdict_words(r.throughput));
            }
            s.push('.');
            if let Some((best, gain, k)) = &r.best {
                let _ = write!(
                    s,
                    " Of the {k} combinations within noise of the best by the mean ({}, {}), \
                     it has the fewest flags.",
                    short_label(best),
                    verdict_words(*gain)
                );
            }
            s
        }
        (None, false) => format!("Recommendation: {}.", short_label(&r.policy)),
    };
    out.push_str(&super::text::fit::fill(
        &format!("{text}\n"),
        super::text::fit::WIDTH,
    ));
}

/// One machine input of a robustness study: the name its two variants carry (`NAME-`,
/// `NAME+`), its value as run, and its low and high values.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    /// The knob's name in the table and in its variants' names (`NAME-`, `NAME+`).
    pub name: String,
    /// The scenario path it sets (several joined by `+` set to one value).
    pub path: String,
    /// Its value as the machine gives it.
    pub value: String,
    /// The value it is moved down to.
    pub low: String,
    /// The value it is moved up to.
    pub high: String,
}

/// The recommended table against the default at each point of a robustness study.
#[derive(Debug, Clone, PartialEq)]
pub struct Holds {
    /// The gain as measured (variant `base`).
    pub base: Paired,
    /// Per input, in the study's order: the gain at its low and at its high value.
    pub points: Vec<(Input, Paired, Paired)>,
}

/// The gains of `report`'s only flagged table against `dm-crypt` on `metric`, per variant of
/// a robustness study over `inputs` (`None` when the report is not such a study).
pub fn holds(report: &Report, metric: &str, inputs: &[Input]) -> Option<Holds> {
    let gs = groups(report);
    let gain = |variant: &str| -> Option<Paired> {
        let g = gs.iter().find(|g| g.variant.as_deref() == Some(variant))?;
        let m = g.members.get(1)?;
        Some(compare(m.reps, g.members[0].reps, metric))
    };
    let base = gain("base")?;
    let mut points = Vec::new();
    for i in inputs {
        let lo = gain(&format!("{}-", i.name))?;
        let hi = gain(&format!("{}+", i.name))?;
        points.push((i.clone(), lo, hi));
    }
    Some(Holds { base, points })
}

/// How far an input moves the gain: the larger distance, in log factor, of its two points
/// from the base; a point where the recommendation no longer wins counts as infinitely far.
fn swing(base: Paired, lo: Paired, hi: Paired) -> f64 {
    let b = win(base);
    [lo, hi]
        .iter()
        .map(|p| {
            let f = win(*p);
            if f == 0.0 {
                f64::INFINITY
            } else {
                (f / b).ln().abs()
            }
        })
        .fold(0.0, f64::max)
}

/// The robustness table and its closing sentence: at which moved inputs the recommendation
/// `policy` still beats the default on `metric`, and which input matters most.
pub fn render_holds(h: &Holds, policy: &str, metric: &str, step: &str, out: &mut String) {
    let what = metric_words(metric);
    let intro = format!(
        "Does it hold? {} against dm-crypt on {what}, rerun with each machine input moved \
         down and up by {step} (gain: × better than dm-crypt, paired; noise: within noise; \
         worse: worse beyond noise; as run: {}):\n",
        short_label(policy),
        verdict_words(h.base)
    );
    out.push('\n');
    out.push_str(&super::text::fit::fill(&intro, super::text::fit::WIDTH));
    let rows: Vec<Vec<String>> = h
        .points
        .iter()
        .map(|(i, lo, hi)| {
            vec![
                i.name.clone(),
                i.value.clone(),
                i.low.clone(),
                gain_cell(*lo),
                i.high.clone(),
                gain_cell(*hi),
            ]
        })
        .collect();
    let heads: Vec<String> = ["input", "as run", "moved down", "gain", "moved up", "gain"]
        .map(String::from)
        .to_vec();
    let w: Vec<usize> = (0..heads.len())
        .map(|c| {
            rows.iter()
                .chain([&heads])
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in std::iter::once(&heads).chain(&rows) {
        let mut line = format!("  {:<a$}", r[0], a = w[0]);
        for (x, w) in r.iter().zip(&w).skip(1) {
            let _ = write!(line, "  {x:>w$}");
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out.push_str(&super::text::fit::fill(
        &format!("{}\n", closing(h, what)),
        super::text::fit::WIDTH,
    ));
}

/// A gain as a table cell: the factor when better, else `noise`, `worse` or `n/a`.
fn gain_cell(p: Paired) -> String {
    match p {
        Some((Verdict::Better, _)) => {
            let f = win(p);
            if f < 1.1 {
                format!("{f:.3}×")
            } else {
                format!("{f:.2}×")
            }
        }
        Some((Verdict::WithinNoise, _)) => "noise".into(),
        Some((Verdict::Worse, _)) => "worse".into(),
        None => "n/a".into(),
    }
}

/// The sentence under the robustness table.
fn closing(h: &Holds, what: &str) -> String {
    let failing: Vec<String> = h
        .points
        .iter()
        .flat_map(|(i, lo, hi)| [(&i.low, lo, i), (&i.high, hi, i)])
        .filter(|(_, p, _)| win(**p) == 0.0)
        .map(|(v, _, i)| format!("{} at {v}", i.name))
        .collect();
    let most = h
        .points
        .iter()
        .map(|(i, lo, hi)| (i, swing(h.base, *lo, *hi), *lo, *hi))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let mut s = match most {
        Some((i, sw, lo, hi)) if sw.is_finite() => format!(
            "The answer is most sensitive to {}: {what} {} at {}, {} at {}.",
            i.name,
            verdict_words(lo),
            i.low,
            verdict_words(hi),
            i.high
        ),
        Some((i, _, _, _)) => format!("The answer is most sensitive to {}.", i.name),
        None => String::new(),
    };
    if failing.is_empty() {
        s.push_str(" The recommendation holds at every point.");
    } else {
        let _ = write!(
            s,
            " It no longer beats the default beyond noise with {}: measure {} again before \
             relying on it.",
            failing.join(", "),
            if failing.len() == 1 {
                "that input"
            } else {
                "those inputs"
            }
        );
    }
    s.trim_start().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn better(ratio: f64, half: f64) -> Paired {
        Some((Verdict::Better, Interval::around(ratio, half)))
    }

    fn input(name: &str) -> Input {
        Input {
            name: name.into(),
            path: name.into(),
            value: "50us".into(),
            low: "40us".into(),
            high: "60us".into(),
        }
    }

    #[test]
    fn a_gain_reads_as_a_factor_interval_the_right_way_round() {
        // Read p99.9 halved: ratio 0.5 in [0.48, 0.52], a 1.92–2.08× gain.
        let q = Interval::around(0.5, 0.02);
        assert_eq!(factor_interval(&q), "1.92–2.08×");
        // Throughput up by 5 %: the ratio itself, three decimals under 1.1×.
        let q = Interval::around(1.05, 0.01);
        assert_eq!(factor_interval(&q), "1.040–1.060×");
    }

    #[test]
    fn the_input_that_moves_the_gain_most_is_named_and_a_lost_point_is_flagged() {
        let h = Holds {
            base: better(0.5, 0.01),
            points: vec![
                (
                    input("device.latency"),
                    better(0.45, 0.01),
                    better(0.55, 0.01),
                ),
                (input("cpus"), better(0.52, 0.01), better(0.49, 0.01)),
            ],
        };
        let s = closing(&h, "read p99.9");
        assert!(
            s.starts_with("The answer is most sensitive to device.latency"),
            "{s}"
        );
        assert!(s.ends_with("holds at every point."), "{s}");
        let h = Holds {
            points: vec![
                (
                    input("device.latency"),
                    better(0.45, 0.01),
                    better(0.55, 0.01),
                ),
                (
                    input("cpus"),
                    Some((Verdict::WithinNoise, Interval::around(0.99, 0.05))),
                    better(0.49, 0.01),
                ),
            ],
            ..h
        };
        let s = closing(&h, "read p99.9");
        assert!(s.contains("most sensitive to cpus"), "{s}");
        assert!(s.contains("with cpus at 40us"), "{s}");
    }

    #[test]
    fn flags_are_counted_from_the_policy_name() {
        assert_eq!(flag_count("dm-crypt"), 0);
        assert_eq!(
            flag_count("dm-crypt+no_read_workqueue+no_write_workqueue"),
            2
        );
    }
}
