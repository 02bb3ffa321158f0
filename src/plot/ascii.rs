//! Plain-text pictures: charts drawn in ASCII characters, at most [`MAX_WIDTH`] columns wide,
//! so a result pasted into a plain-text mail (or a terminal, or a commit message) reads without
//! an attachment.
//!
//! This module owns the renderer, which knows nothing of qsim's results: [`line_chart`] draws
//! named series of `(x, y)` points over linear, log or "nines" axes ([`Scale`]) with a marker
//! letter per series, optional range marks, x marks, tick labels and a legend; [`bars`] draws
//! labelled horizontal bars with optional ranges (whiskers). [`knee_curve`] is the line chart
//! as a sweep reports it (x = the swept value, one series per policy). [`pictures`] builds
//! qsim's own pictures from a run's [`PlotData`](super::data::PlotData): the percentile
//! "nines" plot of read clat and the GFP_ATOMIC failures bars.
//!
//! Everything is pure ASCII (no box drawing, no µ), deterministic, and total: NaN, infinite,
//! or (on a log axis) non-positive values are left out and counted in a note, an empty chart
//! says `(no data)`, and no input makes a line wider than the requested width (clamped to
//! [`MIN_WIDTH`]..=[`MAX_WIDTH`]).

mod axis;
mod gantt;
pub mod pictures;

pub use axis::Scale;
use axis::{Axis, number};
pub use gantt::gantt;

/// Widest chart, columns: a 72-column picture survives quoting (`> `) in an 80-column mail.
pub const MAX_WIDTH: usize = 72;
/// Narrowest chart, columns (a smaller request is widened to this).
pub const MIN_WIDTH: usize = 30;
/// Rows of a line chart's plot area unless asked otherwise.
pub const DEFAULT_HEIGHT: usize = 12;
/// The marker letters of the series, in order; more series than letters are left out (and
/// said so).
pub const MARKERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// Where markers of two series fall in one cell.
pub const OVERLAP: char = '*';
/// A range mark (a point's [`Point::range`]) in the cells between its ends.
pub const RANGE: char = ':';
/// The segments between a series' consecutive points.
pub const SEGMENT: char = '.';

/// One point of a series: its position and, when known, the range of y around it (a
/// confidence interval or the min and max over replications).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// The y range drawn as [`RANGE`] marks through the point's column.
    pub range: Option<(f64, f64)>,
}

/// A named series of points, drawn in x order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend's name for it.
    pub name: String,
    /// The points, any order.
    pub points: Vec<Point>,
}

impl Series {
    /// A series of `(x, y)` points without ranges.
    pub fn new(name: impl Into<String>, xy: impl IntoIterator<Item = (f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points: xy
                .into_iter()
                .map(|(x, y)| Point { x, y, range: None })
                .collect(),
        }
    }
}

/// A line chart: several series over one x and one y axis.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// The first line(s), wrapped to the width.
    pub title: String,
    /// What x is (printed under the tick labels), e.g. `percentile`.
    pub x_label: String,
    /// What y is, with its unit (printed above the plot), e.g. `read clat, ms`.
    pub y_label: String,
    /// The x axis.
    pub x_scale: Scale,
    /// The y axis.
    pub y_scale: Scale,
    /// The series, each with its own marker letter ([`MARKERS`]).
    pub series: Vec<Series>,
    /// Vertical marks at given x, each with a note under the legend (a knee, a crossover).
    pub x_marks: Vec<(f64, String)>,
    /// Total width in columns, clamped to [`MIN_WIDTH`]..=[`MAX_WIDTH`].
    pub width: usize,
    /// Rows of the plot area, clamped to 3..=40.
    pub height: usize,
}

impl LineChart {
    /// A chart of `series` with the default size ([`MAX_WIDTH`] × [`DEFAULT_HEIGHT`]), no x marks.
    pub fn new(
        title: impl Into<String>,
        x: (impl Into<String>, Scale),
        y: (impl Into<String>, Scale),
        series: Vec<Series>,
    ) -> LineChart {
        LineChart {
            title: title.into(),
            x_label: x.0.into(),
            y_label: y.0.into(),
            x_scale: x.1,
            y_scale: y.1,
            series,
            x_marks: Vec::new(),
            width: MAX_WIDTH,
            height: DEFAULT_HEIGHT,
        }
    }
}

