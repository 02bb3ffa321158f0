//! A trace of one run's short window: every bio's moves from stage to stage, what each thread,
//! device channel and kswapd was doing, and the instants worth a line in a log (a
//! `congestion_wait` that ended early or timed out, a GFP_ATOMIC failure). It is what
//! `qsim trace` draws as a Gantt chart and prints as an event log.
//!
//! The trace is recorded through the report's own observation point: every stage a bio closes
//! goes through [`Bio::enter`](Bio::enter), which both adds the stage's time to
//! the bio (what the report's "where the time went" sums at completion) and, when a trace is
//! on, hands the closed span to the tracer. A window's per-stage sums from the trace
//! therefore equal the report's for the same window, and a test checks it.
//!
//! A piece of a bio split by dm-crypt (6.11+) is a traced bio of its own, linked to its parent
//! ([`TracedBio::parent`]); the parent completes with its last piece and takes that piece's
//! stages from the split on ([`StageSpan::piece`]), as the report's books do.
//!
//! What is not a bio stage is read from the model's state once at the end of every event (as
//! the timeline does), and recorded only when it changed: each thread's state and the bio it
//! works on, each device channel's bio, the CPUs' runnable count and kswapd's state. A state
//! that began and ended inside one event lasted no simulated time and is not recorded.
//!
//! Memory is bounded by [`TraceWindow::max_spans`]: once reached, recording stops and
//! [`Trace::truncated`] says when, so a pathological window cannot grow without bound.

use crate::engine::{SimDuration, SimTime};
use crate::model::base::bio::{Bio, Dir};
use crate::model::base::obs::Stage;

/// What part of a run to trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceWindow {
    /// Start of the window.
    pub from: SimTime,
    /// End of the window (the run stops here).
    pub to: SimTime,
    /// Stop recording after this many spans and marks.
    pub max_spans: usize,
}

impl TraceWindow {
    /// The default number of spans a trace keeps.
    pub const DEFAULT_MAX_SPANS: usize = 50_000;

    /// A window of `len` from `from`.
    pub fn new(from: SimTime, len: SimDuration) -> Self {
        TraceWindow {
            from,
            to: from + len,
            max_spans: Self::DEFAULT_MAX_SPANS,
        }
    }
}

/// What kind of thing a lane shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneKind {
    /// A kernel thread or submitting context (kcryptd, kcryptd_io, a job's process, the flusher).
    Thread,
    /// The CPUs (processor sharing: the lane's spans say how many tasks were runnable).
    Cpus,
    /// The async crypto engine: a bio's whole crypt service (queued in the engine and being
    /// transformed) is one span, so spans overlap as on a queue lane.
    Engine,
    /// kswapd's state machine.
    Kswapd,
    /// One channel of the device.
    Device,
    /// A queue: every bio waiting in it is a span, so spans overlap (the queue's length at an
    /// instant is the number of spans covering it).
    Queue,
}

/// One horizontal lane of the chart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lane {
    /// Its label (`kcryptd`, `kcryptd_io`, `job reader`, `device ch0`, `crypt queue` ...).
    pub name: String,
    /// What it shows.
    pub kind: LaneKind,
}

/// What a span shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Bio `bio` (an index into [`Trace::bios`]) in `stage`: on a queue lane, waiting; on a
    /// thread, device or engine lane, being worked on.
    Bio {
        /// Index into [`Trace::bios`].
        bio: u32,
        /// The bio's stage during the span.
        stage: Stage,
    },
    /// A thread's or kswapd's state without a bio of its own (`pool sleep`, `mempool sleep`,
    /// `crypto backlog`, `reclaiming`, `congestion_wait`, `nap`).
    State(&'static str),
    /// The CPU lane: this many tasks runnable (they share [`Trace::cpus`] CPUs).
    Runnable(u32),
}

/// One bar of the chart: a lane was doing `what` over `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Index into [`Trace::lanes`].
    pub lane: u32,
    /// When it began (may be before the window when it was already going at its start).
    pub start: SimTime,
    /// When it ended (the window's end when it was still going).
    pub end: SimTime,
    /// What the lane was doing.
    pub what: Activity,
}

