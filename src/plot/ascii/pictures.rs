//! qsim's own plain-text pictures of a run, from its [`PlotData`] alone (so `qsim run --ascii`
//! and `qsim plot --ascii RESULTS.json` print the same): the "nines" plot of read clat per
//! run, when the scenario models memory the GFP_ATOMIC failures per run, and for a sweep a
//! knee curve per table (the swept value against the metric, one series per policy, the
//! knees and crossovers marked).

use super::{Bar, LineChart, MAX_WIDTH, Point, Scale, Series, bars, line_chart};
use crate::plot::data::{PlotData, RunPlot, Spread};
use crate::report::sweep::Curves;

/// The heading of the pictures' section in the text report.
pub const HEADING: &str = "Plain-text pictures";

/// Every picture of `data`, under a [`HEADING`] line: the nines plot, then the failures bars
/// when some run has memory figures. Lines end in `\n`, none wider than [`MAX_WIDTH`].
pub fn render(data: &PlotData) -> String {
    let mut out = format!("{HEADING} (scenario {})\n\n", ascii_name(&data.scenario));
    out.push_str(&nines(data));
    if data.runs.iter().any(|r| r.memory.is_some()) {
        out.push('\n');
        out.push_str(&failures(data));
    }
    for c in data.sweep.iter().flat_map(|s| &s.curves) {
        out.push('\n');
        out.push_str(&knee(c));
    }
    for f in &data.flags {
        out.push('\n');
        out.push_str(&flags(f));
    }
    out
}

/// A flag comparison as bars: per combination its paired ratio to `dm-crypt` on read p99.9
/// (`<codes> p99.9`, below 1 is faster) and on total MiB/s (`<codes> MiB/s`, above 1 is more),
/// with the 95 % CI as whiskers.
pub fn flags(f: &crate::report::flags::FlagPlot) -> String {
    let mut rows = Vec::new();
    for r in &f.rows {
        let code = crate::report::flags::code_of(&r.policy);
        for (what, q) in [("p99.9", r.read_p999), ("MiB/s", r.throughput)] {
            rows.push(Bar {
                label: format!("{code} {what}"),
                value: q.map_or(f64::NAN, |q| q.estimate),
                range: q.map(|q| (q.low, q.high)),
            });
        }
    }
    let whose = match &f.variant {
        Some(v) => format!(", variant {}", ascii_name(v)),
        None => String::new(),
    };
    bars(
        &format!(
            "dm-crypt flags: ratio to dm-crypt{whose} (read p99.9: lower is better; MiB/s: \
             higher is better; [95% CI])"
        ),
        &rows,
        MAX_WIDTH,
    )
}

/// `s` in ASCII: `µ` as `u`, `±` as `+-`, any other non-ASCII character as `?`.
fn ascii_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            'µ' | 'μ' => out.push('u'),
            '±' => out.push_str("+-"),
            '−' | '–' => out.push('-'),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            _ => out.push('?'),
        }
    }
    out
}

/// Where a mark between values `a` and `b` of an axis goes: their midpoint, geometric on a
/// log axis.
fn between(a: f64, b: f64, log: bool) -> f64 {
    if log && a > 0.0 && b > 0.0 {
        (a * b).sqrt()
    } else {
        (a + b) / 2.0
    }
}

/// One sweep table as a knee curve: x = the swept value (log when the sweep was), y = the
/// metric's mean with its 95 % CI as range marks, one series per policy; each knee and each
/// crossover of the paired difference marked as a column.
pub fn knee(c: &Curves) -> String {
    let series: Vec<Series> = c
        .policies
        .iter()
        .map(|p| Series {
            name: ascii_text(&p.policy),
            points: c
                .x
                .iter()
                .zip(p.mean.iter().zip(&p.half))
                .map(|(&x, (&y, &h))| Point {
                    x,
                    y,
                    range: (h.is_finite() && h > 0.0).then_some((y - h, y + h)),
                })
                .collect(),
        })
        .collect();
    let mut marks: Vec<(f64, String)> = Vec::new();
    for p in &c.policies {
        if let Some(k) = p.knee
            && let (Some(&x), Some(v)) = (c.x.get(k), c.values.get(k))
        {
            marks.push((x, ascii_text(&format!("knee of {} at {v}", p.policy))));
        }
    }
    let first = c.policies.first().map_or("", |p| p.policy.as_str());
    for x in &c.crossovers {
        if let (Some(&a), Some(&b)) = (c.x.get(x.after), c.x.get(x.after + 1)) {
            let noise = if x.within_noise {
                " (within noise)"
            } else {
                ""
            };
            let note = format!("{} crosses {first}{noise}", x.policy);
            marks.push((between(a, b, c.log), ascii_text(&note)));
        }
    }
    let slice = c
        .slice
        .as_ref()
        .map_or(String::new(), |s| format!(" at {s}"));
    let unit = if c.unit.is_empty() {
        String::new()
    } else {
        format!(", {}", c.unit)
    };
    let axis_unit = if c.axis_unit.is_empty() {
        String::new()
    } else {
        format!(", {}", c.axis_unit)
    };
    let scale = if c.log { Scale::Log } else { Scale::Linear };
    let mut chart = LineChart::new(
        ascii_text(&format!("Sweep: {}{slice} (mean, ':' 95% CI)", c.label)),
        (
            ascii_text(&format!(
                "{}{axis_unit}",
                crate::plot::scale::axis_name(&c.axis)
            )),
            scale,
        ),
        (ascii_text(&format!("{}{unit}", c.label)), Scale::Linear),
        series,
    );
    chart.x_marks = marks;
    line_chart(&chart)
}