/// The knee curve of a sweep: x = the swept value on `x_scale`, y = a metric on `y_scale`,
/// one series per policy (`(name, [(x, y)])`, ranges with [`Point::range`] via
/// [`line_chart`] if wanted), and `marks` (a knee, a crossover: `(x, note)`) drawn as
/// vertical `|` columns. Returns the lines, each ending in `\n`, at most [`MAX_WIDTH`] wide.
pub fn knee_curve(
    title: &str,
    x: (&str, Scale),
    y: (&str, Scale),
    series: &[(String, Vec<(f64, f64)>)],
    marks: &[(f64, String)],
) -> String {
    let mut chart = LineChart::new(
        title,
        x,
        y,
        series
            .iter()
            .map(|(n, xy)| Series::new(n.clone(), xy.iter().copied()))
            .collect(),
    );
    chart.x_marks = marks.to_vec();
    line_chart(&chart)
}

/// A grid of characters with a priority per cell, so markers win over ranges, ranges over
/// segments and marks.
struct Canvas {
    cols: usize,
    cells: Vec<(char, u8)>,
}

impl Canvas {
    fn new(cols: usize, rows: usize) -> Canvas {
        Canvas {
            cols,
            cells: vec![(' ', 0); cols * rows],
        }
    }

    fn put(&mut self, col: usize, row: usize, c: char, prio: u8) {
        let Some(cell) = self.cells.get_mut(row * self.cols + col) else {
            return;
        };
        if prio > cell.1 {
            *cell = (c, prio);
        } else if prio == cell.1 && prio == MARK && cell.0 != c {
            cell.0 = OVERLAP;
        }
    }

    fn row(&self, row: usize) -> String {
        let s: String = self.cells[row * self.cols..(row + 1) * self.cols]
            .iter()
            .map(|c| c.0)
            .collect();
        s.trim_end().to_string()
    }
}

const XMARK: u8 = 1;
const SEG: u8 = 2;
const RNG: u8 = 3;
const MARK: u8 = 4;

/// A point placed on both axes: positions, and the range's positions when it has one.
struct Placed {
    x: f64,
    y: f64,
    range: Option<(f64, f64)>,
}

/// The points of each series that both scales can show, in x order, and how many could not.
fn place(chart: &LineChart) -> (Vec<Vec<Placed>>, usize) {
    let mut dropped = 0;
    let placed = chart
        .series
        .iter()
        .take(MARKERS.len())
        .map(|s| {
            let mut v: Vec<Placed> = s
                .points
                .iter()
                .filter_map(|p| {
                    let got = chart
                        .x_scale
                        .to_pos(p.x)
                        .zip(chart.y_scale.to_pos(p.y))
                        .map(|(x, y)| Placed {
                            x,
                            y,
                            // An end the y scale cannot show (≤ 0 on a log axis) is cut
                            // at the point itself.
                            range: p.range.map(|(a, b)| {
                                let end = |v: f64| chart.y_scale.to_pos(v).unwrap_or(y);
                                let (a, b) = (end(a), end(b));
                                (a.min(b).min(y), a.max(b).max(y))
                            }),
                        });
                    dropped += usize::from(got.is_none());
                    got
                })
                .collect();
            v.sort_by(|a, b| a.x.total_cmp(&b.x));
            v
        })
        .collect();
    (placed, dropped)
}

/// Appends `text` wrapped at spaces to `width` columns (a word longer than the width is cut),
/// the first line keeping `text`'s leading spaces, the others indented by `indent` spaces.
fn wrap_into(text: &str, width: usize, indent: usize, out: &mut String) {
    let lead = text
        .chars()
        .take_while(|c| *c == ' ')
        .count()
        .min(width / 2);
    let mut line = " ".repeat(lead);
    let mut words = 0;
    for word in text.split_whitespace() {
        let word: String = word
            .chars()
            .take(width.saturating_sub(indent.max(lead)).max(1))
            .collect();
        let len = line.chars().count();
        if words > 0 && len + 1 + word.chars().count() > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(indent);
            words = 0;
        } else if words > 0 {
            line.push(' ');
        }
        line.push_str(&word);
        words += 1;
    }
    if words > 0 {
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// Only ASCII: any other character becomes `?` (labels come from scenario files).
fn ascii(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                '?'
            }
        })
        .collect()
}

