//! `qsim trace` in words: the window's event log, the read it highlights and what that read
//! waited behind, and the window's "where the time went" from the trace beside the report's
//! (they are recorded through the same observation point, so they must agree).
//!
//! Everything here reads a [`Trace`]; nothing simulates.

use crate::engine::{SimDuration, SimTime};
use crate::model::base::bio::Dir;
use crate::model::base::obs::{RunObs, Stage};
use crate::model::observe::trace::{Activity, LaneKind, Span, Trace, TracedBio};
use std::fmt::Write as _;

/// Stages in which a bio waits for something else (the ones a highlight explains).
const WAITS: [Stage; 5] = [
    Stage::DirectReclaim,
    Stage::CryptQueue,
    Stage::IoQueue,
    Stage::PoolSleep,
    Stage::BlockQueue,
];

/// A time in the window as milliseconds with microsecond digits.
pub fn ms(t: SimTime) -> String {
    format!("{:.3}", t.as_ns() as f64 / 1e6)
}

/// A duration in the unit that reads best (µs under a millisecond, else ms).
pub fn dur(d: SimDuration) -> String {
    let ns = d.as_ns();
    if ns < 1_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.2} ms", ns as f64 / 1e6)
    }
}

/// `#12 R 4K job reader`: a bio in a few words.
pub fn bio_label(t: &Trace, k: u32) -> String {
    let b = &t.bios[k as usize];
    let d = if b.dir == Dir::Read { 'R' } else { 'W' };
    format!("#{k} {d} {}K {}", b.bytes / 1024, b.origin)
}

/// The read the chart highlights by default: the one that waited longest in a crypt queue in
/// the window, else the one with the longest wait of any kind, else the slowest read issued
/// and completed in the window, else none. Only whole reads
/// (what the workload issued) are picked, never a piece of a split one: a split read's waits
/// are its own before the split and its last piece's after it, as in the report.
pub fn pick_read(t: &Trace) -> Option<u32> {
    let wait = |b: &TracedBio, only: Option<Stage>| -> u64 {
        b.stages
            .iter()
            .filter(|s| only.map_or(WAITS.contains(&s.stage), |o| s.stage == o))
            .map(|s| s.end.since(s.start).as_ns())
            .sum()
    };
    let best = |only: Option<Stage>| {
        (0..t.bios.len())
            .filter(|&k| t.bios[k].dir == Dir::Read && t.bios[k].parent.is_none())
            .map(|k| (wait(&t.bios[k], only), std::cmp::Reverse(k)))
            .filter(|&(w, _)| w > 0)
            .max()
            .map(|(_, k)| k.0 as u32)
    };
    let slowest = || {
        (0..t.bios.len())
            .filter(|&k| t.bios[k].dir == Dir::Read && t.bios[k].parent.is_none())
            .filter_map(|k| {
                let b = &t.bios[k];
                let done = b.completed?;
                (b.issued >= t.from).then(|| (done.since(b.issued), std::cmp::Reverse(k)))
            })
            .max()
            .map(|(_, k)| k.0 as u32)
    };
    best(Some(Stage::CryptQueue))
        .or_else(|| best(None))
        .or_else(slowest)
}

/// One thing a highlighted bio waited behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Behind {
    /// The other bio's span (index into [`Trace::spans`]).
    pub span: usize,
    /// The stage the highlighted bio was waiting in.
    pub waiting: Stage,
    /// The other bio.
    pub bio: u32,
    /// The lane the other bio was on (the thread or channel serving it, or the same queue).
    pub lane: u32,
    /// What it was doing there.
    pub stage: Stage,
    /// How long the two overlapped.
    pub overlap: SimDuration,
    /// It was already queued when the highlighted bio arrived (`false`: being served).
    pub ahead: bool,
}

/// The lanes' kind and the other bio's stage that hold up a bio waiting in `waiting`.
fn holders(waiting: Stage) -> &'static [(LaneKind, Stage)] {
    match waiting {
        Stage::CryptQueue => &[
            (LaneKind::Thread, Stage::CryptService),
            (LaneKind::Engine, Stage::CryptService),
        ],
        Stage::IoQueue => &[(LaneKind::Thread, Stage::IoQueue)],
        Stage::BlockQueue | Stage::PoolSleep => &[(LaneKind::Device, Stage::Device)],
        _ => &[],
    }
}