/// One stage a traced bio went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StageSpan {
    /// The stage.
    pub stage: Stage,
    /// When the bio entered it.
    pub start: SimTime,
    /// When it left it (the window's end if it had not).
    pub end: SimTime,
    /// On a split bio (6.11+), a stage of the piece it completed with (an index into
    /// [`Trace::bios`]): after the split, a bio's time is its last piece's, as in the report.
    pub piece: Option<u32>,
}

/// A bio seen in the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedBio {
    /// Read or write.
    pub dir: Dir,
    /// REQ_SYNC.
    pub sync: bool,
    /// Size in bytes.
    pub bytes: u32,
    /// Who issued it (`job reader`, `flusher writer`, `swap-in`, ...; `piece 2/4 of #7` for a
    /// piece).
    pub origin: String,
    /// For a piece of a split bio (6.11+), the bio it was cut from (an index into
    /// [`Trace::bios`]). A piece is not a request of its own: the report does not count it.
    pub parent: Option<u32>,
    /// When it was issued.
    pub issued: SimTime,
    /// When it completed, if it did before the window's end.
    pub completed: Option<SimTime>,
    /// Counted in the report (issued after the warm-up).
    pub measured: bool,
    /// Its stages in order, from the first one closed inside the window.
    pub stages: Vec<StageSpan>,
}

/// An instant worth a line in the event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// When.
    pub at: SimTime,
    /// The lane it belongs to (index into [`Trace::lanes`]).
    pub lane: u32,
    /// What happened, in words.
    pub what: String,
}

/// The recorded window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// The policy traced.
    pub policy: String,
    /// The window's start.
    pub from: SimTime,
    /// The window's end.
    pub to: SimTime,
    /// CPUs of the machine.
    pub cpus: u32,
    /// The lanes, in drawing order: threads, CPUs, engine, kswapd, device channels, queues.
    pub lanes: Vec<Lane>,
    /// Every span, ordered by end time (the order they closed in).
    pub spans: Vec<Span>,
    /// Every bio that was in the system during the window, in order of first sight.
    pub bios: Vec<TracedBio>,
    /// Instants, in time order.
    pub marks: Vec<Mark>,
    /// Recording stopped here because [`TraceWindow::max_spans`] was reached.
    pub truncated: Option<SimTime>,
}

impl Trace {
    /// Whether traced bio `bio` is bio `k` or one of its pieces: what highlighting `k` shows.
    pub fn is_of(&self, bio: u32, k: u32) -> bool {
        bio == k || self.bios.get(bio as usize).and_then(|b| b.parent) == Some(k)
    }

    /// The pieces bio `k` was split into, in order of first sight (none unless it was split).
    pub fn pieces(&self, k: u32) -> Vec<u32> {
        (0..self.bios.len() as u32)
            .filter(|&p| self.bios[p as usize].parent == Some(k))
            .collect()
    }
}

/// Queue lanes by the stage whose waiting they show, in drawing order. The crypt queue gets
/// one lane per list of the policy instead (see [`Tracer::new`]).
const QUEUE_STAGES: [(Stage, &str); 4] = [
    (Stage::IoQueue, "kcryptd_io queue"),
    (Stage::PoolSleep, "request-pool sleep"),
    (Stage::BlockQueue, "elevator"),
    (Stage::DirectReclaim, "direct reclaim"),
];

/// No traced bio for this slab slot.
const UNSEEN: u32 = u32::MAX;

/// A lane's current activity and since when.
type Open = Option<(SimTime, Activity)>;

