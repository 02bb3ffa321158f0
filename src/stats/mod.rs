//! Pure statistics: latency histograms, running summaries, and comparisons across replications.
//! No I/O, no model types.

pub mod compare;
pub mod exact;
pub mod histlog;
pub mod histogram;
pub mod running;
pub mod series;
pub mod summary;
pub mod windows;

pub use compare::{
    CompareError, Interval, Summary, Verdict, next_replications, paired_diff, precise_enough,
    ratio, verdict,
};
pub use histogram::Histogram;
pub use running::Running;
