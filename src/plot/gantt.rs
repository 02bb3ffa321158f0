//! The Gantt chart of a [`Trace`]: one row per lane (threads, CPUs, the crypto engine,
//! kswapd, device channels, queues) over the traced window's simulated time, each bio drawn
//! where it was as it moved from stage to stage, reads and writes told apart, waiting lighter
//! than service; a chosen bio highlighted with what it waited behind. PNG and SVG here;
//! [`super::ascii::gantt`] draws the same rows in plain text.
//!
//! The analysis both forms share lives here too: the window ([`Window`]), spans clipped to it
//! and a queue lane's overlapping spans packed into sub-rows ([`lanes`]), how a span looks
//! ([`look`]), and the highlighted bio's waits and the spans it waited behind ([`focus`], from
//! [`crate::report::trace::waited_behind`], the analysis the event log prints).

use super::style::*;
use super::{PlotError, WIDTH, draw_err, fonts};
use crate::model::base::bio::Dir;
use crate::model::base::obs::Stage;
use crate::model::observe::trace::{Activity, LaneKind, Trace};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use std::path::Path;

/// What to draw besides the trace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GanttOptions {
    /// The chart's title (the lead line; a truncated trace adds a note to it).
    pub title: String,
    /// A bio to highlight (an index into [`Trace::bios`]), with what it waited behind.
    pub highlight: Option<u32>,
    /// The chart's width, px; `None` is [`WIDTH`], what `qsim trace` writes (`qsim serve` draws
    /// it at the width of its box; the caller bounds it).
    pub width: Option<u32>,
}

impl GanttOptions {
    fn width(&self) -> u32 {
        self.width.unwrap_or(WIDTH)
    }
}

/// Most sub-rows a queue lane gets; further waiting bios are counted (`+N`), not drawn.
pub(super) const MAX_SUB_ROWS: usize = 6;

// ---------------------------------------------------------------------------------------
// Analysis shared with the ASCII form

/// The drawn time range, ns: the trace's window, up to where recording stopped if it was
/// truncated; never empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Window {
    pub from: u64,
    pub end: u64,
}

impl Window {
    /// The window of `trace`.
    pub fn of(trace: &Trace) -> Window {
        let from = trace.from.as_ns();
        let end = trace.truncated.unwrap_or(trace.to).min(trace.to).as_ns();
        Window {
            from,
            end: end.max(from.saturating_add(1)),
        }
    }

    /// `[start, end)` cut to the window, or `None` when nothing of it is inside.
    pub fn clip(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        let (a, b) = (start.max(self.from), end.min(self.end));
        (b > a).then_some((a, b))
    }

    /// Length, ns (at least 1).
    pub fn len(&self) -> u64 {
        self.end - self.from
    }
}

/// A span cut to the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Bar {
    /// Index into [`Trace::spans`].
    pub span: usize,
    pub start: u64,
    pub end: u64,
    pub what: Activity,
}

/// One lane's bars in rows: one row, or for a queue up to [`MAX_SUB_ROWS`] packed sub-rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LaneRows {
    pub name: String,
    pub kind: LaneKind,
    /// At least one row.
    pub rows: Vec<Vec<Bar>>,
    /// Bars that found no free sub-row under the cap (a queue longer than the cap).
    pub hidden: usize,
}

/// Every lane of `trace` with its spans clipped to the window, in lane order; a queue
/// lane's spans packed greedily by start time into the first sub-row free at that start,
/// at most `cap` sub-rows, the `first` bio's own spans and its pieces' placed before any other
/// so a long queue cannot hide the highlighted bio. Spans on lanes the trace does not have are left out.
pub(super) fn lanes(trace: &Trace, cap: usize, first: Option<u32>) -> Vec<LaneRows> {
    let w = Window::of(trace);
    let mut bars: Vec<Vec<Bar>> = vec![Vec::new(); trace.lanes.len()];
    for (i, s) in trace.spans.iter().enumerate() {
        let Some((start, end)) = w.clip(s.start.as_ns(), s.end.as_ns()) else {
            continue;
        };
        if let Some(v) = bars.get_mut(s.lane as usize) {
            v.push(Bar {
                span: i,
                start,
                end,
                what: s.what,
            });
        }
    }
    let mine = |b: &Bar| match (b.what, first) {
        (Activity::Bio { bio, .. }, Some(k)) => trace.is_of(bio, k),
        _ => false,
    };
    trace
        .lanes
        .iter()
        .zip(bars)
        .map(|(lane, mut bars)| {
            bars.sort_by_key(|b| (b.start, b.end, b.span));
            let (rows, hidden) = if lane.kind == LaneKind::Queue {
                pack(bars, cap.max(1), &mine)
            } else {
                (vec![bars], 0)
            };
            LaneRows {
                name: lane.name.clone(),
                kind: lane.kind,
                rows,
                hidden,
            }
        })
        .collect()
}

