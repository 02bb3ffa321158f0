//! The look every plot shares: the bundled font, text sizes, the Okabe–Ito palette with a
//! line style and marker shape per series, the page frame (title, footer), legends, axis
//! ticks (linear, logarithmic, "nines") and pixel-level drawing helpers (dashed polylines,
//! markers, translucent bands).
//!
//! Everything draws on the page's root area in pixel coordinates, so the same code serves
//! the PNG and the SVG backend.

use crate::plot::data::PlotData;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, register_font};
use std::sync::OnceLock;

/// The family every text element asks for; registered from the bundled DejaVu Sans.
pub(super) const FONT: &str = "sans-serif";
/// Page title size, px.
pub(super) const TITLE_PX: f64 = 30.0;
/// Panel titles and axis descriptions, px.
pub(super) const DESC_PX: f64 = 22.0;
/// Tick labels, px.
pub(super) const TICK_PX: f64 = 20.0;
/// Legend labels, px.
pub(super) const LEGEND_PX: f64 = 19.0;
/// Footer, notes and labels inside bars, px.
pub(super) const SMALL_PX: f64 = 17.0;

/// Height of the title band at the top of a page, px.
pub(super) const TITLE_BAND: i32 = 52;
/// Height of the footer band at the bottom of a page, px.
pub(super) const FOOTER_BAND: i32 = 30;
/// Outer margin left and right, px.
pub(super) const SIDE: i32 = 14;

/// Result of drawing on a backend `DB`.
pub(super) type Drawn<T, DB> = Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Registers DejaVu Sans (regular and bold) as `sans-serif`, once per process. Returns
/// whether both registrations worked (they only fail if the bundled bytes are not a font).
pub(super) fn register_fonts() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| {
        register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok()
    })
}

// ---------------------------------------------------------------------------------------
// Colours and series styles

/// Okabe–Ito blue.
pub(super) const OI_BLUE: RGBColor = RGBColor(0, 114, 178);
/// Okabe–Ito vermillion.
pub(super) const OI_VERMILLION: RGBColor = RGBColor(213, 94, 0);
/// Okabe–Ito bluish green.
pub(super) const OI_GREEN: RGBColor = RGBColor(0, 158, 115);
/// Okabe–Ito reddish purple.
pub(super) const OI_PURPLE: RGBColor = RGBColor(204, 121, 167);
/// Okabe–Ito orange.
pub(super) const OI_ORANGE: RGBColor = RGBColor(230, 159, 0);
/// Okabe–Ito sky blue.
pub(super) const OI_SKY: RGBColor = RGBColor(86, 180, 233);
/// Okabe–Ito yellow (fills only: too light for lines on white).
pub(super) const OI_YELLOW: RGBColor = RGBColor(240, 228, 66);
/// Okabe–Ito black.
pub(super) const INK: RGBColor = RGBColor(0, 0, 0);
/// Grey for grid lines, footers and notes.
pub(super) const GREY: RGBColor = RGBColor(110, 110, 110);

/// Line colours in the order runs take them.
const LINE_COLOURS: [RGBColor; 7] = [
    OI_BLUE,
    OI_VERMILLION,
    OI_GREEN,
    OI_PURPLE,
    OI_ORANGE,
    OI_SKY,
    INK,
];

/// Fill colours for stacked or grouped categories (stages, orders, states), in order;
/// neighbours differ in lightness as well as hue.
pub(super) const FILL_COLOURS: [RGBColor; 8] = [
    OI_BLUE,
    OI_ORANGE,
    OI_GREEN,
    OI_YELLOW,
    OI_VERMILLION,
    OI_SKY,
    OI_PURPLE,
    INK,
];

/// Dash patterns (on, off, on, off ... px); empty is solid.
const DASHES: [&[f64]; 4] = [&[], &[14.0, 6.0], &[3.0, 5.0], &[14.0, 5.0, 3.0, 5.0]];

/// Marker shapes, in the order runs take them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Marker {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
}

const MARKERS: [Marker; 6] = [
    Marker::Circle,
    Marker::Square,
    Marker::TriangleUp,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Cross,
];

/// How one series is drawn: colour, dash pattern and marker, all three varying so series
/// stay apart in grayscale and for colour-blind readers.
#[derive(Debug, Clone, Copy)]
pub(super) struct SeriesStyle {
    pub colour: RGBColor,
    pub dash: &'static [f64],
    pub marker: Marker,
}

