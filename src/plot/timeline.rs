//! One run's replication-0 timeline as stacked panels sharing the time axis: free pages
//! (min–max band per bucket) against the watermarks and the GFP_ATOMIC floor with failures
//! marked; kswapd's state as a coloured band; the dm-crypt queue depths; dirty and
//! writeback pages. A panel whose series are absent is left out (no memory model: only
//! the queues).
//!
//! Series are found by the names the model's recorder gives them: gauge `free pages`,
//! count `GFP_ATOMIC failures`, states `kswapd`, gauges `crypt queue <name>`, gauges
//! `dirty pages` and `writeback pages`; levels are drawn on the free-pages panel.

use super::data::{PlotData, RunPlot};
use super::style::*;
use crate::stats::series::{Count, Gauge, Grid, Level, States, Timeline};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

type Chart<'a, DB> = AxisChart<'a, DB>;

/// Width of the run-independent y label area of every panel, px (equal so panels align).
const Y_LABEL_W: i32 = 104;
/// Height of the time axis under the last panel, px.
const X_AXIS_H: i32 = 62;
/// Gap between panels, px.
const PANEL_GAP: i32 = 6;

/// Colours of the gauges of one panel, in order: dark and light alternate, so two series
/// stay apart in grayscale.
pub(super) const GAUGE_COLOURS: [RGBColor; 4] = [OI_BLUE, OI_ORANGE, TOL_WINE, OI_SKY];

/// At most this many crypt queues get a panel each; more share one.
const QUEUE_PANELS: usize = 3;

/// The free-pages panel's series.
struct Free<'t> {
    gauge: &'t Gauge,
    levels: &'t [Level],
    failures: Option<&'t Count>,
    /// Top of the axis before rounding to a tick; may cut off a peak far above the
    /// watermarks (`peak` is then its value).
    ymax: f64,
    peak: Option<f64>,
}

/// What a panel shows.
enum Panel<'t> {
    /// Free pages against the levels, with failure marks.
    Free(Free<'t>),
    /// kswapd's states as shares of each bucket.
    Kswapd(&'t States),
    /// Gauges on one linear axis from 0 to `ymax`.
    Gauges {
        gauges: Vec<(&'t Gauge, RGBColor)>,
        ymax: f64,
        desc: &'static str,
        weight: f64,
    },
}

impl Panel<'_> {
    /// Share of the panels' height.
    fn weight(&self) -> f64 {
        match self {
            Panel::Free(_) => 3.4,
            Panel::Kswapd(_) => 0.9,
            Panel::Gauges { weight, .. } => *weight,
        }
    }
}

/// Whether a gauge recorded anything.
fn visited(g: &Gauge) -> bool {
    g.max.iter().any(|v| !v.is_nan())
}

/// Largest level of any of `gs`.
fn max_of(gs: &[&Gauge]) -> f64 {
    gs.iter()
        .flat_map(|g| g.max.iter().copied())
        .filter(|v| !v.is_nan())
        .fold(0.0, f64::max)
}

/// Top of the free-pages axis: room for the levels and the usual maxima, cutting off a
/// start-up peak (free pages before memory fills) that would squash the watermarks into
/// the bottom pixels. Returns the top and, when something is cut, the peak.
fn free_axis(g: &Gauge, levels: &[Level]) -> (f64, Option<f64>) {
    let mut maxes: Vec<f64> = g.max.iter().copied().filter(|v| !v.is_nan()).collect();
    maxes.sort_by(f64::total_cmp);
    let peak = maxes.last().copied().unwrap_or(0.0);
    let top_level = levels.iter().map(|l| l.value).fold(0.0, f64::max);
    let full = peak.max(top_level) * 1.06;
    if top_level <= 0.0 || maxes.is_empty() {
        return (full.max(1.0), None);
    }
    let usual = maxes[(maxes.len() - 1) * 9 / 10];
    let cap = (top_level * 2.5).max(usual * 1.15);
    if peak > cap {
        (cap, Some(peak))
    } else {
        (full, None)
    }
}

/// The panels `tl` has data for, top to bottom.
fn panels(tl: &Timeline) -> Vec<Panel<'_>> {
    let mut out = Vec::new();
    if let Some(g) = tl.find_gauge("free pages").filter(|g| visited(g)) {
        let (ymax, peak) = free_axis(g, &tl.levels);
        out.push(Panel::Free(Free {
            gauge: g,
            levels: &tl.levels,
            failures: tl.counts.iter().find(|c| c.name == "GFP_ATOMIC failures"),
            ymax,
            peak,
        }));
    }
    if let Some(s) = tl.states.iter().find(|s| s.name == "kswapd") {
        out.push(Panel::Kswapd(s));
    }
    let queues: Vec<&Gauge> = tl
        .gauges
        .iter()
        .filter(|g| g.name.starts_with("crypt queue") && visited(g))
        .collect();
    // One panel per queue on a shared scale (overlaid, jagged queue lengths hide each
    // other), unless there are too many.
    let qmax = max_of(&queues).max(1.0) * 1.06;
    if queues.len() <= QUEUE_PANELS {
        let weight = if queues.len() == 1 { 2.4 } else { 1.5 };
        for (k, g) in queues.iter().enumerate() {
            out.push(Panel::Gauges {
                gauges: vec![(*g, GAUGE_COLOURS[k % GAUGE_COLOURS.len()])],
                ymax: qmax,
                desc: "requests",
                weight,
            });
        }
    } else {
        out.push(Panel::Gauges {
            gauges: queues
                .iter()
                .enumerate()
                .map(|(k, g)| (*g, GAUGE_COLOURS[k % GAUGE_COLOURS.len()]))
                .collect(),
            ymax: qmax,
            desc: "requests",
            weight: 2.4,
        });
    }
    let pages: Vec<&Gauge> = tl
        .gauges
        .iter()
        .filter(|g| (g.name == "dirty pages" || g.name == "writeback pages") && visited(g))
        .collect();
    if !pages.is_empty() {
        out.push(Panel::Gauges {
            ymax: max_of(&pages).max(1.0) * 1.06,
            gauges: pages
                .iter()
                .enumerate()
                .map(|(k, g)| (*g, GAUGE_COLOURS[k % GAUGE_COLOURS.len()]))
                .collect(),
            desc: "pages",
            weight: 2.0,
        });
    }
    out
}

