//! qsim: a discrete-event simulator of Linux dm-crypt work queues under memory pressure.

pub mod cli;
pub mod engine;
pub mod error;
pub mod experiment;
pub mod fuzzing;
pub mod model;
pub mod output;
pub mod plot;
pub mod report;
pub mod scenario;
pub mod stats;
pub mod theory;
pub mod torture;
pub mod validate;
