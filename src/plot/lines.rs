//! Line plots with one series per run: read latency by percentile (on a "nines" axis, with
//! the replications' confidence band) and the CDF of read latency from the pooled bins.

use super::data::{PLOT_PERCENTILES, PercentileBand, PlotData, RunPlot};
use super::style::*;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// The percentiles labelled on the nines axis.
const LABELLED: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// Gap between the plot and a legend column, px.
const LEGEND_GAP: i32 = 14;

/// Band of one percentile in `unit`: (low, mean, high), the low end kept positive for the
/// log axis; `None` when the mean is not positive.
pub(super) fn band_in(b: &PercentileBand, unit: TimeUnit) -> Option<(f64, f64, f64)> {
    let mean = unit.of(b.ns.mean);
    if !(mean > 0.0 && mean.is_finite()) {
        return None;
    }
    if !b.ns.values.is_empty() {
        // Replication dots: the range they span.
        let vs = || {
            b.ns.values
                .iter()
                .map(|&v| unit.of(v))
                .filter(|v| *v > 0.0 && v.is_finite())
        };
        let lo = vs().fold(mean, f64::min);
        let hi = vs().fold(mean, f64::max);
        return Some((lo, mean, hi));
    }
    let half = unit.of(b.ns.ci95_half.max(0.0));
    Some(((mean - half).max(mean / 10.0), mean, mean + half))
}

/// Most runs a line plot draws in colour. With more, it draws the first run, the best
/// [`EACH_END`] and the worst [`EACH_END`] by read p99.9 in colour and the others as thin
/// grey lines, listed by name beside the plot: 32 coloured lines and bands are one brown
/// area, and their legend leaves the page.
pub(super) const MAX_LINES: usize = 7;
/// Runs drawn in colour at each end of the ranking when a plot has more than [`MAX_LINES`].
const EACH_END: usize = 3;

/// A legend heading (none for a plot that draws every run in colour) and its runs, each a
/// position in the plot's runs with its style.
type Group = (Option<&'static str>, Vec<(usize, SeriesStyle)>);

/// The runs of a line plot as drawn: those in colour under legend headings, and the
/// positions of the others, drawn grey.
struct Picked {
    groups: Vec<Group>,
    grey: Vec<usize>,
}

impl Picked {
    /// Every run drawn in colour, with its style.
    fn coloured(&self) -> impl Iterator<Item = (usize, SeriesStyle)> + '_ {
        self.groups.iter().flat_map(|(_, g)| g.iter().copied())
    }
}

/// A run's mean read p99.9, ns (`None` without one).
pub(super) fn p999(r: &RunPlot) -> Option<f64> {
    r.read_percentiles
        .iter()
        .find(|b| (b.p - 99.9).abs() < 1e-9)
        .map(|b| b.ns.mean)
        .filter(|v| v.is_finite())
}

/// Headings of the groups [`crowd`] makes.
pub(super) const CROWD_GROUPS: [&str; 3] = ["first run", "best read p99.9", "worst read p99.9"];

/// For more than [`MAX_LINES`] runs with these read p99.9s (in plot order), the positions
/// drawn in colour by group ([`CROWD_GROUPS`]: the first run, the [`EACH_END`] best and the
/// [`EACH_END`] worst) and the others; `None` when every run can be drawn.
pub(super) fn crowd(p999s: &[Option<f64>]) -> Option<([Vec<usize>; 3], Vec<usize>)> {
    if p999s.len() <= MAX_LINES {
        return None;
    }
    let mut ranked: Vec<(usize, f64)> = (1..p999s.len())
        .filter_map(|k| p999s[k].map(|v| (k, v)))
        .collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    let best: Vec<usize> = ranked.iter().take(EACH_END).map(|x| x.0).collect();
    let worst: Vec<usize> = ranked
        .iter()
        .rev()
        .map(|x| x.0)
        .filter(|k| !best.contains(k))
        .take(EACH_END)
        .collect();
    let shown: Vec<usize> = [0].iter().chain(&best).chain(&worst).copied().collect();
    let rest = (0..p999s.len()).filter(|k| !shown.contains(k)).collect();
    Some(([vec![0], best, worst], rest))
}

