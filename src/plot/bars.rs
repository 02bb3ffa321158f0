//! Horizontal bar charts with one row per run (labels of any length fit on the left):
//! where a read's time went (stacked by stage), and the memory-pressure figures
//! (GFP_ATOMIC failures stacked by order, kswapd congestion_wait per class) and any registry
//! metric marked for plotting, with their 95 % confidence intervals across replications.

use super::data::{PlotData, Spread};
use super::style::*;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

type HChart<'a, DB> = AxisChart<'a, DB>;

/// Half the thickness of a single bar, in rows.
const HALF_BAR: f64 = 0.3;
/// Half a stacked bar's height in rows ([`stages`]).
const STACK_HALF_BAR: f64 = 0.42;
/// Widest the run-label area may get, px.
const MAX_LABEL_W: i32 = 320;

/// The y value of row `k` of `n` (the first run at the top).
fn row_y(k: usize, n: usize) -> f64 {
    (n - 1 - k) as f64
}

/// Run labels in `px` type cut to fit the label area, and the area's width.
fn run_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
    px: f64,
) -> Drawn<(Vec<String>, i32), DB> {
    let style = font(px, INK, HPos::Right, VPos::Center);
    let mut w = 0;
    let mut labels = Vec::new();
    for r in &data.runs {
        let l = fit_text(root, &r.label, &style, MAX_LABEL_W)?;
        w = w.max(text_width(root, &l, &style)?);
        labels.push(l);
    }
    Ok((labels, w + 22))
}

/// Tick and row-label size for `n` rows on an area `height` px tall: [`TICK_PX`], or less
/// when the rows are closer than that, so 32 run labels do not run into each other.
fn row_px(n: usize, height: i32) -> f64 {
    let pitch = f64::from(height - 66) / n.max(1) as f64;
    (pitch * 0.8).clamp(11.0, TICK_PX)
}

/// A chart on `area` with one row per label (first at the top) and a linear x axis from 0
/// to at least `xmax`, with `x_desc` under it; labels in `px` type.
fn hbar_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    labels: &[String],
    (label_w, px): (i32, f64),
    xmax: f64,
    x_desc: &str,
) -> Drawn<HChart<'a, DB>, DB> {
    let n = labels.len().max(1);
    let (hi, xt) = linear_axis(0.0, xmax, 6);
    let x_range = Axis::new(0.0, hi, xt);
    let y_range = Axis::new(
        -0.5,
        n as f64 - 0.5,
        Ticks {
            major: (0..n).map(|k| k as f64).collect(),
            minor: Vec::new(),
        },
    );
    let mut chart = ChartBuilder::on(area)
        .margin_top(4)
        .margin_right(BAR_MARGIN_RIGHT)
        .x_label_area_size(62)
        .y_label_area_size(label_w)
        .build_cartesian_2d(x_range, y_range)?;
    let x_desc = fit_desc(
        area,
        x_desc,
        &font(DESC_PX, INK, HPos::Center, VPos::Center),
        chart.plotting_area().dim_in_pixel().0 as i32,
    )?;
    let row_label = |y: &f64| {
        let k = n as i64 - 1 - y.round() as i64;
        usize::try_from(k)
            .ok()
            .and_then(|k| labels.get(k))
            .cloned()
            .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(x_desc)
        .x_label_formatter(&|x| fmt_num(*x))
        .y_label_formatter(&row_label)
        .label_style(font(px, INK, HPos::Center, VPos::Center))
        .axis_desc_style(font(DESC_PX, INK, HPos::Center, VPos::Center))
        .bold_line_style(INK.mix(0.2))
        .light_line_style(INK.mix(0.07))
        .draw()?;
    Ok(chart)
}

/// Half the thickness of a bar in rows: `rows` of a row, but at most `max_px` pixels.
fn bar_half<DB: DrawingBackend>(chart: &HChart<'_, DB>, rows: f64, max_px: f64) -> f64 {
    let px_per_row =
        f64::from((chart.backend_coord(&(0.0, 0.0)).1 - chart.backend_coord(&(0.0, 1.0)).1).abs());
    if px_per_row <= 0.0 {
        rows
    } else {
        rows.min(max_px / px_per_row)
    }
}