fn ascii_name(s: &str) -> String {
    s.chars().filter(|c| c.is_ascii_graphic()).collect()
}

/// The 95 % interval of `s` when replications give one (a half-width of 0 gives none).
fn interval(s: &Spread) -> Option<(f64, f64)> {
    if !s.values.is_empty() {
        // Fewer than DOTS_BELOW replications: the range of their values, not a t interval.
        let finite = || s.values.iter().copied().filter(|v| v.is_finite());
        let lo = finite().fold(f64::INFINITY, f64::min);
        let hi = finite().fold(f64::NEG_INFINITY, f64::max);
        return (lo < hi).then_some((lo, hi));
    }
    (s.ci95_half > 0.0).then_some((s.mean - s.ci95_half, s.mean + s.ci95_half))
}

/// What the range marks mean with `reps` replications: the replications' own range below
/// [`crate::report::plots::DOTS_BELOW`], else the 95 % CI of the mean.
fn range_meaning(reps: u32) -> &'static str {
    if (reps as usize) < crate::report::plots::DOTS_BELOW {
        "the replications' range"
    } else {
        "its 95% CI"
    }
}

/// The largest read clat any run shows, ns (0 when none).
fn max_ns(runs: &[RunPlot]) -> f64 {
    runs.iter()
        .flat_map(|r| &r.read_percentiles)
        .map(|b| interval(&b.ns).map_or(b.ns.mean, |(_, hi)| hi))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

/// Read clat (mean over replications, 95 % CI as range marks) against percentile on the
/// nines axis, log latency, one series per run under its short label (flag codes, spelt out
/// below); past seven runs only the first, the best
/// and the worst by read p99.9, the others listed by name.
pub fn nines(data: &PlotData) -> String {
    let top = max_ns(&data.runs);
    let (div, unit) = if top < 1e6 {
        (1e3, "us")
    } else if top < 1e9 {
        (1e6, "ms")
    } else {
        (1e9, "s")
    };
    let labels: Vec<String> = data
        .runs
        .iter()
        .map(|r| crate::report::flags::short_label(&r.label))
        .collect();
    let p999s: Vec<Option<f64>> = data.runs.iter().map(crate::plot::lines::p999).collect();
    let (shown, rest) = match crate::plot::lines::crowd(&p999s) {
        Some((groups, rest)) => (groups.concat(), rest),
        None => ((0..data.runs.len()).collect(), Vec::new()),
    };
    let series = shown
        .iter()
        .map(|&k| Series {
            name: labels[k].clone(),
            points: data.runs[k]
                .read_percentiles
                .iter()
                .map(|b| Point {
                    x: b.p,
                    y: b.ns.mean / div,
                    range: interval(&b.ns).map(|(a, z)| (a / div, z / div)),
                })
                .collect(),
        })
        .collect();
    let reps = match data.replications {
        1 => "1 replication".to_string(),
        n => format!("mean of {n} replications, ':' {}", range_meaning(n)),
    };
    let chart = LineChart::new(
        format!("Read clat percentiles ({reps})"),
        ("percentile (nines axis)", Scale::Nines),
        (format!("read clat, {unit} (log)"), Scale::Log),
        series,
    );
    let mut out = line_chart(&chart);
    if !rest.is_empty() {
        // Each left-out run with its p99.9, so it can still be told from the others.
        let names: Vec<String> = rest
            .iter()
            .map(|&k| match crate::plot::lines::p999(&data.runs[k]) {
                Some(ns) => format!("{}:{}", labels[k], crate::plot::scale::fmt_num(ns / div)),
                None => labels[k].clone(),
            })
            .collect();
        let text = format!(
            "   Drawn: the first run, the 3 best and the 3 worst by read p99.9; not drawn              (name:read p99.9 in {unit}): {}",
            names.join(", ")
        );
        super::wrap_into(&ascii_text(&text), MAX_WIDTH, 3, &mut out);
    }
    let used = crate::report::flags::codes_used(labels.iter().map(String::as_str));
    if !used.is_empty() {
        let key: Vec<String> = used.iter().map(|(c, n)| format!("{c} {n}")).collect();
        let text = format!("   dm-crypt flags: {}", key.join(", "));
        super::wrap_into(&text, MAX_WIDTH, 3, &mut out);
    }
    out
}

/// GFP_ATOMIC failures per run (mean over replications, the 95 % CI cut at 0 as whiskers).
pub fn failures(data: &PlotData) -> String {
    let rows: Vec<Bar> = data
        .runs
        .iter()
        .filter_map(|r| {
            let m = r.memory.as_ref()?;
            Some(Bar {
                label: r.label.clone(),
                value: m.failures.mean,
                range: interval(&m.failures).map(|(a, z)| (a.max(0.0), z)),
            })
        })
        .collect();
    let how = match data.replications {
        1 => "1 replication".to_string(),
        n => format!(
            "mean of {n} reps, |--| {} cut at 0",
            range_meaning(n).trim_start_matches("its ")
        ),
    };
    bars(
        &format!("GFP_ATOMIC failures per run ({how})"),
        &rows,
        MAX_WIDTH,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(mean: f64, ci: f64, values: &[f64]) -> Spread {
        Spread {
            mean,
            stddev: 0.0,
            ci95_half: ci,
            values: values.to_vec(),
        }
    }

    #[test]
    fn a_sweep_table_becomes_a_knee_curve_with_its_marks() {
        use crate::report::sweep::{Crossover, Curve};
        let curve = |policy: &str, mean: &[f64], knee| Curve {
            policy: policy.into(),
            mean: mean.to_vec(),
            half: vec![1.0; mean.len()],
            diff: vec![None; mean.len()],
            knee,
        };
        let c = Curves {
            metric: "read_p999_ms".into(),
            label: "read p99.9".into(),
            unit: "ms".into(),
            axis: "crypt.encrypt_rate".into(),
            axis_unit: "MB/s".into(),
            log: true,
            slice: None,
            values: ["60MB/s", "200MB/s", "600MB/s", "1400MB/s"]
                .map(String::from)
                .to_vec(),
            x: vec![60.0, 200.0, 600.0, 1400.0],
            policies: vec![
                curve("fifo", &[240.0, 60.0, 40.0, 35.0], Some(1)),
                curve("split", &[34.0, 34.0, 50.0, 34.0], None),
            ],
            crossovers: vec![Crossover {
                policy: "split".into(),
                after: 1,
                within_noise: true,
            }],
        };
        let text = knee(&c);
        assert!(
            text.starts_with("Sweep: read p99.9 (mean, ':' 95% CI)\n"),
            "{text}"
        );
        assert!(text.contains("knee of fifo at 200MB/s"), "{text}");
        assert!(text.contains("split crosses fifo (within noise)"), "{text}");
        assert!(
            text.contains("A fifo") && text.contains("B split"),
            "{text}"
        );
        for line in text.lines() {
            assert!(line.is_ascii() && line.len() <= MAX_WIDTH, "{line}");
        }
        assert_eq!(between(100.0, 400.0, true), 200.0);
        assert_eq!(between(100.0, 400.0, false), 250.0);
        assert_eq!(ascii_text("µs ± −"), "us +- -");
    }

    #[test]
    fn few_replications_mark_their_range_and_many_their_interval() {
        assert_eq!(
            interval(&spread(5.0, 9.0, &[4.0, 6.0, 5.0])),
            Some((4.0, 6.0))
        );
        assert_eq!(interval(&spread(5.0, 1.0, &[])), Some((4.0, 6.0)));
        assert_eq!(interval(&spread(5.0, 0.0, &[])), None);
        assert_eq!(interval(&spread(5.0, 3.0, &[5.0, 5.0])), None, "all equal");
        assert_eq!(
            interval(&spread(5.0, 3.0, &[f64::NAN, 2.0, 7.0])),
            Some((2.0, 7.0))
        );
        assert_eq!(range_meaning(3), "the replications' range");
        assert_eq!(range_meaning(10), "its 95% CI");
    }
}