/// Which of `runs` (a run's index in the plot data and the run) are drawn in colour: all of
/// them, each in its index's style, up to [`MAX_LINES`]; past that the groups of [`crowd`],
/// in the first [`MAX_LINES`] styles.
fn pick(runs: &[(usize, &RunPlot)]) -> Picked {
    let p999s: Vec<Option<f64>> = runs.iter().map(|(_, r)| p999(r)).collect();
    let Some((groups, grey)) = crowd(&p999s) else {
        let all = runs
            .iter()
            .enumerate()
            .map(|(k, &(i, _))| (k, series_style(i)))
            .collect();
        return Picked {
            groups: vec![(None, all)],
            grey: Vec::new(),
        };
    };
    let mut next = 0;
    let groups = CROWD_GROUPS
        .iter()
        .zip(groups)
        .map(|(title, ks)| {
            let styled = ks
                .into_iter()
                .map(|k| {
                    next += 1;
                    (k, series_style(next - 1))
                })
                .collect();
            (Some(*title), styled)
        })
        .collect();
    Picked { groups, grey }
}

/// The grey of the runs a crowded plot does not draw in colour.
const OTHERS: RGBColor = RGBColor(170, 170, 170);

/// Splits `body` into the plot area and a legend column wide enough for `picked`'s entries
/// (at least 260 px when it lists grey runs, at most a third of the width); returns the plot
/// area and the legend's left edge and width.
fn with_legend_column<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    entries: &[Entry],
    grey: bool,
) -> Drawn<(DrawingArea<DB, Shift>, i32, i32), DB> {
    let bw = body.dim_in_pixel().0 as i32;
    let min = if grey { 260 } else { 0 };
    let lw = legend_width(root, entries)?.max(min).min(bw / 3);
    let (plot, _) = body.split_horizontally(bw - lw - LEGEND_GAP);
    let x = body.get_base_pixel().0 + bw - lw;
    Ok((plot, x, lw))
}

/// The legend of a line plot: `picked`'s coloured runs under their headings, then the grey
/// runs' names; `band` adds the band to each swatch.
fn run_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    w: i32,
    runs: &[(usize, &RunPlot)],
    picked: &Picked,
    band: bool,
) -> Drawn<(), DB> {
    let mut y = y;
    for (title, group) in &picked.groups {
        let entries: Vec<Entry> = group
            .iter()
            .map(|&(k, style)| Entry::new(runs[k].1.label.clone(), Swatch::Line { style, band }))
            .collect();
        y += legend_column(root, (x, y), w, Some(title.unwrap_or("runs")), &entries)? + 6;
    }
    if !picked.grey.is_empty() {
        let names: Vec<&str> = picked
            .grey
            .iter()
            .map(|&k| runs[k].1.label.as_str())
            .collect();
        let title = format!("{} others (grey)", names.len());
        name_list(root, (x, y), w, &title, &names)?;
    }
    Ok(())
}

/// Every entry of `picked`, for sizing the legend.
fn legend_entries(runs: &[(usize, &RunPlot)], picked: &Picked) -> Vec<Entry> {
    picked
        .coloured()
        .map(|(k, style)| {
            let swatch = Swatch::Line { style, band: false };
            Entry::new(runs[k].1.label.clone(), swatch)
        })
        .collect()
}

