//! The flag comparison (`flags`, or `flags-<variant>`): one row per dm-crypt flag combination,
//! with its paired ratio to the default table on read p99.9 (blue; below 1 is faster) and on
//! total throughput (vermillion; above 1 is more), each as a bar from 1 with its 95 %
//! confidence interval as a whisker. The default table sits on the line at 1.

use super::data::PlotData;
use super::scale::fmt_num;
use super::style::*;
use crate::report::flags::{FlagPlot, code_of};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The x range of every ratio and whisker, 1 included, padded by 5 %.
fn x_range(f: &FlagPlot) -> (f64, f64) {
    let all = f.rows.iter().flat_map(|r| [&r.read_p999, &r.throughput]);
    super::scale::interval_span(1.0, all.flatten(), 1e-3)
}

/// Draws the flag comparison `f`.
pub(super) fn flags<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
    f: &FlagPlot,
) -> Drawn<(), DB> {
    let what = match &f.variant {
        Some(v) => format!("dm-crypt flags against the default, variant {v}"),
        None => "dm-crypt flags against the default".to_string(),
    };
    let note = "paired ratio to dm-crypt · blue: read p99.9 (lower is better) · vermillion: \
                total MiB/s · whisker: 95 % CI";
    let body = frame(root, data, &what, note)?;
    let n = f.rows.len();
    if n == 0 {
        return no_data(root, &body, "no flagged tables");
    }
    let (x0, x1) = x_range(f);
    let names: Vec<String> = f
        .rows
        .iter()
        .map(|r| clip_chars(&code_of(&r.policy), 28))
        .collect();
    let mut chart = ChartBuilder::on(&body)
        .margin(12)
        .x_label_area_size(64)
        .y_label_area_size(200)
        .build_cartesian_2d(x0..x1, 0.0..n as f64)?;
    let row = |v: f64| n - 1 - (v.floor().max(0.0) as usize).min(n - 1);
    chart
        .configure_mesh()
        .x_desc("ratio to dm-crypt (flag codes under the title)")
        .x_label_formatter(&|v| fmt_num(*v))
        .y_labels(n * 2 + 1)
        .y_label_formatter(&|v| {
            if (v.fract() - 0.5).abs() < 1e-6 {
                names[row(*v)].clone()
            } else {
                String::new()
            }
        })
        .label_style((FONT, if n > 16 { SMALL_PX } else { TICK_PX }))
        .axis_desc_style((FONT, SMALL_PX))
        .disable_y_mesh()
        .draw()?;
    for (j, r) in f.rows.iter().enumerate() {
        let y = (n - 1 - j) as f64;
        let slots = [
            (r.read_p999, y + 0.52, y + 0.88, OI_BLUE),
            (r.throughput, y + 0.12, y + 0.48, OI_VERMILLION),
        ];
        for (q, lo, hi, colour) in slots {
            let Some(iv) = q else {
                continue;
            };
            if !(iv.estimate.is_finite() && iv.low.is_finite() && iv.high.is_finite()) {
                continue;
            }
            super::tornado::interval_bar(&mut chart, 1.0, (lo, hi), iv, colour)?;
        }
    }
    let axis = PathElement::new(vec![(1.0, 0.0), (1.0, n as f64)], INK.stroke_width(1));
    chart.draw_series(std::iter::once(axis))?;
    Ok(())
}
