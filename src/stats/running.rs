//! Running summary (STUB: being written).

use serde::Serialize;

/// Running min/max/mean/stddev (stub).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Running {}

impl Running {
    /// Empty.
    pub fn new() -> Self {
        Running {}
    }
    /// Add one value.
    pub fn push(&mut self, _x: f64) {}
}