/// Read clat against percentile, one line per run with markers at the measured
/// percentiles and the 95 % CI of the mean across replications as a translucent band
/// (crowded plots: see [`MAX_LINES`]).
pub(super) fn percentiles<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
) -> Drawn<(), DB> {
    let reps = data.replications as usize;
    let dotted = reps > 1 && reps < crate::report::plots::DOTS_BELOW;
    let banded = reps > 1 && !dotted;
    let note = if banded {
        "line: mean over replications · band: its 95 % confidence interval".to_string()
    } else if dotted {
        format!("line: mean over replications · dots: each of the {reps} replications")
    } else {
        "one replication: no confidence band".to_string()
    };
    let body = frame(root, data, "read completion latency by percentile", &note)?;
    let probe = TimeUnit::for_max(1e6);
    let runs: Vec<(usize, &RunPlot)> = data
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            r.read_percentiles
                .iter()
                .any(|b| band_in(b, probe).is_some())
        })
        .collect();
    if runs.is_empty() {
        return no_data(root, &body, "no run completed a read");
    }
    let picked = pick(&runs);
    let (plot_area, legend_x, legend_w) = with_legend_column(
        root,
        &body,
        &legend_entries(&runs, &picked),
        !picked.grey.is_empty(),
    )?;
    let unit = TimeUnit::for_max(band_range(&runs, probe).1 * probe.ns);
    let chart = percentile_chart(&plot_area, &runs, unit)?;
    let pt = |p: f64, v: f64| chart.backend_coord(&(nines(p), v.log10()));
    let line_of = |r: &RunPlot| -> Vec<(i32, i32)> {
        r.read_percentiles
            .iter()
            .filter_map(|b| band_in(b, unit).map(|(_, m, _)| pt(b.p, m)))
            .collect()
    };
    for &k in &picked.grey {
        polyline(root, &line_of(runs[k].1), OTHERS.to_rgba(), 1, &[])?;
    }
    if banded {
        for (k, st) in picked.coloured() {
            let pts: Vec<(f64, (f64, f64, f64))> = runs[k]
                .1
                .read_percentiles
                .iter()
                .filter_map(|b| band_in(b, unit).map(|v| (b.p, v)))
                .collect();
            let mut poly: Vec<(i32, i32)> = pts.iter().map(|&(p, (_, _, c))| pt(p, c)).collect();
            poly.extend(pts.iter().rev().map(|&(p, (a, _, _))| pt(p, a)));
            fill(root, poly, st.colour.mix(0.16))?;
        }
    }
    for (k, st) in picked.coloured() {
        polyline(root, &line_of(runs[k].1), st.colour.to_rgba(), 3, st.dash)?;
    }
    for (k, st) in picked.coloured() {
        percentile_marks(root, &|p, v| pt(p, v), runs[k].1, st, unit, dotted)?;
    }
    let top = chart.plotting_area().get_pixel_range().1.start;
    run_legend(root, (legend_x, top), legend_w, &runs, &picked, banded)
}

/// A run's markers at its measured percentiles and, `dotted`, each replication's value.
fn percentile_marks<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    pt: &dyn Fn(f64, f64) -> (i32, i32),
    r: &RunPlot,
    st: SeriesStyle,
    unit: TimeUnit,
    dotted: bool,
) -> Drawn<(), DB> {
    for b in &r.read_percentiles {
        if let Some((_, m, _)) = band_in(b, unit) {
            marker(root, st.marker, pt(b.p, m), 6, st.colour)?;
        }
        if !dotted {
            continue;
        }
        for v in b.ns.values.iter().map(|&v| unit.of(v)) {
            if v > 0.0 && v.is_finite() {
                root.draw(&Circle::new(pt(b.p, v), 3, st.colour.stroke_width(2)))?;
            }
        }
    }
    Ok(())
}

/// The log range of `runs`' percentile bands in `unit`: the lowest low end and the highest
/// high end.
fn band_range(runs: &[(usize, &RunPlot)], unit: TimeUnit) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for (_, r) in runs {
        for (a, _, c) in r.read_percentiles.iter().filter_map(|b| band_in(b, unit)) {
            lo = lo.min(a);
            hi = hi.max(c);
        }
    }
    (lo, hi)
}

