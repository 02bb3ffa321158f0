//! Latency histogram in nanoseconds (STUB: being written).

use serde::Serialize;

/// Latency histogram (stub).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Histogram {}

impl Histogram {
    /// Empty histogram.
    pub fn new() -> Self {
        Histogram {}
    }
    /// Record one value in ns.
    pub fn record(&mut self, _ns: u64) {}
    /// Number of values.
    pub fn count(&self) -> u64 {
        0
    }
    /// Add another histogram's counts.
    pub fn merge(&mut self, _other: &Histogram) {}
    /// Mean (exact).
    pub fn mean(&self) -> f64 {
        0.0
    }
    /// Percentile p in 0..=100 as a bucket midpoint.
    pub fn percentile(&self, _p: f64) -> u64 {
        0
    }
}