/// Bucket `i`'s edges in seconds (in floating point, so no index overflows).
fn edges(grid: &Grid, i: usize) -> (f64, f64) {
    let at = |i: usize| (grid.start_ns as f64 + i as f64 * grid.bucket_ns as f64) / 1e9;
    (at(i), at(i + 1))
}

/// The buckets that hold data: up to the last one any series recorded something in. A run
/// that ended before the grid's end (a finite job) leaves the rest empty, and the time axis
/// stops where the run did instead of drawing empty time to the horizon.
pub(super) fn used_buckets(tl: &Timeline) -> usize {
    let n = tl.grid.buckets;
    let last_gauge = tl
        .gauges
        .iter()
        .filter_map(|g| g.max.iter().take(n).rposition(|v| !v.is_nan()));
    let last_count = tl
        .counts
        .iter()
        .filter_map(|c| c.counts.iter().take(n).rposition(|&k| k > 0));
    let last_state = tl.states.iter().filter_map(|s| {
        s.time_ns
            .iter()
            .take(n)
            .rposition(|row| row.iter().any(|&t| t > 0))
    });
    last_gauge
        .chain(last_count)
        .chain(last_state)
        .max()
        .map_or(n, |last| last + 1)
}

/// `v` cut into the axis `[0, ymax]`; NaN (a bucket without data) stays NaN, a gap.
pub(super) fn cut(v: f64, ymax: f64) -> f64 {
    if v.is_nan() { v } else { v.max(0.0).min(ymax) }
}

/// Drops repeated points and the middle of straight horizontal or vertical runs. A middle
/// point is dropped only when it lies between its neighbours: a spike that goes up and comes
/// back down within one pixel column (a bucket narrower than a pixel) is a turn, not a run,
/// and is kept.
fn simplify(pts: Vec<(i32, i32)>) -> Vec<(i32, i32)> {
    let between = |a: i32, b: i32, c: i32| (a <= b && b <= c) || (c <= b && b <= a);
    let mut out: Vec<(i32, i32)> = Vec::with_capacity(pts.len());
    for p in pts {
        if out.last() == Some(&p) {
            continue;
        }
        let n = out.len();
        if n >= 2 {
            let (a, b) = (out[n - 2], out[n - 1]);
            let vertical = a.0 == b.0 && b.0 == p.0 && between(a.1, b.1, p.1);
            let horizontal = a.1 == b.1 && b.1 == p.1 && between(a.0, b.0, p.0);
            if vertical || horizontal {
                out[n - 1] = p;
                continue;
            }
        }
        out.push(p);
    }
    out
}