/// The largest x that `s` reaches as drawn: the CI's top, or its largest replication dot.
fn reach(s: &Spread) -> f64 {
    s.values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(s.mean + s.ci95_half, f64::max)
}

/// The pixel x range a CI whisker (or the replication dots) of `s` covers on any row.
fn whisker_px<DB: DrawingBackend>(chart: &HChart<'_, DB>, s: &Spread) -> Option<(i32, i32)> {
    if !s.values.is_empty() {
        let px = |v: f64| chart.backend_coord(&(v.max(0.0), 0.0)).0;
        let finite = || s.values.iter().copied().filter(|v| v.is_finite());
        let lo = finite().fold(f64::INFINITY, f64::min);
        let hi = finite().fold(f64::NEG_INFINITY, f64::max);
        return (lo <= hi).then(|| (px(lo) - DOT_R - 2, px(hi) + DOT_R + 2));
    }
    (s.ci95_half > 0.0).then(|| {
        (
            chart
                .backend_coord(&((s.mean - s.ci95_half).max(0.0), 0.0))
                .0
                - 2,
            chart.backend_coord(&(s.mean + s.ci95_half, 0.0)).0 + 2,
        )
    })
}

/// Draws a bar segment from `x0` to `x1` on row `y` ± `half`, with a white edge so stacked
/// segments stay apart, and `label` inside it when it fits and stays clear of the pixel x
/// range `avoid` (a whisker drawn over the bar).
#[allow(clippy::too_many_arguments)]
fn segment<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &HChart<'_, DB>,
    y: f64,
    half: f64,
    (x0, x1): (f64, f64),
    colour: RGBColor,
    label: &str,
    avoid: Option<(i32, i32)>,
) -> Drawn<(), DB> {
    let a = chart.backend_coord(&(x0, y + half));
    let b = chart.backend_coord(&(x1, y - half));
    if b.0 <= a.0 {
        return Ok(());
    }
    rect(root, a, b, colour.filled())?;
    rect(root, a, b, WHITE.stroke_width(1))?;
    if label.is_empty() {
        return Ok(());
    }
    // Inside the bar: a white number on a dark segment cannot spill onto the white page
    // (it would read as cut in half).
    let px = SMALL_PX.min(f64::from((b.1 - a.1).abs() - 1));
    if px < 10.0 {
        return Ok(());
    }
    let style = font(px, text_on(colour), HPos::Center, VPos::Center);
    let w = text_width(root, label, &style)?;
    let mid = (a.0 + b.0) / 2;
    let (l, r) = (mid - w / 2 - 2, mid + w / 2 + 2);
    let clear = avoid.is_none_or(|(p, q)| r < p || l > q);
    if w + 12 <= b.0 - a.0 && clear {
        text(root, label, (mid, (a.1 + b.1) / 2), &style)?;
    }
    Ok(())
}

/// Radius of a replication dot, px.
const DOT_R: i32 = 5;

/// Draws the 95 % CI of `s` on row `y` as a horizontal error bar with caps, or, with fewer
/// than [`crate::report::plots::DOTS_BELOW`] replications, each replication as a dot
/// (hollow, so dots that coincide still read as one value); returns the pixel x of the
/// rightmost mark.
fn error_bar<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &HChart<'_, DB>,
    y: f64,
    s: &Spread,
) -> Drawn<i32, DB> {
    if !s.values.is_empty() {
        let mut right = chart.backend_coord(&(s.mean.max(0.0), y)).0;
        for v in s.values.iter().copied().filter(|v| v.is_finite()) {
            let p = chart.backend_coord(&(v.max(0.0), y));
            root.draw(&Circle::new(p, DOT_R, WHITE.filled()))?;
            root.draw(&Circle::new(p, DOT_R, INK.stroke_width(2)))?;
            right = right.max(p.0 + DOT_R);
        }
        return Ok(right);
    }
    let lo = chart.backend_coord(&((s.mean - s.ci95_half).max(0.0), y));
    let hi = chart.backend_coord(&(s.mean + s.ci95_half, y));
    if s.ci95_half <= 0.0 {
        return Ok(hi.0);
    }
    let pen = INK.stroke_width(2);
    root.draw(&PathElement::new(vec![lo, hi], pen))?;
    for x in [lo.0, hi.0] {
        root.draw(&PathElement::new(vec![(x, lo.1 - 7), (x, lo.1 + 7)], pen))?;
    }
    Ok(hi.0)
}