/// The style of series `i` (a run, a queue). The colour, dash and marker cycles have
/// lengths 7, 4 and 6, so the first 84 series all differ.
pub(super) fn series_style(i: usize) -> SeriesStyle {
    SeriesStyle {
        colour: LINE_COLOURS[i % LINE_COLOURS.len()],
        dash: DASHES[i % DASHES.len()],
        marker: MARKERS[i % MARKERS.len()],
    }
}

/// The fill colour of category `i`.
pub(super) fn fill_colour(i: usize) -> RGBColor {
    FILL_COLOURS[i % FILL_COLOURS.len()]
}

/// Black or white, whichever reads better on `c`.
pub(super) fn text_on(c: RGBColor) -> RGBColor {
    let l = 0.299 * f64::from(c.0) + 0.587 * f64::from(c.1) + 0.114 * f64::from(c.2);
    if l > 140.0 { INK } else { WHITE }
}

// ---------------------------------------------------------------------------------------
// Text

/// A text style of `px` pixels in `colour`, anchored at `h`/`v`.
pub(super) fn font(px: f64, colour: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle {
        font: (FONT, px).into_font(),
        color: colour.to_backend_color(),
        pos: Pos::new(h, v),
    }
}

/// Bold variant of [`font`].
pub(super) fn bold(px: f64, colour: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle {
        font: (FONT, px, FontStyle::Bold).into_font(),
        color: colour.to_backend_color(),
        pos: Pos::new(h, v),
    }
}

/// Width of `text` in `style`, px.
pub(super) fn text_width<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    text: &str,
    style: &TextStyle,
) -> Drawn<i32, DB> {
    Ok(root.estimate_text_size(text, style)?.0 as i32)
}

/// Longest text, in characters, any plot measures or draws: a label from a results file may
/// be tens of thousands of characters long, and no page is wider than this many.
pub(super) const MAX_TEXT_CHARS: usize = 200;

/// `s` cut to at most `max` characters, the last of them an ellipsis when anything was cut.
pub(super) fn clip_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max.saturating_sub(1)) {
        Some((at, _)) if s[at..].chars().nth(1).is_some() => format!("{}…", &s[..at]),
        _ => s.to_string(),
    }
}

/// `text` cut with an ellipsis to at most `max` px wide (and [`MAX_TEXT_CHARS`]
/// characters). The cut is found by bisection, so a long label costs a few measurements.
pub(super) fn fit_text<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    text: &str,
    style: &TextStyle,
    max: i32,
) -> Drawn<String, DB> {
    let text = clip_chars(text, MAX_TEXT_CHARS);
    if text_width(root, &text, style)? <= max {
        return Ok(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let cut = |keep: usize| chars[..keep].iter().collect::<String>() + "…";
    // The widest prefix that fits: `lo` fits (0 always counts as fitting), `hi` does not.
    let (mut lo, mut hi) = (0, chars.len());
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if text_width(root, &cut(mid), style)? <= max {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(cut(lo))
}

/// Draws `text` at pixel `(x, y)` of the root area.
pub(super) fn text<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    s: &str,
    (x, y): (i32, i32),
    style: &TextStyle,
) -> Drawn<(), DB> {
    root.draw(&Text::new(
        clip_chars(s, MAX_TEXT_CHARS),
        (x, y),
        style.clone(),
    ))
}

// ---------------------------------------------------------------------------------------
// Page frame

/// Fills the page, draws the title (`"<scenario>: <what>"`, shrunk to fit) and the footer
/// (`note` on the left, `seed · replications · qsim version` on the right), and returns the
/// area between them.
pub(super) fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    data: &PlotData,
    what: &str,
    note: &str,
) -> Drawn<DrawingArea<DB, plotters::coord::Shift>, DB> {
    root.fill(&WHITE)?;
    let (w, h) = root.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    let title = clip_chars(&format!("{}: {}", data.scenario, what), MAX_TEXT_CHARS);
    let mut px = TITLE_PX;
    let mut style = bold(px, INK, HPos::Center, VPos::Center);
    while px > 18.0 && text_width(root, &title, &style)? > w - 2 * SIDE {
        px -= 1.0;
        style = bold(px, INK, HPos::Center, VPos::Center);
    }
    let title = fit_text(root, &title, &style, w - 2 * SIDE)?;
    text(root, &title, (w / 2, TITLE_BAND / 2), &style)?;

    let footer = footer_text(data);
    let right = font(SMALL_PX, GREY, HPos::Right, VPos::Center);
    let fy = h - FOOTER_BAND / 2;
    text(root, &footer, (w - SIDE, fy), &right)?;
    if !note.is_empty() {
        let left = font(SMALL_PX, GREY, HPos::Left, VPos::Center);
        let room = w - 3 * SIDE - text_width(root, &footer, &right)?;
        let note = fit_text(root, note, &left, room)?;
        text(root, &note, (SIDE, fy), &left)?;
    }
    Ok(root.margin(TITLE_BAND, FOOTER_BAND, SIDE, SIDE))
}

/// `seed 42 · 10 replications · qsim 0.1.0`.
pub(super) fn footer_text(data: &PlotData) -> String {
    let reps = if data.replications == 1 {
        "1 replication".to_string()
    } else {
        format!("{} replications", data.replications)
    };
    format!(
        "seed {} · {} · qsim {}",
        data.seed,
        reps,
        env!("CARGO_PKG_VERSION")
    )
}

/// A grey message in the middle of `area` (a plot with nothing to draw).
pub(super) fn no_data<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    area: &DrawingArea<DB, plotters::coord::Shift>,
    message: &str,
) -> Drawn<(), DB> {
    let (xr, yr) = area.get_pixel_range();
    let style = font(DESC_PX, GREY, HPos::Center, VPos::Center);
    text(
        root,
        message,
        ((xr.start + xr.end) / 2, (yr.start + yr.end) / 2),
        &style,
    )
}