/// Draws `chart`: title, y label, plot area with the y tick labels on the left, the x axis
/// with its tick labels and x label, and the legend (with notes on points left out). Every
/// line ends in `\n` and is at most `chart.width` (clamped) columns wide.
pub fn line_chart(chart: &LineChart) -> String {
    let width = chart.width.clamp(MIN_WIDTH, MAX_WIDTH);
    let rows = chart.height.clamp(3, 40);
    let mut out = String::new();
    wrap_into(&ascii(&chart.title), width, 2, &mut out);
    let (placed, dropped) = place(chart);
    let xs: Vec<f64> = placed.iter().flatten().map(|p| p.x).collect();
    let mut ys: Vec<f64> = placed.iter().flatten().map(|p| p.y).collect();
    ys.extend(
        placed
            .iter()
            .flatten()
            .filter_map(|p| p.range)
            .flat_map(|r| [r.0, r.1]),
    );
    let (Some(ax), Some(ay)) = (Axis::fit(chart.x_scale, &xs), Axis::fit(chart.y_scale, &ys))
    else {
        out.push_str("  (no data)\n");
        return out;
    };
    let lw = ay
        .ticks
        .iter()
        .map(|t| t.1.len())
        .max()
        .unwrap_or(1)
        .min(12);
    let cols = width - lw - 2;
    let canvas = draw(chart, &placed, (&ax, &ay), cols, rows);
    let row_of = |p: f64| rows - 1 - ay.cell(p, rows);
    out.push_str(&format!("{:>lw$}  {}\n", "", ascii(&chart.y_label)));
    // Each row is labelled with the tick nearest its centre, if one falls in it.
    let mut nearest: Vec<Option<(f64, &str)>> = vec![None; rows];
    for t in &ay.ticks {
        let exact = (t.0 - ay.lo) / (ay.hi - ay.lo) * (rows - 1) as f64;
        let r = row_of(t.0);
        let off = (exact - (rows - 1 - r) as f64).abs();
        if nearest[r].is_none_or(|(o, _)| off < o) {
            nearest[r] = Some((off, &t.1));
        }
    }
    let labels: Vec<Option<&str>> = nearest.iter().map(|n| n.map(|(_, l)| l)).collect();
    for (r, label) in labels.iter().enumerate() {
        let (l, axis) = label.map_or(("", '|'), |l| (l, '+'));
        let line = format!("{l:>lw$} {axis}{}", canvas.row(r));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    x_axis(&ax, lw, cols, &mut out);
    let x_label = ascii(&chart.x_label);
    let pad = lw + 2 + cols.saturating_sub(x_label.len()) / 2;
    out.push_str(&format!("{:pad$}{x_label}\n", ""));
    let hidden = hidden(&placed, |p| (ax.cell(p.x, cols), row_of(p.y)));
    legend(chart, &placed, (dropped, &hidden), width, &mut out);
    out
}

/// For each series whose markers all fall in the cells of an earlier series' markers, a note
/// saying so (`C = A in every cell`), else for one whose markers all share cells with other
/// series' (`C everywhere under *`), so a run drawn entirely under `*` is not lost.
fn hidden(placed: &[Vec<Placed>], cell: impl Fn(&Placed) -> (usize, usize)) -> Vec<String> {
    let cells: Vec<Vec<(usize, usize)>> = placed
        .iter()
        .map(|pts| pts.iter().map(&cell).collect())
        .collect();
    let mut notes = Vec::new();
    for (k, mine) in cells.iter().enumerate() {
        if mine.is_empty() {
            continue;
        }
        let m = MARKERS[k] as char;
        if let Some(j) = (0..k).find(|&j| mine.iter().all(|c| cells[j].contains(c))) {
            notes.push(format!("{m} = {} in every cell", MARKERS[j] as char));
        } else if mine.iter().all(|c| {
            cells
                .iter()
                .enumerate()
                .any(|(j, other)| j != k && other.contains(c))
        }) {
            notes.push(format!("{m} everywhere under {OVERLAP}"));
        }
    }
    notes
}

/// The plot area: x marks, then per series its segments, range marks and markers.
fn draw(
    chart: &LineChart,
    placed: &[Vec<Placed>],
    (ax, ay): (&Axis, &Axis),
    cols: usize,
    rows: usize,
) -> Canvas {
    let mut canvas = Canvas::new(cols, rows);
    let row_of = |p: f64| rows - 1 - ay.cell(p, rows);
    for (x, _) in &chart.x_marks {
        if let Some(c) = chart
            .x_scale
            .to_pos(*x)
            .filter(|p| *p >= ax.lo && *p <= ax.hi)
        {
            for r in 0..rows {
                canvas.put(ax.cell(c, cols), r, '|', XMARK);
            }
        }
    }
    for (k, pts) in placed.iter().enumerate() {
        let marker = MARKERS[k] as char;
        for w in pts.windows(2) {
            let (c0, c1) = (ax.cell(w[0].x, cols), ax.cell(w[1].x, cols));
            for c in c0 + 1..c1 {
                let f = (c - c0) as f64 / (c1 - c0) as f64;
                canvas.put(c, row_of(w[0].y + f * (w[1].y - w[0].y)), SEGMENT, SEG);
            }
        }
        for p in pts {
            let c = ax.cell(p.x, cols);
            if let Some((a, b)) = p.range {
                for r in row_of(b)..=row_of(a) {
                    canvas.put(c, r, RANGE, RNG);
                }
            }
            canvas.put(c, row_of(p.y), marker, MARK);
        }
    }
    canvas
}

/// The x axis line (`+----+---`) and its tick labels, each centred on its tick where it fits,
/// skipped where it would touch the one before.
fn x_axis(ax: &Axis, lw: usize, cols: usize, out: &mut String) {
    let mut line: Vec<char> = vec!['-'; cols];
    let mut labels: Vec<char> = vec![' '; lw + 2 + cols];
    let mut free = 0;
    for (p, label) in &ax.ticks {
        let c = ax.cell(*p, cols);
        line[c] = '+';
        let n = label.len();
        let start = (lw + 2 + c)
            .saturating_sub(n / 2)
            .min((lw + 2 + cols).saturating_sub(n));
        if start < free {
            continue;
        }
        for (i, ch) in label.chars().enumerate() {
            if let Some(slot) = labels.get_mut(start + i) {
                *slot = ch;
            }
        }
        free = start + n + 1;
    }
    let axis: String = line.into_iter().collect();
    out.push_str(&format!("{:>lw$} +{axis}\n", ""));
    let labels: String = labels.into_iter().collect();
    out.push_str(labels.trim_end());
    out.push('\n');
}

/// The legend: `A name` per series shown, wrapped; then what `*`, `:` and `|` mean when
/// they occur, which series hide under another, and how many points or series were left out.
fn legend(
    chart: &LineChart,
    placed: &[Vec<Placed>],
    (dropped, hidden): (usize, &[String]),
    width: usize,
    out: &mut String,
) {
    let entries: Vec<String> = chart
        .series
        .iter()
        .zip(MARKERS)
        .map(|(s, &m)| format!("{} {}", m as char, ascii(&s.name)))
        .collect();
    let mut line = String::from(" ");
    for e in entries {
        let e: String = e.chars().take(width - 4).collect();
        if line.len() + 3 + e.len() > width {
            out.push_str(&format!("{}\n", line.trim_end()));
            line = String::from(" ");
        }
        line.push_str("  ");
        line.push_str(&e);
    }
    out.push_str(&format!("{}\n", line.trim_end()));
    let mut notes = vec![format!("{OVERLAP} = several series")];
    if placed.iter().flatten().any(|p| p.range.is_some()) {
        notes.push(format!("{RANGE} = range"));
    }
    notes.extend(hidden.iter().cloned());
    let mut text = notes.join(", ");
    for (x, note) in &chart.x_marks {
        text.push_str(&format!(
            "; | at x={}: {}",
            number(*x, x.abs() / 100.0),
            ascii(note)
        ));
    }
    if chart.series.len() > MARKERS.len() {
        text.push_str(&format!(
            "; {} more series not shown",
            chart.series.len() - MARKERS.len()
        ));
    }
    if dropped > 0 {
        text.push_str(&format!("; {dropped} point(s) off this scale not shown"));
    }
    wrap_into(&format!("   {text}"), width, 3, out);
}

/// One horizontal bar: a label, a value and optionally a range (whisker) around it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The label at the left.
    pub label: String,
    /// The bar's length.
    pub value: f64,
    /// A range drawn as `|---|` over the bar (e.g. a confidence interval cut at 0).
    pub range: Option<(f64, f64)>,
}