/// Greedy interval packing of `bars` (sorted by start). The highlighted bio's bars (`mine`:
/// the bio and, when it was split, its pieces, which may overlap one another) are packed
/// first, from the top row down, so a long queue cannot hide them; then each other bar goes
/// into the first row whose last bar ended by its start and whose highlighted bars it does not
/// overlap. With every one of `cap` rows busy a bar is counted as hidden.
fn pack(bars: Vec<Bar>, cap: usize, mine: &dyn Fn(&Bar) -> bool) -> (Vec<Vec<Bar>>, usize) {
    let (top, rest): (Vec<Bar>, Vec<Bar>) = bars.into_iter().partition(|b| mine(b));
    let mut rows = Rows {
        rows: vec![Vec::new()],
        ends: vec![0],
        cap,
        hidden: 0,
    };
    for b in top {
        rows.place(b, |_| true);
    }
    // Phase two: each row's end restarts; a bar must also clear the row's highlighted bars.
    let fixed: Vec<Vec<Bar>> = rows.rows.clone();
    rows.ends.fill(0);
    for b in rest {
        let (start, end) = (b.start, b.end);
        rows.place(b, |k| {
            fixed
                .get(k)
                .is_none_or(|f| f.iter().all(|t| t.end <= start || t.start >= end))
        });
    }
    let Rows {
        mut rows, hidden, ..
    } = rows;
    for row in &mut rows {
        row.sort_by_key(|b| (b.start, b.end, b.span));
    }
    (rows, hidden)
}

/// Sub-rows being packed: per row its bars and the end of the last one placed.
struct Rows {
    rows: Vec<Vec<Bar>>,
    ends: Vec<u64>,
    cap: usize,
    hidden: usize,
}

impl Rows {
    /// Puts `b` in the first row free at its start that `fits`, a new row under the cap, or
    /// counts it hidden.
    fn place(&mut self, b: Bar, fits: impl Fn(usize) -> bool) {
        match (0..self.rows.len()).find(|&k| self.ends[k] <= b.start && fits(k)) {
            Some(k) => {
                self.ends[k] = b.end;
                self.rows[k].push(b);
            }
            None if self.rows.len() < self.cap => {
                self.ends.push(b.end);
                self.rows.push(vec![b]);
            }
            None => self.hidden += 1,
        }
    }
}

/// How a bar is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Look {
    /// Bio `bio`, read or write, waiting (lighter) or in service.
    Bio { bio: u32, dir: Dir, waiting: bool },
    /// A thread's or kswapd's state.
    State(&'static str),
    /// Tasks runnable on the CPUs.
    Runnable(u32),
}

/// Whether a bio in `stage` on a lane of `kind` is waiting rather than being served: always
/// on a queue lane, never on a device or engine lane; on a thread, while it sleeps for a
/// request or waits in a queue (a thread lane showing the kcryptd_io hop is the io thread
/// running it).
pub(super) fn waiting(kind: LaneKind, stage: Stage) -> bool {
    match kind {
        LaneKind::Queue => true,
        LaneKind::Device | LaneKind::Engine => false,
        _ => matches!(
            stage,
            Stage::CryptQueue | Stage::PoolSleep | Stage::BlockQueue
        ),
    }
}

/// How `what` on a lane of `kind` is drawn (a bio the trace does not list counts as a read).
pub(super) fn look(trace: &Trace, kind: LaneKind, what: Activity) -> Look {
    match what {
        Activity::Bio { bio, stage } => Look::Bio {
            bio,
            dir: trace.bios.get(bio as usize).map_or(Dir::Read, |b| b.dir),
            waiting: waiting(kind, stage),
        },
        Activity::State(s) => Look::State(s),
        Activity::Runnable(n) => Look::Runnable(n),
    }
}