/// Runs of buckets whose values are not NaN: `[start, end)` index ranges.
pub(super) fn runs_of(v: &[f64]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, x) in v.iter().enumerate() {
        match (x.is_nan(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, v.len()));
    }
    out
}

/// Which side of a gauge's band its solid line follows.
#[derive(Clone, Copy)]
enum Edge {
    /// The highest level in each bucket.
    Max,
    /// The lowest level in each bucket.
    Min,
}

/// Buckets gathered into one pixel column of a timeline: the time they span and the highest
/// and lowest level among them.
#[derive(Clone, Copy)]
struct Column {
    /// The pixel column the buckets start in.
    px: i32,
    /// The first bucket's start, s.
    t0: f64,
    /// The last bucket's end, s.
    t1: f64,
    /// The highest level in the column.
    hi: f64,
    /// The lowest level in the column.
    lo: f64,
}

/// Buckets `a..b` gathered into the pixel columns they start in. A bucket narrower than a
/// pixel then shares a column with its neighbours and its peak stays visible, where a step
/// line drawn bucket by bucket would go up and back down inside one column and lose it.
fn columns<DB: DrawingBackend>(
    chart: &Chart<'_, DB>,
    grid: &Grid,
    g: &Gauge,
    (a, b): (usize, usize),
) -> Vec<Column> {
    let mut out: Vec<Column> = Vec::new();
    for i in a..b {
        let (t0, t1) = edges(grid, i);
        let px = chart.backend_coord(&(t0, 0.0)).0;
        match out.last_mut() {
            Some(c) if c.px == px => {
                c.t1 = t1;
                c.hi = c.hi.max(g.max[i]);
                c.lo = c.lo.min(g.min[i]);
            }
            _ => out.push(Column {
                px,
                t0,
                t1,
                hi: g.max[i],
                lo: g.min[i],
            }),
        }
    }
    out
}

/// Draws a gauge as its min–max band (translucent) with the `edge` side as a solid step line,
/// one step per pixel column, values cut into `[0, ymax]`; buckets without data (NaN) are
/// gaps in both, never drawn at the axis' top or bottom.
fn draw_gauge<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    grid: &Grid,
    g: &Gauge,
    colour: RGBColor,
    edge: Edge,
    ymax: f64,
) -> Drawn<(), DB> {
    let n = g.min.len().min(g.max.len()).min(grid.buckets);
    let both: Vec<f64> = (0..n)
        .map(|i| {
            if g.min[i].is_nan() || g.max[i].is_nan() {
                f64::NAN
            } else {
                g.max[i]
            }
        })
        .collect();
    let cut = |v: f64| cut(v, ymax);
    for run in runs_of(&both) {
        let cols = columns(chart, grid, g, run);
        let mut poly = Vec::with_capacity(4 * cols.len());
        for c in &cols {
            poly.push(chart.backend_coord(&(c.t0, cut(c.hi))));
            poly.push(chart.backend_coord(&(c.t1, cut(c.hi))));
        }
        for c in cols.iter().rev() {
            poly.push(chart.backend_coord(&(c.t1, cut(c.lo))));
            poly.push(chart.backend_coord(&(c.t0, cut(c.lo))));
        }
        fill(root, simplify(poly), colour.mix(0.3))?;
        let mut line = Vec::with_capacity(2 * cols.len());
        for c in &cols {
            let y = cut(match edge {
                Edge::Max => c.hi,
                Edge::Min => c.lo,
            });
            line.push(chart.backend_coord(&(c.t0, y)));
            line.push(chart.backend_coord(&(c.t1, y)));
        }
        polyline(root, &simplify(line), colour.to_rgba(), 2, &[])?;
    }
    Ok(())
}

/// A legend swatch for a gauge drawn in `colour`.
fn gauge_swatch(colour: RGBColor) -> Swatch {
    Swatch::Band {
        style: SeriesStyle {
            colour,
            dash: &[],
            marker: Marker::Circle,
        },
    }
}

/// A level's label in the right column: its name (cut to 24 characters) and value.
fn level_label(l: &Level) -> String {
    format!("{} {}", clip_chars(&l.name, 24), fmt_num(l.value))
}

/// The style of a reference level, by its name (others by position).
fn level_style(name: &str, i: usize) -> (RGBColor, &'static [f64], u32) {
    match name {
        "high" => (OI_GREEN, &[14.0, 5.0, 3.0, 5.0], 2),
        "low" => (OI_ORANGE, &[4.0, 4.0], 2),
        "min" => (OI_PURPLE, &[12.0, 6.0], 2),
        "GFP_ATOMIC floor" => (INK, &[], 2),
        _ => (GREY, [&[8.0, 4.0][..], &[2.0, 3.0][..]][i % 2], 2),
    }
}