/// Records a [`Trace`] while a run goes on; the world feeds it (see the module doc).
#[derive(Debug)]
pub(in crate::model) struct Tracer {
    win: TraceWindow,
    trace: Trace,
    /// Traced-bio index of each slab slot (UNSEEN when the slot's bio is not traced yet).
    seen: Vec<u32>,
    /// The crypt-queue list each slab slot's bio was queued on (an index into `crypt_lanes`).
    crypt_list: Vec<u8>,
    /// Lane of each crypt-queue list.
    crypt_lanes: Vec<u32>,
    /// Lane of each queue stage of QUEUE_STAGES.
    queue_lanes: [u32; QUEUE_STAGES.len()],
    /// The async crypto engine's lane, when the scenario has one: a bio's crypt service is
    /// spent there (queued in the engine and being transformed), not on a thread.
    engine: Option<u32>,
    /// Per actor: its lane and what it is doing.
    threads: Vec<(u32, Open)>,
    /// Per device channel: its lane and what it is doing.
    channels: Vec<(u32, Open)>,
    cpu: (u32, Open),
    kswapd: Option<(u32, Open)>,
    /// GFP_ATOMIC failures counted so far (to mark new ones).
    failures: u64,
    /// The first scan of the window has happened.
    started: bool,
    /// Spans, stages and marks recorded (bounded by the window's `max_spans`).
    recorded: usize,
}

impl Tracer {
    /// kswapd's lane, when the scenario has memory.
    pub(in crate::model) fn kswapd_lane(&self) -> Option<u32> {
        self.kswapd.map(|k| k.0)
    }

    /// Thread `actor`'s lane (an index into the world's actors).
    pub(in crate::model) fn thread_lane(&self, actor: usize) -> Option<u32> {
        self.threads.get(actor).map(|x| x.0)
    }

    /// The lane of queue stage `i` of the trace's queue stages.
    pub(in crate::model) fn queue_stage_lane(&self, i: usize) -> u32 {
        self.queue_lanes[i]
    }

    /// Whether the lanes are to be looked at after an event at `now` (`before`: the look
    /// before the window's first event, taken once). Not once recording has stopped at
    /// `max_spans`: a look registers every bio on a lane, which would grow the trace with the
    /// window's length however small the bound.
    pub(in crate::model) fn due(&self, now: SimTime, before: bool) -> bool {
        now >= self.win.from && self.trace.truncated.is_none() && (!before || !self.started)
    }