/// A label just right of pixel x `x_end` on row `y`.
fn end_label<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &HChart<'_, DB>,
    x_end: i32,
    y: f64,
    label: &str,
    colour: RGBColor,
) -> Drawn<(), DB> {
    let yc = chart.backend_coord(&(0.0, y)).1;
    let style = font(SMALL_PX, colour, HPos::Left, VPos::Center);
    text(root, label, (x_end + 6, yc), &style)
}

/// Room a label of about `chars` characters needs right of the longest bar, as a factor of
/// the axis length (the bars get the rest of the width), on a chart `area_w` px wide whose run
/// labels take `label_w`: 1.2 % of the axis a character, or more where the axis is short (a
/// plot drawn narrow for `qsim serve`'s page), as the labels keep their pixel size.
fn label_room(chars: usize, area_w: u32, label_w: i32) -> f64 {
    let axis = f64::from(area_w) - f64::from(label_w) - f64::from(BAR_MARGIN_RIGHT);
    let label = 7.5 * chars as f64 + 6.0;
    let needed = if axis > 2.0 * label {
        axis / (axis - label)
    } else {
        2.0
    };
    (1.0 + 0.012 * chars as f64).max(needed)
}

/// The margin right of a bar chart's axis, px.
const BAR_MARGIN_RIGHT: u32 = 16;

/// The stages any run spent time in, in pipeline order as first met.
fn stage_names(data: &PlotData) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in &data.runs {
        for (s, ns) in &r.read_stages {
            if *ns > 0.0 && !names.contains(s) {
                names.push(s.clone());
            }
        }
    }
    names
}

/// Below this share of the longest bar a stage's segment is under about two pixels wide.
const THIN_SHARE: f64 = 0.002;

/// Stage `s`'s legend label: its name, and when no run spends a visible share of the longest
/// bar (`max_total` ns) in it, the most any run spends, so the legend never names a colour
/// the reader cannot find.
fn thin_stage_label(data: &PlotData, s: &str, max_total: f64) -> String {
    let most = data.runs.iter().map(|r| stage_ns(r, s)).fold(0.0, f64::max);
    if most < THIN_SHARE * max_total {
        format!("{s} (≤ {}, too thin to see)", fmt_ns(most))
    } else {
        s.to_string()
    }
}

/// A run's mean time in stage `s`, ns (0 when the run has no such stage or a negative one).
fn stage_ns(r: &super::data::RunPlot, s: &str) -> f64 {
    r.read_stages
        .iter()
        .find(|(n, _)| n == s)
        .map_or(0.0, |(_, ns)| ns.max(0.0))
}