/// The colour of a kswapd state, by name (others by position).
fn state_colour(name: &str, i: usize) -> RGBColor {
    match name {
        "asleep" => RGBColor(215, 215, 215),
        "reclaiming" => OI_ORANGE,
        "congestion_wait" => OI_BLUE,
        "nap" => OI_SKY,
        _ => fill_colour(i + 3),
    }
}

/// Legend entries shown above a panel.
fn panel_entries(p: &Panel<'_>) -> Vec<Entry> {
    match p {
        Panel::Free(Free {
            gauge, failures, ..
        }) => {
            let label = format!("{} (line: lowest per bucket)", gauge.name);
            let mut e = vec![Entry::new(label, gauge_swatch(GAUGE_COLOURS[0]))];
            if let Some(c) = failures {
                let label = match c.total() {
                    0 => "no GFP_ATOMIC failures".to_string(),
                    n => format!("buckets with GFP_ATOMIC failures ({n} failures)"),
                };
                e.push(Entry::new(
                    label,
                    Swatch::Mark(Marker::TriangleDown, OI_VERMILLION),
                ));
            }
            e
        }
        Panel::Kswapd(s) => s
            .states
            .iter()
            .enumerate()
            .map(|(k, n)| {
                Entry::new(
                    format!("{} {}", s.name, n.replace('_', " ")),
                    Swatch::Box(state_colour(n, k)),
                )
            })
            .collect(),
        Panel::Gauges { gauges, .. } => gauges
            .iter()
            .map(|&(g, colour)| {
                Entry::new(
                    format!("{} (line: highest per bucket)", g.name),
                    gauge_swatch(colour),
                )
            })
            .collect(),
    }
}

/// Replication 0 of `run` over time.
pub(super) fn timeline<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
    run: &RunPlot,
) -> Drawn<(), DB> {
    // Replication 0 only: the report's maxima (`crypt queue: max=117`) are over every
    // replication, so the picture says which one it shows.
    let what = match data.replications {
        0 | 1 => format!("{} over time", run.label),
        n => format!("{} over time (replication 0 of {n})", run.label),
    };
    let Some(tl) = run.timeline.as_ref() else {
        let body = frame(root, data, &what, "")?;
        return no_data(root, &body, "no timeline was recorded for this run");
    };
    let grid = tl.grid;
    let mut note = format!(
        "bands: lowest to highest level per {} bucket",
        fmt_ns(grid.bucket_ns as f64)
    );
    if data.replications > 1 {
        note.push_str("; the report's max spans all replications");
    }
    let body = frame(root, data, &what, &note)?;
    let panels = panels(tl);
    if panels.is_empty() {
        return no_data(root, &body, "the timeline holds no series to draw");
    }

    let right = level_column_width(root, &panels)?;
    let (bw, bh) = body.dim_in_pixel();
    let (bw, bh) = (bw as i32, bh as i32);
    let (bx, by) = body.get_base_pixel();
    let chart_w = bw - right.min(bw / 3);

    let headers: Vec<(Vec<Entry>, i32)> = panels
        .iter()
        .map(|p| {
            let e = panel_entries(p);
            let h = legend_row_height(root, chart_w - Y_LABEL_W, &e)?;
            Ok((e, h))
        })
        .collect::<Drawn<_, DB>>()?;
    let fixed: i32 = headers.iter().map(|(_, h)| h + PANEL_GAP).sum::<i32>() + X_AXIS_H;
    let total_w: f64 = panels.iter().map(Panel::weight).sum();
    let free_h = (bh - fixed).max(40 * panels.len() as i32);

    let (t0, t1) = (edges(&grid, 0).0, edges(&grid, used_buckets(tl) - 1).1);
    let (_, xt) = linear_axis(t0, t1, 10);

    let mut y = by;
    let last = panels.len() - 1;
    for (pi, (p, (entries, hh))) in panels.iter().zip(&headers).enumerate() {
        legend_row(root, (bx + Y_LABEL_W, y), chart_w - Y_LABEL_W, entries)?;
        y += hh;
        let mut h = (free_h as f64 * p.weight() / total_w).round() as i32;
        if pi == last {
            h += X_AXIS_H;
        }
        let area = body.clone().shrink((0, y - by), (chart_w, h));
        y += h + PANEL_GAP;
        let x = Axis::new(t0, t1, xt.clone());
        let (chart, yhi) = panel_chart(&area, p, x, h, pi == last)?;
        match p {
            Panel::Free(f) => draw_free(root, &chart, &grid, (t0, t1), f, yhi)?,
            Panel::Kswapd(s) => draw_states(root, &chart, &grid, s)?,
            Panel::Gauges { gauges, .. } => {
                for &(g, colour) in gauges {
                    draw_gauge(root, &chart, &grid, g, colour, Edge::Max, yhi)?;
                }
            }
        }
    }
    Ok(())
}