    /// A tracer for `win`, with one lane per thread in `threads`, per list in `crypt_lists`, per
    /// device channel, and the CPUs, the crypto engine (when `engine`), kswapd (when `memory`)
    /// and queue lanes.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::model) fn new(
        win: TraceWindow,
        policy: &str,
        threads: &[String],
        crypt_lists: &[&str],
        channels: usize,
        cpus: u32,
        engine: bool,
        memory: bool,
    ) -> Self {
        let mut lanes = Vec::new();
        let mut lane = |name: String, kind: LaneKind| {
            lanes.push(Lane { name, kind });
            (lanes.len() - 1) as u32
        };
        let threads = threads
            .iter()
            .map(|n| (lane(n.clone(), LaneKind::Thread), None))
            .collect();
        let cpu = (lane(format!("CPUs ({cpus})"), LaneKind::Cpus), None);
        let engine = engine.then(|| lane("crypt engine".into(), LaneKind::Engine));
        let kswapd = memory.then(|| (lane("kswapd".into(), LaneKind::Kswapd), None));
        let channels = (0..channels)
            .map(|c| (lane(format!("device ch{c}"), LaneKind::Device), None))
            .collect();
        let crypt_lanes = crypt_lists
            .iter()
            .map(|l| lane(format!("{l} queue"), LaneKind::Queue))
            .collect();
        let queue_lanes = QUEUE_STAGES.map(|(_, n)| lane(n.into(), LaneKind::Queue));
        Tracer {
            win,
            trace: Trace {
                policy: policy.to_string(),
                from: win.from,
                to: win.to,
                cpus,
                lanes,
                spans: Vec::new(),
                bios: Vec::new(),
                marks: Vec::new(),
                truncated: None,
            },
            seen: Vec::new(),
            crypt_list: Vec::new(),
            crypt_lanes,
            queue_lanes,
            engine,
            threads,
            channels,
            cpu,
            kswapd,
            failures: 0,
            started: false,
            recorded: 0,
        }
    }

    /// Whether recording is on at `now`: inside the window and under the span budget.
    fn on(&self, now: SimTime) -> bool {
        now >= self.win.from && self.trace.truncated.is_none()
    }

    /// Counts one record; past the budget, recording stops at `now`.
    fn count(&mut self, now: SimTime) -> bool {
        self.recorded += 1;
        if self.recorded > self.win.max_spans {
            self.trace.truncated = Some(now);
            return false;
        }
        true
    }

    /// The traced index of slab slot `id`'s bio, adding it on first sight (with `parent`, the
    /// traced index of the bio it is a piece of).
    pub(in crate::model) fn bio(
        &mut self,
        id: usize,
        b: &Bio,
        parent: Option<u32>,
        origin: impl FnOnce() -> String,
    ) -> u32 {
        if self.seen.len() <= id {
            self.seen.resize(id + 1, UNSEEN);
        }
        if self.seen[id] == UNSEEN {
            self.trace.bios.push(TracedBio {
                dir: b.dir,
                sync: b.sync,
                bytes: b.bytes,
                origin: origin(),
                parent,
                issued: b.issued,
                completed: None,
                measured: b.measured,
                stages: Vec::new(),
            });
            self.seen[id] = (self.trace.bios.len() - 1) as u32;
        }
        self.seen[id]
    }

    /// The crypt-queue list slab slot `id`'s bio was just queued on.
    pub(in crate::model) fn crypt_queued(&mut self, id: usize, list: usize) {
        if self.crypt_list.len() <= id {
            self.crypt_list.resize(id + 1, 0);
        }
        self.crypt_list[id] = list.min(self.crypt_lanes.len().saturating_sub(1)) as u8;
    }

    /// Slab slot `id`'s bio closed `stage`, entered at `start`, at `end`: the span
    /// [`Bio::enter`](Bio::enter) just added to the bio's own time in stage. `bio` gives the
    /// bio's traced index (adding it on first sight) when the span is recorded.
    pub(in crate::model) fn stage_closed(
        &mut self,
        id: usize,
        (stage, start): (Stage, SimTime),
        end: SimTime,
        bio: impl FnOnce(&mut Tracer) -> u32,
    ) {
        if end <= self.win.from || end == start || !self.on(end) || !self.count(end) {
            return;
        }
        let k = bio(self);
        self.trace.bios[k as usize].stages.push(StageSpan {
            stage,
            start,
            end,
            piece: None,
        });
        if let Some(lane) = self.queue_lane(id, stage) {
            let what = Activity::Bio { bio: k, stage };
            self.trace.spans.push(Span {
                lane,
                start,
                end,
                what,
            });
        }
    }

    /// The lane a bio's `stage` is drawn on from its closed span: the queue it waits in, or the
    /// async engine that transforms it; `None` when a scan draws it (threads, channels).
    fn queue_lane(&self, id: usize, stage: Stage) -> Option<u32> {
        if stage == Stage::CryptService {
            return self.engine;
        }
        if stage == Stage::CryptQueue {
            let list = self.crypt_list.get(id).copied().unwrap_or(0) as usize;
            return self.crypt_lanes.get(list).copied();
        }
        QUEUE_STAGES
            .iter()
            .position(|(s, _)| *s == stage)
            .map(|i| self.queue_lanes[i])
    }

    /// The traced index of slab slot `id`'s bio, if it is traced.
    pub(in crate::model) fn traced(&self, id: usize) -> Option<u32> {
        self.seen.get(id).copied().filter(|&k| k != UNSEEN)
    }

    /// Bio `id` completed at `now` (its last stage already closed): its slab slot may now hold
    /// another bio, which is another traced bio.
    pub(in crate::model) fn completed(&mut self, id: usize, now: SimTime) {
        if let Some(k) = self.seen.get_mut(id) {
            if *k != UNSEEN {
                self.trace.bios[*k as usize].completed = Some(now);
            }
            *k = UNSEEN;
        }
    }

    /// Traced bio `parent` completes with its last piece, traced bio `piece`: the piece's
    /// stages become the parent's from the split on (what the report's books do, in
    /// `World::piece_done`).
    pub(in crate::model) fn adopt(&mut self, parent: u32, piece: u32) {
        let stages: Vec<StageSpan> = self.trace.bios[piece as usize]
            .stages
            .iter()
            .map(|s| StageSpan {
                piece: Some(piece),
                ..*s
            })
            .collect();
        self.trace.bios[parent as usize].stages.extend(stages);
    }

    /// A mark on `lane` at `now`.
    fn mark(&mut self, lane: u32, now: SimTime, what: String) {
        if self.on(now) && self.count(now) {
            self.trace.marks.push(Mark {
                at: now,
                lane,
                what,
            });
        }
    }

    /// A `congestion_wait` on class `class` that slept on `lane` ended at `now` after `slept`.
    pub(in crate::model) fn wait_ended(
        &mut self,
        lane: u32,
        class: &str,
        early: bool,
        slept: SimDuration,
        now: SimTime,
    ) {
        let how = if early { "woke early" } else { "timed out" };
        let what = format!("congestion_wait({class}) {how} after {slept}");
        self.mark(lane, now, what);
    }

    /// Records the lanes' state at `now`, at the end of an event. The first look in the
    /// window (made before its first event) dates its states from the window's start.
    pub(in crate::model) fn look(&mut self, now: SimTime, s: &LaneStates) {
        if !self.on(now) {
            return;
        }
        let t = if self.started { now } else { self.win.from };
        self.started = true;
        for i in 0..self.threads.len() {
            let want = s.threads.get(i).copied().flatten();
            let (lane, open) = self.threads[i];
            self.threads[i].1 = self.change(lane, open, want, t);
        }
        for i in 0..self.channels.len() {
            let want = s.channels.get(i).copied().flatten();
            let (lane, open) = self.channels[i];
            self.channels[i].1 = self.change(lane, open, want, t);
        }
        let want = (s.runnable > 0).then_some(Activity::Runnable(s.runnable));
        self.cpu.1 = self.change(self.cpu.0, self.cpu.1, want, t);
        if let Some((lane, open)) = self.kswapd {
            let next = self.change(lane, open, s.kswapd.map(Activity::State), t);
            self.kswapd = Some((lane, next));
            if s.failures > self.failures {
                let n = s.failures - self.failures;
                let what = format!("{n} GFP_ATOMIC failure(s), {} pages free", s.free);
                self.mark(lane, t, what);
            }
        }
        self.failures = s.failures;
    }

    /// Closes `open` on `lane` at `t` when `want` differs, and returns what is open after.
    fn change(&mut self, lane: u32, open: Open, want: Option<Activity>, t: SimTime) -> Open {
        if open.map(|o| o.1) == want {
            return open;
        }
        if let Some((start, what)) = open
            && t > start
            && self.count(t)
        {
            self.trace.spans.push(Span {
                lane,
                start,
                end: t,
                what,
            });
        }
        want.map(|w| (t, w))
    }

    /// Ends the trace at `now` (the window's end, or earlier if the run stopped): closes every
    /// open lane, and the stage every bio still in flight is in (`live`: slab slot, bio;
    /// `register` gives a bio's traced index, adding it on first sight).
    pub(in crate::model) fn finish<'a>(
        mut self,
        now: SimTime,
        live: impl Iterator<Item = (usize, &'a Bio)>,
        mut register: impl FnMut(&mut Tracer, usize, &Bio) -> u32,
    ) -> Trace {
        let end = self.trace.truncated.unwrap_or(now).min(self.win.to);
        self.trace.to = end;
        self.trace.truncated = self.trace.truncated.filter(|&t| t < self.win.to);
        let open: Vec<(u32, Open)> = self
            .threads
            .iter()
            .chain(&self.channels)
            .chain(std::iter::once(&self.cpu))
            .chain(self.kswapd.iter())
            .copied()
            .collect();
        for (lane, o) in open {
            if let Some((start, what)) = o
                && end > start
            {
                self.trace.spans.push(Span {
                    lane,
                    start,
                    end,
                    what,
                });
            }
        }
        if self.trace.truncated.is_none() {
            for (id, b) in live {
                let start = b.stage_since.max(self.win.from);
                if end <= start {
                    continue;
                }
                let k = register(&mut self, id, b);
                let stage = b.stage;
                self.trace.bios[k as usize].stages.push(StageSpan {
                    stage,
                    start: b.stage_since,
                    end,
                    piece: None,
                });
                if let Some(lane) = self.queue_lane(id, stage) {
                    let what = Activity::Bio { bio: k, stage };
                    self.trace.spans.push(Span {
                        lane,
                        start: b.stage_since,
                        end,
                        what,
                    });
                }
            }
        }
        self.drop_empty_queue_lanes();
        self.trace
    }

    /// Removes queue lanes nothing waited in, renumbering the spans' and marks' lanes.
    fn drop_empty_queue_lanes(&mut self) {
        let t = &mut self.trace;
        let used: Vec<bool> = (0..t.lanes.len())
            .map(|l| {
                // A queue lane with no span may still hold marks (a reclaimer's congestion_wait
                // ends on the reclaim lane): it is kept for them.
                t.lanes[l].kind != LaneKind::Queue
                    || t.spans.iter().any(|s| s.lane as usize == l)
                    || t.marks.iter().any(|m| m.lane as usize == l)
            })
            .collect();
        let mut map = vec![0u32; t.lanes.len()];
        let mut next = 0;
        for (l, &u) in used.iter().enumerate() {
            map[l] = next;
            next += u32::from(u);
        }
        let mut l = 0;
        t.lanes.retain(|_| {
            l += 1;
            used[l - 1]
        });
        for s in &mut t.spans {
            s.lane = map[s.lane as usize];
        }
        for m in &mut t.marks {
            m.lane = map[m.lane as usize];
        }
    }
}

