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

/// Paul Tol's "bright" blue.
pub(super) const TOL_BLUE: RGBColor = RGBColor(68, 119, 170);
/// Paul Tol's "bright" cyan.
pub(super) const TOL_CYAN: RGBColor = RGBColor(102, 204, 238);
/// Paul Tol's "vibrant" red.
pub(super) const TOL_RED: RGBColor = RGBColor(204, 51, 17);
/// Paul Tol's "muted" sand.
pub(super) const TOL_SAND: RGBColor = RGBColor(221, 204, 119);
/// Paul Tol's "muted" indigo.
pub(super) const TOL_INDIGO: RGBColor = RGBColor(51, 34, 136);
/// Paul Tol's "muted" wine.
pub(super) const TOL_WINE: RGBColor = RGBColor(136, 34, 85);

/// Line colours in the order runs take them: Okabe–Ito and Paul Tol colours chosen so that
/// every pair stays apart (CIELAB ΔE ≥ 24, `cvd.rs`) for normal vision and
/// under simulated protanopia, deuteranopia and tritanopia, each dark enough for a line on
/// white.
pub(super) const LINE_COLOURS: [RGBColor; 7] = [
    OI_BLUE, OI_ORANGE, TOL_WINE, OI_SKY, TOL_RED, TOL_INDIGO, INK,
];

/// Fill colours for stacked or grouped categories (stages, orders, states), in order;
/// neighbours differ in lightness as well as hue, and every pair stays apart under the
/// same colour-vision simulations as [`LINE_COLOURS`] (the Okabe–Ito orange and vermillion
/// of "crypt queue wait" and "block queue wait" became two olives under deuteranopia).
pub(super) const FILL_COLOURS: [RGBColor; 8] = [
    TOL_BLUE, TOL_SAND, TOL_RED, TOL_CYAN, TOL_WINE, OI_ORANGE, TOL_INDIGO, INK,
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
/// lengths 7, 4 and 6, so the first 84 series all differ; the first 7 differ in colour too.
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

/// An axis description or heading shortened to at most `room` px in `style`: whole when it
/// fits, else without its closing `(…)`, then without its last `, …` clauses, and only then cut
/// with an ellipsis. At [`super::SIZE`] every description fits whole; `qsim serve` draws its
/// plots at the size of their box on the page, as narrow as 480 × 320 px, where the type keeps
/// its pixel size and a long description must give up its asides.
pub(super) fn fit_desc<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    text: &str,
    style: &TextStyle,
    room: i32,
) -> Drawn<String, DB> {
    let mut t = clip_chars(text, MAX_TEXT_CHARS);
    loop {
        if text_width(root, &t, style)? <= room {
            return Ok(t);
        }
        let cut = t
            .strip_suffix(')')
            .and_then(|s| s.rfind(" ("))
            .or_else(|| t.rfind(", "));
        match cut {
            Some(at) if at > 0 => t.truncate(at),
            _ => return fit_text(root, &t, style, room),
        }
    }
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
    let key = code_key(data);
    if key.is_empty() {
        return Ok(root.margin(TITLE_BAND, FOOTER_BAND, SIDE, SIDE));
    }
    let mut px = SMALL_PX;
    let mut key_style = font(px, GREY, HPos::Center, VPos::Center);
    while px > 12.0 && text_width(root, &key, &key_style)? > w - 2 * SIDE {
        px -= 1.0;
        key_style = font(px, GREY, HPos::Center, VPos::Center);
    }
    text(
        root,
        &key,
        (w / 2, TITLE_BAND + KEY_BAND / 2 - 4),
        &key_style,
    )?;
    Ok(root.margin(TITLE_BAND + KEY_BAND, FOOTER_BAND, SIDE, SIDE))
}

/// Height of the line under the title that spells out the flag codes, px.
pub(super) const KEY_BAND: i32 = 22;

/// The flag codes that `data`'s run labels use, spelt out (`flags: sc same_cpu_crypt ·
/// nr no_read_workqueue`), or nothing when no label is coded. [`frame`] prints it under
/// the title, so a coded label is never drawn without its key.
pub(super) fn code_key(data: &PlotData) -> String {
    let labels = data.runs.iter().map(|r| {
        // A twin's "(= …)" names another run, whose own label counts for it.
        r.label.split(" (= ").next().unwrap_or_default()
    });
    let used = crate::report::flags::codes_used(labels);
    if used.is_empty() {
        return String::new();
    }
    let list: Vec<String> = used.iter().map(|(c, n)| format!("{c} {n}")).collect();
    format!("dm-crypt flags: {}", list.join(" · "))
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

/// Height of one line of a [`name_list`], px.
pub(super) const LIST_ROW: i32 = 21;

/// Draws a bold `title` and then `names` from pixel `(x, y)` down, as many to a line as fit
/// in `max_w` (separated by two spaces, none split or cut unless alone too wide for a line).
/// Returns the height used.
pub(super) fn name_list<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    (x, y): (i32, i32),
    max_w: i32,
    title: &str,
    names: &[&str],
) -> Drawn<i32, DB> {
    let ts = bold(LEGEND_PX, INK, HPos::Left, VPos::Center);
    let mut cy = y + LEGEND_ROW / 2;
    text(root, &fit_text(root, title, &ts, max_w)?, (x, cy), &ts)?;
    cy += LEGEND_ROW / 2 + LIST_ROW / 2;
    let style = font(SMALL_PX, INK, HPos::Left, VPos::Center);
    let gap = text_width(root, "  ", &style)?;
    let mut cx = x;
    for n in names {
        let name = fit_text(root, n, &style, max_w)?;
        let w = text_width(root, &name, &style)?;
        if cx > x && cx + w > x + max_w {
            cx = x;
            cy += LIST_ROW;
        }
        text(root, &name, (cx, cy), &style)?;
        cx += w + gap;
    }
    Ok(cy + LIST_ROW / 2 - y)
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
// Axes

// Tick positions and number formats are pure maths, in `scale.rs`; the plots get them from
// here with the rest of the look.
pub(super) use super::scale::*;

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

/// The x and y axis descriptions of `chart` (built on `area`), each fitted by [`fit_desc`] to
/// the length of its axis.
pub(super) fn axis_descs<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    chart: &AxisChart<'_, DB>,
    x: &str,
    y: &str,
) -> Drawn<(String, String), DB> {
    let (w, h) = chart.plotting_area().dim_in_pixel();
    let style = font(DESC_PX, INK, HPos::Center, VPos::Center);
    Ok((
        fit_desc(area, x, &style, w as i32)?,
        fit_desc(area, y, &style, h as i32)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_off_values_map_near_the_plot() {
        let a = Axis::new(0.0, 10.0, linear_axis(0.0, 10.0, 5).1);
        assert_eq!(a.map(&5.0, (100, 200)), 150);
        for v in [1e300, -1e300, f64::MAX] {
            let px = a.map(&v, (100, 200));
            assert!((-400..=700).contains(&px), "{v}: {px}");
        }
    }
}