/// What bio `k` waited behind in each of its waits (and its pieces' waits, when it was
/// split): the bios being served by the threads (or device channels, or the engine) that
/// serve its queue while it waited, and the bios already in its queue when it arrived, each
/// with how long they overlapped its wait. A split bio's own pieces are not listed. Empty for
/// a bio the trace does not list.
pub fn waited_behind(t: &Trace, k: u32) -> Vec<Behind> {
    let mut out = Vec::new();
    if k as usize >= t.bios.len() {
        return out;
    }
    let mine = |s: &Span| matches!(s.what, Activity::Bio { bio, .. } if t.is_of(bio, k));
    for w in t.spans.iter().filter(|s| mine(s)) {
        let Activity::Bio { stage: waiting, .. } = w.what else {
            continue;
        };
        if t.lanes[w.lane as usize].kind != LaneKind::Queue {
            continue;
        }
        for (span, s) in t.spans.iter().enumerate() {
            let Activity::Bio { bio, stage } = s.what else {
                continue;
            };
            if t.is_of(bio, k) || s.end <= w.start || s.start >= w.end {
                continue;
            }
            let kind = t.lanes[s.lane as usize].kind;
            // Only the crypt and kcryptd_io lists are served in arrival order; the elevator
            // sorts and CFQ serves sync first, so a request queued earlier is not "ahead".
            let fifo = matches!(waiting, Stage::CryptQueue | Stage::IoQueue);
            let ahead = fifo && s.lane == w.lane && s.start <= w.start && stage == waiting;
            let serving = holders(waiting).contains(&(kind, stage));
            if ahead || serving {
                let overlap = s.end.min(w.end).since(s.start.max(w.start));
                out.push(Behind {
                    span,
                    waiting,
                    bio,
                    lane: s.lane,
                    stage,
                    overlap,
                    ahead,
                });
            }
        }
    }
    out.sort_by_key(|b| (b.waiting.index(), !b.ahead, b.bio));
    out
}

/// The highlighted bio's story: what it is, each stage with its time, and what it waited
/// behind.
pub fn highlight_text(t: &Trace, k: u32) -> String {
    let b = &t.bios[k as usize];
    let mut s = String::new();
    let dir = if b.dir == Dir::Read { "read" } else { "write" };
    let _ = match b.parent {
        Some(p) => write!(
            s,
            "Highlighted: #{k}, a {} KiB {dir}, {} (a {} KiB {dir} from {})",
            b.bytes / 1024,
            b.origin,
            t.bios[p as usize].bytes / 1024,
            t.bios[p as usize].origin
        ),
        None => write!(
            s,
            "Highlighted: #{k}, a {} KiB {dir} from {}",
            b.bytes / 1024,
            b.origin
        ),
    };
    let _ = write!(s, ", issued at {} ms", ms(b.issued));
    match b.completed {
        Some(c) => {
            let _ = writeln!(
                s,
                ", completed at {} ms (latency {})",
                ms(c),
                dur(c.since(b.issued))
            );
        }
        None => s.push_str(", still in flight at the window's end\n"),
    }
    for st in b.stages.iter().filter(|x| x.stage != Stage::Other) {
        let _ = writeln!(
            s,
            "  {:<20} {:>10} from {} ms{}",
            st.stage.label(),
            dur(st.end.since(st.start)),
            ms(st.start),
            st.piece
                .map(|p| format!(" (piece #{p})"))
                .unwrap_or_default()
        );
    }
    s.push_str(&pieces_text(t, k));
    let behind = waited_behind(t, k);
    if behind.is_empty() {
        s.push_str("  It waited behind nothing: every stage began as soon as it arrived.\n");
        return s;
    }
    let mut last = None;
    for (n, w) in behind.iter().enumerate() {
        if last != Some(w.waiting) {
            let _ = writeln!(s, "  During its {} it waited behind:", w.waiting.label());
            last = Some(w.waiting);
        }
        if n >= 12 {
            let _ = writeln!(s, "    ... and {} more", behind.len() - n);
            break;
        }
        let how = if w.ahead {
            format!("already queued in {}", t.lanes[w.lane as usize].name)
        } else {
            format!(
                "{} on {}",
                verb(t, w.bio, w.stage),
                t.lanes[w.lane as usize].name
            )
        };
        let _ = writeln!(
            s,
            "    {:<28} {how}, {} of it",
            bio_label(t, w.bio),
            dur(w.overlap)
        );
    }
    s
}

/// For a split bio, a line on its pieces: each one's number and completion, and which one
/// its stages after the split come from (the last to complete: its critical path).
fn pieces_text(t: &Trace, k: u32) -> String {
    let pieces = t.pieces(k);
    if pieces.is_empty() {
        return String::new();
    }
    let each: Vec<String> = pieces
        .iter()
        .map(|&p| match t.bios[p as usize].completed {
            Some(c) => format!("#{p} done at {} ms", ms(c)),
            None => format!("#{p} in flight"),
        })
        .collect();
    let mut s = format!(
        "  Split into pieces: {}
",
        each.join(", ")
    );
    if let Some(last) = t.bios[k as usize].stages.iter().find_map(|x| x.piece) {
        let _ = writeln!(
            s,
            "  After the split its time is its last piece's, #{last}'s (as in the report)."
        );
    }
    s
}