// ---------------------------------------------------------------------------------------
// Pixel drawing

/// Draws a polyline through pixel points with `width` and a dash pattern (empty: solid).
pub(super) fn polyline<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    pts: &[(i32, i32)],
    colour: RGBAColor,
    width: u32,
    dash: &[f64],
) -> Drawn<(), DB> {
    if pts.len() < 2 {
        return Ok(());
    }
    let style = ShapeStyle {
        color: colour,
        filled: false,
        stroke_width: width,
    };
    if dash.is_empty() {
        return root.draw(&PathElement::new(pts.to_vec(), style));
    }
    // Walk the polyline, switching between "on" and "off" after each pattern length.
    let mut k = 0; // index into the pattern; even = on
    let mut left = dash[0];
    let mut run: Vec<(i32, i32)> = vec![pts[0]];
    for w in pts.windows(2) {
        let (ax, ay) = (f64::from(w[0].0), f64::from(w[0].1));
        let (bx, by) = (f64::from(w[1].0), f64::from(w[1].1));
        let len = ((bx - ax).powi(2) + (by - ay).powi(2)).sqrt();
        let mut at = 0.0;
        while len - at > left {
            at += left;
            let p = (
                (ax + (bx - ax) * at / len).round() as i32,
                (ay + (by - ay) * at / len).round() as i32,
            );
            if k % 2 == 0 {
                run.push(p);
                root.draw(&PathElement::new(std::mem::take(&mut run), style))?;
            } else {
                run = vec![p];
            }
            k = (k + 1) % dash.len();
            left = dash[k];
        }
        left -= len - at;
        if k % 2 == 0 {
            run.push(w[1]);
        }
    }
    if k % 2 == 0 && run.len() >= 2 {
        root.draw(&PathElement::new(run, style))?;
    }
    Ok(())
}

/// Draws marker `m` centred on pixel `(x, y)`, `r` px in radius, filled with `colour` and
/// outlined in white so overlapping markers stay apart.
pub(super) fn marker<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    m: Marker,
    (x, y): (i32, i32),
    r: i32,
    colour: RGBColor,
) -> Drawn<(), DB> {
    let fill = colour.filled();
    let edge = WHITE.stroke_width(1);
    let poly = |pts: Vec<(i32, i32)>| -> Drawn<(), DB> {
        root.draw(&Polygon::new(pts.clone(), fill))?;
        let mut ring = pts;
        ring.push(ring[0]);
        root.draw(&PathElement::new(ring, edge))
    };
    match m {
        Marker::Circle => {
            root.draw(&Circle::new((x, y), r, fill))?;
            root.draw(&Circle::new((x, y), r, edge))
        }
        Marker::Square => {
            let s = r * 85 / 100;
            poly(vec![
                (x - s, y - s),
                (x + s, y - s),
                (x + s, y + s),
                (x - s, y + s),
            ])
        }
        Marker::TriangleUp => poly(vec![
            (x, y - r - 1),
            (x + r + 1, y + r * 3 / 4),
            (x - r - 1, y + r * 3 / 4),
        ]),
        Marker::TriangleDown => poly(vec![
            (x, y + r + 1),
            (x + r + 1, y - r * 3 / 4),
            (x - r - 1, y - r * 3 / 4),
        ]),
        Marker::Diamond => poly(vec![(x, y - r - 1), (x + r, y), (x, y + r + 1), (x - r, y)]),
        Marker::Cross => {
            let s = r * 85 / 100;
            let pen = colour.stroke_width(3);
            root.draw(&PathElement::new(vec![(x - s, y - s), (x + s, y + s)], pen))?;
            root.draw(&PathElement::new(vec![(x - s, y + s), (x + s, y - s)], pen))
        }
    }
}