/// Width of the right column that holds the free-pages panel's level labels, px.
fn level_column_width<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    panels: &[Panel<'_>],
) -> Drawn<i32, DB> {
    let label_style = font(SMALL_PX, INK, HPos::Left, VPos::Center);
    let mut right = 16;
    for p in panels {
        if let Panel::Free(Free { levels, .. }) = p {
            for l in levels.iter() {
                right = right.max(text_width(root, &level_label(l), &label_style)? + 34);
            }
        }
    }
    Ok(right)
}

/// The top of panel `p`'s y axis before rounding to a tick, and its description.
fn panel_y(p: &Panel<'_>) -> (f64, &'static str) {
    match p {
        Panel::Free(f) => (f.ymax, "free pages"),
        Panel::Kswapd(_) => (1.0, "kswapd"),
        Panel::Gauges { ymax, desc, .. } => (*ymax, *desc),
    }
}

/// The chart of panel `p` on `area` (`h` px high) over time axis `x`, its mesh drawn, the
/// time axis labelled only under the `last` panel; returns it with the top of its y axis.
fn panel_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    p: &Panel<'_>,
    x: Axis,
    h: i32,
    last: bool,
) -> Drawn<(Chart<'a, DB>, f64), DB> {
    let (ymax, y_desc) = panel_y(p);
    let (yhi, yt) = if matches!(p, Panel::Kswapd(_)) {
        (
            1.0,
            Ticks {
                major: vec![],
                minor: vec![],
            },
        )
    } else {
        linear_axis(0.0, ymax, if h > 150 { 4 } else { 3 })
    };
    let y_range = Axis::new(0.0, yhi, yt);
    let mut chart = ChartBuilder::on(area)
        .x_label_area_size(if last { X_AXIS_H } else { 0 })
        .y_label_area_size(Y_LABEL_W)
        .build_cartesian_2d(x, y_range)?;
    {
        let mut mesh = chart.configure_mesh();
        mesh.y_desc(y_desc)
            .x_label_formatter(&|x| fmt_num(*x))
            .y_label_formatter(&|y| fmt_num(*y))
            .label_style(font(TICK_PX, INK, HPos::Center, VPos::Center))
            .axis_desc_style(font(DESC_PX - 2.0, INK, HPos::Center, VPos::Center))
            .bold_line_style(INK.mix(0.18))
            .light_line_style(INK.mix(0.06));
        if last {
            mesh.x_desc("simulated time, s");
        }
        mesh.draw()?;
    }
    Ok((chart, yhi))
}

/// The free-pages panel: band, levels labelled in the right column, failure marks.
fn draw_free<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    grid: &Grid,
    (t0, t1): (f64, f64),
    f: &Free<'_>,
    ymax: f64,
) -> Drawn<(), DB> {
    let (g, levels) = (f.gauge, f.levels);
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    // Levels first, so the band and the marks stay on top.
    let mut ys = Vec::new();
    for (i, l) in levels.iter().enumerate() {
        let (colour, dash, w) = level_style(&l.name, i);
        let a = chart.backend_coord(&(t0, l.value));
        let b = chart.backend_coord(&(t1, l.value));
        polyline(root, &[a, b], colour.to_rgba(), w, dash)?;
        ys.push(a.1);
    }
    draw_gauge(root, chart, grid, g, GAUGE_COLOURS[0], Edge::Min, ymax)?;
    if let Some(c) = f.failures {
        for (i, &n) in c.counts.iter().take(grid.buckets).enumerate() {
            if n == 0 {
                continue;
            }
            // A rug along the bottom of the panel, clear of the band.
            let (x0, x1) = edges(grid, i);
            let x = chart.backend_coord(&((x0 + x1) / 2.0, 0.0)).0;
            marker(
                root,
                Marker::TriangleDown,
                (x, yr.end - 7),
                5,
                OI_VERMILLION,
            )?;
        }
    }
    // Say where the cut-off peak is and how high it went.
    if let Some(p) = f.peak {
        let i = g.max.iter().position(|&v| v == p).unwrap_or_default();
        let (x0, x1) = edges(grid, i);
        let x = chart.backend_coord(&((x0 + x1) / 2.0, 0.0)).0;
        let s = format!("↑ off scale: peak {}", fmt_num(p.round()));
        let left = x < (xr.start + xr.end) / 2;
        let h = if left { HPos::Left } else { HPos::Right };
        let style = font(SMALL_PX, INK, h, VPos::Center);
        let tx = if left { x + 8 } else { x - 8 };
        text(root, &s, (tx, yr.start + 14), &style)?;
    }
    // Level labels in the right column, pushed apart, with leaders to their lines.
    let style = font(SMALL_PX, INK, HPos::Left, VPos::Center);
    let placed = spread_labels(&ys, 19, yr.start + 6, yr.end - 6);
    for (i, l) in levels.iter().enumerate() {
        let (colour, _, _) = level_style(&l.name, i);
        let lx = xr.end + 22;
        root.draw(&PathElement::new(
            vec![(xr.end, ys[i]), (xr.end + 8, ys[i]), (lx - 4, placed[i])],
            colour.stroke_width(2),
        ))?;
        text(root, &level_label(l), (lx, placed[i]), &style)?;
    }
    Ok(())
}

