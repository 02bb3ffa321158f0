//! A trace of one run's short window: every bio's moves from stage to stage, what each thread,
//! device channel and kswapd was doing, and the instants worth a line in a log (a
//! `congestion_wait` that ended early or timed out, a GFP_ATOMIC failure). It is what
//! `qsim trace` draws as a Gantt chart and prints as an event log.
//!
//! The trace is recorded through the report's own observation point: every stage a bio closes
//! goes through [`Bio::enter`](super::bio::Bio::enter), which both adds the stage's time to
//! the bio (what the report's "where the time went" sums at completion) and, when a trace is
//! on, hands the closed span to the [`Tracer`]. A window's per-stage sums from the trace
//! therefore equal the report's for the same window, and a test checks it.
//!
//! What is not a bio stage is read from the model's state once at the end of every event (as
//! the timeline does), and recorded only when it changed: each thread's state and the bio it
//! works on, each device channel's bio, the CPUs' runnable count and kswapd's state. A state
//! that began and ended inside one event lasted no simulated time and is not recorded.
//!
//! Memory is bounded by [`TraceWindow::max_spans`]: once reached, recording stops and
//! [`Trace::truncated`] says when, so a pathological window cannot grow without bound.

use super::bio::Dir;
use super::observe::Stage;
use crate::engine::{SimDuration, SimTime};

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
    /// The async crypto engine.
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
    /// Who issued it (`job reader`, `flusher writer`, `swap-in`, ...).
    pub origin: String,
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