/// What a thread or channel does to a bio in `stage`.
fn verb(t: &Trace, k: u32, stage: Stage) -> &'static str {
    let read = t.bios[k as usize].dir == Dir::Read;
    match stage {
        Stage::CryptService if read => "decrypting",
        Stage::CryptService => "encrypting",
        Stage::IoQueue => "submitting",
        Stage::PoolSleep => "asleep for a request with",
        Stage::Device => "served",
        Stage::DirectReclaim => "reclaiming for",
        _ => "running",
    }
}

/// One line of the event log, before formatting.
struct Line {
    at: SimTime,
    /// Ends, then issues, then starts, then completions and marks, at the same instant.
    order: u8,
    lane: String,
    text: String,
    /// A queue lane's length changes by this much.
    queue: Option<(usize, i32)>,
}

/// The event log: every span's start and end (but the CPU lane's), every mark, and every
/// traced bio's issue and completion inside the window, in time order, each with the queues'
/// lengths after it.
pub fn event_log(t: &Trace) -> String {
    let queues: Vec<usize> = (0..t.lanes.len())
        .filter(|&l| t.lanes[l].kind == LaneKind::Queue)
        .collect();
    let mut lines = log_lines(t, &queues);
    lines.sort_by_key(|l| (l.at, l.order));
    let mut lens = vec![0i64; queues.len()];
    // Bios already waiting at the window's start.
    for s in &t.spans {
        if let Some(q) = queues.iter().position(|&l| l == s.lane as usize)
            && s.start < t.from
        {
            lens[q] += 1;
        }
    }
    let mut out = String::new();
    let names: Vec<&str> = queues.iter().map(|&l| t.lanes[l].name.as_str()).collect();
    let _ = writeln!(
        out,
        "queue lengths [..] after each line: {}",
        names.join(" | ")
    );
    for l in lines {
        if let Some((q, d)) = l.queue {
            lens[q] += i64::from(d);
        }
        let q: Vec<String> = lens.iter().map(i64::to_string).collect();
        let _ = writeln!(
            out,
            "{:>12}  {:<18} {:<52} [{}]",
            ms(l.at),
            l.lane,
            l.text,
            q.join("|")
        );
    }
    out
}

fn log_lines(t: &Trace, queues: &[usize]) -> Vec<Line> {
    let mut lines = Vec::new();
    for s in &t.spans {
        let lane = &t.lanes[s.lane as usize];
        let q = queues.iter().position(|&l| l == s.lane as usize);
        let took = dur(s.end.since(s.start));
        let (start, end) = match s.what {
            Activity::Runnable(_) => continue,
            Activity::State(st) => (format!("enters {st}"), format!("leaves {st} after {took}")),
            Activity::Bio { bio, stage } => {
                let b = bio_label(t, bio);
                match lane.kind {
                    LaneKind::Queue => (format!("{b} queued"), format!("{b} leaves after {took}")),
                    _ => (
                        format!("{} {b}", verb(t, bio, stage)),
                        format!("done with {b} ({took})"),
                    ),
                }
            }
        };
        if s.start >= t.from {
            lines.push(Line {
                at: s.start,
                order: 2,
                lane: lane.name.clone(),
                text: start,
                queue: q.map(|q| (q, 1)),
            });
        }
        if s.end < t.to {
            lines.push(Line {
                at: s.end,
                order: 0,
                lane: lane.name.clone(),
                text: end,
                queue: q.map(|q| (q, -1)),
            });
        }
    }
    for m in &t.marks {
        lines.push(Line {
            at: m.at,
            order: 3,
            lane: t.lanes[m.lane as usize].name.clone(),
            text: m.what.clone(),
            queue: None,
        });
    }
    for (k, b) in t.bios.iter().enumerate() {
        let label = bio_label(t, k as u32);
        if b.issued >= t.from && b.issued <= t.to {
            lines.push(Line {
                at: b.issued,
                order: 1,

                lane: "issue".into(),
                text: format!("{label} issued"),
                queue: None,
            });
        }
        if let Some(c) = b.completed.filter(|&c| c >= t.from && c <= t.to) {
            lines.push(Line {
                at: c,
                order: 3,
                lane: "complete".into(),
                text: format!("{label} completes, latency {}", dur(c.since(b.issued))),
                queue: None,
            });
        }
    }
    lines
}