/// Mean time per stage per run, stacked left to right in pipeline order, in the unit the
/// longest bar needs ([`TimeUnit`]).
pub(super) fn stages<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
) -> Drawn<(), DB> {
    let names = stage_names(data);
    let totals: Vec<f64> = data
        .runs
        .iter()
        .map(|r| names.iter().map(|s| stage_ns(r, s)).sum())
        .collect();
    let max_total = totals.iter().copied().fold(0.0, f64::max);
    let unit = TimeUnit::for_max(max_total);
    let note = format!(
        "mean over every read of every replication; numbers in {}",
        unit.name
    );
    let body = frame(root, data, "where a read's time went, by stage", &note)?;
    if names.is_empty() {
        return no_data(root, &body, "no run completed a read");
    }
    let entries: Vec<Entry> = names
        .iter()
        .enumerate()
        .map(|(j, s)| {
            let label = thin_stage_label(data, s, max_total);
            Entry::new(label, Swatch::Box(fill_colour(j)))
        })
        .collect();
    let (x0, y0) = body.get_base_pixel();
    let bw = body.dim_in_pixel().0 as i32;
    let lh = legend_row(root, (x0 + 4, y0), bw - 8, &entries)?;
    let (_, area) = body.split_vertically(lh + 10);

    let px = row_px(data.runs.len(), area.dim_in_pixel().1 as i32);
    let (labels, label_w) = run_labels(root, data, px)?;
    let chart = hbar_chart(
        &area,
        &labels,
        (label_w, px),
        unit.of(max_total) * label_room(10, area.dim_in_pixel().0, label_w),
        &format!(
            "mean time per read, {} (stages stacked in pipeline order)",
            unit.name
        ),
    )?;
    let n = data.runs.len();
    // Stacked bars fill more of their row than the others, so a segment's number fits
    // inside it at 32 rows.
    let half = bar_half(&chart, STACK_HALF_BAR, 32.0);
    for (k, r) in data.runs.iter().enumerate() {
        let y = row_y(k, n);
        if totals[k] <= 0.0 {
            let x = chart.backend_coord(&(0.0, y)).0;
            end_label(root, &chart, x, y, "no reads", GREY)?;
            continue;
        }
        let mut at = 0.0;
        for (j, s) in names.iter().enumerate() {
            let v = unit.of(stage_ns(r, s));
            if v > 0.0 {
                let colour = fill_colour(j);
                segment(
                    root,
                    &chart,
                    y,
                    half,
                    (at, at + v),
                    colour,
                    &fmt_num(v),
                    None,
                )?;
            }
            at += v;
        }
        let x_end = chart.backend_coord(&(at, y)).0;
        let total = format!("{} {}", fmt_num(unit.of(totals[k])), unit.name);
        end_label(root, &chart, x_end, y, &total, INK)?;
    }
    Ok(())
}

/// A panel heading in bold at pixel `(x, y)` (top left); returns the height used.
fn heading<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    room: i32,
    s: &str,
) -> Drawn<i32, DB> {
    let style = bold(DESC_PX, INK, HPos::Left, VPos::Center);
    text(root, &fit_desc(root, s, &style, room)?, (x, y + 14), &style)?;
    Ok(30)
}

/// GFP_ATOMIC failures per run stacked by order with the CI of the total (top panel), and
/// kswapd's time in congestion_wait per class with CIs (bottom panel).
pub(super) fn failures<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
) -> Drawn<(), DB> {
    let note = bars_note(data);
    let body = frame(
        root,
        data,
        "GFP_ATOMIC failures and kswapd congestion waits",
        &note,
    )?;
    let rows = run_labels(root, data, TICK_PX)?;
    let (bw, bh) = body.dim_in_pixel();
    let (first, second) = if side_by_side(root.dim_in_pixel()) {
        let (left, right) = body.split_horizontally(bw as i32 / 2);
        // The right panel starts 14 px down (its gap when stacked): the left one too.
        (left.margin(14, 0, 0, 0), right.margin(0, 0, 12, 0))
    } else {
        body.split_vertically(bh as i32 / 2 + 10)
    };
    failures_by_order(root, &first, data, &rows)?;
    congestion_waits(root, &second, data, &rows)
}

/// Whether the failures plot lays its two panels side by side rather than one above the
/// other: on a page at least 1.6 times as wide as tall (a projector's box). The files'
/// 1200 × 800 stack them.
fn side_by_side((w, h): (u32, u32)) -> bool {
    f64::from(w) >= 1.6 * f64::from(h)
}

/// Fewest px of height the failures plot's two stacked panels need to keep their rows and
/// labels apart.
const STACKED_MIN_H: u32 = 700;