/// `t`, the ticks of a log axis over `(lo, hi)` drawn `px` pixels tall, with its 2s and 5s
/// turned minor when its labels would stand closer than [`TICK_PX`] and a little: only a plot
/// drawn short (by `qsim serve`, at the size of its box) has so little room.
fn labels_apart(t: Ticks, (lo, hi): (f64, f64), px: f64) -> Ticks {
    let shown = t.major.iter().filter(|&&y| y >= lo && y <= hi).count();
    if shown < 2 || px / (shown - 1) as f64 >= TICK_PX + 4.0 {
        return t;
    }
    let decade = |y: &f64| (y.log10() - y.log10().round()).abs() < 1e-9;
    let (major, demoted): (Vec<f64>, Vec<f64>) = t.major.into_iter().partition(decade);
    if major.iter().filter(|&&y| y >= lo && y <= hi).count() < 2 {
        return Ticks {
            major: major.into_iter().chain(demoted).collect(),
            minor: t.minor,
        };
    }
    let mut minor = t.minor;
    minor.extend(demoted);
    minor.sort_by(f64::total_cmp);
    Ticks { major, minor }
}

/// The percentile chart on `area`, its mesh drawn: a nines x axis from p50 to p99.99 and a
/// log y axis over `runs`' bands in `unit`.
fn percentile_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    runs: &[(usize, &RunPlot)],
    unit: TimeUnit,
) -> Drawn<AxisChart<'a, DB>, DB> {
    let (lo, hi) = band_range(runs, unit);
    let (ylo, yhi, yt) = log_axis(lo, hi);
    // The axis's height less the tick label area and the top margin (below).
    let axis_px = f64::from(area.dim_in_pixel().1) - 66.0 - 8.0;
    let yt = labels_apart(yt, (ylo, yhi), axis_px);
    let x_major: Vec<f64> = LABELLED.iter().map(|&p| nines(p)).collect();
    let x_minor: Vec<f64> = PLOT_PERCENTILES
        .iter()
        .filter(|p| !LABELLED.contains(p))
        .map(|&p| nines(p))
        .collect();
    let x_range = Axis::new(
        nines(50.0) - 0.15,
        nines(99.99) + 0.15,
        Ticks {
            major: x_major,
            minor: x_minor,
        },
    );
    let y_range = Axis::mapped(ylo, yhi, &yt, f64::log10);
    let mut chart = ChartBuilder::on(area)
        .margin_top(8)
        .margin_right(12)
        .x_label_area_size(66)
        .y_label_area_size(100)
        .build_cartesian_2d(x_range, y_range)?;
    let (x_desc, y_desc) = axis_descs(
        area,
        &chart,
        "percentile of reads (axis spaced by nines: 90, 99, 99.9 ...)",
        &format!("read completion latency, {} (log scale)", unit.name),
    )?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|x| nines_label(*x))
        .y_label_formatter(&|y| fmt_num(10f64.powf(*y)))
        .label_style(font(TICK_PX, INK, HPos::Center, VPos::Center))
        .axis_desc_style(font(DESC_PX, INK, HPos::Center, VPos::Center))
        .bold_line_style(INK.mix(0.2))
        .light_line_style(INK.mix(0.07))
        .draw()?;
    Ok(chart)
}

/// Cumulative share of reads (%) at each pooled bin midpoint (ns).
fn cdf_points(bins: &[(u64, u64)]) -> Vec<(f64, f64)> {
    // u128: a file may hold counts whose sum does not fit in u64.
    let total: u128 = bins.iter().map(|&(_, c)| u128::from(c)).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut acc = 0u128;
    bins.iter()
        .filter(|&&(ns, _)| ns > 0)
        .map(|&(ns, c)| {
            acc += u128::from(c);
            (ns as f64, 100.0 * acc as f64 / total as f64)
        })
        .collect()
}

/// Share of reads (%) slower than each pooled bin midpoint (ns): 1 − CDF, the tail. The last
/// bin (nothing slower) is left out, as a log axis cannot show 0.
fn tail_points(bins: &[(u64, u64)]) -> Vec<(f64, f64)> {
    let mut pts = cdf_points(bins);
    pts.retain(|&(_, pc)| pc < 100.0);
    for p in &mut pts {
        p.1 = 100.0 - p.1;
    }
    // Rounding may leave a share of exactly 100 − 100 = 0 for a huge count; drop it.
    pts.retain(|&(_, pc)| pc > 0.0);
    pts
}

/// Points `(ns, %)` read off pooled bins.
type Points = fn(&[(u64, u64)]) -> Vec<(f64, f64)>;

