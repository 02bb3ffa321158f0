//! `none`: no dm-crypt at all, the plain disk. The baseline every encrypted policy is compared to.

use super::{NoQueue, PolicyInfo, Topology};

/// Registration.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "none",
    summary: "no dm-crypt: bios go straight to the disk (baseline)",
    topology: Topology::Plain,
    threads: 0,
    build: || Box::new(NoQueue),
    io_queues: None,
    flags: super::DmFlags::NONE,
};

/// The slow reference `policy::tests` checks this policy against.
#[cfg(test)]
pub(super) const REFERENCE: Option<super::Reference> = None;