/// Fills the polygon through pixel points with `colour`.
pub(super) fn fill<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    pts: Vec<(i32, i32)>,
    colour: RGBAColor,
) -> Drawn<(), DB> {
    if pts.len() < 3 {
        return Ok(());
    }
    root.draw(&Polygon::new(pts, colour.filled()))
}

/// A filled rectangle between two pixel corners.
pub(super) fn rect<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    a: (i32, i32),
    b: (i32, i32),
    style: ShapeStyle,
) -> Drawn<(), DB> {
    root.draw(&Rectangle::new([a, b], style))
}

// ---------------------------------------------------------------------------------------
// Legends

/// What a legend entry shows before its label.
#[derive(Debug, Clone, Copy)]
pub(super) enum Swatch {
    /// A line in a series style, with its marker; `band` adds the translucent band behind.
    Line { style: SeriesStyle, band: bool },
    /// A filled box.
    Box(RGBColor),
    /// A translucent band with a line on top (a min/max envelope).
    Band { style: SeriesStyle },
    /// A line with a dash pattern and no marker (a reference level).
    Rule {
        colour: RGBColor,
        dash: &'static [f64],
    },
    /// A lone marker.
    Mark(Marker, RGBColor),
}

/// One legend entry.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub label: String,
    pub swatch: Swatch,
}

impl Entry {
    /// An entry.
    pub fn new(label: impl Into<String>, swatch: Swatch) -> Entry {
        Entry {
            label: label.into(),
            swatch,
        }
    }
}

/// Width of a swatch, px.
const SWATCH_W: i32 = 44;
/// Gap between swatch and label, px.
const SWATCH_GAP: i32 = 8;
/// Height of one legend row, px.
pub(super) const LEGEND_ROW: i32 = 28;

fn draw_swatch<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    swatch: Swatch,
    (x, y): (i32, i32),
) -> Drawn<(), DB> {
    let mid = (x + SWATCH_W / 2, y);
    match swatch {
        Swatch::Line { style, band } => {
            if band {
                rect(
                    root,
                    (x, y - 8),
                    (x + SWATCH_W, y + 8),
                    style.colour.mix(0.18).filled(),
                )?;
            }
            polyline(
                root,
                &[(x, y), (x + SWATCH_W, y)],
                style.colour.to_rgba(),
                3,
                style.dash,
            )?;
            marker(root, style.marker, mid, 6, style.colour)
        }
        Swatch::Box(c) => rect(root, (x + 6, y - 9), (x + SWATCH_W - 6, y + 9), c.filled()),
        Swatch::Band { style } => {
            rect(
                root,
                (x, y - 8),
                (x + SWATCH_W, y + 8),
                style.colour.mix(0.35).filled(),
            )?;
            polyline(
                root,
                &[(x, y - 8), (x + SWATCH_W, y - 8)],
                style.colour.to_rgba(),
                2,
                style.dash,
            )
        }
        Swatch::Rule { colour, dash } => polyline(
            root,
            &[(x, y), (x + SWATCH_W, y)],
            colour.to_rgba(),
            2,
            dash,
        ),
        Swatch::Mark(m, c) => marker(root, m, mid, 6, c),
    }
}

/// Width a vertical legend needs for `entries` (swatch, gap, longest label), px.
pub(super) fn legend_width<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[Entry],
) -> Drawn<i32, DB> {
    let style = font(LEGEND_PX, INK, HPos::Left, VPos::Center);
    let mut w = 0;
    for e in entries {
        w = w.max(text_width(root, &e.label, &style)?);
    }
    Ok(SWATCH_W + SWATCH_GAP + w + 8)
}