/// A run's index, the run and its points `(ns, %)`.
type Curve<'a> = (usize, &'a RunPlot, Vec<(f64, f64)>);

/// How a distribution plot reads the pooled bins: the CDF on a linear y axis, or the tail
/// (1 − CDF) on a log y axis, where p99.9 and p99.99 are as far apart as p50 and p90.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Distribution {
    Cdf,
    Tail,
}

/// CDF of read clat per run from the histogram pooled over replications, log time axis.
pub(super) fn cdf<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
) -> Drawn<(), DB> {
    distribution(root, data, Distribution::Cdf)
}

/// The tail of read clat per run (share of reads slower than t, log scale) from the pooled
/// histogram, log time axis: a fio percentile table as one picture.
pub(super) fn tail<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
) -> Drawn<(), DB> {
    distribution(root, data, Distribution::Tail)
}

impl Distribution {
    /// The y value drawn for a share: itself (CDF) or its log (tail).
    fn y(self, pc: f64) -> f64 {
        match self {
            Distribution::Cdf => pc,
            Distribution::Tail => pc.log10(),
        }
    }
}

/// One curve on `chart`, from its first bin at 0 % (CDF) or 100 % (tail), x in `unit`, as
/// pixel points.
fn curve_px<DB: DrawingBackend>(
    chart: &AxisChart<'_, DB>,
    pts: &[(f64, f64)],
    kind: Distribution,
    unit: TimeUnit,
) -> Vec<(i32, i32)> {
    let start = match kind {
        Distribution::Cdf => 0.0,
        Distribution::Tail => 100.0,
    };
    let x = |ns: f64| unit.of(ns).log10();
    let mut line: Vec<(i32, i32)> = Vec::with_capacity(pts.len() + 1);
    line.push(chart.backend_coord(&(x(pts[0].0), kind.y(start))));
    line.extend(
        pts.iter()
            .map(|&(ns, pc)| chart.backend_coord(&(x(ns), kind.y(pc)))),
    );
    line
}

/// The curves on `chart`: the grey ones thin, then each coloured one with a marker every
/// ~90 px.
fn draw_curves<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &AxisChart<'_, DB>,
    curves: &[Curve],
    picked: &Picked,
    (kind, unit): (Distribution, TimeUnit),
) -> Drawn<(), DB> {
    let (xr, _) = chart.plotting_area().get_pixel_range();
    for &k in &picked.grey {
        let line = curve_px(chart, &curves[k].2, kind, unit);
        polyline(root, &line, OTHERS.to_rgba(), 1, &[])?;
    }
    for (n, (k, st)) in picked.coloured().enumerate() {
        let line = curve_px(chart, &curves[k].2, kind, unit);
        polyline(root, &line, st.colour.to_rgba(), 3, st.dash)?;
        // Markers every ~90 px along x, staggered per run so they do not sit on each other.
        let mut next = xr.start + 24 + (n as i32 * 17) % 90;
        for &p in &line[1..] {
            if p.0 >= next {
                marker(root, st.marker, p, 6, st.colour)?;
                next = p.0 + 90;
            }
        }
    }
    Ok(())
}

