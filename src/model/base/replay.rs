//! A replayed trace as the model reads it: the I/Os ([`TraceIo`]) a stream hands out one at a
//! time ([`TraceStream`]), the handle that opens such streams ([`TraceOpen`]), and the replay's
//! settings ([`Replay`]).
//!
//! The model knows no file format. The scenario layer reads blkparse text, binary blktrace
//! files and fio iologs, checks the whole file once when the scenario loads, and puts a
//! [`TraceOpen`] into the job's [`Replay`]; each run opens its own streams from it and pulls
//! one I/O ahead of what it has issued, so a run holds the I/Os in flight and one more per
//! stream, never the file (docs/replay.md).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// One I/O of a trace, as the model replays it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceIo {
    /// When the trace queued it, ns after the trace's first I/O (non-decreasing along a
    /// stream).
    pub at_ns: u64,
    /// Byte offset on the device.
    pub offset: u64,
    /// Bytes (at least one sector).
    pub bytes: u32,
    /// A write (else a read).
    pub write: bool,
    /// The trace marked it synchronous (`S` in blktrace's RWBS; every fio iolog write is
    /// issued by a synchronous submitter only if the job said so, so iologs give `false`).
    pub sync: bool,
}

/// The I/Os of one replayed stream, in trace order. A stream ends at `None`; a stream that
/// meets a problem the load-time check did not see (the file changed since) ends there too
/// and says so in [`TraceStream::problem`].
pub trait TraceStream: Send + fmt::Debug {
    /// The next I/O, or `None` at the end.
    fn next_io(&mut self) -> Option<TraceIo>;
    /// Why the stream ended early, if it did.
    fn problem(&self) -> Option<String> {
        None
    }
}

/// What opens a trace's streams: supplied by the layer that reads files, called by each run.
pub trait TraceOpen: Send + Sync + fmt::Debug {
    /// A fresh stream of process `process` (an index into the processes the load-time check
    /// found), or of every process merged with `None`.
    fn open(&self, process: Option<u32>) -> Box<dyn TraceStream>;
}

/// How a replay issues the trace's I/Os.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReplayMode {
    /// At the trace's times, relative to its first I/O, whatever the device does; at most
    /// `iodepth` in flight (a later I/O waits for a slot, then goes at once).
    Open,
    /// Each process of the trace issues its next I/O once it has a free slot (of `iodepth`,
    /// default 1) and at least its trace gap after its previous issue: its think time is the
    /// trace's issue-to-issue gap less the service the simulated I/O saw, clamped at 0 (what
    /// fio's `iolog_delay()` does when it replays an iolog).
    Closed,
}

impl ReplayMode {
    /// The mode's name in a scenario.
    pub fn name(self) -> &'static str {
        match self {
            ReplayMode::Open => "open",
            ReplayMode::Closed => "closed",
        }
    }
}

/// The handle to a trace's streams. It is not part of a scenario's JSON (shards carry the
/// trace's description, not the file): a scenario read back from JSON has none, and its
/// replay issues nothing.
#[derive(Clone, Default)]
pub struct TraceHandle(pub Option<Arc<dyn TraceOpen>>);

impl fmt::Debug for TraceHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(o) => o.fmt(f),
            None => f.write_str("no trace"),
        }
    }
}

/// What the load-time check of a trace found: the figures `qsim check` shows and the tests
/// compare against what a replay issued.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// The format read (`blkparse`, `blktrace`, `iolog2`, `iolog3`).
    pub format: String,
    /// The device whose I/Os are replayed (`7,0`), when the format names devices.
    #[serde(default)]
    pub device: Option<String>,
    /// I/Os replayed (reads and writes).
    pub ios: u64,
    /// Of which reads.
    pub reads: u64,
    /// Bytes replayed.
    pub bytes: u64,
    /// Queue events skipped: discards, flushes without data, syncs and other actions the
    /// model has no path for.
    pub skipped: u64,
    /// I/Os marked synchronous.
    pub sync: u64,
    /// I/Os with `M` (metadata), `F` (FUA) or `A` (readahead) in their RWBS: read, counted,
    /// replayed as plain I/Os (the model has no such paths).
    pub flagged: u64,
    /// ns from the first I/O to the last.
    pub span_ns: u64,
    /// The end of the furthest I/O, bytes from the device's start.
    pub extent: u64,
    /// The processes, in order of their first I/O: `pid` and name (`(null)` or empty when the
    /// trace has none).
    pub processes: Vec<(u32, String)>,
}

/// `kind: replay`: a trace's I/Os replayed on the simulated machine (docs/replay.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Replay {
    /// The trace file as the scenario named it (relative paths resolved against the
    /// scenario's folder).
    pub file: String,
    /// Open or closed loop.
    pub mode: ReplayMode,
    /// What the load-time check found.
    pub summary: TraceSummary,
    /// Opens the trace's streams (none in a scenario read back from JSON).
    #[serde(skip)]
    pub source: TraceHandle,
}