/// The size to draw the failures plot at for a box of `size` (`qsim serve`): the box itself
/// when its panels go side by side ([`side_by_side`]); otherwise as wide, and tall enough
/// for two stacked panels, at least [`STACKED_MIN_H`] and nine tenths of the width, at most
/// 1600 px (the page lets that figure grow downwards).
pub(super) fn failures_size((w, h): (u32, u32)) -> (u32, u32) {
    if side_by_side((w, h)) {
        return (w, h);
    }
    let tall = h.max(STACKED_MIN_H).max(w * 9 / 10).min(1600);
    (w, tall.max(h))
}

/// One registry metric per run: the mean over replications as a bar, its 95 % CI as a whisker.
pub(super) fn metric<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
    m: &crate::report::metrics::Metric,
) -> Drawn<(), DB> {
    let note = bars_note(data);
    let body = frame(root, data, m.label, &note)?;
    let (labels, label_w) = run_labels(root, data, TICK_PX)?;
    let value = |r: &super::data::RunPlot| {
        r.metrics
            .iter()
            .find(|x| x.key == m.key)
            .map(|x| x.value.clone())
            .filter(|v| v.mean.is_finite() && v.ci95_half.is_finite())
    };
    let xmax = data
        .runs
        .iter()
        .filter_map(value)
        .map(|v| reach(&v))
        .fold(0.0, f64::max);
    let xmax = if xmax > 0.0 { xmax } else { 1.0 };
    let unit = if m.unit.is_empty() {
        String::new()
    } else {
        format!(", {}", m.unit)
    };
    let desc = format!("{} per replication{unit}", m.label);
    let chart = hbar_chart(
        &body,
        &labels,
        (label_w, TICK_PX),
        xmax * label_room(14, body.dim_in_pixel().0, label_w),
        &desc,
    )?;
    let half = bar_half(&chart, HALF_BAR, 30.0);
    let n = data.runs.len();
    for (k, r) in data.runs.iter().enumerate() {
        let y = row_y(k, n);
        let Some(v) = value(r) else {
            let x = chart.backend_coord(&(0.0, y)).0;
            end_label(root, &chart, x, y, "not measured", GREY)?;
            continue;
        };
        let avoid = whisker_px(&chart, &v);
        segment(
            root,
            &chart,
            y,
            half,
            (0.0, v.mean.max(0.0)),
            fill_colour(0),
            "",
            avoid,
        )?;
        let x_bar = chart.backend_coord(&(v.mean.max(0.0), y)).0;
        let x_ci = error_bar(root, &chart, y, &v)?;
        end_label(
            root,
            &chart,
            x_bar.max(x_ci),
            y,
            &fmt_pm(v.mean, v.ci95_half),
            INK,
        )?;
    }
    Ok(())
}

/// Whether the plot draws replication dots rather than CI whiskers (fewer than
/// [`crate::report::plots::DOTS_BELOW`] replications per run).
fn dots(data: &PlotData) -> bool {
    data.replications > 1 && (data.replications as usize) < crate::report::plots::DOTS_BELOW
}

/// The legend entry of a CI whisker, or of a replication dot.
fn ci_entry(data: &PlotData) -> Entry {
    if dots(data) {
        return Entry::new("one replication", Swatch::Mark(Marker::Circle, INK));
    }
    Entry::new(
        "95 % CI",
        Swatch::Rule {
            colour: INK,
            dash: &[],
        },
    )
}

/// The plot's footnote on what the bars and their marks mean.
fn bars_note(data: &PlotData) -> String {
    if dots(data) {
        format!(
            "bars: mean per replication · dots: each of the {} replications (too few for a \
             useful 95 % interval)",
            data.replications
        )
    } else {
        "bars: mean per replication · whiskers: 95 % confidence interval of the mean".into()
    }
}

/// The allocation orders any run failed at, ascending.
fn failed_orders(data: &PlotData) -> Vec<u32> {
    let mut orders: Vec<u32> = data
        .runs
        .iter()
        .filter_map(|r| r.memory.as_ref())
        .flat_map(|m| m.failures_by_order.iter().map(|&(o, _)| o))
        .collect();
    orders.sort_unstable();
    orders.dedup();
    orders
}

