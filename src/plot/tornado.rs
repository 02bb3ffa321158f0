//! The tornado chart of a sensitivity study: one row per knob, largest effect on top, with
//! the paired effect of the knob's low value (blue) and high value (vermillion) on the study's
//! metric as bars from zero, each with its 95 % confidence interval as a whisker. Each bar is
//! labelled with the knob's value past its end, and the axis names the base's
//! metric value the effects are measured from.

use super::data::PlotData;
use super::scale::fmt_num;
use super::style::*;
use crate::report::sweep::Ranking;
use crate::stats::compare::Interval;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// The x range of every effect and whisker, zero included, padded by 5 %, and by a further
/// 30 % on each side a bar reaches, for the knob values written past the bars' ends.
fn x_range(r: &Ranking) -> (f64, f64) {
    let all = r.knobs.iter().flat_map(|k| k.effect.iter().flatten());
    let (lo, hi) = super::scale::interval_span(0.0, all.clone(), 1e-9);
    let room = 0.3 * (hi - lo);
    let left = all.clone().any(|iv| iv.estimate < 0.0);
    let right = all.clone().any(|iv| iv.estimate >= 0.0);
    (
        if left { lo - room } else { lo },
        if right { hi + room } else { hi },
    )
}

/// A horizontal bar from `base` to `iv`'s estimate between heights `lo` and `hi`, in `colour`,
/// with `iv`'s interval as a whisker across its middle: the tornado's and the flags chart's
/// mark.
pub(super) fn interval_bar<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    base: f64,
    (lo, hi): (f64, f64),
    iv: Interval,
    colour: RGBColor,
) -> Drawn<(), DB> {
    let bar = Rectangle::new([(base, lo), (iv.estimate, hi)], colour.mix(0.8).filled());
    chart.draw_series(std::iter::once(bar))?;
    let mid = (lo + hi) / 2.0;
    let whisker = PathElement::new(vec![(iv.low, mid), (iv.high, mid)], INK.stroke_width(2));
    chart.draw_series(std::iter::once(whisker))?;
    Ok(())
}

/// The knob's `value` as written, just past the outer end of its bar and whisker (`iv`), at
/// height `y`; [`x_range`] leaves room for it.
fn value_label<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    value: &str,
    iv: Interval,
    y: f64,
) -> Drawn<(), DB> {
    let (end, h, dx) = if iv.estimate >= 0.0 {
        (iv.estimate.max(iv.high), HPos::Left, 6)
    } else {
        (iv.estimate.min(iv.low), HPos::Right, -6)
    };
    let (x, py) = chart.backend_coord(&(end, y));
    let area = chart.plotting_area().strip_coord_spec();
    let (bx, by) = area.get_base_pixel();
    let style = font(SMALL_PX, INK, h, VPos::Center);
    area.draw(&Text::new(
        clip_chars(value, 24),
        (x + dx - bx, py - by),
        style,
    ))
}

/// Draws the tornado chart of `r`.
pub(super) fn tornado<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
    r: &Ranking,
) -> Drawn<(), DB> {
    let unit = if r.unit.is_empty() {
        String::new()
    } else {
        format!(" ({})", r.unit)
    };
    let what = format!("sensitivity of {}{unit} under {}", r.label, r.policy);
    let note = "bar: paired effect vs base (blue: low value, vermillion: high) · whisker: 95 % CI";
    let body = frame(root, data, &what, note)?;
    let n = r.knobs.len();
    if n == 0 {
        return no_data(root, &body, "no knobs");
    }
    let (x0, x1) = x_range(r);
    // The label area as wide as the longest knob path needs (up to 40 % of the page), so
    // `crypt.encrypt_rate+crypt.decrypt_rate` is not cut.
    let names: Vec<String> = r.knobs.iter().map(|k| clip_chars(&k.knob, 48)).collect();
    let style = font(TICK_PX, INK, HPos::Right, VPos::Center);
    let mut widest = 0;
    for n in &names {
        widest = widest.max(text_width(root, n, &style)?);
    }
    let label_w = (widest + 30).clamp(200, body.dim_in_pixel().0 as i32 * 2 / 5);
    let mut chart = ChartBuilder::on(&body)
        .margin(12)
        .x_label_area_size(64)
        .y_label_area_size(label_w as u32)
        .build_cartesian_2d(x0..x1, 0.0..n as f64)?;
    let row = |v: f64| n - 1 - (v.floor().max(0.0) as usize).min(n - 1);
    chart
        .configure_mesh()
        .x_desc(format!(
            "effect on {}{unit} from the base's {}",
            r.label,
            super::scale::fmt_pm(r.base.estimate, r.base.high - r.base.estimate)
        ))
        .x_label_formatter(&|v| fmt_num(*v))
        .y_labels(n * 2 + 1)
        .y_label_formatter(&|v| {
            if (v.fract() - 0.5).abs() < 1e-6 {
                names[row(*v)].clone()
            } else {
                String::new()
            }
        })
        .label_style((FONT, TICK_PX))
        .axis_desc_style((FONT, DESC_PX))
        .disable_y_mesh()
        .draw()?;
    for (j, k) in r.knobs.iter().enumerate() {
        let y = (n - 1 - j) as f64;
        let slots = [
            (y + 0.52, y + 0.88, OI_BLUE),
            (y + 0.12, y + 0.48, OI_VERMILLION),
        ];
        for ((e, value), (lo, hi, colour)) in k.effect.iter().zip(&k.values).zip(slots) {
            if let Some(iv) = *e {
                interval_bar(&mut chart, 0.0, (lo, hi), iv, colour)?;
                value_label(&mut chart, value, iv, (lo + hi) / 2.0)?;
            }
        }
    }
    let axis = PathElement::new(vec![(0.0, 0.0), (0.0, n as f64)], INK.stroke_width(1));
    chart.draw_series(std::iter::once(axis))?;
    Ok(())
}