/// Draws `entries` one per row from pixel `(x, y)` downwards, labels cut to fit `max_w`;
/// an optional bold `title` comes first. Returns the height used.
pub(super) fn legend_column<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    (x, y): (i32, i32),
    max_w: i32,
    title: Option<&str>,
    entries: &[Entry],
) -> Drawn<i32, DB> {
    let style = font(LEGEND_PX, INK, HPos::Left, VPos::Center);
    let mut cy = y + LEGEND_ROW / 2;
    if let Some(t) = title {
        let ts = bold(LEGEND_PX, INK, HPos::Left, VPos::Center);
        let t = fit_text(root, t, &ts, max_w)?;
        text(root, &t, (x, cy), &ts)?;
        cy += LEGEND_ROW;
    }
    for e in entries {
        draw_swatch(root, e.swatch, (x, cy))?;
        let room = max_w - SWATCH_W - SWATCH_GAP;
        let label = fit_text(root, &e.label, &style, room)?;
        text(root, &label, (x + SWATCH_W + SWATCH_GAP, cy), &style)?;
        cy += LEGEND_ROW;
    }
    Ok(cy - LEGEND_ROW / 2 - y)
}

/// Draws `entries` left to right from pixel `(x, y)` (top of the first row), wrapping at
/// `max_w`. Returns the height used.
pub(super) fn legend_row<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    (x, y): (i32, i32),
    max_w: i32,
    entries: &[Entry],
) -> Drawn<i32, DB> {
    let style = font(LEGEND_PX, INK, HPos::Left, VPos::Center);
    let mut cx = x;
    let mut cy = y + LEGEND_ROW / 2;
    for e in entries {
        let room = max_w - SWATCH_W - SWATCH_GAP;
        let label = fit_text(root, &e.label, &style, room)?;
        let w = SWATCH_W + SWATCH_GAP + text_width(root, &label, &style)? + 24;
        if cx > x && cx + w - 24 > x + max_w {
            cx = x;
            cy += LEGEND_ROW;
        }
        draw_swatch(root, e.swatch, (cx, cy))?;
        text(root, &label, (cx + SWATCH_W + SWATCH_GAP, cy), &style)?;
        cx += w;
    }
    Ok(cy + LEGEND_ROW / 2 - y)
}

/// Height [`legend_row`] would use, px.
pub(super) fn legend_row_height<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    max_w: i32,
    entries: &[Entry],
) -> Drawn<i32, DB> {
    let style = font(LEGEND_PX, INK, HPos::Left, VPos::Center);
    let mut cx = 0;
    let mut rows = 1;
    for e in entries {
        let room = max_w - SWATCH_W - SWATCH_GAP;
        let label = fit_text(root, &e.label, &style, room)?;
        let w = SWATCH_W + SWATCH_GAP + text_width(root, &label, &style)? + 24;
        if cx > 0 && cx + w - 24 > max_w {
            cx = 0;
            rows += 1;
        }
        cx += w;
    }
    Ok(rows * LEGEND_ROW)
}

// ---------------------------------------------------------------------------------------
// Ticks and number formats

/// Axis ticks: labelled (bold grid line) and unlabelled (light grid line) positions.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Ticks {
    pub major: Vec<f64>,
    pub minor: Vec<f64>,
}

