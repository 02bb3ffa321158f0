//! qsim's own plain-text pictures of a run, from its [`PlotData`] alone (so `qsim run --ascii`
//! and `qsim plot --ascii RESULTS.json` print the same): the "nines" plot of read clat per
//! run and, when the scenario models memory, the GFP_ATOMIC failures per run.

use super::{Bar, LineChart, MAX_WIDTH, Point, Scale, Series, bars, line_chart};
use crate::plot::data::{PlotData, RunPlot, Spread};

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
    out
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
/// nines axis, log latency, one series per run.
pub fn nines(data: &PlotData) -> String {
    let top = max_ns(&data.runs);
    let (div, unit) = if top < 1e6 {
        (1e3, "us")
    } else if top < 1e9 {
        (1e6, "ms")
    } else {
        (1e9, "s")
    };
    let series = data
        .runs
        .iter()
        .map(|r| Series {
            name: r.label.clone(),
            points: r
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
    line_chart(&chart)
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
