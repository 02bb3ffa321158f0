//! Pure statistics: latency histograms and running summaries. No I/O, no model types.

pub mod histogram;
pub mod running;
pub mod summary;

pub use histogram::Histogram;
pub use running::Running;