/// The highlighted bio: its index, the spans it waited behind, and a one-line summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Focus {
    pub bio: u32,
    /// The bio and its pieces, when it was split: the bars drawn as the highlighted bio's.
    pub family: Vec<u32>,
    pub blockers: Vec<usize>,
    pub summary: String,
}

/// `4 KiB`, `512 KiB`, `1 MiB`, `512 B`.
pub(super) fn size(bytes: u32) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 => format!("{} KiB", fmt_num(f64::from(b) / 1024.0)),
        b => format!("{b} B"),
    }
}

/// `#2 read 4 KiB`.
fn bio_name(trace: &Trace, bio: u32) -> String {
    match trace.bios.get(bio as usize) {
        Some(b) => {
            let dir = if b.dir == Dir::Read { "read" } else { "write" };
            format!("#{bio} {dir} {}", size(b.bytes))
        }
        None => format!("#{bio}"),
    }
}

/// The highlighted bio's focus, or `None` without a highlight. The summary reads
/// `#2 read 4 KiB from job reader, 18.1 ms: crypt queue wait 17.6 ms; behind #0 write 512 KiB`
/// (the time after the origin is issue to completion, when it completed).
pub(super) fn focus(trace: &Trace, highlight: Option<u32>) -> Option<Focus> {
    let bio = highlight?;
    let Some(b) = trace.bios.get(bio as usize) else {
        return Some(Focus {
            bio,
            family: vec![bio],
            blockers: Vec::new(),
            summary: format!("no bio #{bio} in this trace"),
        });
    };
    let ms = |ns: u64| format!("{} ms", fmt_num(ns as f64 / 1e6));
    let mut head = format!("{} from {}", bio_name(trace, bio), b.origin);
    if let Some(done) = b.completed {
        head.push_str(&format!(
            ", {}",
            ms(done.saturating_since(b.issued).as_ns())
        ));
    }
    let waits: Vec<String> = [
        Stage::CryptQueue,
        Stage::IoQueue,
        Stage::PoolSleep,
        Stage::BlockQueue,
    ]
    .iter()
    .filter_map(|&st| {
        let ns: u64 = b
            .stages
            .iter()
            .filter(|s| s.stage == st)
            .map(|s| s.end.saturating_since(s.start).as_ns())
            .sum();
        (ns > 0).then(|| format!("{} {}", st.label(), ms(ns)))
    })
    .collect();
    let waits = if waits.is_empty() {
        "no wait".to_string()
    } else {
        waits.join(", ")
    };
    let blockers = crate::report::trace::waited_behind(trace, bio);
    let mut behind: Vec<u32> = Vec::new();
    for b in &blockers {
        if !behind.contains(&b.bio) {
            behind.push(b.bio);
        }
    }
    let mut summary = format!("{head}: {waits}");
    if !behind.is_empty() {
        let names: Vec<String> = behind.iter().take(4).map(|&o| bio_name(trace, o)).collect();
        summary.push_str(&format!("; behind {}", names.join(", ")));
        if behind.len() > 4 {
            summary.push_str(&format!(" and {} more", behind.len() - 4));
        }
    }
    let mut family = trace.pieces(bio);
    family.push(bio);
    Some(Focus {
        bio,
        family,
        blockers: blockers.iter().map(|b| b.span).collect(),
        summary,
    })
}

/// The title with a note when recording stopped early.
pub(super) fn title(trace: &Trace, opts: &GanttOptions) -> String {
    match trace.truncated {
        Some(t) => format!(
            "{} (truncated at {} ms: span limit reached)",
            opts.title,
            fmt_num(t.as_ns() as f64 / 1e6)
        ),
        None => opts.title.clone(),
    }
}

// ---------------------------------------------------------------------------------------
// Look of the PNG and SVG

/// Height of a lane with one row, px.
const LANE_H: i32 = 30;
/// Height of one sub-row of a queue lane, px.
const SUB_H: i32 = 20;
/// Extra gap where the lane kind changes (threads, CPUs, engine, kswapd, devices, queues), px.
const GROUP_GAP: i32 = 10;
/// Height of the highlighted bio's summary line under the title, px.
const SUBTITLE_H: i32 = 30;
/// Height of the time axis (tick labels and description) under the rows, px.
const AXIS_H: i32 = 62;
/// Lane labels, px.
const LABEL_PX: f64 = 18.0;
/// Text inside bars, px.
const BAR_PX: f64 = 14.0;
/// Widest lane label, px.
const MAX_LABEL_W: i32 = 240;
/// With at most this many marks, their text is drawn beside them.
const FEW_MARKS: usize = 3;