/// Each bar's number and range as printed beside it (`120 [90..150]`, `n/a`), in one format
/// for all: steps of a hundredth of `max`, the largest value drawn.
fn bar_numbers(bars: &[Bar], max: f64) -> Vec<String> {
    let ok = |v: f64| (0.0..1e300).contains(&v);
    let num = |v: f64| number(v, max / 100.0);
    let text = |b: &Bar| {
        let v = if b.value.is_finite() {
            num(b.value)
        } else {
            "n/a".into()
        };
        match b.range {
            Some((lo, hi)) if ok(lo) && ok(hi) => format!("{v} [{}..{}]", num(lo), num(hi)),
            _ => v,
        }
    };
    bars.iter().map(text).collect()
}

/// Draws labelled horizontal bars from 0 on a linear axis: `label |#####|--|  value [lo..hi]`,
/// `width` columns at most (clamped). A value that is not finite or is negative draws no bar
/// but keeps its row and number. Every line ends in `\n`.
pub fn bars(title: &str, bars: &[Bar], width: usize) -> String {
    /// Fewest columns a bar gets, however long the labels.
    const MIN_BAR: usize = 20;
    let width = width.clamp(MIN_WIDTH, MAX_WIDTH);
    let mut out = String::new();
    wrap_into(&ascii(title), width, 2, &mut out);
    if bars.is_empty() {
        out.push_str("  (no data)\n");
        return out;
    }
    let ok = |v: f64| (0.0..1e300).contains(&v);
    let max = bars
        .iter()
        .flat_map(|b| [Some(b.value), b.range.map(|r| r.1)])
        .flatten()
        .filter(|&v| ok(v))
        .fold(0.0, f64::max);
    let texts = bar_numbers(bars, max);
    let tw = texts
        .iter()
        .map(String::len)
        .max()
        .unwrap_or(0)
        .min(width / 3);
    // Labels get what the bars (at least MIN_BAR columns) and numbers leave; a longer
    // label goes on a line of its own above its bar, whole, never cut.
    let lw = bars
        .iter()
        .map(|b| ascii(&b.label).len())
        .max()
        .unwrap_or(0)
        .min(width.saturating_sub(tw + 5 + MIN_BAR).max(width / 4));
    let cols = width - lw - tw - 5;
    let cell = |v: f64| {
        if max > 0.0 {
            ((v / max * cols as f64).round() as usize).min(cols)
        } else {
            0
        }
    };
    for (b, t) in bars.iter().zip(&texts) {
        let mut row = vec![' '; cols];
        if ok(b.value) {
            row.iter_mut().take(cell(b.value)).for_each(|c| *c = '#');
        }
        if let Some((lo, hi)) = b.range.filter(|r| ok(r.0) && ok(r.1) && r.0 <= r.1) {
            let (a, z) = (cell(lo).min(cols - 1), cell(hi).min(cols - 1));
            for c in &mut row[a..=z] {
                if *c == ' ' {
                    *c = '-';
                }
            }
            row[a] = '|';
            row[z] = '|';
        }
        let mut label = ascii(&b.label);
        if label.len() > lw {
            wrap_into(&label, width, 2, &mut out);
            label.clear();
        }
        let t: String = t.chars().take(tw).collect();
        let bar: String = row.into_iter().collect();
        let line = format!("{label:<lw$} |{bar} {t}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests;