/// The top panel of [`failures`] on `top`: failures per run stacked by order, with the CI of
/// the total. `(labels, label_w)` are the rows' labels and their area's width.
fn failures_by_order<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    top: &DrawingArea<DB, Shift>,
    data: &PlotData,
    (labels, label_w): &(Vec<String>, i32),
) -> Drawn<(), DB> {
    let orders = failed_orders(data);
    let order_colour = |o: u32| fill_colour(orders.iter().position(|&x| x == o).unwrap_or(0));
    let (tx, ty) = top.get_base_pixel();
    let tw = top.dim_in_pixel().0 as i32;
    let mut used = heading(
        root,
        (tx + 4, ty),
        tw - 4,
        "GFP_ATOMIC allocation failures per replication, stacked by allocation order",
    )?;
    let mut entries: Vec<Entry> = orders
        .iter()
        .map(|&o| Entry::new(format!("order {o}"), Swatch::Box(order_colour(o))))
        .collect();
    entries.push(ci_entry(data));
    used += legend_row(root, (tx + 4, ty + used), tw - 8, &entries)?;
    let (_, area) = top.split_vertically(used + 4);
    let max_fail = data
        .runs
        .iter()
        .filter_map(|r| r.memory.as_ref())
        .map(|m| m.failures.mean + m.failures.ci95_half)
        .fold(0.0, f64::max)
        .max(1.0);
    let chart = hbar_chart(
        &area,
        labels,
        (*label_w, TICK_PX),
        max_fail * label_room(14, area.dim_in_pixel().0, *label_w),
        "failed GFP_ATOMIC allocations per replication",
    )?;
    let half = bar_half(&chart, HALF_BAR, 30.0);
    let n = data.runs.len();
    for (k, r) in data.runs.iter().enumerate() {
        let y = row_y(k, n);
        let Some(m) = &r.memory else {
            let x = chart.backend_coord(&(0.0, y)).0;
            end_label(root, &chart, x, y, "no memory model", GREY)?;
            continue;
        };
        let avoid = whisker_px(&chart, &m.failures);
        let mut at = 0.0;
        for (o, s) in &m.failures_by_order {
            let o = *o;
            if s.mean > 0.0 {
                let (colour, label) = (order_colour(o), fmt_num(s.mean));
                segment(
                    root,
                    &chart,
                    y,
                    half,
                    (at, at + s.mean),
                    colour,
                    &label,
                    avoid,
                )?;
                at += s.mean;
            }
        }
        let x_bar = chart.backend_coord(&(at, y)).0;
        let x_ci = error_bar(root, &chart, y, &m.failures)?;
        let label = fmt_pm(m.failures.mean, m.failures.ci95_half);
        end_label(root, &chart, x_bar.max(x_ci), y, &label, INK)?;
    }
    Ok(())
}