/// What the world's lanes are doing at one instant (filled by the world for [`Tracer::look`]).
#[derive(Debug, Default)]
pub(in crate::model) struct LaneStates {
    /// Per actor.
    pub(in crate::model) threads: Vec<Option<Activity>>,
    /// Per device channel.
    pub(in crate::model) channels: Vec<Option<Activity>>,
    /// Runnable CPU tasks.
    pub(in crate::model) runnable: u32,
    /// kswapd's state, when not asleep.
    pub(in crate::model) kswapd: Option<&'static str>,
    /// GFP_ATOMIC failures so far, and the free pages now.
    pub(in crate::model) failures: u64,
    /// Free pages now.
    pub(in crate::model) free: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::base::config::Scenario;
    use crate::model::{Recording, RunResult, crypt::policy, run_replication_with};

    /// `sc` traced under `policy` over 200 ms from the warm-up's end with at most
    /// `max_spans`, the run stopping at the window's end: the report's window is the trace's.
    fn run_traced(mut sc: Scenario, policy: &str, max_spans: usize) -> (Scenario, RunResult) {
        let mut win = TraceWindow::new(SimTime::ZERO + sc.warmup, SimDuration::from_ms(200));
        win.max_spans = max_spans;
        sc.duration = win.to.since(SimTime::ZERO);
        let rec = Recording {
            trace: Some(win),
            ..Recording::default()
        };
        let r = run_replication_with(&sc, policy::find(policy).expect("policy"), 0, rec);
        (sc, r)
    }

