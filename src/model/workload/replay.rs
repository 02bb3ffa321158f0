//! A job that replays a trace (`kind: replay`, docs/replay.md): where it is in its stream and
//! when its next I/O may go.
//!
//! The job pulls one I/O ahead of what it has issued (`Cursor::next`), so it holds its
//! stream's next I/O and nothing else of the file. **Open** mode issues each I/O at the
//! trace's time (after the job's start), or as soon as a slot of `iodepth` frees if it is
//! late. **Closed** mode issues the next I/O once a slot is free and at least the trace's
//! gap after the previous issue: fio's `iolog_delay()` rule, so the think time is the gap less
//! the service the previous I/O saw here, never below 0.

use crate::engine::{SimDuration, SimTime};
use crate::model::base::bio::Dir;
use crate::model::base::replay::{ReplayMode, TraceIo, TraceStream};

/// A replaying job's place in its trace.
#[derive(Debug)]
pub struct Cursor {
    /// Open or closed loop.
    pub(in crate::model) mode: ReplayMode,
    stream: Box<dyn TraceStream>,
    /// The next I/O to issue (`None`: the trace is over).
    pub(in crate::model) next: Option<TraceIo>,
    /// The trace time of the last I/O issued and when it was issued here.
    last: Option<(u64, SimTime)>,
    /// I/Os issued, per direction (what the tests compare with the trace's own counts).
    pub(in crate::model) issued: [u64; 2],
    /// An issue event of this job is on the calendar.
    pub(in crate::model) pending: bool,
}

impl Cursor {
    /// A cursor at the start of `stream`.
    pub(in crate::model) fn new(mode: ReplayMode, mut stream: Box<dyn TraceStream>) -> Cursor {
        let next = stream.next_io();
        Cursor {
            mode,
            stream,
            next,
            last: None,
            issued: [0; 2],
            pending: false,
        }
    }

    /// Whether the trace has nothing more to issue.
    pub(in crate::model) fn done(&self) -> bool {
        self.next.is_none()
    }

    /// The earliest instant the next I/O may go, for a job started at `start` (`None`: no
    /// I/O left). Open: its trace time; closed: the trace's gap after the previous issue (its
    /// trace time for the first).
    pub(in crate::model) fn due(&self, start: SimTime) -> Option<SimTime> {
        let io = self.next?;
        Some(match (self.mode, self.last) {
            (ReplayMode::Closed, Some((at, issued))) => {
                issued + SimDuration::from_ns(io.at_ns.saturating_sub(at))
            }
            _ => start + SimDuration::from_ns(io.at_ns),
        })
    }

    /// Takes the next I/O to issue it at `now`, and reads the one after it.
    pub(in crate::model) fn take(&mut self, now: SimTime) -> Option<TraceIo> {
        let io = self.next.take()?;
        self.last = Some((io.at_ns, now));
        self.issued[usize::from(io.write)] += 1;
        self.next = self.stream.next_io();
        if let Some(n) = &mut self.next
            && n.at_ns < io.at_ns
        {
            // The stream promises non-decreasing times; a file changed under the run is held
            // to that rather than sending the clock backwards.
            n.at_ns = io.at_ns;
        }
        Some(io)
    }

    /// Why the stream ended early, if it did.
    pub fn problem(&self) -> Option<String> {
        self.stream.problem()
    }
}

/// The direction the model gives a traced I/O.
pub(in crate::model) fn dir_of(io: &TraceIo) -> Dir {
    if io.write { Dir::Write } else { Dir::Read }
}

/// A stream with no I/O: what a replay whose scenario carries no trace handle (one read back
/// from JSON) issues.
#[derive(Debug)]
struct NoTrace;

impl TraceStream for NoTrace {
    fn next_io(&mut self) -> Option<TraceIo> {
        None
    }
}

/// The cursor of copy `copy` of a replay: closed mode replays process `copy` of the trace,
/// open mode every process merged (it has one copy).
pub(in crate::model) fn cursor(r: &crate::model::base::replay::Replay, copy: u32) -> Cursor {
    let process = (r.mode == ReplayMode::Closed).then_some(copy);
    let stream = match &r.source.0 {
        Some(open) => open.open(process),
        None => Box::new(NoTrace),
    };
    Cursor::new(r.mode, stream)
}