/// `c` moved `f` of the way to white.
fn lighten(c: RGBColor, f: f64) -> RGBColor {
    let l = |v: u8| (f64::from(v) + (255.0 - f64::from(v)) * f).round() as u8;
    RGBColor(l(c.0), l(c.1), l(c.2))
}

/// Reads in service.
const READ: RGBColor = OI_BLUE;
/// Writes in service.
const WRITE: RGBColor = OI_VERMILLION;
/// The fill of a waiting read or write: its colour, lightened.
fn waiting_colour(c: RGBColor) -> RGBColor {
    lighten(c, 0.62)
}
/// Runnable tasks on the CPUs (full: oversubscribed).
fn runnable_colour(oversubscribed: bool) -> RGBColor {
    if oversubscribed {
        OI_GREEN
    } else {
        lighten(OI_GREEN, 0.45)
    }
}
/// The grey tones of states, in the order the trace first shows them.
const STATE_GREYS: [RGBColor; 4] = [
    RGBColor(160, 160, 160),
    RGBColor(208, 208, 208),
    RGBColor(115, 115, 115),
    RGBColor(232, 232, 232),
];
/// Marks on their lanes.
const MARK_COLOUR: RGBColor = OI_PURPLE;

/// The states the trace shows, in order of first sight.
pub(super) fn states(trace: &Trace) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for s in &trace.spans {
        if let Activity::State(n) = s.what
            && !out.contains(&n)
        {
            out.push(n);
        }
    }
    out
}

/// The fill of `look` (states by their position in `states`) and whether the bar spans the
/// row's full height (`Runnable` covers min(n, cpus)/cpus of it).
fn fill_of(look: Look, states: &[&str], cpus: u32) -> (RGBColor, f64) {
    match look {
        Look::Bio { dir, waiting, .. } => {
            let c = if dir == Dir::Read { READ } else { WRITE };
            (if waiting { waiting_colour(c) } else { c }, 1.0)
        }
        Look::State(s) => {
            let k = states.iter().position(|&x| x == s).unwrap_or(0);
            (STATE_GREYS[k % STATE_GREYS.len()], 1.0)
        }
        Look::Runnable(n) => {
            let cpus = cpus.max(1);
            (
                runnable_colour(n > cpus),
                f64::from(n.min(cpus)) / f64::from(cpus),
            )
        }
    }
}

/// The text a bar carries when wide enough: the bio number, the state's name, or the
/// runnable count when it exceeds the CPUs.
fn bar_text(look: Look, cpus: u32) -> Option<String> {
    match look {
        Look::Bio { bio, .. } => Some(format!("#{bio}")),
        Look::State(s) => Some(s.replace('_', " ")),
        Look::Runnable(n) if n > cpus.max(1) => Some(n.to_string()),
        Look::Runnable(_) => None,
    }
}

/// The legend's entries.
fn legend_entries(trace: &Trace, focus: Option<&Focus>) -> Vec<Entry> {
    let mut e = vec![
        Entry::new("read in service", Swatch::Box(READ)),
        Entry::new("read waiting", Swatch::Box(waiting_colour(READ))),
        Entry::new("write in service", Swatch::Box(WRITE)),
        Entry::new("write waiting", Swatch::Box(waiting_colour(WRITE))),
    ];
    let st = states(trace);
    for (k, s) in st.iter().enumerate() {
        e.push(Entry::new(
            s.replace('_', " "),
            Swatch::Box(STATE_GREYS[k % STATE_GREYS.len()]),
        ));
    }
    if trace.lanes.iter().any(|l| l.kind == LaneKind::Cpus) {
        let label = format!("tasks runnable (height: share of {} CPUs)", trace.cpus);
        e.push(Entry::new(label, Swatch::Box(runnable_colour(false))));
    }
    if !trace.marks.is_empty() {
        let label = "event (in the event log)";
        e.push(Entry::new(
            label,
            Swatch::Mark(Marker::TriangleDown, MARK_COLOUR),
        ));
    }
    if let Some(f) = focus {
        e.push(Entry::new(
            format!("#{} waiting", f.bio),
            Swatch::Box(lighten(OI_YELLOW, 0.72)),
        ));
        e.push(Entry::new(
            format!("#{} highlighted", f.bio),
            Swatch::Rule {
                colour: INK,
                dash: &[],
            },
        ));
        if !f.blockers.is_empty() {
            e.push(Entry::new(
                format!("what #{} waited behind", f.bio),
                Swatch::Rule {
                    colour: INK,
                    dash: &[5.0, 4.0],
                },
            ));
        }
    }
    e
}