    /// two-queue, with its memory or without, traced ([`run_traced`]).
    fn traced(policy: &str, memory: bool) -> (Scenario, RunResult) {
        let mut sc = crate::scenario::resolve("two-queue").expect("shipped");
        if !memory {
            sc.memory = None;
        }
        run_traced(sc, policy, TraceWindow::DEFAULT_MAX_SPANS)
    }

    #[test]
    fn a_windows_stage_sums_equal_the_reports() {
        for (policy, memory) in [("fifo", true), ("split", true), ("fifo", false)] {
            let (_, r) = traced(policy, memory);
            let t = r.trace.as_ref().expect("trace");
            assert!(t.truncated.is_none());
            for dir in [Dir::Read, Dir::Write] {
                let done: Vec<&TracedBio> = t
                    .bios
                    .iter()
                    .filter(|b| b.dir == dir && b.measured && b.completed.is_some())
                    .collect();
                assert_eq!(
                    done.len() as u64,
                    r.obs.dirs[dir as usize].ios,
                    "{policy} {dir:?}"
                );
                for s in Stage::ALL {
                    let traced: u128 = done
                        .iter()
                        .flat_map(|b| &b.stages)
                        .filter(|x| x.stage == s)
                        .map(|x| u128::from(x.end.since(x.start).as_ns()))
                        .sum();
                    let report = r.obs.dirs[dir as usize].stages[s.index()].sum();
                    assert_eq!(traced, report, "{policy} {dir:?} {s:?}");
                }
            }
            assert!(
                r.obs.dirs[0].ios > 0,
                "{policy}: reads completed in the window"
            );
        }
    }