/// The window's per-stage totals for measured, completed bios, from the trace, and the same
/// from the report of the same run: `(trace ns, report ns)` per direction and stage. Pieces of
/// split bios are left out: their parents carry the last piece's stages, as the report does.
pub fn stage_sums(t: &Trace, obs: &RunObs) -> [[(u128, u128); Stage::COUNT]; 2] {
    let mut out = [[(0u128, 0u128); Stage::COUNT]; 2];
    for b in t
        .bios
        .iter()
        .filter(|b| b.measured && b.completed.is_some() && b.parent.is_none())
    {
        for s in &b.stages {
            out[b.dir as usize][s.stage.index()].0 += u128::from(s.end.since(s.start).as_ns());
        }
    }
    for (row, dir) in out.iter_mut().zip(&obs.dirs) {
        for s in Stage::ALL {
            row[s.index()].1 = dir.stages[s.index()].sum();
        }
    }
    out
}

/// "Where the time went" in the window, the trace's sums beside the report's, per direction.
pub fn stage_table(t: &Trace, obs: &RunObs) -> String {
    let sums = stage_sums(t, obs);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Where the time went in this window (bios issued and completed in it), total ms:"
    );
    let _ = writeln!(
        s,
        "  {:<20} {:>12} {:>12} {:>12} {:>12}",
        "stage", "reads:trace", "report", "writes:trace", "report"
    );
    let ms = |ns: u128| format!("{:.3}", ns as f64 / 1e6);
    for st in Stage::ALL {
        let (r, w) = (sums[0][st.index()], sums[1][st.index()]);
        if r == (0, 0) && w == (0, 0) {
            continue;
        }
        let _ = writeln!(
            s,
            "  {:<20} {:>12} {:>12} {:>12} {:>12}",
            st.label(),
            ms(r.0),
            ms(r.1),
            ms(w.0),
            ms(w.1)
        );
    }
    let agree = sums.iter().flatten().all(|(a, b)| a == b);
    let _ = writeln!(
        s,
        "  ({}: {} reads and {} writes)",
        if agree {
            "trace and report agree"
        } else {
            "TRACE AND REPORT DISAGREE"
        },
        obs.dirs[0].ios,
        obs.dirs[1].ios
    );
    s
}

/// The part of `t` during bio `k`'s life (its issue, or the window's start, to its completion,
/// or the window's end): what the log prints by default around a highlighted bio.
pub fn around(t: &Trace, k: u32) -> Trace {
    let b = &t.bios[k as usize];
    let from = b.issued.max(t.from);
    let to = b.completed.unwrap_or(t.to).min(t.to);
    let mut sub = t.clone();
    sub.from = from;
    sub.to = to;
    sub.spans.retain(|s| s.end > from && s.start <= to);
    sub.marks.retain(|m| m.at >= from && m.at <= to);
    sub
}

/// The window's stage sums as CSV (`direction,stage,trace_ns,report_ns,bios`): the figures of
/// [`stage_table`], exact, for scripts and the consistency test.
pub fn stage_csv(t: &Trace, obs: &RunObs) -> String {
    let sums = stage_sums(t, obs);
    let mut s = String::from("direction,stage,trace_ns,report_ns,bios\n");
    for (d, name) in ["read", "write"].iter().enumerate() {
        for st in Stage::ALL {
            let (a, b) = sums[d][st.index()];
            let _ = writeln!(s, "{name},{},{a},{b},{}", st.label(), obs.dirs[d].ios);
        }
    }
    s
}

/// One line on reads' crypt-queue waits in the window: how many reads waited and the longest,
/// or that none did (what tells fifo from split at a glance). Whole reads only, as
/// [`pick_read`].
pub fn read_waits(t: &Trace) -> String {
    let whole_read = |b: &TracedBio| b.dir == Dir::Read && b.parent.is_none();
    let reads = t.bios.iter().filter(|b| whole_read(b)).count();
    let waits: Vec<(u64, usize)> = t
        .bios
        .iter()
        .enumerate()
        .filter(|(_, b)| whole_read(b))
        .map(|(k, b)| {
            let w = b
                .stages
                .iter()
                .filter(|s| s.stage == Stage::CryptQueue)
                .map(|s| s.end.since(s.start).as_ns())
                .sum::<u64>();
            (w, k)
        })
        .filter(|&(w, _)| w > 0)
        .collect();
    match waits
        .iter()
        .max_by_key(|&&(w, k)| (w, std::cmp::Reverse(k)))
    {
        None => format!("No read waited in a crypt queue in this window ({reads} reads).\n"),
        Some(&(w, k)) => format!(
            "{} of {reads} reads waited in a crypt queue; the longest, #{k}, for {}.\n",
            waits.len(),
            dur(SimDuration::from_ns(w))
        ),
    }
}