/// Height of a lane's rows, px.
fn lane_height(l: &LaneRows) -> i32 {
    if l.kind == LaneKind::Queue {
        (l.rows.len() as i32 * SUB_H + 6).max(LANE_H)
    } else {
        LANE_H
    }
}

/// Each lane's top and bottom, px, from `top` down, with a gap where the kind changes.
fn lane_ys(lanes: &[LaneRows], top: i32) -> Vec<(i32, i32)> {
    let mut y = top;
    let mut out = Vec::with_capacity(lanes.len());
    for (k, l) in lanes.iter().enumerate() {
        if k > 0 && lanes[k - 1].kind != l.kind {
            y += GROUP_GAP;
        }
        let h = lane_height(l);
        out.push((y, y + h));
        y += h;
    }
    out
}

/// Row `r`'s top and bottom inside a lane spanning `(y0, y1)`, px.
fn row_ys(l: &LaneRows, (y0, y1): (i32, i32), r: usize) -> (i32, i32) {
    if l.kind == LaneKind::Queue {
        let n = l.rows.len() as i32;
        let top = y0 + (y1 - y0 - n * SUB_H) / 2 + r as i32 * SUB_H;
        (top + 2, top + SUB_H - 2)
    } else {
        (y0 + 4, y1 - 4)
    }
}

/// The page's height for `trace`: title, summary, lanes, axis, legend and footer.
fn page_height(trace: &Trace, opts: &GanttOptions, path: &Path) -> Result<u32, PlotError> {
    let lanes = lanes(trace, MAX_SUB_ROWS, opts.highlight);
    let rows = lane_ys(&lanes, 0).last().map_or(LANE_H, |l| l.1);
    let f = focus(trace, opts.highlight);
    let mut svg = String::new();
    let legend = {
        let root = SVGBackend::with_string(&mut svg, (opts.width(), 100)).into_drawing_area();
        let entries = legend_entries(trace, f.as_ref());
        legend_row_height(&root, opts.width() as i32 - 2 * SIDE, &entries)
            .map_err(|e| draw_err(path, e))?
    };
    let sub = if f.is_some() { SUBTITLE_H } else { 0 };
    Ok((TITLE_BAND + sub + 8 + rows + AXIS_H + legend + 8 + FOOTER_BAND) as u32)
}

/// The time axis of the plot area: pixel x of an instant.
struct Geo {
    left: i32,
    right: i32,
    window: Window,
}

impl Geo {
    fn x(&self, t: u64) -> i32 {
        let f = t.saturating_sub(self.window.from) as f64 / self.window.len() as f64;
        self.left + (f.min(1.0) * f64::from(self.right - self.left)).round() as i32
    }
}

/// Title (shrunk to fit) and the highlighted bio's summary; returns the y below them.
fn header<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    focus: Option<&Focus>,
) -> Drawn<i32, DB> {
    let w = root.dim_in_pixel().0 as i32;
    let mut px = TITLE_PX;
    let mut style = bold(px, INK, HPos::Center, VPos::Center);
    while px > 18.0 && text_width(root, title, &style)? > w - 2 * SIDE {
        px -= 1.0;
        style = bold(px, INK, HPos::Center, VPos::Center);
    }
    let t = fit_text(root, title, &style, w - 2 * SIDE)?;
    text(root, &t, (w / 2, TITLE_BAND / 2), &style)?;
    let Some(f) = focus else {
        return Ok(TITLE_BAND);
    };
    let mut px = DESC_PX;
    let mut style = font(px, INK, HPos::Center, VPos::Center);
    while px > 15.0 && text_width(root, &f.summary, &style)? > w - 2 * SIDE {
        px -= 1.0;
        style = font(px, INK, HPos::Center, VPos::Center);
    }
    let s = fit_text(root, &f.summary, &style, w - 2 * SIDE)?;
    text(root, &s, (w / 2, TITLE_BAND + SUBTITLE_H / 2 - 4), &style)?;
    Ok(TITLE_BAND + SUBTITLE_H)
}

