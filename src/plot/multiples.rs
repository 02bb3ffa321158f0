//! Small multiples: one panel per run, the run's read latency by percentile drawn thick over
//! every other run's in light grey, with the first run dashed for reference, on the same
//! axes in every panel.
//!
//! A line plot draws at most [`MAX_LINES`](super::lines::MAX_LINES) runs in colour; past
//! that it draws the first, best and worst runs and lists the others in grey, where no one
//! grey line can be told from another. This picture, written as `percentiles-each` only then,
//! gives each of those runs (the 32 of `--flags all`) its own panel under its own name, so
//! any run can be found and compared with the first and with the crowd.

use super::data::{PlotData, RunPlot};
use super::lines::band_in;
use super::style::*;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// Most panels one picture holds; further runs are named in the note as left out.
pub(super) const MAX_PANELS: usize = 48;

/// Most panel columns: 8 panels of about 130 px fill the 1200 px page.
const MAX_COLS: usize = 8;

/// Room left of the panels for the y tick labels, px.
const LEFT: i32 = 58;
/// Room under the panels for the x tick labels and the axes' description, px.
const BOTTOM: i32 = 56;
/// Gaps between panels, px: across and down.
const GAP_X: i32 = 10;
const GAP_Y: i32 = 8;
/// Height of a panel's two title lines, px.
const TITLE: i32 = 34;
/// Type sizes of a panel's name, its second line and the tick labels, px.
const NAME_PX: f64 = 15.0;
const LINE2_PX: f64 = 13.0;
const PANEL_TICK_PX: f64 = 14.0;

/// The percentiles labelled under the bottom panels: those of the axis's ends (50 and
/// 99.99) would run into the next panel's in a panel about 130 px wide.
const X_LABELLED: [f64; 3] = [90.0, 99.0, 99.9];
/// The percentiles with a grid line.
const X_GRID: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// Columns and rows of a grid for `n` panels: about twice as many columns as rows (the page
/// is wider than tall), at most [`MAX_COLS`] columns.
pub(super) fn grid(n: usize) -> (usize, usize) {
    if n == 0 {
        return (1, 1);
    }
    let cols = ((2.0 * n as f64).sqrt().ceil() as usize).clamp(1, MAX_COLS);
    (cols, n.div_ceil(cols))
}

/// A run's line as (nines position, mean in `unit`) at its measured percentiles.
fn line(r: &RunPlot, unit: TimeUnit) -> Vec<(f64, f64)> {
    r.read_percentiles
        .iter()
        .filter_map(|b| band_in(b, unit).map(|(_, m, _)| (nines(b.p), m)))
        .collect()
}

/// A panel's plot rectangle in pixels and the axes it maps: x in nines, y in log10 of the
/// unit.
#[derive(Debug, Clone, Copy)]
struct Panel {
    left: i32,
    top: i32,
    right: i32,
    bottom: i32,
    x: (f64, f64),
    y: (f64, f64),
}

impl Panel {
    /// The pixel of (nines position, value in the unit); values off the axis are held a
    /// bounded distance outside it.
    fn px(&self, (x, v): (f64, f64)) -> (i32, i32) {
        let fx = (x - self.x.0) / (self.x.1 - self.x.0);
        let fy = (v.max(1e-300).log10() - self.y.0) / (self.y.1 - self.y.0);
        let w = f64::from(self.right - self.left);
        let h = f64::from(self.bottom - self.top);
        (
            self.left + (fx.clamp(-1.0, 2.0) * w).round() as i32,
            self.bottom - (fy.clamp(-1.0, 2.0) * h).round() as i32,
        )
    }
}

