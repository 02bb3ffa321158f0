//! The knee plot of a sweep: one metric against the swept value, one line per policy (the
//! mean over replications) with its 95 % confidence band, the knee of each line ringed and
//! each crossover of a policy with the first marked by a grey vertical line between the two
//! values where their paired difference changes sign (definitions: `docs/sweeps.md`). A log
//! range gets a log x axis.

use super::data::PlotData;
use super::scale::{fmt_num, linear_axis, log_axis};
use super::style::*;
use crate::report::sweep::Curves;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

/// The x coordinate of value `x` (its log10 on a log axis).
fn xpos(c: &Curves, x: f64) -> f64 {
    if c.log { x.log10() } else { x }
}

/// The y range of every band, padded by 5 %.
fn y_range(c: &Curves) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for p in &c.policies {
        for (m, h) in p.mean.iter().zip(&p.half) {
            let h = if h.is_finite() { *h } else { 0.0 };
            if m.is_finite() {
                lo = lo.min(m - h);
                hi = hi.max(m + h);
            }
        }
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.01).max(1e-9);
    (lo - pad, hi + pad)
}

/// Draws the knee plot of `c`.
pub(super) fn knee<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
    c: &Curves,
) -> Drawn<(), DB> {
    let unit = if c.unit.is_empty() {
        String::new()
    } else {
        format!(" ({})", c.unit)
    };
    let at = c
        .slice
        .as_ref()
        .map(|s| format!(" at {s}"))
        .unwrap_or_default();
    let axis = super::scale::axis_name(&c.axis);
    let what = format!("{}{unit} by {axis}{at}", c.label);
    let note =
        "line: mean · band: 95 % CI · ring: knee · grey line: crossover with the first policy";
    let body = frame(root, data, &what, note)?;
    let xs: Vec<f64> = c.x.iter().map(|&x| xpos(c, x)).collect();
    let (x0, x1) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if !(x0.is_finite() && x1 > x0) {
        return no_data(root, &body, "fewer than two swept values");
    }
    // The project's tick rules (1-2-5 on a log axis), as the other plots have.
    let x_axis = if c.log {
        let (lo, hi, ticks) = log_axis(10f64.powf(x0), 10f64.powf(x1));
        Axis::mapped(lo, hi, &ticks, f64::log10)
    } else {
        let pad = (x1 - x0) * 0.03;
        Axis::new(x0 - pad, x1 + pad, linear_axis(x0 - pad, x1 + pad, 6).1)
    };
    let (y0, y1) = y_range(c);
    let log = c.log;
    let x_desc = if c.axis_unit.is_empty() {
        axis.clone()
    } else {
        format!("{axis} ({})", c.axis_unit)
    };
    let mut chart = ChartBuilder::on(&body)
        .margin(12)
        .x_label_area_size(64)
        .y_label_area_size(96)
        .build_cartesian_2d(x_axis, y0..y1)?;
    chart
        .configure_mesh()
        .x_desc(clip_chars(&x_desc, 90))
        .y_desc(format!("{}{unit}", c.label))
        .x_label_formatter(&|v| fmt_num(if log { 10f64.powf(*v) } else { *v }))
        .y_label_formatter(&|v| fmt_num(*v))
        .label_style((FONT, TICK_PX))
        .axis_desc_style((FONT, DESC_PX))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for x in &c.crossovers {
        let xm = (xs[x.after] + xs[x.after + 1]) / 2.0;
        let dash = PathElement::new(vec![(xm, y0), (xm, y1)], GREY.mix(0.7).stroke_width(2));
        chart.draw_series(std::iter::once(dash))?;
    }
    for (i, p) in c.policies.iter().enumerate() {
        policy_curve(&mut chart, &xs, i, p)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(GREY)
        .label_font((FONT, LEGEND_PX))
        .draw()?;
    Ok(())
}

/// One policy's band, line, points and knee ring.
fn policy_curve<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<Axis, RangedCoordf64>>,
    xs: &[f64],
    i: usize,
    p: &crate::report::sweep::Curve,
) -> Drawn<(), DB> {
    let st = series_style(i);
    let pts: Vec<(f64, f64, f64)> = (0..xs.len())
        .filter(|&k| p.mean[k].is_finite())
        .map(|k| {
            let h = if p.half[k].is_finite() {
                p.half[k]
            } else {
                0.0
            };
            (xs[k], p.mean[k], h)
        })
        .collect();
    let mut poly: Vec<(f64, f64)> = pts.iter().map(|&(x, m, h)| (x, m + h)).collect();
    poly.extend(pts.iter().rev().map(|&(x, m, h)| (x, m - h)));
    chart.draw_series(std::iter::once(Polygon::new(poly, st.colour.mix(0.16))))?;
    let colour = st.colour;
    chart
        .draw_series(LineSeries::new(
            pts.iter().map(|&(x, m, _)| (x, m)),
            colour.stroke_width(3),
        ))?
        .label(p.policy.clone())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3)));
    chart.draw_series(
        pts.iter()
            .map(|&(x, m, _)| Circle::new((x, m), 4, colour.filled())),
    )?;
    if let Some(k) = p.knee.filter(|&k| p.mean[k].is_finite()) {
        let ring = Circle::new((xs[k], p.mean[k]), 12, colour.stroke_width(3));
        chart.draw_series(std::iter::once(ring))?;
    }
    Ok(())
}