/// The CDF or tail plot (see [`Distribution`]; crowded plots: see [`MAX_LINES`]).
fn distribution<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
    kind: Distribution,
) -> Drawn<(), DB> {
    let note = "pooled over all replications (fio's histogram buckets)";
    let (title, points): (&str, Points) = match kind {
        Distribution::Cdf => ("distribution of read completion latency", cdf_points),
        Distribution::Tail => ("tail of read completion latency (1 − CDF)", tail_points),
    };
    let body = frame(root, data, title, note)?;
    let curves: Vec<Curve> = data
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| (i, r, points(&r.read_clat_bins)))
        .filter(|(_, _, c)| !c.is_empty())
        .collect();
    if curves.is_empty() {
        return no_data(root, &body, "no run completed a read");
    }
    let runs: Vec<(usize, &RunPlot)> = curves.iter().map(|(i, r, _)| (*i, *r)).collect();
    let picked = pick(&runs);
    let grey = !picked.grey.is_empty();
    let entries = legend_entries(&runs, &picked);
    let (plot_area, legend_x, legend_w) = with_legend_column(root, &body, &entries, grey)?;
    let all = || curves.iter().flat_map(|c| c.2.iter());
    let hi_ns = all().map(|p| p.0).fold(0.0, f64::max);
    let unit = TimeUnit::for_max(hi_ns);
    let lo = all().map(|p| unit.of(p.0)).fold(f64::INFINITY, f64::min);
    let (xlo, xhi, xt) = log_axis(lo, unit.of(hi_ns));
    let x_range = Axis::mapped(xlo, xhi, &xt, f64::log10);
    let (y_range, y_desc) = match kind {
        Distribution::Cdf => (
            Axis::new(0.0, 101.0, linear_axis(0.0, 100.0, 10).1),
            "reads completed within that time, %",
        ),
        Distribution::Tail => {
            let least = all().map(|p| p.1).fold(100.0, f64::min);
            let (ylo, _, yt) = log_axis(least, 100.0);
            (
                Axis::mapped(ylo, 100.0, &yt, f64::log10),
                "reads slower than that time, % (log scale)",
            )
        }
    };
    let mut chart = ChartBuilder::on(&plot_area)
        .margin_top(8)
        .margin_right(12)
        .x_label_area_size(66)
        .y_label_area_size(100)
        .build_cartesian_2d(x_range, y_range)?;
    let (x_desc, y_desc) = axis_descs(
        &plot_area,
        &chart,
        &format!("read completion latency, {} (log scale)", unit.name),
        y_desc,
    )?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|x| fmt_num(10f64.powf(*x)))
        .y_label_formatter(&|y| match kind {
            Distribution::Cdf => fmt_num(*y),
            Distribution::Tail => fmt_num(10f64.powf(*y)),
        })
        .label_style(font(TICK_PX, INK, HPos::Center, VPos::Center))
        .axis_desc_style(font(DESC_PX, INK, HPos::Center, VPos::Center))
        .bold_line_style(INK.mix(0.2))
        .light_line_style(INK.mix(0.07))
        .draw()?;

    draw_curves(root, &chart, &curves, &picked, (kind, unit))?;
    let top = chart.plotting_area().get_pixel_range().1.start;
    run_legend(root, (legend_x, top), legend_w, &runs, &picked, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::fixture;

    #[test]
    fn the_tail_is_one_minus_the_cdf_without_its_last_bin() {
        let bins = [(1_000, 90), (2_000, 9), (4_000, 1)];
        let t = tail_points(&bins);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].0, 1_000.0);
        assert!(
            (t[0].1 - 10.0).abs() < 1e-9 && (t[1].1 - 1.0).abs() < 1e-9,
            "{t:?}"
        );
        assert!(tail_points(&[]).is_empty());
        assert!(
            tail_points(&[(5, 3)]).is_empty(),
            "one bin: nothing is slower"
        );
    }

    #[test]
    fn the_band_range_spans_the_lowest_low_and_the_highest_high_end() {
        let data = fixture::without_memory();
        let mut run = data.runs[0].clone();
        let band = |mean_ms: f64, half_ms: f64| {
            let mut b = run.read_percentiles[0].clone();
            b.ns.mean = mean_ms * 1e6;
            b.ns.ci95_half = half_ms * 1e6;
            b
        };
        // 2 ± 0.5 ms; 10 ± 20 ms, whose low end stays at a tenth of the mean for the log
        // axis; a band with no positive mean, left out.
        let bands = vec![band(2.0, 0.5), band(10.0, 20.0), band(0.0, 1.0)];
        run.read_percentiles = bands;
        let (lo, hi) = band_range(&[(0, &run)], TimeUnit::for_max(1e6));
        assert!(
            (lo - 1.0).abs() < 1e-12 && (hi - 30.0).abs() < 1e-12,
            "{lo}..{hi}"
        );
        assert_eq!(
            band_range(&[], TimeUnit::for_max(1e6)),
            (f64::INFINITY, 0.0)
        );
    }
}