    #[test]
    fn spans_are_inside_the_run_and_lanes_exist() {
        let (_, r) = traced("fifo", true);
        let t = r.trace.expect("trace");
        assert!(!t.spans.is_empty());
        for s in &t.spans {
            assert!(s.start < s.end && s.end <= t.to && s.end > t.from, "{s:?}");
            assert!((s.lane as usize) < t.lanes.len());
            if let Activity::Bio { bio, .. } = s.what {
                assert!((bio as usize) < t.bios.len());
            }
        }
        let names: Vec<&str> = t.lanes.iter().map(|l| l.name.as_str()).collect();
        for want in [
            "kcryptd",
            "kcryptd_io",
            "kswapd",
            "device ch0",
            "kcryptd queue",
        ] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
    }

    /// A queue lane that holds only marks (a reclaimer's congestion_wait ending, with no bio
    /// on the lane in the window) is kept for them: two-queue's fifo from 5 s for 50 ms once
    /// dropped that lane and left its marks pointing past the end of the lane list.
    #[test]
    fn a_lane_with_marks_but_no_span_is_kept() {
        let sc = crate::scenario::resolve("two-queue").expect("shipped");
        let win = TraceWindow::new(
            SimTime::ZERO + SimDuration::from_secs(5),
            SimDuration::from_ms(50),
        );
        let mut short = sc.clone();
        short.duration = win.to.since(SimTime::ZERO);
        let rec = Recording {
            trace: Some(win),
            ..Recording::default()
        };
        let r = run_replication_with(&short, policy::find("fifo").expect("fifo"), 0, rec);
        let t = r.trace.expect("trace");
        assert!(!t.marks.is_empty(), "the window has marks");
        for m in &t.marks {
            assert!(
                (m.lane as usize) < t.lanes.len(),
                "{m:?} of {}",
                t.lanes.len()
            );
        }
        for s in &t.spans {
            assert!((s.lane as usize) < t.lanes.len());
        }
    }

    /// Under fifo some read waits in kcryptd's queue while kcryptd encrypts a write; under
    /// split no read ever waits in a crypt queue.
    #[test]
    fn fifo_reads_wait_behind_write_encryption_and_split_reads_do_not() {
        let (_, r) = traced("fifo", true);
        let t = r.trace.expect("trace");
        let kcryptd = t.lanes.iter().position(|l| l.name == "kcryptd").unwrap() as u32;
        let behind = t.spans.iter().any(|q| {
            let Activity::Bio { bio, stage: Stage::CryptQueue } = q.what else {
                return false;
            };
            t.bios[bio as usize].dir == Dir::Read
                && t.spans.iter().any(|s| {
                    s.lane == kcryptd
                        && s.start < q.end
                        && q.start < s.end
                        && matches!(s.what, Activity::Bio { bio: w, .. } if t.bios[w as usize].dir == Dir::Write)
                })
        });
        assert!(
            behind,
            "a read waited in kcryptd's queue behind a write under fifo"
        );
        let (_, r) = traced("split", true);
        let t = r.trace.expect("trace");
        let waits = t
            .bios
            .iter()
            .filter(|b| b.dir == Dir::Read)
            .flat_map(|b| &b.stages)
            .filter(|s| s.stage == Stage::CryptQueue && s.end > s.start)
            .count();
        assert_eq!(waits, 0, "split never queues a read behind a write");
    }

    #[test]
    fn tracing_changes_nothing_and_repeats() {
        let (sc, a) = traced("fifo", true);
        let b = run_replication_with(&sc, policy::find("fifo").unwrap(), 0, Recording::default());
        assert_eq!(a.obs.dirs[0].clat.sum(), b.obs.dirs[0].clat.sum());
        assert_eq!(a.obs.events, b.obs.events);
        let (_, c) = traced("fifo", true);
        assert_eq!(a.trace, c.trace);
    }