/// A padded range `[lo, hi]` for positive values and its 1-2-5 (or decade) ticks for a
/// log axis; the range is widened until it holds at least two labelled ticks.
/// Values beyond `[1e-300, 1e300]` sit at its ends, so the padded range and its decades stay
/// finite and countable.
pub(super) fn log_axis(min: f64, max: f64) -> (f64, f64, Ticks) {
    const LIMIT: f64 = 1e300;
    let min = if min > 0.0 && min.is_finite() {
        min.clamp(1.0 / LIMIT, LIMIT / 10.0)
    } else {
        1.0
    };
    let max = if max.is_finite() && max > min {
        max.min(LIMIT)
    } else {
        min * 10.0
    };
    let mut lo = min / 1.25;
    let mut hi = max * 1.25;
    let decades = (hi / lo).log10();
    let (major_m, minor_m): (&[f64], &[f64]) = if decades <= 1.2 {
        (&[1.0, 2.0, 3.0, 5.0], &[4.0, 6.0, 7.0, 8.0, 9.0])
    } else if decades <= 3.5 {
        (&[1.0, 2.0, 5.0], &[3.0, 4.0, 6.0, 7.0, 8.0, 9.0])
    } else if decades <= 7.0 {
        (&[1.0], &[2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    } else {
        (&[1.0], &[])
    };
    let candidates = |ms: &[f64], lo: f64, hi: f64| -> Vec<f64> {
        let mut v = Vec::new();
        let d0 = lo.log10().floor() as i32 - 1;
        let d1 = hi.log10().ceil() as i32 + 1;
        for d in d0..=d1 {
            for &m in ms {
                let x = m * 10f64.powi(d);
                v.push(x);
            }
        }
        v.sort_by(f64::total_cmp);
        v
    };
    let all_major = candidates(major_m, lo, hi);
    // Widen to the nearest labelled tick on a side with none close by.
    let inside = |lo: f64, hi: f64| all_major.iter().filter(|&&x| x >= lo && x <= hi).count();
    if inside(lo, hi) < 2 {
        if let Some(&below) = all_major.iter().rev().find(|&&x| x <= min) {
            lo = lo.min(below);
        }
        if inside(lo, hi) < 2
            && let Some(&above) = all_major.iter().find(|&&x| x >= max)
        {
            hi = hi.max(above);
        }
    }
    let major = all_major
        .iter()
        .copied()
        .filter(|&x| x >= lo * 0.9999 && x <= hi * 1.0001)
        .collect();
    let minor = candidates(minor_m, lo, hi)
        .into_iter()
        .filter(|&x| x >= lo && x <= hi)
        .collect();
    (lo, hi, Ticks { major, minor })
}

/// Ticks for a linear axis over `[lo, hi]`: a 1-2-5 step giving about `target` labelled
/// ticks at multiples of the step, unlabelled ones halfway; returns the first tick at or
/// above `hi` (where an axis starting at 0 should end) and the ticks up to it.
pub(super) fn linear_axis(lo: f64, hi: f64, target: usize) -> (f64, Ticks) {
    let target = target.max(1);
    // A range too narrow for a normal step (or not finite) gets a unit one.
    let narrow = |hi: f64| !((hi - lo) / target as f64).is_normal();
    let hi = if hi > lo && !narrow(hi) { hi } else { lo + 1.0 };
    let raw = (hi - lo) / target as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|&s| s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step - 1e-9).ceil() as i64;
    // Far from 0 the step may be below the values' precision: then no ticks, only the range.
    if !(0..=4 * target as i64 + 4).contains(&last.saturating_sub(first)) {
        return (
            hi,
            Ticks {
                major: vec![lo, hi],
                minor: Vec::new(),
            },
        );
    }
    let major: Vec<f64> = (first..=last).map(|k| k as f64 * step).collect();
    let minor = (first - 1..=last)
        .map(|k| (k as f64 + 0.5) * step)
        .filter(|&x| x >= lo)
        .collect();
    (last as f64 * step, Ticks { major, minor })
}

/// A tick value without noise digits: `0.05`, `2.5`, `10`, `1200`.
pub(super) fn fmt_num(v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let a = v.abs();
    let decimals = if a >= 100.0 {
        0
    } else {
        // Enough decimals for three significant digits, then trailing zeros trimmed.
        (2 - a.log10().floor() as i32).clamp(0, 9) as usize
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `mean ± half` with the half-width to two significant digits and the mean to the same
/// decimals (`0.300 ± 0.054`, `2900 ± 373`); just the mean when `half` is not positive.
pub(super) fn fmt_pm(mean: f64, half: f64) -> String {
    if !(half > 0.0 && half.is_finite()) {
        return fmt_num(mean);
    }
    let decimals = (1 - half.log10().floor() as i32).max(0) as usize;
    format!("{mean:.decimals$} ± {half:.decimals$}")
}

/// A duration given in ns, in the unit that keeps the number between 1 and 1000:
/// `500 ns`, `20 µs`, `1.5 ms`, `2 s`.
pub(super) fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{} ns", fmt_num(ns))
    } else if a < 1e6 {
        format!("{} µs", fmt_num(ns / 1e3))
    } else if a < 1e9 {
        format!("{} ms", fmt_num(ns / 1e6))
    } else {
        format!("{} s", fmt_num(ns / 1e9))
    }
}

/// The "nines" transform of a percentile: `-log10(1 - p/100)`, so 90 → 1, 99 → 2,
/// 99.9 → 3.
pub(super) fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

/// The percentile at nines position `x` (inverse of [`nines`]), as a label: `50`, `99.9`.
pub(super) fn nines_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 10f64.powf(-x));
    // Round to the precision the position implies (x = 3 → one decimal: 99.9).
    let decimals = (x.ceil() as i32 - 2).max(0) as usize;
    let s = format!("{p:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Pushes label centres `ys` (pixels, any order) apart so neighbours are at least `gap`
/// px apart, keeping them inside `[top, bottom]` as far as possible; returns them in the
/// input order.
pub(super) fn spread_labels(ys: &[i32], gap: i32, top: i32, bottom: i32) -> Vec<i32> {
    let mut idx: Vec<usize> = (0..ys.len()).collect();
    idx.sort_by_key(|&i| ys[i]);
    let mut pos: Vec<i32> = idx.iter().map(|&i| ys[i]).collect();
    for k in 1..pos.len() {
        pos[k] = pos[k].max(pos[k - 1] + gap);
    }
    if let Some(&last) = pos.last()
        && last > bottom
    {
        let shift = last - bottom;
        let n = pos.len();
        pos[n - 1] -= shift;
        for k in (0..n - 1).rev() {
            pos[k] = pos[k].min(pos[k + 1] - gap);
        }
    }
    if let Some(&first) = pos.first()
        && first < top
    {
        let shift = top - first;
        for p in &mut pos {
            *p += shift;
        }
    }
    let mut out = vec![0; ys.len()];
    for (k, &i) in idx.iter().enumerate() {
        out[i] = pos[k];
    }
    out
}

/// A linear axis whose labelled and unlabelled grid positions are given, for plotters'
/// mesh. The values are whatever the plot maps onto it (log10 of ms for a log axis, the
/// nines transform for a percentile axis); the mesh's label formatter turns them back.
#[derive(Debug, Clone)]
pub(super) struct Axis {
    lo: f64,
    hi: f64,
    ticks: Ticks,
}

impl Axis {
    /// An axis from `lo` to `hi` with `ticks` (ticks outside the range are dropped).
    pub fn new(lo: f64, hi: f64, ticks: Ticks) -> Axis {
        let inside = |v: &Vec<f64>| -> Vec<f64> {
            let eps = (hi - lo).abs() * 1e-9;
            v.iter()
                .copied()
                .filter(|&x| x >= lo - eps && x <= hi + eps)
                .collect()
        };
        Axis {
            lo,
            hi,
            ticks: Ticks {
                major: inside(&ticks.major),
                minor: inside(&ticks.minor),
            },
        }
    }

    /// The same axis on `f` of the values (e.g. `log10`), ticks mapped too.
    pub fn mapped(lo: f64, hi: f64, ticks: &Ticks, f: fn(f64) -> f64) -> Axis {
        Axis::new(
            f(lo),
            f(hi),
            Ticks {
                major: ticks.major.iter().map(|&x| f(x)).collect(),
                minor: ticks.minor.iter().map(|&x| f(x)).collect(),
            },
        )
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        if self.hi == self.lo {
            return (limit.0 + limit.1) / 2;
        }
        let share = (v - self.lo) / (self.hi - self.lo);
        // Far outside the range (data off the axis) stays a bounded distance away, so pixel
        // arithmetic cannot overflow and rasterising cannot run away.
        let reach = f64::from((limit.1 - limit.0).abs()) * 4.0 + 64.0;
        let off = (share * f64::from(limit.1 - limit.0)).clamp(-reach, reach);
        limit.0 + off.round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.ticks.minor.clone()
        } else {
            self.ticks.major.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// A chart on two [`Axis`] coordinates.
pub(super) type AxisChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Axis, Axis>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_map_the_labelled_percentiles_to_whole_numbers() {
        for (p, x) in [(90.0, 1.0), (99.0, 2.0), (99.9, 3.0), (99.99, 4.0)] {
            assert!((nines(p) - x).abs() < 1e-9, "{p}");
        }
        let labels: Vec<String> = [nines(50.0), 1.0, 2.0, 3.0, 4.0]
            .iter()
            .map(|&x| nines_label(x))
            .collect();
        assert_eq!(labels, ["50", "90", "99", "99.9", "99.99"]);
    }

    #[test]
    fn numbers_and_durations_print_without_noise() {
        assert_eq!(fmt_num(0.05), "0.05");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_num(10.0), "10");
        assert_eq!(fmt_num(1200.0), "1200");
        assert_eq!(fmt_num(0.3), "0.3");
        assert_eq!(fmt_pm(0.3, 0.0536), "0.300 ± 0.054");
        assert_eq!(fmt_pm(2900.0, 373.0), "2900 ± 373");
        assert_eq!(fmt_pm(310.0, 39.9), "310 ± 40");
        assert_eq!(fmt_pm(7.0, 0.0), "7");
        assert_eq!(fmt_ns(500.0), "500 ns");
        assert_eq!(fmt_ns(20_000.0), "20 µs");
        assert_eq!(fmt_ns(1_500_000.0), "1.5 ms");
        assert_eq!(fmt_ns(2e9), "2 s");
    }

    #[test]
    fn log_axes_always_carry_two_labelled_ticks() {
        for (a, b) in [(1.0, 1.1), (0.3, 2.0), (0.02, 80.0), (5e3, 4e7), (7.0, 7.0)] {
            let (lo, hi, t) = log_axis(a, b);
            assert!(lo <= a && hi >= b, "{a}..{b}: {lo}..{hi}");
            assert!(t.major.len() >= 2, "{a}..{b}: {:?}", t.major);
            assert!(t.major.iter().all(|&x| x >= lo * 0.999 && x <= hi * 1.001));
        }
        let (_, _, t) = log_axis(5e3, 4e7);
        assert!(t.major.contains(&1e4) && t.major.contains(&1e7));
        // Found by the plot_data fuzzer: a subnormal minimum padded to 0 took log10 to -inf
        // and the decade count overflowed; the largest finite maximum padded to inf.
        for (a, b) in [
            (5e-324, 1.0),
            (1e-310, 1e-309),
            (1.0, f64::MAX),
            (5e-324, f64::MAX),
        ] {
            let (lo, hi, t) = log_axis(a, b);
            assert!(
                lo > 0.0 && hi.is_finite() && lo < hi,
                "{a}..{b}: {lo}..{hi}"
            );
            assert!(t.major.len() >= 2, "{a}..{b}: {:?}", t.major);
        }
    }

    #[test]
    fn linear_axes_step_by_one_two_five() {
        let (hi, t) = linear_axis(0.0, 9.3, 5);
        assert_eq!(t.major, vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(hi, 10.0);
        let (hi, _) = linear_axis(0.0, 1.0, 5);
        assert!((hi - 1.0).abs() < 1e-12);
        let (hi, t) = linear_axis(5.3, 64.0, 6);
        assert_eq!(t.major, vec![10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]);
        assert_eq!(hi, 70.0);
    }

    #[test]
    fn linear_axes_survive_ranges_no_step_can_divide() {
        // A subnormal top made the step 0 and the tick range 0..=i64::MAX (never ending).
        for (lo, hi) in [
            (0.0, 5e-324),
            (0.0, 1e-310),
            (1.8e10, 1.8e10 + 1e-6),
            (0.0, f64::MAX),
        ] {
            let (top, t) = linear_axis(lo, hi, 6);
            assert!(
                top >= hi || !top.is_finite() || top > lo,
                "{lo}..{hi}: {top}"
            );
            assert!(
                t.major.len() <= 30 && t.minor.len() <= 30,
                "{lo}..{hi}: {t:?}"
            );
        }
    }

    #[test]
    fn far_off_values_map_near_the_plot() {
        let a = Axis::new(0.0, 10.0, linear_axis(0.0, 10.0, 5).1);
        assert_eq!(a.map(&5.0, (100, 200)), 150);
        for v in [1e300, -1e300, f64::MAX] {
            let px = a.map(&v, (100, 200));
            assert!((-400..=700).contains(&px), "{v}: {px}");
        }
    }

    #[test]
    fn labels_are_pushed_apart_and_kept_inside() {
        let out = spread_labels(&[100, 102, 50, 101], 18, 0, 200);
        let mut s = out.clone();
        s.sort();
        for w in s.windows(2) {
            assert!(w[1] - w[0] >= 18, "{out:?}");
        }
        assert_eq!(out[2], 50);
        let out = spread_labels(&[195, 198, 199], 20, 0, 200);
        assert!(out.iter().all(|&y| y <= 200), "{out:?}");
    }
}
