//! The Gantt chart of a [`Trace`] in plain text: one line per lane (a queue lane one line per
//! packed sub-row, as many as the PNG draws), one character per column of simulated time, the
//! time axis with tick labels in ms, and a legend. The rows, the packing and the highlighted
//! bio's summary come from [`crate::plot::gantt`], so both forms show the same picture.
//!
//! A column covers `len / cols` of the window; a span fills every column it overlaps, so a
//! short service still shows. Where several spans share a column the highlighted bio wins,
//! then service over waiting, then states and the CPUs' count; among equals the one covering
//! more of the column.

use super::axis::{Axis, Scale};
use super::{MAX_WIDTH, MIN_WIDTH, ascii, wrap_into, x_axis};
use crate::model::base::bio::Dir;
use crate::model::observe::trace::{LaneKind, Trace};
use crate::plot::gantt::{self, Bar, GanttOptions, Look, MAX_SUB_ROWS, Window};
use crate::plot::scale::fmt_num;

/// A column with nothing in it.
pub const IDLE: char = '.';

/// The states' letters: fixed for the model's states, the first free letter of its name for
/// any other (never one the bios or the CPUs use).
fn state_letters(states: &[&'static str]) -> Vec<(&'static str, char)> {
    let mut taken: Vec<char> = vec!['r', 'w'];
    let mut out = Vec::new();
    for &s in states {
        let fixed = match s {
            "pool sleep" => Some('s'),
            "mempool sleep" => Some('m'),
            "crypto backlog" => Some('b'),
            "reclaiming" => Some('k'),
            "congestion_wait" => Some('c'),
            "nap" => Some('n'),
            "asleep" => Some('z'),
            _ => None,
        };
        let free = |c: &char| c.is_ascii_lowercase() && !taken.contains(c);
        let c = fixed
            .filter(free)
            .or_else(|| s.chars().map(|c| c.to_ascii_lowercase()).find(free))
            .or_else(|| ('a'..='z').find(free))
            .unwrap_or('?');
        taken.push(c);
        out.push((s, c));
    }
    out
}

/// The column of instant `t` (ns) among `cols` over window `w`.
pub(crate) fn column(w: Window, cols: usize, t: u64) -> usize {
    let off = u128::from(t.saturating_sub(w.from).min(w.len() - 1));
    (off * cols as u128 / u128::from(w.len())) as usize
}

/// The start of column `c`, ns.
fn column_start(w: Window, cols: usize, c: usize) -> u64 {
    w.from + (u128::from(w.len()) * c as u128 / cols as u128) as u64
}

/// A bar's character and priority (higher wins a shared column).
fn glyph(look: Look, highlight: Option<u32>, letters: &[(&str, char)]) -> (char, u8) {
    match look {
        Look::Bio { bio, waiting, .. } if Some(bio) == highlight => {
            if waiting {
                ('@', 5)
            } else {
                ('#', 6)
            }
        }
        Look::Bio { dir, waiting, .. } => {
            let c = if dir == Dir::Read { 'r' } else { 'w' };
            if waiting {
                (c, 3)
            } else {
                (c.to_ascii_uppercase(), 4)
            }
        }
        Look::State(s) => {
            let c = letters.iter().find(|l| l.0 == s).map_or('?', |l| l.1);
            (c, 2)
        }
        Look::Runnable(0) => (IDLE, 1),
        Look::Runnable(n) => (char::from_digit(n, 10).unwrap_or('+'), 2),
    }
}

/// One row's cells: each column takes the bar of highest priority overlapping it, ties to
/// the one covering more of the column.
fn row_cells(
    trace: &Trace,
    kind: LaneKind,
    row: &[Bar],
    (w, cols): (Window, usize),
    (highlight, letters): (Option<u32>, &[(&str, char)]),
) -> String {
    let mut cells: Vec<(char, u8, u64)> = vec![(IDLE, 0, 0); cols];
    for b in row {
        let (ch, prio) = glyph(gantt::look(trace, kind, b.what), highlight, letters);
        let (first, last) = (column(w, cols, b.start), column(w, cols, b.end - 1));
        for (c, cell) in cells.iter_mut().enumerate().take(last + 1).skip(first) {
            let (c0, c1) = (column_start(w, cols, c), column_start(w, cols, c + 1));
            let cover = b.end.min(c1).saturating_sub(b.start.max(c0));
            if (prio, cover) > (cell.1, cell.2) {
                *cell = (ch, prio, cover);
            }
        }
    }
    cells.into_iter().map(|c| c.0).collect()
}

/// The legend: what each character means, then the marks' count.
fn legend(trace: &Trace, highlight: Option<u32>, letters: &[(&str, char)]) -> String {
    let mut parts = vec![
        "R/r read in service/waiting".to_string(),
        "W/w write in service/waiting".to_string(),
    ];
    if let Some(h) = highlight {
        parts.push(format!("#/@ bio #{h} in service/waiting"));
    }
    if trace.lanes.iter().any(|l| l.kind == LaneKind::Cpus) {
        parts.push(format!(
            "CPUs row: tasks runnable on {} CPUs (+ = 10 or more)",
            trace.cpus
        ));
    }
    parts.push(format!("{IDLE} idle"));
    let mut text = parts.join(", ");
    if !letters.is_empty() {
        let st: Vec<String> = letters.iter().map(|(s, c)| format!("{c} {s}")).collect();
        text.push_str(&format!("; states: {}", st.join(", ")));
    }
    let w = Window::of(trace);
    let marks = trace
        .marks
        .iter()
        .filter(|m| (w.from..=w.end).contains(&m.at.as_ns()))
        .count();
    if marks > 0 {
        text.push_str(&format!(
            "; {marks} events in the window: see the event log"
        ));
    }
    text
}

/// The time axis under the rows: `x_axis`'s line and labels, with ticks at 1-2-5 steps of
/// ms inside the window, each in the column that holds its instant.
fn time_axis(w: Window, lw: usize, cols: usize, out: &mut String) {
    let (lo, hi) = (w.from as f64 / 1e6, w.end as f64 / 1e6);
    let fitted = Axis::fit(Scale::Linear, &[lo, hi])
        .map(|a| a.ticks)
        .unwrap_or_default();
    let ticks = fitted
        .into_iter()
        .filter(|t| t.0 >= lo - 1e-9 && t.0 <= hi + 1e-9)
        .collect();
    // `Axis::cell` rounds over `cols - 1` steps; shifted half a column and stretched so, it
    // gives the column whose interval holds the instant, as the rows do.
    let dt = (hi - lo) / cols as f64;
    let ax = Axis {
        scale: Scale::Linear,
        lo: lo + dt / 2.0,
        hi: lo + dt / 2.0 + dt * (cols.max(2) - 1) as f64,
        ticks,
    };
    x_axis(&ax, lw, cols, out);
}

/// The Gantt chart of `trace` in plain text, lines at most `width` columns (clamped to
/// [`MIN_WIDTH`]..=[`MAX_WIDTH`]), each ending in `\n`: title, the highlighted bio's summary,
/// one line per lane (per sub-row of a queue lane, at most as many as the PNG draws, a `+N`
/// under the label for the rest), the time axis and the legend.
pub fn gantt(trace: &Trace, highlight: Option<u32>, width: usize) -> String {
    let width = width.clamp(MIN_WIDTH, MAX_WIDTH);
    let w = Window::of(trace);
    let opts = GanttOptions {
        title: format!(
            "Gantt chart, policy {}: {}-{} ms",
            trace.policy,
            fmt_num(w.from as f64 / 1e6),
            fmt_num(trace.to.as_ns() as f64 / 1e6)
        ),
        highlight,
        width: None,
    };
    let mut out = String::new();
    wrap_into(&ascii(&gantt::title(trace, &opts)), width, 2, &mut out);
    if let Some(f) = gantt::focus(trace, highlight) {
        wrap_into(&ascii(&f.summary), width, 2, &mut out);
    }
    let lanes = gantt::lanes(trace, MAX_SUB_ROWS, highlight);
    if lanes.is_empty() {
        out.push_str("  (no lanes)\n");
        return out;
    }
    let lw = lanes
        .iter()
        .map(|l| ascii(&l.name).len())
        .max()
        .unwrap_or(0)
        .clamp(4, width / 4);
    let cols = width - lw - 2;
    let letters = state_letters(&gantt::states(trace));
    for l in &lanes {
        for (r, row) in l.rows.iter().enumerate() {
            let label: String = match r {
                0 => ascii(&l.name).chars().take(lw).collect(),
                r if r + 1 == l.rows.len() && l.hidden > 0 => format!("+{}", l.hidden),
                _ => String::new(),
            };
            let cells = row_cells(trace, l.kind, row, (w, cols), (highlight, &letters));
            out.push_str(&format!("{label:<lw$} |{cells}\n"));
        }
    }
    time_axis(w, lw, cols, &mut out);
    let x_label = "simulated time, ms";
    let pad = lw + 2 + cols.saturating_sub(x_label.len()) / 2;
    out.push_str(&format!("{:pad$}{x_label}\n", ""));
    let legend = ascii(&legend(trace, highlight, &letters));
    wrap_into(&format!("  {legend}"), width, 2, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::gantt::fixture::{at, deep_elevator, fixture};

    use crate::plot::ascii::tests::fits;

    /// The lines of `text` that are rows of lane `name` (its first row).
    fn rows_of<'a>(text: &'a str, name: &str, lw: usize) -> Vec<&'a str> {
        let head = format!("{name:<lw$} |");
        text.lines().filter(|l| l.starts_with(&head)).collect()
    }

    #[test]
    fn the_fixture_fits_and_has_a_row_per_lane_and_the_queue_packed() {
        let t = fixture();
        let got = gantt(&t, Some(2), 72);
        if let Ok(p) = std::env::var("QSIM_GANTT_TXT") {
            std::fs::write(p, &got).unwrap();
        }
        fits(&got, 72);
        let lw = "kcryptd_io queue".len();
        for l in t.lanes.iter().filter(|l| l.kind != LaneKind::Queue) {
            assert_eq!(rows_of(&got, &l.name, lw).len(), 1, "{}\n{got}", l.name);
        }
        // crypt queue: #0's tail, #2 then #4 in the first sub-row; #3 and #1 below it.
        let lines: Vec<&str> = got.lines().collect();
        let k = lines
            .iter()
            .position(|l| l.starts_with("crypt queue "))
            .unwrap();
        let blank = format!("{:lw$} |", "");
        assert!(
            lines[k + 1].starts_with(&blank) && lines[k + 2].starts_with(&blank),
            "{got}"
        );
        assert!(lines[k + 3].starts_with("kcryptd_io queue"), "{got}");
        assert!(got.contains("#2 read 4 KiB"), "{got}");
        assert!(
            got.contains("k reclaiming") && got.contains("c congestion_wait"),
            "{got}"
        );
        for w in [30, 45, 200] {
            fits(&gantt(&t, Some(2), w), w.clamp(MIN_WIDTH, MAX_WIDTH));
        }
    }

    #[test]
    fn a_waiting_read_lands_in_the_columns_of_its_instants() {
        let t = fixture();
        let (lw, cols) = (16, 72 - 18);
        // The column holding instant `ms` of the window 100..140 ms.
        let col = |ms: f64| ((ms - 100.0) / 40.0 * cols as f64).floor() as usize;
        for (highlight, wait) in [(None, 'r'), (Some(2), '@')] {
            let got = gantt(&t, highlight, 72);
            let row = rows_of(&got, "crypt queue", lw)[0];
            let cells: Vec<char> = row[lw + 2..].chars().collect();
            // #2 waits from 103.4 to 121 ms; #0's wait ends at 101 ms, #4's starts at 126.2.
            let (a, b) = (col(103.4), col(121.0 - 1e-6));
            assert!(cells[a..=b].iter().all(|&c| c == wait), "{row}");
            assert_eq!(cells[a - 1], IDLE, "{row}");
            assert_eq!(cells[b + 1], IDLE, "{row}");
            assert_eq!(cells[col(100.5)], 'w', "{row}");
            assert_eq!(cells[col(130.0)], 'r', "{row}");
        }
        // Its decrypt on kcryptd (121.0-121.1 ms) shares a column with #0's, #3's and #1's
        // service: highlighted, it wins the column; else the one covering most of it does.
        let kc = |h| gantt(&t, h, 72);
        let cell = |text: &str| {
            rows_of(text, "kcryptd", lw)[0]
                .chars()
                .nth(lw + 2 + col(121.05))
        };
        assert_eq!(cell(&kc(Some(2))), Some('#'));
        assert_eq!(cell(&kc(None)), Some('W'));
    }

    #[test]
    fn a_span_outside_the_window_is_not_drawn() {
        let t = fixture();
        let got = gantt(&t, None, 72);
        // device ch1: #5's device span (90-95 ms) lies before the window; only #2's and #3's
        // (103.2 and 106.2 ms) show.
        let row = rows_of(&got, "device ch1", 16)[0];
        let cells: String = row[18..].chars().collect();
        assert_eq!(cells.matches('R').count(), 2, "{row}");
        assert!(cells.starts_with("...."), "{row}");
        assert_eq!(column(Window::of(&t), 54, at(103.3).as_ns()), 4);
    }

    #[test]
    fn empty_and_truncated_traces_draw() {
        let mut t = fixture();
        t.spans.clear();
        t.marks.clear();
        let got = gantt(&t, Some(99), 72);
        fits(&got, 72);
        assert!(got.contains("no bio #99"), "{got}");
        t.lanes.clear();
        fits(&gantt(&t, None, 72), 72);
        let mut t = fixture();
        t.truncated = Some(at(120.0));
        let got = gantt(&t, None, 72);
        fits(&got, 72);
        assert!(got.lines().next().unwrap().contains("truncated"), "{got}");
        // Truncated at 120 ms, the window stops there: #1's wait to 121.2 ms reaches the end.
        assert!(got.contains("120"), "{got}");
    }

    #[test]
    fn a_queue_longer_than_the_cap_shows_the_cap_and_counts_the_rest() {
        let got = gantt(&deep_elevator(9), None, 72);
        fits(&got, 72);
        let lines: Vec<&str> = got.lines().collect();
        let k = lines
            .iter()
            .position(|l| l.starts_with("elevator "))
            .unwrap();
        // Six sub-rows, each with a bar at 138 ms; three more counted on the last one.
        let col = 18 + ((138.0 - 100.0) / 40.0 * 54.0) as usize;
        for row in &lines[k..k + MAX_SUB_ROWS] {
            assert_eq!(row.chars().nth(col), Some('r'), "{got}");
        }
        assert!(lines[k + MAX_SUB_ROWS - 1].starts_with("+3 "), "{got}");
        assert!(
            lines[k + MAX_SUB_ROWS].starts_with("                 ++---"),
            "{got}"
        );
    }

    #[test]
    fn state_letters_avoid_the_bios_letters() {
        let l = state_letters(&["reclaiming", "rwx", "pool sleep", "weird"]);
        assert_eq!(
            l,
            [
                ("reclaiming", 'k'),
                ("rwx", 'x'),
                ("pool sleep", 's'),
                ("weird", 'e')
            ]
        );
    }
}