/// The bottom panel of [`failures`] on `bottom`: kswapd's time in congestion_wait per run,
/// SYNC and ASYNC side by side, with CIs.
fn congestion_waits<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    bottom: &DrawingArea<DB, Shift>,
    data: &PlotData,
    (labels, label_w): &(Vec<String>, i32),
) -> Drawn<(), DB> {
    let classes = [("SYNC", fill_colour(0)), ("ASYNC", fill_colour(1))];
    let (bx, by) = bottom.get_base_pixel();
    let bw = bottom.dim_in_pixel().0 as i32;
    let mut used = heading(
        root,
        (bx + 4, by + 14),
        bw - 4,
        "kswapd time in congestion_wait per replication, by queue class",
    )? + 14;
    let mut entries: Vec<Entry> = classes
        .iter()
        .map(|&(c, col)| Entry::new(c, Swatch::Box(col)))
        .collect();
    entries.push(ci_entry(data));
    used += legend_row(root, (bx + 4, by + used), bw - 8, &entries)?;
    let (_, area) = bottom.split_vertically(used + 4);
    let max_s = data
        .runs
        .iter()
        .filter_map(|r| r.memory.as_ref())
        .flat_map(|m| m.kswapd_cwait_s.iter().map(reach))
        .fold(0.0, f64::max);
    let max_s = if max_s > 0.0 { max_s } else { 1.0 };
    let chart = hbar_chart(
        &area,
        labels,
        (*label_w, TICK_PX),
        max_s * label_room(14, area.dim_in_pixel().0, *label_w),
        "seconds in congestion_wait per replication",
    )?;
    let half = bar_half(&chart, 0.18, 16.0);
    let n = data.runs.len();
    for (k, r) in data.runs.iter().enumerate() {
        let y = row_y(k, n);
        let Some(m) = &r.memory else {
            let x = chart.backend_coord(&(0.0, y)).0;
            end_label(root, &chart, x, y, "no memory model", GREY)?;
            continue;
        };
        for (c, ((_, colour), s)) in classes.iter().zip(&m.kswapd_cwait_s).enumerate() {
            // SYNC above the row centre, ASYNC below.
            let yc = y + if c == 0 { half + 0.01 } else { -half - 0.01 };
            segment(root, &chart, yc, half, (0.0, s.mean), *colour, "", None)?;
            let x_bar = chart.backend_coord(&(s.mean, yc)).0;
            let x_ci = error_bar(root, &chart, yc, s)?;
            // A class kswapd never waited on gets no label: "0 s" beside every run is noise,
            // unless both classes are zero and the row would say nothing at all.
            let other = &m.kswapd_cwait_s[1 - c];
            if s.mean != 0.0 || (c == 1 && other.mean == 0.0) {
                let label = format!("{} s", fmt_pm(s.mean, s.ci95_half));
                end_label(root, &chart, x_bar.max(x_ci), yc, &label, INK)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::fixture;

    #[test]
    fn stages_keep_pipeline_order_as_first_met_and_skip_idle_ones() {
        let mut data = fixture::without_memory();
        data.runs.truncate(2);
        data.runs[0].read_stages = vec![("a".into(), 0.0), ("b".into(), 5e6)];
        data.runs[1].read_stages = vec![("c".into(), 1e6), ("b".into(), 2e6), ("a".into(), 3e6)];
        assert_eq!(stage_names(&data), ["b", "c", "a"]);
        assert_eq!(stage_ns(&data.runs[0], "b"), 5e6);
        assert_eq!(stage_ns(&data.runs[0], "a"), 0.0);
        assert_eq!(stage_ns(&data.runs[0], "c"), 0.0, "a stage the run lacks");
        data.runs[0].read_stages[1].1 = -1.0;
        assert_eq!(
            stage_ns(&data.runs[0], "b"),
            0.0,
            "a negative time counts as none"
        );
        for r in &mut data.runs {
            r.read_stages.clear();
        }
        assert!(stage_names(&data).is_empty());
    }

    #[test]
    fn a_stage_too_thin_to_see_says_so_in_the_legend() {
        let mut data = fixture::without_memory();
        data.runs.truncate(2);
        data.runs[0].read_stages = vec![("hop".into(), 1e3), ("disk".into(), 8e6)];
        data.runs[1].read_stages = vec![("hop".into(), 2e3), ("disk".into(), 6e6)];
        assert_eq!(
            thin_stage_label(&data, "hop", 8.002e6),
            "hop (≤ 2 µs, too thin to see)"
        );
        assert_eq!(thin_stage_label(&data, "disk", 8.002e6), "disk");
    }

    #[test]
    fn failed_orders_are_sorted_and_distinct_across_runs() {
        let mut data = fixture::with_memory();
        assert_eq!(failed_orders(&data), [0, 1, 3]);
        data.runs.extend(fixture::five_variants().runs);
        assert_eq!(failed_orders(&data), [0, 1, 2, 3]);
        for r in &mut data.runs {
            r.memory = None;
        }
        assert!(failed_orders(&data).is_empty());
    }
}