/// kswapd's states as stacked shares of each bucket; equal neighbouring buckets merged.
fn draw_states<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    grid: &Grid,
    s: &States,
) -> Drawn<(), DB> {
    let w = grid.bucket_ns as f64;
    let rows = s.time_ns.len().min(grid.buckets);
    let mut i = 0;
    while i < rows {
        let mut j = i + 1;
        while j < rows && s.time_ns[j] == s.time_ns[i] {
            j += 1;
        }
        let x0 = edges(grid, i).0;
        let x1 = edges(grid, j - 1).1;
        let mut at = 0.0;
        // A row longer than the state names (not from qsim) has nothing to name the rest.
        for (k, (&t, name)) in s.time_ns[i].iter().zip(&s.states).enumerate() {
            if t == 0 || at >= 1.0 {
                continue;
            }
            let share = (t as f64 / w).min(1.0 - at);
            let a = chart.backend_coord(&(x0, at + share));
            let b = chart.backend_coord(&(x1, at));
            rect(
                root,
                a,
                (b.0.max(a.0 + 1), b.1),
                state_colour(name, k).filled(),
            )?;
            at += share;
        }
        i = j;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::fixture;

    #[test]
    fn panels_come_top_to_bottom_with_their_axes() {
        let data = fixture::with_memory();
        let tl = data.runs[0].timeline.as_ref().unwrap();
        let got: Vec<&str> = panels(tl).iter().map(|p| panel_y(p).1).collect();
        assert_eq!(got, ["free pages", "kswapd", "requests", "pages"]);
        let p = panels(tl);
        assert_eq!(panel_y(&p[1]).0, 1.0, "kswapd's states are shares");
        // Without a memory model only the queues are left, one panel each (up to three).
        let data = fixture::without_memory();
        let tl = data.runs[1].timeline.as_ref().unwrap();
        let got: Vec<&str> = panels(tl).iter().map(|p| panel_y(p).1).collect();
        assert_eq!(got, ["requests", "requests"]);
    }

    #[test]
    fn simplify_keeps_a_spike_inside_one_pixel_column_and_drops_straight_runs() {
        // A step line at 1 (y = 50 px) with one bucket at 3 (y = 10 px) narrower than a
        // pixel: the path goes up and back down at x = 7. Dropping the up-stroke as the middle
        // of a vertical run would hide the peak (two-queue's timeline lost a crypt-queue
        // bucket at 3 requests this way).
        let pts = vec![(5, 50), (7, 50), (7, 10), (7, 10), (7, 50), (9, 50)];
        assert_eq!(simplify(pts), [(5, 50), (7, 50), (7, 10), (7, 50), (9, 50)]);
        // Straight runs lose their middle points, in both directions.
        let pts = vec![(0, 5), (1, 5), (2, 5), (2, 6), (2, 9), (3, 9)];
        assert_eq!(simplify(pts), [(0, 5), (2, 5), (2, 9), (3, 9)]);
        let pts = vec![(4, 9), (4, 6), (4, 2), (3, 2), (0, 2)];
        assert_eq!(simplify(pts), [(4, 9), (4, 2), (0, 2)]);
    }
}