/// Lane backgrounds (alternate lanes tinted), separators between kinds, and the labels
/// (a queue's with `+N` when bios were left out).
fn lane_frames<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    lanes: &[LaneRows],
    ys: &[(i32, i32)],
    geo: &Geo,
) -> Drawn<(), DB> {
    let style = font(LABEL_PX, INK, HPos::Right, VPos::Center);
    let note = font(SMALL_PX, GREY, HPos::Right, VPos::Center);
    for (k, (l, &(y0, y1))) in lanes.iter().zip(ys).enumerate() {
        if k % 2 == 1 {
            rect(
                root,
                (geo.left, y0),
                (geo.right, y1),
                RGBColor(244, 244, 244).filled(),
            )?;
        }
        if k > 0 && lanes[k - 1].kind != l.kind {
            let y = y0 - GROUP_GAP / 2;
            polyline(root, &[(SIDE, y), (geo.right, y)], GREY.mix(0.5), 1, &[])?;
        }
        let room = geo.left - SIDE - 10;
        let name = fit_text(root, &l.name, &style, room)?;
        let mid = (y0 + y1) / 2;
        if l.hidden > 0 {
            text(root, &name, (geo.left - 10, mid - 9), &style)?;
            let more = format!("+{} more waiting", l.hidden);
            text(root, &more, (geo.left - 10, mid + 10), &note)?;
        } else {
            text(root, &name, (geo.left - 10, mid), &style)?;
        }
    }
    Ok(())
}

/// Vertical grid lines over the lanes from `top` to `bottom` and the time axis under them:
/// 1-2-5 ticks in ms.
fn time_axis<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    geo: &Geo,
    (top, bottom): (i32, i32),
) -> Drawn<(), DB> {
    let (lo, hi) = (geo.window.from as f64 / 1e6, geo.window.end as f64 / 1e6);
    let target = ((geo.right - geo.left) / 110).max(2) as usize;
    let (_, ticks) = linear_axis(lo, hi, target);
    let inside = |v: &f64| *v >= lo - 1e-9 && *v <= hi + 1e-9;
    let px = |v: f64| geo.x(((v * 1e6).round() as u64).max(geo.window.from));
    for v in ticks.minor.iter().filter(|v| inside(v)) {
        let x = px(*v);
        polyline(
            root,
            &[(x, top), (x, bottom)],
            RGBColor(232, 232, 232).to_rgba(),
            1,
            &[],
        )?;
    }
    let label = font(TICK_PX, INK, HPos::Center, VPos::Top);
    let flush = font(TICK_PX, INK, HPos::Right, VPos::Top);
    let step = ticks
        .major
        .get(1)
        .zip(ticks.major.first())
        .map(|(b, a)| b - a);
    for v in ticks.major.iter().filter(|v| inside(v)) {
        let x = px(*v);
        polyline(
            root,
            &[(x, top), (x, bottom)],
            RGBColor(200, 200, 200).to_rgba(),
            1,
            &[],
        )?;
        polyline(root, &[(x, bottom), (x, bottom + 6)], INK.to_rgba(), 1, &[])?;
        // A label that would run past the picture's edge ends at its tick instead.
        let tick = fmt_tick(*v, step.unwrap_or(0.0));
        let half = text_width(root, &tick, &label)? / 2;
        let width = root.dim_in_pixel().0 as i32;
        let style = if x + half > width - 2 { &flush } else { &label };
        text(root, &tick, (x, bottom + 9), style)?;
    }
    polyline(
        root,
        &[(geo.left, bottom), (geo.right, bottom)],
        INK.to_rgba(),
        1,
        &[],
    )?;
    let desc = font(DESC_PX, INK, HPos::Center, VPos::Top);
    let mid = (geo.left + geo.right) / 2;
    text(root, "simulated time, ms", (mid, bottom + 34), &desc)
}