/// Read latency by percentile, one panel per run ([`MAX_PANELS`] at most), in the order of
/// the runs; see the module doc.
pub(super) fn percentiles_each<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
) -> Drawn<(), DB> {
    let probe = TimeUnit::for_max(1e6);
    let runs: Vec<&RunPlot> = data
        .runs
        .iter()
        .filter(|r| !line(r, probe).is_empty())
        .collect();
    let shown = runs.len().min(MAX_PANELS);
    let note = if shown < runs.len() {
        format!("the first {shown} of {} runs", runs.len())
    } else {
        "line: mean over replications".to_string()
    };
    let body = frame(
        root,
        data,
        "read completion latency by percentile, one panel per run",
        &note,
    )?;
    if runs.is_empty() {
        return no_data(root, &body, "no run completed a read");
    }
    let hi = runs
        .iter()
        .flat_map(|r| line(r, probe))
        .map(|(_, v)| v * probe.ns)
        .fold(0.0, f64::max);
    let unit = TimeUnit::for_max(hi);
    let lines: Vec<Vec<(f64, f64)>> = runs.iter().map(|r| line(r, unit)).collect();
    let values = || lines.iter().flatten().map(|&(_, v)| v);
    let lo = values().fold(f64::INFINITY, f64::min);
    let (ylo, yhi, yticks) = log_axis(lo, values().fold(0.0, f64::max));

    let (xr, yr) = body.get_pixel_range();
    let (cols, rows) = grid(shown);
    let (cols_i, rows_i) = (cols as i32, rows as i32);
    let panel_w = (xr.end - xr.start - LEFT - GAP_X * (cols_i - 1)) / cols_i;
    let panel_h = (yr.end - yr.start - BOTTOM - GAP_Y * (rows_i - 1)) / rows_i;
    let x_axis = (nines(50.0) - 0.15, nines(99.99) + 0.15);
    let y_axis = (ylo.log10(), yhi.log10());

    for (k, run) in runs.iter().enumerate().take(shown) {
        let (c, r) = ((k % cols) as i32, (k / cols) as i32);
        let x0 = xr.start + LEFT + c * (panel_w + GAP_X);
        let y0 = yr.start + r * (panel_h + GAP_Y);
        let p = Panel {
            left: x0,
            top: y0 + TITLE,
            right: x0 + panel_w,
            bottom: y0 + panel_h,
            x: x_axis,
            y: y_axis,
        };
        panel_title(root, &p, run, panel_w)?;
        panel_grid(root, &p, &yticks.major, c == 0)?;
        let below_is_empty = k + cols >= shown;
        if below_is_empty {
            x_labels(root, &p)?;
        }
        panel_lines(root, &p, &lines, k)?;
    }
    let first = runs[0].label.split(" (= ").next().unwrap_or_default();
    let desc = format!(
        "x: percentile of reads (spaced by nines) · y: read completion latency, {} (log) · \
         dashed: the first run, {first} · grey: every other run",
        unit.name
    );
    let style = font(SMALL_PX, INK, HPos::Center, VPos::Center);
    let room = xr.end - xr.start;
    let desc = fit_text(root, &desc, &style, room)?;
    text(
        root,
        &desc,
        ((xr.start + xr.end) / 2, yr.end - SMALL_PX as i32 / 2 - 2),
        &style,
    )
}

/// Panel `p`'s lines: every other run's thin and grey, the first run's dashed (unless the
/// panel is its own), and run `k`'s thick with a dot at each measured percentile.
fn panel_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    p: &Panel,
    lines: &[Vec<(f64, f64)>],
    k: usize,
) -> Drawn<(), DB> {
    let px = |l: &[(f64, f64)]| -> Vec<(i32, i32)> { l.iter().map(|&q| p.px(q)).collect() };
    for (j, l) in lines.iter().enumerate() {
        if j != k && j != 0 {
            polyline(root, &px(l), OTHERS.to_rgba(), 1, &[])?;
        }
    }
    if k != 0 {
        polyline(root, &px(&lines[0]), INK.to_rgba(), 2, &[6.0, 4.0])?;
    }
    let own = px(&lines[k]);
    polyline(root, &own, LINE_COLOURS[0].to_rgba(), 3, &[])?;
    for &q in &own {
        marker(root, Marker::Circle, q, 3, LINE_COLOURS[0])?;
    }
    Ok(())
}

/// The grey of the runs a panel shows for context.
const OTHERS: RGBColor = RGBColor(200, 200, 200);

