//! Watching a run without changing it: the recorder (every statistic and the warm-up gate), the
//! timeline, the trace of a window, and the invariant books (Little's law per queue,
//! conservation of requests, pages and CPU time). No kernel counterpart; `docs/model/measurements.md`
//! and `docs/trace.md` describe what they measure.

pub mod invariants;
pub mod recorder;
pub mod timeline;
pub mod trace;