/// Every bar of every lane, with its text where it fits.
fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    trace: &Trace,
    lanes: &[LaneRows],
    ys: &[(i32, i32)],
    geo: &Geo,
) -> Drawn<(), DB> {
    let st = states(trace);
    for (l, &lane_y) in lanes.iter().zip(ys) {
        for (r, row) in l.rows.iter().enumerate() {
            let (y0, y1) = row_ys(l, lane_y, r);
            for b in row {
                let look = look(trace, l.kind, b.what);
                let (colour, share) = fill_of(look, &st, trace.cpus);
                let (x0, x1) = (geo.x(b.start), geo.x(b.end).max(geo.x(b.start) + 1));
                let top = y1 - (f64::from(y1 - y0) * share).round() as i32;
                if top < y1 {
                    rect(root, (x0, top), (x1, y1), colour.filled())?;
                }
                if x1 - x0 >= 4 {
                    rect(root, (x0, top), (x1, y1), WHITE.stroke_width(1))?;
                }
                // No text fits in under 16 px: skip measuring (a trace has thousands of bars).
                let Some(t) = bar_text(look, trace.cpus).filter(|_| x1 - x0 >= 16) else {
                    continue;
                };
                let style = font(BAR_PX, text_on(colour), HPos::Center, VPos::Center);
                if text_width(root, &t, &style)? + 6 <= x1 - x0 {
                    text(root, &t, ((x0 + x1) / 2, (y0 + y1) / 2), &style)?;
                }
            }
        }
    }
    Ok(())
}

/// A light band over every lane while the highlighted bio waited (its waiting stages), so
/// what the rest of the machine did meanwhile stands out.
fn wait_bands<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    trace: &Trace,
    geo: &Geo,
    bio: u32,
    (top, bottom): (i32, i32),
) -> Drawn<(), DB> {
    let Some(b) = trace.bios.get(bio as usize) else {
        return Ok(());
    };
    let waits = [
        Stage::CryptQueue,
        Stage::IoQueue,
        Stage::BlockQueue,
        Stage::PoolSleep,
    ];
    for s in b.stages.iter().filter(|s| waits.contains(&s.stage)) {
        if let Some((a, e)) = geo.window.clip(s.start.as_ns(), s.end.as_ns()) {
            let band = OI_YELLOW.mix(0.22).filled();
            rect(
                root,
                (geo.x(a), top),
                (geo.x(e).max(geo.x(a) + 1), bottom),
                band,
            )?;
        }
    }
    Ok(())
}

/// The highlighted bio's bars outlined thick (black on a yellow halo) and the bars it
/// waited behind outlined dashed.
fn draw_focus<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    lanes: &[LaneRows],
    ys: &[(i32, i32)],
    geo: &Geo,
    f: &Focus,
) -> Drawn<(), DB> {
    for (l, &lane_y) in lanes.iter().zip(ys) {
        for (r, row) in l.rows.iter().enumerate() {
            let (y0, y1) = row_ys(l, lane_y, r);
            for b in row {
                let (x0, x1) = (geo.x(b.start), geo.x(b.end).max(geo.x(b.start) + 1));
                let mine = matches!(b.what, Activity::Bio { bio, .. } if f.family.contains(&bio));
                if mine {
                    rect(
                        root,
                        (x0 - 3, y0 - 3),
                        (x1 + 3, y1 + 3),
                        OI_YELLOW.stroke_width(4),
                    )?;
                    rect(
                        root,
                        (x0 - 1, y0 - 1),
                        (x1 + 1, y1 + 1),
                        INK.stroke_width(2),
                    )?;
                } else if f.blockers.contains(&b.span) {
                    let ring = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)];
                    polyline(root, &ring, INK.to_rgba(), 2, &[5.0, 4.0])?;
                }
            }
        }
    }
    Ok(())
}

/// Marks as small triangles at the top of their lanes; their text beside them when there
/// are only a few.
fn draw_marks<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    trace: &Trace,
    ys: &[(i32, i32)],
    geo: &Geo,
) -> Drawn<(), DB> {
    let w = geo.window;
    let shown: Vec<_> = trace
        .marks
        .iter()
        .filter(|m| (w.from..=w.end).contains(&m.at.as_ns()))
        .filter(|m| (m.lane as usize) < ys.len())
        .collect();
    let style = font(BAR_PX, INK, HPos::Left, VPos::Center);
    for m in &shown {
        let x = geo.x(m.at.as_ns());
        let y = ys[m.lane as usize].0 + 4;
        marker(root, Marker::TriangleDown, (x, y), 5, MARK_COLOUR)?;
        if shown.len() <= FEW_MARKS {
            let t = fit_text(root, &m.what, &style, (geo.right - x - 12).max(0))?;
            let tw = text_width(root, &t, &style)?;
            rect(
                root,
                (x + 7, y - 8),
                (x + 11 + tw, y + 8),
                WHITE.mix(0.85).filled(),
            )?;
            text(root, &t, (x + 9, y), &style)?;
        }
    }
    Ok(())
}