    /// hdd-array's 6.12 kernel splits its 512 KiB bios into 128 KiB pieces: each piece is a
    /// traced bio of its own, named after its parent, its stages in order (a recycled slab
    /// slot is a new traced bio); every piece of a completed bio completed; a completed split
    /// bio carries its last piece's stages; and the whole bios' sums equal the report's.
    #[test]
    fn a_split_bios_pieces_complete_and_its_sums_equal_the_reports() {
        let sc = crate::scenario::resolve("hdd-array").expect("shipped");
        let (sc, r) = run_traced(sc, "dm-crypt", TraceWindow::DEFAULT_MAX_SPANS);
        let t = r.trace.as_ref().expect("trace");
        assert!(t.truncated.is_none());
        let mut split = 0;
        for (k, b) in t.bios.iter().enumerate() {
            for w in b.stages.windows(2) {
                assert!(w[0].end <= w[1].start, "#{k}: stages in order {w:?}");
            }
            let pieces = t.pieces(k as u32);
            if let Some(p) = b.parent {
                assert!(b.origin.contains(&format!(" of #{p}")), "{}", b.origin);
                assert!(t.pieces(p).contains(&(k as u32)));
            }
            if pieces.is_empty() || b.completed.is_none() || b.issued < t.from {
                continue;
            }
            split += 1;
            let last = pieces
                .iter()
                .filter_map(|&p| t.bios[p as usize].completed)
                .max();
            assert_eq!(last, b.completed, "#{k} completes with its last piece");
            assert!(b.stages.iter().any(|s| s.piece.is_some()), "#{k}");
        }
        assert!(
            split > 0,
            "some split bio was issued and completed in the window"
        );
        let sums = crate::report::trace::stage_sums(t, &r.obs);
        assert!(sums.iter().flatten().all(|(a, b)| a == b), "{sums:?}");
        assert!(r.obs.dirs[0].ios > 0 && r.obs.dirs[1].ios > 0);
        let pick = crate::report::trace::pick_read(t).expect("a read to highlight");
        assert_eq!(t.bios[pick as usize].parent, None, "a whole read is picked");
        let plain = run_replication_with(
            &sc,
            policy::find("dm-crypt").unwrap(),
            0,
            Recording::default(),
        );
        assert_eq!(r.obs.events, plain.obs.events, "tracing changes nothing");
        assert_eq!(r.obs.dirs[0].clat.sum(), plain.obs.dirs[0].clat.sum());
    }

    #[test]
    fn a_small_budget_truncates() {
        let sc = crate::scenario::resolve("two-queue").expect("shipped");
        let (_, r) = run_traced(sc, "fifo", 50);
        let t = r.trace.unwrap();
        let cut = t.truncated.expect("truncated");
        assert_eq!(t.to, cut);
        assert!(t.spans.len() + t.marks.len() <= 60);
    }

    #[test]
    fn an_async_engine_gets_its_lane_and_the_sums_still_agree() {
        let mut sc = crate::scenario::resolve("two-queue").expect("shipped");
        sc.crypt.engine = crate::model::base::config::CryptoEngine::Async {
            queue_limit: 100,
            rate: 150e6,
        };
        let (_, r) = run_traced(sc, "fifo", TraceWindow::DEFAULT_MAX_SPANS);
        let t = r.trace.unwrap();
        let engine = t
            .lanes
            .iter()
            .position(|l| l.kind == LaneKind::Engine)
            .unwrap() as u32;
        let on_engine: u128 = t
            .spans
            .iter()
            .filter(|s| s.lane == engine)
            .map(|s| u128::from(s.end.since(s.start).as_ns()))
            .sum();
        assert!(on_engine > 0, "crypt service drawn on the engine lane");
        let read: u128 = t
            .bios
            .iter()
            .filter(|b| b.dir == Dir::Read && b.measured && b.completed.is_some())
            .flat_map(|b| &b.stages)
            .filter(|s| s.stage == Stage::CryptService)
            .map(|s| u128::from(s.end.since(s.start).as_ns()))
            .sum();
        assert_eq!(
            read,
            r.obs.dirs[0].stages[Stage::CryptService.index()].sum()
        );
    }
}
