//! Scenario files: loading, units, validation.

pub mod types;

pub use types::*;