/// Draws the whole chart on `root` (of the height [`page_height`] gave).
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    trace: &Trace,
    opts: &GanttOptions,
) -> Drawn<(), DB> {
    root.fill(&WHITE)?;
    let (w, h) = root.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    let f = focus(trace, opts.highlight);
    let top = header(root, &title(trace, opts), f.as_ref())? + 8;
    let lanes = lanes(trace, MAX_SUB_ROWS, opts.highlight);
    let ys = lane_ys(&lanes, top);
    let bottom = ys.last().map_or(top + LANE_H, |l| l.1);
    let style = font(LABEL_PX, INK, HPos::Right, VPos::Center);
    let mut label_w = 0;
    for l in &lanes {
        label_w = label_w.max(text_width(root, &clip_chars(&l.name, 40), &style)?);
    }
    let geo = Geo {
        left: SIDE + label_w.min(MAX_LABEL_W) + 16,
        right: w - SIDE - 12,
        window: Window::of(trace),
    };
    lane_frames(root, &lanes, &ys, &geo)?;
    if let Some(f) = &f {
        wait_bands(root, trace, &geo, f.bio, (top, bottom))?;
    }
    time_axis(root, &geo, (top, bottom))?;
    draw_bars(root, trace, &lanes, &ys, &geo)?;
    if let Some(f) = &f {
        draw_focus(root, &lanes, &ys, &geo, f)?;
    }
    draw_marks(root, trace, &ys, &geo)?;
    if lanes.is_empty() {
        no_data(
            root,
            &root.margin(top, h - bottom, geo.left, SIDE),
            "no lanes",
        )?;
    }
    let entries = legend_entries(trace, f.as_ref());
    legend_row(root, (SIDE, bottom + AXIS_H), w - 2 * SIDE, &entries)?;
    footer(root, trace)
}

/// `policy fifo · 2 CPUs · 5 bios, 3 events` on the left, the qsim version on the right.
fn footer<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, trace: &Trace) -> Drawn<(), DB> {
    let (w, h) = root.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    let y = h - FOOTER_BAND / 2;
    let right = font(SMALL_PX, GREY, HPos::Right, VPos::Center);
    let version = format!("qsim {}", env!("CARGO_PKG_VERSION"));
    text(root, &version, (w - SIDE, y), &right)?;
    let note = format!(
        "policy {} · {} CPUs · {} bios · {} events · a queue's bars: one sub-row per waiting bio (at most {MAX_SUB_ROWS})",
        trace.policy,
        trace.cpus,
        trace.bios.len(),
        trace.marks.len()
    );
    let left = font(SMALL_PX, GREY, HPos::Left, VPos::Center);
    let room = w - 3 * SIDE - text_width(root, &version, &right)?;
    let note = fit_text(root, &note, &left, room)?;
    text(root, &note, (SIDE, y), &left)
}

/// The Gantt chart of `trace` as PNG bytes, [`WIDTH`] px wide (or `opts.width`) and as tall as
/// its lanes need.
pub fn gantt_png(trace: &Trace, opts: &GanttOptions) -> Result<Vec<u8>, PlotError> {
    let path = Path::new("gantt.png");
    fonts(path)?;
    let height = page_height(trace, opts, path)?;
    let width = opts.width();
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        draw(&root, trace, opts).map_err(|e| draw_err(path, e))?;
        root.present().map_err(|e| draw_err(path, e))?;
    }
    super::encode_png(&rgb, width, height, path)
}

/// The Gantt chart of `trace` as an SVG document, the same picture as [`gantt_png`].
pub fn gantt_svg(trace: &Trace, opts: &GanttOptions) -> Result<String, PlotError> {
    let path = Path::new("gantt.svg");
    fonts(path)?;
    let height = page_height(trace, opts, path)?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (opts.width(), height)).into_drawing_area();
        draw(&root, trace, opts).map_err(|e| draw_err(path, e))?;
        root.present().map_err(|e| draw_err(path, e))?;
    }
    Ok(svg)
}

#[cfg(test)]
pub(super) mod fixture;

#[cfg(test)]
mod tests;
