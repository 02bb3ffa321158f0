//! Watching a run without changing it: the recorder (every statistic and the warm-up gate), the
//! timeline, the trace of a window, and the invariant books.

pub mod invariants;
pub mod recorder;
pub mod timeline;
pub mod trace;
