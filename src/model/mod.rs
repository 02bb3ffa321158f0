//! The dm-crypt world.

pub mod observe;

/// Names of the queue policies a scenario may list (`none` = no dm-crypt at all).
pub fn policy_names() -> Vec<&'static str> {
    vec!["none", "fifo", "split", "prio", "ratio", "inline"]
}
