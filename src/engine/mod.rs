//! The domain-free discrete-event kernel: simulated time, the event calendar, random streams and
//! the run loop with its limits. Nothing in here knows about dm-crypt, disks or memory.

pub mod time;

pub use time::{SimDuration, SimTime};