/// A panel's two title lines: the run's name, and its read p99.9 (or, for a run whose
/// results repeat an earlier run's, which one).
fn panel_title<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    p: &Panel,
    run: &RunPlot,
    w: i32,
) -> Drawn<(), DB> {
    let (name, twin) = match run.label.split_once(" (= ") {
        Some((n, t)) => (n, Some(t.trim_end_matches(')'))),
        None => (run.label.as_str(), None),
    };
    let ns = bold(NAME_PX, INK, HPos::Left, VPos::Center);
    let top = p.top - TITLE;
    text(root, &fit_text(root, name, &ns, w)?, (p.left, top + 8), &ns)?;
    let second = match (twin, super::lines::p999(run)) {
        (Some(t), _) => format!("same as {t}"),
        (None, Some(v)) => format!("p99.9 {}", fmt_ns(v)),
        (None, None) => String::new(),
    };
    let ls = font(LINE2_PX, GREY, HPos::Left, VPos::Center);
    text(
        root,
        &fit_text(root, &second, &ls, w)?,
        (p.left, top + 24),
        &ls,
    )
}

/// A panel's frame and grid lines; `y_labels` labels the y ticks left of it.
fn panel_grid<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    p: &Panel,
    y_major: &[f64],
    y_labels: bool,
) -> Drawn<(), DB> {
    let faint = INK.mix(0.12).stroke_width(1);
    for &pc in &X_GRID {
        let x = p.px((nines(pc), 1.0)).0;
        root.draw(&PathElement::new(vec![(x, p.top), (x, p.bottom)], faint))?;
    }
    let style = font(PANEL_TICK_PX, INK, HPos::Right, VPos::Center);
    let mut last: Option<i32> = None;
    for &v in y_major {
        let y = p.px((p.x.0, v)).1;
        if y < p.top || y > p.bottom {
            continue;
        }
        root.draw(&PathElement::new(vec![(p.left, y), (p.right, y)], faint))?;
        // Labels at least a line apart, so a crowded log axis never overprints.
        if y_labels && last.is_none_or(|l| (l - y).abs() >= PANEL_TICK_PX as i32 + 2) {
            text(root, &fmt_num(v), (p.left - 5, y), &style)?;
            last = Some(y);
        }
    }
    let edge = INK.mix(0.4).stroke_width(1);
    root.draw(&Rectangle::new(
        [(p.left, p.top), (p.right, p.bottom)],
        edge,
    ))
}

/// The labelled percentiles under a panel.
fn x_labels<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, p: &Panel) -> Drawn<(), DB> {
    let style = font(PANEL_TICK_PX, INK, HPos::Center, VPos::Top);
    for &pc in &X_LABELLED {
        let x = p.px((nines(pc), 1.0)).0;
        text(root, &nines_label(nines(pc)), (x, p.bottom + 4), &style)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_is_wider_than_tall_and_holds_every_panel() {
        assert_eq!(grid(32), (8, 4));
        assert_eq!(grid(8), (4, 2));
        assert_eq!(grid(1), (2, 1));
        assert_eq!(grid(0), (1, 1));
        for n in 1..=MAX_PANELS {
            let (c, r) = grid(n);
            assert!(c * r >= n && c <= MAX_COLS, "{n}: {c}×{r}");
            assert!(c * (r - 1) < n, "{n}: {c}×{r} has an empty row");
        }
    }

    #[test]
    fn a_panel_maps_its_corners_to_its_rectangle() {
        let p = Panel {
            left: 100,
            top: 50,
            right: 200,
            bottom: 150,
            x: (0.0, 4.0),
            y: (1.0, 3.0),
        };
        assert_eq!(p.px((0.0, 10.0)), (100, 150));
        assert_eq!(p.px((4.0, 1000.0)), (200, 50));
        assert_eq!(p.px((2.0, 100.0)), (150, 100));
        // Far off the axis: held within a panel's size of it.
        let (x, y) = p.px((1e9, 1e-300));
        assert!(x <= 300 && y <= 250, "{x},{y}");
    }
}
